"""swftools.replay.compare: the consistency report of a recorded schedule against a replay."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import ks_2samp

from swftools import table as jt
from swftools.replay import replay
from swftools.replay.compare import compare, render_text

from .strategies import replay_swf_jobs
from .test_replay_result import _jobs, _skipped


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


_spans = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 25), st.integers(1, 6)),
                  max_size=12)
_timeline = st.lists(st.tuples(st.integers(-5, 90), st.integers(0, 10)), min_size=1, max_size=4,
                     unique_by=lambda e: e[0]).map(sorted)


def _spans_arrays(spans):
    import numpy as np

    start = np.array([s for s, _, _ in spans], dtype=np.int64)
    finish = start + np.array([d for _, d, _ in spans], dtype=np.int64)
    units = np.array([u for _, _, u in spans], dtype=np.int64)
    return start, finish, units


def _busy(start, finish, units, t):
    return int(units[(start <= t) & (t < finish)].sum())


def _cap(timeline, t):
    return ([n for s, n in timeline if s <= t] or [timeline[0][1]])[-1]


@settings(max_examples=200, deadline=None)
@given(_spans, _timeline)
def test_capacity_violations_are_the_over_capacity_seconds(spans, timeline):
    """Maximal runs of seconds (from the first start) at which the recorded jobs hold more
    than the capacity in force: their bounds, peak, lowest capacity and largest excess."""
    from swftools.replay.compare import capacity_violations

    start, finish, units = _spans_arrays(spans)
    got = capacity_violations({"start": start, "finish": finish, "units": units}, timeline)
    periods = []
    if len(start):
        last = max([int(finish.max())] + [s for s, _ in timeline])
        run = []
        for t in range(int(start.min()), last + 2):
            busy, cap = _busy(start, finish, units, t), _cap(timeline, t)
            if busy > cap:
                run.append((t, busy, cap))
                continue
            if run:
                periods.append({"start_time": run[0][0], "end_time": t,
                                "peak_busy": max(b for _, b, _ in run),
                                "capacity": min(c for _, _, c in run),
                                "max_excess": max(b - c for _, b, c in run)})
                run = []
    assert got["list"] == periods
    assert (got["periods"], got["total_s"], got["max_excess"]) == (
        len(periods), sum(p["end_time"] - p["start_time"] for p in periods),
        max([0] + [p["max_excess"] for p in periods]))
    assert capacity_violations({"start": start, "finish": finish, "units": units}, timeline,
                               limit=1)["list"] == periods[:1]


@settings(max_examples=150, deadline=None)
@given(_spans, _spans, _timeline.filter(lambda t: all(n > 0 for _, n in t)),
       st.integers(1, 30))
def test_utilization_bins_are_busy_over_capacity_seconds(recorded_spans, replayed_spans,
                                                         timeline, bin_s):
    """Each bin from the first start rounded down to the bin: busy unit-seconds over capacity
    unit-seconds, summed second by second, for the recorded and the replayed jobs."""
    from swftools.replay.compare import utilization
    from swftools.replay.result import ReplayResult

    assume(recorded_spans or replayed_spans)
    start, finish, units = _spans_arrays(recorded_spans)
    r_start, r_finish, r_units = _spans_arrays(replayed_spans)
    run = (r_finish - r_start).tolist()
    result = ReplayResult(_jobs(r_start.tolist(), r_start.tolist(), run, r_units.tolist()),
                          _skipped([]), {})
    got = utilization({"start": start, "finish": finish, "units": units}, result, timeline,
                      bin_s)
    t0 = min(int(a.min()) for a in (start, r_start) if len(a))
    t1 = max(int(a.max()) for a in (finish, r_finish) if len(a))
    t0 -= t0 % bin_s
    bins = []
    for lo in list(range(t0, t1 + bin_s, bin_s))[:-1]:  # np.arange's edges, less the last
        seconds = range(lo, lo + bin_s)
        cap = sum(_cap(timeline, t) for t in seconds)
        rec = sum(_busy(start, finish, units, t) for t in seconds)
        rep = sum(_busy(r_start, r_finish, r_units, t) for t in seconds)
        bins.append({"start_time": lo, "recorded": round(rec / cap, 4),
                     "replayed": round(rep / cap, 4)})
    assert got == {"bin_s": bin_s, "bins": bins}
