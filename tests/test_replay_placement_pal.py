"""``pm-first`` and ``pal`` (PAL, SC'24) against hand-worked decisions from PAL's published rules,
class formation on hand-made scores, and a brute-force oracle for ``pm-first``."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.replay.placement import PLACEMENTS, POLICY_CLASSES, PlacementInputs
from swftools.replay.placement.pal import Pal, PmFirst, pal_gpus, pm_first_gpus
from swftools.replay.placement.pal_classes import (
    cell_order,
    form_classes,
    kmeans_1d,
    outliers,
    silhouette_1d,
    silhouette_k,
)
from swftools.replay.placement.tables import COMPILED_POLICIES, placement_tables

from .strategies import pal_count_cases

ALL = 0b11  # both nodes of a two-node machine


def _state(free: list[int], g: int) -> SimpleNamespace:
    """A GPU state as the placements read it (free GPU bit sets per node, all nodes managed)."""
    exact = [0] * (g + 1)
    for k, mask in enumerate(free):
        exact[mask.bit_count()] |= 1 << k
    return SimpleNamespace(g=g, n_nodes=len(free), exact=exact, gpu_free=list(free),
                           full_gpus=(1 << g) - 1, managed=(1 << len(free)) - 1)


def _placement(cls, scores, free, g, **inputs):
    machine = PlacementInputs(score=scores, **inputs).resolved(len(scores), g)
    p = cls(machine)
    state = _state(free, g)
    p.start(state, None)
    return p, state


# --- class formation ---------------------------------------------------------------------------

THREE_GROUPS = np.array([1.00, 1.01, 1.02, 1.01, 1.20, 1.21, 1.22, 1.21, 1.50, 1.51, 1.52, 1.51])


def test_silhouette_picks_the_three_groups():
    # three tight groups far apart: k = 3 has the highest mean silhouette (k = 2 merges two
    # groups, k = 4 splits a tight one)
    assert silhouette_k(THREE_GROUPS) == 3
    values = form_classes(THREE_GROUPS)
    # class values: centres 1.01, 1.21, 1.51 over their median 1.21
    assert np.allclose(np.unique(values), [1.01 / 1.21, 1.0, 1.51 / 1.21])


def test_silhouette_by_hand():
    # {0, 1} and {10}: a(0) = 1, b(0) = 10 -> 0.9; a(1) = 1, b(1) = 9 -> 8/9; 10 alone -> 0
    s = silhouette_1d(np.array([0.0, 1.0, 10.0]), np.array([0, 0, 1]))
    assert np.isclose(s, (0.9 + 8 / 9 + 0) / 3)


def test_outlier_gets_its_own_class():
    values = np.r_[np.linspace(1.00, 1.02, 15), np.linspace(1.10, 1.12, 15), 3.0]
    out = outliers(values)
    assert out.tolist() == [False] * 30 + [True]  # 3.0 > mean + 3 sd
    classes = form_classes(values)
    assert len(np.unique(classes)) == 3  # silhouette's 2 + one per outlier
    assert np.isclose(classes[-1], 3.0 / np.median([1.01, 1.11, 3.0]))


def test_artifact_k2_switch():
    # the three groups: the silhouette's k = 3, the artifact's loop always k = 2
    assert len(np.unique(form_classes(THREE_GROUPS))) == 3
    assert len(np.unique(form_classes(THREE_GROUPS, artifact_k2=True))) == 2


def test_homogeneous_scores_form_one_class():
    assert np.all(form_classes(np.ones(16)) == 1.0)
    labels, centres = kmeans_1d(np.ones(4), 3)
    assert centres.tolist() == [1.0] and labels.tolist() == [0, 0, 0, 0]


def test_cell_order():
    # values 1.0 and 1.2, penalty 1.7: within 1.0, within 1.2, across 1.7, across 2.04
    assert cell_order(np.array([1.2, 1.0]), 1.7) == [(1.0, True), (1.2, True), (1.0, False),
                                                     (1.2, False)]
    # penalty 1.1: across 1.0 (1.1) comes before within 1.2
    assert cell_order(np.array([1.2, 1.0]), 1.1) == [(1.0, True), (1.0, False), (1.2, True),
                                                     (1.2, False)]


# --- hand-worked PAL decisions -----------------------------------------------------------------

VALUES = [[1.0, 1.0, 1.2, 1.2], [1.0, 1.2, 1.2, 1.2]]  # class values, 2 nodes x 4 GPUs


def test_pal_first_cell_that_fits():
    cells = cell_order(np.array(VALUES), 1.7)
    # all free, 2 GPUs: cell (1.0, within): node 0 has two GPUs of value 1.0 -> GPUs 0, 1
    assert pal_gpus([0b1111, 0b1111], VALUES, 2, ALL, 4, cells) == [(0, 0), (0, 1)]
    # 3 GPUs: no node has three of 1.0; cell (1.2, within): both nodes have 4 eligible, the
    # lower node wins the tie, its three best: 0, 1 (1.0) and 2 (1.2)
    assert pal_gpus([0b1111, 0b1111], VALUES, 3, ALL, 4, cells) == [(0, 0), (0, 1), (0, 2)]


def test_pal_node_with_most_eligible_gpus():
    values = [[1.0, 1.0, 1.2, 1.2], [1.0, 1.0, 1.0, 1.2]]
    cells = cell_order(np.array(values), 1.7)
    # node 0 has 2 free GPUs of 1.0 (a tight fit), node 1 has 3: PAL takes node 1
    assert pal_gpus([0b0011, 0b0111], values, 2, ALL, 4, cells) == [(1, 0), (1, 1)]


def test_locality_penalty_changes_the_decision():
    # node 0 free: GPU 0 (1.0), GPU 2 (1.2); node 1 free: GPU 0 (1.0), GPU 3 (1.2); 2 GPUs.
    free = [0b0101, 0b1001]
    # penalty 1.7: (1.0, within) fails, (1.2, within) = 1.2 < 1.7: node 0's GPUs 0 and 2
    assert pal_gpus(free, VALUES, 2, ALL, 4, cell_order(np.array(VALUES), 1.7)) == [
        (0, 0), (0, 2)]
    # penalty 1.1: (1.0, across) = 1.1 < 1.2: the two GPUs of value 1.0 on both nodes
    assert pal_gpus(free, VALUES, 2, ALL, 4, cell_order(np.array(VALUES), 1.1)) == [
        (0, 0), (1, 0)]
    # a recorded one-node shape never spans: the penalty cannot change it
    assert pal_gpus(free, VALUES, 2, ALL, 4, cell_order(np.array(VALUES), 1.1),
                    spanning=False) == [(0, 0), (0, 2)]


def test_pal_one_gpu_job_is_pm_first_with_best_match():
    values = [[1.0, 1.0, 1.2, 1.2], [1.2, 1.2, 1.0, 1.2]]
    cells = cell_order(np.array(values), 1.7)
    # free value-1.0 GPUs: node 0 GPUs 0, 1 (two of them), node 1 GPU 2 (alone): best match
    # |2 - 1| = 1 vs |1 - 1| = 0 -> node 1's GPU 2
    assert pal_gpus([0b0011, 0b0100], values, 1, ALL, 4, cells) == [(1, 2)]


def test_pal_wider_than_a_node_is_pm_first_over_partial_nodes():
    cells = cell_order(np.array(VALUES), 1.7)
    # 5 GPUs on 4-GPU nodes: the three 1.0 GPUs, then 1.2 ones by best match, node, GPU
    # (free 1.2 GPUs: node 0 has 2 -> |2-5| = 3, node 1 has 3 -> |3-5| = 2: node 1 first)
    assert pal_gpus([0b1111, 0b1111], VALUES, 5, ALL, 4, cells) == [
        (0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]
    assert pal_gpus([0b1111, 0b1111], VALUES, 5, ALL, 4, cells, spanning=False) is None


def test_pal_placement_on_the_engine_state():
    # scores -> variability 1/score; two classes: {1.0} and {1/0.8 = 1.25}
    scores = [[1.0, 1.0, 0.8, 0.8], [1.0, 0.8, 0.8, 0.8]]
    p, state = _placement(Pal, scores, [0b1111, 0b1111], 4)
    assert p.choose(state, 0, 1, 2) == (0b01, 0b0011)
    # whole nodes for a two-node job
    assert p.choose(state, 0, 2, 4) == (0b11, 0b1111)
    # a one-node job on nodes 0 (free 2, 3: slow) and 1 (free 0: fast, 3: slow):
    p, state = _placement(Pal, scores, [0b1100, 0b1001], 4)
    assert p.choose(state, 0, 1, 1) == (0b10, 0b0001)  # PM-First: the fast GPU


def test_pm_first_by_application_class():
    # class 0 finds node 0 fast, class 1 node 1
    class_score = [[[1.1, 1.1], [0.9, 0.9]], [[0.9, 0.9], [1.1, 1.1]]]
    machine = PlacementInputs(class_score=class_score, job_class=[0, 1]).resolved(2, 2)
    p = PmFirst(machine)
    state = _state([0b11, 0b11], 2)
    p.start(state, None)
    assert p.choose(state, 0, 1, 2) == (0b01, 0b11)
    assert p.choose(state, 1, 1, 2) == (0b10, 0b11)


def test_pal_cross_node_cell_best_match_with_a_penalty_below_one():
    # penalty 0.5: across 1.0 (0.5) is tried first; free GPUs of value 1.0: node 0 has two
    # (best match |2 - 2| = 0), node 1 one (|1 - 2| = 1): node 0's two
    cells = cell_order(np.array(VALUES), 0.5)
    assert cells[0] == (1.0, False)
    assert pal_gpus([0b1111, 0b1111], VALUES, 2, ALL, 4, cells) == [(0, 0), (0, 1)]


def test_pal_cross_node_cell_takes_free_gpus_only():
    # node 0 free: GPU 1 (1.0), GPU 2 (1.2); node 1 free: GPU 0 (1.0), GPU 3 (1.2); 2 GPUs,
    # penalty 1.1: (1.0, within) fails, (1.0, across) = 1.1 < 1.2: the two free GPUs of 1.0
    # (node 0's GPU 0, also of value 1.0, is busy)
    free = [0b0110, 0b1001]
    assert pal_gpus(free, VALUES, 2, ALL, 4, cell_order(np.array(VALUES), 1.1)) == [
        (0, 1), (1, 0)]


def test_pal_cross_node_cell_ranks_by_best_match():
    # 3 GPUs, penalty 1.1: no node has three of value 1.0, (1.0, across) = 1.1 < 1.2 holds the
    # five of value 1.0: node 0 has one (best match |1 - 3| = 2), nodes 1 and 2 two each (1):
    # nodes 1 and 2 before node 0, then node, GPU
    values = [[1.0, 1.2, 1.2, 1.2], [1.0, 1.0, 1.2, 1.2], [1.0, 1.0, 1.2, 1.2]]
    cells = cell_order(np.array(values), 1.1)
    assert pal_gpus([0b1111] * 3, values, 3, 0b111, 4, cells) == [(1, 0), (1, 1), (2, 0)]


@settings(max_examples=200)
@given(pal_count_cases())
def test_pal_gpus_takes_count_free_gpus_of_the_nodes(case):
    """The last cells admit every free GPU: ``count`` free GPUs of the offered nodes whenever
    that many are free (spanning), or one node that has them (a one-node shape, which never
    spans); else None."""
    n, g, free, nodes, count = case["n"], case["g"], case["free"], case["nodes"], case["count"]
    cells = cell_order(np.array(case["value"]), case["penalty"])
    got = pal_gpus(free, case["value"], count, nodes, g, cells, spanning=case["spanning"])
    offered = [(k, i) for k in range(n) if nodes >> k & 1 for i in range(g) if free[k] >> i & 1]
    if case["spanning"] or count == 1:
        fits = len(offered) >= count
    else:
        fits = count <= g and any(sum(1 for kk, _ in offered if kk == k) >= count
                                  for k in range(n))
    if not fits:
        assert got is None
        return
    assert got == sorted(set(got)) and len(got) == count and set(got) <= set(offered)
    if not case["spanning"]:
        assert len({k for k, _ in got}) == 1


def test_pal_recorded_one_node_shape_never_spans():
    # variability 1.0 and 1.2 on the layout of VALUES: class values 1.0 / 1.1 and 1.2 / 1.1.
    # Penalty 1.1: the cross-node cell of the first class (1.0) comes before the within cell
    # of the second (1.09); a one-node job skips it: node 0 (lower node on the tie), GPUs 0, 2
    scores = [[1.0 / v for v in row] for row in VALUES]
    p, state = _placement(Pal, scores, [0b0101, 0b1001], 4, pal_penalty=1.1)
    assert p.choose(state, 0, 1, 2) == (0b01, 0b0101)


def test_pal_choose_for_a_job_that_does_not_fit():
    p, state = _placement(Pal, [[1.0, 0.8], [1.0, 0.8]], [0b00, 0b00], 2)
    with pytest.raises(AssertionError, match=r"^choose\(\) called for a job that does not fit$"):
        p.choose(state, 0, 1, 1)


def test_pal_artifact_k2():
    # variability 1.0, 1.2, 1.5 on nodes 0, 1, 2 (all GPUs alike): the silhouette keeps three
    # classes, k = 2 (k-means from the values 1.0 and 1.5) puts 1.0 and 1.2 in one class. A
    # 2-GPU job with node 0's GPUs 0, 1 free and nodes 1, 2 whole: the first within cell that
    # fits is the fastest class's; with k = 2 node 1 has more eligible GPUs than node 0.
    scores = [[1.0] * 4, [1 / 1.2] * 4, [1 / 1.5] * 4]
    free = [0b0011, 0b1111, 0b1111]
    p, state = _placement(Pal, scores, free, 4)
    assert p.choose(state, 0, 1, 2) == (0b001, 0b0011)
    p, state = _placement(Pal, scores, free, 4, pal_k2=True)
    assert p.choose(state, 0, 1, 2) == (0b010, 0b0011)


def test_pal_without_placement_inputs():
    # the homogeneous machine (one class): a 1-GPU job by best match, |free GPUs - 1| smaller
    # first: node 1 (one free GPU) before node 0 (two)
    p = Pal()
    state = _state([0b11, 0b10], 2)
    p.start(state, None)
    assert p.choose(state, 0, 1, 1) == (0b10, 0b10)


def test_pal_with_a_factor_callback():
    """An unkeyed callback: no choice groups, and the placement's factor is the callback's."""
    def factor(j, ks, gpus):
        return 1.0 + j + len(ks) / 10 + sum(gpus[0]) / 100

    p, state = _placement(Pal, [[1.0, 0.8], [1.0, 0.8]], [0b11, 0b11], 2)
    p.start(state, factor)
    assert p.choice_group() is None
    assert p.factor(2, 0b01, 0b10) == factor(2, [0], [[1]])


# --- pm-first against a brute-force oracle -----------------------------------------------------

@st.composite
def gpu_states(draw):
    n = draw(st.integers(1, 4))
    g = draw(st.integers(1, 4))
    scores = [[draw(st.sampled_from([0.8, 0.9, 1.0, 1.1])) for _ in range(g)]
              for _ in range(n)]
    free = [draw(st.integers(0, (1 << g) - 1)) for _ in range(n)]
    return n, g, scores, free


def _oracle_one_node(scores, free, g, p):
    """Enumerate every p-GPU set on one node; the documented rule: the set whose worst GPU
    ranks first (GPUs ranked by (1/score, node, GPU)), then the best other GPUs."""
    best = None
    for k, mask in enumerate(free):
        ids = [i for i in range(g) if mask >> i & 1]
        for s in itertools.combinations(ids, p):
            ranks = sorted(((1.0 / scores[k][i], k, i) for i in s), reverse=True)
            if best is None or ranks < best[0]:
                best = (ranks, 1 << k, sum(1 << i for i in s))
    return best


def _oracle_whole_nodes(scores, free, g, nodes):
    whole = [k for k, mask in enumerate(free) if mask == (1 << g) - 1]
    best = None
    for s in itertools.combinations(whole, nodes):
        key = sorted(((max(1.0 / v for v in scores[k]), k) for k in s), reverse=True)
        if best is None or key < best[0]:
            best = (key, sum(1 << k for k in s))
    return best


@settings(max_examples=200, deadline=None)
@given(gpu_states(), st.integers(1, 4), st.integers(2, 4))
def test_pm_first_matches_the_oracle(state_args, p, nodes):
    _, g, scores, free = state_args
    placement, state = _placement(PmFirst, scores, free, g)
    if p <= g:
        best = _oracle_one_node(scores, free, g, p)
        if best is not None:
            assert placement.choose(state, 0, 1, p) == best[1:]
    best = _oracle_whole_nodes(scores, free, g, nodes)
    if best is not None:
        assert placement.choose(state, 0, nodes, g) == (best[1], (1 << g) - 1)


@settings(max_examples=100, deadline=None)
@given(gpu_states(), st.integers(1, 8))
def test_pm_first_gpus_takes_the_best_ranked(state_args, count):
    n, g, scores, free = state_args
    values = [[1.0 / v for v in row] for row in scores]
    got = pm_first_gpus(free, values, count, (1 << n) - 1, g)
    cells = [(values[k][i], k, i) for k in range(n) for i in range(g) if free[k] >> i & 1]
    if len(cells) < count:
        assert got is None
        return
    # oracle: every free-GPU set of the size, the one with the smallest sorted value tuple
    best = min(itertools.combinations(sorted(cells), count),
               key=lambda s: sorted(s, reverse=True))
    assert got == sorted((k, i) for _, k, i in best)


def test_pm_first_gpus_ranks_by_value_node_gpu_only():
    # ``pm-first`` on a count has no best-match tie-break: equal values go by node, then GPU
    # (best match would take node 1's two GPUs: |2 - 2| = 0 against node 0's |1 - 2| = 1)
    values = [[1.0, 1.0], [1.0, 1.0]]
    assert pm_first_gpus([0b10, 0b11], values, 2, 0b11, 2) == [(0, 1), (1, 0)]
    assert pm_first_gpus([0b10, 0b11], values, 2, 0b11, 2, locality=True) == [(1, 0), (1, 1)]


# --- wiring ------------------------------------------------------------------------------------

def test_per_class_scores_without_job_classes_are_one_choice_group():
    """``class_score`` without ``job_class``: every job ranks by class 0 and is in one choice
    group (it was the empty class list, indexed per waiting job: IndexError)."""
    for cls in (PmFirst, Pal):
        p, _ = _placement(cls, [[1.0, 2.0]], [0b11], 2,
                          class_score=[[[1.0, 2.0]], [[2.0, 1.0]]])
        group = p.choice_group()
        assert (p.app_class(5), group(0), group(5)) == (0, 0, 0)


def test_choice_groups_follow_the_application_class():
    """Jobs of one choice group get the same choice: with two application classes, the job's
    class (jobs 0 and 1 choose different nodes: ``test_pm_first_by_application_class``); with
    per-job classes but one score grid every job ranks by it: one group, one choice."""
    class_score = [[[1.1, 1.1], [0.9, 0.9]], [[0.9, 0.9], [1.1, 1.1]]]
    for cls in (PmFirst, Pal):
        p, _ = _placement(cls, [[1.0, 1.0], [1.0, 1.0]], [0b11, 0b11], 2,
                          class_score=class_score, job_class=[0, 1, 0])
        group = p.choice_group()
        assert group(0) == group(2) != group(1)
        p, state = _placement(cls, [[1.0, 0.8], [1.0, 1.0]], [0b11, 0b11], 2,
                              job_class=[0, 1, 0])
        group = p.choice_group()
        assert group(0) == group(1) == group(2)
        assert p.choose(state, 1, 1, 1) == p.choose(state, 0, 1, 1) == (0b01, 0b01)


def test_registered_and_compiled():
    for name in ("pm-first", "pal"):
        assert name in PLACEMENTS and name in POLICY_CLASSES
        assert name in COMPILED_POLICIES  # placement/_pal.pyx (test_replay_engine_general_jit)
        machine = PlacementInputs().resolved(2, 2)
        assert placement_tables(name, machine, 2, 2, None, 1) is not None
    from swftools.replay.placement._choose import POLICY_IDS

    assert set(COMPILED_POLICIES) == set(POLICY_IDS)
