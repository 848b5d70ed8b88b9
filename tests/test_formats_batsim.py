"""Batsim export: checked by an independent loader written from Batsim's public description,
round trips, golden files, the loss report, atomic and refused overwrites, bad input."""

from __future__ import annotations

import json
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from swftools import table as jt
from swftools.cli import app
from swftools.errors import InputError, UsageError
from swftools.formats import batsim, detect_format
from swftools.formats.batsim import workload as _workload  # noqa: F401  (batsim.workload)
from swftools.formats.formatinfo import skipped_jobs
from tests.strategies import aaic_jobs, schema_values, subset_schemas, swf_jobs
from . import goldens

GOLDEN = Path(__file__).parent / "golden" / "batsim"
SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "aaic-sample.csv.gz"


# --- an independent loader, from Batsim's documentation (docs/input-workload.rst, profiles.md)
# and the checks its loader makes (src/workload.cpp, src/jobs.cpp, src/profiles.cpp) -----------

def batsim_load(path: Path) -> dict:
    """Load a workload as Batsim would, refusing what Batsim refuses; returns
    ``{"nb_res": int, "jobs": {name: (subtime, walltime, res, delay)}}``."""
    doc = json.loads(path.read_text())
    assert isinstance(doc, dict)
    nb_res = doc["nb_res"]
    assert type(nb_res) is int and nb_res > 0
    profiles = doc["profiles"]
    for name, prof in profiles.items():
        assert isinstance(prof["type"], str)
        if prof["type"] == "delay":
            assert isinstance(prof["delay"], (int, float)) and prof["delay"] > 0, name
    jobs = {}
    for job in doc["jobs"]:
        assert type(job["id"]) in (str, int)
        ident = str(job["id"])
        assert ident.count("!") <= 1
        assert isinstance(job["subtime"], (int, float)) and not isinstance(job["subtime"], bool)
        wall = job.get("walltime", -1)
        assert wall == -1 or wall > 0
        assert type(job["res"]) is int and 0 <= job["res"] < 2**31
        assert job["profile"] in profiles
        assert ident not in jobs, f"duplicate id {ident}"
        jobs[ident] = (job["subtime"], wall, job["res"], profiles[job["profile"]].get("delay"))
    return {"nb_res": nb_res, "jobs": jobs}


def platform_hosts(path: Path) -> tuple[list[str], list[str]]:
    """Compute and master host names of a SimGrid platform made of ``<cluster>`` elements, and
    a check that the zone route names the clusters' routers as SimGrid names them."""
    root = ET.parse(path).getroot()
    assert root.tag == "platform" and root.get("version") == "4.1"
    compute, master = [], []
    routers = set()
    for cluster in root.iter("cluster"):
        lo, hi = map(int, cluster.get("radical").split("-"))
        names = [f"{cluster.get('prefix')}{i}{cluster.get('suffix')}" for i in range(lo, hi + 1)]
        routers.add(f"{cluster.get('prefix')}{cluster.get('id')}_router")
        roles = {p.get("id"): p.get("value") for p in cluster.iter("prop")}
        (master if roles.get("role") == "master" else compute).extend(names)
    for route in root.iter("zoneRoute"):
        assert {route.get("gw_src"), route.get("gw_dst")} <= routers
    return compute, master


def _check_against_table(table, path: Path, losses: list[str]) -> None:
    loaded = batsim_load(path)
    compute, master = platform_hosts(path.with_name(path.stem + ".platform.xml"))
    assert len(compute) == loaded["nb_res"] and master == ["master_host0"]
    rows: dict = {}
    for r in table.to_pylist():
        rows.setdefault(r["job_id"], r)  # a repeated id: the first is written
    assert len(loaded["jobs"]) == table.num_rows - skipped_jobs(losses)
    origin = json.loads(path.read_text())["swftools"]["time_origin_s"]
    for ident, (subtime, wall, res, delay) in loaded["jobs"].items():
        row = rows[int(ident)]
        assert subtime == row["submit_time"] - origin >= 0
        assert delay == row["walltime_s"] > 0
        assert res == row["gpus"] and 0 < res <= loaded["nb_res"]
        assert wall == (row["requested_walltime_s"] or -1)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aaic_jobs(max_size=20) | swf_jobs(max_size=20))
def test_batsim_accepts_every_workload_we_write(table):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.json"
        losses = batsim.write(table, path)
        _check_against_table(table, path, losses)
        back = batsim.read(path, allow_empty=True)
        again = Path(tmp) / "again.json"
        batsim.write(back, again)
        assert again.read_bytes() == path.read_bytes()  # deterministic, and a fixed point


def _hand_table():
    """Awkward cases: never ran, ran 0 s, too wide, no GPUs, 0 s limit, a repeated id, ties."""
    cols = {
        "job_id": [1, 2, 3, 4, 5, 6, 7, 7, 8],
        "user": ["alice", "bob", "alice", "carol", "bob", "alice", "dan", "dan", "erin"],
        "queue": ["Normal"] * 9,
        "gpus": [4, 8, 16, 2, 0, 1, 1, 1, 8],
        "requested_walltime_s": [3600, 0, 600, None, 60, 7200, 60, 60, 86400],
        "submit_time": [1000, 1000, 1010, 1020, 1030, 1040, 1050, 1060, 1005],
        "walltime_s": [100, 50, 30, None, 10, 0, 20, 20, 4000],
        "termcode": [0, 0, 1, 3, 0, 1, 0, 0, 2],
    }
    return jt.from_columns(cols, {"source_format": "nqsii", "time_zone": "Asia/Tokyo"})


def test_golden_hand_table(tmp_path):
    path = tmp_path / "hand.json"
    losses = batsim.write(_hand_table(), path, nb_res=8)
    if goldens.updating():
        for name in ("hand.json", "hand.platform.xml"):
            (GOLDEN / name).write_bytes((tmp_path / name).read_bytes())
        (GOLDEN / "hand.losses.json").write_text(json.dumps(losses, indent=1) + "\n")
    assert path.read_bytes() == (GOLDEN / "hand.json").read_bytes()
    assert (tmp_path / "hand.platform.xml").read_bytes() == (GOLDEN / "hand.platform.xml").read_bytes()
    assert losses == json.loads((GOLDEN / "hand.losses.json").read_text())
    assert skipped_jobs(losses) == 5  # 4 never ran, 6 ran 0 s, 3 too wide, 5 no GPUs, 2nd 7
    _check_against_table(_hand_table(), path, losses)
    back = batsim.read(path)
    assert back.column("job_id").to_pylist() == [1, 2, 8, 7]  # by submit time, then id
    assert back.column("submit_time").to_pylist() == [1000, 1000, 1005, 1050]
    assert back.column("requested_walltime_s").to_pylist() == [3600, None, 86400, 60]


def test_platform_path_option_and_default_name(tmp_path):
    batsim.write(_hand_table(), tmp_path / "w.batsim.json", nb_res=8)
    assert (tmp_path / "w.batsim.platform.xml").is_file()
    batsim.write(_hand_table(), tmp_path / "x.json", nb_res=8, platform=tmp_path / "p.xml")
    assert platform_hosts(tmp_path / "p.xml")[0] == [f"host{i}" for i in range(8)]
    assert not (tmp_path / "x.platform.xml").exists()


def test_the_default_platform_name_drops_only_a_json_suffix():
    from pathlib import Path

    from swftools.formats.batsim.platform import platform_path

    assert platform_path(Path("d/w.json")) == Path("d/w.platform.xml")
    assert platform_path(Path("d/W.JSON")) == Path("d/W.platform.xml")
    assert platform_path(Path("d/w.batsim")) == Path("d/w.batsim.platform.xml")


def test_nb_res_from_the_site_or_the_widest_job(tmp_path):
    table = _hand_table()
    batsim.write(table, tmp_path / "a.json", site="aaic")
    assert batsim_load(tmp_path / "a.json")["nb_res"] == 320  # AAIC: 40 nodes x 8 GPUs at most
    batsim.write(table, tmp_path / "b.json")  # no site: the widest job written
    assert batsim_load(tmp_path / "b.json")["nb_res"] == 16


def test_refuses_to_overwrite_either_file_and_writes_nothing(tmp_path):
    (tmp_path / "w.platform.xml").write_text("mine")
    with pytest.raises(UsageError, match="already exists"):
        batsim.write(_hand_table(), tmp_path / "w.json")
    assert not (tmp_path / "w.json").exists()
    assert (tmp_path / "w.platform.xml").read_text() == "mine"
    batsim.write(_hand_table(), tmp_path / "w.json", force=True)
    assert platform_hosts(tmp_path / "w.platform.xml")[1] == ["master_host0"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.json", "w.platform.xml"]


@pytest.mark.parametrize("text,line,field", [
    ('{"nb_res": 4, "jobs": [\n  {"id": "1", "subtime": 0, "res": 1, "profile": "p"}\n],\n'
     ' "profiles": {"p": {"type": "delay", "delay": 0}}}', None, "profiles/p/delay"),
    ('{"nb_res": 4, "jobs": [\n  {"id": "1", "subtime": 0, "res": 1, "profile": "p"},\n'
     '  {"id": "2", "subtime": 5, "res": -2, "profile": "p"}\n],\n'
     ' "profiles": {"p": {"type": "delay", "delay": 3}}}', 3, "jobs/1/res"),
    ('{"nb_res": 4, "jobs": [\n  {"id": "x!y", "subtime": 0, "res": 1, "profile": "p"}\n],\n'
     ' "profiles": {"p": {"type": "delay", "delay": 3}}}', 2, "jobs/0/id"),
    ('{"nb_res": 4, "jobs": [\n  {"id": "1", "subtime": 0, "res": 1, "profile": "q"}\n],\n'
     ' "profiles": {"p": {"type": "delay", "delay": 3}}}', 2, "jobs/0/profile"),
    ('{"nb_res": 4, "jobs": [\n  {"id": "1", "subtime": 0, "walltime": 0, "res": 1, "profile": "p"}'
     '\n], "profiles": {"p": {"type": "delay", "delay": 3}}}', 2, "jobs/0/walltime"),
    ('{"nb_res": 0, "jobs": [], "profiles": {}}', None, "nb_res"),
    ('{"nb_res": 4, "jobs": [\n  {"id": "1", "subtime": 0, "res": 1, "profile": "p"},\n'
     '  {"id": "w0!1", "subtime": 5, "res": 2, "profile": "p"}\n],\n'
     ' "profiles": {"p": {"type": "delay", "delay": 3}}}', 3, "jobs/1/id"),
    ('{"nb_res": 4,\n "jobs": [\n', 3, None),
    ('{"nb_res": 4, "jobs": [\n  {"id": "1", "subtime": Infinity, "res": 1, "profile": "p"}\n],\n'
     ' "profiles": {"p": {"type": "delay", "delay": 3}}}', 2, None),
])
def test_bad_workloads_are_located(tmp_path, text, line, field):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        batsim.read(path)
    assert info.value.line == line and info.value.field == field, str(info.value)
    assert str(path) in str(info.value)


def test_reads_workloads_written_by_others(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": 3, "subtime": 10.4, "walltime": 100.0, "res": 2, "profile": "d"},
        {"id": "w0!1", "subtime": 0, "res": 4, "profile": "m"}],
        "profiles": {"d": {"type": "delay", "delay": 20.6}, "m": {"type": "parallel_homogeneous",
                                                                 "cpu": 1e9, "com": 0}}}))
    rows = batsim.read(path).to_pylist()
    assert [(r["job_id"], r["submit_time"], r["walltime_s"], r["requested_walltime_s"], r["gpus"])
            for r in rows] == [(1, 0, None, None, 4), (3, 10, 21, 100, 2)]


def test_detected_by_name():
    assert detect_format("w.json") == "batsim"
    assert detect_format("pkg/datapackage.json") == "package"


def test_convert_sample_prints_the_loss_report(tmp_path):
    out = tmp_path / "s.json"
    result = CliRunner().invoke(app, ["convert", str(SAMPLE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "note: the batsim output cannot carry everything:" in result.output
    assert "wrote 4993 of 5000 jobs (7 skipped: run time 0 s" in result.output
    assert "user, group, queue: who and where is dropped" in result.output
    loaded = batsim_load(out)
    assert loaded["nb_res"] == 320 and 0 < len(loaded["jobs"]) < 5000
    platform_hosts(tmp_path / "s.platform.xml")


def test_the_workload_schema_is_a_valid_json_schema():
    import jsonschema

    from swftools.resources import load_json

    jsonschema.Draft202012Validator.check_schema(load_json(batsim.workload.SCHEMA_FILE))


def test_convert_of_a_bad_workload_exits_1_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"nb_res": 4, "jobs": [\n  {"id": "1", "subtime": 0, "res": -1, "profile": "p"}\n'
                   '], "profiles": {"p": {"type": "delay", "delay": 3}}}')
    result = CliRunner().invoke(app, ["convert", str(bad), "--out", str(tmp_path / "o.swf")])
    assert result.exit_code == 1
    assert f"{bad}:2: jobs/0/res:" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


_json_values = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2),
                         st.sampled_from([-1, -1.0, 0, 0.0, 1.0, 1e-9]), st.text(max_size=3))


_VALID_JOB = {"id": "1", "subtime": 0, "walltime": 10, "res": 1, "profile": "p"}
_DOC = {"nb_res": 4, "jobs": [_VALID_JOB], "profiles": {"p": {"type": "delay", "delay": 3}}}


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["id", "subtime", "walltime", "res", "profile", "x"]),
                       _json_values, max_size=2),
       st.sets(st.sampled_from(sorted(_VALID_JOB)), max_size=1),
       st.dictionaries(st.sampled_from(["type", "delay", "cpu"]),
                       st.one_of(_json_values, st.sampled_from(["delay", "ptask"])), max_size=1),
       st.sets(st.sampled_from(["type", "delay"]), max_size=1))
def test_the_fast_check_agrees_with_jsonschema(changes, dropped, profile_changes, profile_dropped):
    """Valid jobs and profiles with a member or two changed or dropped."""
    import jsonschema

    from swftools.formats.batsim.schema import SCHEMA_FILE, compile_schema
    from swftools.resources import load_json

    schema = load_json(SCHEMA_FILE)
    job = {k: v for k, v in {**_VALID_JOB, **changes}.items() if k not in dropped}
    profile = {k: v for k, v in {"type": "delay", "delay": 3, **profile_changes}.items()
               if k not in profile_dropped}
    doc = {**_DOC, "jobs": [job], "profiles": {"p": profile}}
    assert compile_schema(schema)(doc) == jsonschema.Draft202012Validator(schema).is_valid(doc)


@settings(max_examples=400, deadline=None)
@given(subset_schemas(), st.lists(schema_values, min_size=1, max_size=4))
@example({"const": [1]}, [[True], [1.0], [1]])
@example({"enum": [{"a": 0}, "b"]}, [{"a": False}, {"a": 0.0}, "b", True])
@example({"const": 1}, [True, 1.0])
@example({"const": True}, [1, True, 1.0])
@example({"enum": [False, "a"]}, [0, False, 0.0])
@example({"minimum": 1, "exclusiveMinimum": 0}, [1, 1.0, 0.5, 0, True])
@example({"properties": {"a": {}}, "additionalProperties": {"type": "string"}},
         [{"a": 1}, {"a": 1, "b": 2}, {"b": "x"}])
@example({"type": ["string", "integer", "number", "object", "array"]}, [None, True, 1, "a"])
def test_a_compiled_schema_agrees_with_jsonschema_on_any_schema_of_its_subset(schema, docs):
    """Any schema of the subset, not only the workload's: every keyword and type both ways."""
    import jsonschema

    from swftools.formats.batsim.schema import compile_schema

    check = compile_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for doc in docs:
        assert check(doc) == validator.is_valid(doc), (schema, doc)


@pytest.mark.parametrize("schema,named", [
    ({"type": "boolean"}, ["boolean"]), ({"type": ["string", "null"]}, ["string", "null"]),
    ({"maximum": 3}, "maximum"), ({"items": {"pattern": "a"}}, "pattern")])
def test_a_keyword_outside_the_subset_is_unsupported(schema, named):
    from swftools.formats.batsim.schema import Unsupported, compile_schema

    with pytest.raises(Unsupported) as info:
        compile_schema(schema)
    assert info.value.args == (named,)


def _first_error(**changes):
    from swftools.formats.batsim.schema import first_error

    err = first_error({**_DOC, **changes})
    return None if err is None else (list(err.path), err.message)


def test_the_first_error_is_the_documents_then_the_first_refused_jobs():
    bad_res, bad_walltime = {**_VALID_JOB, "res": -1}, {**_VALID_JOB, "walltime": 0}
    assert _first_error() is None
    # the document's own members before its jobs, though "jobs" sorts before "nb_res"
    assert _first_error(nb_res=-4, jobs=[bad_res]) == (["nb_res"], "-4 is less than the minimum of 1")
    # jobs in file order (job 2 before job 10, though "10" sorts before "2"), located in the file
    jobs = [_VALID_JOB] * 2 + [bad_res] + [_VALID_JOB] * 7 + [bad_walltime]
    assert _first_error(jobs=jobs) == (["jobs", 2, "res"], "-1 is less than the minimum of 0")
    # within one job or the document, by path
    assert _first_error(jobs=[{**bad_res, "walltime": 0}]) == \
        (["jobs", 0, "res"], "-1 is less than the minimum of 0")
    assert _first_error(nb_res="x", profiles=5) == (["nb_res"], "'x' is not of type 'integer'")
    assert _first_error(nb_res=0, jobs=[], profiles={"p": {"type": "delay"}}) == \
        (["nb_res"], "0 is less than the minimum of 1")
    assert _first_error(profiles={"p": {"type": "delay", "delay": -1}},
                        swftools={"processor_unit": "cpu"})[0] == ["profiles", "p", "delay"]
    assert _first_error(jobs=5) == (["jobs"], "5 is not of type 'array'")
    from swftools.formats.batsim.schema import first_error
    assert first_error([]).message == "[] is not of type 'object'"
    assert _first_error(jobs=[bad_res, "x"]) == (["jobs", 0, "res"], "-1 is less than the minimum of 0")
