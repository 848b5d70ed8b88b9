"""CSV and Parquet files of a package: diagnostics for damaged or hand-edited data files.

Each test edits the CSV of a written package (``replace_csv`` keeps the declared hash right and
drops the Parquet twin, so the CSV is what ``read`` parses) and asserts the exact message.
"""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.formats import datapackage as dp
from swftools.formats.datapackage.files import arrow_schema_for, read_csv_gz, write_csv_gz
from swftools.errors import InputError, UsageError

from .test_formats_datapackage import csv_text, pkg, replace_csv, set_descriptor  # noqa: F401 (fixture)


def test_csv_missing_a_column(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    cut = [",".join(cell for i, cell in enumerate(line.rstrip("\n").split(",")) if i != 4) + "\n"
           for line in lines]
    csv_path = replace_csv(pkg, "".join(cut))
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == (f"{csv_path}:1: column 'nodes' missing from the header "
                              "(expected the 23 columns of the Table Schema)")


def test_csv_unknown_column(pkg):
    text = csv_text(pkg).replace('"gpus",', '"gpu_count",', 1)
    csv_path = replace_csv(pkg, text)
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == (f"{csv_path}:1: column 'gpus' missing from the header "
                              "(expected the 23 columns of the Table Schema)")


def test_csv_wrong_type(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    lines[2] = lines[2].replace(',"Short",1,', ',"Short",x7,')
    csv_path = replace_csv(pkg, "".join(lines))
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{csv_path}:3: nodes: 'x7' is not an integer"
    assert (err.value.line, err.value.field, err.value.value) == (3, "nodes", "x7")


def test_csv_wrong_number_type(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    assert lines[1].endswith(",1800" + "," * 9 + "\n")
    lines[1] = lines[1].removesuffix("," * 9 + "\n") + ",1.5.2" + "," * 8 + "\n"
    csv_path = replace_csv(pkg, "".join(lines))
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{csv_path}:2: avg_cpu_time_s: '1.5.2' is not a number"


def test_csv_missing_required_job_id(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    lines[2] = lines[2].removeprefix("102")
    csv_path = replace_csv(pkg, "".join(lines))
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{csv_path}:3: job_id: required value is missing (expected an integer)"


def test_csv_wrong_field_count(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    lines[3] = lines[3].rstrip("\n") + ",9\n"
    csv_path = replace_csv(pkg, "".join(lines))
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{csv_path}:4: 24 fields, expected 23"


def test_csv_truncated_gzip(pkg):
    (pkg / "data" / "jobs.parquet").unlink()
    csv_path = pkg / "data" / "jobs.csv.gz"
    csv_path.write_bytes(csv_path.read_bytes()[:-12])

    def forget_checksums(desc):
        for key in ("hash", "bytes"):
            del desc["resources"][0][key]
        del desc["swftools"]["files"]["data/jobs.csv.gz"]
    set_descriptor(pkg, forget_checksums)
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{csv_path}: truncated gzip file (the compressed stream ends early)"


def test_csv_binary_garbage(pkg):
    csv_path = replace_csv(pkg, "")
    csv_path.write_bytes(b"\x00\x01garbage\xff" * 10)
    set_descriptor(pkg, lambda d: d["resources"][0].update(
        hash="sha256:" + hashlib.sha256(csv_path.read_bytes()).hexdigest(), bytes=100))
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{csv_path}: not a valid gzip file (Not a gzipped file (b'\\x00\\x01'))"


def test_csv_empty_file(pkg):
    csv_path = replace_csv(pkg, "")
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{csv_path}: empty file (expected a header row)"


def test_csv_not_utf8(pkg):
    raw = csv_text(pkg).encode().replace(b"bob", b"b\xffb", 1)
    csv_path = replace_csv(pkg, raw)
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{csv_path}:3: not UTF-8 text (byte 0xff at column 7)"


def test_csv_duplicate_column(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    lines = [line.rstrip("\n") + (',"queue"\n' if i == 0 else ",x\n") for i, line in enumerate(lines)]
    csv_path = replace_csv(pkg, "".join(lines))
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{csv_path}:1: column 'queue' appears twice in the header"


# ------------------------------------------------------- generic tables (add_resource's path)

GENERIC_SCHEMA = {"fields": [
    {"name": "key", "type": "integer", "constraints": {"required": True}},
    {"name": "ratio", "type": "number"},
    {"name": "label", "type": "string"},
    {"name": "flag", "type": "boolean"},
]}


@given(st.lists(st.tuples(st.integers(-2**63, 2**63 - 1),
                          st.none() | st.floats(allow_nan=False),
                          st.none() | st.text(st.characters(blacklist_categories=("Cs",)),
                                              max_size=6),
                          st.none() | st.booleans()), max_size=20))
def test_generic_csv_round_trip(tmp_path_factory, rows):
    schema = arrow_schema_for(GENERIC_SCHEMA)
    table = pa.Table.from_pylist([dict(zip(schema.names, row)) for row in rows], schema=schema)
    path = tmp_path_factory.mktemp("csv") / "t.csv.gz"
    write_csv_gz(table, path)
    assert read_csv_gz(path, GENERIC_SCHEMA, compressed=True).equals(table)


def test_unsupported_field_type():
    with pytest.raises(UsageError) as err:
        arrow_schema_for({"fields": [{"name": "when", "type": "datetime"}]})
    assert str(err.value) == ("field 'when': type 'datetime' is not supported "
                              "(choose from integer, number, string, boolean)")


def test_descriptor_json_is_stable_text(pkg):
    text = (pkg / "datapackage.json").read_text()
    assert text.endswith("}\n") and "\n  \"resources\": [\n" in text
    assert json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n" == text
