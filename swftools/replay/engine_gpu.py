"""Event-driven FCFS / EASY replay on the site's GPU nodes (see ``model`` for the node model).

Same event semantics as ``engine_flat``; the instants of the site's capacity timeline are events
too (a capacity increase may let a waiting job start). What differs is the resource test:

* a job fits now iff its size (GPUs held) is at most ``GpuState.fit_bound()`` (with whole
  multi-node jobs, one bound decides every shape);
* the reservation of a blocked head is the earliest instant at which its *shape* fits the
  projected node state (running jobs released at their estimated ends, the managed node count
  of that instant applied); a job still running at that instant may start only if the head
  still fits the projected state without that job's GPUs (``model.Reservation``);
* a head job that needs more nodes than the site will ever manage again is dropped and reported.

The waiting queue is a segment tree over queue positions holding, per subtree, the set of job
shapes present (a bit per distinct size) and the minimum estimate, so a backfill search skips
whole runs of jobs that cannot start.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass
from heapq import heappop, heappush

import numpy as np

from swftools.replay.model import GpuNodes, GpuState, gpu_reservation
from swftools.replay.workload import Workload

INFINITY = 1 << 62


@dataclass
class GpuRun:
    """Engine output in queue order: start, node set and GPU set per job; dropped jobs."""

    start: np.ndarray
    node_sets: list[int]
    gpu_sets: list[int]
    dropped: list[tuple[int, str]]  # (queue index, reason)


def never_fits_again(nodes: int, now: int) -> str:
    """Skip reason of a job dropped because the managed node count fell for good."""
    return f"never fits: the site manages at most {nodes} nodes from {now} on"


def run_gpu(work: Workload, model: GpuNodes, policy: str) -> GpuRun:
    """Replay ``work`` on the site's GPU nodes."""
    n = len(work)
    if n == 0:
        return GpuRun(np.zeros(0, dtype=np.int64), [], [], [])
    submit = work.submit.tolist()
    runtime = work.runtime.tolist()
    size = work.size.tolist()
    estimate = work.estimate.tolist()
    nodes_of = work.nodes.tolist()
    per_node = work.gpus_per_node.tolist()
    easy = policy == "easy"

    state = GpuState(model, submit[0])
    changes = [(t, c) for t, c in model.capacity_changes() if t > submit[0]]
    change_at = [t for t, _ in changes] + [INFINITY]
    # Largest node count managed at each timeline entry or later: whether a job can still fit.
    future_max = [c for _, c in changes]
    for k in range(len(future_max) - 2, -1, -1):
        future_max[k] = max(future_max[k], future_max[k + 1])
    i_change = 0
    reach = max([state.managed.bit_length()] + future_max[:1])

    distinct = sorted(set(size))
    key_bit = {s: 1 << k for k, s in enumerate(distinct)}
    fit_masks = [0]
    for s in distinct:
        fit_masks.append(fit_masks[-1] | key_bit[s])
    shape_of = {key_bit[s]: s for s in distinct}
    bit = [key_bit[s] for s in size]

    start = [0] * n
    node_sets = [0] * n
    gpu_sets = [0] * n
    dropped: list[tuple[int, str]] = []
    shift = max(1, n.bit_length())
    low = (1 << shift) - 1
    ends: list[int] = []
    running: list[int] = []
    est_key = [0] * n
    shape_nodes = {s: nodes_of[size.index(s)] for s in distinct}
    shape_per_node = {s: per_node[size.index(s)] for s in distinct}

    leaves = 1 << max(1, (n - 1).bit_length())
    keys = [0] * (2 * leaves)
    min_est = [INFINITY] * (2 * leaves)
    job_at = [0] * n
    next_pos = 0
    head = 0
    waiting = 0
    reservation = None
    res_head = -1

    # deliberate twin of engine_flat.search (shape bit masks here, min sizes there)
    def search(i: int, fit: int, allowed: int, window: int, top: int,
               keys: list[int] = keys, min_est: list[int] = min_est) -> int:
        """First queue position in ``top``'s subtree after node ``i``'s subtree whose shape is in
        ``allowed``, or in ``fit`` with estimate <= window; -1 if none (see ``engine_flat``)."""
        resume = True
        while True:
            if resume:
                while True:
                    if i <= top:
                        return -1
                    if i & 1:
                        i >>= 1
                        continue
                    i += 1
                    k = keys[i]
                    if k & allowed or (k & fit and min_est[i] <= window):
                        break
            if i >= leaves:
                return i - leaves
            i <<= 1
            k = keys[i]
            if k & allowed or (k & fit and min_est[i] <= window):
                resume = False
                continue
            i += 1
            k = keys[i]
            resume = not (k & allowed or (k & fit and min_est[i] <= window))

    # deliberate twin of the inline enqueue in engine_flat.run_flat (shape bit masks here)
    def enqueue(j: int) -> None:
        nonlocal next_pos, waiting
        pos = next_pos
        next_pos += 1
        job_at[pos] = j
        waiting += 1
        b = bit[j]
        e = estimate[j]
        t = pos + leaves
        keys[t] = b
        min_est[t] = e
        t >>= 1
        while t:
            changed = False
            if not keys[t] & b:
                keys[t] |= b
                changed = True
            if min_est[t] > e:
                min_est[t] = e
                changed = True
            if not changed:
                break
            t >>= 1

    # deliberate twin of engine_flat.dequeue (shape bit masks here, min sizes there)
    def dequeue(pos: int) -> None:
        nonlocal waiting
        waiting -= 1
        i = pos + leaves
        keys[i] = 0
        min_est[i] = INFINITY
        i >>= 1
        while i:
            left = i << 1
            k = keys[left] | keys[left + 1]
            a = min_est[left]
            b = min_est[left + 1]
            e = a if a < b else b
            if keys[i] == k and min_est[i] == e:
                break
            keys[i] = k
            min_est[i] = e
            i >>= 1

    # engine_flat.run_flat inlines this (its loop is tighter; a call there costs 40%)
    def launch(j: int, node_set: int, now: int) -> None:
        gpu_sets[j] = state.take(node_set, per_node[j])
        node_sets[j] = node_set
        start[j] = now
        heappush(ends, (now + runtime[j]) << shift | j)
        k = (now + estimate[j]) << shift | j
        est_key[j] = k
        insort(running, k)

    def head_position() -> int:
        nonlocal head
        while not keys[head + leaves]:
            head += 1
        return head

    i_sub = 0
    while i_sub < n or ends or waiting:
        now = submit[i_sub] if i_sub < n else INFINITY
        if ends and ends[0] >> shift < now:
            now = ends[0] >> shift
        if waiting and change_at[i_change] < now:
            now = change_at[i_change]
        while change_at[i_change] <= now:
            state.set_capacity(changes[i_change][1])
            i_change += 1
            reach = future_max[i_change] if i_change < len(changes) else state.managed.bit_length()
            reach = max(reach, state.managed.bit_length())
            res_head = -1
        while ends and ends[0] >> shift == now:
            j = heappop(ends) & low
            state.give_back(node_sets[j], gpu_sets[j], per_node[j])
            del running[bisect_left(running, est_key[j])]
            res_head = -1
        first_arrival = i_sub
        while i_sub < n and submit[i_sub] == now:
            i_sub += 1
        if not waiting and first_arrival == i_sub:
            continue

        # 1. start from the head while it fits; drop a head that can never fit again
        bound = state.fit_bound()
        while waiting:
            pos = head_position()
            j = job_at[pos]
            if size[j] <= bound:
                dequeue(pos)
                launch(j, state.place(nodes_of[j], per_node[j]), now)
                bound = state.fit_bound()
            elif nodes_of[j] > reach:
                dequeue(pos)
                dropped.append((j, never_fits_again(reach, now)))
            else:
                break
        for j in range(first_arrival, i_sub):
            if not waiting:
                if size[j] <= bound:
                    launch(j, state.place(nodes_of[j], per_node[j]), now)
                    bound = state.fit_bound()
                    continue
                if nodes_of[j] > reach:
                    dropped.append((j, never_fits_again(reach, now)))
                    continue
            enqueue(j)
        if not (easy and waiting) or not bound:
            continue
        fit = fit_masks[bisect_right(distinct, bound)]
        if not keys[1] & fit:
            continue

        # 2. EASY backfilling behind the blocked head
        hj = job_at[head_position()]
        if res_head != hj or reservation is None or reservation.shadow < now:
            reservation = gpu_reservation(state, model, now, nodes_of[hj], per_node[hj],
                                          running, shift, node_sets, per_node)
            res_head = hj
        if reservation is None:
            continue
        top = (head + leaves) >> (head ^ (next_pos - 1)).bit_length()
        pos = head
        while True:
            present = keys[1] & fit
            allowed = 0
            while present:
                b = present & -present
                present ^= b
                s = shape_of[b]
                if reservation.allows(state.place(shape_nodes[s], shape_per_node[s]),
                                      shape_per_node[s]):
                    allowed |= b
            pos = search(pos + leaves, fit, allowed, reservation.shadow - now, top)
            if pos < 0:
                break
            j = job_at[pos]
            node_set = state.place(nodes_of[j], per_node[j])
            if now + estimate[j] > reservation.shadow:
                reservation.commit(node_set, per_node[j])
            dequeue(pos)
            launch(j, node_set, now)
            bound = state.fit_bound()
            if not bound:
                break
            fit = fit_masks[bisect_right(distinct, bound)]
    return GpuRun(np.asarray(start, dtype=np.int64), node_sets, gpu_sets, dropped)
