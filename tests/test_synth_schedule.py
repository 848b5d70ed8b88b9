"""The synthetic generator's scheduler: feasibility and prefix independence on random job lists."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from swftools.synth.schedule import schedule
from .strategies import synth_job_lists as job_lists


def _run(n_nodes, per_node_max, cols, placements=None):
    submit, nodes, per, run, cancel = cols
    return schedule(submit, nodes, per, run, cancel, n_nodes, per_node_max, placements)


@given(job_lists())
def test_schedule_is_feasible_per_gpu_and_per_node(case):
    n_nodes, per_node_max, cols = case
    submit, nodes, per, run, cancel = cols
    placements: list = []
    start, finish = _run(n_nodes, per_node_max, cols, placements)
    busy = defaultdict(list)
    for i, gpus in enumerate(placements):
        assert start[i] >= submit[i]
        if cancel[i] >= 0 and not gpus:  # cancelled while waiting: never ran
            assert start[i] == finish[i] == cancel[i]
            continue
        expected_end = start[i] + run[i] if cancel[i] < 0 else min(start[i] + run[i], cancel[i])
        assert finish[i] == expected_end
        assert len(gpus) == nodes[i] * per[i] and len(set(gpus)) == len(gpus)
        used_nodes = {node for node, _ in gpus}
        assert len(used_nodes) == nodes[i]  # whole job on `nodes` distinct nodes
        if nodes[i] > 1:  # multi-node jobs hold every GPU of their nodes
            assert sorted(gpus) == sorted((n, g) for n in used_nodes for g in range(per_node_max))
        for gpu in gpus:
            assert 0 <= gpu[0] < n_nodes and 0 <= gpu[1] < per_node_max
            busy[gpu].append((start[i], finish[i]))
    for intervals in busy.values():  # a GPU runs one job at a time
        intervals.sort()
        for (_, end), (begin, _) in zip(intervals, intervals[1:]):
            assert begin >= end


@given(job_lists(), st.integers(0, 59))
def test_a_start_depends_only_on_earlier_jobs(case, cut):
    n_nodes, per_node_max, cols = case
    cut = min(cut, len(cols[0]))
    whole = _run(n_nodes, per_node_max, cols)
    prefix = _run(n_nodes, per_node_max, [c[:cut] for c in cols])
    assert np.array_equal(whole[0][:cut], prefix[0])
    assert np.array_equal(whole[1][:cut], prefix[1])


def test_a_free_cluster_starts_jobs_at_submission():
    submit = np.array([10, 20, 30], dtype=np.int64)
    start, finish = schedule(submit, np.array([1, 2, 1]), np.array([1, 8, 8]),
                             np.array([5, 5, 5]), np.array([-1, -1, -1]), 2, 8)
    assert start.tolist() == [10, 20, 30] and finish.tolist() == [15, 25, 35]


def test_jobs_wait_for_gpus_and_multi_node_jobs_for_whole_nodes():
    # an 8-GPU job fills node 0 until 100, two 1-GPU jobs share node 1 (best fit) until 81;
    # the 2-node job needs both nodes whole, so it waits until 100
    submit = np.array([0, 0, 1, 2], dtype=np.int64)
    nodes = np.array([1, 1, 1, 2])
    per = np.array([8, 1, 1, 8])
    run = np.array([100, 50, 80, 10])
    start, finish = schedule(submit, nodes, per, run, np.full(4, -1), 2, 8)
    assert start.tolist() == [0, 0, 1, 100]
    assert finish.tolist() == [100, 50, 81, 110]


def test_a_job_cancelled_before_it_could_start_never_runs():
    submit = np.array([0, 5], dtype=np.int64)
    start, finish = schedule(submit, np.array([1, 1]), np.array([1, 1]), np.array([100, 100]),
                             np.array([-1, 50]), 1, 1)
    assert start.tolist() == [0, 50] and finish.tolist() == [100, 50]
