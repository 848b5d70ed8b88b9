"""The SWF kernels compiled with numba: tokenize+parse a chunk of job lines, format rows, and
the decimal ids of the user, group and queue columns (Arrow strings <-> integers).

Imported only when they run as numba functions (``swftools.formats.swf.kernels`` chooses): the
same functions, compiled ahead of time (``swftools.aot``, ``kernels.build_aot``), run without
numba. Kernels are cached on disk after the first call; they release the GIL.
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import errors
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from swftools.formats.swf.kernels import BAD_CHAR, MAX_DIGITS, TOO_FEW, TOO_LONG

_INT64_MAX = 9223372036854775807


@intrinsic
def _word(typingctx, buf, i):
    """``buf[i:i + 8]`` as one little-endian uint64 (an unaligned load; i + 8 <= len(buf))."""
    if not (isinstance(buf, types.Array) and buf.dtype == types.uint8 and buf.layout == "C"):
        raise errors.NumbaTypeError("_word reads a C-contiguous uint8 array")

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        word = builder.load(builder.bitcast(builder.gep(data, [args[1]]),
                                            ir.IntType(64).as_pointer()), align=1)
        return builder.bswap(word) if sys.byteorder == "big" else word
    return types.uint64(buf, types.intp), codegen


# Eight bytes at a time (SWAR, all uint64: numba turns uint64 mixed with int64 into floats)
_U = np.uint64
_BLANKS, _ZEROS = _U(0x2020202020202020), _U(0x3030303030303030)
_TEN_UP, _HIGH = _U(0x7676767676767676), _U(0x8080808080808080)  # byte + 0x76 >= 0x80: >= 10
_PAIRS, _QUADS, _LOW32 = _U(0x00FF00FF00FF00FF), _U(0x0000FFFF0000FFFF), _U(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def _tokenize_chunk(buf, first_line, ints, floats, point, extra, stats, flags, error):  # pragma: no cover - compiled
    """Parse the lines of ``buf`` into rows ``first_line...`` of the field-major outputs.

    ``ints[f, n]`` (zeroed by the caller) gets each integer (the integer part of a decimal) plus
    one, written only where that is not 0: the rows of a field whose values are all -1, common
    in SWF files, are never touched. ``point[f, n]`` is 0 for a token written without a decimal
    point, else 1 + its digits after the point; ``floats`` is written only for those tokens (the
    caller zeroes ``point``, so that neither array's pages are touched in a file without
    decimals). Blanks are skipped and tokens of up to 7 digits parsed eight bytes at a time. ``stats[:, k]`` of field k:
    rows 0-2 the padded widths (smallest, then smallest and largest among tokens with padding
    beyond the one separator): a file follows fixed widths exactly when every padded token has
    the field's smallest width (see ``layout_from_pads``); row 3 the tokens with a decimal point,
    row 4 the tokens that are exactly -1 (unknown). ``flags`` = (tabs or CR seen, trailing blanks
    seen, max extra fields, a negative value other than -1 seen, lines parsed); ``error`` =
    (kind, row, field) of the first bad line (the parse stops there).
    """
    n_fields = ints.shape[0]
    line = first_line
    field = 0
    chunk_start = 0  # where the current field's padding began
    i = 0
    n = len(buf)
    last_word = n - 8  # where the last eight bytes start: words are read up to there
    while i < n:
        c = buf[i]
        if c == 32:  # blanks: up to eight at a time
            if i <= last_word:
                i += np.int64(trailing_zeros(_word(buf, i) ^ _BLANKS) >> _U(3))
            else:
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
        fast = False
        if i <= last_word:  # the usual token, 1 to 7 digits and a blank: eight bytes at once
            x = _word(buf, i) ^ _ZEROS  # digits become 0..9
            length = trailing_zeros(((x + _TEN_UP) | x) & _HIGH) >> _U(3)  # digits before
            if _U(0) < length < _U(8):  # ... the first other byte
                after = ((x >> (length << _U(3))) & _U(0xFF)) ^ _U(0x30)
                if after == 32 or after == 10 or after == 9 or after == 13:
                    value = _eight_digits(x << (_U(64) - (length << _U(3))))
                    digits = np.int64(length)
                    i += digits
                    fast = True
        if not fast:
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


@njit(cache=True, nogil=True)
def _eight_digits(x):  # pragma: no cover - compiled
    """The number that the eight bytes of ``x`` (uint64), each a digit 0..9, write, the first
    (lowest) byte the most significant."""
    x = (x * _U(10) + (x >> _U(8))) & _PAIRS
    x = (x * _U(100) + (x >> _U(16))) & _QUADS
    return np.int64((x * _U(10000) + (x >> _U(32))) & _LOW32)


@njit(cache=True, nogil=True)
def _digits(a):  # pragma: no cover - compiled
    """How many decimal digits a >= 0 has."""
    length = 1
    bound = 10
    while a >= bound and length < 19:  # comparisons, not divisions
        length += 1
        bound *= 10
    return length


@njit(cache=True, nogil=True)
def _magnitude(v):  # pragma: no cover - compiled
    """(|v|, 0); for -2**63, whose magnitude int64 cannot hold, (int64's maximum, 1): its last
    digit, 7, is written 8."""
    if v >= 0:
        return v, 0
    if v == -_INT64_MAX - 1:
        return _INT64_MAX, 1
    return -v, 0


@njit(cache=True, nogil=True)
def _put_int(out, pos, v, width):  # pragma: no cover - compiled
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


@njit(cache=True, nogil=True)
def _put_fixed(out, pos, v, d, width):  # pragma: no cover - compiled
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


@njit(cache=True, nogil=True)
def _format_rows(ints, scaled, dec_digits, widths, r0, r1, out):  # pragma: no cover - compiled
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
        line += max(widths[k], 21, most[k] + 3) + 1
    if (r1 - r0) * line > len(out):
        return -(r1 - r0) * line
    pos = 0
    for r in range(r0, r1):
        for k in range(n_fields):
            d = dec_digits[k, r]
            if d >= 0:
                pos = _put_fixed(out, pos, scaled[k, r], d, widths[k])
            else:
                pos = _put_int(out, pos, ints[k, r], widths[k])
            out[pos] = 32 if k < n_fields - 1 else 10
            pos += 1
    return pos


@njit(cache=True, nogil=True)
def _int_strings(values, offsets):  # pragma: no cover - compiled
    """The decimal text of ``values`` (>= 0; -1, unknown, is written empty) as an Arrow string
    array's offsets (``offsets``, n + 1, filled here) and data (returned)."""
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


@njit(cache=True, nogil=True)
def _parse_ids(offsets, data, valid, out):  # pragma: no cover - compiled
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
        a = offsets[r]
        b = offsets[r + 1]
        if b <= a or b - a > 19 or (b - a > 1 and data[a] == 48):
            return r
        v = 0
        for i in range(a, b):
            d = data[i] - 48
            if d < 0 or d > 9 or v > (_INT64_MAX - d) // 10:
                return r
            v = v * 10 + d
        out[r] = v
    return -1
