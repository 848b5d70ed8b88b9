"""``engine_flat.run_flat`` compiled with numba: the same event loop, statement for statement.

The pure-Python ``run_flat`` stays the reference (and the path for small workloads, where
compiling or loading the cached machine code costs more than it saves); this module is the
compiled twin for large ones. Python's containers become fixed arrays: the heap of job ends an
array heap, the sorted list of estimated ends an array kept sorted by insertion, the queue's
segment tree the same two arrays of minima. Keys are ``time << shift | job`` in int64 (times
below 2**38 s with up to 2**24 jobs, far beyond any trace; ``run_flat`` checks before calling).
``tests/test_replay_engine_flat_jit.py`` checks both give the same start times job for job on
random workloads and on real traces.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

INFINITY = 1 << 62


@njit(cache=True)
def _bit_length(x):  # pragma: no cover - compiled
    b = 0
    while x:
        x >>= 1
        b += 1
    return b


@njit(cache=True)
def _heap_push(heap, n, key):  # pragma: no cover - compiled
    i = n
    heap[i] = key
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] <= key:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = key
    return n + 1


@njit(cache=True)
def _heap_pop(heap, n):  # pragma: no cover - compiled
    top = heap[0]
    n -= 1
    last = heap[n]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= last:
            break
        heap[i] = heap[child]
        i = child
    if n > 0:
        heap[i] = last
    return top, n


# The shifts below count in uint64 over slices: with a signed index numba adds a negative-index
# wrap-around to every access, which keeps LLVM from vectorizing the copy (at ABCI's thousands of
# running jobs these two were half of a replay's time; this way they are about 5x faster).
@njit(cache=True)
def _sorted_insert(arr, n, key):  # pragma: no cover - compiled
    idx = np.searchsorted(arr[:n], key)
    count = uint64(n - idx)
    src = arr[idx:n]
    dst = arr[idx + 1:n + 1]
    one = uint64(1)
    for i in range(count):  # from the end: dst overlaps src one place up
        k = count - one - i
        dst[k] = src[k]
    arr[idx] = key
    return n + 1


@njit(cache=True)
def _sorted_remove(arr, n, key):  # pragma: no cover - compiled
    idx = np.searchsorted(arr[:n], key)
    src = arr[idx + 1:n]
    dst = arr[idx:n - 1]
    for i in range(uint64(n - 1 - idx)):
        dst[i] = src[i]
    return n - 1


@njit(cache=True, inline="always")  # in numba IR: a call here costs the loop 6%
def _record_start(j, now, runtime, estimate, start, ends, n_ends, running, n_running, est_key,
                  shift):  # pragma: no cover - compiled
    """Job ``j`` starts now: its start, its end in the heap, its estimated end in the sorted
    list (both engines' twins); returns the heap's and the list's new sizes."""
    start[j] = now
    n_ends = _heap_push(ends, n_ends, (now + runtime[j]) << shift | j)
    k = (now + estimate[j]) << shift | j
    est_key[j] = k
    return n_ends, _sorted_insert(running, n_running, k)


@njit(cache=True)
def _search(i, fit, spare, window, top, resume, leaves, min_size, min_est):  # pragma: no cover
    """``engine_flat.run_flat``'s ``search``, compiled."""
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


@njit(cache=True)
def _dequeue(pos, leaves, min_size, min_est):  # pragma: no cover - compiled
    i = pos + leaves
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


@njit(cache=True)
def run_flat_compiled(submit, runtime, size, estimate, procs, easy):  # pragma: no cover
    """Start times (queue order) of ``engine_flat.run_flat``, compiled; int64 arrays in."""
    n = len(submit)
    start = np.zeros(n, np.int64)
    shift = max(1, _bit_length(n))
    low = (1 << shift) - 1
    ends = np.empty(n, np.int64)
    n_ends = 0
    running = np.empty(n, np.int64)
    n_running = 0
    est_key = np.zeros(n, np.int64)
    leaves = 1 << max(1, _bit_length(n - 1))
    min_size = np.full(2 * leaves, INFINITY, np.int64)
    min_est = np.full(2 * leaves, INFINITY, np.int64)
    job_at = np.zeros(n, np.int64)
    next_pos = 0
    head = 0
    waiting = 0
    free = procs
    res_head = -1
    shadow = 0
    extra = 0
    gap = 0
    sub = np.empty(n + 1, np.int64)
    sub[:n] = submit
    sub[n] = INFINITY
    i_sub = 0
    next_sub = sub[0]
    while True:
        next_end = ends[0] >> shift if n_ends else INFINITY
        if next_end < next_sub:
            now = next_end
        else:
            now = next_sub
            if now == INFINITY:
                break
        while next_end == now:
            key, n_ends = _heap_pop(ends, n_ends)
            j = key & low
            free += size[j]
            k = est_key[j]
            n_running = _sorted_remove(running, n_running, k)
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
                    n_ends, n_running = _record_start(j, now, runtime, estimate, start, ends,
                                                      n_ends, running, n_running, est_key, shift)
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
            n_ends, n_running = _record_start(j, now, runtime, estimate, start, ends, n_ends,
                                              running, n_running, est_key, shift)
        for j in range(first_arrival, i_sub):
            if not waiting and size[j] <= free:
                free -= size[j]
                n_ends, n_running = _record_start(j, now, runtime, estimate, start, ends, n_ends,
                                                  running, n_running, est_key, shift)
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
        top = (head + leaves) >> _bit_length(head ^ (next_pos - 1))
        pos = _search(top, free, extra if extra < free else free, shadow - now, top, False,
                      leaves, min_size, min_est)
        while pos >= 0:
            j = job_at[pos]
            _dequeue(pos, leaves, min_size, min_est)
            waiting -= 1
            free -= size[j]
            if now + estimate[j] > shadow:
                extra -= size[j]
            n_ends, n_running = _record_start(j, now, runtime, estimate, start, ends, n_ends,
                                              running, n_running, est_key, shift)
            if min_size[1] > free:
                break
            pos = _search(pos + leaves, free, extra if extra < free else free, shadow - now, top,
                          True, leaves, min_size, min_est)
    return start
