"""The data files of a package: gzip CSV and Parquet, written deterministically, read back typed.

Used by :mod:`swftools.formats.datapackage.package`; knows nothing about descriptors beyond a Table Schema's
``fields``. CSV files are written by pyarrow (whole columns at once, ``CSV_CHUNK_ROWS`` rows a
chunk) into a gzip stream with mtime 0 and no file name, compressed in a second thread while the
next chunk is formatted; deflate's output does not depend on how its input is split, so the
same table always gives the same bytes.
"""

from __future__ import annotations

import csv
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from swftools.errors import InputError
from swftools.fileio import gzip_writer, write_behind
from swftools.formats.datapackage import cells
from swftools.formats.inputs import detect_gzip, open_binary, open_text
from swftools.table import arrow_schema_of, is_required

# Rows formatted per CSV chunk (about 7 MB of text for a job table): the CSV text of a large
# table is never held whole; the bytes do not depend on it.
CSV_CHUNK_ROWS = 1 << 16


# --------------------------------------------------------------------------------------- write

def write_csv_gz(table: pa.Table, path: Path) -> None:
    """Write ``table`` as UTF-8 CSV (header row, LF line ends, nulls empty, strings quoted) in gzip.

    Numbers follow the cell grammar of :mod:`.cells`: a float column holding infinities or NaN is
    written as text with ``INF``, ``-INF`` and ``NaN`` (quoted, like every text column).
    """
    for i, field in enumerate(table.schema):
        if pa.types.is_floating(field.type):
            column = cells.format_numbers(table.column(i))
            if column.type != field.type:
                table = table.set_column(i, field.name, column)
    with open(path, "wb") as raw, gzip_writer(raw) as gz:
        write_behind(_csv_chunks(table), gz.write)


def _csv_chunks(table: pa.Table) -> Iterator[pa.Buffer]:
    """The CSV text of ``table`` (header first) in chunks of ``CSV_CHUNK_ROWS`` rows."""
    for start in range(0, max(table.num_rows, 1), CSV_CHUNK_ROWS):
        sink = pa.BufferOutputStream()
        pacsv.write_csv(table.slice(start, CSV_CHUNK_ROWS), sink,
                        pacsv.WriteOptions(include_header=start == 0, batch_size=8192))
        yield sink.getvalue()


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
    """Read a Parquet file and cast it to ``schema`` (same columns, by name).

    Column by column, numeric columns each as one contiguous array (so that numpy views of them
    need no copy; text columns keep the reader's chunks, which whole-column casts that fail on
    names stop at early); a column whose statistics say it holds only nulls is not read: the
    columns of one type share one all-null array (an SWF-only column of a 10-million-job NQSII
    table costs nothing).
    """
    try:
        with pq.ParquetFile(path) as parquet:
            missing = [n for n in schema.names if n not in parquet.schema_arrow.names]
            if missing:
                raise InputError(str(path), f"column {missing[0]!r} missing",
                                 expected=f"the columns {', '.join(schema.names)}")
            empty = _all_null_columns(parquet, schema.names)
            shared: dict[pa.DataType, pa.Array] = {}
            columns = []
            for name in schema.names:
                target = schema.field(name).type
                if name in empty:
                    if target not in shared:
                        shared[target] = pa.nulls(parquet.metadata.num_rows, target)
                    columns.append(shared[target])
                    continue
                if _numeric(target):  # one piece per row group
                    column = parquet.read(columns=[name], use_threads=False).column(0)
                else:  # record batches
                    column = pq.read_table(path, columns=[name], use_threads=False).column(0)
                try:
                    column = column.cast(target)
                except pa.ArrowException as exc:
                    raise InputError(str(path), f"a column has the wrong type: {exc}") from None
                columns.append(_contiguous(column))
                del column
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(path), f"not a readable Parquet file: {exc}") from None
    return pa.Table.from_arrays(columns, schema=schema)


def _all_null_columns(parquet: pq.ParquetFile, names: list[str]) -> set[str]:
    """The top-level columns whose statistics show only nulls in every row group."""
    meta = parquet.metadata
    if meta.num_rows == 0 or meta.num_row_groups == 0:
        return set()
    index = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
    out = set()
    for name in names:
        i = index.get(name)
        if i is None:
            continue
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            stats = group.column(i).statistics
            if stats is None or not stats.has_null_count or stats.null_count != group.num_rows:
                break
        else:
            out.add(name)
    return out


def _numeric(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_floating(kind)


def _contiguous(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A numeric ``column`` as a single chunk (other columns, and columns already in one chunk,
    unchanged)."""
    if column.num_chunks == 1 or not _numeric(column.type):
        return column
    try:
        return pa.chunked_array([column.combine_chunks()], column.type)
    except (pa.ArrowInvalid, pa.ArrowCapacityError):
        return column


def read_csv_gz(path: Path, table_schema: dict[str, Any], compressed: bool) -> pa.Table:
    """Read a CSV written per ``table_schema``; typed, header checked.

    Gzip is decided by content; ``compressed`` (the descriptor or the name says gzip) only makes
    plain content under that claim a warning.

    Fast path: pyarrow reads every column as text; typed columns are checked whole against the
    cell grammar of :mod:`.cells` (the one the validator's ``schema-type`` uses) and then cast.
    When that fails (or a required cell is empty), the file is scanned with the csv module to
    name the exact line, field, value and type.
    """
    schema = arrow_schema_of(table_schema)
    kinds = {f["name"]: f.get("type", "string") for f in table_schema["fields"]}
    missing = pa.array(sorted({"", *cells.missing_values(table_schema)}), pa.string())
    compressed = detect_gzip(path, declared=compressed)
    header = _read_header(path, compressed)
    _check_header(path, header, schema.names)
    convert = pacsv.ConvertOptions(column_types={f.name: pa.string() for f in schema},
                                   null_values=[""], strings_can_be_null=True,
                                   quoted_strings_can_be_null=False)
    parse = pacsv.ParseOptions(newlines_in_values=True)
    try:
        with open_binary(path, compressed=compressed) as stream:  # bounded decompression
            table = pacsv.read_csv(stream, parse_options=parse, convert_options=convert)
    except (pa.ArrowException, OSError, EOFError) as exc:
        _locate_error(path, table_schema, compressed)
        raise InputError(str(path), f"cannot read CSV: {exc}") from None
    columns = []
    for field in schema:
        column, kind = table.column(field.name), kinds[field.name]
        if kind in cells.GRAMMAR:
            # an empty cell, quoted or not, and a declared missing value are unknown (as in
            # _check_cell and validate)
            column = pc.if_else(pc.is_in(column, value_set=missing), pa.scalar(None, pa.string()),
                                column)
            if pc.all(cells.valid_mask(kind, column)).as_py() is False:  # None: no cells
                _locate_error(path, table_schema, compressed)
                raise InputError(str(path), f"a cell is not {cells.EXPECTED[kind]}",
                                 field=field.name)
            try:
                column = cells.parse(kind, column, field.type)
            except pa.ArrowInvalid as exc:
                raise InputError(str(path), f"a value is out of range: {exc}", field=field.name,
                                 expected=f"{cells.EXPECTED[kind]} that fits {field.type}") from None
        if not field.nullable and column.null_count:
            _locate_error(path, table_schema, compressed)
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def _open_text(path: Path, compressed: bool):
    return open_text(path, encoding="utf-8", newline="", compressed=compressed)


def header_row(path: Path, compressed: bool) -> list[str] | None:
    """The first CSV record of a package's CSV file (its header row; a record may span lines),
    None for an empty file: the one reading of the header, also ``validate``'s. Raises what
    opening, decoding and :mod:`csv` raise."""
    with _open_text(path, compressed) as fh:
        return next(csv.reader(fh), None)


def _read_header(path: Path, compressed: bool) -> list[str]:
    try:
        row = header_row(path, compressed)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(str(path), _stream_problem(exc, compressed)) from None
    except UnicodeDecodeError:
        raise _not_utf8(path, compressed) from None
    except csv.Error as exc:  # a label past the csv module's field size limit
        raise InputError(str(path), f"cannot read the header: {exc}", line=1) from None
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
    """Damaged gzip streams are located by :mod:`swftools.formats.inputs`; this is the rest."""
    del compressed
    return f"cannot read: {exc}"


def _locate_error(path: Path, table_schema: dict[str, Any], compressed: bool) -> None:
    """Scan the file slowly and raise an InputError at the first bad row or cell (if any)."""
    fields, missing = table_schema["fields"], cells.missing_values(table_schema)
    try:
        with _open_text(path, compressed) as fh:
            reader = csv.reader(fh)
            header = next(reader)
            index = {label: i for i, label in enumerate(header)}
            checks = [(f["name"], index[f["name"]], f.get("type", "string"),
                       is_required(f, table_schema)) for f in fields]
            for row in reader:
                if not row:  # a blank line: pyarrow skips it (ignore_empty_lines), so does this
                    continue
                if len(row) != len(header):
                    raise InputError(str(path), f"{len(row)} fields, expected {len(header)}",
                                     line=reader.line_num)
                for name, i, kind, required in checks:
                    _check_cell(path, reader.line_num, name, row[i], kind, required, missing)
    except csv.Error as exc:  # a cell past the csv module's field size limit (pyarrow has none)
        raise InputError(str(path), f"cannot read CSV: {exc}", line=reader.line_num) from None
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(str(path), _stream_problem(exc, compressed)) from None
    except UnicodeDecodeError:
        raise _not_utf8(path, compressed) from None


def _not_utf8(path: Path, compressed: bool) -> InputError:
    """The error for a file that is not UTF-8, located at the first offending line."""
    with open_binary(path, compressed=compressed) as fh:
        for number, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return InputError(str(path), f"not UTF-8 text (byte {raw[exc.start]:#04x} at "
                                  f"column {exc.start + 1})", line=number)
    return InputError(str(path), "not UTF-8 text")


def _check_cell(path: Path, line: int, name: str, value: str, kind: str, required: bool,
                missing: list[str] | tuple[str, ...] = ()) -> None:
    """Raise an InputError when one cell is missing (empty, or in a typed column one of the
    ``missing`` values, as in :func:`read_csv_gz`) but required, or breaks the cell grammar."""
    if value == "" or kind in cells.GRAMMAR and value in missing:
        if required:
            raise InputError(str(path), "required value is missing", line=line, field=name,
                             value=value, expected=cells.EXPECTED.get(kind, "a value"))
        return
    if not cells.is_valid(kind, value):
        if cells.matches(kind, value):  # the grammar holds, the 64-bit range does not
            raise InputError(str(path), f"{value!r} is out of range", line=line, field=name,
                             value=value, expected="an integer that fits in 64 bits")
        # The message already says what was expected; ``expected`` would repeat it.
        raise InputError(str(path), f"{value!r} is not {cells.EXPECTED[kind]}", line=line,
                         field=name, value=value)
