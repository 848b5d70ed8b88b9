# The compiled engines' shared pieces (inline C, cimported by _engine_flat.pyx and
# _engine_gpu.pyx): the heap of job ends and the sorted list of estimated ends, as arrays.
# Keys are ``time << shift | job`` in int64 (engine_flat.fits_int64_keys).
from libc.stdint cimport int64_t
from libc.string cimport memmove

cdef extern from *:
    """
    #define SWFTOOLS_INFINITY (((int64_t) 1) << 62)
    """
    const int64_t INFINITY "SWFTOOLS_INFINITY"  # engine_flat.INFINITY


cdef inline int64_t bit_length(int64_t x) noexcept nogil:
    cdef int64_t b = 0
    while x:
        x >>= 1
        b += 1
    return b


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
