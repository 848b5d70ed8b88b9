"""swftools.replay: pinned input rules, GPU node model, summary and output files."""

from __future__ import annotations

import json

import jsonschema
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings

from swftools import table as jt
from swftools.errors import UsageError
from swftools.replay import replay, resource_model
from swftools.replay.model import FlatPool, GpuNodes
from swftools.replay.result import summary_schema
from swftools.site import site_from_settings

from .strategies import replay_gpu_jobs, replay_swf_jobs
from .test_replay_reference import Flat, Job, Nodes, flat_table, simulate, starts


def gpu_site(nodes=2, gpus=4, timeline=None, **settings):
    """A one-queue GPU site; ``timeline``: (since, nodes) with ISO 8601 text or UTC epoch
    seconds; ``settings`` override the site's own (``name``, ``multi_node_whole_nodes``)."""
    from datetime import datetime, timezone

    timeline = timeline or [("1970-01-01T00:00:00+00:00", nodes)]
    return site_from_settings({
        "name": "t", "time_zone": "UTC", "gpus_per_node": gpus,
        "capacity_timeline": [{"since": s if isinstance(s, str) else
                               datetime.fromtimestamp(s, timezone.utc).isoformat(), "nodes": n}
                              for s, n in timeline],
        "queues": [{"name": "q", "number": 1, "nodes_min": 1, "nodes_max": 8,
                    "gpus_per_node_min": 1, "gpus_per_node_max": gpus,
                    "walltime_default_s": 60, "walltime_max_s": 10**6}], **settings})


def gpu_table(rows):
    """rows: (job id, submit, run, nodes, gpus per node, request)."""
    return jt.from_columns({
        "job_id": [r[0] for r in rows], "submit_time": [r[1] for r in rows],
        "walltime_s": [r[2] for r in rows], "nodes": [r[3] for r in rows],
        "gpus_per_node": [r[4] for r in rows], "gpus": [r[3] * r[4] for r in rows],
        "requested_walltime_s": [r[5] for r in rows]})


# --- pinned input rules ----------------------------------------------------------------------
def test_size_is_requested_processors_else_allocated():
    table = flat_table([(1, 0, 10, 2, 10), (2, 0, 10, 3, 10), (3, 0, 10, 4, 10)],
                       requested_procs=[1, None, 0])
    r = replay(table, procs=8)
    assert r.jobs.column("size").to_pylist() == [1, 3, 4]


def test_estimate_is_request_else_runtime_and_kill_caps_runtime():
    table = flat_table([(1, 0, 50, 1, 20), (2, 0, 30, 1, None)])
    r = replay(table, procs=4)
    assert r.jobs.column("estimate_s").to_pylist() == [20, 30]
    assert r.jobs.column("run_s").to_pylist() == [50, 30]
    killed = replay(table, procs=4, kill_at_request=True)
    assert killed.jobs.column("run_s").to_pylist() == [20, 30]
    assert killed.jobs.column("end_time").to_pylist() == [20, 30]
    assert killed.summary["kill_at_request"] is True


def test_unreplayable_jobs_are_reported_with_a_reason_never_dropped():
    table = flat_table([(1, 0, 10, 1, 10), (2, None, 10, 1, 10), (3, 0, None, 1, 10),
                        (4, 0, 10, None, 10), (5, 0, 10, 9, 10)])
    r = replay(table, procs=8)
    assert r.jobs.column("job_id").to_pylist() == [1]
    reasons = dict(zip(r.skipped.column("job_id").to_pylist(), r.skipped.column("reason").to_pylist()))
    assert reasons == {
        2: "unknown submit time",
        3: "unknown run time",
        4: "unknown size (requested and allocated processors unknown or 0)",
        5: "never fits: needs 9 processors, the machine has 8",
    }
    assert r.summary["skipped"] == 4
    assert r.summary["skipped_by_reason"] == {"never fits": 1, "unknown run time": 1,
                                              "unknown size (requested and allocated processors "
                                              "unknown or 0)": 1, "unknown submit time": 1}


@given(replay_swf_jobs())
@settings(max_examples=50)
def test_every_job_is_replayed_or_skipped(case):
    table, procs = case
    r = replay(table, procs=procs)
    ids = sorted(r.jobs.column("job_id").to_pylist() + r.skipped.column("job_id").to_pylist())
    assert ids == sorted(table.column("job_id").to_pylist())
    assert r.summary["peak_busy"] <= procs
    for row in r.jobs.to_pylist():
        assert row["start_time"] >= row["submit_time"]
        assert row["end_time"] - row["start_time"] == row["run_s"]


# --- event semantics -------------------------------------------------------------------------
def test_ties_are_broken_by_job_id_not_row_order():
    table = flat_table([(7, 0, 10, 1, 10), (3, 0, 10, 1, 10)])
    assert starts(replay(table, procs=1)) == {3: 0, 7: 10}


def test_half_open_intervals_and_zero_length_jobs():
    # job 1 ends at 10, job 2 starts at 10 on the same processor; job 3 runs for 0 s and
    # job 4 still starts at 20 once job 3's end (also at 20) is applied.
    table = flat_table([(1, 0, 10, 1, 10), (2, 0, 5, 1, 5), (3, 20, 0, 1, 0), (4, 20, 5, 1, 5)])
    assert starts(replay(table, procs=1)) == {1: 0, 2: 10, 3: 20, 4: 20}


def test_overdue_running_jobs_count_as_ending_now():
    # At t=20 jobs 1 and 2 are past their estimates (10, 15): both count as ending now, so the
    # head (job 3, 4 procs) has its shadow at 20 with 1 + 3 + 2 - 4 = 2 spare processors and
    # job 4 (1 proc, long) may start at once.
    table = flat_table([(1, 0, 100, 3, 10), (2, 0, 100, 2, 15), (3, 1, 10, 4, 10),
                        (4, 20, 50, 1, 50)])
    assert starts(replay(table, procs=6)) == {1: 0, 2: 0, 3: 100, 4: 20}
    ref, _ = simulate([Job(1, 0, 100, 10, 1, 3), Job(2, 0, 100, 15, 1, 2), Job(3, 1, 10, 10, 1, 4),
                       Job(4, 20, 50, 50, 1, 1)], Flat(6))
    assert {k: p.start for k, p in ref.items()} == {1: 0, 2: 0, 3: 100, 4: 20}


def test_fcfs_never_jumps_the_queue():
    table = flat_table([(1, 0, 100, 3, 100), (2, 1, 100, 4, 100), (3, 2, 50, 1, 50)])
    assert starts(replay(table, procs=4, policy="fcfs")) == {1: 0, 2: 100, 3: 200}


# --- GPU node model --------------------------------------------------------------------------
def test_single_node_jobs_share_nodes_multi_node_jobs_take_whole_nodes():
    table = gpu_table([(1, 0, 100, 1, 1, 100), (2, 0, 100, 1, 2, 100), (3, 0, 100, 2, 4, 100),
                       (4, 1, 100, 1, 4, 100)])
    r = replay(table, site=gpu_site(nodes=3, gpus=4))
    rows = {row["job_id"]: (row["start_time"], row["node_ids"], row["gpu_ids"])
            for row in r.jobs.to_pylist()}
    assert rows == {1: (0, "0", "0"), 2: (0, "0", "1,2"), 3: (0, "1,2", "0,1,2,3"),
                    4: (100, "0", "0,1,2,3")}
    assert r.summary["peak_busy"] == 11
    assert r.summary["unit"] == "GPUs"


def test_best_fit_differs_from_first_fit():
    # job 1 holds node 0 until 10, job 2 holds 3 GPUs of node 1: at 20 node 0 has 4 free GPUs
    # and node 1 has 1. First-fit puts the 1-GPU job 3 on node 0, best-fit on node 1.
    rows = [(1, 0, 10, 1, 4, 10), (2, 0, 100, 1, 3, 100), (3, 20, 50, 1, 1, 50)]
    placed = {}
    for allocation in ("first-fit", "best-fit"):
        r = replay(gpu_table(rows), site=gpu_site(2, 4), allocation=allocation)
        placed[allocation] = {row["job_id"]: (row["node_ids"], row["gpu_ids"])
                              for row in r.jobs.to_pylist()}
        assert r.summary["allocation"] == allocation
    assert placed["first-fit"] == {1: ("0", "0,1,2,3"), 2: ("1", "0,1,2"), 3: ("0", "0")}
    assert placed["best-fit"] == {1: ("0", "0,1,2,3"), 2: ("1", "0,1,2"), 3: ("1", "3")}


def test_reservation_respects_node_shapes():
    # 2 nodes x 4 GPUs. Jobs 1 and 2 (1 GPU each, ending 100 and 200) sit on node 0, job 3
    # (3 GPUs, ending 300) on node 1. The head (job 4, one whole node) fits by GPU count at 100
    # but by shape only at 200, when node 0 is empty. Job 5 (1 GPU, 150 s) ends by 200: it is a
    # legal backfill only because the reservation looks at node shapes.
    rows = [(1, 0, 100, 1, 1, 100), (2, 0, 200, 1, 1, 200), (3, 0, 300, 1, 3, 300),
            (4, 1, 10, 1, 4, 10), (5, 1, 150, 1, 1, 150)]
    r = replay(gpu_table(rows), site=gpu_site(2, 4))
    assert starts(r) == {1: 0, 2: 0, 3: 0, 4: 200, 5: 1}
    machine = Nodes(4, [(0, 2)])
    ref, _ = simulate([Job(i, s, run, req, n, g) for i, s, run, n, g, req in rows], machine)
    assert {k: p.start for k, p in ref.items()} == {1: 0, 2: 0, 3: 0, 4: 200, 5: 1}


def test_capacity_increase_is_an_event_and_drops_are_reported():
    grow = gpu_site(gpus=2, timeline=[("1970-01-01T00:00:00+00:00", 1),
                                      ("1970-01-01T00:16:40+00:00", 2)])  # 2 nodes from t=1000
    r = replay(gpu_table([(1, 10, 50, 2, 2, 50)]), site=grow)
    assert starts(r) == {1: 1000}
    shrink = gpu_site(gpus=2, timeline=[("1970-01-01T00:00:00+00:00", 2),
                                        ("1970-01-01T00:16:40+00:00", 1)])  # 1 node from 1000
    r = replay(gpu_table([(1, 0, 2000, 1, 1, 2000), (2, 5, 50, 2, 2, 50),
                          (3, 2000, 10, 2, 2, 10)]), site=shrink)
    assert starts(r) == {1: 0}
    reasons = dict(zip(r.skipped.column("job_id").to_pylist(), r.skipped.column("reason").to_pylist()))
    assert reasons[2] == "never fits: the site manages at most 1 nodes from 1000 on"
    assert reasons[3].startswith("never fits: needs 2 nodes x 2 GPUs")


def test_gpu_shape_from_size_when_nodes_unknown():
    table = jt.from_columns({"job_id": [1, 2], "submit_time": [0, 0], "walltime_s": [10, 10],
                             "gpus": [3, 16], "requested_walltime_s": [10, 10]})
    r = replay(table, site=gpu_site(nodes=3, gpus=8))
    assert r.jobs.column("nodes").to_pylist() == [1, 2]
    assert r.jobs.column("node_ids").to_pylist() == ["0", "1,2"]


# --- resource model resolution ---------------------------------------------------------------
def test_resource_model_resolution():
    plain = flat_table([(1, 0, 1, 1, 1)])
    with pytest.raises(UsageError, match="neither MaxProcs nor MaxNodes"):
        replay(plain)
    with pytest.raises(UsageError, match="not both"):
        replay(plain, site="aaic", procs=4)
    with pytest.raises(UsageError, match="unknown policy"):
        replay(plain, procs=4, policy="sjf")
    with pytest.raises(UsageError, match="unknown allocation"):
        replay(plain, procs=4, allocation="worst-fit")
    with_header = jt.with_metadata(plain, {"swf_header": [["MaxNodes", "16"], ["MaxProcs", "64 (x)"]]})
    assert resource_model(with_header) == FlatPool(64)
    nodes_only = jt.with_metadata(plain, {"swf_header": [["MaxNodes", "16"]]})
    assert resource_model(nodes_only) == FlatPool(16)
    aaic = jt.with_metadata(plain, {"site": "aaic"})
    model = resource_model(aaic)
    assert isinstance(model, GpuNodes) and model.gpus_per_node == 8
    assert resource_model(aaic, procs=3) == FlatPool(3)


def test_empty_table():
    r = replay(jt.empty(), procs=4)
    assert r.jobs.num_rows == 0 and r.summary["jobs"] == 0 and r.summary["makespan_s"] == 0
    jsonschema.validate(r.summary, summary_schema())


# --- summary and outputs ---------------------------------------------------------------------
def test_summary_figures_on_the_hand_case():
    table = flat_table([(1, 0, 100, 3, 100), (2, 1, 100, 4, 100), (3, 2, 500, 1, 500)])
    s = replay(table, procs=4).summary
    jsonschema.validate(s, summary_schema())
    assert (s["jobs"], s["makespan_s"], s["peak_busy"], s["capacity"]) == (3, 700, 4, 4)
    assert s["mean_wait_s"] == round((0 + 99 + 198) / 3, 3)
    assert s["median_wait_s"] == 99
    bsld = [1.0, (99 + 100) / 100, (198 + 500) / 500]
    assert s["mean_bounded_slowdown"] == round(sum(bsld) / 3, 6)
    assert s["utilization"] == round((300 + 400 + 500) / (4 * 700), 6)


def test_outputs_are_deterministic_atomic_and_not_overwritten(tmp_path):
    table = flat_table([(1, 0, 100, 3, 100), (2, 1, 100, 4, 100), (3, 2, 50, 1, 50)])
    r = replay(table, procs=4)
    r.write(tmp_path / "a")
    replay(table, procs=4).write(tmp_path / "b")
    for name in ("jobs.parquet", "jobs.csv", "skipped.csv", "summary.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    with pytest.raises(UsageError, match="already exists"):
        r.write(tmp_path / "a")
    r.write(tmp_path / "a", force=True)
    assert pq.read_table(tmp_path / "a" / "jobs.parquet").equals(r.jobs)
    assert pacsv.read_csv(tmp_path / "a" / "jobs.csv").column("start_time").to_pylist() == [0, 100, 2]
    assert json.loads((tmp_path / "a" / "summary.json").read_text()) == r.summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # no temporary leftovers


@given(replay_gpu_jobs())
@settings(max_examples=40)
def test_gpu_replay_never_exceeds_capacity(case):
    table, site = case
    r = replay(table, site=site)
    jsonschema.validate(r.summary, summary_schema())
    # per-node GPU use never exceeds the node at any instant
    events = []
    for row in r.jobs.to_pylist():
        gpus = [int(g) for g in row["gpu_ids"].split(",")]
        for node in row["node_ids"].split(","):
            events.append((row["start_time"], row["end_time"], int(node), gpus))
    for t in {e[0] for e in events}:
        held: dict[int, list[int]] = {}
        for s, e, node, gpus in events:
            if s <= t < e:
                held.setdefault(node, []).extend(gpus)
        for node, gpus in held.items():
            assert len(gpus) == len(set(gpus)) <= site.gpus_per_node
            assert node < site.max_nodes


@pytest.mark.parametrize("shape", ["recorded", "gpus"])
@pytest.mark.parametrize("placement", [None, "packed"])
def test_times_from_2_62_s_on_are_replayed_on_gpu_nodes(placement, shape):
    """Times too large for the compiled twins' int64 keys run on the Python engines, which once
    took 2**62 as "no more events" (a capacity-timeline IndexError at the first such time)."""
    big = 1 << 62
    site = gpu_site(nodes=1, gpus=2)
    # (job id, submit, run, nodes, GPUs per node, request): one node of 2 GPUs, so 3 and 4 queue
    table = gpu_table([(1, 0, 1, 1, 1, 1), (2, big, 1, 1, 2, 1), (3, big + 5, 3, 1, 2, 3),
                       (4, big + 5, 1, 1, 2, 1)])
    r = replay(table, site=site, placement=placement, shape=shape)
    assert starts(r) == {1: 0, 2: big, 3: big + 5, 4: big + 8}
    # a run that ends after 2**62: the job behind it starts at its end
    table = gpu_table([(1, 0, big + 10, 1, 2, big + 10), (2, 1, 1, 1, 2, 1)])
    r = replay(table, site=site, placement=placement, shape=shape)
    assert starts(r) == {1: 0, 2: big + 10}


def test_wait_is_start_minus_submit_and_a_flat_pool_lists_no_nodes():
    """A pool of 2 processors, two 2-processor jobs at 5 and 7 (10 s each), FCFS: job 2 starts
    at 15 when job 1 ends, so it waits 8 s; a flat pool has no node columns."""
    r = replay(flat_table([(1, 5, 10, 2, 10), (2, 7, 10, 2, 10)]), procs=2, policy="fcfs")
    assert r.jobs.column("start_time").to_pylist() == [5, 15]
    assert r.jobs.column("wait_s").to_pylist() == [0, 8]
    assert r.jobs.column("end_time").to_pylist() == [15, 25]
    for name in ("nodes", "node_ids", "gpu_ids"):
        assert r.jobs.column(name).to_pylist() == [None, None], name


def test_scaled_run_and_estimate_columns():
    """A run-time factor of 2 (packed): a job of 10 s requesting 30 runs 20 s and is estimated
    at 60; the recorded times stay in ``recorded_run_s`` and ``recorded_estimate_s``."""
    table = gpu_table([(1, 0, 10, 1, 1, 30), (2, 0, 7, 1, 1, 9)])
    r = replay(table, site=gpu_site(nodes=1, gpus=2), placement="packed",
               runtime_factor=lambda row, nodes, gpus: 2.0)
    assert r.jobs.column("run_s").to_pylist() == [20, 14]
    assert r.jobs.column("estimate_s").to_pylist() == [60, 18]
    assert r.jobs.column("end_time").to_pylist() == [20, 14]
    assert r.jobs.column("recorded_run_s").to_pylist() == [10, 7]
    assert r.jobs.column("recorded_estimate_s").to_pylist() == [30, 9]
