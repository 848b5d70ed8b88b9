"""CPython's ``random.Random`` compiled: MT19937 and the stdlib draws the ``random`` placement
makes (``Random.draw``), bit for bit, for the compiled general replay engine (see
``placement.mtrand`` for the state layout and what is mirrored from CPython 3.11)."""

from libc.math cimport ceil, log
from libc.stdint cimport int64_t, uint32_t
from libc.stdlib cimport qsort

from swftools.replay._bits cimport ctz, popcount

import numpy as np

cdef enum:
    N = 624  # MT19937 state words
    M = 397


cdef void _twist(uint32_t* mt) noexcept nogil:
    """Regenerate the 624 words (``genrand_uint32``'s block), position back to 0."""
    cdef uint32_t y
    cdef int kk
    for kk in range(N - M):
        y = (mt[kk] & 0x80000000u) | (mt[kk + 1] & 0x7FFFFFFFu)
        mt[kk] = mt[kk + M] ^ (y >> 1) ^ (0x9908B0DFu if y & 1 else 0u)
    for kk in range(N - M, N - 1):
        y = (mt[kk] & 0x80000000u) | (mt[kk + 1] & 0x7FFFFFFFu)
        mt[kk] = mt[kk + (M - N)] ^ (y >> 1) ^ (0x9908B0DFu if y & 1 else 0u)
    y = (mt[N - 1] & 0x80000000u) | (mt[0] & 0x7FFFFFFFu)
    mt[N - 1] = mt[M - 1] ^ (y >> 1) ^ (0x9908B0DFu if y & 1 else 0u)
    mt[N] = 0


cdef int64_t mt_genrand(uint32_t* mt) noexcept nogil:
    """The next 32-bit output (0 .. 2 ** 32 - 1)."""
    cdef uint32_t i = mt[N]
    if i >= N:
        _twist(mt)
        i = 0
    cdef uint32_t y = mt[i]
    mt[N] = i + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680u
    y ^= (y << 15) & 0xEFC60000u
    y ^= y >> 18
    return y


cdef int64_t mt_getrandbits(uint32_t* mt, int64_t k) noexcept nogil:
    """``Random.getrandbits(k)`` for ``0 <= k <= 32``."""
    if k == 0:
        return 0
    return mt_genrand(mt) >> (32 - k)


cdef inline int64_t _bit_length32(int64_t n) noexcept nogil:
    cdef int64_t b = 0
    while n:
        n >>= 1
        b += 1
    return b


cdef int64_t mt_randbelow(uint32_t* mt, int64_t n) noexcept nogil:
    """``Random._randbelow(n)`` for ``1 <= n < 2 ** 32``."""
    cdef int64_t k = _bit_length32(n)
    cdef int64_t r = mt_getrandbits(mt, k)
    while r >= n:
        r = mt_getrandbits(mt, k)
    return r


cdef int64_t mt_setsize(int64_t k) noexcept nogil:
    """``Random.sample``'s ``setsize`` for ``k`` draws (the pool list when ``n <= setsize``);
    ``math.log(k * 3, 4)`` is ``log(float(k * 3)) / log(4.0)`` in CPython."""
    cdef int64_t setsize = 21
    if k > 5:
        setsize += (<int64_t>1) << (2 * <int64_t>ceil(log(<double>(k * 3)) / log(4.0)))
    return setsize


cdef void mt_sample(uint32_t* mt, int64_t n, int64_t k, int64_t* out,
                    int64_t* scratch) noexcept nogil:
    """``Random.sample(range(n), k)`` into ``out[:k]`` (selection order), ``0 <= k <= n``;
    ``scratch[:n]`` zeros on entry and on return."""
    cdef int64_t i, j
    if n <= mt_setsize(k):
        for i in range(n):
            scratch[i] = i
        for i in range(k):
            j = mt_randbelow(mt, n - i)
            out[i] = scratch[j]
            scratch[j] = scratch[n - i - 1]
        for i in range(n):
            scratch[i] = 0
        return
    for i in range(k):
        j = mt_randbelow(mt, n)
        while scratch[j]:
            j = mt_randbelow(mt, n)
        scratch[j] = 1
        out[i] = j
    for i in range(k):
        scratch[out[i]] = 0


cdef inline int64_t _select64(int64_t mask, int64_t r) noexcept nogil:
    """Index of the ``r``-th (from 0) lowest set bit of ``mask``."""
    for _ in range(r):
        mask &= mask - 1
    return ctz(mask)


cdef int _compare(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


cdef void _sort_ranks(int64_t* out, int64_t k, int64_t n, int64_t* scratch) noexcept nogil:
    """Sort the distinct ranks ``out[:k]`` (of ``range(n)``) ascending: insertion for a few,
    marks in ``scratch[:n]`` (left zeroed) when ``n`` is a few times ``k``, else ``qsort``."""
    cdef int64_t i, j, x, q
    if k <= 16:
        for i in range(1, k):
            x = out[i]
            j = i - 1
            while j >= 0 and out[j] > x:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = x
    elif n <= 16 * k:
        for i in range(k):
            scratch[out[i]] = 1
        q = 0
        for i in range(n):
            if scratch[i]:
                scratch[i] = 0
                out[q] = i
                q += 1
    else:
        qsort(out, k, sizeof(int64_t), _compare)


cdef void _select_ranks(const int64_t* row, int64_t words, int64_t* ranks,
                        int64_t count) noexcept nogil:
    """Replace the ascending ranks ``ranks[:count]`` among the set bits of the word row ``row``
    (32 nodes a word) by those bits' node indices."""
    cdef int64_t q = 0, base = 0, w, m, c, seen, r
    for w in range(words):
        if q == count:
            return
        m = row[w]
        if not m:
            continue
        c = popcount(m)
        seen = 0
        while q < count and ranks[q] < base + c:
            r = ranks[q] - base
            while seen < r:
                m &= m - 1
                seen += 1
            ranks[q] = w * 32 + ctz(m)
            q += 1
        base += c


cdef int64_t mt_draw(uint32_t* mt, const int64_t* exact, int64_t words, const int64_t* cnt,
                     const int64_t* gpu_free, int64_t g, int64_t nodes, int64_t per_node,
                     int64_t* out_nodes, int64_t* scratch, int64_t* gpus) noexcept nogil:
    """``placement.Random.draw`` on the engine's state (``exact``: (g + 1) x ``words`` row
    major): the chosen nodes ascending into ``out_nodes[:count]``, the GPU bit set used on each
    node into ``gpus[0]``; returns the count (0, no draw, if the job does not fit)."""
    cdef int64_t n, f, r, k, w, m, c, free, held, i, chosen
    cdef int64_t* picked
    if nodes > 1:
        n = cnt[g]
        if n < nodes:  # does not fit (CPython raises; no draw)
            gpus[0] = 0
            return 0
        mt_sample(mt, n, nodes, out_nodes, scratch)
        _sort_ranks(out_nodes, nodes, n, scratch)
        _select_ranks(exact + g * words, words, out_nodes, nodes)
        gpus[0] = ((<int64_t>1) << g) - 1
        return nodes
    n = 0
    for f in range(per_node, g + 1):
        n += cnt[f]
    if n == 0:
        gpus[0] = 0
        return 0
    r = mt_randbelow(mt, n)
    k = -1
    for w in range(words):
        m = 0
        for f in range(per_node, g + 1):
            m |= exact[f * words + w]
        c = popcount(m)
        if r < c:
            for _ in range(r):
                m &= m - 1
            k = w * 32 + ctz(m)
            break
        r -= c
    out_nodes[0] = k
    free = gpu_free[k]
    held = popcount(free)
    if per_node == 1:  # Random.draw: choice(held)
        gpus[0] = (<int64_t>1) << _select64(free, mt_randbelow(mt, held))
        return 1
    picked = scratch + GPU_OUT
    mt_sample(mt, held, per_node, picked, scratch)
    chosen = 0
    for i in range(per_node):
        chosen |= (<int64_t>1) << _select64(free, picked[i])
        picked[i] = 0
    gpus[0] = chosen
    return 1


# Python entry points (the tests hold them to CPython's ``random``)

def genrand_uint32(uint32_t[::1] mt):
    """The next 32-bit output of the state ``mt``."""
    return mt_genrand(&mt[0])


def getrandbits(uint32_t[::1] mt, int64_t k):
    """``Random.getrandbits(k)``, ``0 <= k <= 32``."""
    return mt_getrandbits(&mt[0], k)


def randbelow(uint32_t[::1] mt, int64_t n):
    """``Random._randbelow(n)``, ``1 <= n < 2 ** 32``."""
    return mt_randbelow(&mt[0], n)


def choice_index(uint32_t[::1] mt, int64_t n):
    """The index ``Random.choice(seq)`` takes for ``len(seq) == n >= 1``."""
    return mt_randbelow(&mt[0], n)


def sample_setsizes(const int64_t[::1] ks):
    """``Random.sample``'s ``setsize`` of each ``k``."""
    out = np.empty(ks.shape[0], dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef Py_ssize_t i
    for i in range(ks.shape[0]):
        o[i] = mt_setsize(ks[i])
    return out


def sample_indices(uint32_t[::1] mt, int64_t n, int64_t k, int64_t[::1] out,
                   int64_t[::1] scratch):
    """``Random.sample(range(n), k)`` into ``out[:k]``; ``scratch[:n]`` zeros (and left so)."""
    if k > out.shape[0] or n > scratch.shape[0] or not 0 <= k <= n:
        raise ValueError("sample_indices: 0 <= k <= n, k <= len(out), n <= len(scratch)")
    mt_sample(&mt[0], n, k, &out[0] if k else NULL, &scratch[0] if n else NULL)


def draw_random(uint32_t[::1] mt, const int64_t[:, ::1] exact, const int64_t[::1] cnt,
                const int64_t[::1] gpu_free, int64_t g, int64_t nodes, int64_t per_node,
                int64_t[::1] out_nodes, int64_t[::1] scratch):
    """``placement.Random.draw`` on the engine's state: (count, GPU bit set), the nodes in
    ``out_nodes[:count]`` ascending; (0, 0) without a draw if the job does not fit."""
    cdef int64_t gpus = 0
    if (exact.shape[0] != g + 1 or cnt.shape[0] != g + 1 or nodes > out_nodes.shape[0]
            or scratch.shape[0] < max(gpu_free.shape[0], 2 * GPU_OUT)):
        raise ValueError("draw_random: arrays of the wrong shape")
    count = mt_draw(&mt[0], &exact[0, 0], exact.shape[1], &cnt[0], &gpu_free[0], g, nodes,
                    per_node, &out_nodes[0], &scratch[0], &gpus)
    return count, gpus
