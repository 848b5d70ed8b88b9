"""CSV and Parquet files of a package: diagnostics for damaged or hand-edited data files.

Each test edits the CSV of a written package (``replace_csv`` keeps the declared hash right and
drops the Parquet twin, so the CSV is what ``read`` parses) and asserts the exact message.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.formats import datapackage as dp
from swftools.formats.datapackage.files import read_csv_gz, write_csv_gz
from swftools.formats.inputs import MisnamedGzipWarning
from swftools.table import arrow_schema_of, table_schema
from swftools.errors import InputError, UsageError

from .strategies import sparse_job_tables

from .test_formats_datapackage import (  # noqa: F401 (pkg: a fixture)
    csv_only, csv_text, pkg, read_error, replace_csv, set_descriptor)


def csv_error(pkg, text: str) -> tuple[Path, InputError]:
    """Make ``text`` the package's CSV (see ``replace_csv``): its path and the error of ``read``."""
    csv_path = replace_csv(pkg, text)
    return csv_path, read_error(pkg)


N_COLUMNS = len(table_schema()["fields"])


def _cells(line: str) -> list[str]:
    return line.rstrip("\n").split(",")


def test_csv_missing_a_column(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    at = _cells(lines[0]).index('"nodes"')
    cut = [",".join(cell for i, cell in enumerate(_cells(line)) if i != at) + "\n"
           for line in lines]
    csv_path, err = csv_error(pkg, "".join(cut))
    assert str(err) == (f"{csv_path}:1: column 'nodes' missing from the header "
                        f"(expected the {N_COLUMNS} columns of the Table Schema)")


def test_csv_unknown_column(pkg):
    text = csv_text(pkg).replace('"gpus",', '"gpu_count",', 1)
    csv_path, err = csv_error(pkg, text)
    assert str(err) == (f"{csv_path}:1: column 'gpus' missing from the header "
                        f"(expected the {N_COLUMNS} columns of the Table Schema)")


def test_csv_wrong_type(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    lines[2] = lines[2].replace(',"Short",1,', ',"Short",x7,')
    csv_path, err = csv_error(pkg, "".join(lines))
    assert str(err) == f"{csv_path}:3: nodes: 'x7' is not an integer"
    assert (err.line, err.field, err.value) == (3, "nodes", "x7")


def test_an_integer_past_64_bits_is_out_of_range(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    lines[2] = lines[2].replace(',"Short",1,', ',"Short",9223372036854775808,')
    csv_path, err = csv_error(pkg, "".join(lines))
    assert (err.path, err.message, err.line, err.field, err.value, err.expected) == (
        str(csv_path), "'9223372036854775808' is out of range", 3, "nodes",
        "9223372036854775808", "an integer that fits in 64 bits")


def test_csv_wrong_number_type(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    at = _cells(lines[0]).index('"avg_cpu_time_s"')
    cells = _cells(lines[1])
    assert cells[at] == ""
    cells[at] = "1.5.2"
    lines[1] = ",".join(cells) + "\n"
    csv_path, err = csv_error(pkg, "".join(lines))
    assert str(err) == f"{csv_path}:2: avg_cpu_time_s: '1.5.2' is not a number"


def test_csv_missing_required_job_id(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    lines[2] = lines[2].removeprefix("102")
    csv_path, err = csv_error(pkg, "".join(lines))
    assert str(err) == f"{csv_path}:3: job_id: required value is missing (expected an integer)"


def test_csv_wrong_field_count(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    lines[3] = lines[3].rstrip("\n") + ",9\n"
    csv_path, err = csv_error(pkg, "".join(lines))
    assert str(err) == f"{csv_path}:4: {N_COLUMNS + 1} fields, expected {N_COLUMNS}"


def test_csv_truncated_gzip(pkg):
    csv_path = csv_only(pkg)
    csv_path.write_bytes(csv_path.read_bytes()[:-12])

    def forget_checksums(desc):
        for key in ("hash", "bytes"):
            del desc["resources"][0][key]
        del desc["swftools"]["files"]["data/jobs.csv.gz"]
    set_descriptor(pkg, forget_checksums)
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    # The shared input layer (swftools.formats.inputs) names the file and how far it got.
    assert str(err.value).startswith(f"{csv_path}: truncated gzip file: the compressed stream "
                                     "ends early, after ")
    assert str(err.value).endswith(" decompressed (expected a complete gzip file)")


def test_csv_binary_garbage(pkg):
    csv_path = replace_csv(pkg, "")
    csv_path.write_bytes(b"\x00\x01garbage\xff" * 10)
    set_descriptor(pkg, lambda d: d["resources"][0].update(
        hash="sha256:" + hashlib.sha256(csv_path.read_bytes()).hexdigest(), bytes=100))
    # Gzip is decided by content: a .gz name over plain bytes is read as text, with a warning.
    with pytest.warns(MisnamedGzipWarning, match="jobs.csv.gz"), pytest.raises(InputError) as err:
        dp.read(pkg)
    assert str(err.value) == f"{csv_path}:1: not UTF-8 text (byte 0xff at column 10)"


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
    column = raw.splitlines()[2].index(b"\xff") + 1
    assert str(err.value) == f"{csv_path}:3: not UTF-8 text (byte 0xff at column {column})"


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
    schema = arrow_schema_of(GENERIC_SCHEMA)
    table = pa.Table.from_pylist([dict(zip(schema.names, row)) for row in rows], schema=schema)
    path = tmp_path_factory.mktemp("csv") / "t.csv.gz"
    write_csv_gz(table, path)
    assert read_csv_gz(path, GENERIC_SCHEMA, compressed=True).equals(table)


def test_unsupported_field_type():
    with pytest.raises(UsageError) as err:
        arrow_schema_of({"fields": [{"name": "when", "type": "datetime"}]})
    assert str(err.value) == ("field 'when': type 'datetime' is not supported "
                              "(choose from integer, number, string, boolean)")


def test_descriptor_json_is_stable_text(pkg):
    text = (pkg / "datapackage.json").read_text()
    assert text.endswith("}\n") and "\n  \"resources\": [\n" in text
    assert json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n" == text


# --- issue 13 sweep: a bad token in any integer cell is refused, located, nothing written -----

_INTEGER_COLUMNS = [f["name"] for f in table_schema()["fields"] if f["type"] == "integer"]


@given(st.sampled_from(_INTEGER_COLUMNS), st.integers(0, 2), st.data())
def test_a_bad_token_in_any_integer_cell_names_line_and_field(column, row, data):
    import tempfile

    from swftools import formats

    from .strategies import bad_integer_tokens
    from .test_formats_datapackage import tiny_table

    # an empty cell means unknown, except in the primary key
    token = data.draw(bad_integer_tokens | (st.just("") if column == "job_id" else st.nothing()))
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / "pkg"
        dp.write(tiny_table(), pkg)
        lines = csv_text(pkg).splitlines(keepends=True)
        header = [name.strip('"') for name in lines[0].rstrip("\n").split(",")]
        cells = lines[1 + row].rstrip("\n").split(",")
        cells[header.index(column)] = token
        lines[1 + row] = ",".join(cells) + "\n"
        csv_path = replace_csv(pkg, "".join(lines))
        out = Path(tmp) / "out.swf"
        with pytest.raises(InputError) as err:
            formats.convert(pkg, out)
        assert not out.exists()
    assert err.value.path == str(csv_path)
    assert err.value.line == row + 2
    assert column in (err.value.field or "")


@given(sparse_job_tables(), st.integers(1, 8), st.booleans())
@settings(max_examples=60, deadline=None)
def test_parquet_reads_back_whatever_its_row_groups_nulls_and_statistics(
        tmp_path_factory, table, group_rows, statistics):
    """Columns are read one at a time, numeric ones into one chunk; a column that statistics
    show all null in every row group is not read (null in some groups only, or no statistics:
    read)."""
    import pyarrow.parquet as pq

    from swftools.formats.datapackage.files import read_parquet
    from swftools.table import arrow_schema

    path = tmp_path_factory.mktemp("parquet") / "jobs.parquet"
    pq.write_table(table, path, row_group_size=group_rows, write_statistics=statistics)
    back = read_parquet(path, arrow_schema())
    assert back.equals(table.cast(arrow_schema()))
    assert all(back.column(f.name).num_chunks == 1 for f in back.schema
               if pa.types.is_integer(f.type) or pa.types.is_floating(f.type))


def test_parquet_without_a_column_or_of_a_wrong_type_is_refused(tmp_path):
    import pyarrow.parquet as pq

    from swftools.formats.datapackage.files import read_parquet
    from swftools.table import arrow_schema

    schema = arrow_schema()
    path = tmp_path / "jobs.parquet"
    pq.write_table(pa.table({"job_id": [1, 2]}), path)
    with pytest.raises(InputError) as err:
        read_parquet(path, schema)
    assert (err.value.path, err.value.message, err.value.expected) == (
        str(path), f"column '{schema.names[1]}' missing", f"the columns {', '.join(schema.names)}")
    table = pa.table({f.name: pa.nulls(2, f.type) for f in schema})
    pq.write_table(table.set_column(0, "job_id", pa.array(["a", "b"])), path)
    with pytest.raises(InputError, match="wrong type") as err:
        read_parquet(path, schema)
    assert err.value.path == str(path)
    path.write_bytes(b"not parquet")
    with pytest.raises(InputError, match="not a readable Parquet file") as err:
        read_parquet(path, schema)
    assert err.value.path == str(path)


def test_a_package_written_before_the_newer_columns_reads_them_as_unknown(tmp_path):
    """A package whose own schema lacks columns added to the job table since (optional ones:
    source_job_id, cpus, recorded_walltime_s) still reads; those columns are unknown."""
    from .test_formats_datapackage import tiny_table
    from .test_formats_datapackage_package import NEWER as newer, older_package

    pkg = older_package(tmp_path, "file")
    schema_path = pkg / "schemas" / "jobs.json"
    schema = json.loads(schema_path.read_text())
    table = dp.read(pkg)
    assert table.column_names == [f["name"] for f in table_schema()["fields"]]
    for name in newer:
        assert table.column(name).null_count == table.num_rows
    assert table.num_rows == tiny_table().num_rows
    schema["fields"] = [f for f in schema["fields"] if f["name"] != "user"]  # a required one
    schema_path.write_text(json.dumps(schema, indent=2) + "\n")
    with pytest.raises(InputError):
        dp.read(pkg)


def test_declared_missing_values_of_a_csv_are_unknown(tmp_path):
    """As validate's schema-type: a typed cell equal to a declared missing value is unknown
    (null), a required one is missing; text cells keep the text."""
    schema = dict(GENERIC_SCHEMA, missingValues=["", "NA", {"value": "-"}, {"label": "x"}, 5])
    path = tmp_path / "t.csv"
    path.write_text('key,ratio,label,flag\n1,NA,NA,-\n2,-,"",NA\n3,1.5,x,true\n')
    table = read_csv_gz(path, schema, compressed=False)
    assert table.to_pydict() == {"key": [1, 2, 3], "ratio": [None, None, 1.5],
                                 "label": ["NA", "", "x"], "flag": [None, None, True]}
    path.write_text("key,ratio,label,flag\n1,2,a,true\nNA,2,b,false\n")
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert (err.value.line, err.value.field, err.value.message, err.value.value) == (
        3, "key", "required value is missing", "NA")
    path.write_text("key,ratio,label,flag\n1,NA,a,true\n")
    with pytest.raises(InputError) as err:
        read_csv_gz(path, GENERIC_SCHEMA, compressed=False)  # NA not declared: not a number
    assert (err.value.line, err.value.field, err.value.message) == (2, "ratio", "'NA' is not a number")


def test_a_required_text_cell_that_is_empty_is_located(tmp_path):
    schema = {"fields": [{"name": "key", "type": "integer"},
                         {"name": "label", "type": "string", "constraints": {"required": True}}]}
    path = tmp_path / "t.csv"
    path.write_text("key,label\n1,a\n2,\n")
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert (err.value.line, err.value.field, err.value.value, err.value.expected) == (
        3, "label", "", "a value")


@pytest.mark.parametrize("bad, line, message", [
    (b"1,x7\n", 2, "'x7' is not an integer"),
    (b"1,\xff\n", 2, "not UTF-8 text (byte 0xff at column 3)"),
    (b"1,2\n" * 3000 + b"1,\xff\n", 3002, "not UTF-8 text (byte 0xff at column 3)")])  # past
def test_a_misnamed_gzip_file_is_warned_about_once_while_its_error_is_located(  # the header's
        tmp_path, bad, line, message):  # read: found by the scan that locates errors
    import warnings

    schema = {"fields": [{"name": "key", "type": "integer"}, {"name": "n", "type": "integer"}]}
    path = tmp_path / "t.csv.gz"
    path.write_bytes(b"key,n\n" + bad)
    with warnings.catch_warnings(record=True) as caught, pytest.raises(InputError) as err:
        warnings.simplefilter("always")
        read_csv_gz(path, schema, compressed=True)
    assert err.value.line == line and err.value.message == message
    assert [w.category for w in caught] == [MisnamedGzipWarning]


def test_a_csv_that_vanishes_while_its_error_is_located_is_an_input_error(tmp_path, monkeypatch):
    from swftools.formats.datapackage import files

    path = tmp_path / "t.csv"
    path.write_text("key,n\n1,x7\n")
    real = files.pacsv.read_csv

    def read_then_vanish(*args, **kwargs):
        table = real(*args, **kwargs)
        path.unlink()
        return table
    monkeypatch.setattr(files.pacsv, "read_csv", read_then_vanish)
    schema = {"fields": [{"name": "key", "type": "integer"}, {"name": "n", "type": "integer"}]}
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert err.value.path == str(path) and err.value.line is None
    assert err.value.message.startswith("cannot read: [Errno 2] No such file or directory")


def test_numeric_columns_are_made_contiguous_and_text_columns_keep_their_chunks():
    from swftools.formats.datapackage.files import _contiguous

    numbers = pa.chunked_array([[1, 2, 3], [None, 4]], pa.int64())
    one = _contiguous(numbers)
    assert one.num_chunks == 1 and one.type == pa.int64() and one.to_pylist() == [1, 2, 3, None, 4]
    text = pa.chunked_array([["a"], ["b", None]], pa.string())
    assert _contiguous(text).num_chunks == 2 and _contiguous(text).equals(text)
    single = pa.chunked_array([[1.5, 2.5]], pa.float64())
    assert _contiguous(single).num_chunks == 1 and _contiguous(single).equals(single)


def test_csv_extra_column(pkg):
    lines = csv_text(pkg).splitlines(keepends=True)
    lines = [line.rstrip("\n") + (',"extra"\n' if i == 0 else ",x\n") for i, line in enumerate(lines)]
    csv_path, err = csv_error(pkg, "".join(lines))
    assert str(err) == f"{csv_path}:1: column {N_COLUMNS + 1} 'extra' is not in the Table Schema"
    assert (err.path, err.line) == (str(csv_path), 1)


def test_quoted_empty_and_multi_line_cells(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('key,ratio,label,flag\n1,"","a\nb",""\n')
    # an empty typed cell is unknown even when missingValues does not list ""
    table = read_csv_gz(path, dict(GENERIC_SCHEMA, missingValues=[]), compressed=False)
    assert table.to_pylist() == [{"key": 1, "ratio": None, "label": "a\nb", "flag": None}]


def test_a_plain_csv_declared_gzip_is_read_with_one_warning(tmp_path):
    import warnings

    path = tmp_path / "t.csv"
    path.write_text("key,ratio,label,flag\n1,x,a,true\n")
    with warnings.catch_warnings(record=True) as caught, pytest.raises(InputError) as err:
        warnings.simplefilter("always")
        read_csv_gz(path, GENERIC_SCHEMA, compressed=True)
    assert err.value.line == 2 and err.value.field == "ratio"
    assert [str(w.message) for w in caught] == [
        f"{path}: declared gzip-compressed but the content is not gzip; reading it as plain text"]


# ------------------------------------------- issue 30: the survivors of the full files.py run

def test_the_csv_text_is_the_same_whatever_its_chunks(tmp_path, monkeypatch):
    """Chunks of CSV_CHUNK_ROWS rows, the header in the first only: the bytes do not depend on
    the chunk size (here 2 rows: chunks of rows 1-2, 3-4 and 5)."""
    import gzip

    from swftools.formats.datapackage import files

    schema = arrow_schema_of(GENERIC_SCHEMA)
    rows = [(1, 0.5, "a", True), (2, None, None, False), (3, 1.25, 'say "hi"', None),
            (4, -3.5, "", True), (5, None, "x\ny", False)]
    table = pa.Table.from_pylist([dict(zip(schema.names, row)) for row in rows], schema=schema)
    whole, chunked = tmp_path / "whole.csv.gz", tmp_path / "chunked.csv.gz"
    write_csv_gz(table, whole)
    monkeypatch.setattr(files, "CSV_CHUNK_ROWS", 2)
    write_csv_gz(table, chunked)
    assert gzip.decompress(chunked.read_bytes()).decode() == (
        '"key","ratio","label","flag"\n'
        '1,0.5,"a",true\n'
        '2,,,false\n'
        '3,1.25,"say ""hi""",\n'
        '4,-3.5,"",true\n'
        '5,,"x\ny",false\n')
    assert chunked.read_bytes() == whole.read_bytes()
    write_csv_gz(table.slice(0, 0), chunked)  # no rows: the header alone
    assert gzip.decompress(chunked.read_bytes()).decode() == '"key","ratio","label","flag"\n'


def test_a_csv_that_vanishes_before_its_header_is_read_is_an_input_error(tmp_path, monkeypatch):
    from swftools.formats.datapackage import files

    path = tmp_path / "t.csv"
    path.write_text("key,n\n1,2\n")
    real = files.detect_gzip

    def detect_then_vanish(*args, **kwargs):
        compressed = real(*args, **kwargs)
        path.unlink()
        return compressed
    monkeypatch.setattr(files, "detect_gzip", detect_then_vanish)
    schema = {"fields": [{"name": "key", "type": "integer"}, {"name": "n", "type": "integer"}]}
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert (err.value.path, err.value.line) == (str(path), None)
    assert err.value.message == f"cannot read: [Errno 2] No such file or directory: '{path}'"


def test_what_the_fast_path_says_when_the_scan_cannot_locate_the_problem(tmp_path, monkeypatch):
    """The scan that names line and cell (_locate_error) finds what pyarrow refused; should it
    find nothing, pyarrow's own refusal is still an InputError naming the file (and field)."""
    from swftools.formats.datapackage import cells, files

    monkeypatch.setattr(files, "_locate_error", lambda *args: None)
    schema = {"fields": [{"name": "key", "type": "integer"}, {"name": "n", "type": "integer"}]}
    path = tmp_path / "t.csv"
    path.write_text("key,n\n1\n")
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), None, None)
    assert err.value.message.startswith("cannot read CSV: CSV parse error: Expected 2 columns, "
                                        "got 1")
    path.write_text("key,n\n1,x7\n")
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert (err.value.path, err.value.message, err.value.field, err.value.expected) == (
        str(path), "a cell is not an integer", "n", None)

    def out_of_range(kind, column, target):
        raise pa.ArrowInvalid("too big")
    monkeypatch.setattr(cells, "parse", out_of_range)
    path.write_text("key,n\n1,2\n")
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert (err.value.path, err.value.message, err.value.field, err.value.expected) == (
        str(path), "a value is out of range: too big", "key", "an integer that fits int64")


def test_text_cells_spanning_lines_past_pyarrows_first_block_are_read(tmp_path):
    """pyarrow reads 1 MiB blocks; a quoted line break must not be taken for a row's end."""
    label = "\n".join(["ab"] * 50)  # 149 characters, 49 line breaks
    path = tmp_path / "t.csv"
    path.write_text("key,label,ratio,flag\n" + "".join(f'{i},"{label}",,\n' for i in range(7100)))
    assert path.stat().st_size > 1 << 20
    table = read_csv_gz(path, GENERIC_SCHEMA, compressed=False)
    assert table.column("key").to_pylist() == list(range(7100))
    assert table.column("label").to_pylist() == [label] * 7100


def test_a_blank_line_is_skipped_and_the_bad_cell_after_it_located(tmp_path):
    """pyarrow skips blank lines; the scan that locates a bad cell skips them too (it named
    the blank line, '0 fields, expected 2')."""
    schema = {"fields": [{"name": "key", "type": "integer"}, {"name": "n", "type": "integer"}]}
    path = tmp_path / "t.csv"
    path.write_text("key,n\n1,2\n\n3,4\n")
    assert read_csv_gz(path, schema, compressed=False).to_pydict() == {"key": [1, 3], "n": [2, 4]}
    path.write_text("key,n\n1,2\n\n3,x7\n")
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert (err.value.line, err.value.field, err.value.message) == (
        4, "n", "'x7' is not an integer")


@pytest.fixture
def csv_default_limit():
    """The csv module's default field limit (131,072 characters): the limit is process-wide
    and frictionless raises it on import, so a test of it sets it."""
    import csv

    previous = csv.field_size_limit(131_072)
    yield
    csv.field_size_limit(previous)


def test_a_text_cell_past_the_csv_modules_field_limit(tmp_path, csv_default_limit):
    """pyarrow reads a 200,000-character cell; the scan (csv module, 131,072 at most) cannot,
    and says so as an InputError (it raised csv.Error); a required column without nulls is
    not scanned."""
    schema = {"fields": [{"name": "key", "type": "integer", "constraints": {"required": True}},
                         {"name": "label", "type": "string"}]}
    path = tmp_path / "t.csv"
    path.write_text("key,label\n1," + "a" * 200_000 + "\n2,b\n")
    assert read_csv_gz(path, schema, compressed=False).column("label").to_pylist() == [
        "a" * 200_000, "b"]
    path.write_text("key,label\n1," + "a" * 200_000 + "\nx7,b\n")
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert (err.value.path, err.value.line, err.value.message) == (
        str(path), 2, "cannot read CSV: field larger than field limit (131072)")
    path.write_text("key,label" + "a" * 200_000 + "\n1,2\n")
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert (err.value.path, err.value.line, err.value.message) == (
        str(path), 1, "cannot read the header: field larger than field limit (131072)")


def test_a_located_value_keeps_its_line_breaks(tmp_path):
    """The scan reads the text as written (newline=''): a quoted CR LF stays CR LF."""
    schema = {"fields": [{"name": "key", "type": "integer"}, {"name": "n", "type": "integer"}]}
    path = tmp_path / "t.csv"
    path.write_bytes(b'key,n\n1,"2\r\n3"\n')
    with pytest.raises(InputError) as err:
        read_csv_gz(path, schema, compressed=False)
    assert (err.value.field, err.value.value) == ("n", "2\r\n3")


def test_a_misnamed_gzip_file_is_warned_about_once_while_a_missing_value_is_located(tmp_path):
    import warnings

    schema = {"fields": [{"name": "key", "type": "integer"},
                         {"name": "n", "type": "integer", "constraints": {"required": True}}]}
    path = tmp_path / "t.csv.gz"
    path.write_bytes(b"key,n\n1,2\n3,\n")
    with warnings.catch_warnings(record=True) as caught, pytest.raises(InputError) as err:
        warnings.simplefilter("always")
        read_csv_gz(path, schema, compressed=True)
    assert (err.value.line, err.value.field, err.value.message) == (
        3, "n", "required value is missing")
    assert [w.category for w in caught] == [MisnamedGzipWarning]


def test_a_csv_is_read_as_utf8_under_any_locale(tmp_path):
    from .conftest import text_under_c_locale

    path = tmp_path / "t.csv"
    path.write_text("clé,n\n1,été\nx7,b\n", encoding="utf-8")
    code = ("import sys\n"
            "from swftools.errors import InputError\n"
            "from swftools.formats.datapackage.files import read_csv_gz\n"
            # the command line is ASCII under the C locale: 'clé' escaped
            "schema = {'fields': [{'name': 'cl\\u00e9', 'type': 'integer'}, {'name': 'n'}]}\n"
            "try:\n"
            "    read_csv_gz(sys.argv[1], schema, compressed=False)\n"
            "except InputError as err:\n"
            "    print(f'{err.line} {err.field} {err.message}'.encode().hex())\n")
    assert text_under_c_locale(code, str(path)) == "3 clé 'x7' is not an integer"
