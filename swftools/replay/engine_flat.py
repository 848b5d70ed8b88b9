"""Event-driven FCFS / EASY replay on a flat pool of processors (SWF mode).

The scheduler acts only at submissions and job ends; all events of one instant are applied
before it schedules. A zero-length job started at ``t`` ends at ``t``: that end is a new event
of the same instant, handled in a further round at ``t``.

Scheduling pass at ``now``:

1. start jobs from the head of the queue (submit order, ties by job id) while they fit;
2. EASY only: if the head does not fit, it gets a reservation at the *shadow time*, the
   earliest instant at which the free processors plus those of running jobs whose *estimated*
   end (start + estimate; ``now`` if already past) has come reach its size; ``extra`` is what
   is free at that instant beyond the head's size. A later job may start now if it fits and
   either ends by the shadow time according to its estimate, or needs at most ``extra``
   processors (and then ``extra`` shrinks by its size). Jobs are taken in queue order.

Speed: the waiting queue is a segment tree over queue positions holding the minimum size and
the minimum estimate of each subtree, so one backfill search costs O(log n) in the usual case
instead of a scan of the whole queue; the reservation is cached until a job ends or the head
changes (starting a backfilled job never moves the shadow time: it either ends before it or
consumes ``extra``).

This is the specialised fast path of ``engine_gpu``'s event loop for plain flat-pool replays; a
flat replay with a placement or run-time factors runs on ``engine_gpu.run_gpu``'s general path
with ``model.FlatNodes`` instead (see that module's docstring for why both exist).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from heapq import heappop, heappush
from math import inf

import numpy as np

from swftools.extensions import load
from swftools.replay.workload import Workload

INFINITY = 1 << 62


COMPILED_MIN_JOBS = 1_000  # Python below it (benchmarks/bench_compiled_threshold.py)
KEY_BITS = 62  # ``time << shift | job`` keys must stay below 2**62 for the compiled twin


def run_flat(work: Workload, procs: int, policy: str, compiled: bool | None = None) -> np.ndarray:
    """Start time of every job of ``work`` (queue order) on ``procs`` processors.

    ``compiled``: run the compiled twin (``_engine_flat``, same start times); None decides by
    size (``COMPILED_MIN_JOBS``). Python runs when times are too large for int64 keys, or when
    the twin was not built (``swftools.extensions``).
    """
    n = len(work)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if compiled is None:
        compiled = n >= COMPILED_MIN_JOBS
    if compiled and fits_int64_keys(work):
        twin = load("swftools.replay._engine_flat", "the flat-pool replay")
        if twin is not None:
            as64 = [np.ascontiguousarray(a, dtype=np.int64)
                    for a in (work.submit, work.runtime, work.size, work.estimate)]
            return twin.run_flat_compiled(*as64, procs, policy == "easy")
    return _run_flat_python(work, procs, policy)


def fits_int64_keys(work: Workload, last_change: int | None = None) -> bool:
    """Whether every ``time << shift | job`` key of the replay fits a compiled twin's int64
    (``last_change``: the last instant the capacity changes, for the GPU node model)."""
    n = len(work)
    shift = max(1, n.bit_length())
    if not n:
        return True
    # every start is at most the last submission (or capacity change) plus all run times (jobs
    # never idle a machine that could host them), every estimated end that plus the largest
    # estimate
    ready = int(work.submit.max()) if last_change is None else max(int(work.submit.max()),
                                                                     int(last_change))
    latest = ready + int(work.runtime.sum()) + int(work.estimate.max())
    limit = 1 << (KEY_BITS - shift)
    return -limit < int(work.submit.min()) and latest < limit


def _run_flat_python(work: Workload, procs: int, policy: str) -> np.ndarray:
    """``run_flat`` in pure Python: the reference the compiled twin is checked against."""
    n = len(work)
    submit = work.submit.tolist()
    runtime = work.runtime.tolist()
    size = work.size.tolist()
    estimate = work.estimate.tolist()
    easy = policy == "easy"

    start = [0] * n
    shift = max(1, n.bit_length())
    low = (1 << shift) - 1
    ends: list[int] = []  # heap of end << shift | job
    running: list[int] = []  # sorted estimated_end << shift | job
    est_key = [0] * n

    leaves = 1 << max(1, (n - 1).bit_length())
    min_size = [INFINITY] * (2 * leaves)
    min_est = [INFINITY] * (2 * leaves)
    job_at = [0] * n  # queue position -> job
    next_pos = 0
    head = 0  # smallest position that may still be waiting
    waiting = 0
    free = procs
    res_head = -1  # job the cached reservation is for (-1: none)
    shadow = extra = gap = 0

    # deliberate twin of engine_gpu.search: min sizes here, shape bit masks there, each a flat loop
    def search(i: int, fit: int, spare: int, window: int, top: int, resume: bool,
               min_size: list[int] = min_size, min_est: list[int] = min_est) -> int:
        """First queue position in ``top``'s subtree, after node ``i``'s subtree if ``resume``
        else within it, whose job has size <= spare, or size <= fit and estimate <= window.

        Depth first; a right subtree is looked at only when the left one has no match. -1: none.
        """
        if not resume:
            s = min_size[i]
            if not (s <= spare or (s <= fit and min_est[i] <= window)):
                return -1
        while True:
            if resume:  # node i is exhausted: move to the next matching subtree to its right
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

    # deliberate twin of engine_gpu.dequeue: min sizes here, shape bit masks there, each a flat loop
    def dequeue(pos: int) -> None:
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

    submit.append(inf)  # sentinel (after any time, even 2**62): no bound checks on the cursor
    i_sub = 0
    next_sub = submit[0]
    while True:
        next_end = ends[0] >> shift if ends else inf
        if next_end < next_sub:
            now = next_end
        else:
            now = next_sub
            if now == inf:
                break
        while next_end == now:
            j = heappop(ends) & low
            free += size[j]
            k = est_key[j]
            del running[bisect_left(running, k)]
            t = k >> shift
            if t > now and res_head >= 0:  # ended before its estimate
                s = size[j]
                if s >= gap:  # the shadow time may move earlier: recompute
                    res_head = -1
                else:
                    gap -= s
                    if t > shadow:
                        extra += s
            next_end = ends[0] >> shift if ends else inf
        first_arrival = i_sub
        if next_sub == now:
            i_sub += 1
            while submit[i_sub] == now:
                i_sub += 1
            next_sub = submit[i_sub]
            if not waiting and i_sub == first_arrival + 1:  # the common case: one arrival
                j = first_arrival
                if size[j] <= free:
                    # deliberate inline twin of engine_gpu.launch (as a call: +40% replay time)
                    free -= size[j]
                    start[j] = now
                    heappush(ends, (now + runtime[j]) << shift | j)
                    k = (now + estimate[j]) << shift | j
                    est_key[j] = k
                    insort(running, k)
                    continue

        # 1. start from the head while it fits
        while waiting:
            while min_size[head + leaves] == INFINITY:
                head += 1
            j = job_at[head]
            if size[j] > free:
                break
            dequeue(head)
            waiting -= 1
            # deliberate inline twin of engine_gpu.launch (as a call: +40% replay time)
            free -= size[j]
            start[j] = now
            heappush(ends, (now + runtime[j]) << shift | j)
            k = (now + estimate[j]) << shift | j
            est_key[j] = k
            insort(running, k)
        for j in range(first_arrival, i_sub):
            if not waiting and size[j] <= free:
                # deliberate inline twin of engine_gpu.launch (as a call: +40% replay time)
                free -= size[j]
                start[j] = now
                heappush(ends, (now + runtime[j]) << shift | j)
                k = (now + estimate[j]) << shift | j
                est_key[j] = k
                insort(running, k)
                continue
            # deliberate inline twin of engine_gpu.enqueue (min sizes here): no call per queued job
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
            for k in running:
                acc += size[k & low]
                idx += 1
                if acc >= deficit:
                    break
            k = running[idx - 1]
            t = k >> shift
            # how much more the free processors may grow before the shadow time moves earlier
            gap = deficit - acc + size[k & low] if t > now else INFINITY
            shadow = t if t > now else now
            count = len(running)
            while idx < count and running[idx] >> shift <= shadow:
                acc += size[running[idx] & low]
                idx += 1
            extra = acc - deficit
            res_head = hj
        top = (head + leaves) >> (head ^ (next_pos - 1)).bit_length()
        pos = search(top, free, extra if extra < free else free, shadow - now, top, False)
        while pos >= 0:
            j = job_at[pos]
            dequeue(pos)
            waiting -= 1
            free -= size[j]
            if now + estimate[j] > shadow:
                extra -= size[j]
            # deliberate inline twin of engine_gpu.launch (as a call: +40% replay time)
            start[j] = now
            heappush(ends, (now + runtime[j]) << shift | j)
            k = (now + estimate[j]) << shift | j
            est_key[j] = k
            insort(running, k)
            if min_size[1] > free:
                break
            pos = search(pos + leaves, free, extra if extra < free else free, shadow - now, top,
                         True)
    return np.asarray(start, dtype=np.int64)
