"""The data files of a package: gzip CSV and Parquet, written deterministically, read back typed.

Used by :mod:`swftools.formats.datapackage.package`; knows nothing about descriptors beyond a Table Schema's
``fields``. CSV files are written by pyarrow (whole columns at once) into a gzip stream with
mtime 0 and no file name, so the same table always gives the same bytes.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from swftools.errors import InputError, UsageError
from swftools.table import ARROW_TYPES  # Table Schema type -> Arrow type

GZIP_LEVEL = 6
PARQUET_COMPRESSION = "zstd"
_CHUNK = 1 << 20

_INTEGER = re.compile(r"[+-]?[0-9]+")
_BOOLEAN = {"true", "false", "True", "False", "TRUE", "FALSE", "1", "0"}
_EXPECTED_TEXT = {"integer": "an integer", "number": "a number", "boolean": "true or false"}


def arrow_schema_for(table_schema: dict[str, Any]) -> pa.Schema:
    """The Arrow schema matching a Table Schema (integer, number, string, boolean fields)."""
    fields = []
    for f in table_schema["fields"]:
        kind = f.get("type", "string")
        if kind not in ARROW_TYPES:
            raise UsageError(f"field {f['name']!r}: type {kind!r} is not supported "
                             f"(choose from {', '.join(ARROW_TYPES)})")
        fields.append(pa.field(f["name"], ARROW_TYPES[kind], nullable=not _required(f, table_schema)))
    return pa.schema(fields)


def _required(field: dict[str, Any], table_schema: dict[str, Any]) -> bool:
    return bool(field.get("constraints", {}).get("required")) or \
        field["name"] in table_schema.get("primaryKey", [])


def file_digest(path: Path, algorithm: str = "sha256",
                advance: Callable[[int], None] | None = None) -> str:
    """Hex digest of a file's bytes, read in chunks (``advance`` is told each chunk's size)."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            if advance:
                advance(len(chunk))
    return h.hexdigest()


# --------------------------------------------------------------------------------------- write

def write_csv_gz(table: pa.Table, path: Path) -> None:
    """Write ``table`` as UTF-8 CSV (header row, LF line ends, nulls empty, strings quoted) in gzip."""
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                 compresslevel=GZIP_LEVEL, mtime=0) as gz:
        pacsv.write_csv(table, gz, pacsv.WriteOptions(include_header=True, batch_size=8192))


def write_parquet(table: pa.Table, path: Path) -> None:
    """Write ``table`` as Parquet (zstd); pyarrow output is byte-identical across runs."""
    pq.write_table(table, path, compression=PARQUET_COMPRESSION)


def empty_string_counts(table: pa.Table) -> dict[str, int]:
    """Per string column, how many values are the empty string (CSV tools read them as missing)."""
    counts = {}
    for name in table.column_names:
        column = table.column(name)
        if pa.types.is_string(column.type) and len(column):
            n = pc.sum(pc.equal(column, "")).as_py() or 0
            if n:
                counts[name] = n
    return counts


# ---------------------------------------------------------------------------------------- read

def read_parquet(path: Path, schema: pa.Schema) -> pa.Table:
    """Read a Parquet file and cast it to ``schema`` (same columns, by name)."""
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(path), f"not a readable Parquet file: {exc}") from None
    missing = [n for n in schema.names if n not in table.column_names]
    if missing:
        raise InputError(str(path), f"column {missing[0]!r} missing",
                         expected=f"the columns {', '.join(schema.names)}")
    try:
        return pa.Table.from_arrays([table.column(n).cast(schema.field(n).type)
                                     for n in schema.names], schema=schema)
    except pa.ArrowException as exc:
        raise InputError(str(path), f"a column has the wrong type: {exc}") from None


def read_csv_gz(path: Path, table_schema: dict[str, Any], compressed: bool) -> pa.Table:
    """Read a CSV (gzip if ``compressed``) written per ``table_schema``; typed, header checked.

    Fast path: pyarrow with explicit column types. When it fails (or a required cell is empty),
    the file is scanned with the csv module to name the exact line, field, value and type.
    """
    schema = arrow_schema_for(table_schema)
    header = _read_header(path, compressed)
    _check_header(path, header, schema.names)
    convert = pacsv.ConvertOptions(column_types={f.name: f.type for f in schema},
                                   null_values=[""], strings_can_be_null=True,
                                   quoted_strings_can_be_null=False)
    parse = pacsv.ParseOptions(newlines_in_values=True)
    try:
        stream = pa.input_stream(str(path), compression="gzip" if compressed else None)
        with stream:
            table = pacsv.read_csv(stream, parse_options=parse, convert_options=convert)
    except (pa.ArrowException, OSError, EOFError) as exc:
        _locate_error(path, table_schema, compressed)
        raise InputError(str(path), f"cannot read CSV: {exc}") from None
    for field in schema:
        if not field.nullable and table.column(field.name).null_count:
            _locate_error(path, table_schema, compressed)
    table = table.select(schema.names)
    return pa.Table.from_arrays(table.columns, schema=schema)


def _open_text(path: Path, compressed: bool):
    if compressed:
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _read_header(path: Path, compressed: bool) -> list[str]:
    try:
        with _open_text(path, compressed) as fh:
            row = next(csv.reader(fh), None)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(str(path), _stream_problem(exc, compressed)) from None
    except UnicodeDecodeError:
        raise _not_utf8(path, compressed) from None
    if row is None:
        raise InputError(str(path), "empty file", expected="a header row")
    return row


def _check_header(path: Path, header: list[str], names: list[str]) -> None:
    for name in names:
        if name not in header:
            raise InputError(str(path), f"column {name!r} missing from the header", line=1,
                             expected=f"the {len(names)} columns of the Table Schema")
    for position, label in enumerate(header, 1):
        if label not in names:
            raise InputError(str(path), f"column {position} {label!r} is not in the Table Schema",
                             line=1)
    if len(header) != len(set(header)):
        duplicate = next(label for label in header if header.count(label) > 1)
        raise InputError(str(path), f"column {duplicate!r} appears twice in the header", line=1)


def _stream_problem(exc: BaseException, compressed: bool) -> str:
    if isinstance(exc, EOFError):
        return "truncated gzip file (the compressed stream ends early)"
    if compressed and isinstance(exc, (gzip.BadGzipFile, zlib.error)):
        return f"not a valid gzip file ({exc})"
    return f"cannot read: {exc}"


def _locate_error(path: Path, table_schema: dict[str, Any], compressed: bool) -> None:
    """Scan the file slowly and raise an InputError at the first bad row or cell (if any)."""
    fields = table_schema["fields"]
    try:
        with _open_text(path, compressed) as fh:
            reader = csv.reader(fh)
            header = next(reader)
            index = {label: i for i, label in enumerate(header)}
            checks = [(f["name"], index[f["name"]], f.get("type", "string"),
                       _required(f, table_schema)) for f in fields]
            for row in reader:
                if len(row) != len(header):
                    raise InputError(str(path), f"{len(row)} fields, expected {len(header)}",
                                     line=reader.line_num)
                for name, i, kind, required in checks:
                    _check_cell(path, reader.line_num, name, row[i], kind, required)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(str(path), _stream_problem(exc, compressed)) from None
    except UnicodeDecodeError:
        raise _not_utf8(path, compressed) from None


def _not_utf8(path: Path, compressed: bool) -> InputError:
    """The error for a file that is not UTF-8, located at the first offending line."""
    with (gzip.open(path, "rb") if compressed else open(path, "rb")) as fh:
        for number, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return InputError(str(path), f"not UTF-8 text (byte {raw[exc.start]:#04x} at "
                                  f"column {exc.start + 1})", line=number)
    return InputError(str(path), "not UTF-8 text")


def _check_cell(path: Path, line: int, name: str, value: str, kind: str, required: bool) -> None:
    if value == "":
        if required:
            raise InputError(str(path), "required value is missing", line=line, field=name,
                             value=value, expected=_EXPECTED_TEXT.get(kind, "a value"))
        return
    bad = (kind == "integer" and not _INTEGER.fullmatch(value)) or \
          (kind == "boolean" and value not in _BOOLEAN) or \
          (kind == "number" and not _is_number(value))
    if bad:
        # The message already says what was expected; ``expected`` would repeat it.
        raise InputError(str(path), f"{value!r} is not {_EXPECTED_TEXT[kind]}", line=line,
                         field=name, value=value)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text
