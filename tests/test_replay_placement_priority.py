"""``priority`` (the seed's strict median split) and ``priority-wc`` (work-conserving), worked by
hand (issue 25, item 2).

The machine of the hand-worked states: 4 nodes x 2 GPUs, nodes 0-1 P100 (model 0, speed 1.0),
nodes 2-3 V100 (model 1, speed 1.5); every GPU the same score and class, so inside a node the
fast GPU order is GPU 0, 1 and the slow order GPU 1, 0. Gains in queue order: job 0 OD 1.24,
job 1 SA 1.31, job 2 IC 1.51, job 3 1.60; the median is 1.41, so jobs 0 and 1 are at or below it.
"""

from __future__ import annotations

import pytest

from swftools.replay import PlacementInputs, replay
from swftools.replay.placement import make_placement

from .test_replay_placement import as_state

P100, V100 = (0, 1), (2, 3)
GAINS = [1.24, 1.31, 1.51, 1.60]
ONE_GPU, TWO_GPUS, TWO_NODES = (1, 1), (1, 2), (2, 2)  # (nodes, GPUs per node)
INPUTS = PlacementInputs(gpu_model=[0, 0, 1, 1], model_speed=[1.0, 1.5])


def placed(name, free, j, shape, *, gains=GAINS, waiting=(), shapes=None):
    """(nodes, GPUs) that policy ``name`` gives job ``j`` of ``shape`` on ``free`` (per node,
    per GPU: free?) with the jobs ``waiting`` (queue indices) of ``shapes``."""
    p = make_placement(name, INPUTS.resolved(4, 2), gains)
    st = as_state([list(row) for row in free], 4, 2)
    p.start(st, None)
    if name == "priority-wc":
        shapes = shapes or {}
        p.shapes = ([shapes.get(q, ONE_GPU)[0] for q in range(len(gains))],
                    [shapes.get(q, ONE_GPU)[1] for q in range(len(gains))])
        p.set_waiting(waiting)
    node_set, gpus = p.choose(st, j, *shape)
    return ([k for k in range(4) if node_set >> k & 1], [i for i in range(2) if gpus >> i & 1])


ALL_FREE = [[True, True]] * 4
P100_BUSY = [[False, False], [False, False], [True, True], [True, True]]


@pytest.mark.parametrize("j", [0, 1])
def test_the_issue_case_strict_sends_median_jobs_to_p100_while_v100s_idle(j):
    # OD (1.24) and SA (1.31) are at or below the median 1.41: the strict split puts them on the
    # slowest node that fits (P100 node 0) and its slowest GPU (1) although both V100s are idle;
    # the work-conserving variant gives them the idle V100 (node 2, GPU 0): no one waits for it
    assert placed("priority", ALL_FREE, j, ONE_GPU) == ([0], [1])
    assert placed("priority-wc", ALL_FREE, j, ONE_GPU) == ([2], [0])


def test_above_the_median_both_variants_take_the_fastest():
    assert placed("priority", ALL_FREE, 3, ONE_GPU) == ([2], [0])
    assert placed("priority-wc", ALL_FREE, 3, ONE_GPU) == ([2], [0])


def test_equal_gains_strict_puts_everyone_on_the_slow_side_wc_on_the_fast():
    equal = [1.3] * 4
    assert placed("priority", ALL_FREE, 0, ONE_GPU, gains=equal) == ([0], [1])
    # waiting jobs of equal gain claim nothing: job 0 still takes the fastest
    assert placed("priority-wc", ALL_FREE, 0, ONE_GPU, gains=equal, waiting=[1, 2, 3],
                  shapes={q: TWO_GPUS for q in (1, 2, 3)}) == ([2], [0])


def test_waiting_higher_gain_jobs_claim_the_v100s():
    # job 3 (1.60) claims V100 node 2, then job 2 (1.51) V100 node 3 (2 GPUs each): job 0 takes
    # the fastest unclaimed node, P100 node 0, and its fastest GPU
    shapes = {2: TWO_GPUS, 3: TWO_GPUS}
    assert placed("priority-wc", ALL_FREE, 0, ONE_GPU, waiting=[2, 3],
                  shapes=shapes) == ([0], [0])


def test_one_waiting_higher_gain_job_leaves_the_other_v100_free_for_job_0():
    # job 3 claims node 2 only: node 3 (V100) is unclaimed and job 0 takes it
    assert placed("priority-wc", ALL_FREE, 0, ONE_GPU, waiting=[3],
                  shapes={3: TWO_GPUS}) == ([3], [0])
    # a waiting job of lower gain claims nothing: job 0 (1.24) waiting leaves job 1 (1.31) the
    # fastest GPU
    assert placed("priority-wc", ALL_FREE, 1, ONE_GPU, waiting=[0],
                  shapes={0: TWO_GPUS}) == ([2], [0])


def test_everything_claimed_the_job_still_starts_on_the_slowest():
    # P100s busy; jobs 2 and 3 claim both V100 nodes: job 0 does not wait, it takes the slowest
    # node that fits (V100 tier only, node 2) and its slowest GPU
    assert placed("priority-wc", P100_BUSY, 0, ONE_GPU, waiting=[2, 3],
                  shapes={2: TWO_GPUS, 3: TWO_GPUS}) == ([2], [1])
    # with only job 3 waiting, node 3 stays unclaimed
    assert placed("priority-wc", P100_BUSY, 0, ONE_GPU, waiting=[3],
                  shapes={3: TWO_GPUS}) == ([3], [0])


def test_a_waiting_job_that_does_not_fit_now_claims_nothing():
    # job 3 needs 2 whole nodes; only node 2 is whole and free: it claims nothing, job 0 takes
    # the fastest free GPU (node 2, GPU 0)
    free = [[False, False], [False, False], [True, True], [True, False]]
    assert placed("priority-wc", free, 0, ONE_GPU, waiting=[3],
                  shapes={3: TWO_NODES}) == ([2], [0])


def test_multi_node_jobs():
    assert placed("priority", ALL_FREE, 0, TWO_NODES) == ([0, 1], [0, 1])
    assert placed("priority-wc", ALL_FREE, 0, TWO_NODES) == ([2, 3], [0, 1])
    # job 3 (1 node x 2 GPUs) claims node 2: the V100 tier has one whole node left, so job 0
    # takes the fastest unclaimed whole nodes: node 3 and P100 node 0
    assert placed("priority-wc", ALL_FREE, 0, TWO_NODES, waiting=[3],
                  shapes={3: TWO_GPUS}) == ([0, 3], [0, 1])


# --- on the replay engine --------------------------------------------------------------------
def _replay(name, rows, gains):
    from .test_replay import gpu_site, gpu_table

    inputs = PlacementInputs(gpu_model=[0, 1], model_speed=[1.0, 1.5], gain=gains)

    def factor(row, nodes, gpus):  # run time / speed of the GPU held
        return 1.0 / inputs.model_speed[inputs.gpu_model[nodes[0]]]

    r = replay(gpu_table(rows), site=gpu_site(nodes=2, gpus=1), placement=name,
               placement_inputs=inputs, runtime_factor=factor)
    return r.jobs.column("node_ids").to_pylist(), r.jobs.column("run_s").to_pylist()


def test_one_job_class_strict_leaves_the_v100_idle():
    # one P100 node (0) and one V100 node (1); two one-GPU jobs one after the other, equal gains
    rows = [(1, 0, 150, 1, 1, 150), (2, 200, 150, 1, 1, 150)]
    assert _replay("priority", rows, [1.5, 1.5]) == (["0", "0"], [150, 150])
    assert _replay("priority-wc", rows, [1.5, 1.5]) == (["1", "1"], [100, 100])


def test_a_higher_gain_arrival_in_the_same_instant_gets_the_v100():
    # both submitted at 0, job 1 (OD 1.24) first in the queue: job 2 (IC 1.51) is waiting when
    # job 1 is placed and claims the V100
    rows = [(1, 0, 150, 1, 1, 150), (2, 0, 150, 1, 1, 150)]
    assert _replay("priority-wc", rows, [1.24, 1.51]) == (["0", "1"], [150, 100])
    # job 2 arriving later is not waiting yet: job 1 takes the idle V100, job 2 the P100
    rows = [(1, 0, 150, 1, 1, 150), (2, 10, 150, 1, 1, 150)]
    assert _replay("priority-wc", rows, [1.24, 1.51]) == (["1", "0"], [100, 150])
    assert _replay("priority", rows, [1.24, 1.51]) == (["0", "1"], [150, 100])
