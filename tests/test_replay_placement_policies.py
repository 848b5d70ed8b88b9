"""``placement.policies`` on a tracked state (``gen``) and a changing queue: the choices ``choose``
caches must still be the documented ones (the brute-force rules of
``test_replay_placement_oracle``), and ``random`` draws every feasible placement and no other."""

from __future__ import annotations

from hypothesis import given, settings

from swftools.replay import PlacementInputs
from swftools.replay.placement import make_placement

from .strategies import placement_oracle_cases
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
