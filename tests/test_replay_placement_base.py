"""``placement.base`` (issue 30): the resolved placement inputs, the bit-set helpers, the base
``packed`` and ``best-fit`` choices, choice groups and the keyed run-time factor cache.

Every expected value is worked by hand from the docstrings (``PlacementInputs``, the module
docstring of ``swftools.replay.placement``) or recomputed by brute force here: the signature of
a placement from the machine's arrays, a keyed factor from the callback itself, counted calls
for the promise that a keyed callback is evaluated once per (key, signature).
"""

from __future__ import annotations

import math
from itertools import combinations

import pytest
from hypothesis import given, settings

from swftools.errors import UsageError
from swftools.replay import PlacementInputs
from swftools.replay.placement import base
from swftools.replay.placement.base import (BestFit, Machine, Placement, node_candidates,
                                            pick_gpus, take_tiers)

from .strategies import placement_oracle_cases
from .test_replay_placement_oracle import state_of


def _state(g, gpu_free, managed=None):
    return state_of({"g": g, "n": len(gpu_free), "gpu_free": gpu_free,
                     "managed": len(gpu_free) if managed is None else managed})


def _error(inputs, n_nodes, g):
    with pytest.raises(UsageError) as exc:
        inputs.resolved(n_nodes, g)
    return str(exc.value)


# --- PlacementInputs.resolved ------------------------------------------------------------------
def test_absent_inputs_resolve_to_a_homogeneous_machine():
    m = PlacementInputs().resolved(3, 2)
    assert m == Machine(3, 2, [0, 0, 0], [0, 0, 0], [[1.0, 1.0]] * 3, [[0, 0]] * 3, [1.0],
                        False, None, None, 1.7, False)
    assert type(m.score[2][1]) is float and type(m.model_speed[0]) is float
    assert m.factor_by_key is False and m.pal_k2 is False and type(m.pal_penalty) is float
    m.score[0][0] = 5.0  # one list per node: a change of one node is not a change of another
    assert m.score[1][0] == 1.0


def test_inputs_are_converted_and_cut_to_the_machine():
    inputs = PlacementInputs(rack=[3.0, 1, 2, 9], gpu_model=[1, 0.0, 1],
                             score=[[2, 0.5, 7], [1, 1, 1], [0.25, 4, 4], [9]],
                             gpu_class=[[1.0, 0, 5], [2, 2, 2], [0, 1, 0]], model_speed=[2, 3],
                             factor_by_key=1, pal_penalty=2, pal_k2="yes")
    m = inputs.resolved(3, 2)
    assert (m.n_nodes, m.g) == (3, 2)
    assert m.rack == [3, 1, 2] and all(type(v) is int for v in m.rack)
    assert m.model == [1, 0, 1] and all(type(v) is int for v in m.model)
    assert m.score == [[2.0, 0.5], [1.0, 1.0], [0.25, 4.0]]
    assert all(type(v) is float for row in m.score for v in row)
    assert m.cls == [[1, 0], [2, 2], [0, 1]] and all(type(v) is int for row in m.cls for v in row)
    assert m.model_speed == [2.0, 3.0] and all(type(v) is float for v in m.model_speed)
    assert m.factor_by_key is True and m.pal_k2 is True
    assert m.pal_penalty == 2.0 and type(m.pal_penalty) is float


def test_inputs_of_exactly_the_machine_are_enough():
    inputs = PlacementInputs(rack=[0, 1], gpu_model=[0, 0], score=[[1, 2, 3], [4, 5, 6]],
                             gpu_class=[[0, 0, 1], [1, 0, 0]], class_score=[[[1] * 3] * 2])
    m = inputs.resolved(2, 3)
    assert m.rack == [0, 1] and m.score == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert m.class_score == [[[1.0] * 3] * 2]


@pytest.mark.parametrize("inputs, message", [
    (PlacementInputs(rack=[0, 1]), "placement input rack: 2 entries for 3 nodes"),
    (PlacementInputs(gpu_model=[0]), "placement input gpu_model: 1 entries for 3 nodes"),
    (PlacementInputs(score=[[1, 1]] * 2), "placement input score: needs 3 nodes x 2 GPUs"),
    (PlacementInputs(score=[[1, 1], [1], [1, 1]]), "placement input score: needs 3 nodes x 2 GPUs"),
    (PlacementInputs(gpu_class=[[0, 0], [0, 0], [0]]),
     "placement input gpu_class: needs 3 nodes x 2 GPUs"),
    (PlacementInputs(class_score=[[[1, 1]] * 3, [[1, 1]] * 2]),
     "placement input class_score: needs 3 nodes x 2 GPUs"),
])
def test_short_inputs_are_usage_errors(inputs, message):
    assert _error(inputs, 3, 2) == message


def test_rows_beyond_the_machine_are_not_checked():
    m = PlacementInputs(score=[[1, 2], [3, 4], [5]], gpu_class=[[0, 1], [1, 0], []]).resolved(2, 2)
    assert m.score == [[1.0, 2.0], [3.0, 4.0]] and m.cls == [[0, 1], [1, 0]]


@pytest.mark.parametrize("model, speed, expected", [
    ([0, 2, 1], None, [1.0, 1.0, 1.0]),  # one nominal speed per model
    ([0, 1], [2.0], [2.0, 1.0]),  # a missing model gets the nominal speed
    ([0, 1], [2.0, 3.0], [2.0, 3.0]),
    ([0, 1], [2.0, 3.0, 4.0], [2.0, 3.0, 4.0]),  # speeds of models not on the machine kept
    ([0, 0], [], [1.0]),
])
def test_model_speeds_cover_every_model_on_the_machine(model, speed, expected):
    m = PlacementInputs(gpu_model=model, model_speed=speed).resolved(len(model), 1)
    assert m.model_speed == expected


def test_a_machine_without_nodes_has_the_one_nominal_model():
    m = PlacementInputs().resolved(0, 2)
    assert m.model_speed == [1.0] and m.rack == [] and m.score == []


def test_per_class_scores_are_resolved_like_the_scores():
    grid_a = [[2, 1, 9], [1, 1, 9]]
    grid_b = [[0.5, 0.5], [3, 4], [7, 7]]
    m = PlacementInputs(class_score=[grid_a, grid_b], job_class=[1.0, 0, 1]).resolved(2, 2)
    assert m.class_score == [[[2.0, 1.0], [1.0, 1.0]], [[0.5, 0.5], [3.0, 4.0]]]
    assert all(type(v) is float for grid in m.class_score for row in grid for v in row)
    assert m.job_class == [1, 0, 1] and all(type(c) is int for c in m.job_class)
    assert PlacementInputs().resolved(2, 2).class_score is None


def test_an_absent_class_grid_is_the_nominal_score():
    # "Absent inputs mean a homogeneous machine: ... scores 1.0" (swftools.replay.placement)
    m = PlacementInputs(class_score=[None, [[2, 3], [4, 5]]]).resolved(2, 2)
    assert m.class_score == [[[1.0, 1.0], [1.0, 1.0]], [[2.0, 3.0], [4.0, 5.0]]]
    assert all(type(v) is float for row in m.class_score[0] for v in row)


PENALTY = "locality penalty {}: expected a positive number (PAL's default 1.7; 1 = no penalty)"


@pytest.mark.parametrize("penalty", [0, -1.0, math.inf, math.nan])
def test_the_locality_penalty_must_be_positive_and_finite(penalty):
    assert _error(PlacementInputs(pal_penalty=penalty), 1, 1) == PENALTY.format(penalty)


@pytest.mark.parametrize("penalty", [1e-300, 0.5, 1, 1.7, 1e300])
def test_any_positive_finite_locality_penalty_is_kept(penalty):
    assert PlacementInputs(pal_penalty=penalty).resolved(1, 1).pal_penalty == penalty


SCORE = ("placement input {}: node 1, GPU 1: {} is not a positive score (expected a positive "
         "decimal number, 1.0 = nominal)")


@pytest.mark.parametrize("value", [0, -0.5, math.inf, math.nan])
def test_a_score_must_be_positive_and_finite_and_is_named_by_node_and_gpu(value):
    """PAL ranks GPUs by 1 / score: a score of 0 was an infinite rank (the what-if layer's
    rule, ``site.is_score``, for library callers too); cells beyond the machine are not read."""
    grid = [[1.0, 1.0], [2.0, value]]
    assert _error(PlacementInputs(score=grid), 2, 2) == SCORE.format("score", float(value))
    assert _error(PlacementInputs(class_score=[None, grid]), 2, 2) == \
        SCORE.format("class_score[1]", float(value))
    assert PlacementInputs(score=grid, class_score=[grid]).resolved(2, 1).score == [[1.0], [2.0]]


CLASSES = "placement input job_class: classes must index class_score"


@pytest.mark.parametrize("job_class, grids", [([0, -1], 2), ([-1], None), ([0, 2], 2), ([1], 1)])
def test_job_classes_must_index_the_class_scores(job_class, grids):
    class_score = None if grids is None else [[[1.0]]] * grids
    inputs = PlacementInputs(class_score=class_score, job_class=job_class)
    assert _error(inputs, 1, 1) == CLASSES


@pytest.mark.parametrize("job_class, grids", [([0, 1, 0], 2), ([0], 1), ([5, 0], None),
                                              ([], 1), ([], None), (None, 1)])
def test_job_classes_that_index_the_class_scores_are_kept(job_class, grids):
    class_score = None if grids is None else [[[1.0]]] * grids
    m = PlacementInputs(class_score=class_score, job_class=job_class).resolved(1, 1)
    assert m.job_class == job_class


# --- Machine ----------------------------------------------------------------------------------
def test_group_masks_are_node_sets_in_ascending_key_order():
    m = PlacementInputs(rack=[2, 0, 2, 1], gpu_model=[1, 1, 1, 1]).resolved(4, 1)
    assert m.group_masks(lambda k: m.rack[k]) == [0b0010, 0b1000, 0b0101]
    assert m.group_masks(lambda k: m.model[k]) == [0b1111]


def test_gpu_order_is_best_class_then_highest_score_then_lowest_number():
    m = PlacementInputs(gpu_class=[[1, 0, 0], [0, 0, 0], [0, 1, 0], [1, 1, 0]],
                        score=[[1.0, 0.9, 1.1], [1, 1, 1], [1.0, 2.0, 1.0], [0.5, 0.7, 0.1]]
                        ).resolved(4, 3)
    assert m.gpu_order(True) == [[2, 1, 0], [0, 1, 2], [0, 2, 1], [2, 1, 0]]
    assert m.gpu_order(False) == [[0, 1, 2], [2, 1, 0], [1, 2, 0], [0, 1, 2]]


# --- bit-set helpers --------------------------------------------------------------------------
def test_node_candidates():
    # exact[4] = nodes 1, 4; exact[3] = node 2; exact[2] = node 0; exact[1] = node 3
    state = _state(4, [0b1010, 0b1111, 0b0111, 0b0100, 0b1111, 0b0000])
    assert node_candidates(state, 1, 1) == 0b011111
    assert node_candidates(state, 1, 2) == 0b010111
    assert node_candidates(state, 1, 3) == 0b010110
    assert node_candidates(state, 1, 4) == 0b010010
    assert node_candidates(state, 2, 4) == 0b010010
    assert node_candidates(state, 3, 4) == 0b010010  # the caller checks the count
    assert node_candidates(_state(4, [0b1010, 0b1111, 0b0111, 0b0100, 0b1111], 3), 1, 1) == 0b111
    assert node_candidates(_state(4, [0, 0b1111], 1), 1, 1) == 0


def test_pick_gpus_takes_the_first_free_gpus_in_order():
    assert pick_gpus(0b1011, [3, 1, 0, 2], 2) == 0b1010
    assert pick_gpus(0b1011, [2, 3, 1, 0], 1) == 0b1000
    assert pick_gpus(0b1011, [2, 3, 1, 0], 3) == 0b1011
    assert pick_gpus(0b0100, [0, 1, 2, 3], 1) == 0b0100


def test_take_tiers_takes_nodes_tier_by_tier_lowest_first():
    # tiers are disjoint node sets (``Machine.group_masks``), as the policies give them
    cands = 0b110110
    tiers = [0b000001, 0b110000, 0b001111]
    assert take_tiers(cands, tiers, 1) == 0b010000
    assert take_tiers(cands, tiers, 2) == 0b110000
    assert take_tiers(cands, tiers, 3) == 0b110010
    assert take_tiers(cands, tiers, 4) == 0b110110
    assert take_tiers(cands, [0b001111, 0b110000], 3) == 0b010110


# --- packed and best-fit ----------------------------------------------------------------------
def _choose(cls, g, gpu_free, nodes, per_node, managed=None):
    state = _state(g, gpu_free, managed)
    p = cls()
    p.start(state, None)
    return p.choose(state, 0, nodes, per_node)


@pytest.mark.parametrize("per_node, packed, best", [
    (1, (0b0001, 0b0010), (0b1000, 0b0100)),  # packed: node 0; best-fit: node 3 (1 free)
    (2, (0b0001, 0b1010), (0b0001, 0b1010)),  # node 0 has exactly 2 free
    (3, (0b0010, 0b0111), (0b0100, 0b0111)),  # packed: node 1 (4 free); best-fit: node 2 (3)
    (4, (0b0010, 0b1111), (0b0010, 0b1111)),
])
def test_single_node_jobs(per_node, packed, best):
    free = [0b1010, 0b1111, 0b0111, 0b0100, 0b0000]
    assert _choose(Placement, 4, free, 1, per_node) == packed
    assert _choose(BestFit, 4, free, 1, per_node) == best


def test_unmanaged_nodes_are_never_chosen():
    free = [0b0001, 0b1111, 0b0111]
    assert _choose(Placement, 4, free, 1, 2, managed=2) == (0b0010, 0b0011)
    assert _choose(BestFit, 4, free, 1, 2, managed=2) == (0b0010, 0b0011)
    free = [0b1111, 0b0001, 0b1111, 0b1111]
    assert _choose(Placement, 4, free, 2, 4, managed=3) == (0b0101, 0b1111)


@pytest.mark.parametrize("cls", [Placement, BestFit])
def test_multi_node_jobs_take_the_lowest_whole_free_nodes(cls):
    free = [0b1111, 0b0001, 0b1111, 0b1111, 0b0111, 0b1111]
    assert _choose(cls, 4, free, 2, 4) == (0b000101, 0b1111)
    assert _choose(cls, 4, free, 3, 4) == (0b001101, 0b1111)
    assert _choose(cls, 4, free, 4, 4) == (0b101101, 0b1111)


def test_best_fit_refuses_a_job_that_does_not_fit():
    state = _state(2, [0b01, 0b10])
    p = BestFit()
    p.start(state, None)
    with pytest.raises(AssertionError) as exc:
        p.choose(state, 0, 1, 2)
    assert str(exc.value) == "choose() called for a job that does not fit"


def test_best_fit_takes_the_lowest_node_among_the_fewest_free():
    # nodes 0, 2 and 3 have 2 free GPUs, node 1 has 3: best-fit's tie goes to the lowest number
    free = [0b1100, 0b0111, 0b0110, 0b0011]
    assert _choose(BestFit, 4, free, 1, 2) == (0b0001, 0b1100)
    assert _choose(BestFit, 4, free, 1, 3) == (0b0010, 0b0111)
    assert _choose(BestFit, 4, [0b0000, 0b1010, 0b0101], 1, 1) == (0b0010, 0b0010)


# --- start, choice groups ---------------------------------------------------------------------
def test_a_placement_keeps_its_inputs_until_started():
    m = PlacementInputs(rack=[0, 1]).resolved(2, 2)
    p = Placement(m, [1.0, 2.0], 7)
    assert p.machine is m and p.gains == [1.0, 2.0] and p.seed == 7
    assert p.runtime_factor is None and p.memo is None and p.keyed is False
    assert (Placement().machine, Placement().gains, Placement().seed) == (None, None, 0)


def test_start_without_inputs_resolves_a_homogeneous_machine():
    p = Placement()
    state = _state(3, [0b111, 0b011])
    p.start(state, None)
    assert p.state is state
    assert p.machine == PlacementInputs().resolved(2, 3)
    assert p.model_masks == [0b11] and p.rack_masks == [0b11]


def test_start_groups_the_nodes_by_model_and_rack():
    m = PlacementInputs(gpu_model=[1, 0, 1, 2], rack=[1, 1, 0, 1]).resolved(4, 1)
    p = Placement(m)
    p.start(_state(1, [1, 1, 1, 1]), None)
    assert p.model_masks == [0b0010, 0b0101, 0b1000]
    assert p.rack_masks == [0b0100, 0b1011]


def _rf(calls, key=lambda j: j % 2, value=None):
    """A factor callback recording its calls: key query -> ``key(j)``; else ``value`` or the
    sum of the nodes and GPUs + 1 (any deterministic value will do)."""
    def rf(j, nodes, gpus):
        calls.append((j, nodes, gpus))
        if nodes is None:
            return key(j)
        if value is not None:
            return value(j, nodes, gpus)
        return 1.0 + sum(nodes) + sum(map(sum, gpus))
    return rf


@pytest.mark.parametrize("cls", [Placement, BestFit])
def test_choice_groups_of_the_base_placements(cls):
    state = _state(2, [0b11, 0b11])
    p = cls()
    p.start(state, None)
    group = p.choice_group()
    assert group is not None and len({group(j) for j in range(5)}) == 1  # one group
    p = cls()
    p.start(state, _rf([]))
    assert p.choice_group() is None  # a factor that is not keyed: no groups
    calls = []
    p = cls(PlacementInputs(factor_by_key=True).resolved(2, 2))
    p.start(state, _rf(calls, key=lambda j: ("k", j // 2)))
    group = p.choice_group()
    assert [group(j) for j in range(4)] == [("k", 0), ("k", 0), ("k", 1), ("k", 1)]
    p = cls(PlacementInputs(factor_by_key=True).resolved(2, 2))
    p.start(state, None)  # the flag without a callback: no factor, one group
    assert len({p.choice_group()(j) for j in range(3)}) == 1


def test_a_subclass_groups_only_when_it_declares_state_only():
    class Mine(Placement):
        pass

    class Declared(Placement):
        state_only = True

    class Refused(BestFit):
        state_only = False

    state = _state(2, [0b11])
    for cls, groups in ((Mine, False), (Declared, True), (Refused, False)):
        p = cls()
        p.start(state, None)
        assert (p.choice_group() is not None) == groups, cls


def test_factor_groups_of_a_placements_own_choice_groups():
    state = _state(2, [0b11])
    choice = ["fast", "slow", "fast"]
    p = Placement()
    p.start(state, None)
    assert [p._factor_group(choice)(j) for j in range(3)] == choice
    p = Placement(PlacementInputs(factor_by_key=True).resolved(1, 2))
    p.start(state, _rf([], key=lambda j: j * 10))
    assert [p._factor_group(choice)(j) for j in range(3)] == [("fast", 0), ("slow", 10),
                                                              ("fast", 20)]
    p = Placement()
    p.start(state, _rf([]))
    assert p._factor_group(choice) is None


def test_the_key_query_is_asked_once_per_job():
    calls = []
    p = Placement(PlacementInputs(factor_by_key=True).resolved(1, 1))
    p.start(_state(1, [1]), _rf(calls, key=lambda j: f"class-{j % 2}"))
    assert [p.job_key(j) for j in (0, 1, 2, 0, 1, 2)] == ["class-0", "class-1", "class-0"] * 2
    assert calls == [(0, None, None), (1, None, None), (2, None, None)]


# --- signatures and keyed factors -------------------------------------------------------------
def _signature(case, node_set, gpus):
    """The documented signature, brute force: (GPU models held as a bit set, lowest score
    held, nodes, racks spanned, GPUs per node)."""
    ks = [k for k in range(case["n"]) if node_set >> k & 1]
    held = [i for i in range(case["g"]) if gpus >> i & 1]
    return (sum(1 << m for m in {case["model"][k] for k in ks}),
            min(case["score"][k][i] for k in ks for i in held), len(ks),
            len({case["rack"][k] for k in ks}), len(held))


def _placements(case, limit=60):
    """Some node sets and GPU sets of the machine: every single node with some GPU sets, and
    node pairs and triples with whole nodes and with some GPU sets."""
    n, g = case["n"], case["g"]
    gpu_sets = sorted({1, (1 << g) - 1, 1 << (g - 1), 0b101 & ((1 << g) - 1) or 1,
                       ((1 << g) - 1) ^ 1})
    out = [(1 << k, gs) for k in range(n) for gs in gpu_sets]
    for size in (2, 3):
        for ks in combinations(range(n), size):
            out += [(sum(1 << k for k in ks), gs) for gs in gpu_sets]
    return out[:limit] + out[-limit:]


def _inputs(case, **kw):
    return PlacementInputs(rack=case["rack"], gpu_model=case["model"], score=case["score"],
                           gpu_class=case["cls"], model_speed=case["model_speed"], **kw)


@settings(max_examples=40, deadline=None)
@given(placement_oracle_cases())
def test_signature_is_the_documented_one(case):
    p = Placement(_inputs(case).resolved(case["n"], case["g"]))
    p.start(state_of(case), None)
    for node_set, gpus in _placements(case):
        expected = _signature(case, node_set, gpus)
        assert p.signature(node_set, gpus) == expected
        assert p.signature(node_set, gpus) == expected  # a second time: from its memo


def test_signature_by_hand():
    inputs = PlacementInputs(gpu_model=[0, 1, 1, 2], rack=[0, 0, 1, 1],
                             score=[[1.0, 0.8], [0.9, 1.2], [1.1, 1.0], [0.7, 0.95]])
    p = Placement(inputs.resolved(4, 2))
    p.start(_state(2, [0b11] * 4), None)
    assert p.signature(0b0010, 0b10) == (0b010, 1.2, 1, 1, 1)
    assert p.signature(0b0010, 0b11) == (0b010, 0.9, 1, 1, 2)
    assert p.signature(0b0001, 0b10) == (0b001, 0.8, 1, 1, 1)
    assert p.signature(0b1000, 0b01) == (0b100, 0.7, 1, 1, 1)
    assert p.signature(0b0110, 0b11) == (0b010, 0.9, 2, 2, 2)
    assert p.signature(0b1001, 0b01) == (0b101, 0.7, 2, 2, 1)
    assert p.signature(0b1001, 0b10) == (0b101, 0.8, 2, 2, 1)
    assert p.signature(0b0011, 0b11) == (0b011, 0.8, 2, 1, 2)
    assert p.signature(0b1011, 0b11) == (0b111, 0.7, 3, 2, 2)
    assert p.signature(0b1100, 0b10) == (0b110, 0.95, 2, 1, 1)


@settings(max_examples=25, deadline=None)
@given(placement_oracle_cases())
def test_signature_ids_number_the_distinct_signatures(case):
    p = Placement(_inputs(case).resolved(case["n"], case["g"]))
    p.start(state_of(case), None)
    seen: dict[tuple, int] = {}
    for node_set, gpus in _placements(case) * 2:
        sid = p.signature_id(node_set, gpus)
        sig = _signature(case, node_set, gpus)
        assert seen.setdefault(sig, sid) == sid
    assert sorted(seen.values()) == list(range(len(seen)))  # small ints, one per signature


def test_signature_ids_stay_right_when_the_memos_start_over(monkeypatch):
    monkeypatch.setattr(base, "CACHE_LIMIT", 1)
    inputs = PlacementInputs(gpu_model=[0, 1, 1], score=[[1.0, 0.5], [1.0, 0.5], [2.0, 2.0]])
    p = Placement(inputs.resolved(3, 2))
    p.start(_state(2, [0b11] * 3), None)
    order = [(0b001, 0b01), (0b010, 0b01), (0b010, 0b11), (0b100, 0b11), (0b001, 0b11),
             (0b010, 0b10), (0b011, 0b11), (0b001, 0b01), (0b010, 0b01), (0b110, 0b11)]
    ids = [p.signature_id(*pl) for pl in order * 3]
    sigs = [p.signature(*pl) for pl in order * 3]
    assert sigs[:3] == [(1, 1.0, 1, 1, 1), (2, 1.0, 1, 1, 1), (2, 0.5, 1, 1, 2)]
    for a in range(len(ids)):
        for b in range(len(ids)):
            assert (ids[a] == ids[b]) == (sigs[a] == sigs[b])


def test_factor_without_a_callback_is_one():
    p = Placement()
    p.start(_state(2, [0b11, 0b11]), None)
    assert p.factor(0, 0b11, 0b11) == 1.0 and p.factor(3, 0b01, 0b10) == 1.0


def test_factor_without_keys_asks_the_callback_every_time():
    calls = []
    p = Placement(PlacementInputs(factor_by_key=False).resolved(3, 3))
    p.start(_state(3, [0b111] * 3), _rf(calls))
    assert p.factor(4, 0b101, 0b011) == 1.0 + (0 + 2) + 2 * (0 + 1)
    assert p.factor(4, 0b101, 0b011) == 5.0
    assert p.factor(1, 0b010, 0b100) == 1.0 + 1 + 2
    assert calls == [(4, [0, 2], [[0, 1], [0, 1]])] * 2 + [(1, [1], [[2]])]


def test_factor_reads_the_memo_of_the_placement_only_for_its_placement():
    calls = []
    p = Placement()
    p.start(_state(2, [0b11, 0b11]), _rf(calls, value=lambda j, n, g: 2.0))
    p.memo = (3, 0b01, 0b10, 1.25)
    assert p.factor(3, 0b01, 0b10) == 1.25 and calls == []
    assert p.factor(2, 0b01, 0b10) == 2.0
    assert p.factor(3, 0b10, 0b10) == 2.0
    assert p.factor(3, 0b01, 0b11) == 2.0
    assert len(calls) == 3


def _keyed(case, calls, n_keys=2):
    """A keyed factor of ``case``'s machine that keeps its promise: it depends on the job's key
    (j mod n_keys) and on the signature only."""
    def value(j, nodes, gpus):
        node_set = sum(1 << k for k in nodes)
        held = sum(1 << i for i in gpus[0])
        models, low, count, racks, per_node = _signature(case, node_set, held)
        return (1 + j % n_keys) * (models + 10 * low + 100 * count + 1000 * racks + 1e4 * per_node)
    return _rf(calls, key=lambda j: j % n_keys, value=value)


@settings(max_examples=25, deadline=None)
@given(placement_oracle_cases())
def test_keyed_factors_are_the_callbacks_asked_once_per_key_and_signature(case):
    calls = []
    rf = _keyed(case, calls)
    p = Placement(_inputs(case, factor_by_key=True).resolved(case["n"], case["g"]))
    p.start(state_of(case), rf)
    jobs = (0, 1, 2, 3)
    asked = set()
    for node_set, gpus in _placements(case, limit=25) * 2:
        ks = [k for k in range(case["n"]) if node_set >> k & 1]
        held = [i for i in range(case["g"]) if gpus >> i & 1]
        for j in jobs:
            assert p.factor(j, node_set, gpus) == rf(j, ks, [held] * len(ks))
            asked.add((j % 2, _signature(case, node_set, gpus)))
            calls.pop()  # the oracle's own call
    assert sorted(c[0] for c in calls if c[1] is None) == list(jobs)  # one key query per job
    factor_calls = [c for c in calls if c[1] is not None]
    assert len(factor_calls) == len(asked)  # one evaluation per (key, signature)


def test_keyed_factors_stay_right_when_the_caches_start_over(monkeypatch):
    monkeypatch.setattr(base, "CACHE_LIMIT", 1)
    case = {"n": 3, "g": 2, "model": [0, 1, 1], "rack": [0, 0, 1],
            "score": [[1.0, 0.5], [1.0, 0.5], [2.0, 2.0]]}
    calls = []
    rf = _keyed(case, calls, n_keys=3)
    p = Placement(PlacementInputs(gpu_model=case["model"], rack=case["rack"],
                                  score=case["score"], factor_by_key=True).resolved(3, 2))
    p.start(_state(2, [0b11] * 3), rf)
    order = [(0b001, 0b01), (0b010, 0b01), (0b010, 0b11), (0b100, 0b11), (0b001, 0b11),
             (0b010, 0b10), (0b011, 0b11), (0b110, 0b11), (0b100, 0b01)]
    for _ in range(3):
        for node_set, gpus in order:
            ks = [k for k in range(3) if node_set >> k & 1]
            held = [i for i in range(2) if gpus >> i & 1]
            for j in range(5):
                assert p.factor(j, node_set, gpus) == rf(j, ks, [held] * len(ks))
                calls.pop()
    sigs = {_signature(case, *pl) for pl in order}
    assert len([c for c in calls if c[1] is not None]) == 3 * len(sigs)


def test_keyed_factors_of_two_jobs_on_one_node_are_their_own():
    # one node, one GPU set, two keys: the single-node cache must not mix the jobs up
    calls = []
    p = Placement(PlacementInputs(factor_by_key=True).resolved(2, 2))
    p.start(_state(2, [0b11, 0b11]), _rf(calls, key=lambda j: j, value=lambda j, n, g: 1.0 + j))
    assert [p.factor(j, 0b01, 0b01) for j in (0, 1, 0, 1, 2)] == [1.0, 2.0, 1.0, 2.0, 3.0]
    # another GPU set of the same signature (homogeneous machine): the cached factor
    assert p.factor(1, 0b10, 0b10) == 2.0
    assert len([c for c in calls if c[1] is not None]) == 3


def test_one_group_is_one_group():
    p = Placement()
    p.start(_state(1, [1]), None)
    group = p.choice_group()
    assert group(0) == group(1) == group(10**6)


# --- make_placement (swftools/replay/placement/__init__.py) -------------------------------------
def test_make_placement_builds_the_named_policy_with_its_inputs():
    from swftools.replay.placement import PLACEMENTS, POLICY_CLASSES, make_placement

    m = PlacementInputs(rack=[0, 1]).resolved(2, 2)
    for name in PLACEMENTS:
        p = make_placement(name, m, [1.0, 3.0], 11)
        assert type(p) is POLICY_CLASSES[name] and p.name == name
        assert p.machine is m and list(p.gains) == [1.0, 3.0] and p.seed == 11
    p = make_placement("best-fit")
    assert type(p) is BestFit and (p.machine, p.gains, p.seed) == (None, None, 0)


def test_make_placement_refuses_an_unknown_name():
    from swftools.replay.placement import make_placement

    with pytest.raises(UsageError) as exc:
        make_placement("worst")
    assert str(exc.value) == ("unknown placement 'worst' (choose from packed, best-fit, random, "
                              "even, priority, priority-wc, variability-first, locality-first, "
                              "lxv, pm-first, pal)")
