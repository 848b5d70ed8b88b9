# The compiled engines' shared pieces (inline C, cimported by _engine_flat.pyx, _engine_gpu.pyx
# and _engine_general.pyx): the heap of job ends, the sorted list of estimated ends, searchsorted,
# ``fit_bound`` and the EASY reservation of GPU nodes, as arrays (bit helpers: _bits.pxd).
# Keys are ``time << shift | job`` in int64 (engine_flat.fits_int64_keys).
from libc.stdint cimport int64_t
from libc.string cimport memmove

cdef extern from *:
    """
    #define SWFTOOLS_INFINITY (((int64_t) 1) << 62)
    """
    const int64_t INFINITY "SWFTOOLS_INFINITY"  # engine_flat.INFINITY


cdef inline int64_t fit_bound(const int64_t* cnt, int64_t g) noexcept nogil:
    """``GpuState.fit_bound``."""
    cdef int64_t f
    if cnt[g]:
        return cnt[g] * g
    for f in range(g - 1, 0, -1):
        if cnt[f]:
            return f
    return 0


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
    """The smallest key; ``n[0]``, the heap's size, shrinks by one."""
    cdef int64_t top = heap[0], last, i = 0, child, size
    n[0] -= 1
    size = n[0]
    last = heap[size]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= last:
            break
        heap[i] = heap[child]
        i = child
    if size > 0:
        heap[i] = last
    return top


cdef inline int64_t search_left(const int64_t* arr, int64_t n, int64_t key) noexcept nogil:
    """numpy's ``searchsorted(arr[:n], key)`` (side left)."""
    cdef int64_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline int64_t search_right(const int64_t* arr, int64_t n, int64_t key) noexcept nogil:
    """numpy's ``searchsorted(arr[:n], key, side="right")``."""
    cdef int64_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] <= key:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline int64_t sorted_insert(int64_t* arr, int64_t n, int64_t key) noexcept nogil:
    cdef int64_t idx = search_left(arr, n, key)
    memmove(arr + idx + 1, arr + idx, (n - idx) * sizeof(int64_t))
    arr[idx] = key
    return n + 1


cdef inline int64_t sorted_remove(int64_t* arr, int64_t n, int64_t key) noexcept nogil:
    cdef int64_t idx = search_left(arr, n, key)
    memmove(arr + idx, arr + idx + 1, (n - 1 - idx) * sizeof(int64_t))
    return n - 1


cdef inline void record_start(int64_t j, int64_t now, const int64_t* runtime,
                              const int64_t* estimate, int64_t* start, int64_t* ends,
                              int64_t* n_ends, int64_t* running, int64_t* n_running,
                              int64_t* est_key, int64_t shift) noexcept nogil:
    """Job ``j`` starts now: its start, its end in the heap, its estimated end in the sorted
    list; ``n_ends[0]`` and ``n_running[0]`` grow."""
    cdef int64_t k
    start[j] = now
    n_ends[0] = heap_push(ends, n_ends[0], (now + runtime[j]) << shift | j)
    k = (now + estimate[j]) << shift | j
    est_key[j] = k
    n_running[0] = sorted_insert(running, n_running[0], k)


# The EASY reservation of GPU nodes, shared by the GPU fast path and the general engine.
cdef inline bint reserve(const int64_t* free, const int64_t* cnt, int64_t g, int64_t managed,
                         int64_t now, int64_t head_nodes,
                   int64_t head_per_node, const int64_t* running, int64_t n_running,
                   int64_t shift, int64_t low_mask, const int64_t* node_off,
                   const int64_t* node_list, const int64_t* per_node, const int64_t* cap_t,
                   const int64_t* cap_n, int64_t n_changes, int64_t n_nodes, int64_t* projected,
                   char* flag, int64_t* shadow, int64_t* flagged) noexcept nogil:
    """``model.gpu_reservation``: fills ``projected`` (free GPUs per node at the shadow time)
    and ``flag`` (the nodes the head can use then); returns whether found, with the shadow time
    and the flagged count."""
    cdef int64_t k, f, i = 0, t = now, key, j, p, q, before, t_next, counted = 0
    cdef int64_t c = search_right(cap_t, n_changes, now)
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
                         int64_t flagged, const int64_t* projected, const char* flag,
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
