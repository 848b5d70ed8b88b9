"""``replay.model``: the GPU state the engines' Python paths place jobs with, against a plain
list of free GPU sets driven by random capacity changes, job starts and ends; the bit helpers;
the machine models' fit rules and descriptions."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from swftools.errors import UsageError
from swftools.replay.model import (BIG_MASK_BITS, FlatNodes, FlatPool, GpuNodes, GpuState,
                                   TrackedGpuState, bits, gpu_reservation, lowest_bits,
                                   nodes_with)

from .strategies import examples, wide_gpu_state_ops, wide_reservation_cases
from .test_replay import gpu_site
from .test_replay_result import capacity_at as _cap_at


def _site(g: int, timeline: list[tuple[int, int]], whole: bool = True):
    return gpu_site(gpus=g, timeline=timeline, name="m", multi_node_whole_nodes=whole)


@given(st.integers(0, 2**70), st.integers(0, 72))
def test_lowest_bits_takes_the_lowest_set_bits(mask, count):
    ones = [k for k in range(mask.bit_length()) if mask >> k & 1]
    assert lowest_bits(mask, count) == sum(1 << k for k in ones[:count])
    assert bits(mask) == ones


_op = st.one_of(st.tuples(st.just("cap"), st.integers(1, 6)),
                st.tuples(st.just("job"), st.integers(1, 4), st.integers(1, 4)),
                st.tuples(st.just("end"), st.integers(0, 20)))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 2, 4]), st.integers(1, 6), st.lists(_op, max_size=40),
       st.sampled_from(["first-fit", "best-fit"]), st.booleans())
def test_gpu_state_follows_a_plain_list_of_free_gpus(g, start_nodes, ops, allocation, tracked):
    """Capacity that grows and shrinks under running jobs; first fit takes the lowest node
    with room, best fit the lowest of those with the fewest free GPUs, a multi-node job the
    lowest whole nodes; each takes the lowest free GPUs of its nodes."""
    site = _site(g, [(0, start_nodes), (1, 6)])
    state = (TrackedGpuState if tracked else GpuState)(GpuNodes(site, allocation), 0)
    managed = start_nodes
    free = [set(range(g)) for _ in range(6)]  # node -> its free GPUs
    running = []
    gen = getattr(state, "gen", 0)  # the tracked state's first set_capacity counts
    dirty = 0
    for op in ops:
        if op[0] == "cap":
            managed = op[1]
            state.set_capacity(managed)
            gen += 1
        elif op[0] == "end":
            if not running:
                continue
            nodes, gpus, per_node = running.pop(op[1] % len(running))
            state.give_back(sum(1 << k for k in nodes), sum(1 << i for i in gpus), per_node)
            gen += 1
            dirty |= sum(1 << k for k in nodes)
            for k in nodes:
                free[k] |= gpus
        else:
            _, n, per_node = op
            per_node = g if n > 1 else min(per_node, g)
            room = [k for k in range(managed) if len(free[k]) >= per_node]
            whole = [k for k in range(managed) if len(free[k]) == g]
            fits = len(whole) >= n if n > 1 else bool(room)
            bound = max([len(whole) * g] + [len(free[k]) for k in range(managed)])
            assert state.fit_bound() == bound
            assert fits == (n * per_node <= bound)
            if not fits:
                continue
            if n > 1:
                nodes = whole[:n]
            elif allocation == "best-fit":
                nodes = [min(room, key=lambda k: (len(free[k]), k))]
            else:
                nodes = room[:1]
            node_set = state.place(n, per_node)
            assert bits(node_set) == nodes
            gpus = set(sorted(free[nodes[0]])[:per_node])
            if len(running) % 2:  # the general path's: the GPUs chosen, given
                state.take_set(node_set, per_node, sum(1 << i for i in gpus))
                gen += 1
                dirty |= node_set
            else:  # the fast path's: the lowest free GPUs, not tracked
                assert state.take(node_set, per_node) == sum(1 << i for i in gpus)
                gen = getattr(state, "gen", 0)
            for k in nodes:
                assert gpus <= free[k]
                free[k] -= gpus
            running.append((nodes, gpus, per_node))
        for f in range(g + 1):
            assert bits(state.exact[f]) == [k for k in range(managed) if len(free[k]) == f]
        assert state.free[:6] == [len(s) for s in free]
        assert state.gpu_free[:6] == [sum(1 << i for i in s) for s in free]
        if tracked:
            assert (state.gen, state.dirty) == (gen, dirty)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(257, 300), st.booleans()), max_size=8))
def test_wide_whole_node_jobs_take_and_give_back_in_bulk(jobs):
    """More than 256 one-GPU nodes: a job reaching past node 256 is updated in bulk, and the
    state is the same as node by node."""
    site = _site(1, [(0, 300)])
    state = GpuState(GpuNodes(site), 0)
    free = [1] * 300
    held = []
    for n, end_one in jobs:
        if end_one and held:
            nodes = held.pop()
            state.give_back(sum(1 << k for k in nodes), 1, 1)
            for k in nodes:
                free[k] = 1
            continue
        whole = [k for k in range(300) if free[k]]
        if len(whole) < n:
            continue
        nodes = whole[:n]
        state.take_set(sum(1 << k for k in nodes), 1, 1)
        for k in nodes:
            free[k] = 0
        held.append(nodes)
        assert bits(state.exact[1]) == [k for k in range(300) if free[k]]
        assert bits(state.exact[0]) == [k for k in range(300) if not free[k]]
        assert state.free == free and state.gpu_free == free


def test_a_node_leaving_the_pool_keeps_its_job_and_comes_back_with_its_gpus():
    site = _site(2, [(0, 2)])
    state = GpuState(GpuNodes(site), 0)
    node_set = state.place(1, 1)
    gpus = state.take(node_set, 1)
    assert (node_set, gpus) == (1, 1)
    state.set_capacity(1)
    state.set_capacity(0)
    assert state.exact == [0, 0, 0] and state.fit_bound() == 0
    state.give_back(node_set, gpus, 1)
    assert state.exact == [0, 0, 0] and state.free[0] == 2
    state.set_capacity(2)
    assert state.exact == [0, 0, 0b11]


@given(st.lists(st.tuples(st.integers(0, 100), st.integers(1, 9)), min_size=1, max_size=5,
                unique_by=lambda e: e[0]).map(sorted), st.integers(-10, 120))
def test_max_nodes_from_is_the_most_nodes_at_or_after(timeline, t):
    model = GpuNodes(_site(2, timeline))
    in_force = [n for s, n in timeline if s <= t][-1:] or [timeline[0][1]]
    assert int(model.max_nodes_from(t)) == max(in_force + [n for s, n in timeline if s > t])
    assert model.nodes_at(t) == in_force[0]
    assert model.capacity_changes() == timeline


def test_fit_rules_and_descriptions():
    flat = FlatPool(8)
    assert flat.can_ever_fit(None, None, None, np.array([7, 8, 9])).tolist() == [True, True, False]
    assert flat.describe() == "flat pool of 8 processors"
    assert flat.describe_demand(1, 9, 9) == "needs 9 processors, the machine has 8"
    gpu = GpuNodes(_site(4, [(0, 2), (60, 3)]), "best-fit")
    fit = gpu.can_ever_fit(np.array([0, 0, 61, 0]), np.array([3, 4, 3, 1]),
                           np.array([4, 4, 4, 5]), np.array([12, 16, 12, 5]))
    assert fit.tolist() == [True, False, True, False]
    assert gpu.describe() == "site m: up to 3 nodes x 4 GPUs, best-fit"
    assert gpu.describe_demand(1, 5, 5) == ("needs 1 node x 5 GPUs, the site has at most 3 nodes x "
                                            "4 GPUs")
    with pytest.raises(UsageError, match=r"unknown allocation 'worst-fit' \(choose from "
                                         r"first-fit, best-fit\)"):
        GpuNodes(_site(4, [(0, 2)]), "worst-fit")
    with pytest.raises(UsageError, match="site m: replay models multi-node jobs on whole nodes "
                                         r"only \(multi_node_whole_nodes must be true\)"):
        GpuNodes(_site(4, [(0, 2)], whole=False))


@given(st.integers(0, 2**12 - 1), st.lists(st.integers(0, 4), min_size=12, max_size=12),
       st.integers(0, 4))
def test_nodes_with_is_the_managed_nodes_with_enough_free(managed, free, at_least):
    assert bits(nodes_with(managed, free, at_least)) == [
        k for k in range(12) if managed >> k & 1 and free[k] >= at_least]


def _head_fits(projected, managed, g, head_nodes, head_per_node):
    if head_nodes > 1:
        return sum(1 for k in range(managed) if projected[k] == g) >= head_nodes
    return any(projected[k] >= head_per_node for k in range(managed))


def _brute_shadow(free, node_sets, per_nodes, ends, timeline, now, g, head_nodes, head_per_node):
    """(shadow, free GPUs projected there, managed nodes then), or None: every instant from now
    (job ends, overdue ones now; capacity changes) tried in order, the free GPUs summed anew."""
    instants = sorted({now} | {max(e, now) for e in ends} | {t for t, _ in timeline if t > now})
    for t in instants:
        projected = list(free)
        for j, e in enumerate(ends):
            if max(e, now) <= t:
                for k in bits(node_sets[j]):
                    projected[k] += per_nodes[j]
        if _head_fits(projected, _cap_at(timeline, t), g, head_nodes, head_per_node):
            return t, projected, _cap_at(timeline, t)
    return None


def _reservation_as_brute_force(state, model, now, head_nodes, head_per_node, ends, node_sets,
                                per_nodes, timeline, g):
    """``gpu_reservation`` of the running jobs (ends as 8-bit-shifted keys), checked against
    ``_brute_shadow``: None when neither finds one, else (the reservation, the brute force's
    (shadow, projected, at_shadow))."""
    shift = 8
    running = sorted(e << shift | j for j, e in enumerate(ends))
    reservation = gpu_reservation(state, model, now, head_nodes, head_per_node, running, shift,
                                  node_sets, per_nodes)
    expected = _brute_shadow(state.free, node_sets, per_nodes, ends, timeline, now, g,
                             head_nodes, head_per_node)
    if expected is None:
        assert reservation is None
        return None
    assert (reservation.shadow, reservation.projected) == expected[:2]
    return reservation, expected


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([1, 2, 4]),
       st.lists(st.tuples(st.integers(1, 40), st.integers(1, 6)), max_size=2,
                unique_by=lambda e: e[0]).map(sorted),
       st.integers(2, 6),
       st.lists(st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(0, 50)),
                max_size=10),
       st.integers(1, 3), st.integers(1, 4),
       st.lists(st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(0, 5),
                          st.booleans()), max_size=6))
@example(1, [(1, 3)], 5, [(3, 1, 11)], 3, 1, [(2, 1, 0, False)])  # nodes 3, 4 leave the pool
def test_easy_reservation_matches_a_brute_force_shadow(g, later, n0, jobs, head_nodes,
                                                       head_per_node, candidates):
    """The head's shadow time (the first instant from now at which it fits once running jobs
    end at their estimates, overdue ones now, with the capacity then in force), the free GPUs
    projected there, and which backfill candidates may run past it: ``may_allow`` (some
    placement that fits now is allowed: exact until a commit, then never refusing a shape
    with an allowed placement), ``allows`` (this placement leaves the head room) and
    ``commit`` (the room left after it), each against a search of every case."""
    from itertools import combinations

    now = 10
    timeline = [(0, n0)] + [(now + dt, n) for dt, n in later]
    model = GpuNodes(_site(g, timeline))
    state = GpuState(model, now)
    managed = _cap_at(timeline, now)
    node_sets, per_nodes, ends = [], [], []
    for n, p, end in jobs:  # started before now, still running (estimated end: end)
        p = g if n > 1 else min(p, g)
        if n * p > state.fit_bound():
            continue
        node_set = state.place(n, p)
        state.take(node_set, p)
        node_sets.append(node_set)
        per_nodes.append(p)
        ends.append(end)
    head_per_node = g if head_nodes > 1 else min(head_per_node, g)
    checked = _reservation_as_brute_force(state, model, now, head_nodes, head_per_node, ends,
                                          node_sets, per_nodes, timeline, g)
    if checked is None:
        return
    reservation, (shadow, projected, at_shadow) = checked
    committed = False
    for n, p, pick, commit in candidates:
        p = g if n > 1 else min(p, g)
        free_now = [state.free[k] if k < managed else -1 for k in range(len(state.free))]
        if n > 1:
            placements = [sum(1 << k for k in c) for c in
                          combinations([k for k, f in enumerate(free_now) if f == g], n)]
        else:
            placements = [1 << k for k, f in enumerate(free_now) if f >= p]

        def allowed(node_set):
            after = [f - (p if node_set >> k & 1 else 0) for k, f in enumerate(projected)]
            return _head_fits(after, at_shadow, g, head_nodes, head_per_node)

        if not placements:  # the engines ask only about jobs that fit now
            continue
        some = any(allowed(s) for s in placements)
        if committed:  # a filter: it may let through a shape allows() then refuses
            assert reservation.may_allow(state, n, p) or not some
        else:
            assert reservation.may_allow(state, n, p) == some
        node_set = placements[pick % len(placements)]
        assert reservation.allows(node_set, p) == allowed(node_set)
        if commit and allowed(node_set):
            reservation.commit(node_set, p)
            committed = True
            gpus = lowest_bits(state.gpu_free[bits(node_set)[0]], p)
            state.take_set(node_set, p, gpus)
            for k in bits(node_set):
                projected[k] -= p


# --- wide pools: more than BIG_MASK_BITS nodes, the numpy and in-bulk paths ---------------------

WIDE = 300
assert WIDE > BIG_MASK_BITS


def _mask(indices) -> int:
    return sum(1 << k for k in indices)


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(0, 2**WIDE - 1), st.integers(0, 40), st.integers(0, 3), st.randoms())
@example(2**WIDE - 1, 0, 2, random.Random(1))
@example(1 << 299 | 1 << 3, 5, 1, random.Random(2))
def test_nodes_with_on_a_wide_pool(managed, extra, at_least, rnd):
    """Bit sets past node 256 (the numpy path) and a free list longer than the managed set."""
    width = managed.bit_length()
    free = [rnd.randint(0, 3) for _ in range(width + extra)]
    assert bits(nodes_with(managed, free, at_least)) == [
        k for k in range(width) if managed >> k & 1 and free[k] >= at_least]


@settings(max_examples=examples(20), deadline=None)
@given(wide_gpu_state_ops(), st.sampled_from(["first-fit", "best-fit"]))
@example((2, [("one", 1, 0, False), ("whole", 40, 7, False), ("cap", 257), ("end", 0),
              ("end", 0), ("cap", 300)]), "first-fit")  # node 299: 1 of 2 GPUs; 40 whole
@example((4, [("whole", 60, 3, True), ("one", 3, 1, True), ("cap", 200), ("end", 1),
              ("end", 0), ("cap", 299)]), "best-fit")
@example((4, [("one", 1, 0, False), ("one", 2, 0, True), ("whole", 2, 5, False)]),
         "best-fit")  # node 299 keeps 3 GPUs: best fit for 2 of them, not node 0
def test_wide_gpu_state_follows_a_plain_list_of_free_gpus(case, allocation):
    """300 nodes, jobs on nodes past 256 (whole-node ones updated in bulk, single-node ones
    node by node), some of them on nodes that left the pool: the state is the same as a plain
    list of free GPU sets, and the allocator's choice is the rule's."""
    g, ops = case
    state = GpuState(GpuNodes(_site(g, [(0, WIDE)]), allocation), 0)
    managed = WIDE
    free = [set(range(g)) for _ in range(WIDE)]
    running = []
    for op in ops:
        if op[0] == "cap":
            managed = op[1]
            state.set_capacity(managed)
        elif op[0] == "end":
            if running:
                nodes, gpus, per_node = running.pop(op[1] % len(running))
                state.give_back(_mask(nodes), _mask(gpus), per_node)
                for k in nodes:
                    free[k] |= gpus
        else:
            kind, size, seed, fast = op
            per_node = g if kind == "whole" else size
            room = [k for k in range(managed) if len(free[k]) >= per_node]
            if kind == "whole":
                if len(room) < size:
                    continue
                if size > 1:
                    assert state.place(size, g) == _mask(room[:size])
                nodes = sorted(random.Random(seed).sample(room, size))
            else:
                if not room:
                    continue
                nodes = [room[-1 - seed % len(room)]]
            if kind == "one" or size == 1:
                first = (min(room, key=lambda k: (len(free[k]), k)) if allocation == "best-fit"
                         else room[0])
                assert state.place(1, per_node) == 1 << first
            gpus = set(sorted(free[nodes[0]])[:per_node])
            if fast:
                assert state.take(_mask(nodes), per_node) == _mask(gpus)
            else:
                state.take_set(_mask(nodes), per_node, _mask(gpus))
            for k in nodes:
                free[k] -= gpus
            running.append((nodes, gpus, per_node))
        for f in range(g + 1):
            assert bits(state.exact[f]) == [k for k in range(managed) if len(free[k]) == f]
        assert state.free == [len(s) for s in free]
        assert state.gpu_free == [_mask(s) for s in free]
        whole = sum(1 for k in range(managed) if len(free[k]) == g)
        assert state.fit_bound() == max([whole * g] + [len(free[k]) for k in range(managed)])


@settings(max_examples=examples(25), deadline=None)
@given(wide_reservation_cases())
@example((2, [(0, 300), (5, 300)], [(False, 0, 0, 20), (False, 0, 0, 30), (True, 100, 1, 40)],
          ("multi", 2), []))  # two 1-GPU jobs on node 299 (ends 20, 30), the rest whole until 40
def test_easy_reservation_on_a_wide_pool_matches_a_brute_force_shadow(case):
    """300 nodes, running jobs past node 256 (whole-node ones projected in bulk), capacity
    dropping below some of them at 5 and changing after now: the shadow time and the free
    GPUs projected there as found by trying every instant, and ``allows``/``commit`` for
    candidates against the head's fit recomputed."""
    g, timeline, jobs, (head_kind, head_size), candidates = case
    now = 10
    model = GpuNodes(_site(g, timeline))
    state = GpuState(model, 0)  # the jobs started at 0, on the 300 nodes then managed
    node_sets, per_nodes, ends = [], [], []
    for whole, percent, seed, end in jobs:
        p = g if whole else 1 + percent % g
        room = [k for k in range(WIDE) if state.free[k] >= p]
        if not room:
            continue
        nodes = (random.Random(seed).sample(room, max(1, len(room) * percent // 100)) if whole
                 else [room[-1 - seed % min(len(room), 8)]])
        state.take(_mask(nodes), p)
        node_sets.append(_mask(nodes))
        per_nodes.append(p)
        ends.append(end)
    state.set_capacity(model.nodes_at(now))
    if head_kind == "multi":  # blocked now: more whole nodes than are free
        head_nodes, head_per_node = max(2, state.exact[g].bit_count() + head_size), g
    else:
        head_nodes, head_per_node = 1, head_size
    checked = _reservation_as_brute_force(state, model, now, head_nodes, head_per_node, ends,
                                          node_sets, per_nodes, timeline, g)
    if checked is None:
        return
    reservation, (shadow, projected, at_shadow) = checked
    managed = _cap_at(timeline, now)
    for whole, percent, seed in candidates:
        p = g if whole else 1 + percent % g
        room = [k for k in range(managed) if state.free[k] >= p]
        if not room:
            continue
        rng = random.Random(seed)
        node_set = _mask(rng.sample(room, max(1, len(room) * percent // 100)) if whole
                         else [rng.choice(room)])
        after = [f - (p if node_set >> k & 1 else 0) for k, f in enumerate(projected)]
        allowed = _head_fits(after, at_shadow, g, head_nodes, head_per_node)
        assert reservation.allows(node_set, p) == allowed
        if allowed:
            reservation.commit(node_set, p)
            state.take_set(node_set, p, lowest_bits(state.gpu_free[bits(node_set)[0]], p))
            projected = after


def test_max_nodes_from_at_a_change_instant_counts_the_change():
    """At the very instant of a change the new count is in force (the first entry also covers
    earlier times); ``t`` may be an array."""
    model = GpuNodes(_site(2, [(0, 5), (10, 2), (20, 1)]))
    assert model.max_nodes_from(np.array([-3, 0, 9, 10, 19, 20, 99])).tolist() == [
        5, 5, 5, 2, 2, 1, 1]
    assert [model.nodes_at(t) for t in (-3, 0, 9, 10, 19, 20, 99)] == [5, 5, 5, 2, 2, 1, 1]


def test_flat_nodes_are_one_gpu_nodes_of_a_constant_pool():
    """A flat pool of 7 processors as 7 one-GPU nodes from time 0 on: the capacity a flat
    replay reports (``replay.replay`` gives ``[(0, procs)]`` without a placement too)."""
    flat = FlatNodes(7)
    assert (flat.gpus_per_node, flat.max_nodes, flat.nodes_at(0), flat.nodes_at(10**9)) == (
        1, 7, 7, 7)
    assert flat.capacity_changes() == [(0, 7)]
    assert flat.describe() == "flat pool of 7 processors"
    assert flat.allocation == "first-fit"


def _running(g, n_nodes, jobs, head_nodes, head_per_node, now=10):
    """The state at ``now`` of a site of ``n_nodes`` x ``g`` GPUs running ``jobs`` (node list,
    GPUs per node, estimated end), and the head's reservation."""
    model = GpuNodes(_site(g, [(0, n_nodes)]))
    state = GpuState(model, now)
    for nodes, per_node, _ in jobs:
        state.take(_mask(nodes), per_node)
    running = sorted(end << 8 | j for j, (_, _, end) in enumerate(jobs))
    reservation = gpu_reservation(state, model, now, head_nodes, head_per_node, running, 8,
                                  [_mask(nodes) for nodes, _, _ in jobs],
                                  [per_node for _, per_node, _ in jobs])
    return state, reservation


def test_backfill_verdicts_worked_by_hand():
    """Small cases worked by hand: the shadow, and whether a 1-GPU job (or a 2-node one) that
    fits now may run past it (``may_allow``: some placement may; ``allows``: this one may)."""
    # 4 GPUs: node 0 full until 100, node 1 holds 3 until 20; the head wants 3 GPUs on a node:
    # at 20 node 1 has 4; a 1-GPU job there leaves 3, enough
    state, res = _running(4, 2, [([0], 4, 100), ([1], 3, 20)], 1, 3)
    assert (res.shadow, res.projected) == (20, [0, 4])
    assert res.may_allow(state, 1, 1) and res.allows(0b10, 1)
    # one node, 3 of its 4 GPUs held until 20; the head wants all 4: a 1-GPU job past 20 would
    # leave it 3
    state, res = _running(4, 1, [([0], 3, 20)], 1, 4)
    assert (res.shadow, res.projected) == (20, [4])
    assert not res.may_allow(state, 1, 1) and not res.allows(0b1, 1)
    # node 0: 3 GPUs until 20, node 1: 1 GPU until 100; the head wants a whole node (node 0 at
    # 20): a 1-GPU job fits on node 0 (refused) or node 1 (3 free now; allowed)
    state, res = _running(4, 2, [([0], 3, 20), ([1], 1, 100)], 1, 4)
    assert (res.shadow, res.projected) == (20, [4, 3])
    assert res.may_allow(state, 1, 1)
    assert not res.allows(0b01, 1) and res.allows(0b10, 1)
    # 2 GPUs a node: node 0 half held until 100, nodes 1-2 whole until 20; the head wants 2 whole
    # nodes (1 and 2 at 20, none to spare); a 1-GPU job fits now only on node 0: allowed
    state, res = _running(2, 3, [([0], 1, 100), ([1, 2], 2, 20)], 2, 2)
    assert (res.shadow, res.projected) == (20, [1, 2, 2])
    assert res.may_allow(state, 1, 1) and res.allows(0b001, 1)
    # nothing runs: the head (1 GPU) fits now on either node; a job on both nodes would leave
    # it none, a 1-GPU job one node
    state, res = _running(2, 2, [], 1, 1)
    assert (res.shadow, res.projected) == (10, [2, 2])
    assert not res.may_allow(state, 2, 2) and not res.allows(0b11, 2)
    assert res.may_allow(state, 1, 1) and res.allows(0b01, 1)
    # one node, 3 of 4 GPUs held until 20; the head wants 2: a 2-GPU job does not fit now, so
    # no placement of it may start (though at 20 it would leave the head its 2)
    state, res = _running(4, 1, [([0], 3, 20)], 1, 2)
    assert (res.shadow, res.projected) == (20, [4])
    assert not res.may_allow(state, 1, 2)
    # one GPU a node, nodes 0-1 held until 20, the head wants 3 nodes: at 20 it has 4, one to
    # spare; a 1-node job past 20 on node 2 takes it, a second one on node 3 is refused
    state, res = _running(1, 4, [([0, 1], 1, 20)], 3, 1)
    assert (res.shadow, res.projected) == (20, [1, 1, 1, 1])
    assert res.may_allow(state, 1, 1) and res.allows(0b0100, 1)
    res.commit(0b0100, 1)
    assert not res.allows(0b1000, 1)
    # 4 GPUs a node: nodes 0 and 4 hold 1 GPU until 100, nodes 1-2 whole until 20, node 3 free;
    # the head wants 3 whole nodes (1-3 at 20, none to spare): 1-GPU jobs past 20 on nodes 0
    # and 4, which are not whole then, cost it nothing, one after the other
    state, res = _running(4, 5, [([0], 1, 100), ([4], 1, 100), ([1, 2], 4, 20)], 3, 4)
    assert (res.shadow, res.projected) == (20, [3, 4, 4, 4, 3])
    assert res.allows(0b00001, 1)
    res.commit(0b00001, 1)
    assert res.allows(0b10000, 1) and not res.allows(0b01000, 1)
    # 4 GPUs a node: node 0 half held until 20, node 1 full until 100, node 2 with 3 held until
    # 100; the head wants 3 GPUs (node 0 at 20): a 1-GPU job past 20 on node 0 leaves it exactly
    # 3, then a 1-GPU job on node 2 costs it nothing
    state, res = _running(4, 3, [([0], 2, 20), ([1], 4, 100), ([2], 3, 100)], 1, 3)
    assert (res.shadow, res.projected) == (20, [4, 0, 1])
    assert res.allows(0b001, 1)
    res.commit(0b001, 1)
    assert res.allows(0b100, 1)
    # nodes 1 and 2 half held until 20 (node 0 full until 100); the head wants 3 GPUs: 2 GPUs
    # past 20 on node 1 leave it node 2, 2 more on node 2 then leave it none
    state, res = _running(4, 3, [([0], 4, 100), ([1], 2, 20), ([2], 2, 20)], 1, 3)
    assert (res.shadow, res.projected) == (20, [0, 4, 4])
    assert res.allows(0b010, 2)
    res.commit(0b010, 2)
    assert not res.allows(0b100, 2)
    # a job holding no GPU (size 0) on node 0, whole, until 15; nodes 1-2 whole until 30: the
    # 2-node head has only node 0 whole at 15, nodes 0-2 at 30
    state, res = _running(2, 3, [([0], 0, 15), ([1, 2], 2, 30)], 2, 2)
    assert (res.shadow, res.projected) == (30, [2, 2, 2])
    # 300 one-GPU nodes: 250-299 held until 20 (a wide job, released in bulk), 0-199 until 40;
    # the 80-node head has 200-249 now and 200-299 at 20
    state, res = _running(1, 300, [(range(250, 300), 1, 20), (range(200), 1, 40)], 80, 1)
    assert (res.shadow, res.projected) == (20, [0] * 200 + [1] * 100)


def test_fit_bound_place_and_take_worked_by_hand():
    """4 GPUs a node: node 0 with 2 held, node 1 with 3: the largest job that fits takes 2
    GPUs (no node whole), on node 0; taking nothing uses no GPU; placing a job that does not
    fit is a caller's error, said so."""
    state = GpuState(GpuNodes(_site(4, [(0, 2)]), "best-fit"), 0)
    state.take(0b01, 2)
    state.take(0b10, 3)
    assert state.fit_bound() == 2
    assert state.place(1, 2) == 0b01 and state.place(1, 1) == 0b10
    assert state.take(0, 1) == 0 and state.free == [2, 1]
    with pytest.raises(AssertionError, match=r"^place\(\) called for a job that does not fit$"):
        state.place(1, 3)
