"""Standard Workload Format (SWF 2.2) reader; the writer is ``swftools.formats.swf.writer``.

The reader works on whole columns: the job lines are tokenized with numpy, normalized to single
spaces and parsed by pyarrow's CSV reader. It records the file's layout (per-column minimum width,
which rows wrote decimals) as table metadata so that the writer reproduces the file byte for byte;
when that is impossible (tabs, trailing blanks, irregular spacing) the layout says why.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools import __version__
from swftools import table as jt
from swftools.errors import InputError
from swftools.formats.swf import kernels as swf_kernels
from swftools.formats.swf.fields import FIELDS, PWA_WIDTHS, SwfField
from swftools.formats.swf.header import header_int, parse_header
from swftools.formats.swf.layout import pack_mask

N_FIELDS = len(FIELDS)
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Fields the SWF definition allows to be fractional: the time fields.
FRACTIONAL_FIELDS = (SwfField.SUBMIT_TIME, SwfField.WAIT_TIME, SwfField.RUN_TIME,
                     SwfField.AVERAGE_CPU_TIME_USED, SwfField.REQUESTED_TIME,
                     SwfField.THINK_TIME_FROM_PRECEDING_JOB)


def read_bytes(path: str | Path) -> bytes:
    """The decompressed content of a (possibly gzip) file; clear errors for corrupt input."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as exc:
            raise InputError(str(path), f"truncated or corrupt gzip data ({exc})",
                             expected="a complete gzip file") from None
    return data


def _check_text(path: str, data: bytes, header_end: int) -> None:
    """Empty files and binary headers are refused here; binary job lines fail in the tokenizer."""
    if not data or data.isspace():
        raise InputError(str(path), "empty file", expected="SWF header comments and job lines")
    control = _CONTROL.search(data, 0, header_end)
    if control:
        bad = control.start()
        line = data.count(b"\n", 0, bad) + 1
        raise InputError(str(path), f"binary data (byte 0x{data[bad]:02x} at offset {bad}); "
                         "this is not an SWF text file", line=line, expected="ASCII text")


def _split_header(data: bytes) -> tuple[list[str], bytes, int]:
    """Split the leading ';' comment block from the job lines; returns (lines, body, count)."""
    lines: list[str] = []
    pos = 0
    while pos < len(data) and data.startswith(b";", pos):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        lines.append(data[pos:end].decode("latin-1"))
        pos = end + 1
    return lines, data[pos:], len(lines)


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


def _decimals(frac: np.ndarray, reasons: list[str]) -> dict[str, Any]:
    """Which rows write each field with decimals, and how many digits."""
    out: dict[str, Any] = {}
    for k in np.flatnonzero((frac >= 0).any(axis=1)):
        column = frac[k]
        mask = column >= 0
        digits = np.unique(column[mask])
        if len(digits) > 1:
            reasons.append(f"field {k + 1} mixes {sorted(int(d) for d in digits)} decimals")
        out[str(int(k) + 1)] = {"digits": int(digits.max()), "rows": pack_mask(mask)}
    return out


def _layout(pads: np.ndarray, flags: np.ndarray) -> dict[str, Any]:
    """Per-column minimum widths and whether every line follows them exactly."""
    widths, aligned = swf_kernels.layout_from_pads(pads)
    reasons = []
    if flags[0]:
        reasons.append("tabs or carriage returns between fields")
    if not aligned:
        reasons.append("fields are not right-aligned to fixed column widths")
    if flags[1]:
        reasons.append("trailing blanks after the last field")
    return {"widths": widths, "reasons": reasons}


def _tokenize_error(path: str, body: bytes, error: np.ndarray, row_lines: np.ndarray) -> InputError:
    kind, row, k = (int(x) for x in error)
    lines = body.split(b"\n")
    text = lines[row].decode("latin-1")
    tokens = text.split()
    line = int(row_lines[row])
    if kind == swf_kernels.TOO_FEW:
        return InputError(path, f"expected {N_FIELDS} fields, found {len(tokens)}", line=line,
                          expected=f"{N_FIELDS} whitespace-separated numbers")
    value = tokens[k]
    if _CONTROL.search(value.encode("latin-1")):
        return InputError(path, "binary data in a job line; this is not an SWF text file",
                          line=line, expected="ASCII text")
    return InputError(path, f"{value!r} is not a number", line=line, field=FIELDS[k].label,
                      value=value, expected="a number (-1 if unknown)")


def _float_column(ints: np.ndarray, floats: np.ndarray, frac: np.ndarray, k: int) -> np.ndarray:
    """Field ``k`` as float64: the integer parse, with the decimal tokens' exact values."""
    column = ints[k].astype(np.float64)
    decimal = frac[k] >= 0
    column[decimal] = floats[k][decimal]
    return column


def _check_negative(path: str, ints: np.ndarray, floats: np.ndarray, frac: np.ndarray,
                    row_lines: np.ndarray) -> None:
    bad = ints < -1
    for k in np.flatnonzero((frac >= 0).any(axis=1)):  # '-0.5' parses to an integer part of 0
        values = _float_column(ints, floats, frac, int(k))
        bad[k] |= (values < 0) & (values != -1)
    if bad.any():
        k, row = (int(x) for x in np.argwhere(bad)[0])
        value = f"{_float_column(ints, floats, frac, k)[row]:g}"
        raise InputError(path, f"negative value {value}", line=int(row_lines[row]),
                         field=FIELDS[k].label, value=value,
                         expected="a value >= 0, or -1 for unknown")


def _column(values: np.ndarray) -> pa.Array:
    return pa.array(values, mask=values == -1)


def read(path: str | Path, *, site: Any = None, progress: bool = False) -> pa.Table:
    """Read an SWF file (plain or .gz) into the canonical job table, keeping header and layout."""
    del site, progress  # SWF carries its own header; reading is a single bulk pass
    name = str(path)
    data = read_bytes(path)
    header_lines, body, n_header = _split_header(data)
    _check_text(name, data, len(data) - len(body))
    reasons: list[str] = []
    if body and not body.endswith(b"\n"):
        reasons.append("no newline at the end of the file")
        body += b"\n"
    other_lines: list[list[Any]] = []
    ints, floats, frac, extra, pads, flags, error = swf_kernels.tokenize(body, N_FIELDS)
    if error[0] and _comment_or_blank(body, int(error[1])):
        # comment or blank lines among the jobs (rare): set them aside, remember where they stood
        body, other_lines = _extract_comment_lines(body)
        ints, floats, frac, extra, pads, flags, error = swf_kernels.tokenize(body, N_FIELDS)
    n_rows = ints.shape[1]
    row_lines = np.arange(n_rows, dtype=np.int64) + n_header + 1
    for row_before, _ in other_lines:
        row_lines[row_before:] += 1
    if error[0]:
        raise _tokenize_error(name, body, error, row_lines)
    metadata: dict[str, Any] = {}
    if flags[2]:
        rows_extra = np.flatnonzero(extra)
        metadata["swf_extra_columns"] = {"count": int(flags[2]), "lines": int(len(rows_extra)),
                                         "first_line": int(row_lines[rows_extra[0]])}
        reasons.append(f"{len(rows_extra)} job lines have more than {N_FIELDS} fields "
                       "(extra fields dropped)")
    layout = _layout(pads, flags)
    reasons = layout.pop("reasons") + reasons
    layout["decimals"] = _decimals(frac, reasons)
    _check_negative(name, ints, floats, frac, row_lines)
    pairs = parse_header(header_lines)
    origin = header_int(pairs, "UnixStartTime")
    values: dict[str, Any] = {}
    for k, field in enumerate(FIELDS):
        has_frac = bool((frac[k] >= 0).any()) if n_rows else False
        if field is SwfField.AVERAGE_CPU_TIME_USED:
            col = _float_column(ints, floats, frac, k)
            values[field.column] = pa.array(col, mask=col == -1.0)
            continue
        if has_frac:
            if field not in FRACTIONAL_FIELDS:
                reasons.append(f"{field.label} holds decimals in a count field")
            exact = _float_column(ints, floats, frac, k)
            rounded = np.rint(exact).astype(np.int64)
            if np.any(rounded != exact):
                reasons.append(f"{field.label}: fractional values rounded to whole seconds")
            values[field.column] = _column(rounded)
        else:
            values[field.column] = _column(ints[k])
    del ints, floats, frac
    job_ids = values["job_id"]
    if job_ids.null_count:
        row = int(np.flatnonzero(np.asarray(pc.is_null(job_ids)))[0])
        raise InputError(name, "job number -1", line=int(row_lines[row]),
                         field=SwfField.JOB_ID.label, value="-1", expected="a job number >= 0")
    for key in ("user", "group", "queue"):
        values[key] = pc.cast(values[key], pa.string())
    if origin is not None:
        values["submit_time"] = pc.add(values["submit_time"], origin)
    values["start_time"] = pc.add(values["submit_time"], values["wait_s"])
    values["finish_time"] = pc.add(values["start_time"], values["walltime_s"])
    layout.update({"exact": not reasons, "reasons": reasons, "n_rows": n_rows,
                   "other_lines": other_lines})
    metadata.update({
        "source_file": Path(name).name,
        "source_format": "swf",
        "converter_version": f"swftools {__version__}",
        "swf_header": pairs,
        "swf_header_lines": header_lines,
        "swf_layout": layout,
        "swf_time_origin": origin,
        "swf_first_line": n_header + 1,
    })
    tz = next((v for k, v in pairs if k.lower() == "timezonestring"), None)
    if tz:
        metadata["time_zone"] = tz
    return jt.from_columns(values, metadata)


def row_line_numbers(table: pa.Table) -> np.ndarray:
    """File line (1-based) of every row of a table read from SWF (row + 1 when unknown)."""
    meta = jt.get_metadata(table)
    first = meta.get("swf_first_line", 1)
    lines = np.arange(table.num_rows, dtype=np.int64) + first
    for row_before, _ in meta.get("swf_layout", {}).get("other_lines", []):
        lines[row_before:] += 1
    return lines


__all__ = ["PWA_WIDTHS", "read", "read_bytes", "row_line_numbers"]
