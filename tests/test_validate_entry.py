"""``swftools.validate(...)`` itself: how an input becomes a report (format, path, rows, the lines
and words findings cite, unreadable inputs, the reader's site and zone, the package's own Table
Schema). The rules are tested in the ``test_validate_<concern>`` files."""

from __future__ import annotations

import dataclasses
import json

import pyarrow as pa
import pytest

from swftools import formats
from swftools.errors import InputError, UsageError
from swftools.formats import datapackage
from swftools.site import preset
from swftools.validate import validate

from .test_formats_slurm import HEADER, _line
from .validate_support import aaic_table, assert_fires, run, swf_line, write_swf

# One sacct job whose submit time does not exist in New York (clocks went 02:00 -> 03:00).
SACCT = HEADER + "\n" + _line(Submit="2023-03-12T02:30:00", Eligible="2023-03-12T02:30:00",
                              Start="2023-03-12T03:31:00", End="2023-03-12T03:32:00") + "\n"
GAP = {"line": 2, "job_id": None, "field": "field 'Submit' (submit time)",
       "rule": "unreadable-input", "severity": "error",
       "message": "'2023-03-12T02:30:00' is ambiguous or does not exist in America/New_York "
                  "local time (a daylight-saving change)",
       "value": "2023-03-12T02:30:00", "expected": "a local time that exists once"}
NO_SITE = ("queue-unknown, queue-nodes, queue-gpus-per-node, queue-walltime, "
           "multi-node-whole-nodes, termcode-swf-status, capacity-nodes skipped: "
           "no site settings (pass --site aaic or a site file)")

REPEATED = [{"job_id": 7}, {"job_id": 8}, {"job_id": 7, "queue": "Galaxy"}]


def _cited(report, rule):
    return [(f.path, f.line, f.message) for f in report.findings if f.rule == rule]


def test_an_unreadable_line_is_the_readers_located_error(tmp_path):
    path = write_swf(tmp_path / "s.swf", [swf_line(1), "2 0 0 x 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1"])
    report = validate(path)
    assert report.flatten() == [{
        "path": str(path), "line": 21, "job_id": None, "field": "field 4 (run time)",
        "rule": "unreadable-input", "severity": "error", "message": "'x' is not a number",
        "value": "x", "expected": "a number (-1 if unknown)"}]
    assert (report.rows, report.source_format, report.path) == (0, "swf", str(path))


def test_a_missing_file_and_a_directory_are_one_finding_each(tmp_path):
    missing = tmp_path / "missing.swf"
    assert validate(missing).flatten() == [{
        "path": str(missing), "line": None, "job_id": None, "field": None,
        "rule": "unreadable-input", "severity": "error", "message": "no such file", "value": None,
        "expected": "an existing trace file or data package"}]
    assert validate(tmp_path, fmt="swf").flatten() == [{
        "path": str(tmp_path), "line": None, "job_id": None, "field": None,
        "rule": "unreadable-input", "severity": "error",
        "message": "is a directory, not a trace file", "value": None,
        "expected": "a file (or --format package)"}]


@pytest.mark.parametrize("error,message", [
    (ValueError("first line\nsecond line"), "cannot be read: first line"),
    (OSError(), "cannot be read: OSError"),
])
def test_any_other_read_failure_is_named_by_its_first_line(tmp_path, monkeypatch, error, message):
    path = write_swf(tmp_path / "f.swf", [swf_line(1)])

    def fail(*args, **kwargs):
        raise error
    monkeypatch.setattr(formats, "read", fail)
    assert validate(path).flatten() == [{
        "path": str(path), "line": None, "job_id": None, "field": None,
        "rule": "unreadable-input", "severity": "error", "message": message, "value": None,
        "expected": "a readable trace"}]


@pytest.mark.parametrize("named", ["other.csv", ""])
def test_a_readers_input_error_is_shown_in_the_file_it_names(tmp_path, monkeypatch, named):
    """The finding names the file the reader's error names (a package's CSV, not the folder),
    else the input as given."""
    path = write_swf(tmp_path / "f.swf", [swf_line(1)])

    def fail(*args, **kwargs):
        raise InputError(named, "'x' is bad", line=3, field="f", value="x", expected="y")
    monkeypatch.setattr(formats, "read", fail)
    assert validate(path).flatten() == [{
        "path": named or str(path), "line": 3, "job_id": None, "field": "f",
        "rule": "unreadable-input", "severity": "error", "message": "'x' is bad", "value": "x",
        "expected": "y"}]


def test_a_file_without_jobs_is_an_error_unless_allowed(tmp_path):
    path = write_swf(tmp_path / "h.swf", [])
    refused = validate(path)
    assert refused.rule_counts() == {"unreadable-input": 1} and not refused.valid
    allowed = validate(path, allow_empty=True)
    assert allowed.valid and allowed.rows == 0
    assert "unreadable-input" not in allowed.rule_counts()


def test_usage_errors_say_what_is_wrong(tmp_path):
    with pytest.raises(UsageError, match=r"^max_findings must be >= 0$"):
        validate(aaic_table([{}]), max_findings=-1)
    with pytest.raises(UsageError, match=r"^not a job table: "):
        validate(pa.table({"job_id": ["seven"]}))
    with pytest.raises(UsageError) as tz:
        validate(write_swf(tmp_path / "z.swf", [swf_line(1)]), tz="UTC")
    assert str(tz.value) == "--tz applies to slurm and pbs input only, not swf"


def test_a_table_is_reported_under_its_source_file_and_format():
    table = aaic_table([{}]).replace_schema_metadata(None)
    report = validate(table)
    assert (report.path, report.source_format, report.rows) == ("<table>", "table", 1)
    named = aaic_table([{}], metadata={"source_file": "aaic.csv", "source_format": "nqsii"})
    report = validate(named)
    assert (report.path, report.source_format) == ("aaic.csv", "nqsii")
    assert validate(named, fmt="swf").source_format == "swf"


def test_table_findings_cite_rows_from_one():
    report = run(aaic_table(REPEATED), "job-id-unique")
    assert _cited(report, "job-id-unique") == [("<table>", 3, "job id 7 already used on row 1")]


def test_a_table_read_from_swf_keeps_its_file_lines(tmp_path):
    path = write_swf(tmp_path / "a.swf", [swf_line(1), swf_line(2), swf_line(1, submit=5)])
    from_file = run(path, "job-id-unique")
    assert _cited(from_file, "job-id-unique") == [(str(path), 22, "job id 1 already used on line 20")]
    from_table = run(formats.read(path, "swf"), "job-id-unique")
    assert _cited(from_table, "job-id-unique") == [("a.swf", 22, "job id 1 already used on line 20")]


def test_nqsii_findings_cite_csv_lines_below_the_header(tmp_path):
    path = tmp_path / "n.csv"
    formats.write(aaic_table([{}, {}, {"walltime_s": 7200}]), path, "nqsii")
    report = run(path, "walltime-overrun", site="aaic")
    assert [(f.path, f.line) for f in assert_fires(report, "walltime-overrun", 1)] == [(str(path), 4)]
    assert report.source_format == "nqsii" and report.rows == 3


def test_package_findings_cite_the_csv_lines_or_else_the_rows(tmp_path):
    root = tmp_path / "pk"
    datapackage.write(aaic_table(REPEATED), root)
    csv = str(root / "data" / "jobs.csv.gz")
    report = run(root, "job-id-unique", "queue-unknown", site="aaic")
    assert _cited(report, "job-id-unique") == [(csv, 4, "job id 7 already used on line 2")]
    assert [(f.path, f.line) for f in assert_fires(report, "queue-unknown", 1)] == [(csv, 4)]
    # without the CSV the reader takes the Parquet copy: findings cite rows of the package
    (root / "data" / "jobs.csv.gz").unlink()
    report = run(root, "job-id-unique")
    assert report.rows == 3
    assert _cited(report, "job-id-unique") == [(str(root), 3, "job id 7 already used on row 1")]


def test_a_package_is_checked_against_its_own_table_schema(tmp_path):
    root = tmp_path / "pk"
    datapackage.write(aaic_table([{"walltime_s": 100}, {"walltime_s": 700}]), root)
    assert "schema-range" not in run(root, "schema-range").rule_counts()
    schema_file = root / "schemas" / "jobs.json"
    schema = json.loads(schema_file.read_text())
    field = next(f for f in schema["fields"] if f["name"] == "walltime_s")
    field.setdefault("constraints", {})["maximum"] = 600
    schema_file.write_text(json.dumps(schema))
    found = assert_fires(run(root, "schema-range"), "schema-range", 1)
    assert (found[0].line, found[0].value, found[0].expected) == (3, 700, "<= 600")


def test_the_zone_and_the_site_reach_the_reader(tmp_path):
    path = tmp_path / "x.sacct"
    path.write_text(SACCT)
    utc = validate(path)
    assert utc.rows == 1 and "unreadable-input" not in utc.rule_counts()
    gap = {"path": str(path), **GAP}
    assert validate(path, tz="America/New_York").flatten() == [gap]
    new_york = dataclasses.replace(preset("aaic"), time_zone="America/New_York")
    assert validate(path, site=new_york).flatten() == [gap]


def test_actionable_skips_are_one_info_finding_per_reason(tmp_path):
    path = tmp_path / "x.sacct"
    path.write_text(SACCT)
    infos = [f for f in validate(path).flatten() if f["rule"] == "rule-skipped"]
    assert infos[0] == {"path": str(path), "line": None, "job_id": None, "field": None,
                        "rule": "rule-skipped", "severity": "info", "message": NO_SITE,
                        "value": None, "expected": None}
    assert len(infos) == 2


def test_an_explicit_site_applies_to_a_file_that_names_none(tmp_path):
    path = write_swf(tmp_path / "q.swf", [swf_line(1)])
    assert "queue-unknown" in validate(path).skipped
    report = validate(path, site="aaic")
    assert "queue-unknown" in report.rules_run and "queue-unknown" not in report.skipped
