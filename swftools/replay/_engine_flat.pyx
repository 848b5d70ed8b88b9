"""``engine_flat.run_flat`` compiled: the same event loop, statement for statement.

The pure-Python ``engine_flat._run_flat_python`` stays the reference (and the path for small
workloads); this is the compiled twin for large ones. Python's containers become fixed arrays:
the heap of job ends an array heap, the sorted list of estimated ends an array kept sorted by
insertion, the queue's segment tree the same two arrays of minima. Keys are
``time << shift | job`` in int64 (``run_flat`` checks they fit before calling).
``tests/test_replay_engine_flat_jit.py`` checks both give the same start times job for job.
"""

import numpy as np

from libc.stdint cimport int64_t

from swftools.replay._bits cimport bit_length
from swftools.replay._loop cimport (INFINITY, heap_pop, record_start,
                                    sorted_remove)


cdef inline int64_t _search(int64_t i, int64_t fit, int64_t spare, int64_t window, int64_t top,
                            bint resume, int64_t leaves, const int64_t* min_size,
                            const int64_t* min_est) noexcept nogil:
    """``run_flat``'s ``search``."""
    cdef int64_t s
    if not resume:
        s = min_size[i]
        if not (s <= spare or (s <= fit and min_est[i] <= window)):
            return -1
    while True:
        if resume:
            while True:
                if i <= top:
                    return -1
                if i & 1:
                    i >>= 1
                    continue
                i += 1
                s = min_size[i]
                if s <= spare or (s <= fit and min_est[i] <= window):
                    break
        if i >= leaves:
            return i - leaves
        i <<= 1
        s = min_size[i]
        if s <= spare or (s <= fit and min_est[i] <= window):
            resume = False
            continue
        i += 1
        s = min_size[i]
        resume = not (s <= spare or (s <= fit and min_est[i] <= window))


cdef inline void _dequeue(int64_t pos, int64_t leaves, int64_t* min_size,
                          int64_t* min_est) noexcept nogil:
    cdef int64_t i = pos + leaves, left, a, b, s, e
    min_size[i] = INFINITY
    min_est[i] = INFINITY
    i >>= 1
    while i:
        left = i << 1
        a = min_size[left]
        b = min_size[left + 1]
        s = a if a < b else b
        a = min_est[left]
        b = min_est[left + 1]
        e = a if a < b else b
        if min_size[i] == s and min_est[i] == e:
            break
        min_size[i] = s
        min_est[i] = e
        i >>= 1


def run_flat_compiled(const int64_t[::1] submit_v, const int64_t[::1] runtime_v,
                      const int64_t[::1] size_v, const int64_t[::1] estimate_v,
                      int64_t procs, bint easy):
    """Start times (queue order) of ``engine_flat.run_flat``; int64 arrays in."""
    cdef int64_t n = submit_v.shape[0]
    start_a = np.zeros(n, np.int64)
    if n == 0:
        return start_a
    cdef int64_t shift = max(1, bit_length(n))
    cdef int64_t low = (<int64_t>1 << shift) - 1
    cdef int64_t leaves = <int64_t>1 << max(1, bit_length(n - 1))
    ends_a = np.empty(n, np.int64)
    running_a = np.empty(n, np.int64)
    est_key_a = np.zeros(n, np.int64)
    min_size_a = np.full(2 * leaves, INFINITY, np.int64)
    min_est_a = np.full(2 * leaves, INFINITY, np.int64)
    job_at_a = np.zeros(n, np.int64)
    sub_a = np.empty(n + 1, np.int64)
    sub_a[:n] = submit_v
    sub_a[n] = INFINITY
    cdef int64_t[::1] start_v = start_a, ends_v = ends_a, running_v = running_a
    cdef int64_t[::1] est_key_v = est_key_a, min_size_v = min_size_a, min_est_v = min_est_a
    cdef int64_t[::1] job_at_v = job_at_a, sub_v = sub_a
    cdef const int64_t* runtime = &runtime_v[0]
    cdef const int64_t* size = &size_v[0]
    cdef const int64_t* estimate = &estimate_v[0]
    cdef int64_t* start = &start_v[0]
    cdef int64_t* ends = &ends_v[0]
    cdef int64_t* running = &running_v[0]
    cdef int64_t* est_key = &est_key_v[0]
    cdef int64_t* min_size = &min_size_v[0]
    cdef int64_t* min_est = &min_est_v[0]
    cdef int64_t* job_at = &job_at_v[0]
    cdef int64_t* sub = &sub_v[0]
    cdef int64_t n_ends = 0, n_running = 0, next_pos = 0, head = 0, waiting = 0
    cdef int64_t free = procs, res_head = -1, shadow = 0, extra = 0, gap = 0
    cdef int64_t i_sub = 0, next_sub = sub[0], next_end, now, key, j, k, t, s, e
    cdef int64_t first_arrival, pos, hj, deficit, acc, idx, top
    cdef bint changed
    with nogil:
        while True:
            next_end = ends[0] >> shift if n_ends else INFINITY
            if next_end < next_sub:
                now = next_end
            else:
                now = next_sub
                if now == INFINITY:
                    break
            while next_end == now:
                key = heap_pop(ends, &n_ends)
                j = key & low
                free += size[j]
                k = est_key[j]
                n_running = sorted_remove(running, n_running, k)
                t = k >> shift
                if t > now and res_head >= 0:
                    s = size[j]
                    if s >= gap:
                        res_head = -1
                    else:
                        gap -= s
                        if t > shadow:
                            extra += s
                next_end = ends[0] >> shift if n_ends else INFINITY
            first_arrival = i_sub
            if next_sub == now:
                i_sub += 1
                while sub[i_sub] == now:
                    i_sub += 1
                next_sub = sub[i_sub]
                if not waiting and i_sub == first_arrival + 1:
                    j = first_arrival
                    if size[j] <= free:
                        free -= size[j]
                        record_start(j, now, runtime, estimate, start, ends, &n_ends, running,
                                     &n_running, est_key, shift)
                        continue

            # 1. start from the head while it fits
            while waiting:
                while min_size[head + leaves] == INFINITY:
                    head += 1
                j = job_at[head]
                if size[j] > free:
                    break
                _dequeue(head, leaves, min_size, min_est)
                waiting -= 1
                free -= size[j]
                record_start(j, now, runtime, estimate, start, ends, &n_ends, running,
                             &n_running, est_key, shift)
            for j in range(first_arrival, i_sub):
                if not waiting and size[j] <= free:
                    free -= size[j]
                    record_start(j, now, runtime, estimate, start, ends, &n_ends, running,
                                 &n_running, est_key, shift)
                    continue
                pos = next_pos
                next_pos += 1
                job_at[pos] = j
                waiting += 1
                s = size[j]
                e = estimate[j]
                t = pos + leaves
                min_size[t] = s
                min_est[t] = e
                t >>= 1
                while t:
                    changed = False
                    if min_size[t] > s:
                        min_size[t] = s
                        changed = True
                    if min_est[t] > e:
                        min_est[t] = e
                        changed = True
                    if not changed:
                        break
                    t >>= 1
            if not (easy and waiting) or min_size[1] > free:
                continue

            # 2. EASY backfilling behind the blocked head
            while min_size[head + leaves] == INFINITY:
                head += 1
            hj = job_at[head]
            if res_head != hj or shadow < now:
                deficit = size[hj] - free
                acc = 0
                idx = 0
                while idx < n_running:
                    acc += size[running[idx] & low]
                    idx += 1
                    if acc >= deficit:
                        break
                k = running[idx - 1]
                t = k >> shift
                gap = deficit - acc + size[k & low] if t > now else INFINITY
                shadow = t if t > now else now
                while idx < n_running and running[idx] >> shift <= shadow:
                    acc += size[running[idx] & low]
                    idx += 1
                extra = acc - deficit
                res_head = hj
            top = (head + leaves) >> bit_length(head ^ (next_pos - 1))
            pos = _search(top, free, extra if extra < free else free, shadow - now, top, False,
                          leaves, min_size, min_est)
            while pos >= 0:
                j = job_at[pos]
                _dequeue(pos, leaves, min_size, min_est)
                waiting -= 1
                free -= size[j]
                if now + estimate[j] > shadow:
                    extra -= size[j]
                record_start(j, now, runtime, estimate, start, ends, &n_ends, running,
                             &n_running, est_key, shift)
                if min_size[1] > free:
                    break
                pos = _search(pos + leaves, free, extra if extra < free else free, shadow - now,
                              top, True, leaves, min_size, min_est)
    return start_a
