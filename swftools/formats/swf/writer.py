"""SWF writer: strict 18 fields, -1 for unknown, header from table metadata.

The rows are mapped (``mapping.field_fillers``) and formatted (compiled, ``kernels``) one slice at
a time: each slice's values are copied from the table's columns into one field-major buffer and
its text written into another, both allocated once and reused, so that the memory touched stays
small and constant (fresh memory is expensive: page faults). A table read from SWF keeps its
layout and verbatim header, so an unmodified table is written back byte for byte; any other table
gets the Parallel Workloads Archive layout and a generated SWF 2.2 header (see
``swftools.formats.swf.mapping``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools.atomic import atomic_file
from swftools.fileio import gzip_writer, write_behind
from swftools.formats.swf import kernels as swf_kernels
from swftools.formats.swf.fields import FIELDS, PWA_WIDTHS, SwfField
from swftools.formats.swf.header import parse_header, render_header
from swftools.formats.swf.layout import unpack_mask
from swftools.formats.order import in_write_order
from swftools.formats.swf.mapping import (build_header, describe_losses, field_fillers,
                                          id_columns)
from swftools.metadata import TableMetadata

# Rows mapped and formatted at a time: the buffers (~75 bytes a row for the values, ~100 for the
# text) stay in the caches, and memory stays bounded on 10M-job tables.
ROWS_PER_SLICE = 1 << 15


def _decimal_digits(values: np.ndarray, spec: tuple[np.ndarray, int] | None,
                    rows: slice) -> np.ndarray:
    """Per-row decimals to write for a float field (-1 = write as an integer); ``values`` are
    the rows ``rows``; ``spec``: (which rows of the table, how many digits) as the layout
    recorded them."""
    if spec is not None:
        mask, digits = spec
        return np.where(mask[rows], digits, -1).astype(np.int8)
    return np.where(values != np.floor(values), 2, -1).astype(np.int8)


def iter_chunks(table: pa.Table, widths: list[int] | tuple[int, ...] = PWA_WIDTHS,
                decimals: dict[str, Any] | None = None, site: Any = None,
                rows_per_slice: int = ROWS_PER_SLICE, *,
                ids: dict[str, pa.Array | None] | None = None, meta: TableMetadata | None = None,
                buffer_sets: int = 0) -> Iterator[np.ndarray]:
    """The job lines of ``table`` as SWF text, in consecutive byte chunks (uint8 arrays),
    mapped and formatted ``rows_per_slice`` rows at a time (``ids``: ``mapping.id_columns``,
    ``meta``: the table's metadata, when known). With ``buffer_sets`` = n > 0 the chunks are
    views of n sets of buffers, used in turn from one row slice to the next (fresh memory is
    expensive): a chunk stays valid until n - 1 more slices have been taken (1: until the next
    slice, for a consumer that writes each chunk out at once). With 0 each is an array of its
    own."""
    n_rows = table.num_rows
    if n_rows == 0:
        return
    fillers = field_fillers(table, site, ids=ids, meta=meta)
    widths_np = np.asarray(widths, dtype=np.int64)
    specs = {field: (unpack_mask(decimals[str(field.value)]["rows"], n_rows),
                     int(decimals[str(field.value)]["digits"]))
             for field in FIELDS if decimals and str(field.value) in decimals}
    size = max(1, min(rows_per_slice, n_rows))
    ints = np.empty((len(FIELDS), size), dtype=np.int64)
    scaled = np.zeros((len(FIELDS), size), dtype=np.int64)  # written only where decimals are
    digits = np.full((len(FIELDS), size), -1, dtype=np.int8)
    floats = np.empty(size, dtype=np.float64)
    sets: list[list[np.ndarray]] = [[] for _ in range(buffer_sets)]
    for slice_number, begin in enumerate(range(0, n_rows, size)):
        count = min(size, n_rows - begin)
        rows = slice(begin, begin + count)
        for k, (field, fill) in enumerate(zip(FIELDS, fillers)):
            if field is not SwfField.AVERAGE_CPU_TIME_USED:
                fill(begin, ints[k, :count])
                continue
            column = floats[:count]  # the one field with decimals
            fill(begin, column)
            ints[k, :count] = np.rint(column)
            digits[k, :count] = _decimal_digits(column, specs.get(field), rows)
            if (digits[k, :count] >= 0).any():
                scaled[k, :count] = np.rint(column * 10.0 ** np.maximum(digits[k, :count], 0))
        buffers = sets[slice_number % buffer_sets] if buffer_sets else None
        yield from swf_kernels.format_lines(ints, scaled, digits, widths_np, count, buffers)


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


def _header_lines(table: pa.Table, site: Any, meta: TableMetadata) -> list[str]:
    raw = meta.swf_header_lines
    pairs = meta.swf_header
    if raw is not None and pairs is not None and parse_header(raw) == pairs:
        return list(raw)
    if pairs is not None and meta.source_format == "swf":
        return render_header(pairs)
    return render_header(build_header(table, site))


def _content(table: pa.Table, site: Any, ids: dict[str, pa.Array | None] | None = None,
             meta: TableMetadata | None = None,
             buffer_sets: int = 1) -> Iterator[bytes | np.ndarray]:
    """Header bytes followed by the job-line chunks, formatted as they are consumed (into
    ``buffer_sets`` sets of buffers used in turn: see ``iter_chunks``)."""
    meta = meta or TableMetadata.from_table(table)
    layout = meta.swf_layout or {}
    same_rows = layout.get("n_rows") == table.num_rows
    widths = layout.get("widths", PWA_WIDTHS) if same_rows else PWA_WIDTHS
    decimals = layout.get("decimals") if same_rows else None
    yield "".join(f"{line}\n" for line in _header_lines(table, site, meta)).encode("latin-1")
    chunks = iter_chunks(table, widths, decimals, site, ids=ids, meta=meta,
                         buffer_sets=buffer_sets)
    if same_rows and layout.get("other_lines"):
        yield _insert_other_lines(b"".join(c.tobytes() for c in chunks), layout["other_lines"])
        return
    yield from chunks


def _ordered(table: pa.Table, meta: TableMetadata | None = None) -> pa.Table:
    """``table`` in the order its job lines are written: submit order, except a table read from
    SWF, which keeps the file's order (``swftools.formats.order.in_write_order``)."""
    return in_write_order(table, "swf", (meta or TableMetadata.from_table(table)).source_format)


def to_bytes(table: pa.Table, site: Any = None) -> bytes:
    """The complete SWF file content for ``table`` (job lines in submit order: ``_ordered``)."""
    return b"".join(bytes(part) if isinstance(part, bytes) else part.tobytes()
                    for part in _content(_ordered(table), site))


def write(table: pa.Table, path: str | Path, *, site: Any = None, force: bool = False,
          progress: bool = False) -> list[str]:
    """Write ``table`` as SWF (gzip when the path ends in .gz), job lines in submit order
    (``_ordered``); returns the loss report."""
    del progress
    meta = TableMetadata.from_table(table)  # checked once
    table = _ordered(table, meta)
    ids = id_columns(table)  # parsed once for the loss report and the values
    # before writing: errors leave nothing behind
    losses = describe_losses(table, site, ids=ids, meta=meta)
    # two buffer sets: a chunk is written (or compressed) in a second thread while the next is
    # formatted
    parts = _content(table, site, ids, meta, buffer_sets=2)
    with atomic_file(path, force) as tmp:
        with open(tmp, "wb") as raw:
            if str(path).endswith(".gz"):
                with gzip_writer(raw) as gz:
                    write_behind(parts, gz.write)
            else:
                write_behind(parts, raw.write)
    return losses
