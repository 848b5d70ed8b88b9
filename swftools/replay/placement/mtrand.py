"""CPython's ``random.Random`` compiled with numba: MT19937 and the stdlib draws the ``random``
placement makes (``Random.draw``), bit for bit, for the compiled general replay engine.

The generator state ``mt`` is a uint32 array of 625 entries: CPython's 624 state words followed
by the position index (0 .. 624), exactly ``random.Random(seed).getstate()[1]`` (``mt_state``;
``python_state`` gives the state back to Python). No seeding here: the state comes from Python.

Mirrored from CPython 3.11 (``Modules/_randommodule.c``, ``Lib/random.py``):

* ``genrand_uint32``: MT19937 (twist of all 624 words when the position reaches 624);
* ``getrandbits(k)``, ``k <= 32``: ``genrand_uint32() >> (32 - k)``; 0 for ``k == 0`` (no draw);
* ``randbelow(n)`` (``_randbelow_with_getrandbits``): ``getrandbits(n.bit_length())`` until the
  value is below ``n``; ``choice(seq)`` is ``seq[randbelow(len(seq))]``;
* ``sample(population, k)``: a pool list when ``n <= setsize`` (``21``, plus
  ``4 ** ceil(log(3 k, 4))`` when ``k > 5``, with the same float ``log``), else a rejection set.

Counts stay below 2 ** 32 (one 32-bit word per ``getrandbits``). Scratch arrays are the
caller's (no allocation per call): ``scratch`` is an int64 array of at least
``max(n, 128)`` entries that must be all zeros on entry and is all zeros again on return
(``new_scratch``).
"""

from __future__ import annotations

import math
import random

import numpy as np
from numba import njit

from swftools.replay.engine_gpu_jit import WORD, _ctz

N = 624  # MT19937 state words
M = 397
MATRIX_A = 0x9908B0DF
UPPER_MASK = 0x80000000
LOWER_MASK = 0x7FFFFFFF
GPU_OUT = 64  # scratch offset of a single-node job's sampled GPU indices (GPUs per node <= 62)
LOG4 = math.log(4.0)


def mt_state(seed: int) -> np.ndarray:
    """The state of ``random.Random(seed)``: uint32[625], 624 words then the position."""
    return state_of(random.Random(seed))


def state_of(rng: random.Random) -> np.ndarray:
    """The current state of the generator ``rng`` as ``mt_state`` lays it out."""
    return np.array(rng.getstate()[1], dtype=np.uint32)


def python_state(mt: np.ndarray) -> tuple:
    """``mt`` as ``random.Random.getstate()`` gives it (for ``setstate``)."""
    return (3, tuple(int(x) for x in mt), None)


def new_scratch(n_nodes: int) -> np.ndarray:
    """A zeroed scratch array for ``sample_indices`` / ``draw_random`` on ``n_nodes`` nodes."""
    return np.zeros(max(n_nodes, 2 * GPU_OUT), dtype=np.int64)


@njit(cache=True)
def _twist(mt):  # pragma: no cover - compiled
    """Regenerate the 624 words (``genrand_uint32``'s block), position back to 0."""
    for kk in range(N - M):
        y = (np.int64(mt[kk]) & UPPER_MASK) | (np.int64(mt[kk + 1]) & LOWER_MASK)
        mt[kk] = np.int64(mt[kk + M]) ^ (y >> 1) ^ (MATRIX_A if y & 1 else 0)
    for kk in range(N - M, N - 1):
        y = (np.int64(mt[kk]) & UPPER_MASK) | (np.int64(mt[kk + 1]) & LOWER_MASK)
        mt[kk] = np.int64(mt[kk + (M - N)]) ^ (y >> 1) ^ (MATRIX_A if y & 1 else 0)
    y = (np.int64(mt[N - 1]) & UPPER_MASK) | (np.int64(mt[0]) & LOWER_MASK)
    mt[N - 1] = np.int64(mt[M - 1]) ^ (y >> 1) ^ (MATRIX_A if y & 1 else 0)
    mt[N] = 0


@njit(cache=True)
def genrand_uint32(mt):  # pragma: no cover - compiled
    """The next 32-bit output (as int64, 0 .. 2 ** 32 - 1)."""
    i = np.int64(mt[N])
    if i >= N:
        _twist(mt)
        i = 0
    y = np.int64(mt[i])
    mt[N] = i + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y


@njit(cache=True)
def getrandbits(mt, k):  # pragma: no cover - compiled
    """``Random.getrandbits(k)`` for ``0 <= k <= 32``."""
    if k == 0:
        return np.int64(0)
    return genrand_uint32(mt) >> (32 - k)


@njit(cache=True)
def _bit_length(n):  # pragma: no cover - compiled
    """``int.bit_length`` for ``0 <= n < 2 ** 32``."""
    b = 0
    if n >> 16:
        b += 16
        n >>= 16
    if n >> 8:
        b += 8
        n >>= 8
    if n >> 4:
        b += 4
        n >>= 4
    if n >> 2:
        b += 2
        n >>= 2
    if n >> 1:
        b += 1
        n >>= 1
    return b + n


@njit(cache=True)
def randbelow(mt, n):  # pragma: no cover - compiled
    """``Random._randbelow(n)`` for ``1 <= n < 2 ** 32``."""
    k = _bit_length(n)
    r = getrandbits(mt, k)
    while r >= n:
        r = getrandbits(mt, k)
    return r


@njit(cache=True)
def choice_index(mt, n):  # pragma: no cover - compiled
    """The index ``Random.choice(seq)`` takes for ``len(seq) == n >= 1``."""
    return randbelow(mt, n)


@njit(cache=True)
def sample_setsize(k):  # pragma: no cover - compiled
    """``Random.sample``'s ``setsize`` for ``k`` draws (the pool list when ``n <= setsize``)."""
    setsize = 21
    if k > 5:
        # math.log(k * 3, 4) is log(float(k * 3)) / log(4.0) in CPython
        setsize += 4 ** np.int64(math.ceil(math.log(np.float64(k * 3)) / LOG4))
    return setsize


@njit(cache=True)
def sample_indices(mt, n, k, out, scratch):  # pragma: no cover - compiled
    """``Random.sample(range(n), k)`` into ``out[:k]`` (selection order), ``0 <= k <= n``;
    ``scratch[:n]`` zeros on entry and on return."""
    if n <= sample_setsize(k):
        for i in range(n):
            scratch[i] = i
        for i in range(k):
            j = randbelow(mt, n - i)
            out[i] = scratch[j]
            scratch[j] = scratch[n - i - 1]
        for i in range(n):
            scratch[i] = 0
        return
    for i in range(k):
        j = randbelow(mt, n)
        while scratch[j]:
            j = randbelow(mt, n)
        scratch[j] = 1
        out[i] = j
    for i in range(k):
        scratch[out[i]] = 0


@njit(cache=True)
def _popcount32(x):  # pragma: no cover - compiled
    """Set bits of ``0 <= x < 2 ** 32``."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@njit(cache=True)
def _select64(mask, r):  # pragma: no cover - compiled
    """Index of the ``r``-th (from 0) lowest set bit of ``0 <= mask < 2 ** 63``."""
    low = mask & 0xFFFFFFFF
    c = _popcount32(low)
    if r >= c:
        r -= c
        low = mask >> 32
        base = 32
    else:
        base = 0
    for _ in range(r):
        low &= low - 1
    return base + _ctz(low)


@njit(cache=True)
def _sort_ranks(out, k, n, scratch):  # pragma: no cover - compiled
    """Sort the distinct ranks ``out[:k]`` (of ``range(n)``) ascending, in place: insertion
    for a few, marks in ``scratch[:n]`` (left zeroed) when ``n`` is a few times ``k``, else
    numba's sort (it costs some 300 ns a call whatever ``k``)."""
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
        out[:k].sort()


@njit(cache=True)
def _select_ranks(row, ranks, count):  # pragma: no cover - compiled
    """Replace the ascending ranks ``ranks[:count]`` among the set bits of the word row ``row``
    (32 nodes a word) by those bits' node indices."""
    q = 0
    base = 0  # set bits in the words before
    for w in range(row.shape[0]):
        if q == count:
            return
        m = row[w]
        if not m:
            continue
        c = _popcount32(m)
        seen = 0  # set bits of ``m`` already dropped
        while q < count and ranks[q] < base + c:
            r = ranks[q] - base
            while seen < r:
                m &= m - 1
                seen += 1
            ranks[q] = w * WORD + _ctz(m)
            q += 1
        base += c


@njit(cache=True)
def draw_random(mt, exact, cnt, gpu_free, g, nodes, per_node, out_nodes,
                scratch):  # pragma: no cover - compiled
    """``placement.Random.draw`` on the engine's state (``engine_gpu_jit``: ``exact`` words,
    ``cnt``, ``gpu_free``, ``g``): the chosen nodes ascending into ``out_nodes[:count]``;
    returns (count, GPU bit set used on each node); (0, 0) without a draw if the job does not
    fit."""
    if nodes > 1:
        n = cnt[g]
        if n < nodes:  # does not fit (CPython raises; no draw)
            return 0, np.int64(0)
        sample_indices(mt, n, nodes, out_nodes, scratch)
        _sort_ranks(out_nodes, nodes, n, scratch)
        _select_ranks(exact[g], out_nodes, nodes)
        return nodes, (np.int64(1) << g) - 1
    n = 0
    for f in range(per_node, g + 1):
        n += cnt[f]
    if n == 0:  # does not fit (CPython raises; no draw)
        return 0, np.int64(0)
    r = randbelow(mt, n)
    k = -1
    for w in range(exact.shape[1]):
        m = 0
        for f in range(per_node, g + 1):
            m |= exact[f, w]
        c = _popcount32(m)
        if r < c:
            for _ in range(r):
                m &= m - 1
            k = w * WORD + _ctz(m)
            break
        r -= c
    out_nodes[0] = k
    free = gpu_free[k]
    held = _popcount32(free & 0xFFFFFFFF) + _popcount32(free >> 32)
    if per_node == 1:  # Random.draw: choice(held)
        return 1, np.int64(1) << _select64(free, randbelow(mt, held))
    picked = scratch[GPU_OUT:GPU_OUT + per_node]
    sample_indices(mt, held, per_node, picked, scratch)
    chosen = np.int64(0)
    for i in range(per_node):
        chosen |= np.int64(1) << _select64(free, picked[i])
        picked[i] = 0
    return 1, chosen
