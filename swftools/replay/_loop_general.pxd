# The general engine's own structure on C arrays (inlined where cimported): the waiting queue's
# segment tree (shape bits and minimum estimates per node). What it shares with the fast paths
# is _loop.pxd's.
from libc.stdint cimport int64_t

from swftools.replay._loop cimport INFINITY


ctypedef struct Tree:
    int64_t leaves
    int64_t* keys  # shape bits per node
    int64_t* min_est
    int64_t* job_at


cdef inline void enqueue(Tree* t, int64_t pos, int64_t j, int64_t b,
                         int64_t e) noexcept nogil:
    """Job ``j`` (queue bit ``b``, estimate ``e``) joins the queue at position ``pos``."""
    cdef int64_t i = pos + t.leaves
    cdef bint changed
    t.job_at[pos] = j
    t.keys[i] = b
    t.min_est[i] = e
    i >>= 1
    while i:
        changed = False
        if not t.keys[i] & b:
            t.keys[i] |= b
            changed = True
        if t.min_est[i] > e:
            t.min_est[i] = e
            changed = True
        if not changed:
            break
        i >>= 1


cdef inline void dequeue(Tree* t, int64_t pos) noexcept nogil:
    cdef int64_t i = pos + t.leaves, left, k, a, b, e
    t.keys[i] = 0
    t.min_est[i] = INFINITY
    i >>= 1
    while i:
        left = i << 1
        k = t.keys[left] | t.keys[left + 1]
        a = t.min_est[left]
        b = t.min_est[left + 1]
        e = a if a < b else b
        if t.keys[i] == k and t.min_est[i] == e:
            break
        t.keys[i] = k
        t.min_est[i] = e
        i >>= 1


cdef inline bint _wanted(const Tree* t, int64_t i, int64_t fit, int64_t allowed,
                         int64_t window) noexcept nogil:
    cdef int64_t k = t.keys[i]
    return (k & allowed) != 0 or ((k & fit) != 0 and t.min_est[i] <= window)


cdef inline int64_t search(const Tree* t, int64_t i, int64_t fit, int64_t allowed,
                           int64_t window, int64_t top) noexcept nogil:
    """``run_gpu``'s ``search`` (always resuming after node ``i``'s subtree)."""
    cdef bint resume = True
    while True:
        if resume:
            while True:
                if i <= top:
                    return -1
                if i & 1:
                    i >>= 1
                    continue
                i += 1
                if _wanted(t, i, fit, allowed, window):
                    break
        if i >= t.leaves:
            return i - t.leaves
        i <<= 1
        if _wanted(t, i, fit, allowed, window):
            resume = False
            continue
        i += 1
        resume = not _wanted(t, i, fit, allowed, window)


