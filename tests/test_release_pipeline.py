"""swftools.release.pipeline: its helpers against hand-worked cases and brute force, and small
SWF releases end to end (stages, result, refusals, no overwrite without --force)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import tarfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from swftools import __version__
from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.privacy import rawnames
from swftools.privacy.audit import nothing_to_search
from swftools.release import pipeline
from swftools.release.pipeline import STAGES, release
from swftools.site import resolve_site
from swftools.validate.registry import describe_rules
from swftools.validate.report import Finding, Report

from .validate_support import swf_line, write_swf
from tests.conftest import stubbed_figures

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "archive" / "release-settings.example.json"
NAME = "aaic-synthetic-sample"  # the example settings' name
KEY = b"pipeline-test-key-0123456789abcdef"
OVERSIZED = ("; Version: 2.2\n; MaxProcs: 4\n"
             "1 0 0 10 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1\n"
             "2 5 0 10 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n")


# --- helpers --------------------------------------------------------------------------------

NAMES = st.one_of(st.none(), st.text(alphabet="0123456789ab ", max_size=4))


@hsettings(deadline=None, max_examples=150)
@given(st.lists(st.tuples(NAMES, NAMES), max_size=6), st.booleans())
def test_needs_anonymization_when_a_user_or_group_is_not_all_digits(rows, anonymized):
    table = pa.table({"user": pa.array([u for u, _ in rows], pa.string()),
                      "group": pa.array([g for _, g in rows], pa.string())})
    if anonymized:
        table = jt.with_metadata(table, {"anonymization": {"method": "hmac"}})
    raw = any(v is not None and not re.fullmatch(r"[0-9]+", v) for row in rows for v in row)
    assert pipeline._needs_anonymization(table) is (raw and not anonymized)


def test_needs_anonymization_hand_cases():
    def table(users, groups):
        return pa.table({"user": pa.array(users, pa.string()), "group": pa.array(groups, pa.string())})

    assert pipeline._needs_anonymization(table(["12", "7"], ["3", None])) is False
    assert pipeline._needs_anonymization(table([None, None], [None, None])) is False
    assert pipeline._needs_anonymization(table(["12", "7"], ["3", "lab"])) is True
    assert pipeline._needs_anonymization(table(["alice", None], ["3", "4"])) is True


KINDS = st.sampled_from(["user", "group", "host", "job"])
PARTS = st.lists(st.dictionaries(KINDS, st.lists(st.text(alphabet="abc1", max_size=3), max_size=4)),
                 max_size=4)


@hsettings(deadline=None)
@given(PARTS)
def test_merge_names_is_the_sorted_union_per_kind(parts):
    merged = pipeline._merge_names(*parts)
    kinds = {kind for part in parts for kind in part}
    assert list(merged) == sorted(kinds)
    for kind in kinds:
        everything = [v for part in parts for v in part.get(kind, [])]
        expected = []
        for value in sorted(everything):
            if not expected or expected[-1] != value:
                expected.append(value)
        assert merged[kind] == expected


def test_merge_names_by_hand():
    assert pipeline._merge_names({"user": ["b", "a"]}, {"user": ["a", "c"], "host": ["n1"]}) == {
        "host": ["n1"], "user": ["a", "b", "c"]}
    assert pipeline._merge_names() == {}


def _error_rule() -> tuple[str, str]:
    rule_id, _, _, description = next(r for r in describe_rules() if r[1] == "error" and r[3])
    return rule_id, description


def test_known_issues_lists_errors_and_warnings_per_rule_with_the_first_finding():
    rule_id, description = _error_rule()
    report = Report("t.swf")
    report.add(Finding("t.swf", 3, 7, None, rule_id, "error", "first message"))
    report.add(Finding("t.swf", 4, 8, None, rule_id, "error", "second message"))
    report.extend("zz-unknown", "warning", 1234, [])
    report.extend("aa-single", "warning", 1, [])
    report.extend("aa-info", "info", 5, [])
    report.counts[("aa-zero", "error")] = 0
    text = pipeline._known_issues(report, [])
    assert text.split("\n") == [
        "- **aa-single** (warning, 1 finding): ",
        f"- **{rule_id}** (error, 2 findings): {description} First: first message",
        "- **zz-unknown** (warning, 1,234 findings): ",
    ]


def test_known_issues_without_errors_or_warnings_says_so_then_the_replay_findings():
    report = Report("t.swf")
    report.extend("aa-info", "info", 2, [])
    sentence = ("Validation found no errors or warnings (`VALIDATION.json` lists the informational "
                "findings).")
    assert pipeline._known_issues(report, []) == sentence
    text = pipeline._known_issues(report, ["late start", "early end"])
    assert text.split("\n") == [
        sentence, "",
        "Replay consistency (the recorded schedule against a reference FCFS + EASY backfilling "
        "scheduler on the declared resources):", "",
        "- late start", "- early end"]


def test_site_inline_only_for_a_site_that_is_no_preset():
    table = jt.with_metadata(pa.table({"job_id": [1]}), {"source_format": "swf"})
    aaic = resolve_site("aaic")
    assert pipeline._with_site_inline(table, None) is table
    assert pipeline._with_site_inline(table, aaic) is table
    settings = {"$schema": "x.json", "gpu_scores": "scores.csv", "name": "mine", "gpus_per_node": 8}
    mine = dataclasses.replace(aaic, name="mine", settings=settings)
    meta = jt.get_metadata(pipeline._with_site_inline(table, mine))
    assert meta == {"source_format": "swf", "site": "mine",
                    "site_settings": {"name": "mine", "gpus_per_node": 8}}
    bare = dataclasses.replace(aaic, name="mine", settings={})
    assert pipeline._with_site_inline(table, bare) is table


def test_change_steps_name_every_change_in_order():
    shifted = jt.with_metadata(pa.table({"job_id": [1]}), {"anonymization": {"time_shifted": True}})
    plain = pa.table({"job_id": [1]})
    steps = pipeline._change_steps({"changes": ["cut to 2020"]}, shifted, True)
    assert len(steps) == 5 and steps[0] == "cut to 2020"
    assert "keyed pseudonyms (HMAC-SHA256)" in steps[1] and "across releases" in steps[1]
    assert steps[2].startswith("host, node and job names") and "removed from the metadata" in steps[2]
    assert steps[3] == "all times shifted by a whole number of weeks (weekday and time of day kept)"
    assert steps[4] == (f"converted with swftools {__version__} to a Frictionless data package and "
                        "to SWF 2.2 (times as UTC epoch seconds)")
    assert pipeline._change_steps({}, plain, False) == steps[4:]
    assert pipeline._change_steps({"changes": ["a", "b"]}, plain, False) == ["a", "b", steps[4]]
    unshifted = jt.with_metadata(plain, {"anonymization": {"time_shifted": False}})
    assert pipeline._change_steps({}, unshifted, True) == steps[1:3] + steps[4:]


def test_anonymized_change_steps_are_the_published_statement():
    """The two anonymization sentences, each whole, as the committed example archive's README
    states them (one list item each)."""
    published = (ROOT / "archive" / "example" / "README.md").read_text().splitlines()
    steps = pipeline._change_steps({}, pa.table({"job_id": [1]}), True)
    assert len(steps) == 3
    for step in steps[:2]:
        assert f"- {step}" in published
    assert steps[0].startswith("user and group names replaced by keyed pseudonyms (HMAC-SHA256); "
                               "the key is kept by the maintainers")
    assert steps[1].endswith("removed from the metadata (node names of a node list replaced by "
                             "keyed pseudonyms)")


def test_replay_findings_replay_the_table_on_the_given_site():
    """Hand-worked: two 8-GPU jobs both running over [0, 10) s. On a site of 3 nodes x 4 GPUs
    (12 GPUs) the recorded schedule is 16 - 12 = 4 GPUs over capacity for 10 s; with no site the
    pool is the header's 16 processors and nothing is over capacity."""
    import tempfile

    from swftools import formats

    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "two.swf"
        trace.write_text("; Version: 2.2\n; MaxProcs: 16\n"
                         "1 0 0 10 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1\n"
                         "2 0 0 10 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1\n")
        table = formats.read(trace)
    small = dataclasses.replace(resolve_site("aaic"), gpus_per_node=4, capacity_since=(0,),
                                capacity_nodes=(3,))
    on_site = pipeline._replay_findings(table, small)
    assert "3 nodes x 4 GPUs" in on_site[0] and "2 jobs with a recorded schedule, 2 replayed" in on_site[0]
    assert on_site[1] == ("Capacity violations in the recorded schedule: 1 period, 10 s in total, "
                          "at most 4 GPUs over capacity.")
    flat = pipeline._replay_findings(table, None)
    assert "flat pool of 16 processors" in flat[0]
    assert flat[1] == "Capacity violations in the recorded schedule: 0 periods."


def test_source_names_the_path_only_when_given():
    assert pipeline._source({"source": {"title": "Logs"}}) == "Logs"
    assert pipeline._source({"source": {"title": "Logs", "path": "a/b"}}) == "Logs (a/b)"


def test_metric_map_defaults_to_the_default_maps_and_none_is_identity():
    from swftools.telemetry import DEFAULT_MAPS, load_metric_map
    from swftools.telemetry.metric_map import identity_map

    assert pipeline._metric_map({}) == load_metric_map(DEFAULT_MAPS)
    assert pipeline._metric_map({"metric_map": None}) == identity_map()
    assert pipeline._metric_map({"metric_map": "dcgm"}) == load_metric_map("dcgm")
    assert identity_map() != load_metric_map(DEFAULT_MAPS)


# --- small releases end to end ----------------------------------------------------------------


def _numeric_swf(path: Path) -> Path:
    """Twelve jobs with numeric user ids 1-3 and group ids 1-2: no key needed."""
    lines = [swf_line(i + 1, submit=600 * i, procs=(1, 4, 16)[i % 3], req_procs=(1, 4, 16)[i % 3],
                      user=1 + i % 3, group=1 + i % 2) for i in range(12)]
    return write_swf(path, lines)


def _all_files(root: Path) -> list[str]:
    """Every file under ``root`` but swftools' output marker."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and p.name != ".swftools-output")


@pytest.fixture(scope="module")
def numeric(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pipeline")
    trace = _numeric_swf(tmp / "numeric.swf")
    stages: list[str] = []
    with stubbed_figures():  # the module is about the pipeline, not the figures
        result = release(trace, tmp / "rel", version="2.1.0", settings=SETTINGS,
                         on_stage=stages.append)
    return trace, tmp / "rel", result, stages


def test_release_runs_the_stages_in_order(numeric):
    *_, stages = numeric
    assert stages == list(STAGES)


def test_release_result_describes_the_files_written(numeric):
    _, out, result, _ = numeric
    tarball = f"{NAME}-2.1.0.tar.gz"
    assert result.out_dir == out and result.tarball == out / tarball
    assert result.tarball_sha256 == hashlib.sha256((out / tarball).read_bytes()).hexdigest()
    assert sorted(result.files) == _all_files(out) and result.files[-1] == tarball
    assert len(set(result.files)) == len(result.files)
    assert result.validation.valid and result.replay_findings
    readme = (out / "README.md").read_text()
    assert all(f"- {text}" in readme for text in result.replay_findings)
    # numeric ids only, no key: nothing to search, no audit note
    assert result.notes == [] and result.nothing_to_search == nothing_to_search(5)


def test_checksums_and_tarball_cover_every_other_file(numeric):
    _, out, result, _ = numeric
    tarball = f"{NAME}-2.1.0.tar.gz"
    sums = {}
    for line in (out / "SHA256SUMS").read_text().splitlines():
        digest, rel = line.split(maxsplit=1)
        sums[rel.lstrip("*")] = digest
    listed = [f for f in _all_files(out) if f not in (tarball, "SHA256SUMS")]
    assert sorted(sums) == listed
    for rel in listed:
        assert sums[rel] == hashlib.sha256((out / rel).read_bytes()).hexdigest()
    with tarfile.open(out / tarball) as tar:
        members = sorted(m.name for m in tar.getmembers() if m.isfile())
    assert members == sorted(f"{NAME}-2.1.0/{f}" for f in _all_files(out) if f != tarball)


def test_release_readme_and_page_carry_the_settings(numeric):
    _, out, _, _ = numeric
    readme = (out / "README.md").read_text()
    assert "Validation found no errors or warnings" in readme
    assert "see MaxProcs in the SWF header" in readme  # no site given
    assert "job_telemetry" not in readme
    assert f"converted with swftools {__version__}" in readme
    assert "keyed pseudonyms (HMAC-SHA256)" not in readme  # nothing was anonymized
    page = (out / "index.html").read_text()
    assert f"{NAME}-2.1.0.tar.gz" in page
    import html

    title = html.escape(json.loads(SETTINGS.read_text())["title"])  # the page is named after it
    assert f"<title>{title}</title>" in page and f"<h1>{title}</h1>" in page


def test_existing_output_is_kept_without_force_and_replaced_with_it(numeric, tmp_path,
                                                                    monkeypatch, stub_figures):
    """The existing output is a copy of the module's release (2.1.0, marker included: what
    swftools wrote). The forced release over it is made with a key and a site file, so it also
    shows that a key is audited for even without names and that a site file goes into the
    archive and resolves back (formerly two more releases of the same trace)."""
    import shutil

    from swftools.formats import read

    trace, released, *_ = numeric
    settings = json.loads((ROOT / "schemas" / "sites" / "aaic.json").read_text())
    settings["name"] = "my-site"
    site_file = tmp_path / "my-site.json"
    site_file.write_text(json.dumps(settings))
    out = tmp_path / "rel"
    shutil.copytree(released, out)
    before = {f: (out / f).read_bytes() for f in _all_files(out)}
    assert f"{NAME}-2.1.0.tar.gz" in before
    with pytest.raises(UsageError, match="already exists"):
        release(trace, out, version="1.0.1", settings=SETTINGS)
    assert {f: (out / f).read_bytes() for f in _all_files(out)} == before
    result = release(trace, out, version="1.0.1", settings=SETTINGS, force=True, key=KEY,
                     site=site_file)
    assert _all_files(out) == sorted(result.files)
    assert f"{NAME}-1.0.1.tar.gz" in result.files and f"{NAME}-2.1.0.tar.gz" not in result.files
    # a key is audited for even without names
    files = len(result.files) - 2  # the audit runs before SHA256SUMS and the tarball
    assert result.notes == [f"audit: the key is in none of {files} files"]
    readme = (out / "README.md").read_text()
    assert "keyed pseudonyms (HMAC-SHA256)" in readme
    assert "all times shifted" not in readme  # only when asked (time_shift_weeks)
    # validated and replayed on the site: its queue rules run, its 40 nodes x 8 GPUs replayed
    assert "queue-unknown" in json.loads((out / "VALIDATION.json").read_text())["rules_run"]
    assert "Model: site my-site: up to 40 nodes x 8 GPUs, first-fit;" in readme
    # a site file goes into the archive and resolves back
    back = resolve_site(None, read(out))
    assert back is not None and back.name == "my-site"
    assert f"{back.max_gpus} in all" in readme
    # and a release of that archive, with no --site, is validated on the site it carries (the
    # release is stopped there)
    import swftools.validate

    seen = []

    def validate(table, *, site):
        seen.append(site)
        raise InputError("stop", "stopped after the site was resolved")

    monkeypatch.setattr(swftools.validate, "validate", validate)
    with pytest.raises(InputError, match="stopped after the site was resolved"):
        release(out, tmp_path / "again", version="1.0.2", settings=SETTINGS, key=KEY)
    assert [site.name for site in seen] == ["my-site"]


def test_raw_host_or_job_names_need_a_key(numeric, tmp_path, monkeypatch, stub_figures):
    trace, *_ = numeric
    out = tmp_path / "rel"
    found = {"user": ["1"], "host": ["gpunode07"]}
    monkeypatch.setattr(rawnames, "raw_names", lambda *a, **k: found)
    with pytest.raises(UsageError) as err:
        release(trace, out, version="1.0.0", settings=SETTINGS)
    assert str(err.value) == ("the source holds raw host names in its metadata: give --key-file "
                              "(or set SWFTOOLS_ANON_KEY) so that they are pseudonymized or dropped")
    found["job"] = ["train-bert"]
    with pytest.raises(UsageError, match="raw host names and job names in its metadata"):
        release(trace, out, version="1.0.0", settings=SETTINGS)
    assert not out.exists()
    # with the key the host name is sought in the archive, and not found; times shifted by a week
    result = release(trace, out, version="1.0.0", settings=SETTINGS, key=KEY, time_shift_weeks=1)
    from swftools.formats import read

    week = 7 * 24 * 3600
    assert read(out).column("submit_time").to_pylist() == [
        t + week for t in read(trace).column("submit_time").to_pylist()]
    assert "- all times shifted by a whole number of weeks" in (out / "README.md").read_text()
    files = len(result.files) - 2
    assert result.notes == [f"audit: no raw name (host, job), nor the key, in {files} files"]
    assert result.nothing_to_search is None
    # user or group names (``_needs_anonymization``, tested above) are named first
    monkeypatch.setattr(pipeline, "_needs_anonymization", lambda table: True)
    with pytest.raises(UsageError) as err:
        release(trace, tmp_path / "other", version="1.0.0", settings=SETTINGS)
    assert str(err.value) == ("the source holds raw user/group names: give --key-file (or set "
                              "SWFTOOLS_ANON_KEY) so that they are pseudonymized or dropped")


def test_a_leaked_name_stops_the_release_and_writes_nothing(numeric, tmp_path, monkeypatch,
                                                            stub_figures):
    """A raw name the archive holds (here the settings' title word) fails the audit, and so does
    the key (here in the description), before the tarball is made."""
    trace, *_ = numeric
    out = tmp_path / "rel"
    monkeypatch.setattr(rawnames, "raw_names", lambda *a, **k: {"host": ["Synthetic"]})
    with pytest.raises(InputError) as err:
        release(trace, out, version="1.0.0", settings=SETTINGS, key=KEY)
    assert str(err.value).startswith(f"{trace}: the archive leaks raw names:\n")
    assert "Synthetic" in str(err.value)
    assert not out.exists()
    monkeypatch.setattr(rawnames, "raw_names", lambda *a, **k: {"user": ["1"]})
    settings = json.loads(SETTINGS.read_text())
    settings["description"] += f" Key: {KEY.decode()}."
    with pytest.raises(InputError) as err:
        release(trace, out, version="1.0.0", settings=settings, key=KEY)
    assert str(err.value).startswith(f"{trace}: the archive leaks raw names:\n")
    assert "the anonymization key (raw bytes)" in str(err.value)
    assert not out.exists()


def test_strict_refuses_warnings_that_are_published_otherwise(tmp_path, stub_figures):
    trace = tmp_path / "big.swf"
    trace.write_text(OVERSIZED)
    out = tmp_path / "rel"
    with pytest.raises(InputError) as err:
        release(trace, out, version="1.0.0", settings=SETTINGS, strict=True, accept_errors=True)
    assert str(err.value) == (f"{trace}: validation found 3 warnings (capacity-gpus, "
                              "job-exceeds-machine) and --strict makes warnings fail; fix the "
                              "source or release without --strict to publish them as known issues")
    assert not out.exists()
    result = release(trace, out, version="1.0.0", settings=SETTINGS)
    readme = (out / "README.md").read_text()
    assert "**job-exceeds-machine** (warning" in readme
    assert "the site's local time zone is **UTC**" in readme  # no site, no recorded time zone
    assert result.validation.warnings == 3


def test_a_bad_output_parent_or_version_is_refused_before_anything_is_written(numeric, tmp_path):
    trace, *_ = numeric
    with pytest.raises(UsageError, match="output parent is not an existing directory"):
        release(trace, tmp_path / "no" / "rel", version="1.0.0", settings=SETTINGS)
    with pytest.raises(UsageError, match="not a semantic version"):
        release(trace, tmp_path / "rel", version="1.0", settings=SETTINGS)
    assert not (tmp_path / "rel").exists()


def test_validation_errors_stop_the_release_unless_accepted(tmp_path):
    """Jobs 1 and 2 each twice (two job-id-unique errors) and an SWF status 9, which no code is
    (one swf-status error); no --accept-errors."""
    lines = [swf_line(1), swf_line(1, submit=5), swf_line(2, submit=9, status=9),
             swf_line(2, submit=12)]
    trace = write_swf(tmp_path / "twice.swf", lines)
    out = tmp_path / "rel"
    with pytest.raises(InputError) as err:
        release(trace, out, version="1.0.0", settings=SETTINGS)
    assert str(err.value) == (f"{trace}: validation found 3 errors (job-id-unique, swf-status); "
                              "fix the source or pass --accept-errors to publish them as known "
                              "issues")
    assert not out.exists()


def test_output_and_inputs_inside_it_are_refused_before_the_source_is_read(tmp_path, monkeypatch):
    """The source's name tells no format, so reading it would be refused: each refusal below
    comes first, and no stage starts."""
    source = tmp_path / "trace.xyz"
    source.write_text("1 0 0 10 1\n")
    stages: list[str] = []

    def refusal(out: Path, **options) -> str:
        with pytest.raises(UsageError) as err:
            release(source, out, version="1.0.0", **{"settings": SETTINGS, **options},
                    on_stage=stages.append)
        return str(err.value)

    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the output folder would go")
    assert refusal(blocker, force=True) == (f"{blocker}: already exists and is not a folder; not "
                                            "replacing it with one, even with --force")
    out = tmp_path / "rel"  # an earlier output, which --force replaces
    out.mkdir()
    (out / ".swftools-output").write_text("")
    inside = (f": this input is inside the output {out}, which the output would replace; write "
              "the output elsewhere")
    site_file = out / "my-site.json"
    site_file.write_text("{}")
    assert refusal(out, force=True, site=site_file) == f"{site_file}{inside}"
    samples, allocations = out / "samples.json", out / "allocations.csv"
    assert refusal(out, force=True, telemetry={"samples": [samples]}) == f"{samples}{inside}"
    assert refusal(out, force=True, telemetry={"samples": [], "allocations": allocations}) == (
        f"{allocations}{inside}")
    # a preset's name is no input file, even where a file of that name would be inside the output
    monkeypatch.chdir(out)
    assert refusal(out, force=True, site="aaic").startswith(
        f"{source}: cannot tell the format from the name")
    # settings given as a dict are used as they are (not read as a file name)
    settings = json.loads(SETTINGS.read_text())
    assert refusal(tmp_path / "new", settings=settings).startswith(f"{source}: cannot tell")
    monkeypatch.setattr(pipeline.os, "access", lambda path, mode: False)
    assert refusal(tmp_path / "new") == f"{tmp_path}: output parent directory is not writable"
    assert stages == []


def test_the_source_is_read_and_validated_on_the_site_given(tmp_path, monkeypatch):
    """Five jobs of the bundled NQSII sample: read on a site file (here in Europe/Paris) when one
    is given, else on the NQSII reader's AAIC preset (Asia/Tokyo); the release is stopped at
    validation, which records what it was handed."""
    import gzip

    import swftools.validate

    lines = gzip.decompress((ROOT / "samples" / "aaic-sample.csv.gz").read_bytes()).decode()
    source = tmp_path / "small.csv"
    source.write_text("".join(lines.splitlines(keepends=True)[:6]))
    settings = json.loads((ROOT / "schemas" / "sites" / "aaic.json").read_text())
    settings.update(name="my-site", time_zone="Europe/Paris")
    site_file = tmp_path / "my-site.json"
    site_file.write_text(json.dumps(settings))
    seen = []

    def validate(table, *, site):
        seen.append((site.name, jt.get_metadata(table)["time_zone"]))
        raise InputError("stop", "stopped at validation")

    monkeypatch.setattr(swftools.validate, "validate", validate)
    for site in (site_file, None):
        with pytest.raises(InputError, match="stopped at validation"):
            release(source, tmp_path / "rel", version="1.0.0", settings=SETTINGS, key=KEY,
                    site=site)
    assert seen == [("my-site", "Europe/Paris"), ("aaic", "Asia/Tokyo")]
