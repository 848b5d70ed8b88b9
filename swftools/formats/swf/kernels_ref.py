"""The SWF kernels in pure Python: the reference of the compiled ones (``_kernels.pyx``) and
their fallback where those were not built (``swftools.extensions``).

Tokenize+parse a chunk of job lines, format rows, and the decimal ids of the user, group and
queue columns (Arrow strings <-> integers). The compiled kernels are these functions statement
for statement, plus eight-bytes-at-a-time paths for blanks and short numbers that give the same
results; ``tests/test_formats_swf_kernels.py`` checks both agree.
"""

from __future__ import annotations

import numpy as np

from swftools.formats.swf.kernels import BAD_CHAR, MAX_DIGITS, TOO_FEW, TOO_LONG

_INT64_MAX = 9223372036854775807


def tokenize_chunk(buf, first_line, ints, floats, point, extra, stats, flags, error):
    """Parse the lines of ``buf`` into rows ``first_line...`` of the field-major outputs.

    ``ints[f, n]`` (zeroed by the caller) gets each integer (the integer part of a decimal) plus
    one, written only where that is not 0: the rows of a field whose values are all -1, common
    in SWF files, are never touched. ``point[f, n]`` is 0 for a token written without a decimal
    point, else 1 + its digits after the point; ``floats`` is written only for those tokens (the
    caller zeroes ``point``, so that neither array's pages are touched in a file without
    decimals). ``stats[:, k]`` of field k:
    rows 0-2 the padded widths (smallest, then smallest and largest among tokens with padding
    beyond the one separator): a file follows fixed widths exactly when every padded token has
    the field's smallest width (see ``layout_from_pads``); row 3 the tokens with a decimal point,
    row 4 the tokens that are exactly -1 (unknown). ``flags`` = (tabs or CR seen, trailing blanks
    seen, max extra fields, a negative value other than -1 seen, lines parsed); ``error`` =
    (kind, row, field) of the first bad line (the parse stops there).
    """
    buf = bytes(buf)  # Python ints, not numpy's uint8 (which would wrap)
    n_fields = ints.shape[0]
    line = first_line
    field = 0
    chunk_start = 0  # where the current field's padding began
    i = 0
    n = len(buf)
    while i < n:
        c = buf[i]
        if c == 32:
            i += 1
            continue
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
        if c == 9 or c == 13:
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
            if sign * value != -1:  # ints is zeroed: a field of -1s is never touched (the
                ints[field, line] = sign * value + 1  # caller takes the 1 away from the others)
            if fdigits >= 0:
                magnitude = value + fvalue / fscale
                point[field, line] = fdigits + 1
                floats[field, line] = sign * magnitude
                stats[3, field] += 1
                if neg:
                    if magnitude == 1.0:
                        stats[4, field] += 1
                    elif magnitude > 0.0:
                        flags[3] = 1
            elif neg:
                if value == 1:
                    stats[4, field] += 1
                elif value > 1:
                    flags[3] = 1
            width = i - chunk_start
            if width < stats[0, field]:
                stats[0, field] = width
            if width > i - start:
                if width < stats[1, field]:
                    stats[1, field] = width
                if width > stats[2, field]:
                    stats[2, field] = width
        else:
            extra[line] += 1
            if extra[line] > flags[2]:
                flags[2] = extra[line]
        field += 1
        chunk_start = i + 1
    flags[4] = line - first_line


def _digits(a):
    """How many decimal digits a >= 0 has."""
    length = 1
    bound = 10
    while a >= bound and length < 19:  # comparisons, not divisions
        length += 1
        bound *= 10
    return length


def _magnitude(v):
    """(|v|, 0); for -2**63, whose magnitude int64 cannot hold, (int64's maximum, 1): its last
    digit, 7, is written 8."""
    if v >= 0:
        return v, 0
    if v == -_INT64_MAX - 1:
        return _INT64_MAX, 1
    return -v, 0


def _put_int(out, pos, v, width):
    """Write integer ``v`` right-aligned to ``width`` at ``out[pos:]``; returns the end."""
    a, carry = _magnitude(v)
    length = _digits(a) + (1 if v < 0 else 0)
    while width > length:
        out[pos] = 32
        pos += 1
        width -= 1
    if v < 0:
        out[pos] = 45
    end = pos + length
    j = end - 1
    while a >= 10:
        q = a // 10
        out[j] = 48 + (a - q * 10)
        a = q
        j -= 1
    out[j] = 48 + a
    out[end - 1] += carry
    return end


def _put_fixed(out, pos, v, d, width):
    """Write ``v`` / 10**``d`` with ``d`` decimals (a digit at least before the point, '5.' for
    d = 0) right-aligned to ``width`` at ``out[pos:]``; returns the end."""
    a, carry = _magnitude(v)
    n_digits = max(_digits(a), d + 1)  # zero-padded to have one before the point
    length = n_digits + 1 + (1 if v < 0 else 0)
    while width > length:
        out[pos] = 32
        pos += 1
        width -= 1
    if v < 0:
        out[pos] = 45
        pos += 1
    end = pos + n_digits + 1
    j = end - 1
    for m in range(n_digits):
        if m == d:
            j -= 1  # the point's place
        q = a // 10
        out[j] = 48 + (a - q * 10)
        a = q
        j -= 1
    out[end - 1 - d] = 46
    out[end - 1 if d else end - 2] += carry
    return end


def format_rows(ints, scaled, dec_digits, widths, r0, r1, out):
    """SWF text of rows [r0, r1) of the field-major ``ints`` [f, n] into ``out``, in one pass;
    returns its length, or, when ``out`` may be too short, minus the length it must have
    (nothing written). Where ``dec_digits[k, r] >= 0`` the field is written as fixed point from
    ``scaled`` (value x 10**digits) with that many decimals."""
    n_fields = ints.shape[0]
    most = np.full(n_fields, -1, np.int64)  # most decimals per field
    for r in range(r0, r1):
        for k in range(n_fields):
            if dec_digits[k, r] > most[k]:
                most[k] = dec_digits[k, r]
    line = 0  # bound on a line's length: a field is at most 20 characters (-2**63), or 21
    for k in range(n_fields):  # with a point (19 digits, sign and point), more with more decimals
        line += max(int(widths[k]), 21, int(most[k]) + 3) + 1
    if (r1 - r0) * line > len(out):
        return -(r1 - r0) * line
    pos = 0
    for r in range(r0, r1):
        for k in range(n_fields):
            d = int(dec_digits[k, r])
            if d >= 0:
                pos = _put_fixed(out, pos, int(scaled[k, r]), d, int(widths[k]))
            else:
                pos = _put_int(out, pos, int(ints[k, r]), int(widths[k]))
            out[pos] = 32 if k < n_fields - 1 else 10
            pos += 1
    return pos


def int_strings(values, offsets):
    """The decimal text of ``values`` (>= 0; -1, unknown, is written empty) as an Arrow string
    array's offsets (``offsets``, n + 1, filled here) and data (returned)."""
    values = [int(v) for v in values]
    total = 0
    for r in range(len(values)):
        if values[r] >= 0:
            total += _digits(values[r])
    data = np.empty(total, np.uint8)
    pos = 0
    offsets[0] = 0
    for r in range(len(values)):
        if values[r] >= 0:
            pos = _put_int(data, pos, values[r], 0)
        offsets[r + 1] = pos
    return data


def parse_ids(offsets, data, valid, out):
    """Parse the strings of an Arrow string array (``offsets`` n + 1 into ``data``) as ids:
    each valid one (``valid[r]`` != 0, or every row when ``valid`` is empty) must be a
    non-negative integer written as Python writes it (digits, no leading zero but in '0', at
    most int64's maximum). Writes ``out`` (0 for invalid rows); returns the first row that is
    no such id, or -1 when every one is."""
    every = len(valid) == 0
    for r in range(len(out)):
        out[r] = 0
        if not every and valid[r] == 0:
            continue
        a = int(offsets[r])
        b = int(offsets[r + 1])
        if b <= a or b - a > 19 or (b - a > 1 and data[a] == 48):
            return r
        v = 0
        for i in range(a, b):
            d = int(data[i]) - 48
            if d < 0 or d > 9 or v > (_INT64_MAX - d) // 10:
                return r
            v = v * 10 + d
        out[r] = v
    return -1
