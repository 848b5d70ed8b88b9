"""FCFS / EASY replay of jobs placed by GPU count (``shape="gpus"``; Python only, the
reference: no compiled twin).

A job needs ``size`` GPUs anywhere on the managed nodes, partial nodes allowed
(``placement.counts.choose_by_count`` says which), so it fits now iff that many are free: the
resource test of ``engine_flat`` with GPUs for processors, and its EASY rule: the head's shadow
time is the earliest instant at which the GPUs free on the nodes managed then, with running jobs
released at their estimated ends (``now`` when overdue), reach its size; ``extra`` is the
surplus then. A later job that fits starts if its estimate ends by the shadow time, or if its
GPUs on the nodes managed at the shadow time are at most ``extra`` (which then shrinks by them).
The reservation is recomputed at every pass. The event order (capacity changes, ends, arrivals,
the head, then backfilling in queue order), run-time factors (``round(run x f)``,
``round(estimate x f)``), dropped heads and queue-watching placements are ``engine_gpu``'s.
"""

from __future__ import annotations

from heapq import heappop, heappush

import numpy as np

from swftools.errors import UsageError
from swftools.replay.engine_gpu import FLOAT_INF, never_fits_again
from swftools.replay.gpurun import GpuRun
from swftools.replay.model import GpuNodes, TrackedGpuState, bits
from swftools.replay.placement import Placement, RuntimeFactor
from swftools.replay.placement.counts import choose_by_count, free_count
from swftools.replay.workload import Workload


def run_count(work: Workload, model: GpuNodes, policy: str, placement: Placement,
              runtime_factor: RuntimeFactor | None = None) -> GpuRun:
    """Replay ``work`` (``size``: each job's GPU count; ``nodes`` x ``gpus_per_node``: its
    fewest-nodes shape, which queue-watching placements read) on ``model``; see the module
    docstring. The result's ``node_gpus`` holds each job's GPU set per node."""
    n = len(work)
    submit, runtime = work.submit.tolist(), work.runtime.tolist()
    estimate, size = work.estimate.tolist(), work.size.tolist()
    nodes_of, per_node = work.nodes.tolist(), work.gpus_per_node.tolist()
    easy = policy == "easy"
    g = model.gpus_per_node
    state = TrackedGpuState(model, submit[0] if n else 0)
    placement.start(state, runtime_factor)
    watch = placement if getattr(placement, "watches_queue", False) else None
    if watch is not None:
        watch.shapes = (nodes_of, per_node)
        watch.set_waiting(())
    start = [0] * n
    cells: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    run_actual, est_actual = [0] * n, [0] * n
    dropped: list[tuple[int, str]] = []
    changes = [(t, c) for t, c in model.capacity_changes() if n and t > submit[0]]
    change_at = [t for t, _ in changes] + [FLOAT_INF]  # no change after any time, even 2**62
    future_max = [c for _, c in changes]
    for k in range(len(future_max) - 2, -1, -1):
        future_max[k] = max(future_max[k], future_max[k + 1])
    i_change = 0
    reach = max([state.managed.bit_length()] + future_max[:1])
    ends: list[tuple[int, int]] = []
    queue: list[int] = []  # waiting jobs, queue order

    def factor_of(j: int, chosen: list[tuple[int, int]]) -> float:
        if runtime_factor is None:
            return 1.0
        masks = {m for _, m in chosen}
        if len(masks) == 1:  # one GPU set on every node: the placement's (cached) factor
            f = placement.factor(j, sum(1 << k for k, _ in chosen), masks.pop())
        else:
            f = runtime_factor(j, [k for k, _ in chosen], [bits(m) for _, m in chosen])
        if not f > 0 or f == float("inf"):
            raise UsageError(f"run-time factor of job {int(work.job_id[j])} must be positive "
                             f"and finite, not {f!r}")
        return f

    def launch(j: int, chosen: list[tuple[int, int]], f: float, now: int) -> None:
        if watch is not None:
            watch.queue_remove(j)
        for k, m in chosen:
            state.take_set(1 << k, m.bit_count(), m)
        cells[j] = chosen
        start[j] = now
        run_actual[j] = round(runtime[j] * f) if f != 1.0 else runtime[j]
        est_actual[j] = round(estimate[j] * f) if f != 1.0 else estimate[j]
        heappush(ends, (now + run_actual[j], j))

    def place_and_launch(j: int, now: int) -> None:
        chosen = choose_by_count(placement, state, j, size[j])
        launch(j, chosen, factor_of(j, chosen), now)

    def reservation(now: int, need: int) -> tuple[int, int, int] | None:
        """(shadow time, extra GPUs, nodes managed then) of a head of ``need`` GPUs."""
        projected = list(state.free)
        running = sorted((max(start[j] + est_actual[j], now), j) for _, j in ends)
        managed = state.managed.bit_length()
        c, i, t = i_change, 0, now
        while True:
            while i < len(running) and running[i][0] <= t:
                for k, m in cells[running[i][1]]:
                    projected[k] += m.bit_count()
                i += 1
            while change_at[c] <= t:
                managed = changes[c][1]
                c += 1
            total = sum(projected[:managed])
            if total >= need:
                return t, total - need, managed
            t_next = min(running[i][0] if i < len(running) else FLOAT_INF, change_at[c])
            if t_next == FLOAT_INF:
                return None
            t = t_next

    i_sub = 0
    while i_sub < n or ends or queue:
        now = submit[i_sub] if i_sub < n else FLOAT_INF
        if ends and ends[0][0] < now:
            now = ends[0][0]
        if queue and change_at[i_change] < now:
            now = change_at[i_change]
        while change_at[i_change] <= now:
            state.set_capacity(changes[i_change][1])
            i_change += 1
            reach = future_max[i_change] if i_change < len(changes) else state.managed.bit_length()
            reach = max(reach, state.managed.bit_length())
        while ends and ends[0][0] == now:
            _, j = heappop(ends)
            for k, m in cells[j]:
                state.give_back(1 << k, m, m.bit_count())
        first_arrival = i_sub
        while i_sub < n and submit[i_sub] == now:
            i_sub += 1
        if watch is not None and i_sub > first_arrival:
            watch.queue_add(range(first_arrival, i_sub))
        if not queue and first_arrival == i_sub:
            continue

        # 1. start from the head while it fits; drop a head that can never fit again
        free = free_count(state)
        while queue:
            j = queue[0]
            if size[j] <= free:
                queue.pop(0)
                place_and_launch(j, now)
                free = free_count(state)
            elif size[j] > reach * g:
                queue.pop(0)
                dropped.append((j, never_fits_again(reach, now)))
                if watch is not None:
                    watch.queue_remove(j)
            else:
                break
        for j in range(first_arrival, i_sub):
            if not queue:
                if size[j] <= free:
                    place_and_launch(j, now)
                    free = free_count(state)
                    continue
                if size[j] > reach * g:
                    dropped.append((j, never_fits_again(reach, now)))
                    if watch is not None:
                        watch.queue_remove(j)
                    continue
            queue.append(j)
        if not (easy and len(queue) > 1) or not free:
            continue

        # 2. EASY backfilling behind the blocked head
        res = reservation(now, size[queue[0]])
        if res is None:
            continue
        shadow, extra, managed_then = res
        kept = [queue[0]]
        for j in queue[1:]:
            if not free or size[j] > free:
                kept.append(j)
                continue
            chosen = choose_by_count(placement, state, j, size[j])
            f = factor_of(j, chosen)
            if now + (round(estimate[j] * f) if f != 1.0 else estimate[j]) > shadow:
                held = sum(m.bit_count() for k, m in chosen if k < managed_then)
                if held > extra:
                    kept.append(j)
                    continue
                extra -= held
            launch(j, chosen, f, now)
            free = free_count(state)
        queue = kept
    node_sets = [sum(1 << k for k, _ in c) for c in cells]
    return GpuRun(np.asarray(start, dtype=np.int64), node_sets, None, dropped,
                  np.asarray(run_actual, dtype=np.int64), np.asarray(est_actual, dtype=np.int64),
                  node_gpus=[[m for _, m in c] for c in cells])
