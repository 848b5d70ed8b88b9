"""The SWF kernels compiled (Cython): tokenize+parse a chunk of job lines, format rows, and the
decimal ids of the user, group and queue columns (Arrow strings <-> integers).

The same functions as ``kernels_ref`` (the pure-Python reference, statement for statement but
for the eight-bytes-at-a-time paths); they release the GIL, so ``kernels`` runs large inputs in
one chunk per core. ``tests/test_formats_swf_kernels.py`` checks both give the same results.
"""

import numpy as np

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t

cdef extern from *:
    """
    #include <string.h>
    /* buf[i:i + 8] as one little-endian uint64 (an unaligned load) */
    static inline uint64_t swf_word(const unsigned char *p) {
        uint64_t w;
        memcpy(&w, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
    #endif
        return w;
    }
    /* trailing zero bits of x, 64 for 0 */
    static inline uint64_t swf_ctz(uint64_t x) {
    #if defined(__GNUC__) || defined(__clang__)
        return x ? (uint64_t) __builtin_ctzll(x) : 64;
    #else
        uint64_t n = 0;
        if (!x) return 64;
        while (!(x & 1)) { x >>= 1; n++; }
        return n;
    #endif
    }
    /* how many decimal digits a >= 0 has: the bit length times log10(2) (1233 / 4096), then
       one comparison with the power of ten */
    static const uint64_t swf_pow10[20] = {
        1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
        100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
        10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
        100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL};
    static inline int64_t swf_ndigits(uint64_t a) {
        a |= 1;  /* 0 has one digit; a and a | 1 have as many (10**k - 1 is odd) */
    #if defined(__GNUC__) || defined(__clang__)
        int64_t t = ((64 - (int64_t)__builtin_clzll(a)) * 1233) >> 12;
        return t + (a >= swf_pow10[t]);
    #else
        int64_t n = 1;
        while (n < 20 && a >= swf_pow10[n]) n++;
        return n;
    #endif
    }
    /* the decimal digits of a >= 0, the last one at end[-1], two at a time ("00".."99") */
    static const char swf_pairs[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    static inline void swf_put_digits(unsigned char *end, uint64_t a) {
        while (a >= 100) {
            uint64_t q = a / 100;
            memcpy(end - 2, swf_pairs + 2 * (a - q * 100), 2);
            a = q;
            end -= 2;
        }
        if (a >= 10) {
            memcpy(end - 2, swf_pairs + 2 * a, 2);
        } else {
            end[-1] = (unsigned char)('0' + a);
        }
    }
    """
    uint64_t swf_word(const unsigned char *p) nogil
    uint64_t swf_ctz(uint64_t x) nogil
    int64_t swf_ndigits(uint64_t a) nogil
    void swf_put_digits(unsigned char *end, uint64_t a) nogil
    void *memset(void *s, int c, size_t n) nogil
    void *memcpy(void *d, const void *s, size_t n) nogil

# kernels.TOO_FEW, BAD_CHAR, TOO_LONG, MAX_DIGITS (tests/test_formats_swf_kernels.py checks)
TOO_FEW, BAD_CHAR, TOO_LONG, MAX_DIGITS = 1, 2, 3, 18
cdef enum:
    _TOO_FEW = 1
    _BAD_CHAR = 2
    _TOO_LONG = 3
    _MAX_DIGITS = 18

cdef int64_t _INT64_MAX = 9223372036854775807
# Eight bytes at a time (SWAR)
cdef uint64_t _BLANKS = 0x2020202020202020ULL
cdef uint64_t _ZEROS = 0x3030303030303030ULL
cdef uint64_t _TEN_UP = 0x7676767676767676ULL  # byte + 0x76 >= 0x80: >= 10
cdef uint64_t _HIGH = 0x8080808080808080ULL
cdef uint64_t _PAIRS = 0x00FF00FF00FF00FFULL
cdef uint64_t _QUADS = 0x0000FFFF0000FFFFULL
cdef uint64_t _LOW32 = 0xFFFFFFFFULL


cdef inline int64_t _eight_digits(uint64_t x) noexcept nogil:
    """The number that the eight bytes of ``x``, each a digit 0..9, write, the first (lowest)
    byte the most significant."""
    x = (x * 10 + (x >> 8)) & _PAIRS
    x = (x * 100 + (x >> 16)) & _QUADS
    return <int64_t>((x * 10000 + (x >> 32)) & _LOW32)


def tokenize_chunk(const uint8_t[::1] buf, int64_t first_line, int64_t[:, ::1] ints,
                   double[:, ::1] floats, int8_t[:, ::1] point, int32_t[::1] extra,
                   int64_t[:, ::1] stats, int64_t[::1] flags, int64_t[::1] error):
    """``kernels_ref.tokenize_chunk``: parse the lines of ``buf`` into rows ``first_line...``
    of the field-major outputs (see there)."""
    with nogil:
        _tokenize(buf, first_line, ints, floats, point, extra, stats, flags, error)


cdef void _tokenize(const uint8_t[::1] buf, int64_t first_line, int64_t[:, ::1] ints,
                    double[:, ::1] floats, int8_t[:, ::1] point, int32_t[::1] extra,
                    int64_t[:, ::1] stats, int64_t[::1] flags,
                    int64_t[::1] error) noexcept nogil:
    cdef int64_t n_fields = ints.shape[0]
    cdef int64_t line = first_line, field = 0, chunk_start = 0, i = 0, n = buf.shape[0]
    cdef int64_t last_word = n - 8  # where the last eight bytes start: words are read to there
    cdef const uint8_t* p = &buf[0] if n else NULL
    cdef uint8_t c
    cdef int64_t start, value, digits, fdigits, fvalue, sign, width
    cdef double fscale, magnitude
    cdef bint neg, bad, fast
    cdef uint64_t x, length, after
    while i < n:
        c = p[i]
        if c == 32:  # blanks: up to eight at a time
            if i <= last_word:
                i += <int64_t>(swf_ctz(swf_word(p + i) ^ _BLANKS) >> 3)
            else:
                i += 1
            continue
        if c == 10:
            if field < n_fields:
                error[0] = _TOO_FEW
                error[1] = line
                error[2] = field
                return
            if i > 0 and (p[i - 1] == 32 or p[i - 1] == 9 or p[i - 1] == 13):
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
            x = swf_word(p + i) ^ _ZEROS  # digits become 0..9
            length = swf_ctz(((x + _TEN_UP) | x) & _HIGH) >> 3  # digits before the first
            if 0 < length < 8:  # other byte
                after = ((x >> (length << 3)) & 0xFF) ^ 0x30
                if after == 32 or after == 10 or after == 9 or after == 13:
                    value = _eight_digits(x << (64 - (length << 3)))
                    digits = <int64_t>length
                    i += digits
                    fast = True
        if not fast:
            while i < n:
                c = p[i]
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
            if (bad or digits == 0 or digits - max(fdigits, 0) > _MAX_DIGITS
                    or fdigits > _MAX_DIGITS):
                error[0] = _TOO_LONG if not bad and digits else _BAD_CHAR
                error[1] = line
                error[2] = field
                return
            sign = -1 if neg else 1
            if sign * value != -1:  # ints is zeroed: a field of -1s is never touched (the
                ints[field, line] = sign * value + 1  # caller takes the 1 away from others)
            if fdigits >= 0:
                magnitude = <double>value + <double>fvalue / fscale
                point[field, line] = <int8_t>(fdigits + 1)
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


cdef inline int64_t _digits(int64_t a) noexcept nogil:
    """How many decimal digits a >= 0 has."""
    return swf_ndigits(<uint64_t>a)


cdef inline int64_t _magnitude(int64_t v, int64_t* carry) noexcept nogil:
    """|v| (``carry`` 0); for -2**63, whose magnitude int64 cannot hold, int64's maximum
    (``carry`` 1): its last digit, 7, is written 8."""
    carry[0] = 0
    if v >= 0:
        return v
    if v == -_INT64_MAX - 1:
        carry[0] = 1
        return _INT64_MAX
    return -v


cdef inline int64_t _put_int(uint8_t* out, int64_t pos, int64_t v, int64_t width) noexcept nogil:
    """Write integer ``v`` right-aligned to ``width`` at ``out[pos:]``; returns the end. With
    a pad (``width`` more than the text) 8 bytes from ``pos`` may be written."""
    cdef int64_t carry, end
    cdef int64_t a = _magnitude(v, &carry)
    cdef int64_t length = _digits(a) + (1 if v < 0 else 0)
    if width > length:  # a short pad as one 8-byte store: the format bound leaves >= 21 bytes
        if width - length <= 8:
            memcpy(out + pos, b"        ", 8)
        else:
            memset(out + pos, 32, <size_t>(width - length))
        pos += width - length
    if v < 0:
        out[pos] = 45
    end = pos + length
    swf_put_digits(out + end, <uint64_t>a)
    if carry:  # rare: a byte just stored is read back only then
        out[end - 1] += 1
    return end


cdef inline int64_t _put_fixed(uint8_t* out, int64_t pos, int64_t v, int64_t d,
                               int64_t width) noexcept nogil:
    """Write ``v`` / 10**``d`` with ``d`` decimals (a digit at least before the point, '5.' for
    d = 0) right-aligned to ``width`` at ``out[pos:]``; returns the end."""
    cdef int64_t carry, q, end, j, m
    cdef int64_t a = _magnitude(v, &carry)
    cdef int64_t n_digits = max(_digits(a), d + 1)  # zero-padded to have one before the point
    cdef int64_t length = n_digits + 1 + (1 if v < 0 else 0)
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
        out[j] = <uint8_t>(48 + (a - q * 10))
        a = q
        j -= 1
    out[end - 1 - d] = 46
    out[end - 1 if d else end - 2] += <uint8_t>carry
    return end


# Rows formatted from one transposed tile: the field-major inputs are read field by field
# (one sequential stream at a time) into row-major tiles that stay in the L1 cache, instead of
# one row across 2 x n_fields streams, more than the hardware prefetchers follow.
cdef int64_t _TILE = 256


def format_rows(const int64_t[:, :] ints, const int64_t[:, :] scaled,
                const int8_t[:, :] dec_digits, const int64_t[::1] widths, int64_t r0,
                int64_t r1, uint8_t[::1] out_v):
    """``kernels_ref.format_rows``: SWF text of rows [r0, r1) into ``out``; its length, or
    minus the length it must have."""
    cdef int64_t n_fields = ints.shape[0]
    most_a = np.full(n_fields, -1, np.int64)  # most decimals per field
    cdef int64_t[::1] most = most_a
    cdef int64_t[:, ::1] tile_ints = np.empty((_TILE, n_fields), np.int64)
    cdef int8_t[:, ::1] tile_digits = np.empty((_TILE, n_fields), np.int8)
    cdef int64_t size
    with nogil:
        size = _format(ints, scaled, dec_digits, widths, r0, r1, out_v, most, tile_ints,
                       tile_digits)
    return size


cdef int64_t _format(const int64_t[:, :] ints, const int64_t[:, :] scaled,
                     const int8_t[:, :] dec_digits, const int64_t[::1] widths, int64_t r0,
                     int64_t r1, uint8_t[::1] out_v, int64_t[::1] most,
                     int64_t[:, ::1] tile_ints, int8_t[:, ::1] tile_digits) noexcept nogil:
    cdef int64_t n_fields = ints.shape[0], r, k, d, t0, t1, line = 0, pos = 0
    cdef uint8_t* out = &out_v[0] if out_v.shape[0] else NULL
    for k in range(n_fields):  # field-major: each field's row is contiguous
        for r in range(r0, r1):
            if dec_digits[k, r] > most[k]:
                most[k] = dec_digits[k, r]
    # bound on a line's length: a field is at most 20 characters (-2**63), or 21 with a
    # point (19 digits, sign and point), more with more decimals
    for k in range(n_fields):
        line += max(widths[k], 21, most[k] + 3) + 1
    if (r1 - r0) * line > out_v.shape[0]:
        return -(r1 - r0) * line
    t0 = r0
    while t0 < r1:
        t1 = min(t0 + _TILE, r1)
        for k in range(n_fields):
            for r in range(t0, t1):
                tile_ints[r - t0, k] = ints[k, r]
                tile_digits[r - t0, k] = dec_digits[k, r]
        for r in range(t0, t1):
            for k in range(n_fields):
                d = tile_digits[r - t0, k]
                if d >= 0:
                    pos = _put_fixed(out, pos, scaled[k, r], d, widths[k])
                else:
                    pos = _put_int(out, pos, tile_ints[r - t0, k], widths[k])
                out[pos] = 32 if k < n_fields - 1 else 10
                pos += 1
        t0 = t1
    return pos


def int_strings(const int64_t[:] values, int32_t[::1] offsets):
    """``kernels_ref.int_strings``: the decimal text of ``values`` (>= 0; -1 is written
    empty) as an Arrow string array's offsets (filled here) and data (returned)."""
    cdef int64_t n = values.shape[0], r, total = 0, pos = 0
    for r in range(n):
        if values[r] >= 0:
            total += _digits(values[r])
    data_a = np.empty(total, np.uint8)
    cdef uint8_t[::1] data_v = data_a
    cdef uint8_t* data = &data_v[0] if total else NULL
    with nogil:
        offsets[0] = 0
        for r in range(n):
            if values[r] >= 0:
                pos = _put_int(data, pos, values[r], 0)
            offsets[r + 1] = <int32_t>pos
    return data_a


def parse_ids(const int32_t[:] offsets, const uint8_t[:] data, const uint8_t[:] valid,
              int64_t[:] out):
    """``kernels_ref.parse_ids``: each valid string a non-negative integer as Python writes
    it, into ``out``; the first row that is not one, or -1."""
    cdef int64_t first
    with nogil:
        first = _parse_ids(offsets, data, valid, out)
    return first


cdef int64_t _parse_ids(const int32_t[:] offsets, const uint8_t[:] data,
                        const uint8_t[:] valid, int64_t[:] out) noexcept nogil:
    cdef bint every = valid.shape[0] == 0
    cdef int64_t r, a, b, v, i, d
    for r in range(out.shape[0]):
        out[r] = 0
        if not every and valid[r] == 0:
            continue
        a = offsets[r]
        b = offsets[r + 1]
        if b <= a or b - a > 19 or (b - a > 1 and data[a] == 48):
            return r
        v = 0
        for i in range(a, b):
            d = <int64_t>data[i] - 48
            if d < 0 or d > 9 or v > (_INT64_MAX - d) // 10:
                return r
            v = v * 10 + d
        out[r] = v
    return -1
