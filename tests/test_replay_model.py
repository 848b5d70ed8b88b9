"""``replay.model``: the GPU state the engines' Python paths place jobs with, against a plain
list of free GPU sets driven by random capacity changes, job starts and ends; the bit helpers;
the machine models' fit rules and descriptions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import UsageError
from swftools.replay.model import (FlatPool, GpuNodes, GpuState, TrackedGpuState, bits,
                                   lowest_bits)
from swftools.site import site_from_settings


def _site(g: int, timeline: list[tuple[int, int]], whole: bool = True):
    queue = {"name": "q", "number": 1, "nodes_min": 1, "nodes_max": 400,
             "gpus_per_node_min": 1, "gpus_per_node_max": g, "walltime_default_s": 60,
             "walltime_max_s": 10**5}
    return site_from_settings({
        "name": "m", "time_zone": "UTC", "gpus_per_node": g, "queues": [queue],
        "multi_node_whole_nodes": whole,
        "capacity_timeline": [{"since": f"1970-01-01T00:{s // 60:02d}:{s % 60:02d}+00:00",
                               "nodes": n} for s, n in timeline]})


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
            assert state.take(node_set, per_node) == sum(1 << i for i in gpus)
            for k in nodes:
                assert gpus <= free[k]
                free[k] -= gpus
            running.append((nodes, gpus, per_node))
            if tracked:  # take is the fast path's: the tracked state counts take_set only
                gen = state.gen
        for f in range(g + 1):
            assert bits(state.exact[f]) == [k for k in range(managed) if len(free[k]) == f]
        assert state.free[:6] == [len(s) for s in free]
        assert state.gpu_free[:6] == [sum(1 << i for i in s) for s in free]
        if tracked:
            assert state.gen == gen


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
