"""Data package writer/reader: round trips, frictionless validity, determinism, bad input."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.formats import datapackage as dp
from swftools import formats
from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.site import load_site
from tests.conftest import other_hash_seed

from . import goldens
from .strategies import aaic_jobs, swf_jobs

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden" / "datapackage"
FRICTIONLESS_CLI = Path(sys.executable).with_name("frictionless")


def tiny_table() -> pa.Table:
    """Three fixed AAIC jobs, one with an unknown (null) requested walltime."""
    return jt.from_columns({
        "job_id": [101, 102, 103],
        "user": ["alice", "bob", "alice"],
        "group": ["lab1", "lab2", "lab1"],
        "queue": ["Normal", "Short", "Normal"],
        "nodes": [1, 1, 2],
        "gpus_per_node": [4, 1, 8],
        "gpus": [4, 1, 16],
        "requested_walltime_s": [3600, None, 86400],
        "termcode": [0, 1, 2],
        "submit_time": [1500000000, 1500000060, 1500000120],
        "start_time": [1500000010, 1500000100, 1500003720],
        "finish_time": [1500001810, 1500000160, 1500090120],
        "wait_s": [10, 40, 3600],
        "walltime_s": [1800, 60, 86400],
    }, {"site": "aaic", "time_zone": "Asia/Tokyo", "source_file": "tiny.csv.gz",
        "source_format": "nqsii", "converter_version": "0.1.0",
        "nqsii": {"form": "raw"}})


def swf_table() -> pa.Table:
    """Four fixed SWF-shaped jobs: numeric users and queues, unknown (null) fields everywhere."""
    return jt.from_columns({
        "job_id": [1, 2, 5, 9],
        "submit_time": [0, 10, 10, 400],
        "wait_s": [5, None, 0, 12],
        "walltime_s": [100, 7, None, 3],
        "start_time": [5, None, 10, 412],
        "finish_time": [105, None, None, 415],
        "gpus": [64, 1, None, 2048],
        "avg_cpu_time_s": [99.5, None, 0.03, 2.0],
        "used_memory_kb": [None, 1024, None, 0],
        "requested_procs": [64, 1, 8, None],
        "requested_walltime_s": [3600, None, 60, 86400],
        "requested_memory_kb": [None, None, 2048, None],
        "swf_status": [1, 0, 5, None],
        "user": ["3", "12", None, "3"],
        "group": ["1", None, "2", "1"],
        "executable": [None, 4, 4, 1],
        "queue": ["1", "0", "3", None],
        "partition": [1, 1, None, 2],
        "preceding_job_id": [None, None, 2, None],
        "think_time_s": [None, None, 40, None],
    }, {"swf_header": [["Version", "2.2"], ["Queue", "1 batch"], ["Queue", "3 long"],
                       ["UnixStartTime", "1000000000"]], "source_file": "x.swf",
        "source_format": "swf"})


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def frictionless_report(path: Path):
    import frictionless
    return frictionless.validate(str(path / "datapackage.json"))


def set_descriptor(pkg: Path, change) -> Path:
    desc_path = pkg / "datapackage.json"
    desc = json.loads(desc_path.read_text())
    change(desc)
    desc_path.write_text(json.dumps(desc, indent=2) + "\n")
    return desc_path


def replace_csv(pkg: Path, text: str | bytes) -> Path:
    """Replace the jobs CSV with ``text`` (hash and size updated) and drop the Parquet twin."""
    csv_path = pkg / "data" / "jobs.csv.gz"
    raw = text.encode() if isinstance(text, str) else text
    csv_path.write_bytes(gzip.compress(raw, mtime=0))

    def change(desc):
        desc["resources"] = [r for r in desc["resources"] if r["name"] == "jobs"]
        desc["resources"][0]["hash"] = "sha256:" + hashlib.sha256(csv_path.read_bytes()).hexdigest()
        desc["resources"][0]["bytes"] = csv_path.stat().st_size
    set_descriptor(pkg, change)
    return csv_path


def csv_only(pkg: Path) -> Path:
    """Drop the Parquet twin, so that ``read`` parses the CSV; the CSV's path."""
    (pkg / "data" / "jobs.parquet").unlink()
    return pkg / "data" / "jobs.csv.gz"


def read_error(pkg: Path) -> InputError:
    """The error ``read`` raises on the package ``pkg``."""
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    return err.value


def written(table: pa.Table, tmp: str) -> Path:
    """Write ``table`` as a package in the folder ``tmp``, check that it reads back equal."""
    out = Path(tmp) / "pkg"
    assert dp.write(table, out) == []
    assert jt.equal(dp.read(out, allow_empty=True), table, metadata=True)
    return out


def csv_text(pkg: Path) -> str:
    return gzip.decompress((pkg / "data" / "jobs.csv.gz").read_bytes()).decode()


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    out = tmp_path / "pkg"
    assert dp.write(tiny_table(), out) == []
    return out


# ------------------------------------------------------------------------------ round trips

@given(aaic_jobs())
@settings(max_examples=25)
def test_round_trip_aaic(table):
    with tempfile.TemporaryDirectory() as tmp:
        out = written(table, tmp)
        assert jt.equal(dp.read(out / "datapackage.json", allow_empty=True), table, metadata=True)


@given(swf_jobs())
@settings(max_examples=25)
def test_round_trip_swf_through_parquet_and_csv(table):
    with tempfile.TemporaryDirectory() as tmp:
        out = written(table, tmp)
        # Damage the Parquet file: the reader warns and falls back to the CSV, losslessly.
        with open(out / "data" / "jobs.parquet", "ab") as fh:
            fh.write(b"\0")
        with pytest.warns(dp.ParquetChecksumWarning, match="reading the CSV resource instead"):
            via_csv = dp.read(out, allow_empty=True)
        assert jt.equal(via_csv, table, metadata=True)


awkward_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)


@given(aaic_jobs(min_size=1), st.data())
@settings(max_examples=25)
def test_round_trip_awkward_strings_and_floats_through_csv(table, data):
    n = table.num_rows
    users = data.draw(st.lists(awkward_text | st.none(), min_size=n, max_size=n))
    cpu = data.draw(st.lists(st.floats(0, 1e300) | st.none(), min_size=n, max_size=n))
    cols = {name: table.column(name) for name in table.column_names}
    cols["user"], cols["avg_cpu_time_s"] = pa.array(users, pa.string()), pa.array(cpu, pa.float64())
    table = jt.from_columns(cols, jt.get_metadata(table))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pkg"
        losses = dp.write(table, out)
        empties = sum(1 for u in users if u == "")
        strings = "1 empty string is" if empties == 1 else f"{empties} empty strings are"
        assert losses == ([f"user: {strings} read as missing from "
                           "data/jobs.csv.gz by frictionless and pandas (swftools and the "
                           "Parquet resource keep them)"] if empties else [])
        (out / "data" / "jobs.parquet").unlink()  # force the CSV path
        assert jt.equal(dp.read(out), table, metadata=True)


def test_formats_dispatch_to_the_package_module(tmp_path):
    target = tmp_path / "out" / "datapackage.json"
    target.parent.mkdir()
    assert formats.detect_format(target) == "package"
    assert formats.write(tiny_table(), target) == []
    assert jt.equal(formats.read(target.parent), tiny_table(), metadata=True)


def test_empty_table(tmp_path):
    assert dp.write(jt.empty(), tmp_path / "pkg") == []
    with pytest.raises(InputError, match=r"pkg/data/jobs\.csv\.gz:1: no job rows"):
        dp.read(tmp_path / "pkg")
    back = dp.read(tmp_path / "pkg", allow_empty=True)
    assert back.num_rows == 0 and jt.equal(back, jt.empty(), metadata=True)
    assert frictionless_report(tmp_path / "pkg").valid


# --------------------------------------------------------------------------- descriptor

def test_descriptor_contents(pkg):
    desc = dp.descriptor(pkg)
    assert desc["$schema"] == "https://datapackage.org/profiles/2.0/datapackage.json"
    assert desc["licenses"] == [{
        "name": "CC-BY-SA-4.0", "path": "https://creativecommons.org/licenses/by-sa/4.0/",
        "title": "Creative Commons Attribution-ShareAlike 4.0 International"}]
    assert desc["sources"] == [{"title": "tiny.csv.gz (NEC NQSII job log)"}]
    assert "created" not in desc
    jobs, parquet = desc["resources"]
    assert (jobs["name"], jobs["path"], jobs["dialect"]["lineTerminator"]) == \
        ("jobs", "data/jobs.csv.gz", "\n")
    csv_bytes = (pkg / "data" / "jobs.csv.gz").read_bytes()
    assert jobs["hash"] == "sha256:" + hashlib.sha256(csv_bytes).hexdigest()
    assert jobs["bytes"] == len(csv_bytes)
    assert parquet["format"] == "parquet" and "bytes" not in parquet and "hash" not in parquet
    assert parquet["mediatype"] == "application/vnd.apache.parquet"
    pq_bytes = (pkg / "data" / "jobs.parquet").read_bytes()
    assert desc["swftools"]["files"]["data/jobs.parquet"] == {
        "bytes": len(pq_bytes), "sha256": hashlib.sha256(pq_bytes).hexdigest()}
    assert desc["swftools"]["time_zone"] == "Asia/Tokyo"
    assert "time_zone" not in desc["swftools"]["metadata"]["jobs"]  # stated once
    schema = json.loads((pkg / "schemas" / "jobs.json").read_text())
    assert schema["primaryKey"] == ["job_id"]
    fields = {f["name"]: f for f in schema["fields"]}
    assert fields["queue"]["constraints"]["enum"] == ["Normal", "Short", "Middle", "Long"]
    assert fields["termcode"]["constraints"]["enum"] == [0, 1, 2, 3, 4]


def test_golden_descriptor(pkg):
    """The descriptor, schema and CSV text of a tiny fixed table are exactly the golden files.

    Sizes and hashes of compressed files depend on the zlib/pyarrow builds and are masked;
    the uncompressed CSV is compared instead. Regenerate with SWFTOOLS_UPDATE_GOLDEN=1.
    """
    desc = json.loads((pkg / "datapackage.json").read_text())
    for rel, record in desc["swftools"]["files"].items():
        if not rel.endswith(".json"):
            record.update(bytes="<masked>", sha256="<masked>")
    desc["resources"][0].update(bytes="<masked>", hash="<masked>")
    actual = {"datapackage.json": json.dumps(desc, indent=2, ensure_ascii=False) + "\n",
              "schemas/jobs.json": (pkg / "schemas" / "jobs.json").read_text(),
              "schemas/jobs-parquet.json": (pkg / "schemas" / "jobs-parquet.json").read_text(),
              "data/jobs.csv": csv_text(pkg)}
    if goldens.updating():
        for rel, text in actual.items():
            (GOLDEN / rel).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / rel).write_text(text)
    for rel, text in actual.items():
        assert text == (GOLDEN / rel).read_text(), rel


def test_queue_enum_is_observed_values_when_not_site_names(tmp_path):
    table = jt.from_columns({"job_id": [1, 2, 3], "queue": ["7", "10", None]})
    dp.write(table, tmp_path / "pkg", site="aaic")
    schema = json.loads((tmp_path / "pkg" / "schemas" / "jobs.json").read_text())
    queue = next(f for f in schema["fields"] if f["name"] == "queue")
    assert queue["constraints"]["enum"] == ["10", "7"]


def test_site_supplies_a_missing_time_zone(tmp_path):
    table = jt.from_columns({"job_id": [1], "queue": ["Short"]}, {"source_file": "x.swf"})
    dp.write(table, tmp_path / "pkg", site=load_site("aaic"))
    desc = dp.descriptor(tmp_path / "pkg")
    assert desc["swftools"]["time_zone"] == "Asia/Tokyo"
    assert desc["name"] == "x"
    assert dp.read(tmp_path / "pkg").schema.metadata[jt.METADATA_KEY] == \
        jt.with_metadata(table, {"source_file": "x.swf", "time_zone": "Asia/Tokyo"}) \
        .schema.metadata[jt.METADATA_KEY]


def test_caller_properties(tmp_path):
    props = {"name": "aaic-2019", "version": "1.0.0", "created": "2026-01-01T00:00:00Z",
             "keywords": ["gpu"]}
    dp.write(tiny_table(), tmp_path / "pkg", properties=props)
    desc = dp.descriptor(tmp_path / "pkg")
    assert list(desc)[:4] == ["$schema", "name", "title", "version"]
    assert {k: desc[k] for k in props} == props
    with pytest.raises(UsageError, match="'resources' is written by swftools"):
        dp.write(tiny_table(), tmp_path / "other", properties={"resources": []})


# --------------------------------------------------------------------------- frictionless

@pytest.mark.parametrize("make", [tiny_table, swf_table], ids=["aaic", "swf"])
def test_frictionless_python_api_says_valid(tmp_path, make):
    dp.write(make(), tmp_path / "pkg")
    report = frictionless_report(tmp_path / "pkg")
    assert report.valid, report.flatten(["type", "message"])
    assert [t.stats["rows"] for t in report.tasks] == [dp.read(tmp_path / "pkg").num_rows] * 2


def test_frictionless_cli_says_valid(pkg):
    result = subprocess.run([str(FRICTIONLESS_CLI), "validate", str(pkg / "datapackage.json"),
                             "--json"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["valid"] and [t["name"] for t in report["tasks"]] == ["jobs", "jobs-parquet"]


def test_frictionless_catches_a_constraint_break_in_both_resources(pkg):
    """Control: the validation above can fail; a tightened queue enum breaks CSV and Parquet."""
    for name in ("jobs.json", "jobs-parquet.json"):
        path = pkg / "schemas" / name
        path.write_text(path.read_text().replace('"Short",', ""))
    report = frictionless_report(pkg)
    assert not report.valid
    errors = report.flatten(["type", "fieldName"])
    assert errors.count(["constraint-error", "queue"]) == 2


# ----------------------------------------------------------------------------- determinism

def test_two_writes_are_byte_identical(tmp_path):
    dp.write(tiny_table(), tmp_path / "a")
    dp.write(tiny_table(), tmp_path / "b")
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    header = (tmp_path / "a" / "data" / "jobs.csv.gz").read_bytes()[:10]
    assert header[3] == 0 and header[4:8] == b"\0\0\0\0"  # gzip FLG: no name; MTIME 0


_WRITE_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
from tests.test_formats_datapackage import tiny_table
from swftools.formats import datapackage as dp
dp.write(tiny_table(), sys.argv[1])
"""


def test_byte_identical_across_hash_seeds(tmp_path):
    """A package written here and one written by a process with another hash seed (one
    subprocess, not two: this process is the other seed) are byte-identical."""
    seed = other_hash_seed()
    env = {**os.environ, "PYTHONHASHSEED": seed}
    subprocess.run([sys.executable, "-c", _WRITE_SCRIPT.format(root=str(ROOT)),
                    str(tmp_path / seed)], env=env, check=True, timeout=120)
    dp.write(tiny_table(), tmp_path / "here")
    assert tree_bytes(tmp_path / "here") == tree_bytes(tmp_path / seed)


# ---------------------------------------------------------------------------- safe output

def test_refuses_existing_target_without_force(pkg):
    before = tree_bytes(pkg)
    with pytest.raises(UsageError) as err:
        dp.write(tiny_table(), pkg)
    assert str(err.value) == f"{pkg}: already exists (use --force to overwrite)"
    assert tree_bytes(pkg) == before
    smaller = tiny_table().slice(0, 1)
    dp.write(smaller, pkg / "datapackage.json", force=True)
    assert jt.equal(dp.read(pkg), smaller, metadata=True)


def test_force_never_replaces_a_folder_that_is_not_a_package(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "thesis.tex").write_text("precious")
    with pytest.raises(UsageError) as err:
        dp.write(tiny_table(), folder, force=True)
    assert str(err.value) == (f"{folder}: already exists and is not a folder swftools wrote (no "
                              ".swftools-output file); not replacing it, even with --force: "
                              "choose another output or remove it yourself")
    assert (folder / "thesis.tex").read_text() == "precious"


def test_failure_midway_leaves_target_untouched(pkg, monkeypatch):
    before = tree_bytes(pkg)

    def broken(table, path):
        path.write_bytes(b"partial")
        raise RuntimeError("disk full")
    monkeypatch.setattr(dp.package, "write_parquet", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        dp.write(swf_table(), pkg, force=True)
    assert tree_bytes(pkg) == before
    assert sorted(p.name for p in pkg.parent.iterdir()) == ["pkg"]  # no temporary leftovers


# ----------------------------------------------------------------------------- bad input

def test_bad_json(pkg):
    path = pkg / "datapackage.json"
    path.write_text('{\n  "resources": [\n    oops\n  ]\n}\n')
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{path}:3: not valid JSON: Expecting value (column 5)"


def test_missing_descriptor(tmp_path):
    with pytest.raises(InputError) as err:
        dp.read(tmp_path)
    assert str(err.value) == (f"{tmp_path / 'datapackage.json'}: no such file (expected a data "
                              "package directory holding datapackage.json)")


def test_descriptor_breaking_the_profile(pkg):
    path = set_descriptor(pkg, lambda d: d.update(resources=[]))
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == (f"{path}: resources: [] should be non-empty (expected a "
                              "descriptor following schemas/datapackage.profile.json)")


def test_no_jobs_resource(pkg):
    path = set_descriptor(pkg, lambda d: [r.update(name=r["name"].replace("jobs", "runs"))
                                          for r in d["resources"]])
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{path}: no resource named 'jobs' (expected one of: runs, runs-parquet)"


@pytest.mark.parametrize("bad_path, problem", [
    ("/etc/passwd", "is an absolute path"),
    ("../outside/jobs.csv.gz", "climbs out of the package with '..'"),
    ("data/../../jobs.csv.gz", "climbs out of the package with '..'"),
    ("https://example.org/jobs.csv.gz", "is a URL (remote data is not supported)"),
])
def test_unsafe_paths(pkg, bad_path, problem):
    path = set_descriptor(pkg, lambda d: d["resources"][0].update(path=bad_path))
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if bad_path in text)
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == (f"{path}:{line}: resource 'jobs': path '{bad_path}' {problem} "
                              "(expected a relative path inside the package)")


def test_missing_resource_file(pkg):
    (pkg / "data" / "jobs.parquet").unlink()
    assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)  # absent twin: CSV is read
    (pkg / "data" / "jobs.csv.gz").unlink()
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{pkg / 'data' / 'jobs.csv.gz'}: resource 'jobs': file not found"


def test_csv_hash_mismatch(pkg):
    csv_path = csv_only(pkg)
    data = bytearray(csv_path.read_bytes())
    data[20] ^= 0xFF
    csv_path.write_bytes(bytes(data))
    declared = dp.descriptor(pkg)["resources"][0]["hash"].removeprefix("sha256:")
    assert str(read_error(pkg)) == (f"{csv_path}: sha256 checksum mismatch: the file has "
                                    f"{hashlib.sha256(data).hexdigest()}, datapackage.json "
                                    f"declares {declared} (changed or damaged file)")


def test_csv_size_mismatch(pkg):
    csv_path = csv_only(pkg)
    size = csv_path.stat().st_size
    with open(csv_path, "ab") as fh:
        fh.write(b"x")
    assert str(read_error(pkg)) == (f"{csv_path}: size {size + 1} bytes differs from the {size} "
                                    "bytes declared in datapackage.json")


def test_parquet_named_directly_must_match_its_checksum(pkg):
    with open(pkg / "data" / "jobs.parquet", "ab") as fh:
        fh.write(b"\0")
    with pytest.raises(InputError, match="sha256 checksum mismatch"):
        dp.read(pkg, resource="jobs-parquet")


# ------------------------------------------------------------------------ what users load

def test_pandas_reads_the_csv_with_the_right_types(pkg):
    import pandas as pd
    frame = pd.read_csv(pkg / "data" / "jobs.csv.gz", compression="gzip")
    assert list(frame.columns) == jt.column_names()
    for name in ("job_id", "nodes", "gpus", "termcode", "submit_time", "finish_time", "wait_s"):
        assert frame[name].dtype == "int64", name
    for name in ("user", "group", "queue"):
        assert pd.api.types.is_string_dtype(frame[name]), name
    assert frame["requested_walltime_s"].isna().tolist() == [False, True, False]
    typed = pd.read_csv(pkg / "data" / "jobs.csv.gz", compression="gzip",
                        dtype_backend="pyarrow")
    assert str(typed["requested_walltime_s"].dtype) == "int64[pyarrow]"
    assert typed["submit_time"].tolist() == [1500000000, 1500000060, 1500000120]


def test_duckdb_reads_the_parquet_with_the_right_types(pkg):
    import duckdb
    con = duckdb.connect()
    rows = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{pkg / 'data' / 'jobs.parquet'}')"
                       ).fetchall()
    types = {name: kind for name, kind, *_ in rows}
    expected = {"integer": "BIGINT", "number": "DOUBLE", "string": "VARCHAR"}
    assert types == {f["name"]: expected[f["type"]] for f in jt.table_schema()["fields"]}
    total = con.execute(f"SELECT sum(gpus), count(requested_walltime_s) FROM "
                        f"read_parquet('{pkg / 'data' / 'jobs.parquet'}')").fetchone()
    assert total == (21, 2)


# ---------------------------------------------------------------------------- add_resource

TELEMETRY_SCHEMA = {
    "fields": [
        {"name": "job_id", "type": "integer", "constraints": {"required": True}},
        {"name": "gpu_util_mean_pct", "type": "number",
         "constraints": {"minimum": 0, "maximum": 100}},
        {"name": "node_shared", "type": "boolean"},
    ],
    "missingValues": [""],
    "primaryKey": ["job_id"],
}
JOBS_FK = [{"fields": ["job_id"], "reference": {"resource": "jobs", "fields": ["job_id"]}}]


def telemetry(job_ids, meta=None):
    n = len(job_ids)
    table = pa.table({"job_id": pa.array(job_ids, pa.int64()),
                      "gpu_util_mean_pct": pa.array([50.5, None, 99.0][:n], pa.float64()),
                      "node_shared": pa.array([True, None, False][:n], pa.bool_())})
    return jt.with_metadata(table, meta or {"interval_s": 60})


def test_add_resource_round_trip_and_validity(pkg):
    jobs_before = {k: v for k, v in tree_bytes(pkg).items() if k.startswith(("data/jobs", "schemas/jobs"))}
    table = telemetry([101, 103])
    assert dp.add_resource(pkg, "job_telemetry", table, TELEMETRY_SCHEMA, foreign_keys=JOBS_FK) == []
    back = dp.read(pkg, resource="job_telemetry")
    assert back.to_pydict() == table.to_pydict() and jt.get_metadata(back) == {"interval_s": 60}
    assert [f.type for f in back.schema] == [pa.int64(), pa.float64(), pa.bool_()]
    assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)
    after = tree_bytes(pkg)
    assert {k: after[k] for k in jobs_before} == jobs_before
    desc = dp.descriptor(pkg)
    assert [r["name"] for r in desc["resources"]] == \
        ["jobs", "jobs-parquet", "job_telemetry", "job_telemetry-parquet"]
    schema = json.loads((pkg / "schemas" / "job_telemetry.json").read_text())
    assert schema["foreignKeys"] == JOBS_FK
    assert "data/job_telemetry.parquet" in desc["swftools"]["files"]
    report = frictionless_report(pkg)
    assert report.valid, report.flatten(["type", "message"])
    (pkg / "data" / "job_telemetry.parquet").unlink()  # the CSV reads back the same
    assert dp.read(pkg, resource="job_telemetry").to_pydict() == table.to_pydict()


def test_add_resource_rejects_orphans(pkg):
    before = tree_bytes(pkg)
    with pytest.raises(InputError) as err:
        dp.add_resource(pkg, "job_telemetry", telemetry([101, 999]), TELEMETRY_SCHEMA,
                        foreign_keys=JOBS_FK)
    assert str(err.value) == (f"{pkg}: job_id: resource 'job_telemetry': 1 row whose job_id "
                              "is not in resource 'jobs' (first: 999) (expected a job_id of "
                              "resource 'jobs')")
    assert tree_bytes(pkg) == before


def test_add_resource_existing_needs_force(pkg):
    dp.add_resource(pkg, "job_telemetry", telemetry([101]), TELEMETRY_SCHEMA, foreign_keys=JOBS_FK)
    with pytest.raises(UsageError) as err:
        dp.add_resource(pkg, "job_telemetry", telemetry([102]), TELEMETRY_SCHEMA)
    assert str(err.value) == (f"{pkg}: resource 'job_telemetry' already exists "
                              "(use --force to replace it)")
    dp.add_resource(pkg, "job_telemetry", telemetry([102, 103]), TELEMETRY_SCHEMA,
                    foreign_keys=JOBS_FK, force=True)
    assert dp.read(pkg, resource="job_telemetry")["job_id"].to_pylist() == [102, 103]
    assert [r["name"] for r in dp.descriptor(pkg)["resources"]].count("job_telemetry") == 1


def test_add_resource_failure_leaves_package_untouched(pkg, monkeypatch):
    before = tree_bytes(pkg)
    monkeypatch.setattr(dp.package, "write_parquet", lambda table, path: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        dp.add_resource(pkg, "job_telemetry", telemetry([101]), TELEMETRY_SCHEMA)
    assert tree_bytes(pkg) == before
    assert sorted(p.name for p in pkg.parent.iterdir()) == ["pkg"]


def test_add_resource_checks_columns_and_names(pkg):
    with pytest.raises(UsageError, match="table columns .* differ from the schema fields"):
        dp.add_resource(pkg, "job_telemetry", telemetry([101]).drop_columns(["node_shared"]),
                        TELEMETRY_SCHEMA)
    with pytest.raises(UsageError, match="resource name 'jobs-parquet'"):
        dp.add_resource(pkg, "jobs-parquet", telemetry([101]), TELEMETRY_SCHEMA)


# ------------------------------------------------------------------------- other readers' packages

def test_reads_a_package_without_the_swftools_extension(pkg):
    """A hand-made package (no checksums, no extension, CSV only) reads without metadata."""
    def strip(desc):
        del desc["swftools"]
        desc["resources"] = [{k: v for k, v in desc["resources"][0].items()
                              if k not in ("hash", "bytes")}]
    set_descriptor(pkg, strip)
    back = dp.read(pkg)
    assert jt.get_metadata(back) == {} and jt.equal(back, tiny_table())


def test_read_parquet_resource_by_name_and_with_progress(pkg, capsys):
    assert jt.equal(dp.read(pkg, resource="jobs-parquet"), tiny_table(), metadata=True)
    assert jt.equal(dp.read(pkg, progress=True), tiny_table(), metadata=True)
    assert capsys.readouterr().out == ""  # progress goes to stderr only
