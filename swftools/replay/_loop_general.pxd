# The event loop's structures on C arrays, shared by the compiled replay engines (inlined where
# cimported): ``searchsorted``, the heap of job ends, the sorted list of estimated ends, the
# waiting queue's segment tree (shape bits and minimum estimates per node), ``fit_bound`` and the
# EASY reservation of GPU nodes (``model.gpu_reservation``, ``Reservation.allows``). Keys are
# ``time << shift | job`` in int64.
from libc.stdint cimport int64_t

cdef extern from *:
    """
    #define SWF_LOOP_INFINITY (((long long)1) << 62)
    """
    const int64_t INFINITY "SWF_LOOP_INFINITY"  # beyond any time


cdef inline int64_t upper(const int64_t* a, int64_t n, int64_t x) noexcept nogil:
    """``np.searchsorted(a[:n], x, side="right")``."""
    cdef int64_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline int64_t lower(const int64_t* a, int64_t n, int64_t x) noexcept nogil:
    """``np.searchsorted(a[:n], x)``."""
    cdef int64_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline int64_t heap_push(int64_t* heap, int64_t n, int64_t key) noexcept nogil:
    cdef int64_t i = n, parent
    heap[i] = key
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] <= key:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = key
    return n + 1


cdef inline int64_t heap_pop(int64_t* heap, int64_t* n) noexcept nogil:
    cdef int64_t top = heap[0], last, i = 0, child
    n[0] -= 1
    last = heap[n[0]]
    while True:
        child = 2 * i + 1
        if child >= n[0]:
            break
        if child + 1 < n[0] and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= last:
            break
        heap[i] = heap[child]
        i = child
    if n[0] > 0:
        heap[i] = last
    return top


cdef inline int64_t sorted_insert(int64_t* arr, int64_t n, int64_t key) noexcept nogil:
    cdef int64_t idx = lower(arr, n, key), i
    i = n
    while i > idx:
        arr[i] = arr[i - 1]
        i -= 1
    arr[idx] = key
    return n + 1


cdef inline int64_t sorted_remove(int64_t* arr, int64_t n, int64_t key) noexcept nogil:
    cdef int64_t idx = lower(arr, n, key), i
    for i in range(idx, n - 1):
        arr[i] = arr[i + 1]
    return n - 1


cdef inline int64_t fit_bound(const int64_t* cnt, int64_t g) noexcept nogil:
    """``GpuState.fit_bound``."""
    cdef int64_t f
    if cnt[g]:
        return cnt[g] * g
    for f in range(g - 1, 0, -1):
        if cnt[f]:
            return f
    return 0


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


cdef inline bint reserve(const int64_t* free, const int64_t* cnt, int64_t g, int64_t managed,
                         int64_t now, int64_t head_nodes,
                   int64_t head_per_node, const int64_t* running, int64_t n_running,
                   int64_t shift, int64_t low_mask, const int64_t* node_off,
                   const int64_t* node_list, const int64_t* per_node, const int64_t* cap_t,
                   const int64_t* cap_n, int64_t n_changes, int64_t n_nodes, int64_t* projected,
                   bint* flag, int64_t* shadow, int64_t* flagged) noexcept nogil:
    """``model.gpu_reservation``: fills ``projected`` (free GPUs per node at the shadow time)
    and ``flag`` (the nodes the head can use then); returns whether found, with the shadow time
    and the flagged count."""
    cdef int64_t k, f, i = 0, t = now, key, j, p, q, before, t_next, counted = 0
    cdef int64_t c = upper(cap_t, n_changes, now)
    cdef int64_t threshold = g if head_nodes > 1 else head_per_node
    cdef bint ok
    for k in range(n_nodes):
        projected[k] = free[k]
    for f in range(threshold, g + 1):
        counted += cnt[f]
    while True:
        while i < n_running:
            key = running[i]
            if key >> shift > t:
                break
            j = key & low_mask
            p = per_node[j]
            for q in range(node_off[j], node_off[j + 1]):
                k = node_list[q]
                before = projected[k]
                projected[k] = before + p
                if before < threshold and threshold <= before + p and k < managed:
                    counted += 1
            i += 1
        if c < n_changes and cap_t[c] <= t:
            while c < n_changes and cap_t[c] <= t:
                managed = cap_n[c]
                c += 1
            counted = 0
            for k in range(managed):
                if projected[k] >= threshold:
                    counted += 1
        if counted >= head_nodes:
            flagged[0] = 0
            for k in range(n_nodes):
                ok = k < managed and projected[k] >= threshold
                flag[k] = ok
                if ok:
                    flagged[0] += 1
            shadow[0] = t
            return True
        t_next = INFINITY
        if i < n_running:
            t_next = running[i] >> shift
        if c < n_changes and cap_t[c] < t_next:
            t_next = cap_t[c]
        if t_next == INFINITY:
            shadow[0] = t
            flagged[0] = 0
            return False
        t = t_next


cdef inline bint allows(int64_t head_nodes, int64_t head_per_node, int64_t spare,
                         int64_t flagged, const int64_t* projected, const bint* flag,
                         const int64_t* chosen, int64_t count, int64_t per_node) noexcept nogil:
    """``Reservation.allows`` for the nodes ``chosen[:count]``."""
    cdef int64_t taken = 0, q, k, left
    if head_nodes > 1:
        for q in range(count):
            if flag[chosen[q]]:
                taken += 1
        return taken <= spare
    left = flagged
    for q in range(count):
        k = chosen[q]
        if flag[k] and projected[k] - per_node < head_per_node:
            left -= 1
    return left > 0
