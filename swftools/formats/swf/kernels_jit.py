"""The SWF kernels compiled with numba: tokenize+parse a chunk of job lines, format rows.

Imported only when they run as numba functions (``swftools.formats.swf.kernels`` chooses): the
same functions, compiled ahead of time (``swftools.aot``, ``kernels.build_aot``), run without
numba. Kernels are cached on disk after the first call; they release the GIL.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swftools.formats.swf.kernels import BAD_CHAR, MAX_DIGITS, TOO_FEW, TOO_LONG


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
