"""swftools.replay.compare: the consistency report of a recorded schedule against a replay."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import ks_2samp

from swftools import table as jt
from swftools.replay import replay
from swftools.replay.compare import compare, render_text

from .strategies import replay_swf_jobs
from .test_replay_result import (_jobs, _skipped, arrays as _arrays, capacity_at as _cap,
                                 held_at as _busy)


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


@settings(max_examples=200, deadline=None)
@given(_spans, _timeline)
def test_capacity_violations_are_the_over_capacity_seconds(spans, timeline):
    """Maximal runs of seconds (from the first start) at which the recorded jobs hold more
    than the capacity in force: their bounds, peak, lowest capacity and largest excess."""
    from swftools.replay.compare import capacity_violations

    start, finish, units = _arrays(spans)
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
    start, finish, units = _arrays(recorded_spans)
    r_start, r_finish, r_units = _arrays(replayed_spans)
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


def _rec(rows):
    """A recorded schedule in queue order: rows (job id, submit, start, finish, units, estimate)."""
    import numpy as np

    cols = list(zip(*rows))
    keys = ("job_id", "submit", "start", "finish", "units", "estimate")
    return {k: np.array(c, dtype=np.int64) for k, c in zip(keys, cols)}


def test_jobs_ending_at_the_shadow_time_all_count_and_later_ones_do_not():
    """At t=10, 6 of 14 units free, the head needs 8 at t=100: job 1's 2 units suffice then,
    jobs 2 and 3 end at 100 too (spare 3), job 4 only at 200. Job 6 (2 units, past 100) fits
    the spare; job 7 (3 more) does not: it delays the head."""
    from swftools.replay.compare import impossible_starts

    rec = _rec([(1, 0, 0, 100, 2, 100), (2, 0, 0, 100, 2, 100), (3, 0, 0, 100, 1, 100),
                (4, 0, 0, 200, 3, 200), (5, 5, 100, 150, 8, 50), (6, 6, 10, 510, 2, 500),
                (7, 7, 10, 510, 3, 500)])
    assert impossible_starts(rec, [(0, 14)])["list"] == [
        {"job_id": 7, "start_time": 10, "reason": "delays-head",
         "detail": "behind job 5, ends after its reservation at 100 and needs 3 of 1 spare"},
        {"job_id": 5, "start_time": 100, "reason": "no-room", "detail": "needs 8, 6 free"}]


def test_the_shadow_is_the_first_end_that_frees_enough():
    """The head needs 6 with 2 free: job 1's end at 100 frees exactly that (spare 0); job 2's at
    200 is not needed. A 2-unit job running past 100 delays the head."""
    from swftools.replay.compare import impossible_starts

    rec = _rec([(1, 0, 0, 100, 4, 100), (2, 0, 0, 200, 4, 200), (3, 5, 100, 110, 6, 10),
                (4, 6, 10, 510, 2, 500)])
    found = impossible_starts(rec, [(0, 10)])
    assert [(f["job_id"], f["reason"]) for f in found["list"]] == [(4, "delays-head"),
                                                                    (3, "no-room")]
    assert found["list"][0]["detail"].endswith("reservation at 100 and needs 2 of 0 spare")


def test_a_head_the_running_jobs_cannot_free_enough_for():
    """The capacity dropped to 4 at t=5: the head needs 8 (the machine once had 10), all the
    running jobs free only 4 by t=100, so every later long job delays it."""
    from swftools.replay.compare import impossible_starts

    rec = _rec([(1, 0, 0, 100, 2, 100), (2, 1, 300, 310, 8, 10), (3, 2, 10, 510, 1, 500)])
    found = impossible_starts(rec, [(0, 10), (5, 4)])
    assert found["list"] == [
        {"job_id": 3, "start_time": 10, "reason": "delays-head",
         "detail": "behind job 2, ends after its reservation at 100 and needs 1 of 0 spare"},
        {"job_id": 2, "start_time": 300, "reason": "no-room", "detail": "needs 8, 3 free"}]


def test_recorded_jobs_keep_those_with_a_whole_schedule():
    """Kept: submit, start, finish and size known, finish not before start (zero-length jobs
    too); in (submit, id) order; run time from the schedule when unknown, estimate the
    request else the run time; queue text, "(none)" when unknown."""
    from swftools.replay.compare import recorded_jobs

    table = jt.from_columns({
        "job_id": [9, 1, 2, 3, 4, 5, 6, 7],
        "submit_time": [0, None, 0, 0, 0, 0, 0, 0],
        "start_time": [5, 0, None, 0, 0, 0, 3, 3],
        "finish_time": [8, 9, 9, None, 9, 2, 3, 7],
        "walltime_s": [3, 9, 9, 9, 9, 2, None, None],
        "requested_walltime_s": [10, None, None, None, None, None, None, 60],
        "gpus": [2, 1, 1, 1, None, 1, 1, 1], "queue": ["q", "q", "q", "q", "q", "q", None, "r"]})
    rec = recorded_jobs(table)
    assert rec["job_id"].tolist() == [5, 6, 7, 9]
    assert rec["row"].tolist() == [5, 6, 7, 0]
    assert rec["estimate"].tolist() == [2, 0, 60, 10]
    assert rec["queue"].tolist() == ["q", "(none)", "r", "q"] and rec["queue"].dtype == object
    empty = recorded_jobs(table.slice(0, 0))
    assert len(empty["row"]) == 0 and len(empty["queue"]) == 0


def test_distributions_worked_by_hand():
    """Three jobs both schedules have (job 4 only recorded): waits 0, 10, 25 recorded and 5, 5,
    5 replayed; per queue and overall, stats to 3 places, KS (scipy) to 6."""
    from swftools.replay.compare import distributions
    from swftools.replay.result import ReplayResult

    rec = {"job_id": np.array([1, 2, 3, 4]), "submit": np.array([0, 0, 0, 0]),
           "start": np.array([0, 10, 25, 0]), "finish": np.array([7, 13, 45, 1]),
           "queue": np.array(["a", "b", "b", "a"], dtype=object)}
    jobs = _jobs([0, 0, 0], [5, 5, 5], [7, 3, 20], [1, 1, 1])
    jobs = jobs.set_column(0, "job_id", pa.array([3, 1, 2], pa.int64()))
    got = distributions(rec, ReplayResult(jobs, _skipped([]), {}))

    def stats(values):
        v = np.array(values, dtype=float)
        return {"n": len(v), "mean": round(v.mean(), 3), "median": round(float(np.median(v)), 3),
                "p90": round(float(np.percentile(v, 90)), 3), "max": round(v.max(), 3)}

    def ks(a, b):
        res = ks_2samp(a, b)
        return {"statistic": round(float(res.statistic), 6),
                "pvalue": float(f"{res.pvalue:.6g}")}

    def part(jobs_in, rw, pw, rs, ps):
        return {"jobs": jobs_in,
                "wait_s": {"recorded": stats(rw), "replayed": stats(pw), "ks": ks(rw, pw)},
                "bounded_slowdown": {"recorded": stats(rs), "replayed": stats(ps),
                                     "ks": ks(rs, ps)}}

    # runs: recorded 7, 3, 20 (jobs 1, 2, 3); replayed run 3 for job 1, 20 for 2, 7 for 3
    bsld = lambda w, r: max(1.0, (w + r) / max(r, 10))  # noqa: E731
    assert got == {
        "(all)": part(3, [0, 10, 25], [5, 5, 5], [bsld(0, 7), bsld(10, 3), bsld(25, 20)],
                      [bsld(5, 3), bsld(5, 20), bsld(5, 7)]),
        "a": part(1, [0], [5], [bsld(0, 7)], [bsld(5, 3)]),
        "b": part(2, [10, 25], [5, 5], [bsld(10, 3), bsld(25, 20)], [bsld(5, 20), bsld(5, 7)])}
    none = ReplayResult(jobs.slice(0, 0), _skipped([]), {})
    empty = {"n": 0, "mean": None, "median": None, "p90": None, "max": None}
    no_ks = {"statistic": None, "pvalue": None}
    assert distributions(rec, none) == {"(all)": {
        "jobs": 0, "wait_s": {"recorded": empty, "replayed": empty, "ks": no_ks},
        "bounded_slowdown": {"recorded": empty, "replayed": empty, "ks": no_ks}}}


def test_render_text_worked_by_hand():
    """Every section, numbers as written (6 significant digits below a million, whole above,
    "-" for none), lists cut at max_rows with the rest counted, no utilization line without
    bins; checked by reading."""
    from swftools.replay.compare import render_text

    stats = lambda m, med: {"n": 2, "mean": m, "median": med, "p90": 1.0, "max": 2.0}  # noqa: E731
    report = {"model": "flat pool of 4 processors", "policy": "easy", "unit": "processors",
              "recorded_jobs": 3, "replayed_jobs": 2,
              "capacity_violations": {"periods": 2, "total_s": 30, "max_excess": 3, "list": [
                  {"start_time": 0, "end_time": 10, "peak_busy": 7, "capacity": 4,
                   "max_excess": 3},
                  {"start_time": 20, "end_time": 40, "peak_busy": 5, "capacity": 4,
                   "max_excess": 1}]},
              "distributions": {
                  "(all)": {"jobs": 2, "wait_s": {"recorded": stats(1234567.0, 1000000.0),
                                                   "replayed": stats(999999.5, 2),
                                                   "ks": {"statistic": 0.5, "pvalue": 1.0}},
                            "bounded_slowdown": {"recorded": stats(1.25, 1.0),
                                                 "replayed": stats(None, None),
                                                 "ks": {"statistic": None, "pvalue": None}}}},
              "utilization": {"bin_s": 86400, "bins": [
                  {"start_time": 0, "recorded": 0.5, "replayed": 0.25},
                  {"start_time": 86400, "recorded": 1.0, "replayed": 0.75}]},
              "impossible_starts": {"jobs": 2, "by_reason": {"before-submit": 1, "no-room": 1,
                                                             "delays-head": 0},
                                    "list": [{"job_id": 2, "start_time": 5, "reason": "no-room",
                                              "detail": "needs 2, 1 free"},
                                             {"job_id": 3, "start_time": 9,
                                              "reason": "before-submit",
                                              "detail": "starts 1 s before its submission"}]}}
    assert render_text(report, max_rows=1) == (
        'Consistency report: recorded schedule vs easy replay on flat pool of 4 processors\n'
        'jobs with a recorded schedule: 3; replayed: 2\n'
        '\n'
        'Capacity violations in the recorded schedule: 2 periods, 30 s in total, at most 3 processors over capacity\n'
        '  [0, 10): 7 processors busy, capacity 4\n'
        '\n'
        'Wait (s) and bounded slowdown (tau = 10 s), recorded vs replayed:\n'
        '  queue            jobs        wait mean rec/rep       median rec/rep       KS      bsld mean rec/rep       KS\n'
        '  (all)               2      1234567/1e+06          1000000/2              0.5        1.25/-                 -\n'
        '\n'
        'Utilization per 86400 s bin (2 bins): recorded mean 0.7500 max 1.0000; replayed mean 0.5000 max 0.7500\n'
        '\n'
        'Recorded starts impossible under FCFS + EASY: 2 (before-submit 1, no-room 1, delays-head 0)\n'
        '  job 2 at 5: no-room: needs 2, 1 free\n'
        '  ... 1 more (see the JSON report)\n')
    assert render_text({**report, "utilization": {"bin_s": 60, "bins": []}},
                       max_rows=5) == (
        'Consistency report: recorded schedule vs easy replay on flat pool of 4 processors\n'
        'jobs with a recorded schedule: 3; replayed: 2\n'
        '\n'
        'Capacity violations in the recorded schedule: 2 periods, 30 s in total, at most 3 processors over capacity\n'
        '  [0, 10): 7 processors busy, capacity 4\n'
        '  [20, 40): 5 processors busy, capacity 4\n'
        '\n'
        'Wait (s) and bounded slowdown (tau = 10 s), recorded vs replayed:\n'
        '  queue            jobs        wait mean rec/rep       median rec/rep       KS      bsld mean rec/rep       KS\n'
        '  (all)               2      1234567/1e+06          1000000/2              0.5        1.25/-                 -\n'
        '\n'
        'Recorded starts impossible under FCFS + EASY: 2 (before-submit 1, no-room 1, delays-head 0)\n'
        '  job 2 at 5: no-room: needs 2, 1 free\n'
        '  job 3 at 9: before-submit: starts 1 s before its submission\n')


def _report_with(found, bsld_replayed=None, bsld_ks=None):
    """A hand-made report: no violations or bins; ``found`` impossible starts (no-room)."""
    def stats(mean):
        return {"n": 1, "mean": mean, "median": mean, "p90": mean, "max": mean}

    return {"model": "m", "policy": "easy", "unit": "processors", "recorded_jobs": 1,
            "replayed_jobs": 1,
            "capacity_violations": {"periods": 0, "total_s": 0, "max_excess": 0, "list": []},
            "distributions": {"(all)": {
                "jobs": 1, "wait_s": {"recorded": stats(1.0), "replayed": stats(2.0),
                                      "ks": {"statistic": 1.0, "pvalue": 1.0}},
                "bounded_slowdown": {"recorded": stats(1.5), "replayed": stats(bsld_replayed),
                                     "ks": {"statistic": bsld_ks, "pvalue": None}}}},
            "utilization": {"bin_s": 60, "bins": []},
            "impossible_starts": {"jobs": found,
                                  "by_reason": {"before-submit": 0, "no-room": found,
                                                "delays-head": 0},
                                  "list": [{"job_id": j, "start_time": j, "reason": "no-room",
                                            "detail": "needs 2, 1 free"}
                                           for j in range(1, found + 1)]}}


def test_render_text_lists_twenty_starts_by_default():
    """The default cut is 20 rows: 20 impossible starts are all listed with no "more" line (the
    cut is "more than max_rows"), 21 show 20 and "... 1 more"."""
    lines = render_text(_report_with(20)).splitlines()
    assert [ln for ln in lines if ln.startswith("  job ")] == [
        f"  job {j} at {j}: no-room: needs 2, 1 free" for j in range(1, 21)]
    assert not any("more (see the JSON report)" in ln for ln in lines)
    lines = render_text(_report_with(21)).splitlines()
    assert [ln for ln in lines if ln.startswith("  job ")] == [
        f"  job {j} at {j}: no-room: needs 2, 1 free" for j in range(1, 21)]
    assert lines[-1] == "  ... 1 more (see the JSON report)"
    lines = render_text(_report_with(3), max_rows=3).splitlines()
    assert lines[-1] == "  job 3 at 3: no-room: needs 2, 1 free"


def test_render_text_shows_the_replayed_slowdown_and_its_ks():
    """The slowdown columns: recorded/replayed mean, then the KS statistic (by reading)."""
    row = [ln for ln in render_text(_report_with(0, bsld_replayed=2.75, bsld_ks=0.125))
           .splitlines() if ln.startswith("  (all)")]
    assert [ln.split() for ln in row] == [["(all)", "1", "1/2", "1/2", "1", "1.5/2.75", "0.125"]]


def test_the_shadow_can_need_every_running_job():
    """Three running jobs of 3 units end (by estimate) at 100, 200, 300 with 1 of 10 free: the
    head (10 units) has its reservation at 300, when all three have ended, with 0 spare. A
    1-unit job started at 10 that runs to 360 therefore delays it; at 300 that job still holds
    its unit, so the head finds 9 free."""
    from swftools.replay.compare import impossible_starts

    rec = _rec([(1, 0, 0, 100, 3, 100), (2, 0, 0, 200, 3, 200), (3, 0, 0, 300, 3, 300),
                (4, 5, 300, 310, 10, 10), (5, 6, 10, 360, 1, 350)])
    assert impossible_starts(rec, [(0, 10)])["list"] == [
        {"job_id": 5, "start_time": 10, "reason": "delays-head",
         "detail": "behind job 4, ends after its reservation at 300 and needs 1 of 0 spare"},
        {"job_id": 4, "start_time": 300, "reason": "no-room", "detail": "needs 10, 9 free"}]


def test_the_first_job_in_queue_order_can_be_the_head():
    """Job 1, first in queue order, waits at 1 with all 4 units free: it is the head, its
    reservation is 1 itself with 0 spare, so job 2 (1 unit, to 100) started then delays it; at
    50 job 2 still holds its unit."""
    from swftools.replay.compare import impossible_starts

    rec = _rec([(1, 0, 50, 60, 4, 10), (2, 1, 1, 100, 1, 99)])
    assert [(f["job_id"], f["start_time"], f["reason"])
            for f in impossible_starts(rec, [(0, 4)])["list"]] == [(2, 1, "delays-head"),
                                                                  (1, 50, "no-room")]


def test_a_job_submitted_at_the_start_instant_is_waiting():
    """Waiting jobs are those submitted at or before s: job 2 (submitted at 10) is the head at
    10, its reservation at 100 (job 1's end) with 0 spare; job 3, submitted at 10 too but
    behind it in queue order, starts at 10 and runs to 210: it delays the head."""
    from swftools.replay.compare import impossible_starts

    rec = _rec([(1, 0, 0, 100, 2, 100), (2, 10, 100, 110, 4, 10), (3, 10, 10, 210, 1, 200)])
    assert [(f["job_id"], f["start_time"], f["reason"])
            for f in impossible_starts(rec, [(0, 4)])["list"]] == [(3, 10, "delays-head"),
                                                                  (2, 100, "no-room")]


def test_recorded_estimate_is_the_logged_run_time_when_no_request():
    """With no requested time the estimate is the logged run time (walltime_s), not finish -
    start: a job logged as 4 s over a [0, 9) schedule has estimate 4."""
    from swftools.replay.compare import recorded_jobs

    table = jt.from_columns({"job_id": [1, 2], "submit_time": [0, 0], "start_time": [0, 0],
                             "finish_time": [9, 9], "walltime_s": [4, None],
                             "requested_walltime_s": [None, None], "gpus": [1, 1],
                             "queue": ["q", "q"]})
    assert recorded_jobs(table)["estimate"].tolist() == [4, 9]


def test_no_room_counts_no_free_units_below_zero():
    """2 units held of 2: a 1-unit job at 10 finds 0 free; after the capacity drops to 1 at 20,
    a 1-unit job at 30 finds 1 - 2 units, written as 0 free."""
    from swftools.replay.compare import impossible_starts

    rec = _rec([(1, 0, 0, 100, 2, 100), (2, 0, 10, 20, 1, 10), (3, 0, 30, 40, 1, 10)])
    assert [f["detail"] for f in impossible_starts(rec, [(0, 2), (20, 1)])["list"]] == [
        "needs 1, 0 free", "needs 1, 0 free"]


def test_a_backfill_ending_exactly_at_the_shadow_is_possible():
    """As in the three-running-jobs case, but the 1-unit job ends (by estimate and in fact) at
    300, the head's reservation: not after it, so no delay, and the head then fits."""
    from swftools.replay.compare import impossible_starts

    rec = _rec([(1, 0, 0, 100, 3, 100), (2, 0, 0, 200, 3, 200), (3, 0, 0, 300, 3, 300),
                (4, 5, 300, 310, 10, 10), (5, 6, 10, 300, 1, 290)])
    assert impossible_starts(rec, [(0, 10)])["list"] == []


def test_a_zero_length_job_leaves_its_units_to_the_next_start():
    """A zero-length job must fit at its start but holds nothing: the 4-unit job started at the
    same instant after it in queue order fits the 4 units."""
    from swftools.replay.compare import capacity_violations, impossible_starts

    rec = _rec([(1, 0, 0, 0, 4, 0), (2, 0, 0, 10, 4, 10)])
    assert impossible_starts(rec, [(0, 4)])["list"] == []
    assert capacity_violations(rec, [(0, 4)])["periods"] == 0


def test_stats_round_to_three_places():
    """Mean 13/18, median 2/3, p90 2/3 + 0.8 x 1/2 (linear), max 7/6: each to 3 places."""
    from swftools.replay.compare import _stats

    assert _stats(np.array([1 / 3, 2 / 3, 7 / 6])) == {
        "n": 3, "mean": 0.722, "median": 0.667, "p90": 1.067, "max": 1.167}


def test_distributions_with_one_replayed_job_and_later_recorded_ids():
    """Only job 1 was replayed: job 2 (a larger id, recorded only) is left out, not an error."""
    from swftools.replay.compare import distributions
    from swftools.replay.result import ReplayResult

    rec = {"job_id": np.array([1, 2]), "submit": np.array([0, 0]), "start": np.array([4, 6]),
           "finish": np.array([14, 16]), "queue": np.array(["a", "a"], dtype=object)}
    got = distributions(rec, ReplayResult(_jobs([0], [0], [10], [1]), _skipped([]), {}))
    assert got["(all)"]["jobs"] == 1 and got["a"]["jobs"] == 1
    assert got["(all)"]["wait_s"]["recorded"]["mean"] == 4


def test_utilization_with_no_job_has_no_bins():
    from swftools.replay.compare import utilization
    from swftools.replay.result import ReplayResult

    none = {"start": np.zeros(0, np.int64), "finish": np.zeros(0, np.int64),
            "units": np.zeros(0, np.int64)}
    result = ReplayResult(_jobs([], [], [], []), _skipped([]), {})
    assert utilization(none, result, [(0, 4)], 60) == {"bin_s": 60, "bins": []}


def test_a_bin_with_no_capacity_reads_zero_and_warns_nothing():
    """Capacity 4, then none for [60, 120) (a shutdown), then 4 again; one 2-unit job over
    [0, 180) in both schedules. Bins of 60 s: 2 x 60 / (4 x 60) = 0.5, then 0 where there is
    no capacity (not a division by zero, and no numpy warning), then 0.5."""
    import warnings

    from swftools.replay.compare import utilization
    from swftools.replay.result import ReplayResult

    rec = {"start": np.array([0]), "finish": np.array([180]), "units": np.array([2])}
    result = ReplayResult(_jobs([0], [0], [180], [2]), _skipped([]), {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = utilization(rec, result, [(0, 4), (60, 0), (120, 4)], 60)
    assert got == {"bin_s": 60, "bins": [
        {"start_time": 0, "recorded": 0.5, "replayed": 0.5},
        {"start_time": 60, "recorded": 0.0, "replayed": 0.0},
        {"start_time": 120, "recorded": 0.5, "replayed": 0.5}]}


def test_capacity_violations_list_a_thousand_periods_by_default():
    """1,001 one-second periods (5 units on a capacity of 4 at every even second): all are
    counted, the first 1,000 listed."""
    from swftools.replay.compare import capacity_violations

    start = np.arange(0, 2002, 2)
    got = capacity_violations({"start": start, "finish": start + 1,
                               "units": np.full(1001, 5)}, [(0, 4)])
    assert (got["periods"], got["total_s"], got["max_excess"]) == (1001, 1001, 1)
    assert len(got["list"]) == 1000 and got["list"][-1]["start_time"] == 1998
