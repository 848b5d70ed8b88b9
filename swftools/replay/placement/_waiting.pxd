# priority-wc's waiting jobs on C arrays (inlined where cimported): per gain rank a list in queue
# order, kept by the engine (``wc_add`` at a job's arrival, ``wc_remove`` when it starts or is
# dropped), and the claims of the higher gains on a copy of the free GPU counts, which
# ``placement/_choose.pyx``'s ``_choose_wc`` reads as ``PriorityWc.claimed``.
from libc.stdint cimport int64_t

from swftools.replay._bits cimport ctz

cdef enum:
    RANK_WORD = 32  # ranks per word of ``ranks_on``

ctypedef struct Waiting:
    const int64_t* rank  # per job its gain's rank (0: the highest gain)
    const int64_t* nodes_of  # per job
    const int64_t* per_node  # per job
    const int64_t* order  # the nodes fastest first (``PriorityWc.order``)
    int64_t* first  # per rank its first waiting job in queue order (-1: none)
    int64_t* last  # per rank its last waiting job
    int64_t* next  # per job the next waiting job of its rank (-1: none)
    int64_t* prev  # per job the previous one (-1: none; -2: not waiting)
    int64_t* ranks_on  # the ranks with a waiting job, ``RANK_WORD`` a word
    int64_t* left  # per node: free GPUs once the higher gains claimed theirs
    int64_t* cnt  # g + 1: nodes of ``left`` by free GPUs
    int64_t* ptr  # g + 1: per need, no position of ``order`` before it has ``left`` >= need
    int64_t* mask  # node words: the nodes chosen


cdef inline void wc_add(Waiting* w, int64_t j) noexcept nogil:
    """Job ``j`` joins the waiting jobs of its gain (jobs join in queue order)."""
    cdef int64_t r = w.rank[j], last = w.last[r]
    w.prev[j] = last
    w.next[j] = -1
    if last >= 0:
        w.next[last] = j
    else:
        w.first[r] = j
        w.ranks_on[r // RANK_WORD] |= (<int64_t>1) << (r % RANK_WORD)
    w.last[r] = j


cdef inline void wc_remove(Waiting* w, int64_t j) noexcept nogil:
    """Job ``j`` leaves the waiting jobs (started or dropped)."""
    cdef int64_t r = w.rank[j], p = w.prev[j], q = w.next[j]
    if p == -2:
        return
    if p >= 0:
        w.next[p] = q
    else:
        w.first[r] = q
    if q >= 0:
        w.prev[q] = p
    else:
        w.last[r] = p
    if p < 0 and q < 0:
        w.ranks_on[r // RANK_WORD] &= ~((<int64_t>1) << (r % RANK_WORD))
    w.prev[j] = -2


cdef inline int64_t _above(int64_t mine) noexcept nogil:
    """The bits of the ranks above ``mine`` (higher gains) in its word."""
    return ((<int64_t>1) << (mine % RANK_WORD)) - 1


cdef inline bint wc_higher(const Waiting* w, int64_t mine) noexcept nogil:
    """Whether a job of higher gain than rank ``mine`` waits."""
    cdef int64_t rw
    if w.ranks_on[mine // RANK_WORD] & _above(mine):
        return True
    for rw in range(mine // RANK_WORD):
        if w.ranks_on[rw]:
            return True
    return False


cdef inline int64_t wc_fitting(const Waiting* w, int64_t need, int64_t g) noexcept nogil:
    """The nodes with ``left`` >= ``need``."""
    cdef int64_t f, c = 0
    for f in range(need, g + 1):
        c += w.cnt[f]
    return c


cdef inline void wc_take(Waiting* w, int64_t need, int64_t count, int64_t* out) noexcept nogil:
    """The first ``count`` nodes of ``order`` with ``left`` >= ``need`` (there are enough) into
    ``out`` (NULL: none) in that order, and ``need`` off their ``left``."""
    cdef int64_t p = w.ptr[need], c = 0, k, first = -1
    while c < count:
        k = w.order[p]
        if w.left[k] >= need:
            if first < 0:
                first = p
            if out != NULL:
                out[c] = k
            w.cnt[w.left[k]] -= 1
            w.left[k] -= need
            w.cnt[w.left[k]] += 1
            c += 1
        p += 1
    w.ptr[need] = first


cdef inline void wc_claim(Waiting* w, int64_t mine, int64_t g, int64_t total) noexcept nogil:
    """``PriorityWc.claimed`` on ``left`` (``total`` free GPUs, ``cnt`` and ``ptr`` set): the
    waiting jobs of the ranks above ``mine`` (highest gain first, then queue order) each take
    the fastest nodes that fit them (whole nodes for multi-node jobs; one that does not fit
    now takes nothing), until nothing is left."""
    cdef int64_t rw, m, low, x, n_x, need
    for rw in range(mine // RANK_WORD + 1):
        m = w.ranks_on[rw] if rw < mine // RANK_WORD else w.ranks_on[rw] & _above(mine)
        while m and total:
            low = m & -m
            m ^= low
            x = w.first[rw * RANK_WORD + ctz(low)]
            while x >= 0 and total:
                n_x = w.nodes_of[x]
                need = g if n_x > 1 else w.per_node[x]
                if wc_fitting(w, need, g) >= n_x:
                    wc_take(w, need, n_x, NULL)
                    total -= need * n_x
                x = w.next[x]
        if not total:
            return
