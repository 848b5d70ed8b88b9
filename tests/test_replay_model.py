"""``replay.model``: the GPU state the engines' Python paths place jobs with, against a plain
list of free GPU sets driven by random capacity changes, job starts and ends; the bit helpers;
the machine models' fit rules and descriptions."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from swftools.errors import UsageError
from swftools.replay.model import (FlatPool, GpuNodes, GpuState, TrackedGpuState, bits,
                                   lowest_bits)

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
    import numpy as np

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
    from swftools.replay.model import nodes_with

    assert bits(nodes_with(managed, free, at_least)) == [
        k for k in range(12) if managed >> k & 1 and free[k] >= at_least]


def _head_fits(projected, managed, g, head_nodes, head_per_node):
    if head_nodes > 1:
        return sum(1 for k in range(managed) if projected[k] == g) >= head_nodes
    return any(projected[k] >= head_per_node for k in range(managed))


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

    from swftools.replay.model import gpu_reservation

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
    shift = 8
    running = sorted(e << shift | j for j, e in enumerate(ends))
    head_per_node = g if head_nodes > 1 else min(head_per_node, g)
    reservation = gpu_reservation(state, model, now, head_nodes, head_per_node, running, shift,
                                  node_sets, per_nodes)
    instants = sorted({now} | {max(e, now) for e in ends} | {t for t, _ in timeline if t > now})
    expected = None
    for t in instants:
        projected = list(state.free)
        for j, e in enumerate(ends):
            if max(e, now) <= t:
                for k in bits(node_sets[j]):
                    projected[k] += per_nodes[j]
        if _head_fits(projected, _cap_at(timeline, t), g, head_nodes, head_per_node):
            expected = (t, projected, _cap_at(timeline, t))
            break
    if expected is None:
        assert reservation is None
        return
    shadow, projected, at_shadow = expected
    assert (reservation.shadow, reservation.projected) == (shadow, projected)
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
