"""Compiled single-pass kernels for SWF job lines (numba): tokenize+parse, and format.

Parsing 450,000 lines is ~8 million tokens; numpy needs a dozen passes over the bytes for the
same work, and pandas' C tokenizer does not report column positions (needed for the byte-exact
layout). One compiled pass does both. Kernels are cached on disk after the first call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Error kinds reported by ``tokenize`` (first offending line only).
OK, TOO_FEW, BAD_CHAR = 0, 1, 2


@njit(cache=True, nogil=True)
def tokenize(buf, n_fields):  # pragma: no cover - compiled
    """Parse whitespace-separated numbers, ``n_fields`` per line (extra fields are skipped).

    Arrays are field-major. Returns (int_values[f, n], float_values[f, n], frac_digits[f, n]
    (-1 = no '.'), padded[f, n], tok_len[f, n], extra_per_line[n], flags[3], error[3]) where flags =
    (tabs or CR seen, trailing blanks seen, max extra fields) and error = (kind, line, field).
    """
    n_lines = 0
    for b in buf:
        if b == 10:
            n_lines += 1
    ints = np.empty((n_fields, n_lines), np.int64)
    floats = np.empty((n_fields, n_lines), np.float64)
    frac = np.full((n_fields, n_lines), -1, np.int8)
    padded = np.empty((n_fields, n_lines), np.int32)
    tok_len = np.empty((n_fields, n_lines), np.int32)
    extra = np.zeros(n_lines, np.int32)
    flags = np.zeros(3, np.int64)
    error = np.zeros(3, np.int64)
    line = 0
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
                return ints, floats, frac, padded, tok_len, extra, flags, error
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
        # a token starts at i
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
        if bad or digits == 0:
            if field < n_fields:
                error[0] = BAD_CHAR
                error[1] = line
                error[2] = field
                return ints, floats, frac, padded, tok_len, extra, flags, error
        if field < n_fields:
            sign = -1 if neg else 1
            ints[field, line] = sign * value
            if fdigits >= 0:
                frac[field, line] = fdigits
                floats[field, line] = sign * (value + fvalue / fscale)
            else:
                floats[field, line] = sign * value
            tok_len[field, line] = i - start
            padded[field, line] = i - chunk_start
        else:
            extra[line] += 1
            if extra[line] > flags[2]:
                flags[2] = extra[line]
        field += 1
        chunk_start = i + 1
    return ints, floats, frac, padded, tok_len, extra, flags, error


@njit(cache=True, nogil=True)
def _int_len(v):  # pragma: no cover - compiled
    length = 1
    if v < 0:
        length += 1
        v = -v
    while v >= 10:
        v //= 10
        length += 1
    return length


@njit(cache=True, nogil=True)
def _put_int(out, pos, v, length):  # pragma: no cover - compiled
    end = pos + length
    neg = v < 0
    if neg:
        v = -v
    j = end - 1
    while True:
        out[j] = 48 + v % 10
        v //= 10
        j -= 1
        if v == 0:
            break
    if neg:
        out[j] = 45
    return end


@njit(cache=True, nogil=True)
def format_lines(ints, scaled, dec_digits, widths):  # pragma: no cover - compiled
    """SWF text for the field-major ``ints`` [f, n]; where ``dec_digits[k, r] >= 0`` the field is written
    as fixed point from ``scaled`` (value x 10**digits, rounded) with that many decimals."""
    n_fields, n_rows = ints.shape
    total = 0
    for r in range(n_rows):
        for k in range(n_fields):
            d = dec_digits[k, r]
            if d >= 0:
                v = scaled[k, r]
                length = max(_int_len(abs(v)), d + 1) + 1 + (1 if v < 0 else 0)
            else:
                length = _int_len(ints[k, r])
            total += max(length, widths[k]) + 1
    out = np.empty(total, np.uint8)
    pos = 0
    for r in range(n_rows):
        for k in range(n_fields):
            d = dec_digits[k, r]
            if d >= 0:
                v = scaled[k, r]
                neg = v < 0
                a = -v if neg else v
                ilen = max(_int_len(a), d + 1)
                length = ilen + 1 + (1 if neg else 0)
            else:
                length = _int_len(ints[k, r])
            pad = widths[k] - length
            for _ in range(pad):
                out[pos] = 32
                pos += 1
            if d >= 0:
                if neg:
                    out[pos] = 45
                    pos += 1
                # digits of a, zero-padded to ilen, with '.' before the last d digits
                j = pos + ilen  # one past the last digit (the dot is inserted in between)
                for m in range(ilen):
                    digit = a % 10
                    a //= 10
                    idx = pos + ilen - m  # room for the dot
                    if m < d:
                        out[idx] = 48 + digit
                    else:
                        out[idx - 1] = 48 + digit
                out[pos + ilen - d] = 46
                pos = j + 1
            else:
                pos = _put_int(out, pos, ints[k, r], length)
            out[pos] = 32 if k < n_fields - 1 else 10
            pos += 1
    return out
