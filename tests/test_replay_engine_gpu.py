"""``engine_gpu.run_gpu``'s fast path against the textbook reference scheduler of
``test_replay_reference`` (which rebuilds the whole state at every event), and hand-worked
schedules: the capacity timeline, dropped heads; which engine ``run_gpu`` runs; and what
``compiled_fits`` admits (the general path, with placements, run-time factors and moldable
jobs: ``test_replay_engine_gpu_general_path.py``)."""

from __future__ import annotations

import dataclasses
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.replay import engine_gpu
from swftools.replay.engine_gpu import (COMPILED_MAX_BITS, compiled_fits, never_fits_again,
                                        run_gpu)
from swftools.replay.factors import FactorKernel
from swftools.replay.model import FlatNodes, GpuNodes
from swftools.replay.placement import Placement, PlacementInputs, make_placement
from swftools.replay.workload import prepare

from .replay_support import Watching, engine, model, reference, work
from .strategies import examples, replay_gpu_jobs


# --- hand-worked schedules ---------------------------------------------------------------------
@pytest.mark.parametrize("twin", [False, True])
def test_easy_backfills_behind_a_blocked_head_and_fcfs_does_not(twin):
    """One node of 4 GPUs. Job 0 holds 2 until 100; job 1 (4 GPUs) is reserved at 100; job 2
    (2 GPUs, 100 s) would hold the head's GPUs past 100; job 3 (2 GPUs, estimate 100) ends by
    the shadow time: EASY starts it at 0, FCFS after job 1 and job 2. Both engines."""
    w = work([(0, 100, 100, 1, 2), (0, 50, 50, 1, 4), (0, 100, 150, 1, 2), (0, 100, 100, 1, 2)])
    m = model(nodes=1, gpus=4)
    easy = run_gpu(w, m, "easy", compiled=twin)
    assert (easy.node_sets is None) == twin
    assert easy.start.tolist() == [0, 100, 150, 0]
    assert easy.gpu_masks() == [0b11, 0b1111, 0b11, 0b1100]
    if not twin:  # the general path with a bound per job (1.0: no factor) gives the same
        bounded = run_gpu(w, m, "easy", Placement(), min_factor=[1.0] * 4, compiled=False)
        assert bounded.start.tolist() == [0, 100, 150, 0]
        # a placement that reads the job (its gain) is asked about the backfilled one
        gains = make_placement("priority", None, [1.0, 2.0, 1.0, 2.0])
        assert run_gpu(w, m, "easy", gains, compiled=False).start.tolist() == [0, 100, 150, 0]
    fcfs = run_gpu(w, m, "fcfs", compiled=twin)
    assert fcfs.start.tolist() == [0, 100, 150, 150]
    assert fcfs.gpu_masks() == [0b11, 0b1111, 0b11, 0b1100]


@pytest.mark.parametrize("twin", [False, True])
def test_best_fit_takes_the_fullest_node_that_fits(twin):
    """Two nodes of 4 GPUs: job 0 (2 GPUs) and job 1 (3 GPUs) on nodes 0 and 1; job 2 (1 GPU):
    first fit takes node 0 (2 free), best fit node 1 (1 free: the tightest)."""
    w = work([(0, 100, 100, 1, 2), (0, 100, 100, 1, 3), (0, 100, 100, 1, 1)])
    assert run_gpu(w, model(), "easy", compiled=twin).node_masks() == [1, 2, 1]
    best = run_gpu(w, model(allocation="best-fit"), "easy", compiled=twin)
    assert best.node_masks() == [1, 2, 2] and best.gpu_masks() == [0b11, 0b111, 0b1000]


@pytest.mark.parametrize("twin, general", [(False, None), (True, None), (False, Placement())])
def test_a_job_running_past_the_shadow_time_may_take_only_spare_gpus(twin, general):
    """Two nodes of 2 GPUs. Job 0 holds node 0 until 100, job 1 one GPU of node 1 until 100;
    the head, job 2, needs a whole node (reserved at 100; at that instant both nodes are free,
    one spare). Job 3 (1 GPU, long) takes node 1's last GPU past 100: allowed (node 0 is left
    for the head), and job 4 (1 GPU, long, arriving at 10) finds no free GPU until 100, where
    the head takes node 0 and job 4 the GPU left on node 1."""
    w = work([(0, 100, 100, 1, 2), (0, 100, 100, 1, 1), (0, 10, 10, 1, 2),
              (0, 500, 500, 1, 1), (10, 500, 500, 1, 1)])
    run = run_gpu(w, model(nodes=2, gpus=2), "easy", general, compiled=twin)
    assert run.start.tolist() == [0, 0, 100, 0, 100]
    assert run.node_masks() == [1, 2, 1, 2, 2]
    assert run.gpu_masks() == [0b11, 0b01, 0b11, 0b10, 0b01]


@pytest.mark.parametrize("general", [None, Placement()])
def test_an_early_end_moves_the_shadow_time_earlier(general):
    """One node of 4 GPUs. Job 0 (3 GPUs, estimated until 100, ends at 20); the head, job 1
    (4 GPUs), is reserved at 100; job 2 (1 GPU, until 50) backfills at 0. At 20 job 0 ends:
    the head now waits only for job 2 (shadow 50), so job 3 (1 GPU, 40 s, arriving at 25)
    would hold a GPU it needs: it starts after the head, at 60 (with the old shadow, at 25)."""
    w = work([(0, 20, 100, 1, 3), (0, 10, 10, 1, 4), (0, 50, 50, 1, 1), (25, 40, 40, 1, 1)])
    run = run_gpu(w, model(nodes=1, gpus=4), "easy", general, compiled=False)
    assert run.start.tolist() == [0, 50, 0, 60]


@pytest.mark.parametrize("general", [None, Placement()])
def test_a_subtree_whose_shortest_job_does_not_fit_yields_no_candidate(general):
    """One node of 4 GPUs: job 0 (3 GPUs) until 100, the head (job 1, 4 GPUs) reserved then,
    job 2 (4 GPUs) behind it; job 3 (1 GPU, 200 s) fits but ends past the shadow time and
    would hold a GPU the head needs; job 4 (2 GPUs, 10 s) is short but does not fit the free
    GPU. Queue positions 2 and 3 share a subtree that holds a fitting size and a short
    estimate, of two different jobs: no candidate. The head runs 100-110, job 2 110-120, jobs 3
    and 4 from 120."""
    w = work([(0, 100, 100, 1, 3), (0, 10, 10, 1, 4), (0, 10, 10, 1, 4), (0, 200, 200, 1, 1),
              (0, 10, 10, 1, 2)])
    m = model(nodes=1, gpus=4)
    run = run_gpu(w, m, "easy", general, compiled=False)
    assert run.start.tolist() == [0, 100, 110, 120, 120]
    assert run.gpu_masks() == [0b111, 0b1111, 0b1111, 0b1, 0b110]
    assert engine(run) == reference(w, m, "easy")


@pytest.mark.parametrize("general", [None, Placement()])
def test_a_short_job_is_found_after_its_queue_neighbour_backfilled(general):
    """One node of 4 GPUs: jobs 0 (2 GPUs, until 100) and 1 (1 GPU, until 30) run; the head
    (4 GPUs) is reserved at 100, job 3 (4 GPUs) waits behind it. Job 4 (2 GPUs, 20 s) does not
    fit the free GPU at 0, job 5 (1 GPU, 20 s) does and backfills, leaving its queue
    neighbour alone in their subtree; at 30 job 4 fits and ends by 100: it backfills then (the
    subtree's shortest estimate is job 4's)."""
    w = work([(0, 100, 100, 1, 2), (0, 30, 30, 1, 1), (0, 10, 10, 1, 4), (0, 10, 10, 1, 4),
              (0, 20, 20, 1, 2), (0, 20, 20, 1, 1)])
    m = model(nodes=1, gpus=4)
    run = run_gpu(w, m, "easy", general, compiled=False)
    assert run.start.tolist() == [0, 0, 100, 110, 30, 0]
    assert engine(run) == reference(w, m, "easy")


@pytest.mark.parametrize("general", [None, Placement()])
def test_every_shape_the_reservation_may_allow_is_looked_at(general):
    """Six 1-GPU nodes: jobs 0 (node 0) and 1 (nodes 1-2) until 100; the head needs 4 nodes,
    at 100 there are 6 (2 to spare). Job 3 (2 nodes, long) and job 4 (1 node, long) are both
    shapes that may run past 100: job 3, first in the queue, takes nodes 3-4 and the spare;
    job 4 then may not, and starts after the head (110)."""
    w = work([(0, 100, 100, 1, 1), (0, 100, 100, 2, 1), (0, 10, 10, 4, 1), (0, 500, 500, 2, 1),
              (0, 500, 500, 1, 1)])
    m = model(nodes=6, gpus=1)
    run = run_gpu(w, m, "easy", general, compiled=False)
    assert run.start.tolist() == [0, 0, 100, 0, 110]
    assert run.node_masks() == [0b1, 0b110, 0b100111, 0b11000, 0b1]
    assert engine(run) == reference(w, m, "easy")


@pytest.mark.parametrize("general", [None, Placement()])
def test_a_shape_allowed_far_down_the_queue_is_found(general):
    """The case above with seven 6-node jobs queued between the head and job 3 (queue position
    8: the second half of a 16-leaf tree): job 3 still takes the spare nodes at 0; the 6-node
    jobs run one after another once job 3 has ended (500), job 4 last."""
    rows = [(0, 100, 100, 1, 1), (0, 100, 100, 2, 1), (0, 10, 10, 4, 1)]
    rows += [(0, 10, 10, 6, 1)] * 7 + [(0, 500, 500, 2, 1), (0, 500, 500, 1, 1)]
    w, m = work(rows), model(nodes=6, gpus=1)
    run = run_gpu(w, m, "easy", general, compiled=False)
    assert run.start.tolist() == [0, 0, 100] + list(range(500, 570, 10)) + [0, 570]
    assert engine(run) == reference(w, m, "easy")


@pytest.mark.parametrize("general", [None, Placement()])
def test_a_job_ending_at_the_shadow_time_leaves_the_spare_nodes(general):
    """The six-node case above with job 3 (1 node) ending exactly at the head's start (100):
    it holds nothing then, so job 4 (2 nodes, long) may still take the two spare nodes at 0."""
    w = work([(0, 100, 100, 1, 1), (0, 100, 100, 2, 1), (0, 10, 10, 4, 1), (0, 100, 100, 1, 1),
              (0, 500, 500, 2, 1)])
    m = model(nodes=6, gpus=1)
    run = run_gpu(w, m, "easy", general, compiled=False)
    assert run.start.tolist() == [0, 0, 100, 0, 0]
    assert engine(run) == reference(w, m, "easy")


@pytest.mark.parametrize("general", [None, Placement()])
def test_a_job_ending_at_the_shadow_time_is_found_beside_a_long_one(general):
    """The layout of the subtree case: job 3 (1 GPU, 200 s) fits but ends past the shadow
    time (100); job 4 (1 GPU, 100 s), its neighbour in the tree, ends exactly then: it
    backfills at 0. The head runs 100-110, job 2 110-120, job 3 from 120."""
    w = work([(0, 100, 100, 1, 3), (0, 10, 10, 1, 4), (0, 10, 10, 1, 4), (0, 200, 200, 1, 1),
              (0, 100, 100, 1, 1)])
    m = model(nodes=1, gpus=4)
    run = run_gpu(w, m, "easy", general, compiled=False)
    assert run.start.tolist() == [0, 100, 110, 120, 0]
    assert engine(run) == reference(w, m, "easy")


def test_a_capacity_increase_starts_a_waiting_job():
    """One node of 1 GPU until 50, two from then: job 1 waits for job 0 (until 100) only
    until the second node comes, at 50; with no job waiting, the change is no event."""
    w = work([(0, 100, 100, 1, 1), (10, 10, 10, 1, 1)])
    m = model(nodes=2, gpus=1, timeline=[(0, 1), (50, 2)])
    for twin in (False, True):
        run = run_gpu(w, m, "easy", compiled=twin)
        assert run.start.tolist() == [0, 50] and run.node_masks() == [1, 2], twin


def test_the_capacity_at_the_first_submit_is_the_start():
    """One node until 50, two from then: a 2-node job submitted at 60 starts at once, the
    first job (submitted at 10) finds one node."""
    w = work([(10, 10, 10, 1, 1), (60, 10, 10, 2, 1)])
    m = model(nodes=2, gpus=1, timeline=[(0, 1), (50, 2)])
    for twin in (False, True):
        assert run_gpu(w, m, "easy", compiled=twin).start.tolist() == [10, 60], twin
    # a 2-node job first: it waits for the change at 50 (capacity at 10 is one node)
    w = work([(10, 10, 10, 2, 1), (60, 10, 10, 1, 1)])
    for twin in (False, True):
        assert run_gpu(w, m, "easy", compiled=twin).start.tolist() == [50, 60], twin


def test_a_head_that_never_fits_again_is_dropped():
    """Two 1-GPU nodes until 100, one from then. Job 0 (1 node, 0-300), job 1 (2 nodes) at 10
    waits; the reservation finds no instant (one node after 100), so job 2 (1 node, 20 s) does
    not backfill on node 0 (free from 50); at 100 job 1 can never fit again: dropped, and job 2
    starts on node 0. Both engines, both policies; a dropped job has no nodes and no GPUs (and
    the start 0 of the twin)."""
    w = work([(0, 50, 50, 1, 1), (0, 300, 300, 1, 1), (10, 10, 10, 2, 1), (20, 20, 20, 1, 1)])
    m = model(nodes=2, gpus=1, timeline=[(0, 2), (100, 1)])
    reason = "never fits: the site manages at most 1 nodes from 100 on"
    assert never_fits_again(1, 100) == reason
    for twin in (False, True):
        for policy in ("easy", "fcfs"):
            run = run_gpu(w, m, policy, compiled=twin)
            assert run.dropped == [(2, reason)], (twin, policy)
            assert run.start.tolist() == [0, 0, 0, 100]
            assert run.node_ids().to_pylist() == ["0", "1", "", "0"]
            assert run.gpu_ids().to_pylist() == ["0", "0", "", "0"]
            assert run.node_masks()[2] == 0 and run.gpu_masks()[2] == 0


@pytest.mark.parametrize("general", [None, Placement()])
def test_a_head_with_no_reservation_blocks_backfilling_until_it_is_dropped(general):
    """The case above with job 4 (1 node, 20 s) arriving at 60: the head still has no
    reservation (asked again), nothing backfills on the free node 0; at 100 the head is
    dropped, job 3 runs 100-120, job 4 120-140."""
    w = work([(0, 50, 50, 1, 1), (0, 300, 300, 1, 1), (10, 10, 10, 2, 1), (20, 20, 20, 1, 1),
              (60, 20, 20, 1, 1)])
    m = model(nodes=2, gpus=1, timeline=[(0, 2), (100, 1)])
    run = run_gpu(w, m, "easy", general, compiled=False)
    assert run.start.tolist() == [0, 0, 0, 100, 120] and len(run.dropped) == 1


def test_a_job_that_never_fits_on_arrival_at_an_empty_queue_is_dropped():
    """A 3-node job on a site of two nodes (given as is): dropped on arrival, the next job runs
    at once; a 2-node job of a site that manages one node only until 40 waits for it."""
    m = model(nodes=2, gpus=1, timeline=[(0, 2)])
    w = work([(5, 10, 10, 3, 1), (5, 10, 10, 1, 1)])
    for general in (None, Placement()):
        run = run_gpu(w, m, "easy", general, compiled=False)
        assert run.dropped == [(0, "never fits: the site manages at most 2 nodes from 5 on")]
        assert run.start.tolist()[1] == 5 and run.node_masks()[1] == 1
    m = model(nodes=2, gpus=1, timeline=[(0, 1), (40, 2)])
    run = run_gpu(work([(5, 10, 10, 2, 1)]), m, "fcfs", compiled=False)
    assert run.dropped == [] and run.start.tolist() == [40]


def test_the_reach_after_a_dip_is_the_largest_later_count():
    """Timeline 3, 1 (at 100), 2 (at 200), 1 (at 300) nodes of 1 GPU. A 2-node head waiting
    at 100 is kept (2 nodes come at 200) and starts then; a 3-node head waiting at 100 is
    dropped at that change (at most 2 from 100 on); one waiting at 300 then (at most 1)."""
    m = model(nodes=3, gpus=1, timeline=[(0, 3), (100, 1), (200, 2), (300, 1)])
    w = work([(0, 150, 150, 3, 1), (50, 10, 10, 2, 1)])
    run = run_gpu(w, m, "easy", compiled=False)
    assert run.dropped == [] and run.start.tolist() == [0, 200]
    w = work([(0, 150, 150, 3, 1), (50, 10, 10, 3, 1), (60, 10, 10, 1, 1)])
    run = run_gpu(w, m, "easy", compiled=False)
    assert run.dropped == [(1, "never fits: the site manages at most 2 nodes from 100 on")]
    assert run.start.tolist()[2] == 150
    # from 300 on: at most one node
    w = work([(0, 400, 400, 3, 1), (50, 10, 10, 2, 1)])
    run = run_gpu(w, m, "easy", compiled=False)
    assert run.dropped == [(1, "never fits: the site manages at most 1 nodes from 300 on")]


def test_the_reach_is_the_largest_count_of_any_later_entry():
    """Timeline 1, 1 (at 100), 1 (at 200), 2 (at 300) nodes of 1 GPU: a 2-node job submitted
    at 20 behind a 1-node job (10-500) is kept at its arrival and at each change (2 nodes come
    at 300) and starts when the first job ends, at 500."""
    m = model(nodes=2, gpus=1, timeline=[(0, 1), (100, 1), (200, 1), (300, 2)])
    w = work([(10, 490, 490, 1, 1), (20, 10, 10, 2, 1)])
    for twin in (False, True):
        run = run_gpu(w, m, "easy", compiled=twin)
        assert run.dropped == [] and run.start.tolist() == [10, 500], twin


def test_the_reach_after_the_next_to_last_change_is_the_last_count():
    """Timeline 1, 3 (at 100), 1 (at 200), 2 (at 300): a 3-node job submitted at 150 while a
    1-node job holds node 0 until 250 waits; at 200 the site will never again manage more than
    2 nodes: dropped then (not at 300)."""
    m = model(nodes=3, gpus=1, timeline=[(0, 1), (100, 3), (200, 1), (300, 2)])
    w = work([(0, 250, 250, 1, 1), (150, 10, 10, 3, 1)])
    for twin in (False, True):
        run = run_gpu(w, m, "easy", compiled=twin)
        assert run.dropped == [(1, "never fits: the site manages at most 2 nodes from 200 on")]


@pytest.mark.parametrize("general, bound", [(None, None), (Placement(), None),
                                            (Placement(), [1.0, 0.9, 0.8, 0.7, 0.6])])
def test_a_deep_queue_of_every_job(general, bound):
    """Two 1-GPU nodes, one managed until 100: every job waits (the 2-node head from 0, the
    four 1-node ones (500 s) behind it may not delay it): five queue positions. The head runs
    100-110, then jobs 1 and 2 (110-610), then jobs 3 and 4. With a bound per job (below the
    factor, 1.0): five (size, bound) combinations of two sizes, the same schedule."""
    m = model(nodes=2, gpus=1, timeline=[(0, 1), (100, 2)])
    w = work([(0, 10, 10, 2, 1)] + [(0, 500, 500, 1, 1)] * 4)
    run = run_gpu(w, m, "easy", general, min_factor=bound, compiled=False)
    assert run.start.tolist() == [100, 110, 110, 610, 610]
    assert run.node_masks() == [0b11, 1, 2, 1, 2]


@pytest.mark.parametrize("general", [None, Placement()])
def test_free_gpus_fewer_than_any_waiting_size_start_nothing(general):
    """One node of 4 GPUs: job 0 holds 3 until 100, job 1 (4 GPUs, 10 s) heads the queue, job 2
    (3 GPUs, 10 s) waits behind it: the free GPU fits no waiting job; job 1 runs at 100, job 2
    at 110."""
    w = work([(0, 100, 100, 1, 3), (0, 10, 10, 1, 4), (0, 10, 10, 1, 3)])
    run = run_gpu(w, model(nodes=1, gpus=4), "easy", general, compiled=False)
    assert run.start.tolist() == [0, 100, 110]
    assert run.gpu_masks() == [0b111, 0b1111, 0b111]


def test_no_job():
    w = work([])
    for general, placement in ((False, None), (True, Placement())):
        run = run_gpu(w, model(), "easy", placement)
        assert run.start.tolist() == [] and run.node_sets == [] and run.gpu_sets == []
        assert run.dropped == []
        if general:
            assert run.runtime.tolist() == [] and run.estimate.tolist() == []
            assert run.runtime.dtype == np.int64
        else:
            assert run.runtime is None and run.estimate is None


# --- which engine runs -----------------------------------------------------------------------
def _jobs(n):
    return work([(k, 10, 10, 1, 1) for k in range(n)])


def test_the_size_threshold_picks_the_twin(monkeypatch):
    monkeypatch.setattr(engine_gpu, "COMPILED_MIN_JOBS", 3)
    m = model(nodes=2, gpus=1)
    assert run_gpu(_jobs(3), m, "easy").node_sets is None
    assert run_gpu(_jobs(2), m, "easy").node_sets is not None
    assert run_gpu(_jobs(3), m, "easy", compiled=False).node_sets is not None
    assert run_gpu(_jobs(2), m, "easy", compiled=True).node_sets is None
    # the general path: engine_general's twin for the built-in placements, Python otherwise
    assert run_gpu(_jobs(3), m, "easy", Placement()).node_sets is None
    assert run_gpu(_jobs(2), m, "easy", Placement()).node_sets is not None
    assert run_gpu(_jobs(3), m, "easy", Watching()).node_sets is not None
    # moldable jobs: Python, whatever the size
    assert run_gpu(_jobs(3), m, "easy", mold=lambda j, bound: None).node_sets is not None


def half(key, models, s_min, nodes, racks, per_node, params):  # pragma: no cover (compiled)
    return params[0]


@pytest.mark.parametrize("bound, starts", [(None, [0, 100, 0]), (1.0, [0, 100, 150])])
def test_the_general_twin_gets_the_policy_factor_kernel_and_bound(bound, starts):
    """The case of ``test_a_bound_above_one_job_estimate_hides_it`` on ``engine_general``'s
    twin, a keyed factor of 0.5 given with its kernel: the runs halved, job 2 backfilled at 0
    under EASY with no bound (0), hidden with a bound of 1.0; FCFS keeps queue order."""
    w = work([(0, 200, 200, 1, 1), (0, 100, 100, 1, 2), (0, 150, 150, 1, 1)])
    machine = dataclasses.replace(PlacementInputs().resolved(1, 2), factor_by_key=True)
    factor = lambda j, nodes, gpus: 0 if nodes is None else 0.5  # noqa: E731
    kernel = FactorKernel(half, np.array([0.5]), np.zeros(3, dtype=np.int64))
    m = model(nodes=1, gpus=2)
    run = run_gpu(w, m, "easy", Placement(machine), factor, bound, compiled=True,
                  factor_kernel=kernel)
    assert run.node_sets is None  # the twin ran
    assert run.runtime.tolist() == [100, 50, 75] and run.start.tolist() == starts
    fcfs = run_gpu(w, m, "fcfs", Placement(machine), factor, bound, compiled=True,
                   factor_kernel=kernel)
    assert fcfs.node_sets is None and fcfs.start.tolist() == [0, 100, 150]


def test_without_the_twin_the_fast_path_runs_in_python():
    with mock.patch.object(engine_gpu, "load", return_value=None) as load:
        run = run_gpu(_jobs(3), model(nodes=2, gpus=1), "easy", compiled=True)
    assert run.node_sets is not None and run.start.tolist() == [0, 1, 10]
    assert load.call_args.args == ("swftools.replay._engine_gpu", "the GPU replay")


def test_a_workload_the_twin_cannot_hold_runs_in_python():
    w = work([(0, 10, 10, 1, 1), (1 << 61, 10, 10, 1, 1)])
    run = run_gpu(w, model(nodes=1, gpus=1), "easy", compiled=True)
    assert run.node_sets is not None and run.start.tolist() == [0, 1 << 61]


# --- compiled_fits ---------------------------------------------------------------------------
class Timeline:
    """A model with only what ``compiled_fits`` reads."""

    def __init__(self, gpus_per_node=1, changes=((0, 1),)):
        self.gpus_per_node = gpus_per_node
        self.changes = list(changes)

    def capacity_changes(self):
        return self.changes


def test_compiled_fits_gpus_per_node_up_to_a_word():
    w = _jobs(2)
    assert compiled_fits(w, Timeline(COMPILED_MAX_BITS))
    assert not compiled_fits(w, Timeline(COMPILED_MAX_BITS + 1))
    assert COMPILED_MAX_BITS == 62
    assert not compiled_fits(_jobs(0), Timeline())


def test_compiled_fits_up_to_62_distinct_sizes():
    w = work([(0, 1, 1, 1, s) for s in range(1, 63)])
    assert compiled_fits(w, Timeline())
    assert compiled_fits(w, Timeline(), np.arange(1, 63))
    assert not compiled_fits(w, Timeline(), np.arange(1, 64))  # the sizes given are used
    w = work([(0, 1, 1, 1, s) for s in range(1, 64)])
    assert not compiled_fits(w, Timeline())
    assert compiled_fits(w, Timeline(), np.arange(1, 3))


def test_compiled_fits_keys_up_to_the_last_capacity_change():
    """One job (keys shifted by 1): the latest key is the last change (or submit) + run +
    estimate, which must stay below 2**61."""
    w = work([(0, 10, 10, 1, 1)])
    limit = 1 << 61
    assert compiled_fits(w, Timeline(changes=[(0, 1), (limit - 21, 2), (5, 3)]))
    assert not compiled_fits(w, Timeline(changes=[(0, 1), (limit - 20, 2), (5, 3)]))
    assert not compiled_fits(w, Timeline(changes=[(limit - 20, 2)]))


def test_flat_nodes_run_the_general_path_as_one_gpu_nodes():
    """A flat pool of 3 processors seen as 3 one-GPU nodes: a job of 2 processors holds two
    nodes; EASY backfills a 1-processor job at 0 and a 2-processor one when it ends (50), both
    ending by the head's start (100)."""
    w = work([(0, 100, 100, 1, 1), (0, 10, 10, 3, 1), (0, 50, 50, 1, 1), (0, 50, 50, 2, 1)])
    run = run_gpu(w, FlatNodes(3), "easy", Placement(), compiled=False)
    assert run.start.tolist() == [0, 100, 0, 50]
    assert run.node_masks() == [1, 0b111, 2, 0b110]


# --- the fast path (and its compiled twin) against the reference -------------------------------
@settings(max_examples=examples(25), deadline=None)
@given(replay_gpu_jobs(max_jobs=25), st.sampled_from(["easy", "fcfs"]),
       st.sampled_from(["first-fit", "best-fit"]), st.booleans())
def test_fast_path_matches_the_reference(case, policy, allocation, twin):
    table, site = case
    m = GpuNodes(site, allocation)
    w = prepare(table, m)
    run = run_gpu(w, m, policy, compiled=twin)
    assert (run.node_sets is None) == (twin and len(w) > 0)
    assert engine(run) == reference(w, m, policy)


@settings(max_examples=examples(25), deadline=None)
@given(replay_gpu_jobs(max_jobs=25, tie_grid=100), st.sampled_from(["first-fit", "best-fit"]),
       st.booleans())
def test_fast_path_matches_the_reference_at_shadow_ties(case, allocation, twin):
    """Times on a 100 s grid: ends, arrivals and estimated ends at the shadow time."""
    table, site = case
    m = GpuNodes(site, allocation)
    w = prepare(table, m)
    assert engine(run_gpu(w, m, "easy", compiled=twin)) == reference(w, m, "easy")
