"""swftools.formats.datapackage.cells: one Table Schema cell grammar for the reader and the validator.

The package reader (``files.read_csv_gz`` and its cell-by-cell ``_check_cell``) and the validator's
``schema-type`` rule (``package_checks.bad_cells``) must accept and reject exactly the same cells.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings

from swftools.errors import InputError
from swftools.formats import datapackage
from swftools.formats.datapackage import cells
from swftools.formats.datapackage.files import _check_cell, read_csv_gz, write_csv_gz
from swftools.validate.package_checks import bad_cells

from .strategies import cell_tokens, examples, integer_cell_columns
from .validate_support import aaic_table, assert_fires, run

KINDS = ("integer", "number", "boolean", "string")


def reader_cell_ok(kind: str, token: str) -> bool:
    """The reader's check of one cell (the csv-module scan that names the bad cell)."""
    try:
        _check_cell(Path("t.csv"), 2, "c", token, kind, required=False)
    except InputError:
        return False
    return True


def validator_cell_ok(kind: str, token: str) -> bool:
    """The validator's check of the same cell (schema-type, whole column in pyarrow's RE2)."""
    return len(bad_cells(pa.array([token], pa.string()), kind, [""])) == 0


def read_one(directory: Path, kind: str, token: str) -> pa.Table | None:
    """Read a one-cell CSV with the package reader; None when it refuses the cell."""
    path = directory / f"{kind}.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([["c"], [token]])
    try:
        return read_csv_gz(path, {"fields": [{"name": "c", "type": kind}]}, compressed=False)
    except InputError:
        return None


@given(cell_tokens)
@settings(max_examples=examples(150))
def test_reader_and_validator_agree_on_every_cell(token):
    for kind in KINDS:
        assert reader_cell_ok(kind, token) == validator_cell_ok(kind, token), (kind, token)


@given(cell_tokens)
@settings(max_examples=100, deadline=None)
def test_reading_a_file_agrees_with_the_validator(tmp_path_factory, token):
    directory = tmp_path_factory.mktemp("cells")
    for kind in KINDS:
        table = read_one(directory, kind, token)
        assert (table is not None) == validator_cell_ok(kind, token), (kind, token)
        if table is None or token == "":
            continue
        value = table.column("c")[0].as_py()
        if kind == "integer":
            assert value == int(token)
        elif kind == "number":
            assert value == float(token) or (math.isnan(value) and token == "NaN")
        elif kind == "boolean":
            assert value is (token in cells.TRUE_VALUES)
        else:
            assert value == token


# token, valid integer, valid number
EXPLICIT = [("1_000", False, False), ("infinity", False, False), (" 5", False, False),
            ("0x10", False, False), ("1e3", False, True)]


@pytest.mark.parametrize(("token", "integer", "number"), EXPLICIT, ids=[t for t, _, _ in EXPLICIT])
def test_explicit_cells(tmp_path, token, integer, number):
    for kind, valid in (("integer", integer), ("number", number)):
        assert reader_cell_ok(kind, token) is valid, kind
        assert validator_cell_ok(kind, token) is valid, kind
        assert (read_one(tmp_path, kind, token) is not None) is valid, kind
        assert cells.is_valid(kind, token) is valid, kind


@pytest.fixture(scope="module")
def csv_package(tmp_path_factory):
    """A written package whose jobs resource is the CSV alone (no Parquet twin)."""
    root = tmp_path_factory.mktemp("pkg") / "p"
    datapackage.write(aaic_table([{"user": f"u{i}", "walltime_s": 100 + i} for i in range(6)]),
                      root)
    (root / "data" / "jobs.parquet").unlink()
    path = root / "datapackage.json"
    desc = json.loads(path.read_text())
    desc["resources"] = [r for r in desc["resources"] if r.get("format") != "parquet"]
    for res in desc["resources"]:
        res.pop("hash", None)
        res.pop("bytes", None)
    desc.get("swftools", {}).get("files", {}).clear()
    path.write_text(json.dumps(desc, indent=2))
    return root


@pytest.mark.parametrize(("token", "integer", "number"), EXPLICIT, ids=[t for t, _, _ in EXPLICIT])
def test_the_reader_and_validate_agree_on_one_package(csv_package, tmp_path, token, integer,
                                                      number):
    for column, valid in (("gpus", integer), ("avg_cpu_time_s", number)):
        root = tmp_path / column
        shutil.copytree(csv_package, root)
        path = root / "data" / "jobs.csv.gz"
        lines = gzip.decompress(path.read_bytes()).decode().split("\n")
        header = [h.strip('"') for h in lines[0].split(",")]
        row = lines[3].split(",")
        row[header.index(column)] = f'"{token}"' if " " in token else token
        lines[3] = ",".join(row)
        path.write_bytes(gzip.compress("\n".join(lines).encode(), mtime=0))
        report = run(root, "schema-type")
        if valid:
            datapackage.read(root)
            assert "schema-type" not in report.fired()
        else:
            with pytest.raises(InputError) as err:
                datapackage.read(root)
            assert (err.value.line, err.value.field, err.value.value) == (4, column, token)
            found = assert_fires(report, "schema-type", 1)
            assert (found[0].line, found[0].field, found[0].value) == (4, column, token)


def test_non_finite_numbers_are_written_in_the_grammar(tmp_path):
    """pyarrow alone would write inf, -inf and nan, which the grammar (and validate) refuse."""
    table = pa.table({"x": pa.array([1.5, math.inf, -math.inf, math.nan, None]),
                      "y": pa.array([1.0, 2.0, None, 3.0, 4.0])})
    path = tmp_path / "t.csv.gz"
    write_csv_gz(table, path)
    text = gzip.decompress(path.read_bytes()).decode()
    assert text.split("\n")[1:6] == ['"1.5",1', '"INF",2', '"-INF",', '"NaN",3', ",4"]
    schema = {"fields": [{"name": "x", "type": "number"}, {"name": "y", "type": "number"}]}
    back = read_csv_gz(path, schema, compressed=True)
    assert back.column("x").to_pylist()[:3] == [1.5, math.inf, -math.inf]
    assert math.isnan(back.column("x")[3].as_py()) and back.column("x")[4].as_py() is None


@pytest.mark.parametrize("token, ok", [
    ("9223372036854775807", True), ("-9223372036854775808", True), ("+0009223372036854775807", True),
    ("9223372036854775808", False), ("-9223372036854775809", False), ("9" * 25, False),
])
def test_integers_beyond_64_bits_are_refused_alike(token, ok):
    assert reader_cell_ok("integer", token) is ok
    assert validator_cell_ok("integer", token) is ok
    assert cells.is_valid("integer", token) is ok and cells.matches("integer", token)


@given(integer_cell_columns)
def test_a_column_of_integer_cells_is_checked_as_each_cell_alone(tokens):
    """valid_mask skips the 64-bit range check of a column whose cells are all shorter than 19
    characters; mixed with long cells, each cell still gets the per-cell verdict."""
    mask = cells.valid_mask("integer", pa.array(tokens, pa.string())).to_pylist()
    assert mask == [cells.is_valid("integer", t) for t in tokens]


@pytest.mark.parametrize("kind, token, ok", [
    ("number", "12345678901234567890.5", True), ("number", "1" * 25, True),
    ("number", "-" + "9" * 30 + "e-5", True), ("number", "1" * 25 + "x", False),
    ("boolean", "true" + " " * 20, False), ("boolean", "1", True)])
def test_long_cells_of_other_types_get_no_64_bit_check(kind, token, ok):
    """Only integers are bounded by 64 bits: a long number is still a number."""
    column = pa.array([token, "1"], pa.string())
    assert cells.valid_mask(kind, column).to_pylist() == [ok, True]
    assert validator_cell_ok(kind, token) is ok and reader_cell_ok(kind, token) is ok


@pytest.mark.parametrize("kind", ["string", "date", "any"])
def test_a_type_without_a_grammar_accepts_any_text(kind):
    column = pa.array(["", "x7", " 5 ", "1_000"], pa.string())
    assert cells.valid_mask(kind, column).to_pylist() == [True] * 4
    assert all(cells.is_valid(kind, t) and cells.matches(kind, t) for t in column.to_pylist())


def test_missing_values_are_the_texts_the_schema_declares():
    assert cells.missing_values({"fields": []}) == [""]  # the Table Schema default
    assert cells.missing_values({"missingValues": []}) == []
    assert cells.missing_values({"missingValues": ["", "NA", {"value": "-"}, {"label": "x"}, 5,
                                                   {"value": 5}, None]}) == ["", "NA", "-", ""]
    assert cells.missing_values({"missingValues": "NA"}) == []  # not a list: nothing declared
