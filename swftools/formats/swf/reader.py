"""Standard Workload Format (SWF 2.2) reader; the writer is ``swftools.formats.swf.writer``.

The job lines are parsed in one compiled pass (``kernels.tokenize``) straight from the file's
pages (a plain file is memory-mapped, not copied) into field-major int64 rows that become the
table's columns without a copy. The reader records the file's layout (per-column minimum width,
which rows wrote decimals) as table metadata so that the writer reproduces the file byte for byte;
when that is impossible (tabs, trailing blanks, irregular spacing) the layout says why.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import __version__
from swftools import table as jt
from swftools.errors import NO_JOB_ROWS, NO_JOB_ROWS_EXPECTED, InputError
from swftools.formats.inputs import read_bytes  # gzip by content; also swf.read_bytes
from swftools.formats.swf import kernels as swf_kernels
from swftools.formats.swf.fields import FIELDS, PWA_WIDTHS, SwfField
from swftools.formats.swf.header import header_int, parse_header
from swftools.formats.swf.layout import pack_mask
from swftools.metadata import TableMetadata

N_FIELDS = len(FIELDS)
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BLANK = re.compile(rb"\s*")
# Fields the SWF definition allows to be fractional: the time fields.
FRACTIONAL_FIELDS = (SwfField.SUBMIT_TIME, SwfField.WAIT_TIME, SwfField.RUN_TIME,
                     SwfField.AVERAGE_CPU_TIME_USED, SwfField.REQUESTED_TIME,
                     SwfField.THINK_TIME_FROM_PRECEDING_JOB)


def _check_text(path: str, data: bytes, header_end: int) -> None:
    """Empty files and binary headers are refused here; binary job lines fail in the tokenizer.
    (``data``: the file's bytes; no input is memory-mapped, see ``inputs.read_bytes``.)"""
    if _BLANK.fullmatch(data):
        raise InputError(str(path), "empty file", expected="SWF header comments and job lines")
    control = _CONTROL.search(data, 0, header_end)
    if control:
        bad = control.start()
        line = data[:bad].count(b"\n") + 1
        raise InputError(str(path), f"binary data (byte 0x{data[bad]:02x} at offset {bad}); "
                         "this is not an SWF text file", line=line, expected="ASCII text")


def _split_header(data: bytes) -> tuple[list[str], int]:
    """The leading ';' comment block: (its lines, the offset where the job lines start)."""
    lines: list[str] = []
    pos = 0
    while pos < len(data) and data[pos:pos + 1] == b";":
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        lines.append(data[pos:end].decode("latin-1"))
        pos = end + 1
    return lines, min(pos, len(data))


def _comment_or_blank(body: bytes, row: int) -> bool:
    """Whether job-line ``row`` of ``body`` is really a comment or a blank line."""
    line = body.split(b"\n", row + 1)[row].strip()
    return not line or line.startswith(b";")


def _extract_comment_lines(body: bytes) -> tuple[bytes, list[list[Any]]]:
    """Remove comment and blank lines found among job lines; remember where they stood."""
    kept: list[bytes] = []
    others: list[list[Any]] = []
    for raw in body.split(b"\n")[:-1] if body.endswith(b"\n") else body.split(b"\n"):
        stripped = raw.strip()
        if not stripped or stripped.startswith(b";"):
            others.append([len(kept), raw.decode("latin-1")])
        else:
            kept.append(raw)
    return b"\n".join(kept) + b"\n" if kept else b"", others


def _decimals(point: np.ndarray, stats: np.ndarray, reasons: list[str]) -> dict[str, Any]:
    """Which rows write each field with decimals, and how many digits."""
    out: dict[str, Any] = {}
    for k in np.flatnonzero(stats[swf_kernels.DECIMAL_TOKENS]):
        mask = point[k] > 0
        digits = np.unique(point[k][mask]) - 1
        if len(digits) > 1:
            reasons.append(f"field {k + 1} mixes {sorted(int(d) for d in digits)} decimals")
        out[str(int(k) + 1)] = {"digits": int(digits.max()), "rows": pack_mask(mask)}
    return out


def _layout(stats: np.ndarray, flags: np.ndarray) -> dict[str, Any]:
    """Per-column minimum widths and whether every line follows them exactly."""
    widths, aligned = swf_kernels.layout_from_pads(stats[0:3])
    reasons = []
    if flags[swf_kernels.TABS]:
        reasons.append("tabs or carriage returns between fields")
    if not aligned:
        reasons.append("fields are not right-aligned to fixed column widths")
    if flags[swf_kernels.TRAILING_BLANKS]:
        reasons.append("trailing blanks after the last field")
    return {"widths": widths, "reasons": reasons}


def _line_tokens(body: bytes, row: int) -> list[str]:
    """The fields of job line ``row`` of ``body``, split as the tokenizer splits them (bytes, on
    blanks, tabs and CRs), as latin-1 text (for messages)."""
    raw = body.split(b"\n", row + 1)[row]
    return [t.decode("latin-1") for t in re.split(rb"[ \t\r]+", raw) if t]


def _tokenize_error(path: str, body: bytes, error: np.ndarray, row_lines: np.ndarray) -> InputError:
    kind, row, k = (int(x) for x in error)
    tokens = _line_tokens(body, row)
    line = int(row_lines[row])
    if kind == swf_kernels.TOO_FEW:
        return InputError(path, f"expected {N_FIELDS} fields, found {len(tokens)}", line=line,
                          expected=f"{N_FIELDS} whitespace-separated numbers")
    value = tokens[k]
    if _CONTROL.search(value.encode("latin-1")):
        return InputError(path, "binary data in a job line; this is not an SWF text file",
                          line=line, expected="ASCII text")
    value = value.encode("latin-1").decode("utf-8", "replace")  # show non-ASCII as written
    if kind == swf_kernels.TOO_LONG:
        return InputError(path, f"{value!r} is too long for a number", line=line,
                          field=FIELDS[k].label, value=value,
                          expected=f"at most {swf_kernels.MAX_DIGITS} digits before and after "
                                   "the decimal point")
    return InputError(path, f"{value!r} is not a number", line=line, field=FIELDS[k].label,
                      value=value, expected="a number (-1 if unknown)")


def _float_column(ints: np.ndarray, floats: np.ndarray, point: np.ndarray, k: int) -> np.ndarray:
    """Field ``k`` as float64: the integer parse, with the decimal tokens' exact values."""
    column = ints[k].astype(np.float64)
    decimal = point[k] > 0
    column[decimal] = floats[k][decimal]
    return column


def _check_negative(path: str, ints: np.ndarray, floats: np.ndarray, point: np.ndarray,
                    row_lines: np.ndarray) -> None:
    """Raise for the first value below 0 other than -1 (by field, then row)."""
    bad = ints < -1
    for k in np.flatnonzero((point > 0).any(axis=1)):  # '-0.5' parses to an integer part of 0
        values = _float_column(ints, floats, point, int(k))
        bad[k] |= (values < 0) & (values != -1)
    if bad.any():
        k, row = (int(x) for x in np.argwhere(bad)[0])
        value = f"{_float_column(ints, floats, point, k)[row]:g}"
        raise InputError(path, f"negative value {value}", line=int(row_lines[row]),
                         field=FIELDS[k].label, value=value,
                         expected="a value >= 0, or -1 for unknown")


def _not_integer(path: str, body: bytes, point: np.ndarray, k: int,
                 row_lines: np.ndarray) -> InputError:
    """The error for the first decimal token in count field ``k`` (SWF allows decimals only in
    the time fields and the average CPU time)."""
    row = int(np.flatnonzero(point[k] > 0)[0])
    value = _line_tokens(body, row)[k]
    return InputError(path, f"{value!r} is not an integer", line=int(row_lines[row]),
                      field=FIELDS[k].label, value=value,
                      expected="a whole number, -1 if unknown; SWF allows decimals only in the "
                               "time fields and the average CPU time")


def _unknown(values: np.ndarray, count: int) -> np.ndarray | bool | None:
    """Which of a field's values are -1 (``count`` of them): a mask, or True for all, None
    for none (``table.from_numpy``'s ``null``)."""
    if count == 0:
        return None
    return True if count == len(values) else values == -1


def _either(a: np.ndarray | bool | None, b: np.ndarray | bool | None) -> np.ndarray | bool | None:
    """Rows unknown in ``a`` or ``b`` (``_unknown`` masks)."""
    if a is None or b is None:
        return b if a is None else a
    return True if a is True or b is True else a | b


def _sum(values: np.ndarray, null: np.ndarray | bool | None, add: np.ndarray | int,
         add_null: np.ndarray | bool | None = None) -> tuple[np.ndarray, Any]:
    """(values + add, its unknown rows): an absolute time from an offset or a duration."""
    null = _either(null, add_null)
    if null is True:  # no value at all: memory never touched
        return np.zeros(len(values), np.int64), True
    if isinstance(add, int) and add == 0:
        return values, null
    return values + add, null


def _id_text(ints: np.ndarray, column: pa.Array) -> pa.Array:
    """The user, group or queue numbers ``ints`` (``column``: them as Arrow, -1 null) as the
    job table's text."""
    if column.null_count == len(column):
        return jt.nulls(len(column), pa.string())
    try:
        offsets, data = swf_kernels.int_strings(ints)
    except ValueError:  # beyond int32 offsets
        import pyarrow.compute as pc

        return pc.cast(column, pa.string())
    return pa.Array.from_buffers(pa.string(), len(column), [column.buffers()[0],
                                 pa.py_buffer(offsets), pa.py_buffer(data)],
                                 null_count=column.null_count)


def _row_lines(n_rows: int, n_header: int, other_lines: list[list[Any]]) -> np.ndarray:
    """The file line of every job row (for messages)."""
    row_lines = np.arange(n_rows, dtype=np.int64) + n_header + 1
    for row_before, _ in other_lines:
        row_lines[row_before:] += 1
    return row_lines


def read(path: str | Path, *, site: Any = None, progress: bool = False,
         allow_empty: bool = False) -> pa.Table:
    """Read an SWF file (plain or .gz) into the canonical job table, keeping header and layout.

    A file without job lines is an error unless ``allow_empty``.
    """
    del site, progress  # SWF carries its own header; reading is a single bulk pass
    name = str(path)
    data = read_bytes(path)  # read, not mapped: a map dies with SIGBUS if the file is truncated
    header_lines, start = _split_header(data)  # the job lines are data[start:] (not copied)
    n_header = len(header_lines)
    _check_text(name, data, start)
    reasons: list[str] = []
    if len(data) > start and data[-1:] != b"\n":
        reasons.append("no newline at the end of the file")
        data = data[:] + b"\n"
    other_lines: list[list[Any]] = []
    ints, floats, point, extra, stats, flags, error = swf_kernels.tokenize(data, N_FIELDS, start)
    if error[0] and _comment_or_blank(data[start:], int(error[1])):
        # comment or blank lines among the jobs (rare): set them aside, remember where they stood
        data, other_lines = _extract_comment_lines(data[start:])
        start = 0
        ints, floats, point, extra, stats, flags, error = swf_kernels.tokenize(data, N_FIELDS)
    n_rows = ints.shape[1]
    if n_rows == 0 and not allow_empty:
        raise InputError(name, NO_JOB_ROWS, line=n_header or None, expected=NO_JOB_ROWS_EXPECTED)

    def row_lines() -> np.ndarray:
        return _row_lines(n_rows, n_header, other_lines)

    if error[0]:
        raise _tokenize_error(name, data[start:], error, row_lines())
    extra_columns = None
    if flags[swf_kernels.EXTRA_FIELDS]:
        rows_extra = np.flatnonzero(extra)
        extra_columns = {"count": int(flags[swf_kernels.EXTRA_FIELDS]),
                         "lines": int(len(rows_extra)),
                         "first_line": int(row_lines()[rows_extra[0]])}
        reasons.append(f"{len(rows_extra)} job lines have more than {N_FIELDS} fields "
                       "(extra fields dropped)")
    layout = _layout(stats, flags)
    reasons = layout.pop("reasons") + reasons
    layout["decimals"] = _decimals(point, stats, reasons)
    if flags[swf_kernels.NEGATIVE]:
        _check_negative(name, ints, floats, point, row_lines())
    pairs = parse_header(header_lines)
    origin = header_int(pairs, "UnixStartTime")
    unknown = stats[swf_kernels.UNKNOWN_TOKENS]
    numbers: list[np.ndarray] = []  # each field's values, -1 for unknown
    for k, field in enumerate(FIELDS):
        if field is SwfField.AVERAGE_CPU_TIME_USED:  # all unknown: memory never touched
            numbers.append(np.zeros(n_rows) if unknown[k] == n_rows else
                           _float_column(ints, floats, point, k))
        elif stats[swf_kernels.DECIMAL_TOKENS, k]:
            if field not in FRACTIONAL_FIELDS:
                raise _not_integer(name, data[start:], point, k, row_lines())
            exact = _float_column(ints, floats, point, k)
            numbers.append(np.rint(exact).astype(np.int64))
            if np.any(numbers[-1] != exact):
                reasons.append(f"{field.label}: fractional values rounded to whole seconds")
            else:  # '10.0' is written back as '10'
                reasons.append(f"{field.label}: decimal points dropped (whole seconds)")
        else:
            numbers.append(ints[k])
    if unknown[0]:
        row = int(np.argmax(ints[0] == -1))
        raise InputError(name, "job number -1", line=int(row_lines()[row]),
                         field=SwfField.JOB_ID.label, value="-1", expected="a job number >= 0")
    nulls = [_unknown(values, count) for values, count in zip(numbers, unknown)]
    columns = {field.column: jt.from_numpy(values, null)
               for field, values, null in zip(FIELDS, numbers, nulls)}
    for field in (SwfField.USER_ID, SwfField.GROUP_ID, SwfField.QUEUE_ID):
        columns[field.column] = _id_text(ints[field - 1], columns[field.column])
    # the job table's absolute times: submit (the header's origin + field 2), start, finish
    submit, wait, run = (SwfField.SUBMIT_TIME - 1, SwfField.WAIT_TIME - 1, SwfField.RUN_TIME - 1)
    times = {"submit_time": _sum(numbers[submit], nulls[submit], origin or 0)}
    times["start_time"] = _sum(*times["submit_time"], numbers[wait], nulls[wait])
    times["finish_time"] = _sum(*times["start_time"], numbers[run], nulls[run])
    columns.update({key: jt.from_numpy(*time) for key, time in times.items()})
    del ints, floats, point, numbers
    layout.update({"exact": not reasons, "reasons": reasons, "n_rows": n_rows,
                   "other_lines": other_lines})
    tz = next((v for k, v in pairs if k.lower() == "timezonestring"), None)
    metadata = TableMetadata(
        source_file=Path(name).name, source_format="swf",
        converter_version=f"swftools {__version__}", time_zone=tz or None,
        swf_header=pairs, swf_header_lines=header_lines, swf_layout=layout,
        swf_time_origin=origin, swf_first_line=n_header + 1, swf_extra_columns=extra_columns)
    return jt.from_columns(columns, metadata)


def row_line_numbers(table: pa.Table) -> np.ndarray:
    """File line (1-based) of every row of a table read from SWF (row + 1 when unknown)."""
    meta = TableMetadata.from_table(table)
    first = meta.swf_first_line if meta.swf_first_line is not None else 1
    lines = np.arange(table.num_rows, dtype=np.int64) + first
    for row_before, _ in (meta.swf_layout or {}).get("other_lines", []):
        lines[row_before:] += 1
    return lines


__all__ = ["PWA_WIDTHS", "read", "read_bytes", "row_line_numbers"]
