"""SWF writer: strict 18 fields, -1 for unknown, header from table metadata.

Whole columns are formatted at once with pyarrow compute (cast to string, left-pad to the column
width, join with single spaces). A table read from SWF keeps its layout and verbatim header, so an
unmodified table is written back byte for byte; any other table gets the Parallel Workloads
Archive layout and a generated SWF 2.2 header (see ``swftools.formats.swf.mapping``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.atomic import atomic_file
from swftools.fileio import gzip_writer
from swftools.formats.swf import kernels as swf_kernels
from swftools.formats.swf.fields import FIELDS, PWA_WIDTHS, SwfField
from swftools.formats.swf.header import parse_header, render_header
from swftools.formats.swf.layout import unpack_mask
from swftools.formats.swf.mapping import (build_header, describe_losses, id_columns,
                                          iter_field_values)
from swftools.metadata import TableMetadata


ROWS_PER_SLICE = 1 << 18  # rows formatted at a time: memory stays bounded on 10M-job tables


def _decimal_digits(values: np.ndarray, field: SwfField, decimals: dict[str, Any] | None,
                    n_rows: int, rows: slice | None = None) -> np.ndarray:
    """Per-row decimals to write for a float field (-1 = write as an integer); ``values`` are
    the rows ``rows`` of an ``n_rows``-row table."""
    if decimals and str(field.value) in decimals:
        spec = decimals[str(field.value)]
        mask = unpack_mask(spec["rows"], n_rows)[rows or slice(None)]
        return np.where(mask, int(spec["digits"]), -1).astype(np.int8)
    return np.where(values != np.floor(values), 2, -1).astype(np.int8)


def iter_chunks(table: pa.Table, widths: list[int] | tuple[int, ...] = PWA_WIDTHS,
                decimals: dict[str, Any] | None = None, site: Any = None,
                rows_per_slice: int = ROWS_PER_SLICE, *,
                ids: dict[str, pa.Array | None] | None = None) -> Iterator[np.ndarray]:
    """The job lines of ``table`` as SWF text, in consecutive byte chunks (uint8 arrays),
    mapped and formatted ``rows_per_slice`` rows at a time (``ids``: ``mapping.id_columns``)."""
    n_rows = table.num_rows
    if n_rows == 0:
        return
    widths_np = np.asarray(widths, dtype=np.int64)
    begin = 0
    for values in iter_field_values(table, site, rows_per_slice, ids=ids):
        count = len(values[0])
        rows = slice(begin, begin + count)
        begin += count
        ints = np.empty((len(FIELDS), count), dtype=np.int64)
        scaled = np.zeros((len(FIELDS), count), dtype=np.int64)
        digits = np.full((len(FIELDS), count), -1, dtype=np.int8)
        for k, (field, array) in enumerate(zip(FIELDS, values)):
            column = jt.to_numpy(array)  # filled with -1: no nulls
            if column.dtype.kind == "f":
                ints[k] = np.rint(column)
                digits[k] = _decimal_digits(column, field, decimals, n_rows, rows)
                if (digits[k] >= 0).any():
                    scaled[k] = np.rint(column * 10.0 ** np.maximum(digits[k], 0))
            else:
                ints[k] = column
        del values
        yield from swf_kernels.format_lines(ints, scaled, digits, widths_np)
        del ints, scaled, digits


def format_chunks(table: pa.Table, widths: list[int] | tuple[int, ...] = PWA_WIDTHS,
                  decimals: dict[str, Any] | None = None, site: Any = None) -> list[np.ndarray]:
    """The job lines of ``table`` as SWF text, in consecutive byte chunks (uint8 arrays)."""
    return list(iter_chunks(table, widths, decimals, site))


def format_lines(table: pa.Table, widths: list[int] | tuple[int, ...] = PWA_WIDTHS,
                 decimals: dict[str, Any] | None = None, site: Any = None) -> bytes:
    """The job lines of ``table`` as SWF text (one line per row, newline-terminated)."""
    return b"".join(chunk.tobytes() for chunk in format_chunks(table, widths, decimals, site))


def _insert_other_lines(body: bytes, other_lines: list[list[Any]]) -> bytes:
    if not other_lines:
        return body
    rows = body.split(b"\n")[:-1]
    out: list[bytes] = []
    pending = sorted(other_lines, key=lambda item: item[0])
    i = 0
    for row_index, row in enumerate(rows + [None]):
        while i < len(pending) and pending[i][0] == row_index:
            out.append(pending[i][1].encode("latin-1"))
            i += 1
        if row is not None:
            out.append(row)
    return b"\n".join(out) + b"\n"


def _header_lines(table: pa.Table, site: Any) -> list[str]:
    meta = TableMetadata.from_table(table)
    raw = meta.swf_header_lines
    pairs = meta.swf_header
    if raw is not None and pairs is not None and parse_header(raw) == pairs:
        return list(raw)
    if pairs is not None and meta.source_format == "swf":
        return render_header(pairs)
    return render_header(build_header(table, site))


def _content(table: pa.Table, site: Any,
             ids: dict[str, pa.Array | None] | None = None) -> Iterator[bytes | np.ndarray]:
    """Header bytes followed by the job-line chunks (formatted as they are consumed)."""
    layout = TableMetadata.from_table(table).swf_layout or {}
    same_rows = layout.get("n_rows") == table.num_rows
    widths = layout.get("widths", PWA_WIDTHS) if same_rows else PWA_WIDTHS
    decimals = layout.get("decimals") if same_rows else None
    yield "".join(f"{line}\n" for line in _header_lines(table, site)).encode("latin-1")
    chunks = iter_chunks(table, widths, decimals, site, ids=ids)
    if same_rows and layout.get("other_lines"):
        yield _insert_other_lines(b"".join(c.tobytes() for c in chunks), layout["other_lines"])
        return
    yield from chunks


def to_bytes(table: pa.Table, site: Any = None) -> bytes:
    """The complete SWF file content for ``table``."""
    return b"".join(bytes(part) if isinstance(part, bytes) else part.tobytes()
                    for part in _content(table, site))


def write(table: pa.Table, path: str | Path, *, site: Any = None, force: bool = False,
          progress: bool = False) -> list[str]:
    """Write ``table`` as SWF (gzip when the path ends in .gz); returns the loss report."""
    del progress
    ids = id_columns(table)  # parsed once for the loss report and the values
    losses = describe_losses(table, site, ids=ids)  # before writing: errors leave nothing behind
    parts = _content(table, site, ids)
    with atomic_file(path, force) as tmp:
        with open(tmp, "wb") as raw:
            if str(path).endswith(".gz"):
                with gzip_writer(raw) as gz:
                    for part in parts:
                        gz.write(part)
            else:
                for part in parts:
                    raw.write(part)
    return losses
