"""Why ``pm-first`` and ``pal`` wait so much longer than ``packed`` on the bundled sample (issue
25): hand-worked replays of the two causes, each following a stated rule.

1. PM-First's rule (PAL, SC'24): a 1-GPU job takes the best-ranked free GPU wherever it is, so
   1-GPU jobs spread over nodes and a job that needs a whole node waits for one to drain.
2. EASY as the engine runs it: a backfill candidate gets its placement's one choice, refused when
   it holds GPUs the blocked head needs at the shadow time; the engine does not ask for another
   placement, so the candidate waits even when a free GPU outside the reservation exists.
"""

from __future__ import annotations

from swftools.replay import PlacementInputs, replay

from .test_replay import gpu_site, gpu_table

# 2 nodes x 2 GPUs; variability 1 / score ranks (1,0) < (0,0) < (0,1) = (1,1) (lower node on ties)
SCORES = [[1.1, 1.0], [1.2, 1.0]]


def _run(rows, placement):
    return replay(gpu_table(rows), site=gpu_site(nodes=2, gpus=2), placement=placement,
                  placement_inputs=PlacementInputs(score=SCORES))


def _starts(result):
    return result.jobs.column("start_time").to_pylist()


def test_pm_first_spreads_one_gpu_jobs_so_a_whole_node_job_waits():
    # two 1-GPU jobs at t=0 (run 100), then a 1-node x 2-GPU job at t=1 (run 10)
    rows = [(1, 0, 100, 1, 1, 100), (2, 0, 100, 1, 1, 100), (3, 1, 10, 1, 2, 10)]
    packed = _run(rows, "packed")
    assert packed.jobs.column("node_ids").to_pylist() == ["0", "0", "1"]
    assert _starts(packed) == [0, 0, 1]  # node 1 stays whole: no wait
    pm = _run(rows, "pm-first")
    # job 1 on (1,0), the best GPU; job 2 on (0,0), the next best: one GPU free on each node
    assert pm.jobs.column("node_ids").to_pylist() == ["1", "0", "0"]
    assert pm.jobs.column("gpu_ids").to_pylist()[:2] == ["0", "0"]
    assert _starts(pm) == [0, 0, 100]  # the 2-GPU job waits for a node to drain


def test_easy_refuses_the_placements_one_choice_without_asking_for_another():
    # t=0: job 1 (run 100) on (1,0), job 2 (run 50) on (0,0). t=1: job 3 needs a whole node:
    # blocked head, shadow 50 on node 0 (its only fitting node, no spare). t=2: job 4 (1 GPU,
    # 1,000 s, past the shadow): PM-First picks (0,1) (tie with (1,1), lower node), on the
    # reserved node 0 -> refused. (1,1) would not delay job 3, but the engine does not ask the
    # placement again; job 4 starts at 50, after job 3 took node 0, on (1,1).
    rows = [(1, 0, 100, 1, 1, 100), (2, 0, 50, 1, 1, 50), (3, 1, 10, 1, 2, 10),
            (4, 2, 1000, 1, 1, 1000)]
    pm = _run(rows, "pm-first")
    assert _starts(pm) == [0, 0, 50, 50]
    assert pm.jobs.column("node_ids").to_pylist() == ["1", "0", "0", "1"]
    assert pm.jobs.column("gpu_ids").to_pylist()[3] == "1"
