"""``placement.policies`` on a tracked state (``gen``) and a changing queue: the choices ``choose``
caches must still be the documented ones (the brute-force rules of
``test_replay_placement_oracle``), and ``random`` draws every feasible placement and no other."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from swftools.replay import PlacementInputs
from swftools.replay.placement import make_placement

from .strategies import placement_oracle_cases
from .test_replay_placement import as_state
from .test_replay_placement_oracle import ORACLES, as_sets, candidates, gains_of, state_of


def _make(name, case, seed=0):
    n, g = case["n"], case["g"]
    jobs = 1 + len(case["others"])
    inputs = PlacementInputs(rack=case["rack"], gpu_model=case["model"], score=case["score"],
                             gpu_class=case["cls"], model_speed=case["model_speed"],
                             class_score=case["class_score"],
                             job_class=[case["job_class"]] * jobs)
    return make_placement(name, inputs.resolved(n, g), gains_of(case), seed)


def _load(state, case):
    """Sets ``state``'s free GPUs to ``case``'s in place (a tracked state changes, not moves)."""
    fresh = state_of(case)
    changed = sum(1 << k for k in range(case["n"]) if fresh.gpu_free[k] != state.gpu_free[k])
    state.gpu_free, state.free, state.exact = fresh.gpu_free, fresh.free, fresh.exact
    if hasattr(state, "gen"):  # a plain GpuState records no changes
        state.dirty |= changed
        state.gen += 1


def _choice(placement, state, case):
    node_set, gpus = placement.choose(state, 0, case["nodes"], case["per_node"])
    return as_sets((tuple(k for k in range(case["n"]) if node_set >> k & 1),
                    tuple(i for i in range(case["g"]) if gpus >> i & 1)))


def _waiting(case):
    return [0] + [w for w, o in enumerate(case["others"], 1) if o[3]]



def _started(name, p, case):
    """A fresh state of ``case`` with the tracked state's counters, ``p`` started on it (and,
    for ``priority-wc``, told the queue's shapes and waiting jobs)."""
    state = state_of(case)
    state.gen, state.dirty = 0, 0  # as ``TrackedGpuState``
    p.start(state, None)
    if name == "priority-wc":
        p.shapes = ([case["nodes"]] + [o[0] for o in case["others"]],
                    [case["per_node"]] + [o[1] for o in case["others"]])
        p.set_waiting(_waiting(case))
    return state

@settings(max_examples=60, deadline=None)
@given(placement_oracle_cases())
def test_cached_choices_follow_the_state_and_the_queue(case):
    # a second state: node 0 wholly free (so the job's shape still fits), others as before
    after = {**case, "gpu_free": [(1 << case["g"]) - 1] + list(case["gpu_free"][1:])}
    one_gpu = {**case, "nodes": 1, "per_node": 1}
    for name, oracle in ORACLES.items():
        p = _make(name, case)
        state = _started(name, p, case)
        assert _choice(p, state, case) == as_sets(oracle(case)), name
        if candidates(one_gpu):  # another shape in the same state: its own choice
            assert _choice(p, state, one_gpu) == as_sets(oracle(one_gpu)), name
        assert _choice(p, state, case) == as_sets(oracle(case)), name
        _load(state, after)
        assert _choice(p, state, after) == as_sets(oracle(after)), name
        if name != "priority-wc":
            continue
        # the queue changes while the state does not: the choice follows the queue
        idle = {**after, "others": [o[:3] + (False,) for o in after["others"]]}
        p.set_waiting([0])
        assert _choice(p, state, idle) == as_sets(oracle(idle))
        p.queue_add(_waiting(after))
        assert _choice(p, state, after) == as_sets(oracle(after))
        for w in _waiting(after)[1:]:
            p.queue_remove(w)
            after = {**after, "others": [o[:3] + (o[3] and v != w,)
                                         for v, o in enumerate(after["others"], 1)]}
            assert _choice(p, state, after) == as_sets(oracle(after))


@settings(max_examples=25, deadline=None)
@given(placement_oracle_cases(max_nodes=4))
def test_random_draws_every_feasible_placement_and_no_other(case):
    want = {as_sets(c) for c in candidates(case)}
    seen = set()
    p = _make("random", case, seed=len(want))
    state = state_of(case)
    p.start(state, None)
    for _ in range(40 * min(len(want), 24)):  # missing one of N <= 24: about N e^-40
        seen.add(_choice(p, state, case))  # an untracked state: a fresh draw each time
        if seen == want:
            break
    assert seen <= want
    if len(want) <= 24:
        assert seen == want


@settings(max_examples=30, deadline=None)
@given(placement_oracle_cases())
def test_random_draws_once_per_shape_and_state(case):
    p = _make("random", case)
    state = state_of(case)
    state.gen, state.dirty = 0, 0
    p.start(state, None)
    first = _choice(p, state, case)
    assert _choice(p, state, case) == first  # same state: the same draw
    assert first in {as_sets(c) for c in candidates(case)}
    _load(state, case)
    later = [_choice(p, state, case)]
    for _ in range(30):
        _load(state, case)
        later.append(_choice(p, state, case))
    assert all(c in {as_sets(x) for x in candidates(case)} for c in later)
    if len(candidates(case)) > 1:  # a new state draws afresh (31 draws all alike: 2^-30 at most)
        assert len(set(later)) > 1


@settings(max_examples=40, deadline=None)
@given(placement_oracle_cases())
def test_jobs_of_one_choice_group_get_one_choice(case):
    # the engine skips the jobs of a (shape, group) once one was refused: a group must not mix
    # jobs the policy places differently (``priority``: gains above and at or below the median)
    jobs = range(1 + len(case["others"]))
    for name in ORACLES:
        p = _make(name, case)
        state = state_of(case)
        p.start(state, None)
        group = p.choice_group()
        if group is None:
            continue
        if name == "priority-wc":
            continue  # declares no groups (None above)
        got = {j: _choice_of(p, state, case, j) for j in jobs}
        for a in jobs:
            for b in jobs:
                if group(a) == group(b):
                    assert got[a] == got[b], (name, a, b)


def _choice_of(p, state, case, j):
    return p.choose(state, j, case["nodes"], case["per_node"])


@settings(max_examples=40, deadline=None)
@given(placement_oracle_cases())
def test_without_inputs_every_policy_places_as_on_a_homogeneous_machine(case):
    # no PlacementInputs: one model, one class, equal scores, every gain equal
    n, g = case["n"], case["g"]
    ones = [[1.0] * g for _ in range(n)]
    flat = {**case, "rack": [0] * n, "model": [0] * n, "model_speed": [1.0] * 3, "score": ones,
            "cls": [[0] * g for _ in range(n)], "class_score": [ones, ones], "gain": 1.0,
            "others": [o[:2] + (1.0, o[3]) for o in case["others"]]}
    for name, oracle in ORACLES.items():
        p = make_placement(name, None, gains_of(flat))
        state = _started(name, p, flat)
        assert _choice(p, state, flat) == as_sets(oracle(flat)), name


@settings(max_examples=20, deadline=None)
@given(placement_oracle_cases())
def test_every_policy_passes_on_the_run_time_factor(case):
    def factor(j, nodes, gpus):  # differs by job, nodes and GPUs
        return 1.0 + j + sum(nodes) / 10 + sum(map(len, gpus)) / 100

    for name in ("random",) + tuple(ORACLES):
        p = _make(name, case)
        state = state_of(case)
        p.start(state, factor)
        if name == "priority-wc":
            p.shapes = ([case["nodes"]] + [o[0] for o in case["others"]],
                        [case["per_node"]] + [o[1] for o in case["others"]])
        node_set, gpus = p.choose(state, 0, case["nodes"], case["per_node"])
        ks = [k for k in range(case["n"]) if node_set >> k & 1]
        held = [i for i in range(case["g"]) if gpus >> i & 1]
        assert p.factor(0, node_set, gpus) == factor(0, ks, [held] * len(ks)), name


def test_a_subclass_declares_no_choice_groups_unless_it_says_so():
    # a user's subclass may choose by job: the built-in groups would be wrong for it
    from swftools.replay.placement.policies import Priority, Random

    class MyRandom(Random):
        pass

    class MyPriority(Priority):
        pass

    for cls, base in ((MyRandom, Random), (MyPriority, Priority)):
        for kind in (cls, base):
            p = kind(None, [1.0, 2.0, 3.0])
            state = state_of({"g": 2, "n": 2, "managed": 2, "gpu_free": [3, 3]})
            p.start(state, None)
            group = p.choice_group()
            assert (group is None) == (kind is cls), kind


@settings(max_examples=30, deadline=None)
@given(placement_oracle_cases())
def test_on_a_plain_state_every_choice_is_made_afresh(case):
    # a plain GpuState has no ``gen``: nothing may be cached across its changes
    after = {**case, "gpu_free": [(1 << case["g"]) - 1] + list(case["gpu_free"][1:])}
    for name, oracle in ORACLES.items():
        if name == "priority-wc":
            continue  # needs the queue: checked on a tracked state above
        p = _make(name, case)
        state = state_of(case)
        p.start(state, None)
        assert _choice(p, state, case) == as_sets(oracle(case)), name
        _load(state, after)
        assert _choice(p, state, after) == as_sets(oracle(after)), name


# --- hand-worked cases -------------------------------------------------------------------------
# The machine of ``test_replay_placement_priority``: 4 nodes x 2 GPUs, nodes 0-1 P100 (speed
# 1.0), nodes 2-3 V100 (speed 1.5), every GPU of one score and class: the fast node order is 2,
# 3, 0, 1 and the fast GPU order 0, 1 (the slow ones reversed). Gains in queue order: job 0 1.24,
# job 1 1.31, job 2 1.51, job 3 1.60 (median 1.41).
GAINS = [1.24, 1.31, 1.51, 1.60]
ONE_GPU, TWO_GPUS = (1, 1), (1, 2)
FREE, BUSY, GPU0 = [True, True], [False, False], [True, False]


def _machine(model=(0, 0, 1, 1), g=2):
    return PlacementInputs(gpu_model=list(model), model_speed=[1.0, 1.5]).resolved(len(model), g)


def _state(free, managed=None, gen=0):
    """A ``GpuState`` of ``free`` (per node, per GPU: free?); with ``gen`` as the tracked one."""
    state = as_state([list(row) for row in free], len(free) if managed is None else managed,
                     len(free[0]))
    if gen is not None:
        state.gen, state.dirty = gen, 0
    return state


def _where(choice, n=4, g=2):
    node_set, gpus = choice
    return [k for k in range(n) if node_set >> k & 1], [i for i in range(g) if gpus >> i & 1]


def _wc(free, waiting, shapes, gains=GAINS, managed=None, model=(0, 0, 1, 1)):
    """A started ``priority-wc`` (built with keywords) on ``free``, told ``waiting`` and the
    ``shapes`` of jobs 0-3 (queue index -> (nodes, GPUs per node); one GPU when not given)."""
    from swftools.replay.placement import PriorityWc

    p = PriorityWc(machine=_machine(model), gains=gains)
    state = _state(free, managed)
    p.start(state, None)
    p.shapes = ([shapes.get(q, ONE_GPU)[0] for q in range(4)],
                [shapes.get(q, ONE_GPU)[1] for q in range(4)])
    if waiting is not None:  # else the queue's version is still the first
        p.set_waiting(waiting)
    return p, state


def test_priority_wc_higher_gains_claim_highest_first_not_in_queue_order():
    # node 3 has GPU 0 free only. Job 3 (1.60, 1 GPU) claims first: node 2 (1 GPU left); job 2
    # (1.51, 2 GPUs) then fits neither V100 and claims P100 node 0. Job 0 takes the fastest node
    # with a GPU unclaimed, node 2, GPU 0. In queue order job 2 would take node 2 and job 3 node 3
    p, state = _wc([FREE, FREE, FREE, GPU0], [0, 2, 3], {2: TWO_GPUS})
    assert _where(p.choose(state, 0, *ONE_GPU)) == ([2], [0])


def test_priority_wc_a_waiting_job_claims_only_managed_nodes():
    # nodes 0 and 3 V100 (fast order 0, 3, 1, 2), node 3 not managed (free but closed), node 0
    # busy. Job 3 (1 GPU) claims P100 node 1, the fastest managed node with a free GPU: of the
    # managed nodes only node 2 still has the 2 GPUs job 0 asks for
    p, state = _wc([BUSY, FREE, FREE, FREE], [0, 3], {}, managed=3, model=(1, 0, 0, 1))
    assert _where(p.choose(state, 0, *TWO_GPUS)) == ([2], [0, 1])


def test_priority_wc_claims_stop_when_nothing_is_free():
    # P100s busy; jobs 3 and 2 (2 GPUs each) claim both V100s, job 1 finds nothing left: job 0
    # still starts, on the slowest node that fits (node 2) and its slowest GPU
    p, state = _wc([BUSY, BUSY, FREE, FREE], [0, 1, 2, 3], {1: TWO_GPUS, 2: TWO_GPUS, 3: TWO_GPUS},
                   gains=[1.0, 2.0, 3.0, 4.0])
    assert _where(p.choose(state, 0, *ONE_GPU)) == ([2], [1])


def test_priority_wc_counts_gpus_not_nodes():
    # job 3 waiting for one GPU claims one of node 2's two: job 0 still gets node 2 (GPU 0, as
    # the claims are made on a copy of the free GPUs)
    p, state = _wc([FREE] * 4, [0, 3], {})
    assert _where(p.choose(state, 0, *ONE_GPU)) == ([2], [0])
    # nothing waiting, node 2 with one free GPU: job 0 (1 GPU) fits it exactly, the fastest
    p, state = _wc([FREE, FREE, GPU0, FREE], [0], {})
    assert _where(p.choose(state, 0, *ONE_GPU)) == ([2], [0])


def test_multi_node_jobs_claim_and_take_whole_nodes_whatever_their_gpus_per_node():
    # multi-node jobs hold whole free nodes (the placement module's docstring): job 3, asking
    # 2 nodes x 1 GPU, claims both V100s whole, and job 0 takes P100 node 0
    p, state = _wc([FREE] * 4, [0, 3], {3: (2, 1)})
    assert _where(p.choose(state, 0, *ONE_GPU)) == ([0], [0])
    # job 3 (1 GPU) claims one GPU of node 2: node 2 is not whole in the claims, so job 0's two
    # whole nodes are V100 node 3 and P100 node 0, all their GPUs
    p, state = _wc([FREE] * 4, [0, 3], {})
    assert _where(p.choose(state, 0, 2, 1)) == ([0, 3], [0, 1])
    strict = make_placement("priority", _machine(), GAINS)
    state = _state([FREE] * 4)
    strict.start(state, None)
    assert _where(strict.choose(state, 3, 2, 1)) == ([2, 3], [0, 1])


def test_priority_wc_without_shapes():
    # no higher-gain job waiting: the shapes are not needed
    from swftools.replay.placement import PriorityWc

    p = PriorityWc(_machine(), GAINS)
    state = _state([FREE] * 4)
    p.start(state, None)
    p.set_waiting([0, 1])  # job 1 (1.31) is higher than job 0 but not than job 3
    assert _where(p.choose(state, 3, *ONE_GPU)) == ([2], [0])
    with pytest.raises(AssertionError, match=r"^priority-wc needs the job shapes \(shapes\) of"):
        p.choose(state, 0, *ONE_GPU)


def test_priority_wc_follows_every_change_of_the_queue():
    # the state does not change (one gen): each choice must follow the queue. Job 0 (1 GPU):
    # nothing higher waiting -> node 2; job 3 (2 GPUs) waiting -> node 3; jobs 2 and 3 -> node 0
    fast, one, both = ([2], [0]), ([3], [0]), ([0], [0])
    shapes = {2: TWO_GPUS, 3: TWO_GPUS}
    steps = [
        [("set", [0]), fast, ("add", [3]), one],
        [("set", [0, 3]), one, ("remove", 3), fast],
        [("set", [0]), fast, ("set", [0, 3]), one],
        [("set", [0]), fast, ("add", [3]), ("set", [0, 2, 3]), both],
        [("set", [0, 3]), one, ("remove", 3), ("add", [2, 3]), both],
    ]
    for seq in steps:
        p, state = _wc([FREE] * 4, None, shapes)
        for step in seq:
            if isinstance(step[0], str):
                op, arg = step
                {"set": p.set_waiting, "add": p.queue_add, "remove": p.queue_remove}[op](arg)
            else:
                assert _where(p.choose(state, 0, *ONE_GPU)) == step, seq


@pytest.mark.parametrize("name", ["random", "even", "priority-wc"])
def test_a_choice_on_another_state_is_made_from_that_state(name):
    # placements cache choices for the state they were started on; asked about other states (of
    # the same gen) or a plain state that changed, they must look at the state they are given
    only = [[FREE if k == m else BUSY for k in range(4)] for m in range(4)]
    p = make_placement(name, _machine(), GAINS, seed=3)
    p.start(_state(only[3]), None)
    if name == "priority-wc":
        p.shapes = ([1] * 4, [1] * 4)
        p.set_waiting([])
    for m in (0, 1, 0):
        assert _where(p.choose(_state(only[m]), 0, *ONE_GPU))[0] == [m], (name, m)
    plain = _state(only[0], gen=None)
    p.start(plain, None)
    for m in (0, 1, 2):
        fresh = _state(only[m], gen=None)
        plain.gpu_free, plain.free, plain.exact = fresh.gpu_free, fresh.free, fresh.exact
        assert _where(p.choose(plain, 0, *ONE_GPU))[0] == [m], (name, m)


def test_without_gains_priority_puts_every_job_on_the_slow_side_and_wc_on_the_fast():
    # absent gains are equal gains (the placement module's docstring)
    strict = make_placement("priority", _machine(), None)
    state = _state([FREE] * 4)
    strict.start(state, None)
    assert _where(strict.choose(state, 0, *ONE_GPU)) == ([0], [1])
    p, state = _wc([FREE] * 4, [0, 1, 2, 3], {}, gains=None)
    assert _where(p.choose(state, 0, *ONE_GPU)) == ([2], [0])


def test_a_tiered_subclass_without_a_gpu_order_takes_the_lowest_free_gpus():
    from swftools.replay.placement import Tiered

    class SlowFirst(Tiered):
        def tiers(self, j):
            return [0b0011, 0b1100], None  # nodes 0-1 first; GPUs: no order given

    p = SlowFirst(_machine(g=4))
    state = _state([[False] * 4, [False, True, False, True], [True] * 4, [True] * 4])
    p.start(state, None)
    assert _where(p.choose(state, 0, 1, 2), g=4) == ([1], [1, 3])
    assert _where(p.choose(state, 0, 1, 1), g=4) == ([1], [1])
    assert _where(p.choose(state, 0, 1, 3), g=4) == ([2], [0, 1, 2])


def test_random_replays_the_same_draws_for_the_same_seed():
    free = [FREE, GPU0, FREE, [False, True]]
    draws = []
    for _ in range(2):
        p = make_placement("random", _machine(), None, seed=11)
        state = _state(free, gen=None)
        p.start(state, None)
        draws.append([p.choose(state, 0, 1, 1 + i % 2) for i in range(24)])
    assert draws[0] == draws[1]


def test_even_ties_and_one_node_models():
    # two models of two nodes, 2 GPUs each. One GPU free of each model's four: a tie, the lower
    # model index wins (node 0), not the later model (node 2)
    p = make_placement("even", _machine(), None)
    state = _state([GPU0, BUSY, GPU0, BUSY])
    p.start(state, None)
    assert _where(p.choose(state, 0, *ONE_GPU)) == ([0], [0])
    # model 0: one free GPU on each node, model 1: node 2 whole: 2 of 4 each, a tie again
    state = _state([GPU0, GPU0, FREE, BUSY])
    p.start(state, None)
    assert _where(p.choose(state, 0, *ONE_GPU)) == ([0], [0])
    # model 0 cannot host a 2-GPU job: model 1's node 2, whatever model 0's share
    state = _state([GPU0, GPU0, FREE, BUSY])
    p.start(state, None)
    assert _where(p.choose(state, 0, *TWO_GPUS)) == ([2], [0, 1])
    # three nodes of four whole free nodes: shares 1 and 1 (model 0 first), then 1/2 and 1 (model
    # 1), then 1/2 and 1/2 (model 0 again)
    state = _state([FREE] * 4)
    p.start(state, None)
    assert _where(p.choose(state, 0, 3, 2)) == ([0, 1, 2], [0, 1])
    # model 0 is node 0 alone: its share 1/1 ties model 1's 3/3 (node 0 first), then 0 against 1
    p = make_placement("even", _machine(model=(0, 1, 1, 1)), None)
    state = _state([FREE] * 4)
    p.start(state, None)
    assert _where(p.choose(state, 0, 2, 2)) == ([0, 1], [0, 1])


def test_priority_takes_the_median_of_the_gains_as_given():
    # float32 gains 1 + 2**-23 and 1 + 2**-22: their median is the midpoint 1 + 1.5 * 2**-23, and
    # job 1 is above it (fastest node and GPU), job 0 not (slowest). A median rounded to float32
    # (half to even: 1 + 2**-22) would put job 1 on the slow side too
    import numpy as np

    gains = np.array([1 + 2.0 ** -23, 1 + 2.0 ** -22], dtype=np.float32)
    p = make_placement("priority", _machine(), gains)
    state = _state([FREE] * 4)
    p.start(state, None)
    assert _where(p.choose(state, 1, *ONE_GPU)) == ([2], [0])
    assert _where(p.choose(state, 0, *ONE_GPU)) == ([0], [1])


def test_even_ties_exactly_on_shares_of_different_sizes():
    # 5 GPUs per node, GPUs 0-2 free everywhere; model 0 is node 0 alone (3 of 5 GPUs free),
    # model 1 nodes 1-7 (21 of 35): both shares are 3/5, a tie the lower model index wins. (The
    # shares computed as free / (nodes / 5) would be 15 and 15.000000000000002: model 1)
    p = make_placement("even", _machine(model=(0,) + (1,) * 7, g=5), None)
    state = _state([[True] * 3 + [False] * 2] * 8)
    p.start(state, None)
    assert _where(p.choose(state, 0, *ONE_GPU), n=8, g=5) == ([0], [0])


def test_random_multi_node_jobs_draw_whole_free_nodes_only():
    # nodes 1 and 3 are the whole free ones: every draw of two nodes is those two, all their
    # GPUs, even when the job's GPUs per node would fit the half-free nodes 0 and 2
    p = make_placement("random", _machine(), None, seed=5)
    state = _state([GPU0, FREE, GPU0, FREE], gen=None)
    p.start(state, None)
    assert {tuple(map(tuple, _where(p.choose(state, 0, 2, 1)))) for _ in range(20)} == {
        ((1, 3), (0, 1))}
