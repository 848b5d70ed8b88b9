"""swftools.report: the public API (analyze, report, summary_table_markdown), output handling,
determinism, bad input and the report.json schema."""

from __future__ import annotations

import gzip

import jsonschema
import pytest
from hypothesis import given, settings

from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.report import Report, analyze, report, summary_table_markdown
from swftools.report.frame import is_skipped
from swftools.resources import load_json
from swftools.site import load_site
from tests import strategies
from tests.report_support import aaic_table, swf_table

VALIDATOR = jsonschema.Draft202012Validator(load_json("report.schema.json"))
ANALYSES = ("parallelism", "wra", "walltime", "correlation", "arrivals")


def _valid(data: dict) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in VALIDATOR.iter_errors(data)]
    assert not errors, errors


def _relative_swf():
    """Few figures: no dates (no UnixStartTime), no requested walltimes."""
    return swf_table({"job_id": [1, 2, 3], "gpus": [1, 1, 4], "walltime_s": [600, 900, 1200],
                      "swf_status": [1, 1, 1], "submit_time": [0, 10, 20]}, origin=None,
                     source_file="tiny.swf")


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(load_json("report.schema.json"))


def test_report_writes_markdown_json_and_figures(tmp_path):
    out = tmp_path / "rep"
    result = report(_relative_swf(), out)
    assert isinstance(result, Report) and result.out_dir == out
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([".swftools-output", "report.md", "report.json", *result.figures])
    assert (out / "report.md").read_text() == result.markdown
    assert "parallelism.png" in result.figures and "wra.png" not in result.figures
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_existing_output_is_refused_without_force_and_replaced_with_it(tmp_path, stub_figures):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "old.txt").write_text("keep me")
    with pytest.raises(UsageError, match="already exists"):
        report(_relative_swf(), out)
    # --force replaces only a folder swftools wrote (issue 29), never this one
    with pytest.raises(UsageError, match="not a folder swftools wrote"):
        report(_relative_swf(), out, force=True)
    assert (out / "old.txt").read_text() == "keep me"
    (out / "old.txt").unlink()
    report(_relative_swf(), out, force=True)  # an empty folder is replaced
    (out / "added.txt").write_text("added to the report")
    report(_relative_swf(), out, force=True)
    assert not (out / "added.txt").exists() and (out / "report.json").is_file()


def test_bad_input_leaves_no_output(tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text("1 2 3\n")
    with pytest.raises(InputError, match="bad.swf"):
        report(bad, tmp_path / "rep")
    assert not (tmp_path / "rep").exists()
    with pytest.raises(UsageError, match="seed"):
        analyze(_relative_swf(), seed=-1)


# report()'s determinism (same input, same bytes) is checked across processes and hash seeds:
# every file of the sample's report by tests/test_report_html.py (the sample with its what-if),
# every figure by tests/test_report_figures.py.


def test_empty_trace_reports_every_analysis_as_not_possible(tmp_path):
    header_only = tmp_path / "empty.swf"
    header_only.write_text("; Version: 2.2\n; UnixStartTime: 1500000000\n")
    with pytest.raises(InputError, match="no job rows"):
        analyze(header_only)
    for source in (header_only, jt.empty()):
        result = analyze(source, allow_empty=True)
        _valid(result.data)
        assert result.figures == []
        for name in ANALYSES:
            assert result.data["analyses"][name] == {"status": "skipped",
                                                     "reason": "the trace has no jobs"}
        assert "*Not computed: the trace has no jobs.*" in result.markdown
    written = report(header_only, tmp_path / "rep", allow_empty=True)
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == [
        ".swftools-output", "report.json", "report.md"]
    assert written.value("jobs") == 0


def test_trace_without_requested_walltimes_does_the_rest(tmp_path):
    text = "; UnixStartTime: 1500000000\n; MaxProcs: 64\n" + "".join(
        f"{i} {i * 600} 5 {100 * i} {1 + i % 4} -1 -1 {1 + i % 4} -1 -1 1 {i % 3} 1 -1 1 -1 -1 -1\n"
        for i in range(1, 40))
    path = tmp_path / "noreq.swf.gz"
    path.write_bytes(gzip.compress(text.encode(), mtime=0))
    result = analyze(path)
    _valid(result.data)
    analyses = result.data["analyses"]
    assert analyses["wra"]["status"] == "skipped"
    assert "requested walltime is unknown" in analyses["wra"]["reason"]
    for name in ("parallelism", "walltime", "correlation", "arrivals"):
        assert analyses[name]["status"] == "ok", name
    assert result.data["context"]["utilization"]["capacity"]["source"] == "SWF header MaxProcs"
    assert "wra.png" not in result.figures and "arrivals.png" in result.figures


def test_nqsii_source_uses_the_aaic_site_by_default(tmp_path):
    from swftools.formats import nqsii

    table = aaic_table([{"walltime_s": 600, "queue": "Short", "requested_walltime_s": 10_800}] * 3)
    path = tmp_path / "log.csv"
    nqsii.write(table, path, site=load_site("aaic"))
    result = analyze(path)
    assert result.data["trace"]["site"] == "aaic"
    assert result.value("at_queue_max_share") == 1.0


def test_summary_table_markdown_accepts_a_report_or_its_data():
    result = analyze(_relative_swf())
    assert summary_table_markdown(result) == summary_table_markdown(result.data)
    assert summary_table_markdown(result) in result.markdown


@settings(max_examples=15, deadline=None)
@given(strategies.aaic_jobs(min_size=0, max_size=40))
def test_any_aaic_table_gives_a_schema_valid_report(table):
    result = analyze(table, site=load_site("aaic"))
    _valid(result.data)
    for name in ANALYSES:
        section = result.data["analyses"][name]
        assert section["status"] in ("ok", "skipped")
        if is_skipped(section):
            assert section["reason"]


@settings(max_examples=15, deadline=None)
@given(strategies.swf_jobs(min_size=0, max_size=40))
def test_any_swf_table_gives_a_schema_valid_report(table):
    _valid(analyze(table).data)


def test_swf_copy_of_an_aaic_log_gives_the_same_headline_figures(tmp_path):
    """Processors = GPUs, nodes derived from whole nodes, success from the SWF status mapping."""
    from swftools.formats import swf
    from swftools import synth

    table = synth.generate(3000, seed=11)
    swf.write(table, tmp_path / "copy.swf", site="aaic")
    original = analyze(table, site="aaic")
    copy = analyze(tmp_path / "copy.swf", site="aaic")
    assert copy.data["trace"]["nodes_source"].startswith("derived")
    assert copy.data["trace"]["success_rule"] == "swf_status == 1"
    for row in original.summary:
        assert copy.value(row["key"]) == row["value"], row["key"]
