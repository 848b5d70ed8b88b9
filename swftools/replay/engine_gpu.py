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

One event loop, two paths (chosen once, at the top of ``run_gpu``):

* the fast path (no placement, no run-time factor): the model's first-fit / best-fit inlined
  as before, recorded run times; its speed is unchanged by the general path. From
  ``COMPILED_MIN_JOBS`` jobs on it runs as its compiled twin (``_engine_gpu``, Cython: node
  sets as arrays of words, so any site width; the same schedule job for job, tested);
* the general path (a ``placement.Placement`` and/or a ``runtime_factor(j, nodes, gpus)``
  callback): the placement chooses the nodes and GPUs; the job then runs
  ``round(recorded run time x f)`` with ``f`` the factor of that placement, and EASY estimates
  it at ``round(requested walltime x f)`` -- the estimates use the requested walltime scaled by
  the same factors, so the reservation of the head is computed from the estimated ends of the
  jobs as they were actually placed and stays correct. The queue's segment tree holds a lower
  bound of each estimate (``estimate x min_factor``), so the backfill window filter never misses
  a job; a candidate's placement and real factor are then checked exactly against the
  reservation (``Reservation.allows``; shapes are pre-filtered with ``Reservation.may_allow``,
  which admits a shape when *some* placement of it could be allowed). ``packed`` with every
  factor 1.0 gives the fast path's schedule job for job (tested). The general path's state is a
  ``model.TrackedGpuState`` (placements cache by its change counter); the admitted shapes are
  recomputed only after a start (a refused candidate changes nothing); and with the choice groups
  of the built-in placements (``Placement.choice_group``) a waiting job's queue bit is its
  (size, group, factor bound): once the reservation refuses the choice of such a combination,
  its other jobs get the same choice and factor, so they are skipped by the window filter (when
  the factor is at least their bound) or by their estimate alone -- the same starts, far fewer
  jobs placed and checked. From ``COMPILED_MIN_JOBS`` jobs on the general path too runs as its
  compiled twin (``engine_general`` decides, the extension ``_engine_general.pyx`` runs it): for
  the built-in placements with no run-time factor or a keyed one given in compiled form
  (``factor_kernel``, a ``factors.FactorKernel``); the same schedule job for job, tested
  (``tests/test_replay_engine_general_jit.py``). A user placement (a subclass, or any other
  class) or a factor callback without a kernel runs in Python.

Flat pools (SWF traces): ``engine_flat.run_flat`` stays the specialised fast path of the same
loop for plain replays (a processor count instead of bit sets; measured against this engine's
general path with ``packed`` and factor 1.0: 8x faster on KTH-SP2's 100 processors, 19x on
SDSC-BLUE's 1,152, thousands of times on CEA-Curie's 93,312). A flat replay with a placement
or factors (per-processor scores for variability in flat mode) runs here on the general path with
``model.FlatNodes``: the pool as ``procs`` nodes of one GPU, a job of ``s`` processors as ``s``
whole nodes -- the same schedule as ``run_flat`` for ``packed`` and factor 1.0 (tested). Wide
bit sets (more than 256 nodes) go through numpy in ``model.bits`` / ``model.nodes_with``; the
reservation still costs O(processors) per computation, so the general flat path slows down with
the pool width.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from heapq import heappop, heappush
from types import ModuleType
from typing import Callable, Sequence

import numpy as np

from swftools.errors import UsageError
from swftools.extensions import load
from swftools.replay.engine_flat import fits_int64_keys
from swftools.replay.factors import FactorKernel
from swftools.replay.model import (FlatNodes, GpuNodes, GpuState, TrackedGpuState, bits,
                                   gpu_reservation)
from swftools.replay.gpurun import GpuRun
from swftools.replay.result import sorted_distinct
from swftools.replay.placement import BestFit, Placement, RuntimeFactor
from swftools.replay.workload import Workload

Mold = Callable[[int, int], "tuple[int, int, float] | None"]  # (queue index, fit bound)

INFINITY = 1 << 62
FLOAT_INF = float("inf")
MAX_COMBOS = 1024  # (size, choice group, factor bound) combinations with their own queue bit
COMPILED_MIN_JOBS = 1_000  # Python below it (benchmarks/bench_compiled_threshold.py)
COMPILED_MAX_BITS = 62  # the compiled twin's shape and GPU bit sets are int64 words


def compiled_fits(work: Workload, model: GpuNodes | FlatNodes,
                  distinct: np.ndarray | None = None) -> bool:
    """Whether the compiled twin can replay ``work``: at most 62 distinct job sizes
    (``distinct``, when known: ``np.unique(work.size)``) and GPUs per node (its bit sets are
    int64 words), and every ``time << shift | job`` key within int64."""
    if not len(work) or model.gpus_per_node > COMPILED_MAX_BITS:
        return False
    if len(sorted_distinct(work.size) if distinct is None else distinct) > COMPILED_MAX_BITS:
        return False
    return fits_int64_keys(work, max(t for t, _ in model.capacity_changes()))


def _run_gpu_compiled(work: Workload, model: GpuNodes | FlatNodes, policy: str,
                      distinct: np.ndarray, twin: ModuleType) -> GpuRun:
    """The fast path through ``_engine_gpu.run_gpu_compiled`` (same schedule; ``twin``, that
    module); ``distinct``: the sorted distinct job sizes."""
    run_gpu_compiled = twin.run_gpu_compiled

    def as64(a) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=np.int64)

    size = as64(work.size)
    # each job's size index and each size's first job (np.unique's return_index and
    # return_inverse sort all jobs: 1.2 s at 10 million, this 0.3 s)
    inverse = np.searchsorted(distinct, size)
    first = np.full(len(distinct), len(size), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(size), dtype=np.int64))
    shape_bit = np.left_shift(np.int64(1), inverse.astype(np.int64))
    fit_masks = np.left_shift(np.int64(1), np.arange(len(distinct) + 1, dtype=np.int64)) - 1
    nodes, per_node = as64(work.nodes), as64(work.gpus_per_node)
    changes = model.capacity_changes()
    cap_t = as64([t for t, _ in changes])
    cap_n = as64([c for _, c in changes])
    submit = as64(work.submit)
    start, node_off, node_list, gpu_mask, dropped_j, dropped_reach, dropped_at = \
        run_gpu_compiled(submit, as64(work.runtime), size, as64(work.estimate), nodes, per_node,
                         shape_bit, as64(distinct), fit_masks, nodes[first], per_node[first],
                         np.int64(model.gpus_per_node), np.int64(model.max_nodes),
                         model.allocation == "best-fit", policy == "easy", cap_t, cap_n,
                         np.int64(model.nodes_at(int(submit[0]))))
    for j in dropped_j.tolist():  # never started: no nodes
        node_list[node_off[j]:node_off[j + 1]] = -1
    dropped = [(j, never_fits_again(r, t)) for j, r, t in
               zip(dropped_j.tolist(), dropped_reach.tolist(), dropped_at.tolist())]
    return GpuRun(start, None, None, dropped, node_off=node_off, node_list=node_list,
                  gpu_mask=gpu_mask)


def never_fits_again(nodes: int, now: int) -> str:
    """Skip reason of a job dropped because the managed node count fell for good."""
    return f"never fits: the site manages at most {nodes} nodes from {now} on"


def run_gpu(work: Workload, model: GpuNodes | FlatNodes, policy: str,
            placement: Placement | None = None, runtime_factor: RuntimeFactor | None = None,
            min_factor: float | Sequence[float] | None = None,
            compiled: bool | None = None,
            factor_kernel: FactorKernel | None = None, mold: Mold | None = None) -> GpuRun:
    """Replay ``work`` on the site's GPU nodes (or a flat pool seen as 1-GPU nodes).

    With neither ``placement`` nor ``runtime_factor`` this is the fast path (the allocation rule
    of ``model``, recorded run times). Otherwise the general path: ``placement`` chooses the
    nodes and GPUs (default: ``packed``, or ``best-fit`` for a best-fit model), and a job run
    with factor ``f = runtime_factor(j, nodes, gpus)`` (``j`` the queue index, ``nodes`` the
    node list, ``gpus`` the GPU list of each node; 1.0 without a callback) runs
    ``round(runtime x f)`` and EASY estimates it at ``round(estimate x f)``. ``min_factor``
    (scalar or per job) is a lower bound of a job's factor over every placement; the backfill
    window filter uses ``round(estimate x min_factor)`` and the chosen placement is then checked
    against the reservation with its real factor (default: 1.0 without a callback, else 0,
    which is always correct but searches more).

    ``compiled``: run the compiled twin (the same schedule job for job): the fast path's
    (``_engine_gpu``), or the general path's (``engine_general_jit``) for the built-in
    placements with no ``runtime_factor`` or a keyed one given as ``factor_kernel`` (its keys in
    queue order; see ``engine_general``); None decides by size (``COMPILED_MIN_JOBS``). A
    workload the twins cannot hold (``compiled_fits``), a user placement or an uncompiled
    factor runs in Python.

    ``mold(j, bound)`` (moldable jobs, Python general path): called when job ``j`` would start
    from the queue's head (or on arrival at an empty queue), ``bound`` = ``state.fit_bound()``;
    returns ``(nodes, gpus_per_node, f)``, a shape of at most ``bound`` GPUs ``j`` starts on
    instead, running ``f`` x its recorded time and estimate, or None (the recorded shape).
    Backfilled jobs keep theirs. ``GpuRun.shapes``: every job's (nodes, GPUs per node) as run.
    """
    n = len(work)
    general = placement is not None or runtime_factor is not None or mold is not None
    if mold is not None:
        compiled = False
    if n and (compiled or (compiled is None and n >= COMPILED_MIN_JOBS)):
        if general:
            from swftools.replay.engine_general import run_general_compiled

            run = run_general_compiled(work, model, policy, placement, runtime_factor,
                                       factor_kernel, min_factor)
            if run is not None:
                return run
        else:
            distinct = sorted_distinct(work.size)
            twin = load("swftools.replay._engine_gpu", "the GPU replay")
            if twin is not None and compiled_fits(work, model, distinct):
                return _run_gpu_compiled(work, model, policy, distinct, twin)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return GpuRun(empty, [], [], [], empty if general else None,
                      empty if general else None)
    submit = work.submit.tolist()
    runtime = work.runtime.tolist()
    size = work.size.tolist()
    estimate = work.estimate.tolist()
    nodes_of = work.nodes.tolist()
    per_node = work.gpus_per_node.tolist()
    easy = policy == "easy"

    # the general path's state records its changes (placements cache by them)
    state = (TrackedGpuState if general else GpuState)(model, submit[0])
    tree_est = estimate  # what the queue's segment tree holds: estimates or lower bounds
    if general:
        if placement is None:
            placement = BestFit() if model.allocation == "best-fit" else Placement()
        placement.start(state, runtime_factor)
        choose = placement.choose
        run_actual = [0] * n
        est_actual = [0] * n
        if min_factor is None:
            min_factor = 1.0 if runtime_factor is None else 0.0
        # a bound of 1.0 keeps the estimate exact, as a factor of 1.0 does (past 2**53 a float
        # product is not)
        if isinstance(min_factor, (int, float)):
            tree_est = (estimate if min_factor == 1.0
                        else [round(e * min_factor) for e in estimate])
        else:
            tree_est = [e if f == 1.0 else round(e * float(f))
                        for e, f in zip(estimate, min_factor)]
    changes = [(t, c) for t, c in model.capacity_changes() if t > submit[0]]
    change_at = [t for t, _ in changes] + [FLOAT_INF]  # no change after any time, even 2**62
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
        e = tree_est[j]
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

    # the placement's factor (its memo of the last choice, keyed-factor cache) when it was
    # started with this callback; else the callback itself
    placement_factor = (placement.factor if general and runtime_factor is not None
                        and getattr(placement, "runtime_factor", None) is runtime_factor
                        and hasattr(placement, "_factors") else None)

    def factor_of(j: int, node_set: int, gpus: int) -> float:
        if runtime_factor is None:
            return 1.0
        if placement_factor is not None:
            f = placement_factor(j, node_set, gpus)
        else:
            memo = placement.memo
            if memo is not None and memo[0] == j and memo[1] == node_set and memo[2] == gpus:
                return memo[3]
            ks = bits(node_set)
            f = runtime_factor(j, ks, [bits(gpus)] * len(ks))
        if not f > 0 or f == FLOAT_INF:
            raise UsageError(f"run-time factor of job {int(work.job_id[j])} must be positive "
                             f"and finite, not {f!r}")
        return f

    def start_chosen(j: int, node_set: int, gpus: int, now: int, f: float) -> None:
        """General path: start ``j`` on ``node_set`` x ``gpus`` with run-time factor ``f``."""
        if watch is not None:
            watch.queue_remove(j)
        state.take_set(node_set, per_node[j], gpus)
        gpu_sets[j] = gpus
        node_sets[j] = node_set
        start[j] = now
        r = round(runtime[j] * f) if f != 1.0 else runtime[j]
        e = round(estimate[j] * f) if f != 1.0 else estimate[j]
        run_actual[j] = r
        est_actual[j] = e
        heappush(ends, (now + r) << shift | j)
        k = (now + e) << shift | j
        est_key[j] = k
        insort(running, k)

    # Choice groups (general path, built-in placements; ``Placement.choice_group``): a waiting
    # job's queue bit is that of its (size, group, lower bound of its factor). From one state,
    # the jobs of such a combination get the same placement and factor ``f``; once the
    # reservation refuses that placement, the rest of them can start only if their estimate
    # x ``f`` ends by the shadow time, so -- when ``f`` >= their lower bound, i.e. the window
    # filter finds every such job -- the combination's bit leaves ``allowed`` until the next
    # start. Same starts, far fewer jobs looked at.
    group_of = placement.choice_group() if general and hasattr(placement, "choice_group") else None
    if group_of is not None:
        combo_bit: dict[tuple[int, object, float], int] = {}
        combo_bound: dict[int, float] = {}
        size_index = {s: k for k, s in enumerate(distinct)}
        bound_of = (min_factor if not isinstance(min_factor, (int, float))
                    else [min_factor] * n)
        enqueue_shape = enqueue

        def enqueue(j: int) -> None:  # noqa: F811 (the grouped twin: sets the job's bit first)
            s = size[j]
            lower = float(bound_of[j])
            key = (s, group_of(j), lower)
            b = combo_bit.get(key)
            if b is None and len(combo_bit) >= MAX_COMBOS:
                b = key_bit[s]  # too many combinations: the size's own bit, never skipped
            elif b is None:
                b = combo_bit[key] = 1 << (len(distinct) + len(combo_bit))
                shape_of[b] = s
                combo_bound[b] = lower
                for i in range(size_index[s] + 1, len(fit_masks)):
                    fit_masks[i] |= b
            bit[j] = b
            enqueue_shape(j)

    # placements that watch the queue (``priority-wc``) see the jobs submitted and not started
    watch = placement if general and getattr(placement, "watches_queue", False) else None
    if watch is not None:
        watch.shapes = (nodes_of, per_node)
        watch.set_waiting(())

    def launch_general(j: int, now: int, scale: float = 1.0) -> None:
        node_set, gpus = choose(state, j, nodes_of[j], per_node[j])
        start_chosen(j, node_set, gpus, now, factor_of(j, node_set, gpus) * scale)

    def molded(j: int, bound: int) -> float | None:
        """Give ``j`` the shape ``mold`` chooses (its run-time scale), or None."""
        shape = mold(j, bound)
        if shape is None:
            return None
        nodes_of[j], per_node[j], scale = shape
        size[j] = nodes_of[j] * per_node[j]
        return scale

    def head_position() -> int:
        nonlocal head
        while not keys[head + leaves]:
            head += 1
        return head

    i_sub = 0
    while i_sub < n or ends or waiting:
        now = submit[i_sub] if i_sub < n else FLOAT_INF
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
        if watch is not None and i_sub > first_arrival:
            watch.queue_add(range(first_arrival, i_sub))
        if not waiting and first_arrival == i_sub:
            continue

        # 1. start from the head while it fits; drop a head that can never fit again
        bound = state.fit_bound()
        while waiting:
            pos = head_position()
            j = job_at[pos]
            scale = None if mold is None else molded(j, bound)
            if scale is not None:
                dequeue(pos)
                launch_general(j, now, scale)
                bound = state.fit_bound()
            elif size[j] <= bound:
                dequeue(pos)
                if general:
                    launch_general(j, now)
                else:
                    launch(j, state.place(nodes_of[j], per_node[j]), now)
                bound = state.fit_bound()
            elif nodes_of[j] > reach:
                dequeue(pos)
                dropped.append((j, never_fits_again(reach, now)))
                if watch is not None:
                    watch.queue_remove(j)
            else:
                break
        for j in range(first_arrival, i_sub):
            if not waiting:
                scale = None if mold is None else molded(j, bound)
                if scale is not None:
                    launch_general(j, now, scale)
                    bound = state.fit_bound()
                    continue
                if size[j] <= bound:
                    if general:
                        launch_general(j, now)
                    else:
                        launch(j, state.place(nodes_of[j], per_node[j]), now)
                    bound = state.fit_bound()
                    continue
                if nodes_of[j] > reach:
                    dropped.append((j, never_fits_again(reach, now)))
                    if watch is not None:
                        watch.queue_remove(j)
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
        stale = True
        while general:
            if stale:
                # shapes some placement may start past the shadow time; the chosen one is checked
                # (a rejected candidate changes nothing: recomputed only after a start)
                present = keys[1] & fit
                allowed = 0
                verdict = {}
                while present:
                    b = present & -present
                    present ^= b
                    s = shape_of[b]
                    ok = verdict.get(s)
                    if ok is None:
                        ok = verdict[s] = reservation.may_allow(state, shape_nodes[s],
                                                                shape_per_node[s])
                    if ok:
                        allowed |= b
                stale = False
                refused = {}  # combination bit -> factor of its refused choice (this state)
            pos = search(pos + leaves, fit, allowed, reservation.shadow - now, top)
            if pos < 0:
                break
            j = job_at[pos]
            if refused:
                f = refused.get(bit[j])
                if f is not None and now + (round(estimate[j] * f) if f != 1.0
                                            else estimate[j]) > reservation.shadow:
                    continue  # its combination's choice, refused: the same verdict
            node_set, gpus = choose(state, j, nodes_of[j], per_node[j])
            f = factor_of(j, node_set, gpus)
            if now + (round(estimate[j] * f) if f != 1.0 else estimate[j]) > reservation.shadow:
                if not reservation.allows(node_set, per_node[j]):
                    if group_of is not None:
                        b = bit[j]
                        lower = combo_bound.get(b)
                        if lower is not None:
                            if f >= lower:
                                allowed &= ~b
                            else:
                                refused[b] = f
                    continue
                reservation.commit(node_set, per_node[j])
            dequeue(pos)
            start_chosen(j, node_set, gpus, now, f)
            bound = state.fit_bound()
            if not bound:
                break
            fit = fit_masks[bisect_right(distinct, bound)]
            stale = True
        while not general:
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
    if general:
        return GpuRun(np.asarray(start, dtype=np.int64), node_sets, gpu_sets, dropped,
                      np.asarray(run_actual, dtype=np.int64),
                      np.asarray(est_actual, dtype=np.int64),
                      shapes=None if mold is None else (np.asarray(nodes_of, dtype=np.int64),
                                                        np.asarray(per_node, dtype=np.int64)))
    return GpuRun(np.asarray(start, dtype=np.int64), node_sets, gpu_sets, dropped)
