"""Writing a data package (``datapackage/package.py``): what the descriptor states (names,
sources, property order, time zone, losses, queue enum), ``add_resource`` (titles, schemas,
replaced files, hard links) and its foreign keys; each rule worked out by hand from the
docstrings and the Table Schema specification."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.formats import datapackage as dp

from .test_formats_datapackage import (JOBS_FK, TELEMETRY_SCHEMA, set_descriptor, telemetry,
                                       tiny_table, tree_bytes)
from .test_formats_datapackage import pkg  # noqa: F401 (fixture)


# ----------------------------------------------------------------------- descriptor names

@pytest.mark.parametrize("source_file, name", [
    ("trace.log", "trace"),
    ("TRACE.TXT", "trace"),
    ("aaic.nqsii", "aaic"),
    ("x.csv.gz", "x"),
    ("x.log.gz", "x"),
    ("My Trace!.swf", "my-trace"),
    ("_x_.swf", "x"),
    ("  spaced  .swf", "spaced"),
    ("!!!.swf", "jobs"),
])
def test_package_name_is_the_source_file_slug(tmp_path, source_file, name):
    """Lower case, the known suffixes dropped, every run of other characters one '-', and no
    '-', '.' or '_' at either end; nothing left gives 'jobs'."""
    table = jt.from_columns({"job_id": [1]}, {"source_file": source_file})
    dp.write(table, tmp_path / "pkg")
    desc = dp.descriptor(tmp_path / "pkg")
    assert desc["name"] == name
    assert desc["title"] == f"Job trace converted from {source_file}"


# --------------------------------------------------------------------------- add_resource

def test_add_resource_leaves_the_callers_schema_alone_and_drops_comment(pkg):
    schema = json.loads(json.dumps(TELEMETRY_SCHEMA))
    schema["$comment"] = "written by hand"
    schema["foreignKeys"] = []
    before = json.loads(json.dumps(schema))
    dp.add_resource(pkg, "job_telemetry", telemetry([101]), schema, foreign_keys=JOBS_FK)
    assert schema == before
    written = json.loads((pkg / "schemas" / "job_telemetry.json").read_text())
    assert "$comment" not in written and written["foreignKeys"] == JOBS_FK


def test_add_resource_default_title_description_and_parquet_metadata(pkg):
    dp.add_resource(pkg, "job_telemetry", telemetry([101], {"interval_s": 30}), TELEMETRY_SCHEMA)
    res = {r["name"]: r for r in dp.descriptor(pkg)["resources"]}
    assert (res["job_telemetry"]["title"], res["job_telemetry"]["description"]) == \
        ("Job telemetry", "Table job_telemetry.")
    assert res["job_telemetry-parquet"]["title"] == "Job telemetry (Parquet)"
    # the Parquet file carries the table's metadata, as the jobs Parquet file does
    for name, meta in (("job_telemetry", {"interval_s": 30}), ("jobs", None)):
        schema = pq.read_schema(pkg / "data" / f"{name}.parquet")
        assert jt.METADATA_KEY in schema.metadata
        if meta is not None:
            assert json.loads(schema.metadata[jt.METADATA_KEY]) == meta


def test_add_resource_cast_error_is_named(pkg):
    table = pa.table({"job_id": ["x"], "gpu_util_mean_pct": [1.0], "node_shared": [True]})
    with pytest.raises(UsageError) as err:
        dp.add_resource(pkg, "job_telemetry", table, TELEMETRY_SCHEMA)
    assert str(err.value).startswith("resource 'job_telemetry': a column does not fit its "
                                     "schema type: ")


def test_add_resource_loss_report_names_its_csv(pkg):
    schema = {"fields": [{"name": "job_id", "type": "integer"}, {"name": "note", "type": "string"}]}
    table = pa.table({"job_id": [101, 102, 103], "note": ["", "ok", ""]})
    assert dp.add_resource(pkg, "notes", table, schema) == [
        "note: 2 empty strings are read as missing from data/notes.csv.gz by frictionless and "
        "pandas (swftools and the Parquet resource keep them)"]


def test_add_resource_to_a_package_without_the_extension(pkg):
    set_descriptor(pkg, lambda desc: desc.pop("swftools"))
    dp.add_resource(pkg, "job_telemetry", telemetry([101]), TELEMETRY_SCHEMA)
    ext = dp.descriptor(pkg)["swftools"]
    assert ext["extension_version"] == 1
    assert ext["metadata"] == {"job_telemetry": {"interval_s": 60}}
    assert sorted(ext["files"]) == ["data/job_telemetry.csv.gz", "data/job_telemetry.parquet",
                                    "schemas/job_telemetry-parquet.json",
                                    "schemas/job_telemetry.json"]
    assert dp.read(pkg, resource="job_telemetry").to_pydict() == telemetry([101]).to_pydict()


def test_replacing_a_resource_drops_its_old_files_whatever_their_names(pkg):
    """A resource first written under other file names (another tool, an older version): after
    ``force`` only the new files are in the tree and in the record, the jobs files stay."""
    dp.add_resource(pkg, "job_telemetry", telemetry([101]), TELEMETRY_SCHEMA)
    renames = {"data/job_telemetry.csv.gz": "data/legacy.csv.gz",
               "data/job_telemetry.parquet": "data/legacy.parquet",
               "schemas/job_telemetry.json": "schemas/legacy.json",
               "schemas/job_telemetry-parquet.json": "schemas/legacy-parquet.json"}
    for old, new in renames.items():
        (pkg / old).rename(pkg / new)

    def change(desc):
        for res in desc["resources"]:
            for key in ("path", "schema"):
                res[key] = renames.get(res[key], res[key])
        files = desc["swftools"]["files"]
        desc["swftools"]["files"] = {renames.get(k, k): v for k, v in files.items()}
    set_descriptor(pkg, change)
    jobs_record = {k: v for k, v in dp.descriptor(pkg)["swftools"]["files"].items()
                   if "jobs" in k}
    dp.add_resource(pkg, "job_telemetry", telemetry([102]), TELEMETRY_SCHEMA, force=True)
    files = sorted(tree_bytes(pkg))
    assert not [f for f in files if "legacy" in f]
    record = dp.descriptor(pkg)["swftools"]["files"]
    assert sorted(record) == [f for f in files if f not in ("datapackage.json", ".swftools-output")]
    assert {k: record[k] for k in jobs_record} == jobs_record


def test_add_resource_keeps_nested_files_of_the_package(pkg):
    extra = pkg / "docs" / "figures" / "a.txt"
    extra.parent.mkdir(parents=True)
    extra.write_text("kept\n")
    dp.add_resource(pkg, "job_telemetry", telemetry([101]), TELEMETRY_SCHEMA)
    assert extra.read_text() == "kept\n"


def test_add_resource_copies_when_hard_links_fail(pkg, monkeypatch):
    before = tree_bytes(pkg)

    def no_link(src, dst):
        raise OSError(18, "Invalid cross-device link")
    monkeypatch.setattr(os, "link", no_link)
    dp.add_resource(pkg, "job_telemetry", telemetry([101]), TELEMETRY_SCHEMA)
    after = tree_bytes(pkg)
    assert {k: after[k] for k in before if k != "datapackage.json"} == \
        {k: v for k, v in before.items() if k != "datapackage.json"}
    assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)


# --------------------------------------------------------------------------- foreign keys

def node_table(ids):
    return pa.table({"node": pa.array(ids, pa.int64())})


NODE_SCHEMA = {"fields": [{"name": "node", "type": "integer"}]}
USE_SCHEMA = {"fields": [{"name": "job_id", "type": "integer"}, {"name": "node", "type": "integer"}]}


def test_foreign_key_fields_as_strings(pkg):
    fk = [{"fields": "job_id", "reference": {"resource": "jobs", "fields": "job_id"}}]
    dp.add_resource(pkg, "job_telemetry", telemetry([101]), TELEMETRY_SCHEMA, foreign_keys=fk)
    with pytest.raises(InputError) as err:
        dp.add_resource(pkg, "job_telemetry", telemetry([999]), TELEMETRY_SCHEMA,
                        foreign_keys=fk, force=True)
    assert (err.value.field, err.value.value, err.value.expected) == \
        ("job_id", "999", "a job_id of resource 'jobs'")


def test_foreign_key_to_another_added_resource(pkg):
    dp.add_resource(pkg, "nodes", node_table([1, 2]), NODE_SCHEMA)
    fk = [{"fields": ["node"], "reference": {"resource": "nodes", "fields": ["node"]}}]
    table = pa.table({"job_id": [101, 102], "node": [2, 1]})
    dp.add_resource(pkg, "uses", table, USE_SCHEMA, foreign_keys=fk)
    with pytest.raises(InputError) as err:
        dp.add_resource(pkg, "uses", pa.table({"job_id": [101], "node": [3]}), USE_SCHEMA,
                        foreign_keys=fk, force=True)
    assert str(err.value) == (f"{pkg}: node: resource 'uses': 1 row whose node is not in "
                              "resource 'nodes' (first: 3) (expected a node of resource 'nodes')")


def test_self_referencing_foreign_key(pkg):
    """``resource: ""`` (Table Schema: this resource) is checked against the new table itself."""
    schema = {"fields": [{"name": "job_id", "type": "integer"},
                         {"name": "parent", "type": "integer"}]}
    fk = [{"fields": "parent", "reference": {"resource": "", "fields": "job_id"}}]
    table = pa.table({"job_id": [1, 2, 3], "parent": [None, 1, 2]})
    dp.add_resource(pkg, "steps", table, schema, foreign_keys=fk)
    with pytest.raises(InputError, match=r"1 row whose parent is not in resource 'steps' "
                                         r"\(first: 7\)"):
        dp.add_resource(pkg, "steps", pa.table({"job_id": [1], "parent": [7]}), schema,
                        foreign_keys=fk, force=True)


@pytest.mark.parametrize("fk, message", [
    ({"fields": ["job_id", "node"], "reference": {"resource": "jobs", "fields": ["job_id"]}},
     "only single-field foreign keys are supported"),
    ({"fields": ["job_id"], "reference": {"resource": "jobs", "fields": ["job_id", "x"]}},
     "only single-field foreign keys are supported"),
    ({"fields": ["job_id"]}, "only single-field foreign keys are supported"),
    ({"fields": ["job_id"], "reference": {"resource": "jobs"}},
     "only single-field foreign keys are supported"),
    ({"fields": ["job_id"], "reference": {"resource": "racks", "fields": ["rack"]}},
     "foreign key refers to missing resource 'racks'"),
    ({"fields": ["job_id"], "reference": {"resource": "jobs", "fields": ["rack"]}},
     "resource 'jobs' has no field 'rack'"),
])
def test_foreign_key_refusals(pkg, fk, message):
    before = tree_bytes(pkg)
    with pytest.raises(UsageError) as err:
        dp.add_resource(pkg, "uses", pa.table({"job_id": [101], "node": [1]}), USE_SCHEMA,
                        foreign_keys=[fk])
    assert str(err.value) == f"resource 'uses': {message}"
    assert tree_bytes(pkg) == before


# --------------------------------------------------------------------- what write states

JOBS_TEXT = ("One row per job (the swftools job table). Times are UTC epoch seconds, durations "
             "seconds; an empty cell means unknown (SWF -1).")


def written_descriptor(tmp_path: Path, table: pa.Table, **kwargs) -> dict:
    dp.write(table, tmp_path / "pkg", **kwargs)
    return json.loads((tmp_path / "pkg" / "datapackage.json").read_text(encoding="utf-8"))


def test_defaults_without_a_source_file_or_time_zone(tmp_path):
    desc = written_descriptor(tmp_path, jt.from_columns({"job_id": [1]}))
    assert (desc["name"], desc["title"]) == ("jobs", "Job trace")
    assert "sources" not in desc
    assert desc["resources"][0]["description"] == JOBS_TEXT
    assert desc["swftools"] == {"extension_version": 1, "metadata": {"jobs": {}},
                                "files": desc["swftools"]["files"]}
    assert list(desc) == ["$schema", "name", "title", "licenses", "resources", "swftools"]


@pytest.mark.parametrize("source_format, title", [
    ("swf", "t.swf (Standard Workload Format)"), ("nqsii", "t.swf (NEC NQSII job log)"),
    ("package", "t.swf (Frictionless data package)"), ("slurm", "t.swf"), (None, "t.swf")])
def test_sources_name_the_source_format(tmp_path, source_format, title):
    meta = {"source_file": "t.swf"} | ({"source_format": source_format} if source_format else {})
    desc = written_descriptor(tmp_path, jt.from_columns({"job_id": [1]}, meta))
    assert desc["sources"] == [{"title": title}]


def test_time_zone_is_stated_once_and_described(tmp_path):
    desc = written_descriptor(tmp_path, jt.from_columns({"job_id": [1]}, {"time_zone": "UTC"}))
    assert desc["swftools"]["time_zone"] == "UTC"
    assert desc["swftools"]["metadata"] == {"jobs": {}}
    assert desc["resources"][0]["description"] == (
        JOBS_TEXT + " The site's local time zone is stated in swftools.time_zone.")


def test_caller_properties_order_and_sorted_extras(tmp_path):
    props = {"zeta": 1, "keywords": ["gpu"], "alpha": {"b": 1, "a": 2}, "id": "x",
             "sources": [{"title": "mine"}], "name": "mine"}
    desc = written_descriptor(tmp_path, jt.from_columns({"job_id": [1]}), properties=props)
    assert list(desc) == ["$schema", "name", "id", "title", "keywords", "licenses", "sources",
                          "alpha", "zeta", "resources", "swftools"]
    assert list(desc["alpha"]) == ["a", "b"]  # nested keys sorted too
    assert desc["sources"] == [{"title": "mine"}]


@pytest.mark.parametrize("given", [["$schema"], ["swftools", "resources"]])
def test_properties_swftools_writes_cannot_be_given(tmp_path, given):
    with pytest.raises(UsageError) as err:
        dp.write(tiny_table(), tmp_path / "pkg", properties={k: 1 for k in given})
    assert str(err.value) == (f"descriptor property {sorted(given)[0]!r} is written by "
                              "swftools; it cannot be given")
    assert not (tmp_path / "pkg").exists()


def test_descriptor_is_utf8_with_two_space_indent_and_a_final_newline(tmp_path):
    dp.write(tiny_table(), tmp_path / "pkg", properties={"title": "Traces d'été"})
    raw = (tmp_path / "pkg" / "datapackage.json").read_bytes()
    assert "\"title\": \"Traces d'été\"".encode() in raw
    assert raw.startswith(b'{\n  "$schema": ') and raw.endswith(b"}\n")
    for rel in ("schemas/jobs.json", "schemas/jobs-parquet.json"):
        text = (tmp_path / "pkg" / rel).read_bytes()
        assert text.startswith(b'{\n  "$schema": ') and text.endswith(b"}\n")


def test_same_metadata_in_any_key_order_gives_the_same_bytes(tmp_path):
    meta = {"source_file": "t.swf", "source_format": "swf", "converter_version": "1"}
    one = jt.from_columns({"job_id": [1]}, meta)
    two = jt.from_columns({"job_id": [1]}, dict(reversed(list(meta.items()))))
    dp.write(one, tmp_path / "a", properties={"b": 1, "a": {"y": 1, "x": 2}})
    dp.write(two, tmp_path / "b", properties={"a": {"x": 2, "y": 1}, "b": 1})
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")


@pytest.mark.parametrize("values, losses", [
    (["a", "b"], []),
    (["", "b"], ["user: 1 empty string is read as missing from data/jobs.csv.gz by frictionless "
                 "and pandas (swftools and the Parquet resource keep them)"]),
    (["", ""], ["user: 2 empty strings are read as missing from data/jobs.csv.gz by "
                "frictionless and pandas (swftools and the Parquet resource keep them)"]),
])
def test_loss_report(tmp_path, values, losses):
    table = jt.from_columns({"job_id": [1, 2], "user": values})
    assert dp.write(table, tmp_path / "pkg") == losses
    assert dp.read(tmp_path / "pkg")["user"].to_pylist() == values


@pytest.mark.parametrize("missing, twin", [
    (None, ["", "nan"]), (["NA"], ["NA", "nan"]), (["", "nan"], ["", "nan"])])
def test_parquet_schema_declares_nan_missing(pkg, missing, twin):
    schema = json.loads(json.dumps(TELEMETRY_SCHEMA))
    schema.pop("missingValues")
    if missing is not None:
        schema["missingValues"] = missing
    before = json.loads(json.dumps(schema))
    dp.add_resource(pkg, "job_telemetry", telemetry([101]), schema)
    assert schema == before
    csv_schema = json.loads((pkg / "schemas" / "job_telemetry.json").read_text())
    parquet_schema = json.loads((pkg / "schemas" / "job_telemetry-parquet.json").read_text())
    assert csv_schema.get("missingValues") == missing
    assert parquet_schema["missingValues"] == twin
    assert {k: v for k, v in parquet_schema.items() if k != "missingValues"} == \
        {k: v for k, v in csv_schema.items() if k != "missingValues"}


def queue_field(tmp_path: Path, queues, site=None) -> dict:
    dp.write(jt.from_columns({"job_id": list(range(1, len(queues) + 1)), "queue": queues},
                             {"time_zone": "UTC"}), tmp_path / "pkg", site=site)
    schema = json.loads((tmp_path / "pkg" / "schemas" / "jobs.json").read_text())
    assert list(schema)[0] == "$schema" and "$comment" not in schema
    return next(f for f in schema["fields"] if f["name"] == "queue")


def test_queue_enum_is_the_sites_in_queue_number_order(tmp_path):
    """AAIC's queues are numbered Normal, Short, Middle, Long; observing two gives all four."""
    field = queue_field(tmp_path, ["Long", None, "Short"], site="aaic")
    assert field["constraints"]["enum"] == ["Normal", "Short", "Middle", "Long"]


def test_no_queue_values_no_enum(tmp_path):
    field = queue_field(tmp_path, [None, None])
    assert "enum" not in field.get("constraints", {})


def test_package_dir_of_a_descriptor_path(tmp_path):
    assert dp.package_dir(tmp_path / "x" / "datapackage.json") == tmp_path / "x"
    assert dp.package_dir(tmp_path / "x") == tmp_path / "x"
    assert dp.package_dir(tmp_path / "x" / "other.json") == tmp_path / "x" / "other.json"


def test_queue_enum_when_every_site_queue_is_observed(tmp_path):
    field = queue_field(tmp_path, ["Short", "Long", "Normal", "Middle"], site="aaic")
    assert field["constraints"]["enum"] == ["Normal", "Short", "Middle", "Long"]


def test_descriptor_is_written_as_utf8_under_any_locale(tmp_path):
    from .conftest import text_under_c_locale

    code = ("import sys; from swftools import table as jt; "
            "from swftools.formats import datapackage as dp; "
            "dp.write(jt.from_columns({'job_id': [1]}), sys.argv[1], "
            "properties={'title': 'Traces d\\u2019\\u00e9t\\u00e9'}); "
            "print(open(sys.argv[1] + '/datapackage.json', 'rb').read().hex())")
    raw = text_under_c_locale(code, str(tmp_path / "pkg"))
    assert '"title": "Traces d’été"' in raw
