"""``engine_gpu.run_gpu``'s Python engine against the textbook reference scheduler of
``test_replay_reference`` (which rebuilds the whole state at every event; with placements and
run-time factors, ``test_replay_placement``'s extension of it), and hand-worked schedules: the
capacity timeline, dropped heads, moldable jobs, the queue-watching hook, bad factors; which
engine ``run_gpu`` runs; and what ``compiled_fits`` admits."""

from __future__ import annotations

import dataclasses
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import UsageError
from swftools.replay import engine_gpu
from swftools.replay.engine_gpu import (COMPILED_MAX_BITS, compiled_fits, never_fits_again,
                                        run_gpu)
from swftools.replay.factors import FactorKernel
from swftools.replay.model import FlatNodes, GpuNodes, TrackedGpuState
from swftools.replay.placement import BestFit, Placement, PlacementInputs, make_placement
from swftools.replay.workload import Workload, prepare

from .replay_support import Watching
from .strategies import examples, placement_gpu_cases, replay_gpu_jobs
from .test_replay import gpu_site
from .test_replay_placement import make_factor, reference_placed
from .test_replay_reference import Job, Nodes, simulate


def work(rows) -> Workload:
    """A workload of (submit, run, estimate, nodes, GPUs per node) jobs in queue order (job ids
    1, 2, ...), taken as given (no job is checked against the site)."""
    n = len(rows)

    def col(values):
        return np.array(list(values), dtype=np.int64).reshape(n)

    return Workload(row=np.arange(n, dtype=np.int64), job_id=np.arange(1, n + 1, dtype=np.int64),
                    submit=col(r[0] for r in rows), runtime=col(r[1] for r in rows),
                    estimate=col(r[2] for r in rows), size=col(r[3] * r[4] for r in rows),
                    nodes=col(r[3] for r in rows), gpus_per_node=col(r[4] for r in rows),
                    skipped_row=np.zeros(0, dtype=np.int64), skipped_reason=[])


def model(nodes=2, gpus=4, timeline=None, allocation="first-fit") -> GpuNodes:
    return GpuNodes(gpu_site(nodes=nodes, gpus=gpus, timeline=timeline), allocation)


def ids(mask: int) -> tuple[int, ...]:
    return tuple(k for k in range(mask.bit_length()) if mask >> k & 1)


def reference(w: Workload, m: GpuNodes, policy: str):
    """(start, node ids, GPU ids) per queue position (None: dropped) by the reference."""
    site = m.site
    jobs = [Job(q, int(w.submit[q]), int(w.runtime[q]), int(w.estimate[q]), int(w.nodes[q]),
                int(w.gpus_per_node[q])) for q in range(len(w))]
    machine = Nodes(site.gpus_per_node, list(zip(site.capacity_since, site.capacity_nodes)),
                    best_fit=m.allocation == "best-fit")
    done, dropped = simulate(jobs, machine, policy)
    assert set(done) | set(dropped) == set(range(len(w)))
    return [None if q in dropped else (done[q].start, done[q].node_ids, done[q].gpu_ids)
            for q in range(len(w))]


def engine(run) -> list:
    gone = {j for j, _ in run.dropped}
    return [None if q in gone else (s, ids(n), ids(g)) for q, (s, n, g) in
            enumerate(zip(run.start.tolist(), run.node_masks(), run.gpu_masks()))]


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
    """The EASY case above (one node of 4 GPUs): job 3 backfills at 0, so job 1 is chosen at
    100 with jobs 1 and 2 waiting, job 2 at 150 with itself."""
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
