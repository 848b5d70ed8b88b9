"""``engine_general``: when the compiled general path applies (else None: ``run_gpu`` runs its
Python general path), the factor bounds and queue bits it hands the twin, checked against rules
worked by hand or recomputed by brute force, and small schedules worked by hand."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
import sys
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import UsageError
from swftools.replay import engine_general
from swftools.replay.engine_general import _bound_arrays, _encode, _queue_bits, run_general_compiled
from swftools.replay.engine_gpu import never_fits_again, run_gpu
from swftools.replay.factors import FactorKernel
from swftools.replay.model import GpuNodes
from swftools.replay.placement import Placement, PlacementInputs, make_placement
from swftools.replay.workload import prepare

from .strategies import examples, queue_bit_cases
from .test_replay import gpu_site, gpu_table


def workload(rows, nodes=2, gpus=4, timeline=None, allocation="first-fit"):
    """(work, model) of ``rows`` (job id, submit, run, nodes, GPUs per node, request) on a
    one-queue site of ``nodes`` nodes of ``gpus`` GPUs."""
    model = GpuNodes(gpu_site(nodes=nodes, gpus=gpus, timeline=timeline), allocation)
    return prepare(gpu_table(rows), model), model


def compiled(rows, placement=None, policy="easy", factor=None, kernel=None, bound=None, **site):
    work, model = workload(rows, **site)
    return run_general_compiled(work, model, policy, placement, factor, kernel, bound)


def python(rows, placement=None, policy="easy", factor=None, kernel=None, bound=None, **site):
    work, model = workload(rows, **site)
    return run_gpu(work, model, policy, placement, factor, bound, compiled=False)


# --- _bound_arrays: each job's factor bound and the queue's round(estimate x bound) -----------
ESTIMATES = [(1, 0, 1, 1, 1, 1), (2, 0, 3, 1, 1, 3), (3, 0, 5, 1, 1, 5), (4, 0, 7, 1, 1, 7),
             (5, 0, 4, 1, 1, 4)]


def test_bound_defaults_to_one_without_a_factor_and_zero_with_one():
    work, _ = workload(ESTIMATES)
    lower, tree = _bound_arrays(work, None, False)
    assert lower.tolist() == [1.0] * 5 and tree.tolist() == [1, 3, 5, 7, 4]
    lower, tree = _bound_arrays(work, None, True)
    assert lower.tolist() == [0.0] * 5 and tree.tolist() == [0] * 5


def test_bound_products_round_half_to_even_as_python_round():
    """A scalar 0.5 and a per-job bound: ``round(e x bound)`` per job, as the Python path."""
    work, _ = workload(ESTIMATES)
    lower, tree = _bound_arrays(work, 0.5, True)
    assert lower.tolist() == [0.5] * 5
    assert tree.tolist() == [0, 2, 2, 4, 2]  # 0.5, 1.5, 2.5, 3.5, 2.0 half to even
    per_job = [0.5, 1.5, 2.0, 0.25, 1.0]
    lower, tree = _bound_arrays(work, per_job, True)
    assert lower.tolist() == per_job
    assert tree.tolist() == [round(e * f) for e, f in zip([1, 3, 5, 7, 4], per_job)] == \
        [0, 4, 10, 2, 4]


def test_bound_fractions_are_taken_as_floats():
    """A per-job bound of ``Fraction``s (numbers the Python path takes with ``float``): the same
    bounds as floats, and the compiled replay is Python's."""
    work, model = workload(ESTIMATES)
    lower, tree = _bound_arrays(work, [Fraction(1, 2)] * 5, True)
    assert lower.dtype == np.float64 and lower.tolist() == [0.5] * 5
    assert tree.tolist() == [0, 2, 2, 4, 2]
    bound = [Fraction(1, 2), Fraction(3, 4), Fraction(1), Fraction(1, 2), Fraction(1)]
    factor = lambda j, nodes, gpus: 1.0  # noqa: E731
    kernel = FactorKernel(lambda *a: 1.0, np.zeros(1), np.zeros(5, dtype=np.int64))
    placement = make_placement("packed", dataclasses.replace(
        PlacementInputs().resolved(2, 4), factor_by_key=True))
    run = run_gpu(work, model, "easy", placement, factor, bound, compiled=True,
                  factor_kernel=kernel)
    assert run.node_sets is None  # the compiled twin ran
    assert run.start.tolist() == [0] * 5


def test_negative_zero_bound_is_zero():
    """-0.0 and 0.0 are one bound (one key of the queue's combinations): handed on as +0.0."""
    work, _ = workload(ESTIMATES)
    lower, tree = _bound_arrays(work, -0.0, True)
    assert not np.signbit(lower).any() and tree.tolist() == [0] * 5
    lower, _ = _bound_arrays(work, [-0.0, 0.0, -0.0, 1.0, -0.0], True)
    assert not np.signbit(lower).any()


def test_bounds_not_one_per_job_or_not_finite_decline():
    work, _ = workload(ESTIMATES)
    assert _bound_arrays(work, [1.0] * 4, True) is None
    assert _bound_arrays(work, [[1.0]] * 5, True) is None
    assert _bound_arrays(work, float("inf"), True) is None
    assert _bound_arrays(work, float("nan"), True) is None
    assert _bound_arrays(work, [1.0, 1.0, float("nan"), 1.0, 1.0], True) is None
    assert _bound_arrays(work, [1.0] * 5, True) is not None


def test_bound_products_must_be_exact_below_2_to_the_53():
    """``estimate x bound`` must stay below 2^53 (the float product equals Python's): 2^53 - 1
    is taken, 2^53 declined."""
    top = (1 << 53) - 1
    work, _ = workload([(1, 0, 10, 1, 1, top), (2, 0, 10, 1, 1, 5)])
    lower, tree = _bound_arrays(work, 1.0, True)
    assert tree.tolist() == [top, 5]
    work, _ = workload([(1, 0, 10, 1, 1, 1 << 52), (2, 0, 10, 1, 1, 5)])
    assert _bound_arrays(work, 1.0, True)[1].tolist() == [1 << 52, 5]
    assert _bound_arrays(work, 2.0, True) is None  # 2^53
    assert _bound_arrays(work, 1.9, True) is not None


# --- _encode: index among the distinct values in order of first occurrence --------------------
@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(-3, 3), max_size=30))
def test_encode_numbers_values_in_order_of_first_occurrence(values):
    seen: dict[int, int] = {}
    expected = [seen.setdefault(v, len(seen)) for v in values]
    index, count = _encode(np.asarray(values, dtype=np.int64))
    assert index.tolist() == expected and count == len(seen)


def test_encode_by_hand():
    index, count = _encode(np.array([5, 2, 5, 9, 2, 2]))
    assert index.tolist() == [0, 1, 0, 2, 1, 1] and count == 3
    index, count = _encode(np.array([1.5, -0.0, 0.0, 1.5]))
    assert index.tolist() == [0, 1, 1, 0] and count == 2


# --- _queue_bits: the docstring's rule, recomputed by brute force ------------------------------
def queue_bits_by_hand(size_index, n_sizes, side, key, lower, grouped, max_bits):
    """(bit index per job, per used bit index (size index, combination?, bound), used): the
    combinations (size, side, key, bound) of more than one job, the most frequent first (ties in
    order of first occurrence), get the bits after the sizes', as many as ``max_bits`` holds."""
    count: dict[tuple, int] = {}
    for c in zip(size_index, side, key, lower):
        count[c] = count.get(c, 0) + 1  # (a dict keeps the order of first occurrence)
    room = max_bits - n_sizes if grouped else 0
    repeated = sorted((c for c in count if count[c] > 1), key=lambda c: -count[c])
    chosen = repeated[:max(room, 0)]
    slot = {c: n_sizes + i for i, c in enumerate(chosen)}
    index = [slot.get(c, c[0]) for c in zip(size_index, side, key, lower)]
    per_bit = [(s, False, 0.0) for s in range(n_sizes)] + [(c[0], True, c[3]) for c in chosen]
    return index, per_bit


def assert_queue_bits(size_index, n_sizes, side, key, lower, grouped, max_bits):
    """``_queue_bits`` on these jobs is ``queue_bits_by_hand``'s; returns the bit per job."""
    with mock.patch.object(engine_general, "COMPILED_MAX_BITS", max_bits):
        bit, bit_shape, bit_combo, bit_lower, fit_masks = _queue_bits(
            np.asarray(size_index, dtype=np.int64), n_sizes, np.asarray(side),
            np.asarray(key, dtype=np.int64), np.asarray(lower, dtype=np.float64),
            grouped=grouped)
    index, per_bit = queue_bits_by_hand(size_index, n_sizes, side, key, lower, grouped, max_bits)
    used = len(per_bit)
    assert bit.dtype == np.int64 and bit.tolist() == [1 << i for i in index]
    assert len(bit_shape) == len(bit_lower) == 64
    assert [(int(bit_shape[b]), float(bit_lower[b])) for b in range(used)] == \
        [(s, f) for s, _, f in per_bit]
    # the twin reads the combination flags as 64 bytes
    assert bit_combo.view(np.uint8).tolist() == [int(c) for _, c, _ in per_bit] + [0] * (64 - used)
    assert not bit_lower[used:].any()
    # fit_masks[i]: the bits (sizes' and combinations') of the i smallest sizes
    assert fit_masks.tolist() == [sum(1 << b for b in range(used) if per_bit[b][0] < i)
                                  for i in range(n_sizes + 1)]
    return bit.tolist()


@settings(max_examples=examples(60), deadline=None)
@given(queue_bit_cases())
def test_queue_bits_follow_the_docstring(case):
    assert_queue_bits(*case)


@pytest.mark.parametrize("jobs, expected", [
    # (size 2, side 0) and (size 0, side 1), two jobs each: two combinations (bits 3, 4)
    ([(2, 0, 0, 1.0), (2, 0, 0, 1.0), (0, 1, 0, 1.0), (0, 1, 0, 1.0), (1, 0, 0, 1.0)],
     [8, 8, 16, 16, 2]),
    # (size 0, key B) and (size 2, key A), two jobs each
    ([(0, 0, 5, 1.0), (0, 0, 7, 1.0), (0, 0, 7, 1.0), (1, 0, 5, 1.0), (2, 0, 5, 1.0),
      (2, 0, 5, 1.0)], [1, 8, 8, 2, 16, 16]),
    # (size 0, bound 0.5) and (size 2, bound 1.0), two jobs each
    ([(0, 0, 0, 1.0), (0, 0, 0, 0.5), (0, 0, 0, 0.5), (1, 0, 0, 1.0), (2, 0, 0, 1.0),
      (2, 0, 0, 1.0)], [1, 8, 8, 2, 16, 16]),
])
def test_each_part_of_a_combination_tells_it_apart(jobs, expected):
    """Three sizes; two combinations that differ in one part only where a mixed code could
    confuse them: each its own bit, after the three sizes'."""
    size, side, key, lower = (list(c) for c in zip(*jobs))
    assert assert_queue_bits(size, 3, side, key, lower, True, 62) == expected


def test_no_combination_bits_past_the_budget():
    """A budget (``COMPILED_MAX_BITS``) of 1 or 2 with two sizes: the sizes' bits only."""
    jobs = [(0, 0, 0, 1.0), (0, 0, 0, 1.0), (1, 0, 0, 1.0), (1, 0, 0, 1.0), (0, 1, 0, 1.0),
            (0, 1, 0, 1.0)]
    size, side, key, lower = (list(c) for c in zip(*jobs))
    for budget in (1, 2):
        assert assert_queue_bits(size, 2, side, key, lower, True, budget) == [1, 1, 2, 2, 1, 1]
    assert assert_queue_bits(size, 2, side, key, lower, True, 3) == [4, 4, 2, 2, 1, 1]


def test_queue_bits_by_hand():
    """Sizes 0 and 1; jobs (size, side, key, bound): (0,0,0,1) x3, (1,0,0,1) x2, (0,1,0,1) x2,
    (1,0,1,1) x1, (0,0,0,0.5) x2. Repeated combinations: A (0,0,0,1) 3 jobs, then B, C, E (2 jobs
    each, in order of first occurrence); with room for two (budget 4): A bit 2, B bit 3."""
    jobs = [(0, 0, 0, 1.0), (1, 0, 0, 1.0), (0, 1, 0, 1.0), (0, 0, 0, 1.0), (1, 0, 1, 1.0),
            (0, 0, 0, 0.5), (1, 0, 0, 1.0), (0, 1, 0, 1.0), (0, 0, 0, 1.0), (0, 0, 0, 0.5)]
    size_index, side, key, lower = (np.array(c) for c in zip(*jobs))
    with mock.patch.object(engine_general, "COMPILED_MAX_BITS", 4):
        bit, bit_shape, bit_combo, bit_lower, fit_masks = _queue_bits(
            size_index.astype(np.int64), 2, side, key.astype(np.int64), lower.astype(float),
            grouped=True)
    assert bit.tolist() == [4, 8, 1, 4, 2, 1, 8, 1, 4, 1]
    assert bit_shape[:4].tolist() == [0, 1, 0, 1]
    assert bit_combo[:4].tolist() == [False, False, True, True]
    assert bit_lower[:4].tolist() == [0.0, 0.0, 1.0, 1.0]
    assert fit_masks.tolist() == [0, 0b0101, 0b1111]
    bit, *_ , fit_masks = _queue_bits(size_index.astype(np.int64), 2, side,
                                      key.astype(np.int64), lower.astype(float), grouped=False)
    assert bit.tolist() == (1 << size_index).tolist() and fit_masks.tolist() == [0, 1, 3]


def test_queue_bits_of_no_job():
    bit, bit_shape, bit_combo, bit_lower, fit_masks = _queue_bits(
        np.zeros(0, dtype=np.int64), 0, np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0))
    assert len(bit) == 0 and fit_masks.tolist() == [0] and not bit_combo.any()


# --- run_general_compiled: what it takes, and small schedules by hand ---------------------------
BACKFILL = [(1, 0, 100, 1, 1, 100), (2, 0, 100, 1, 2, 100), (3, 0, 50, 1, 1, 50)]


@pytest.mark.parametrize("policy, starts", [("easy", [0, 100, 0]), ("fcfs", [0, 100, 200])])
def test_easy_backfills_and_fcfs_does_not(policy, starts):
    """One node of 2 GPUs: job 1 holds a GPU until 100, job 2 needs both (reserved at 100), job 3
    (50 s) fits before that: EASY starts it at 0, FCFS after job 2 (200)."""
    run = compiled(BACKFILL, Placement(), policy, nodes=1, gpus=2)
    assert run is not None and run.start.tolist() == starts


def test_the_default_placement_is_packed_or_best_fit_as_the_model():
    """Two nodes of 4 GPUs: job 1 (2 GPUs) on node 0, job 2 (3 GPUs) on node 1; job 3 (1 GPU):
    packed (first fit) takes node 0, best-fit node 1 (one GPU free: the tightest)."""
    rows = [(1, 0, 100, 1, 2, 100), (2, 0, 100, 1, 3, 100), (3, 0, 100, 1, 1, 100)]
    packed = compiled(rows)
    assert packed is not None and packed.node_masks() == [1, 2, 1]
    best = compiled(rows, allocation="best-fit")
    assert best is not None and best.node_masks() == [1, 2, 2]
    assert best.gpu_masks() == [0b11, 0b111, 0b1000]


def test_a_placement_without_a_machine_runs_on_a_plain_one():
    run = compiled(BACKFILL, Placement(), nodes=1, gpus=2)
    assert run is not None and run.node_masks() == [1, 1, 1]
    assert run.gpu_masks() == [0b01, 0b11, 0b10]


def test_the_placements_machine_is_the_one_used():
    """``variability-first`` on a machine whose node 1 has the better class (0): a 1-GPU job
    takes node 1 (the default machine, one class, would give node 0) -- as in Python."""
    machine = PlacementInputs(gpu_class=[[1], [0]]).resolved(2, 1)
    rows = [(1, 0, 10, 1, 1, 10)]
    run = compiled(rows, make_placement("variability-first", machine), nodes=2, gpus=1)
    py = python(rows, make_placement("variability-first", machine), nodes=2, gpus=1)
    assert run is not None and run.node_masks() == py.node_masks() == [2]


def test_the_capacity_at_the_first_submit_is_the_start():
    """One node until 50, two from then: a 2-node job submitted at 0 starts at 50 (the capacity
    at the first submit, not at the second job's, 100)."""
    rows = [(1, 0, 10, 2, 1, 10), (2, 100, 10, 1, 1, 10)]
    run = compiled(rows, nodes=2, gpus=1, timeline=[(0, 1), (50, 2)])
    assert run is not None and run.start.tolist() == [50, 100]


def test_a_job_that_never_fits_again_is_dropped_with_no_nodes():
    """Two 1-GPU nodes until 10, one from then: job 2 (two nodes, submitted at 5) waits for
    job 1's node; at 10 it never fits again: dropped with its reason and no nodes; job 3 runs
    after job 1, on node 0 -- as in Python."""
    rows = [(1, 0, 30, 1, 1, 30), (2, 5, 10, 2, 1, 10), (3, 25, 10, 1, 1, 10)]
    site = dict(nodes=2, gpus=1, timeline=[(0, 2), (10, 1)])
    run = compiled(rows, **site)
    assert run is not None
    reason = "never fits: the site manages at most 1 nodes from 10 on"
    assert run.dropped == [(1, reason)] and never_fits_again(1, 10) == reason
    assert run.node_masks() == [1, 0, 1]
    assert run.node_ids().to_pylist() == ["0", "", "0"]
    assert run.start.tolist()[::2] == [0, 30]
    py = python(rows, Placement(), **site)
    assert py.dropped == run.dropped and py.node_ids().equals(run.node_ids())


def test_what_has_no_twin_declines():
    class Mine(Placement):
        pass

    assert compiled(BACKFILL, Mine()) is None
    # 63 distinct sizes: more than the queue's bits
    rows = [(k, k, 1, 1, 1 + k % 63, 1) for k in range(1, 64)]
    assert compiled(rows, nodes=1, gpus=64) is None
    rows62 = [(k, k, 1, 1, 1 + k % 62, 1) for k in range(1, 63)]
    assert compiled(rows62, nodes=1, gpus=62) is not None
    assert compiled(BACKFILL, bound=float("inf")) is None
    # priority's gains not one per job; pm-first on NaN scores; priority-wc on a NaN gain
    assert compiled(BACKFILL, make_placement("priority", None, [1.0, 2.0])) is None
    assert compiled(BACKFILL, make_placement("priority", None, [1.0, 2.0, 3.0])) is not None
    nan = PlacementInputs().resolved(2, 2)  # resolved() refuses a NaN score: a Machine's own
    nan.score = [[1.0, float("nan")]] * 2
    assert compiled(BACKFILL, make_placement("pm-first", nan), nodes=2, gpus=2) is None
    ok = PlacementInputs(score=[[1.0, 2.0]] * 2).resolved(2, 2)
    assert compiled(BACKFILL, make_placement("pm-first", ok), nodes=2, gpus=2) is not None
    assert compiled(BACKFILL, make_placement("pal", ok), nodes=2, gpus=2) is not None
    assert compiled(BACKFILL, make_placement("priority-wc", None, [1.0, float("nan"), 2.0]),
                    nodes=2, gpus=2) is None
    assert compiled(BACKFILL, make_placement("priority-wc", None, [1.0, 3.0, 2.0]),
                    nodes=2, gpus=2) is not None


def test_no_job_declines():
    work, model = workload(BACKFILL)
    empty = dataclasses.replace(work, **{f.name: getattr(work, f.name)[:0]
                                         for f in dataclasses.fields(work)
                                         if isinstance(getattr(work, f.name), np.ndarray)})
    assert len(empty) == 0
    assert run_general_compiled(empty, model, "easy", Placement(), None, None, None) is None


def test_without_the_extension_it_declines():
    from swftools import extensions

    with mock.patch.object(extensions, "load", return_value=None) as load:
        assert compiled(BACKFILL) is None
    assert load.call_args.args[0] == "swftools.replay._engine_general"


def keyed(n, grids=None, scale=1.0, scales=None):
    """A keyed factor kernel: the key's scale / the lowest score (row k's key: k % 2)."""
    def function(key, models, s_min, nodes, racks, per_node, params):  # pragma: no cover
        return params[key] / s_min

    params = np.array(scales if scales is not None else [scale, scale])
    return FactorKernel(function, params, np.arange(n, dtype=np.int64) % 2, grids)


def test_a_factor_needs_its_kernel_with_a_key_per_job_and_keys():
    rows = [(1, 0, 100, 1, 1, 100), (2, 0, 100, 1, 1, 100)]
    factor = lambda j, nodes, gpus: 2.0  # noqa: E731
    machine = dataclasses.replace(PlacementInputs().resolved(1, 2), factor_by_key=True)
    plain = PlacementInputs().resolved(1, 2)
    site = dict(nodes=1, gpus=2)
    kernel = keyed(2, scale=2.0)
    run = compiled(rows, Placement(machine), factor=factor, kernel=kernel, **site)
    assert run is not None and run.runtime.tolist() == [200, 200]
    assert run.estimate.tolist() == [200, 200]
    assert compiled(rows, Placement(machine), factor=factor, **site) is None
    assert compiled(rows, Placement(machine), factor=factor, kernel=keyed(3), **site) is None
    assert compiled(rows, Placement(plain), factor=factor, kernel=kernel, **site) is None
    # per-key score grids stand for the keyed flag: key 0's grid all 1, key 1's all 0.5
    grids = np.stack([np.ones((1, 2)), np.full((1, 2), 0.5)])
    run = compiled(rows, Placement(plain), factor=factor, kernel=keyed(2, grids, 2.0), **site)
    assert run is not None and run.runtime.tolist() == [200, 400]
    for bad in (np.ones((1, 2)), np.ones((2, 2, 2)), np.ones((2, 1, 1)), np.ones((1, 1, 2))):
        assert compiled(rows, Placement(plain), factor=factor,
                        kernel=keyed(2, bad, 2.0), **site) is None, bad.shape
    negative = dataclasses.replace(keyed(2, grids, 2.0), keys=np.array([0, -1]))
    assert compiled(rows, Placement(plain), factor=factor, kernel=negative, **site) is None
    # no factor: no kernel needed, and a kernel given is not used
    run = compiled(rows, Placement(plain), kernel=kernel, **site)
    assert run is not None and run.runtime.tolist() == [100, 100]


def test_a_bad_factor_names_the_job_and_the_factor():
    rows = [(7, 0, 100, 1, 1, 100), (9, 0, 100, 1, 1, 100)]
    machine = dataclasses.replace(PlacementInputs().resolved(1, 2), factor_by_key=True)
    kernel = keyed(2, scales=[1.0, 0.0])  # job 9's key (1): a factor of 0
    with pytest.raises(UsageError, match=r"run-time factor of job 9 must be positive and "
                                         r"finite, not 0\.0"):
        compiled(rows, Placement(machine), factor=lambda j, n, g: 1.0, kernel=kernel,
                 nodes=1, gpus=2)


def test_random_follows_its_seed_as_in_python():
    """``random`` draws from its seed's Mersenne Twister in both twins: the same nodes."""
    rows = [(k, k, 1000, 1, 1, 1000) for k in range(1, 9)]
    for seed in (0, 1, 5):
        run = compiled(rows, make_placement("random", None, None, seed), nodes=8, gpus=1)
        py = python(rows, make_placement("random", None, None, seed), nodes=8, gpus=1)
        assert run is not None and run.node_masks() == py.node_masks()
        assert sorted(run.node_masks()) == [1 << k for k in range(8)]
    masks = {tuple(compiled(rows, make_placement("random", None, None, s), nodes=8,
                            gpus=1).node_masks()) for s in (0, 1, 5)}
    assert len(masks) > 1  # the seed matters


def test_pal_is_not_pm_first():
    """Variability 1.0 on GPUs 0-1 of node 0 and 0-2 of node 1 (1.2 elsewhere), a 2-GPU job:
    ``pal`` takes the node with the most eligible GPUs (node 1), ``pm-first`` the first node
    with two of the best (node 0)."""
    scores = [[1.0, 1.0, 1 / 1.2, 1 / 1.2], [1.0, 1.0, 1.0, 1 / 1.2]]
    machine = PlacementInputs(score=scores).resolved(2, 4)
    rows = [(1, 0, 10, 1, 2, 10)]
    for name, node in (("pal", 0b10), ("pm-first", 0b01)):
        run = compiled(rows, make_placement(name, machine))
        assert run is not None and run.node_masks() == [node], name
        assert run.gpu_masks() == [0b11]


def test_with_a_factor_and_no_bound_the_bound_is_zero():
    """A factor of 0.5 and no ``min_factor`` (so 0: any job may backfill): one node of 2 GPUs;
    job 1 (200 s recorded, runs 100) holds a GPU, job 2 needs both (reserved at 100), job 3
    (150 s recorded, runs 75) backfills at 0 -- with a bound of 1 it would look too long."""
    rows = [(1, 0, 200, 1, 1, 200), (2, 0, 100, 1, 2, 100), (3, 0, 150, 1, 1, 150)]
    machine = dataclasses.replace(PlacementInputs().resolved(1, 2), factor_by_key=True)
    factor = lambda j, nodes, gpus: 0 if nodes is None else 0.5  # noqa: E731
    run = compiled(rows, Placement(machine), factor=factor, kernel=keyed(3, scale=0.5),
                   nodes=1, gpus=2)
    assert run is not None and run.runtime.tolist() == [100, 50, 75]
    assert run.start.tolist() == [0, 100, 0]
    bound = compiled(rows, Placement(machine), factor=factor, kernel=keyed(3, scale=0.5),
                     bound=1.0, nodes=1, gpus=2)
    assert bound.start.tolist() == [0, 100, 150]


def test_without_the_extension_a_notice_names_the_engine():
    """The extension's import failing: None (the Python path), after the notice naming the
    module and what runs in pure Python."""
    import contextlib
    import io

    from swftools import extensions

    err = io.StringIO()
    with mock.patch.dict(sys.modules, {"swftools.replay._engine_general": None}), \
            mock.patch.object(extensions, "_told", set()), contextlib.redirect_stderr(err):
        assert compiled(BACKFILL) is None
    assert err.getvalue().startswith(
        "swftools: note: compiled module swftools.replay._engine_general is not built; the "
        "general replay engine runs in pure Python (slower).")


def test_factor_keys_of_any_integer_type():
    """Keys handed as int32 or uint8 (queue order): the same replay as int64 keys."""
    rows = [(1, 0, 100, 1, 1, 100), (2, 0, 100, 1, 1, 100)]
    machine = dataclasses.replace(PlacementInputs().resolved(1, 2), factor_by_key=True)
    factor = lambda j, nodes, gpus: j % 2 if nodes is None else 1.0 + j % 2  # noqa: E731
    for dtype in (np.int64, np.int32, np.uint8):
        kernel = dataclasses.replace(keyed(2, scales=[1.0, 2.0]),
                                     keys=np.array([0, 1], dtype=dtype))
        run = compiled(rows, Placement(machine), factor=factor, kernel=kernel, nodes=1, gpus=2)
        assert run is not None and run.runtime.tolist() == [100, 200], dtype


def test_jobs_of_other_keys_do_not_share_a_refused_choice():
    """One node of 2 GPUs, keys' factors 1 (key 0) and 3 (key 1), bound 1: job 1 holds a GPU
    until 100, job 2 (both GPUs) is reserved at 100; job 3 (key 1, 60 s: runs 180) is refused
    the free GPU, job 4 (key 0, 60 s) of the same shape still backfills at 0; job 5 (key 1)
    repeats job 3's combination."""
    rows = [(1, 0, 100, 1, 1, 100), (2, 0, 10, 1, 2, 10), (3, 0, 60, 1, 1, 60),
            (4, 0, 60, 1, 1, 60), (5, 500, 60, 1, 1, 60)]
    keys = [0, 0, 1, 0, 1]
    machine = dataclasses.replace(PlacementInputs().resolved(1, 2), factor_by_key=True)
    factor = lambda j, nodes, gpus: keys[j] if nodes is None else 1.0 + 2 * keys[j]  # noqa: E731
    kernel = dataclasses.replace(keyed(5, scales=[1.0, 3.0]), keys=np.array(keys))
    run = compiled(rows, Placement(machine), factor=factor, kernel=kernel, bound=1.0,
                   nodes=1, gpus=2)
    assert run is not None and run.runtime.tolist() == [100, 10, 180, 60, 180]
    assert run.start.tolist() == [0, 100, 110, 0, 500]


def test_priority_wc_jobs_of_one_size_share_no_choice():
    """``priority-wc`` has no choice group (its choice follows the queue): nodes 0-1 P100, node
    2 V100, 2 GPUs each. At 60 the head (job 5, a whole node) waits for the V100 node, free at
    100; job 6 (gain 3, long) is chosen the V100's free GPU, which the reservation refuses;
    job 7 (gain 1, short) sees job 6 waiting, claiming that GPU, and backfills on node 1."""
    rows = [(1, 0, 100, 1, 1, 100), (2, 0, 50, 1, 1, 50), (3, 0, 10**4, 1, 2, 10**4),
            (4, 0, 10**4, 1, 1, 10**4), (5, 60, 100, 1, 2, 100), (6, 60, 10**4, 1, 1, 10**4),
            (7, 60, 10, 1, 1, 10)]
    machine = PlacementInputs(gpu_model=[0, 0, 1], model_speed=[1.0, 1.5]).resolved(3, 2)
    placement = make_placement("priority-wc", machine, [1, 1, 1, 1, 1, 3, 1])
    run = compiled(rows, placement, nodes=3, gpus=2)
    assert run is not None
    assert run.node_ids().to_pylist() == ["2", "2", "0", "1", "2", "1", "1"]
    assert run.start.tolist()[-1] == 60
