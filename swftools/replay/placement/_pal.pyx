"""``pm-first`` and ``pal`` (``placement/pal.py``) compiled on recorded node shapes, for
``_choose.choose`` (the engine's compiled general path): the same choice as ``PmFirst.choose``
and ``Pal.choose`` from the same state (``tests/test_replay_engine_general_jit.py``).

The state is ``_choose``'s: ``exact[f * words + w]`` (word ``w``, 32 nodes, of the managed nodes
with exactly ``f`` free GPUs) and ``gpu_free[k]``. The tables (``placement.tables.pal_tables``,
from the Python policy's own ``class_grids``, ``_rank`` and ``cell_order``): ``pval`` (float64)
holds per application class its value grid (C x N x g, ``value[c][k][i]``) and then each
class's within-node cell values ascending; ``paux`` (int64) its sizes ``paux[P_N]``,
``paux[P_C]``, ``paux[P_PAL]``, ``paux[P_JOBS]`` and the offsets of ``RANK`` (C x N x g: per
class and node its GPUs by (value, GPU)), ``WORST`` (C x N: per class the nodes by (worst value,
node)), ``POS`` (C x N: each node's place in ``WORST``), ``CELLS`` (C + 1: where each class's
cells start in ``pval``) and ``CLASS`` (each job's class, queue order).

A cell ``c`` of ``pal`` admits a node when its ``per_node``-th best free GPU has value ``<= c``,
so the first cell that admits any node is the first ``c >=`` the lowest such value over the
nodes; a 1-GPU job's PM-First with best-match locality ranks by value first, so only each
node's free GPUs of its lowest free value compete, by (value, ``|free GPUs of that value on
the node - 1|``, node, GPU).
"""

from libc.stdint cimport int64_t

from swftools.replay._bits cimport ctz, first_in_order

cdef enum:
    WORD = 32

TABLES_HEADER = P_HEADER  # placement.tables.PAL_HEADER must equal it (tested)


def check_tables(const int64_t[::1] paux, const double[::1] pval, int64_t n_nodes, int64_t g,
                 int64_t n_jobs) -> bool:
    """Whether ``paux`` and ``pval`` are tables of ``n_nodes`` x ``g`` GPUs and ``n_jobs`` jobs
    (the compiled choice reads them without bounds checks, and finds a node only if each
    class's ``RANK`` orders every node's GPUs by value, ``POS`` inverts ``WORST`` and a cell
    admits every value)."""
    cdef int64_t n_c, q, cells, at, size, c, k, row, seen
    if paux.shape[0] < P_HEADER:
        return False
    n_c = paux[P_C]
    if paux[P_N] != n_nodes or paux[P_JOBS] != n_jobs or n_c < 1:
        return False
    for q, size in enumerate([n_c * n_nodes * g, n_c * n_nodes, n_c * n_nodes, n_c + 1,
                              n_jobs]):  # RANK, WORST, POS, CELLS, CLASS
        at = paux[P_RANK + q]
        if at < P_HEADER or at + size > paux.shape[0]:
            return False
    for q in range(n_c * n_nodes * g):
        if not 0 <= paux[paux[P_RANK] + q] < g:
            return False
    for q in range(n_c * n_nodes):
        if not (0 <= paux[paux[P_WORST] + q] < n_nodes and 0 <= paux[paux[P_POS] + q] < n_nodes):
            return False
    cells = paux[P_CELLS]
    if paux[cells] != n_c * n_nodes * g or paux[cells + n_c] > pval.shape[0]:
        return False
    for q in range(n_c):
        if paux[cells + q + 1] <= paux[cells + q]:  # every class has a cell
            return False
    for c in range(n_c):
        for at in range(paux[cells + c] + 1, paux[cells + c + 1]):
            if not pval[at - 1] < pval[at]:  # ascending, no NaN
                return False
        for q in range(c * n_nodes * g, (c + 1) * n_nodes * g):
            if not pval[q] <= pval[paux[cells + c + 1] - 1]:  # the last cell admits all
                return False
        for k in range(n_nodes):
            if paux[paux[P_POS] + c * n_nodes + paux[paux[P_WORST] + c * n_nodes + k]] != k:
                return False
            row = (c * n_nodes + k) * g
            seen = 0
            for q in range(g):
                at = paux[paux[P_RANK] + row + q]
                if seen >> at & 1 or (q and not pval[row + paux[paux[P_RANK] + row + q - 1]]
                                      <= pval[row + at]):
                    return False
                seen |= (<int64_t>1) << at
    for q in range(n_jobs):
        if not 0 <= paux[paux[P_CLASS] + q] < n_c:
            return False
    return True


cdef inline int64_t _cands(const int64_t* exact, int64_t words, int64_t g, int64_t w,
                           int64_t per_node) noexcept nogil:
    """Word ``w`` of the managed nodes with at least ``per_node`` free GPUs."""
    cdef int64_t m = 0, f
    for f in range(per_node, g + 1):
        m |= exact[f * words + w]
    return m


cdef inline int64_t _nth_free(int64_t free, const int64_t* rank, int64_t g,
                              int64_t count) noexcept nogil:
    """The ``count``-th free GPU of ``free`` in ``rank`` (it has that many)."""
    cdef int64_t q, i
    for q in range(g):
        i = rank[q]
        if free >> i & 1:
            count -= 1
            if not count:
                return i
    return -1


cdef int64_t _whole_nodes(const int64_t* exact, int64_t words, int64_t g, int64_t n,
                          const int64_t* worst, const int64_t* pos, int64_t nodes,
                          int64_t* out) noexcept nogil:
    """``PmFirst.whole_nodes``: the ``nodes`` whole free nodes first in ``worst`` into ``out``
    ascending (those placed no later than the ``nodes``-th found)."""
    cdef const int64_t* whole = exact + g * words
    cdef int64_t q, k, c = 0, last = -1, w, m, low
    for q in range(n):
        k = worst[q]
        if whole[k // WORD] >> (k % WORD) & 1:
            c += 1
            if c == nodes:
                last = q
                break
    c = 0
    for w in range(words):
        m = whole[w]
        while m:
            low = m & -m
            m ^= low
            k = w * WORD + ctz(low)
            if pos[k] <= last:
                out[c] = k
                c += 1
    return ((<int64_t>1) << g) - 1


cdef int64_t _one_gpu(const int64_t* exact, int64_t words, int64_t g, const int64_t* gpu_free,
                      const double* value, const int64_t* rank, int64_t* out) noexcept nogil:
    """``pal``'s 1-GPU job: ``pm_first_gpus(..., 1, locality=True)`` on the nodes with a free
    GPU. A node's best free GPU in ``rank`` has its lowest free value (the lowest GPU of it),
    and the free GPUs of that value follow it there."""
    cdef int64_t w, m, low, k, q, i, free, same, match, best_k = -1, best_i = -1, best_match = 0
    cdef const int64_t* r
    cdef double v, best_v = 0.0
    for w in range(words):
        m = _cands(exact, words, g, w, 1)
        while m:
            low = m & -m
            m ^= low
            k = w * WORD + ctz(low)
            free = gpu_free[k]
            r = rank + k * g
            q = 0
            while not free >> r[q] & 1:
                q += 1
            i = r[q]
            v = value[k * g + i]
            same = 1
            q += 1
            while q < g and value[k * g + r[q]] == v:
                same += free >> r[q] & 1
                q += 1
            match = same - 1
            if best_k < 0 or v < best_v or (v == best_v and match < best_match):
                best_k, best_i, best_v, best_match = k, i, v, match
    out[0] = best_k
    return (<int64_t>1) << best_i


cdef int64_t _pal_node(const int64_t* exact, int64_t words, int64_t g, const int64_t* gpu_free,
                       const double* value, const int64_t* rank, const double* cells,
                       int64_t n_cells, int64_t per_node, int64_t* out) noexcept nogil:
    """``pal``'s one-node job of ``per_node`` > 1 GPUs: the first within-node cell that admits
    a node; the node with the most free GPUs of value ``<= c`` (lower on ties) and its
    ``per_node`` best."""
    cdef int64_t w, m, low, k, i, q, cnt, free, best_k = -1, best_cnt = 0
    cdef double t, t_min = 0.0, c
    cdef bint found = False
    for w in range(words):
        m = _cands(exact, words, g, w, per_node)
        while m:
            low = m & -m
            m ^= low
            k = w * WORD + ctz(low)
            t = value[k * g + _nth_free(gpu_free[k], rank + k * g, g, per_node)]
            if not found or t < t_min:
                t_min = t
                found = True
    for q in range(n_cells):
        c = cells[q]
        if not c >= t_min:
            continue
        for w in range(words):
            m = _cands(exact, words, g, w, per_node)
            while m:
                low = m & -m
                m ^= low
                k = w * WORD + ctz(low)
                free = gpu_free[k]
                cnt = 0
                for i in range(g):
                    if free >> i & 1 and value[k * g + i] <= c:
                        cnt += 1
                if cnt >= per_node and cnt > best_cnt:
                    best_k, best_cnt = k, cnt
        break
    out[0] = best_k
    return first_in_order(gpu_free[best_k], rank + best_k * g, g, per_node, False)


cdef int64_t _pm_first_node(const int64_t* exact, int64_t words, int64_t g,
                            const int64_t* gpu_free, const double* value, const int64_t* rank,
                            int64_t per_node, int64_t* out) noexcept nogil:
    """``PmFirst.one_node``: the node whose ``per_node``-th best free GPU ranks first (then the
    lower node), and its ``per_node`` best free GPUs."""
    cdef int64_t w, m, low, k, best_k = -1
    cdef double v, best_v = 0.0
    for w in range(words):
        m = _cands(exact, words, g, w, per_node)
        while m:
            low = m & -m
            m ^= low
            k = w * WORD + ctz(low)
            v = value[k * g + _nth_free(gpu_free[k], rank + k * g, g, per_node)]
            if best_k < 0 or v < best_v:
                best_k, best_v = k, v
    out[0] = best_k
    return first_in_order(gpu_free[best_k], rank + best_k * g, g, per_node, False)


cdef int64_t choose_pal(const int64_t* exact, int64_t words, int64_t g,
                        const int64_t* gpu_free, const int64_t* paux, const double* pval,
                        int64_t j, int64_t nodes, int64_t per_node,
                        int64_t* out) noexcept nogil:
    """``PmFirst.choose`` or ``Pal.choose`` of job ``j`` (``nodes`` x ``per_node``, fits now):
    nodes into ``out[:nodes]`` ascending; returns the GPU set."""
    cdef int64_t n = paux[P_N], c = paux[paux[P_CLASS] + j]
    cdef const double* value = pval + c * n * g
    cdef const int64_t* rank = paux + paux[P_RANK] + c * n * g
    cdef int64_t lo, hi
    if nodes > 1:
        return _whole_nodes(exact, words, g, n, paux + paux[P_WORST] + c * n,
                            paux + paux[P_POS] + c * n, nodes, out)
    if not paux[P_PAL]:
        return _pm_first_node(exact, words, g, gpu_free, value, rank, per_node, out)
    if per_node == 1:
        return _one_gpu(exact, words, g, gpu_free, value, rank, out)
    lo = paux[paux[P_CELLS] + c]
    hi = paux[paux[P_CELLS] + c + 1]
    return _pal_node(exact, words, g, gpu_free, value, rank, pval + lo, hi - lo, per_node, out)
