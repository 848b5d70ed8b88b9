"""swftools.replay.compare: the consistency report of a recorded schedule against a replay."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from scipy.stats import ks_2samp

from swftools import table as jt
from swftools.replay import replay
from swftools.replay.compare import compare, render_text

from .strategies import replay_swf_jobs


def recorded(rows, **extra):
    """rows: (job id, submit, start, run, procs, request[, queue])."""
    cols = {"job_id": [r[0] for r in rows], "submit_time": [r[1] for r in rows],
            "start_time": [r[2] for r in rows], "finish_time": [r[2] + r[3] for r in rows],
            "wait_s": [r[2] - r[1] for r in rows], "walltime_s": [r[3] for r in rows],
            "gpus": [r[4] for r in rows], "requested_walltime_s": [r[5] for r in rows],
            "queue": [r[6] if len(r) > 6 else "1" for r in rows]}
    cols.update(extra)
    return jt.from_columns(cols)


def report_of(table, procs=4):
    return compare(table, replay(table, procs=procs))


def impossible(report):
    return {f["job_id"]: f["reason"] for f in report["impossible_starts"]["list"]}


def test_recorded_easy_schedule_is_possible():
    # the third hand case as recorded: job 3 backfills legally at 2
    table = recorded([(1, 0, 0, 100, 3, 100), (2, 1, 100, 100, 4, 100), (3, 2, 2, 50, 1, 50)])
    rep = report_of(table)
    assert impossible(rep) == {}
    assert rep["capacity_violations"]["periods"] == 0


def test_backfill_that_delays_the_head_is_impossible():
    # first hand case, recorded with job 3 jumping ahead at 2 although it runs past the head's
    # reservation (100) and the head needs every processor then
    table = recorded([(1, 0, 0, 100, 3, 100), (2, 1, 100, 100, 4, 100), (3, 2, 2, 500, 1, 500)])
    rep = report_of(table)
    # ... and job 2 then starts at 100 while job 3 still holds a processor: no room
    assert impossible(rep) == {3: "delays-head", 2: "no-room"}
    detail = rep["impossible_starts"]["list"][0]["detail"]
    assert detail == "behind job 2, ends after its reservation at 100 and needs 1 of 0 spare"
    assert rep["capacity_violations"]["periods"] == 1
    assert rep["capacity_violations"]["list"][0] == {
        "start_time": 100, "end_time": 200, "peak_busy": 5, "capacity": 4, "max_excess": 1}


def test_no_room_and_before_submit():
    table = recorded([(1, 0, 0, 100, 3, 100), (2, 0, 10, 100, 2, 100), (3, 50, 40, 10, 1, 10)])
    rep = report_of(table)
    assert impossible(rep) == {2: "no-room", 3: "before-submit"}
    by = rep["impossible_starts"]["by_reason"]
    assert by == {"before-submit": 1, "no-room": 1, "delays-head": 0}
    details = {f["job_id"]: f["detail"] for f in rep["impossible_starts"]["list"]}
    assert details == {2: "needs 2, 1 free", 3: "starts 10 s before its submission"}


def test_distributions_per_queue_with_ks():
    rows = [(1, 0, 0, 100, 4, 100, "a"), (2, 0, 300, 100, 4, 100, "a"),
            (3, 0, 100, 100, 4, 100, "b"), (4, 0, 200, 50, 4, 50, "b")]
    table = recorded(rows)
    result = replay(table, procs=4)
    rep = compare(table, result)
    dist = rep["distributions"]
    assert list(dist) == ["(all)", "a", "b"]
    rec_wait = [0, 300, 100, 200]
    rep_wait = dict(zip(result.jobs.column("job_id").to_pylist(),
                        result.jobs.column("wait_s").to_pylist()))
    assert dist["(all)"]["wait_s"]["recorded"]["mean"] == 150
    expected = ks_2samp(rec_wait, [rep_wait[i] for i in (1, 2, 3, 4)]).statistic
    assert dist["(all)"]["wait_s"]["ks"]["statistic"] == pytest.approx(expected)
    assert dist["a"]["jobs"] == 2 and dist["b"]["jobs"] == 2


def test_utilization_bins():
    day = 86_400
    table = recorded([(1, 0, 0, day, 4, day), (2, 0, day, day // 2, 2, day)])
    rep = compare(table, replay(table, procs=4), bin_s=day)
    bins = rep["utilization"]["bins"]
    assert [b["start_time"] for b in bins] == [0, day]
    assert bins[0]["recorded"] == 1.0 and bins[1]["recorded"] == 0.25
    assert bins == [{"start_time": 0, "recorded": 1.0, "replayed": 1.0},
                    {"start_time": day, "recorded": 0.25, "replayed": 0.25}]


def test_text_and_json_rendering():
    table = recorded([(1, 0, 0, 100, 3, 100), (2, 1, 100, 100, 4, 100), (3, 2, 2, 500, 1, 500)])
    rep = report_of(table)
    text = render_text(rep)
    assert "Capacity violations in the recorded schedule: 1 period" in text
    assert "Recorded starts impossible under FCFS + EASY: 2" in text
    assert "job 3 at 2: delays-head" in text
    assert json.loads(json.dumps(rep)) == rep


@given(replay_swf_jobs(min_run_s=1))
@settings(max_examples=60)
def test_an_easy_replay_is_a_possible_recorded_schedule(case):
    """Our own EASY schedule, taken as the recorded one, has no impossible start and never
    exceeds capacity; the distributions then coincide (KS statistic 0)."""
    table, procs = case
    first = replay(table, procs=procs)
    assume(first.jobs.num_rows > 0)
    rows = first.jobs.to_pylist()
    requests = dict(zip(table.column("job_id").to_pylist(),
                        table.column("requested_walltime_s").to_pylist()))
    as_recorded = recorded([(r["job_id"], r["submit_time"], r["start_time"], r["run_s"], r["size"],
                             requests[r["job_id"]]) for r in rows])
    rep = compare(as_recorded, replay(as_recorded, procs=procs))
    assert rep["impossible_starts"]["jobs"] == 0, rep["impossible_starts"]["list"]
    assert rep["capacity_violations"]["periods"] == 0
    assert rep["distributions"]["(all)"]["wait_s"]["ks"]["statistic"] == 0


def test_recorded_jobs_and_replay_use_one_job_size():
    """Allocated (field 5) and requested (field 8) processors differ: the recorded schedule of the
    comparison and the replay both take the requested size (the one rule, ``job_size``)."""
    from swftools.replay.compare import recorded_jobs
    from swftools.replay.workload import job_size

    table = recorded([(1, 0, 0, 100, 4, 100), (2, 0, 0, 100, 2, 100), (3, 0, 100, 10, 3, 10)],
                     requested_procs=[1, None, 0])
    size, known = job_size(table)
    assert size.tolist() == [1, 2, 3] and known.tolist() == [True, True, True]
    rec = recorded_jobs(table)
    result = replay(table, procs=4)
    replayed = dict(zip(result.jobs.column("job_id").to_pylist(),
                        result.jobs.column("size").to_pylist()))
    assert dict(zip(rec["job_id"].tolist(), rec["units"].tolist())) == replayed == {1: 1, 2: 2, 3: 3}
    # 1 + 2 units fit in 4 (allocated-first would have been 4 + 2 = 6, a violation)
    assert compare(table, result)["capacity_violations"]["periods"] == 0
