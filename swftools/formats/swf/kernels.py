"""Compiled kernels for SWF job lines (numba): tokenize+parse, and format.

Parsing 450,000 lines is ~8 million tokens; numpy needs a dozen passes over the bytes for the
same work, and pandas' C tokenizer does not report column positions (needed for the byte-exact
layout). One compiled pass does both. The kernels release the GIL, so ``tokenize`` and
``format_lines`` split the rows into one chunk per core and run the chunks in threads.
Kernels are cached on disk after the first call.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

# Error kinds reported by ``tokenize`` (first offending line only).
OK, TOO_FEW, BAD_CHAR, TOO_LONG = 0, 1, 2, 3
MAX_DIGITS = 18  # digits before (or after) the point that fit an int64 exactly
_MIN_CHUNK_BYTES = 4 << 20  # below these sizes, threads cost more than they save
_MIN_CHUNK_ROWS = 50_000


def _workers() -> int:
    return max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1), 8))


@njit(cache=True, nogil=True)
def _tokenize_chunk(buf, first_line, ints, floats, frac, extra, pads, flags, error):  # pragma: no cover - compiled
    """Parse the lines of ``buf`` into rows ``first_line...`` of the field-major outputs.

    ``floats`` and ``frac`` are written only for tokens with a decimal point. ``pads[:, k]`` =
    (smallest padded width, smallest and largest padded width among tokens with padding beyond
    the one separator) of field k: a file follows fixed widths exactly when every padded token
    has the field's smallest width (see ``layout_from_pads``). ``flags`` = (tabs or CR seen,
    trailing blanks seen, max extra fields); ``error`` = (kind, row, field) of the first bad line.
    """
    n_fields = ints.shape[0]
    line = first_line
    field = 0
    chunk_start = 0  # where the current field's padding began
    i = 0
    n = len(buf)
    while i < n:
        c = buf[i]
        if c == 10:
            if field < n_fields:
                error[0] = TOO_FEW
                error[1] = line
                error[2] = field
                return
            if i > 0 and (buf[i - 1] == 32 or buf[i - 1] == 9 or buf[i - 1] == 13):
                flags[1] = 1
            line += 1
            field = 0
            i += 1
            chunk_start = i
            continue
        if c == 32 or c == 9 or c == 13:
            if c != 32:
                flags[0] = 1
            i += 1
            continue
        start = i
        neg = False
        if c == 45:  # '-'
            neg = True
            i += 1
        value = 0
        digits = 0
        fdigits = -1
        fvalue = 0
        fscale = 1.0
        bad = False
        while i < n:
            c = buf[i]
            if c == 10 or c == 32 or c == 9 or c == 13:
                break
            if 48 <= c <= 57:
                if fdigits >= 0:
                    fvalue = fvalue * 10 + (c - 48)
                    fscale *= 10.0
                    fdigits += 1
                else:
                    value = value * 10 + (c - 48)
                digits += 1
            elif c == 46 and fdigits < 0:
                fdigits = 0
            else:
                bad = True
            i += 1
        if field < n_fields:
            if bad or digits == 0 or digits - max(fdigits, 0) > MAX_DIGITS or fdigits > MAX_DIGITS:
                error[0] = TOO_LONG if not bad and digits else BAD_CHAR
                error[1] = line
                error[2] = field
                return
            sign = -1 if neg else 1
            ints[field, line] = sign * value
            if fdigits >= 0:
                frac[field, line] = fdigits
                floats[field, line] = sign * (value + fvalue / fscale)
            width = i - chunk_start
            if width < pads[0, field]:
                pads[0, field] = width
            if width > i - start:
                if width < pads[1, field]:
                    pads[1, field] = width
                if width > pads[2, field]:
                    pads[2, field] = width
        else:
            extra[line] += 1
            if extra[line] > flags[2]:
                flags[2] = extra[line]
        field += 1
        chunk_start = i + 1


def _chunks(body: bytes, parts: int) -> list[tuple[int, int, int]]:
    """(byte start, byte end, first line) of up to ``parts`` newline-aligned chunks."""
    bounds = [0]
    for k in range(1, parts):
        cut = body.find(b"\n", len(body) * k // parts)
        if cut < 0 or cut + 1 <= bounds[-1]:
            break
        bounds.append(cut + 1)
    bounds.append(len(body))
    out, line = [], 0
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b > a:
            out.append((a, b, line))
            line += body.count(b"\n", a, b)
    return out


def tokenize(body: bytes, n_fields: int):
    """Parse newline-terminated SWF job lines, ``n_fields`` numbers each (extra fields skipped).

    Returns field-major arrays ints[f, n], floats[f, n] (valid where frac >= 0) and frac[f, n]
    (-1 = no '.'), then extra_per_line[n], pads[3, f] (see ``_tokenize_chunk``), flags[3] and
    error[3] (kind, row, field; kind OK when every line parsed).
    """
    parts = _workers() if len(body) >= 2 * _MIN_CHUNK_BYTES else 1
    chunks = _chunks(body, parts)
    n_lines = chunks[-1][2] + body.count(b"\n", chunks[-1][0]) if chunks else 0
    ints = np.empty((n_fields, n_lines), np.int64)
    floats = np.empty((n_fields, n_lines), np.float64)  # pages are touched only for decimals
    frac = np.full((n_fields, n_lines), -1, np.int8)
    extra = np.zeros(n_lines, np.int32)
    buf = np.frombuffer(body, dtype=np.uint8)
    big = np.iinfo(np.int64).max
    pads = np.empty((len(chunks), 3, n_fields), np.int64)
    pads[:, 0:2, :] = big
    pads[:, 2, :] = -1
    flags = np.zeros((len(chunks), 3), np.int64)
    errors = np.zeros((len(chunks), 3), np.int64)

    def run(k: int) -> None:
        a, b, first = chunks[k]
        _tokenize_chunk(buf[a:b], first, ints, floats, frac, extra, pads[k], flags[k], errors[k])

    if len(chunks) > 1:
        with ThreadPoolExecutor(len(chunks)) as pool:
            list(pool.map(run, range(len(chunks))))
    elif chunks:
        run(0)
    failed = [e for e in errors if e[0]]
    error = min(failed, key=lambda e: e[1]) if failed else np.zeros(3, np.int64)
    flag = flags.max(axis=0) if len(chunks) else np.zeros(3, np.int64)
    merged = np.array([pads[:, 0].min(axis=0) if len(chunks) else np.full(n_fields, big),
                       pads[:, 1].min(axis=0) if len(chunks) else np.full(n_fields, big),
                       pads[:, 2].max(axis=0) if len(chunks) else np.full(n_fields, -1)])
    return ints, floats, frac, extra, merged, flag, error


def layout_from_pads(pads: np.ndarray) -> tuple[list[int], bool]:
    """Column widths (smallest padded width; 1 when there are no lines) and whether every line
    follows them exactly: a token wider than its field keeps one separator, and every token with
    more padding is padded to exactly the field's width."""
    big = np.iinfo(np.int64).max
    widths = np.where(pads[0] == big, 1, pads[0])
    padded_ok = (pads[2] < 0) | ((pads[1] == widths) & (pads[2] == widths))
    return [int(w) for w in widths], bool(padded_ok.all())


@njit(cache=True, nogil=True)
def _int_len(v):  # pragma: no cover - compiled
    length = 1
    if v < 0:
        length += 1
        v = -v
    bound = 10
    while v >= bound and length < 19:  # comparisons, not divisions
        length += 1
        bound *= 10
    return length


@njit(cache=True, nogil=True)
def _field_len(ints, scaled, dec_digits, k, r):  # pragma: no cover - compiled
    d = dec_digits[k, r]
    if d >= 0:
        v = scaled[k, r]
        a = -v if v < 0 else v
        return max(_int_len(a), d + 1) + 1 + (1 if v < 0 else 0)
    return _int_len(ints[k, r])


@njit(cache=True, nogil=True)
def _format_rows(ints, scaled, dec_digits, widths, r0, r1):  # pragma: no cover - compiled
    """SWF text of rows [r0, r1) of the field-major ``ints`` [f, n]; where ``dec_digits[k, r] >= 0``
    the field is written as fixed point from ``scaled`` (value x 10**digits) with that many decimals."""
    n_fields = ints.shape[0]
    total = 0
    for r in range(r0, r1):
        for k in range(n_fields):
            total += max(_field_len(ints, scaled, dec_digits, k, r), widths[k]) + 1
    out = np.empty(total, np.uint8)
    pos = 0
    for r in range(r0, r1):
        for k in range(n_fields):
            length = _field_len(ints, scaled, dec_digits, k, r)
            for _ in range(widths[k] - length):
                out[pos] = 32
                pos += 1
            d = dec_digits[k, r]
            if d >= 0:
                v = scaled[k, r]
                if v < 0:
                    out[pos] = 45
                    pos += 1
                    v = -v
                ilen = max(_int_len(v), d + 1)
                # ilen digits of v, zero-padded, with '.' before the last d of them
                for m in range(ilen):
                    digit = v % 10
                    v //= 10
                    out[pos + ilen - m - (0 if m < d else 1)] = 48 + digit
                out[pos + ilen - d] = 46
                pos += ilen + 1
            else:
                v = ints[k, r]
                end = pos + length
                if v < 0:
                    out[pos] = 45
                    v = -v
                j = end - 1
                while True:
                    out[j] = 48 + v % 10
                    v //= 10
                    j -= 1
                    if v == 0:
                        break
                pos = end
            out[pos] = 32 if k < n_fields - 1 else 10
            pos += 1
    return out


def format_lines(ints, scaled, dec_digits, widths) -> list[np.ndarray]:
    """SWF text of every row, as consecutive byte chunks (one per worker thread)."""
    n_rows = ints.shape[1]
    parts = _workers() if n_rows >= 2 * _MIN_CHUNK_ROWS else 1
    bounds = [n_rows * k // parts for k in range(parts + 1)]
    spans = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    if len(spans) <= 1:
        return [_format_rows(ints, scaled, dec_digits, widths, 0, n_rows)]
    with ThreadPoolExecutor(len(spans)) as pool:
        return list(pool.map(lambda s: _format_rows(ints, scaled, dec_digits, widths, *s), spans))
