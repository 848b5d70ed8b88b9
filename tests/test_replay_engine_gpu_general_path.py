"""``engine_gpu.run_gpu``'s general path (a placement, run-time factors, bounds, moldable
jobs) against the reference scheduler with the same placement and factors
(``test_replay_placement``'s extension of ``test_replay_reference``), and hand-worked
schedules: factors and bounds, refused choices, the queue-watching hook, bad factors."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import UsageError
from swftools.replay import engine_gpu
from swftools.replay.engine_gpu import run_gpu
from swftools.replay.model import GpuNodes, TrackedGpuState
from swftools.replay.placement import BestFit, Placement, PlacementInputs, make_placement
from swftools.replay.workload import prepare

from .replay_support import Watching, engine, ids, model, reference, work
from .strategies import examples, placement_gpu_cases
from .test_replay_placement import make_factor, reference_placed


# --- the general path: factors, bounds, placements --------------------------------------------
def test_a_factor_scales_run_times_and_estimates():
    """Factor 1.5 on node 1, 1.0 on node 0 (a factor callback alone: ``packed``): one node of
    2 GPUs each. Job 0 (node 0) runs 100; job 1 (node 1) 100 x 1.5; job 2 (estimate 5) x 1.5
    rounds half to even (7.5 -> 8) and runs 3 x 1.5 = 4.5 -> 4."""
    w = work([(0, 100, 100, 1, 2), (0, 100, 100, 1, 2), (200, 3, 5, 1, 2), (200, 3, 5, 1, 2)])
    factor = lambda j, nodes, gpus: 1.5 if nodes == [1] else 1.0  # noqa: E731
    run = run_gpu(w, model(nodes=2, gpus=2), "easy", runtime_factor=factor, compiled=False)
    assert run.node_masks() == [1, 2, 1, 2]
    assert run.runtime.tolist() == [100, 150, 3, 4]
    assert run.estimate.tolist() == [100, 150, 5, 8]
    assert run.start.tolist() == [0, 0, 200, 200]
    assert run.shapes is None  # no mold: the recorded shapes


def test_a_factor_of_one_keeps_times_past_2_53_exact():
    """``round(t x 1.0)`` would go through a float (2**53 + 1 -> 2**53): a factor of exactly
    1.0 keeps the recorded run time and estimate; 2.0 doubles them exactly."""
    big = (1 << 53) + 1
    w = work([(0, big, big + 2, 1, 1)])
    run = run_gpu(w, model(nodes=1, gpus=1), "easy", runtime_factor=lambda j, n, g: 1.0,
                  compiled=False)
    assert run.runtime.tolist() == [big] and run.estimate.tolist() == [big + 2]
    w = work([(0, 1 << 52, 1 << 52, 1, 1)])
    run = run_gpu(w, model(nodes=1, gpus=1), "easy", runtime_factor=lambda j, n, g: 2.0,
                  compiled=False)
    assert run.runtime.tolist() == [1 << 53] and run.estimate.tolist() == [1 << 53]


@pytest.mark.parametrize("bound", [None, 1.0, [1.0] * 3])
def test_a_placement_with_factor_one_backfills_a_job_ending_at_the_shadow_past_2_53(bound):
    """One node of 2 GPUs, times past 2**53: job 0 holds a GPU until T = 2**53 + 3, the head
    (both GPUs) is reserved at T, job 2 (1 GPU, estimate T) ends exactly then: it backfills at
    0, as on the fast path and in the reference (the queue's lower bound of its estimate,
    ``round(T x 1.0)`` through a float, was T + 1 and hid it)."""
    t = (1 << 53) + 3
    w = work([(0, t, t, 1, 1), (0, 10, 10, 1, 2), (0, t, t, 1, 1)])
    m = model(nodes=1, gpus=2)
    run = run_gpu(w, m, "easy", Placement(), min_factor=bound, compiled=False)
    assert run.start.tolist() == [0, t, 0]
    assert engine(run) == engine(run_gpu(w, m, "easy", compiled=False)) == reference(w, m, "easy")


def test_the_factor_callback_gets_node_and_gpu_lists():
    calls = []

    def factor(j, nodes, gpus):
        calls.append((j, nodes, gpus))
        return 1.0

    w = work([(0, 10, 10, 1, 2), (0, 10, 10, 2, 4)])
    run_gpu(w, model(nodes=3, gpus=4), "easy", runtime_factor=factor, compiled=False)
    assert calls == [(0, [0], [[0, 1]]), (1, [1, 2], [[0, 1, 2, 3], [0, 1, 2, 3]])]


@pytest.mark.parametrize("bad", [0.0, -1.0, float("inf"), float("nan")])
def test_a_factor_not_positive_and_finite_is_refused(bad):
    w = work([(0, 10, 10, 1, 1), (0, 10, 10, 1, 1)])
    w.job_id[:] = [7, 9]
    factor = lambda j, nodes, gpus: bad if j == 1 else 1.0  # noqa: E731
    with pytest.raises(UsageError, match=rf"^run-time factor of job 9 must be positive and "
                                         rf"finite, not {bad!r}$"):
        run_gpu(w, model(nodes=2, gpus=1), "easy", runtime_factor=factor, compiled=False)


def test_a_large_finite_factor_is_taken():
    w = work([(0, 10, 10, 1, 1)])
    run = run_gpu(w, model(nodes=1, gpus=1), "easy", runtime_factor=lambda j, n, g: 1e6,
                  compiled=False)
    assert run.runtime.tolist() == [10**7]


@pytest.mark.parametrize("bound", [None, 0.5, [0.5, 0.5, 0.5], 0.0])
def test_a_bound_at_most_the_factor_lets_a_short_scaled_job_backfill(bound):
    """One node of 2 GPUs, factor 0.5; job 0 (200 s recorded: runs 100) holds GPU 0, job 1
    needs both GPUs (reserved at 100), job 2 (150 s recorded: runs 75) ends by 100: it
    backfills at 0 whenever the bound is at most 0.5 (the window filter must not hide it)."""
    w = work([(0, 200, 200, 1, 1), (0, 100, 100, 1, 2), (0, 150, 150, 1, 1)])
    run = run_gpu(w, model(nodes=1, gpus=2), "easy", runtime_factor=lambda j, n, g: 0.5,
                  min_factor=bound, compiled=False)
    assert run.runtime.tolist() == [100, 50, 75]
    assert run.start.tolist() == [0, 100, 0]


@pytest.mark.parametrize("bound, third", [(1.0, 150), ([1.0, 1.0, 1.0], 150), (0.6, 0),
                                          ([0.4, 1.0, 0.6], 0)])
def test_a_bound_above_one_job_estimate_hides_it(bound, third):
    """As above with the bound handed: above the factor (1.0) the filter takes job 2 as 150 s,
    past the shadow time (100), and it waits for the head's end (150); at 0.6 (90 s) the
    filter finds it and its real factor lets it backfill at 0."""
    w = work([(0, 200, 200, 1, 1), (0, 100, 100, 1, 2), (0, 150, 150, 1, 1)])
    run = run_gpu(w, model(nodes=1, gpus=2), "easy", runtime_factor=lambda j, n, g: 0.5,
                  min_factor=bound, compiled=False)
    assert run.start.tolist() == [0, 100, third]


def test_jobs_of_other_keys_do_not_share_a_refused_choice():
    """A keyed factor (``factor(j, None, None)``: the job's key) on the Python path: one node
    of 2 GPUs, factors 1 (key 0) and 3 (key 1), bound 1. Job 0 holds a GPU until 100, job 1
    (both GPUs) is reserved at 100; job 2 (key 1, 60 s: runs 180) is refused the free GPU,
    job 3 (key 0, 60 s) of the same shape still backfills at 0; job 4 (key 1) comes at 500."""
    keys = [0, 0, 1, 0, 1]
    w = work([(0, 100, 100, 1, 1), (0, 10, 10, 1, 2), (0, 60, 60, 1, 1), (0, 60, 60, 1, 1),
              (500, 60, 60, 1, 1)])
    machine = dataclasses.replace(PlacementInputs().resolved(1, 2), factor_by_key=True)
    factor = lambda j, nodes, gpus: keys[j] if nodes is None else 1.0 + 2 * keys[j]  # noqa: E731
    run = run_gpu(w, model(nodes=1, gpus=2), "easy", Placement(machine), factor, 1.0,
                  compiled=False)
    assert run.runtime.tolist() == [100, 10, 180, 60, 180]
    assert run.start.tolist() == [0, 100, 110, 0, 500]


@pytest.mark.parametrize("budget", [0, 1])
def test_past_the_combination_budget_jobs_keep_their_size_bit(monkeypatch, budget):
    """``MAX_COMBOS`` combinations at most: the jobs past it keep their size's own bit (never
    skipped), with the same schedule (the case above)."""
    monkeypatch.setattr(engine_gpu, "MAX_COMBOS", budget)
    test_jobs_of_other_keys_do_not_share_a_refused_choice()
    # one node of 2 GPUs: job 1 (1 GPU) is the first to wait (a combination of its own with a
    # budget of 1), jobs 2 and 3 (2 GPUs) wait with their size's bit: neither fits beside job 1
    w = work([(0, 100, 100, 1, 2), (0, 50, 50, 1, 1), (0, 10, 10, 1, 2), (0, 10, 10, 1, 2)])
    run = run_gpu(w, model(nodes=1, gpus=2), "easy", Placement(), compiled=False)
    assert run.start.tolist() == [0, 100, 150, 160] and run.node_masks() == [1, 1, 1, 1]


@pytest.mark.parametrize("bound", [None, 1.0, 2.0, [2.0] * 8])
def test_after_a_refused_choice_the_rest_of_its_combination_is_still_looked_at(bound):
    """Two nodes of 3 GPUs: jobs 0 and 1 hold 2 GPUs of each until 100; the head (3 GPUs) is
    reserved at 100 with a node to spare. Job 3 (1 GPU, 500 s) takes node 0's last GPU past
    100 (allowed: node 1 is left for the head); job 4 (1 GPU, 500 s) is chosen node 1's and
    refused, so is job 5, of the same combination; job 6 (3 GPUs) fits nowhere before the
    head's end (110); job 7 (1 GPU, 50 s), of job 4's combination, ends by 100: it backfills at
    0 on node 1. Whatever the bound (2.0: above the factor, so its refused choice's factor is
    remembered)."""
    w = work([(0, 100, 100, 1, 2), (0, 100, 100, 1, 2), (0, 10, 10, 1, 3), (0, 500, 500, 1, 1),
              (0, 500, 500, 1, 1), (0, 500, 500, 1, 1), (0, 500, 500, 1, 3), (0, 50, 50, 1, 1)])
    m = model(nodes=2, gpus=3)
    run = run_gpu(w, m, "easy", Placement(), min_factor=bound, compiled=False)
    assert run.start.tolist() == [0, 0, 100, 0, 100, 100, 110, 0]
    assert run.node_masks() == [1, 2, 2, 1, 1, 1, 2, 2]
    assert engine(run) == reference(w, m, "easy")


@pytest.mark.parametrize("general, factor", [(None, None), (Placement(), None),
                                             (None, lambda j, nodes, gpus: 1.0)])
def test_a_refused_shape_leaves_the_other_allowed_shapes(general, factor):
    """Two nodes of 4 GPUs: job 0 holds 3 of node 0 until 100, job 1 2 of node 1 until 1000;
    the head (4 GPUs) is reserved at 100 on node 0. Job 3 (1 GPU, long) is chosen node 0's
    free GPU and refused; job 4 (2 GPUs, long) is chosen node 1, which the head does not need:
    it starts at 0. Job 3 runs after the head (110). Also with a factor callback (its jobs
    in no choice group)."""
    w = work([(0, 100, 100, 1, 3), (0, 1000, 1000, 1, 2), (0, 10, 10, 1, 4), (0, 500, 500, 1, 1),
              (0, 500, 500, 1, 2)])
    m = model(nodes=2, gpus=4)
    run = run_gpu(w, m, "easy", general, factor, compiled=False)
    assert run.start.tolist() == [0, 0, 100, 110, 0] and run.node_masks() == [1, 2, 1, 1, 2]
    assert engine(run) == reference(w, m, "easy")


def test_a_remembered_refusal_of_factor_one_keeps_times_past_2_53_exact():
    """Two nodes of 3 GPUs, T = 2**53 + 3: jobs 0 and 1 hold 2 GPUs of each until T, the head
    (3 GPUs) is reserved at T. Jobs 3, 4, 5 (1 GPU, bound 2.0 above the factor 1.0): job 3
    (2T) takes node 0, job 4 (2T) is refused node 1 (its factor remembered), job 5 (estimate
    T) ends exactly at T: not skipped (T + 1 through a float would be), it backfills at 0."""
    t = (1 << 53) + 3
    w = work([(0, t, t, 1, 2), (0, t, t, 1, 2), (0, 10, 10, 1, 3), (0, 2 * t, 2 * t, 1, 1),
              (0, 2 * t, 2 * t, 1, 1), (0, t, t, 1, 1)])
    m = model(nodes=2, gpus=3)
    run = run_gpu(w, m, "easy", Placement(), min_factor=[1.0] * 3 + [2.0] * 3, compiled=False)
    assert run.start.tolist() == [0, 0, t, 0, t, 0]
    assert engine(run) == reference(w, m, "easy")


def test_a_refused_choice_is_forgotten_after_a_start():
    """Three nodes of 3 GPUs, one free on each (jobs 0 and 1 until 100, job 2 until 1000); the
    head (3 GPUs) is reserved at 100 on node 0 or 1. Jobs 4, 5 and 7 (1 GPU, 500 s, bound 2.0:
    one combination, above its factor 1.0): job 4 takes node 0 (node 1 left for the head), job
    5 is chosen node 1 and refused; job 6 (1 GPU, 50 s, bound 1.0) ends by 100 and takes node
    1's GPU; from that state job 7's choice is node 2, which the head does not need: it starts
    at 0 too. The head runs at 100 on node 1, job 5 at 100 on node 0."""
    w = work([(0, 100, 100, 1, 2), (0, 100, 100, 1, 2), (0, 1000, 1000, 1, 2), (0, 10, 10, 1, 3),
              (0, 500, 500, 1, 1), (0, 500, 500, 1, 1), (0, 50, 50, 1, 1), (0, 500, 500, 1, 1)])
    m = model(nodes=3, gpus=3)
    bound = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 1.0, 2.0]
    run = run_gpu(w, m, "easy", Placement(), min_factor=bound, compiled=False)
    assert run.start.tolist() == [0, 0, 0, 100, 0, 100, 0, 0]
    assert run.node_masks() == [1, 2, 4, 2, 1, 1, 2, 4]
    assert engine(run) == reference(w, m, "easy")


def test_a_refused_choice_of_a_keyed_factor_below_its_bound_is_remembered_scaled():
    """The case above with every job run at half its time (a keyed factor of 0.5; keys 0 and,
    for job 6, 1) and a bound of 1.0 above it. Job 4's choice is refused with factor 0.5, so
    job 5 (its combination, 500 s scaled) is skipped; job 6 (key 1: another combination) is
    chosen and refused too; job 7 (key 0, 200 s: 100 scaled) ends exactly at the shadow time:
    it backfills at 0. The head runs at 100 (10 s), jobs 4 and 5 at 100, job 6 at 110."""
    keys = [0, 0, 0, 0, 0, 0, 1, 0]
    w = work([(0, 200, 200, 1, 2), (0, 200, 200, 1, 2), (0, 20, 20, 1, 3),
              (0, 1000, 1000, 1, 1), (0, 1000, 1000, 1, 1), (0, 1000, 1000, 1, 1),
              (0, 1000, 1000, 1, 1), (0, 200, 200, 1, 1)])
    machine = dataclasses.replace(PlacementInputs().resolved(2, 3), factor_by_key=True)
    factor = lambda j, nodes, gpus: keys[j] if nodes is None else 0.5  # noqa: E731
    run = run_gpu(w, model(nodes=2, gpus=3), "easy", Placement(machine), factor, 1.0,
                  compiled=False)
    assert run.runtime.tolist() == [100, 100, 10, 500, 500, 500, 500, 100]
    assert run.start.tolist() == [0, 0, 100, 0, 100, 100, 110, 0]
    assert run.node_masks() == [1, 2, 2, 1, 1, 1, 2, 2]


def test_the_default_placement_follows_the_allocation():
    """A factor callback alone: ``packed`` on a first-fit model, ``best-fit`` on a best-fit one
    (the fast path's choices)."""
    w = work([(0, 100, 100, 1, 2), (0, 100, 100, 1, 3), (0, 100, 100, 1, 1)])
    one = lambda j, n, g: 1.0  # noqa: E731
    assert run_gpu(w, model(), "easy", runtime_factor=one,
                   compiled=False).node_masks() == [1, 2, 1]
    assert run_gpu(w, model(allocation="best-fit"), "easy", runtime_factor=one,
                   compiled=False).node_masks() == [1, 2, 2]
    assert run_gpu(w, model(allocation="best-fit"), "easy", BestFit(),
                   compiled=False).node_masks() == [1, 2, 2]


def test_a_watching_placement_sees_the_jobs_submitted_and_not_started():
    """The schedule of ``test_a_head_that_never_fits_again_is_dropped``: job 0 is chosen with
    jobs 0 and 1 waiting, job 1 with itself; job 2 is dropped (removed), job 3 chosen at 100
    with itself; nothing waits at the end. The watcher gets the job shapes."""
    w = work([(0, 50, 50, 1, 1), (0, 300, 300, 1, 1), (10, 10, 10, 2, 1), (20, 20, 20, 1, 1)])
    m = model(nodes=2, gpus=1, timeline=[(0, 2), (100, 1)])
    watch = Watching()
    run = run_gpu(w, m, "easy", watch, compiled=False)
    assert run.start.tolist()[3] == 100
    assert watch.seen == [(0, {0, 1}), (1, {1}), (3, {3})]
    assert watch.waiting == set()
    # the dropped job: no run, no GPUs (as the general twin gives it)
    twin = run_gpu(w, m, "easy", Placement(), compiled=True)
    assert twin.node_sets is None
    for r in (run, twin):
        assert r.runtime.tolist() == [50, 300, 0, 20] and r.estimate.tolist() == [50, 300, 0, 20]
        assert r.start.tolist() == [0, 0, 0, 100] and r.gpu_masks() == [1, 1, 0, 1]
    assert watch.shapes == ([1, 1, 2, 1], [1, 1, 1, 1])
    # dropped on arrival at an empty queue: removed too
    watch = Watching()
    run_gpu(work([(5, 10, 10, 3, 1), (5, 10, 10, 1, 1)]), m, "easy", watch, compiled=False)
    assert watch.seen == [(1, {1})] and watch.waiting == set()


def test_a_watching_placement_sees_backfilled_jobs_leave():
    """The EASY case of test_replay_engine_gpu.py (one node of 4 GPUs): job 3 backfills at 0,
    so job 1 is chosen at 100 with jobs 1 and 2 waiting, job 2 at 150 with itself."""
    w = work([(0, 100, 100, 1, 2), (0, 50, 50, 1, 4), (0, 100, 150, 1, 2), (0, 100, 100, 1, 2)])
    watch = Watching()
    run = run_gpu(w, model(nodes=1, gpus=4), "easy", watch, compiled=False)
    assert run.start.tolist() == [0, 100, 150, 0]
    assert [j for j, _ in watch.seen if j in (0, 1, 2)][-2:] == [1, 2]
    chosen = {j: waiting for j, waiting in watch.seen}
    assert chosen[0] == {0, 1, 2, 3} and chosen[1] == {1, 2} and chosen[2] == {2}
    assert watch.waiting == set()


class Duck:
    """A placement of no built-in class: first fit on single nodes, with a memo of the last
    factor it computed (as ``lxv`` keeps one) that the engine must use instead of calling the
    callback: its memo says 2.0 for job 1 on node 1, GPU 0."""

    def __init__(self):
        self.memo = None

    def start(self, state, runtime_factor):
        self.runtime_factor = runtime_factor

    def choose(self, state, j, nodes, per_node):
        node = next(1 << k for k in range(state.n_nodes) if state.managed >> k & 1
                    and state.free[k] >= per_node)
        k = node.bit_length() - 1
        gpus = state.gpu_free[k] & -state.gpu_free[k]
        self.memo = (j, node, gpus, 2.0) if j == 1 else None
        return node, gpus


def test_a_user_placements_memo_stands_for_the_factor():
    """The callback is asked (with the node list and each node's GPU list) for jobs 0 and 2
    only; job 1 runs by the memo's 2.0."""
    calls = []

    def factor(j, nodes, gpus):
        calls.append((j, nodes, gpus))
        return 3.0

    w = work([(0, 10, 10, 1, 1), (0, 10, 10, 1, 1), (0, 10, 10, 1, 1)])
    run = run_gpu(w, model(nodes=3, gpus=1), "easy", Duck(), factor, compiled=False)
    assert run.node_masks() == [1, 2, 4]
    assert run.runtime.tolist() == [30, 20, 30] and calls == [(0, [0], [[0]]), (2, [2], [[0]])]


def test_the_placement_is_started_with_the_tracked_state_and_the_callback():
    """``Placement.start`` is called once, before any choice, with the engine's state (a
    ``TrackedGpuState``, whose change counter placements cache by) and the callback given."""
    class Recording(Placement):
        def start(self, state, runtime_factor):
            self.started = getattr(self, "started", []) + [(state, runtime_factor)]
            super().start(state, runtime_factor)

        def choose(self, state, j, nodes, per_node):
            assert state is self.started[0][0]
            return super().choose(state, j, nodes, per_node)

    factor = lambda j, n, g: 1.0  # noqa: E731
    for callback in (None, factor):
        p = Recording()
        run_gpu(work([(0, 10, 10, 1, 1)] * 2), model(nodes=1, gpus=1), "easy", p, callback,
                compiled=False)
        [(state, given)] = p.started
        assert type(state) is TrackedGpuState and given is callback


def test_a_placement_started_with_another_callback_is_asked_through_the_callback():
    """A built-in placement already started with a different callback: the engine calls its
    own callback (the placement's cache would answer for the other)."""
    p = Placement()

    class Started(Placement):
        def start(self, state, runtime_factor):
            super().start(state, lambda j, n, g: 5.0)

    w = work([(0, 10, 10, 1, 1)])
    run = run_gpu(w, model(nodes=1, gpus=1), "easy", Started(), lambda j, n, g: 2.0,
                  compiled=False)
    assert run.runtime.tolist() == [20]
    run = run_gpu(w, model(nodes=1, gpus=1), "easy", p, lambda j, n, g: 2.0, compiled=False)
    assert run.runtime.tolist() == [20]


# --- moldable jobs ---------------------------------------------------------------------------
def test_mold_reshapes_jobs_started_from_the_head_or_on_arrival():
    """One node of 4 GPUs. Job 0 (1 x 2, 100 s) arrives at an empty queue: molded to 1 x 4 at
    half its time (runs 50, estimate 60 x 0.5 = 30). Job 1 (1 x 1) arrives at 10 (bound 0): not
    molded (None), it waits (asked again, as the head, when job 2 (1 x 1, 10 s) arrives at 20
    and waits behind it, not asked); at 50 job 1 heads
    the queue with bound 4: molded to 1 x 2 at twice its time; job 2 is then asked with the
    bound left, 2 (None), and starts. Job 3 arrives at 60 (bound 2) and keeps its shape."""
    w = work([(0, 100, 60, 1, 2), (10, 100, 100, 1, 1), (20, 10, 10, 1, 1), (60, 10, 10, 1, 2)])
    calls = []

    def mold(j, bound):
        calls.append((j, bound))
        return {(0, 4): (1, 4, 0.5), (1, 4): (1, 2, 2.0)}.get((j, bound))

    run = run_gpu(w, model(nodes=1, gpus=4), "easy", mold=mold, compiled=True)
    assert calls == [(0, 4), (1, 0), (1, 0), (1, 4), (2, 2), (3, 2)]
    assert run.start.tolist() == [0, 50, 50, 60]
    assert run.runtime.tolist() == [50, 200, 10, 10]
    assert run.estimate.tolist() == [30, 200, 10, 10]
    assert run.gpu_masks() == [0b1111, 0b11, 0b100, 0b1100]
    assert run.shapes[0].tolist() == [1, 1, 1, 1] and run.shapes[1].tolist() == [4, 2, 1, 2]
    assert run.node_sets is not None  # mold runs in Python even when the twin is asked for


def test_mold_of_a_head_takes_the_factor_of_its_new_placement():
    """The molded shape's run-time factor (of its nodes) times the mold's scale; the molded
    job's new size decides the bound the next job is asked with (0 at its arrival, 2 when job
    0 ends at 50)."""
    w = work([(0, 100, 100, 1, 1), (0, 100, 100, 1, 2)])
    factor = lambda j, nodes, gpus: 3.0 if nodes == [1] else 1.0  # noqa: E731
    bounds = []

    def mold(j, bound):
        bounds.append(bound)
        return (2, 1, 0.5) if j == 0 else None

    run = run_gpu(w, model(nodes=2, gpus=1), "fcfs", runtime_factor=factor, mold=mold)
    # job 0 on nodes 0 and 1 (2 x 1): factor 1.0 (nodes [0, 1]) x 0.5; job 1 then fits nowhere
    assert run.node_masks()[0] == 0b11 and run.runtime.tolist()[0] == 50
    assert bounds == [2, 0, 2] and run.start.tolist() == [0, 50]
    assert run.shapes[0].tolist() == [2, 1]


def test_backfilled_jobs_are_not_molded():
    """One node of 4 GPUs: job 0 holds 3 until 100, job 1 (4 GPUs) heads the queue; job 2
    (1 GPU, 50 s) backfills with its shape: mold is asked about job 1 only (and job 0)."""
    w = work([(0, 100, 100, 1, 3), (0, 10, 10, 1, 4), (0, 50, 50, 1, 1)])
    calls = []

    def mold(j, bound):
        calls.append(j)
        return None

    run = run_gpu(w, model(nodes=1, gpus=4), "easy", mold=mold)
    assert run.start.tolist() == [0, 100, 0]
    assert set(calls) == {0, 1} and run.shapes[1].tolist() == [3, 4, 1]


# --- the general path against the reference with the same placement and factors -------------
@settings(max_examples=examples(25), deadline=None)
@given(placement_gpu_cases(max_jobs=20), st.sampled_from(["packed", "best-fit", "pm-first",
                                                          "priority-wc", "lxv"]),
       st.sampled_from(["easy", "fcfs"]), st.sampled_from(["none", "factor", "bound", "bounds"]))
def test_general_path_matches_the_reference(case, name, policy, factors):
    """Placements chosen by the plug-in, run times and estimates scaled by the factor of the
    placement (with no bound, a scalar bound, a bound per job): the same starts, nodes, GPUs
    and run times as the reference, which rebuilds the state and the reservation each time."""
    table, site, inputs = case
    factor, lower = make_factor(inputs, site.max_nodes, site.gpus_per_node)
    use = None if factors == "none" else factor
    m = GpuNodes(site)
    w = prepare(table, m)
    gains = None if inputs.gain is None else [float(inputs.gain[r]) for r in w.row]
    placement = make_placement(name, inputs.resolved(site.max_nodes, site.gpus_per_node), gains)
    bound = {"bound": lower, "bounds": [lower] * len(w)}.get(factors)
    rf = None if use is None else (lambda j, n, g: use(int(w.row[j]), n, g))
    run = run_gpu(w, m, policy, placement, rf, bound, compiled=False)
    done, dropped = reference_placed(table, site, name, inputs, use, policy)
    gone = {j for j, _ in run.dropped}
    got = {int(w.job_id[q]): (s, ids(n), ids(g), r) for q, (s, n, g, r) in enumerate(zip(
        run.start.tolist(), run.node_masks(), run.gpu_masks(), run.runtime.tolist()))
        if q not in gone}
    assert got == done
    assert {int(w.job_id[q]) for q in gone} == set(dropped)
