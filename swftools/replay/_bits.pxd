# Bit helpers of the compiled replay loops (int64 words; GCC/Clang builtins).
from libc.stdint cimport int64_t, uint64_t

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline int swf_ctz64(unsigned long long x)
    { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
    static inline int swf_clz64(unsigned long long x)
    { unsigned long i; _BitScanReverse64(&i, x); return 63 - (int)i; }
    static inline int swf_popcount64(unsigned long long x) { return (int)__popcnt64(x); }
    #else
    static inline int swf_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    static inline int swf_clz64(unsigned long long x) { return __builtin_clzll(x); }
    static inline int swf_popcount64(unsigned long long x) { return __builtin_popcountll(x); }
    #endif
    """
    int swf_ctz64(unsigned long long x) nogil
    int swf_clz64(unsigned long long x) nogil
    int swf_popcount64(unsigned long long x) nogil


cdef inline int64_t ctz(int64_t x) noexcept nogil:
    """Index of the lowest set bit of ``x`` (> 0)."""
    return swf_ctz64(<uint64_t>x)


cdef inline int64_t popcount(int64_t x) noexcept nogil:
    return swf_popcount64(<uint64_t>x)


cdef inline int64_t bit_length(int64_t x) noexcept nogil:
    """``int.bit_length`` of ``x >= 0``."""
    if x <= 0:
        return 0
    return 64 - swf_clz64(<uint64_t>x)


cdef inline int64_t lowest_bits(int64_t mask, int64_t count) noexcept nogil:
    """``model.lowest_bits``: the ``count`` lowest set bits of ``mask``."""
    cdef int64_t chosen = 0, low
    for _ in range(count):
        low = mask & -mask
        chosen |= low
        mask ^= low
    return chosen


cdef inline int64_t first_in_order(int64_t free, const int64_t* order, int64_t g, int64_t count,
                                   bint reverse) noexcept nogil:
    """The first ``count`` set bits of ``free`` taken in ``order[0:g]`` (from its end when
    ``reverse``): a node's free GPUs picked best first (or worst first)."""
    cdef int64_t chosen = 0, q, i
    for q in range(g):
        i = order[g - 1 - q] if reverse else order[q]
        if free >> i & 1:
            chosen |= (<int64_t>1) << i
            count -= 1
            if not count:
                break
    return chosen
