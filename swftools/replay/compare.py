"""Consistency report: the recorded schedule against a replay on the declared resources.

Sections (``compare`` returns them as one JSON-ready dict; ``render_text`` prints them):

* ``capacity_violations`` — maximal periods in which the recorded schedule holds more units
  (processors, or GPUs) than the machine declares. A recorded job holds its size over
  ``[start, finish)``: the same size the replay gives it (:func:`.workload.job_size`: requested
  processors, SWF field 8, when known and positive, else the allocated ones, field 5).
* ``distributions`` — wait and bounded slowdown (tau = 10 s) of the jobs both schedules have,
  recorded vs replayed, per queue and overall, with the two-sample Kolmogorov-Smirnov statistic.
* ``utilization`` — busy units over capacity per time bin (default one day), both schedules.
* ``impossible_starts`` — recorded starts that FCFS + EASY could not have made on the declared
  resources. At each recorded start instant ``s`` the recorded state is rebuilt: running jobs
  are those recorded over ``s`` (started before ``s``), waiting jobs those submitted at or before
  ``s`` and started at or after it, in queue order (submit time, job id). The *head* is the
  first waiting job that does not start at ``s``. A job starting at ``s`` is impossible when

  - ``before-submit``: it starts before its submission;
  - ``no-room``: it does not fit in the units left free at ``s`` (after the jobs started at
    ``s`` before it in queue order). A zero-length job must fit too, though it holds nothing
    afterwards, so it can be flagged here without any capacity violation;
  - ``delays-head``: it is behind the head in queue order and fits, but would still run at the
    head's reservation (its start plus estimate is after the shadow time) and needs more than
    the units the head leaves spare then. Shadow time and spare units are EASY's, computed from
    the recorded running jobs with their estimates (requested time, else run time; an overdue
    job counts as ending at ``s``).

  In the GPU model the check uses GPU counts (``nodes_at(s) x gpus_per_node``): the recorded log
  has no placement, so node shapes cannot be checked. ``no-room`` is then certain;
  ``delays-head`` is judged on counts.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from heapq import heappop, heappush
from typing import Any

import numpy as np
import pyarrow as pa
from scipy.stats import ks_2samp

from swftools.errors import count
from swftools.replay.result import (BOUNDED_SLOWDOWN_TAU_S, ReplayResult, busy_steps,
                                    capacity_steps, sorted_distinct)
from swftools.replay.workload import int_column, job_size

DAY_S = 86_400
IMPOSSIBLE_REASONS = ("before-submit", "no-room", "delays-head")


def recorded_jobs(table: pa.Table) -> dict[str, np.ndarray]:
    """Jobs of ``table`` with a known recorded schedule: submit, start, finish, units held.

    The units held are the job's size by :func:`.workload.job_size`, as in the replay.
    """
    job_id, _ = int_column(table, "job_id")
    submit, submit_known = int_column(table, "submit_time")
    start, start_known = int_column(table, "start_time")
    finish, finish_known = int_column(table, "finish_time")
    units, units_known = job_size(table)
    runtime, runtime_known = int_column(table, "walltime_s")
    req_time, req_time_known = int_column(table, "requested_walltime_s")
    ok = submit_known & start_known & finish_known & units_known & (finish >= start)
    run = np.where(runtime_known, runtime, finish - start)
    estimate = np.where(req_time_known, req_time, run)
    queue = table.column("queue").to_pylist() if table.num_rows else []
    rows = np.flatnonzero(ok)
    rows = rows[np.lexsort((job_id[rows], submit[rows]))]
    return {"row": rows, "job_id": job_id[rows], "submit": submit[rows], "start": start[rows],
            "finish": finish[rows], "units": units[rows], "estimate": estimate[rows],
            "queue": np.array([queue[r] if queue[r] is not None else "(none)" for r in rows],
                              dtype=object)}


def capacity_violations(rec: dict[str, np.ndarray], capacity: list[tuple[int, int]],
                        limit: int = 1000) -> dict[str, Any]:
    """Maximal periods where the recorded schedule holds more than the capacity."""
    if len(rec["start"]) == 0:
        return {"periods": 0, "total_s": 0, "max_excess": 0, "list": []}
    times, level = busy_steps(rec["start"], rec["finish"], rec["units"])
    # capacity changes are step points too
    cap_times = np.array([t for t, _ in capacity], dtype=np.int64)
    all_times = sorted_distinct(np.concatenate([times, cap_times[cap_times >= times[0]]]))
    idx = np.searchsorted(times, all_times, side="right") - 1
    busy = np.where(idx >= 0, level[np.maximum(idx, 0)], 0)
    cap = capacity_steps(capacity, all_times)
    over = busy > cap
    periods = []
    i = 0
    n = len(all_times)
    while i < n:
        if not over[i]:
            i += 1
            continue
        k = i
        while k < n and over[k]:
            k += 1
        end = int(all_times[k]) if k < n else int(all_times[-1])
        excess = busy[i:k] - cap[i:k]
        periods.append({"start_time": int(all_times[i]), "end_time": end,
                        "peak_busy": int(busy[i:k].max()), "capacity": int(cap[i:k].min()),
                        "max_excess": int(excess.max())})
        i = k
    return {"periods": len(periods),
            "total_s": int(sum(p["end_time"] - p["start_time"] for p in periods)),
            "max_excess": max((p["max_excess"] for p in periods), default=0),
            "list": periods[:limit]}


def _stats(values: np.ndarray) -> dict[str, Any]:
    if len(values) == 0:
        return {"n": 0, "mean": None, "median": None, "p90": None, "max": None}
    return {"n": int(len(values)), "mean": round(float(values.mean()), 3),
            "median": round(float(np.median(values)), 3),
            "p90": round(float(np.percentile(values, 90)), 3),
            "max": round(float(values.max()), 3)}


def _ks(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    if len(a) == 0 or len(b) == 0:
        return {"statistic": None, "pvalue": None}
    res = ks_2samp(a, b)
    return {"statistic": round(float(res.statistic), 6), "pvalue": float(f"{res.pvalue:.6g}")}


def _bsld(wait: np.ndarray, run: np.ndarray) -> np.ndarray:
    return np.maximum(1.0, (wait + run) / np.maximum(run, BOUNDED_SLOWDOWN_TAU_S))


def distributions(rec: dict[str, np.ndarray], result: ReplayResult) -> dict[str, Any]:
    """Wait and bounded slowdown, recorded vs replayed, per queue and overall (same jobs)."""
    rep = result.jobs
    rep_ids = rep.column("job_id").to_numpy()
    order = np.argsort(rep_ids, kind="stable")
    pos = np.searchsorted(rep_ids[order], rec["job_id"])
    pos = np.minimum(pos, max(len(rep_ids) - 1, 0))
    both = (len(rep_ids) > 0) & (rep_ids[order][pos] == rec["job_id"]) if len(rep_ids) else \
        np.zeros(len(rec["job_id"]), dtype=bool)
    take = order[pos[both]]
    rec_wait = (rec["start"] - rec["submit"])[both]
    rec_run = (rec["finish"] - rec["start"])[both]
    rep_wait = rep.column("wait_s").to_numpy()[take]
    rep_run = rep.column("run_s").to_numpy()[take]
    queues = rec["queue"][both]
    out: dict[str, Any] = {}
    names = ["(all)"] + sorted(set(queues.tolist()))
    for name in names:
        sel = np.ones(len(queues), dtype=bool) if name == "(all)" else queues == name
        rw, pw = rec_wait[sel], rep_wait[sel]
        rs, ps = _bsld(rec_wait[sel], rec_run[sel]), _bsld(rep_wait[sel], rep_run[sel])
        out[name] = {
            "jobs": int(sel.sum()),
            "wait_s": {"recorded": _stats(rw), "replayed": _stats(pw), "ks": _ks(rw, pw)},
            "bounded_slowdown": {"recorded": _stats(rs), "replayed": _stats(ps),
                                 "ks": _ks(rs, ps)},
        }
    return out


def _integral_at(times: np.ndarray, level: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Integral of the step function from ``times[0]`` to each instant of ``at``."""
    if len(times) == 0:
        return np.zeros(len(at))
    cum = np.r_[0.0, np.cumsum(level[:-1].astype(np.float64) * np.diff(times))]
    return np.interp(at, times, cum, left=0.0, right=float(cum[-1]))


def utilization(rec: dict[str, np.ndarray], result: ReplayResult,
                capacity: list[tuple[int, int]], bin_s: int = DAY_S) -> dict[str, Any]:
    """Busy units over capacity per bin of ``bin_s`` seconds, recorded and replayed."""
    rep = result.jobs
    starts = [rec["start"], rep.column("start_time").to_numpy()]
    ends = [rec["finish"], rep.column("end_time").to_numpy()]
    if not any(len(s) for s in starts):
        return {"bin_s": bin_s, "bins": []}
    t0 = min(int(s.min()) for s in starts if len(s))
    t1 = max(int(e.max()) for e in ends if len(e))
    t0 -= t0 % bin_s
    edges = np.arange(t0, t1 + bin_s, bin_s, dtype=np.int64)
    fine = sorted_distinct(np.concatenate([edges, np.array([t for t, _ in capacity], np.int64)]))
    cap_cum = _integral_at(fine, capacity_steps(capacity, fine), edges)
    cap_bins = np.diff(cap_cum)
    series = []
    for s, e, u in ((rec["start"], rec["finish"], rec["units"]),
                    (rep.column("start_time").to_numpy(), rep.column("end_time").to_numpy(),
                     rep.column("size").to_numpy())):
        times, level = busy_steps(s, e, u) if len(s) else (np.zeros(0), np.zeros(0))
        used = np.diff(_integral_at(times, level, edges))
        series.append(np.where(cap_bins > 0, used / np.where(cap_bins > 0, cap_bins, 1), 0.0))
    bins = [{"start_time": int(edges[i]), "recorded": round(float(series[0][i]), 4),
             "replayed": round(float(series[1][i]), 4)} for i in range(len(edges) - 1)]
    return {"bin_s": bin_s, "bins": bins}


def impossible_starts(rec: dict[str, np.ndarray], capacity: list[tuple[int, int]]) -> dict[str, Any]:
    """Recorded starts FCFS + EASY could not have made (see the module docstring)."""
    n = len(rec["start"])
    submit, start, finish = rec["submit"].tolist(), rec["start"].tolist(), rec["finish"].tolist()
    units, estimate, job_id = rec["units"].tolist(), rec["estimate"].tolist(), rec["job_id"].tolist()
    found: list[dict[str, Any]] = []
    by_start = sorted(range(n), key=lambda q: (start[q], q))
    ends: list[tuple[int, int]] = []  # heap of (finish, queue index) of running jobs
    running: list[tuple[int, int]] = []  # sorted (estimated end, queue index)
    est_key: dict[int, tuple[int, int]] = {}
    waiting: list[int] = []  # heap of queue indices submitted and not yet started
    held = 0
    max_units = max(u for _, u in capacity)
    i_sub = 0
    k = 0
    cap_at = capacity_steps(capacity, np.array(sorted(set(start)), dtype=np.int64)).tolist()
    cap_of = dict(zip(sorted(set(start)), cap_at))
    while k < n:
        s = start[by_start[k]]
        group = []
        while k < n and start[by_start[k]] == s:
            group.append(by_start[k])
            k += 1
        while ends and ends[0][0] <= s:
            _, q = heappop(ends)
            held -= units[q]
            running.pop(bisect_left(running, est_key.pop(q)))
        while i_sub < n and submit[i_sub] <= s:
            if units[i_sub] <= max_units:  # a job that can never fit is no head
                heappush(waiting, i_sub)
            i_sub += 1
        while waiting and start[waiting[0]] <= s:
            heappop(waiting)
        head = waiting[0] if waiting else n  # first waiting job not starting at s
        free = cap_of[s] - held
        shadow = extra = None
        for q in sorted(group):
            reason = detail = None
            if submit[q] > s:
                reason, detail = "before-submit", f"starts {submit[q] - s} s before its submission"
            elif units[q] > free:
                reason, detail = "no-room", f"needs {units[q]}, {max(free, 0)} free"
            elif q > head and s + estimate[q] > _shadow_of(shadow, s):
                if shadow is None:
                    shadow, extra = _reservation(units[head], free, running, units, s)
                if s + estimate[q] > shadow:
                    if units[q] > extra:
                        reason = "delays-head"
                        detail = (f"behind job {job_id[head]}, ends after its reservation at "
                                  f"{shadow} and needs {units[q]} of {max(extra, 0)} spare")
                    else:
                        extra -= units[q]
            if reason:
                found.append({"job_id": job_id[q], "start_time": s, "reason": reason,
                              "detail": detail})
            if finish[q] > s:
                free -= units[q]
                held += units[q]
                heappush(ends, (finish[q], q))
                key = (s + estimate[q], q)
                est_key[q] = key
                insort(running, key)
    counts = {r: sum(1 for f in found if f["reason"] == r) for r in IMPOSSIBLE_REASONS}
    found.sort(key=lambda f: (f["start_time"], f["job_id"]))
    return {"jobs": len(found), "by_reason": counts, "list": found}


def _shadow_of(shadow: int | None, s: int) -> float:
    """Before the reservation is computed, treat every job as possibly delaying the head."""
    return float("-inf") if shadow is None else shadow


def _reservation(need: int, free: int, running: list[tuple[int, int]], units: list[int],
                 s: int) -> tuple[int, int]:
    """EASY shadow time and spare units at it for a head needing ``need`` (counts only)."""
    available = free
    shadow = s
    idx = 0
    while available < need and idx < len(running):
        end, q = running[idx]
        available += units[q]
        shadow = max(end, s)
        idx += 1
    while idx < len(running) and running[idx][0] <= shadow:  # ties at the shadow time
        available += units[running[idx][1]]
        idx += 1
    return shadow, available - need


def compare(table: pa.Table, result: ReplayResult, *, bin_s: int = DAY_S) -> dict[str, Any]:
    """The consistency report of ``table``'s recorded schedule against ``result``."""
    rec = recorded_jobs(table)
    capacity = result.capacity
    return {
        "model": result.summary["model"],
        "policy": result.summary["policy"],
        "unit": result.summary["unit"],
        "recorded_jobs": int(len(rec["row"])),
        "replayed_jobs": int(result.jobs.num_rows),
        "capacity_violations": capacity_violations(rec, capacity),
        "distributions": distributions(rec, result),
        "utilization": utilization(rec, result, capacity, bin_s),
        "impossible_starts": impossible_starts(rec, capacity),
    }


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.0f}"
    return str(v)


def render_text(report: dict[str, Any], max_rows: int = 20) -> str:
    """The report as plain text (lists cut at ``max_rows``; the JSON has them all)."""
    unit = report["unit"]
    lines = [f"Consistency report: recorded schedule vs {report['policy']} replay on "
             f"{report['model']}",
             f"jobs with a recorded schedule: {report['recorded_jobs']}; replayed: "
             f"{report['replayed_jobs']}", ""]
    cv = report["capacity_violations"]
    lines.append(f"Capacity violations in the recorded schedule: {count(cv['periods'], 'period')}, "
                 f"{cv['total_s']} s in total, at most {cv['max_excess']} {unit} over capacity")
    for p in cv["list"][:max_rows]:
        lines.append(f"  [{p['start_time']}, {p['end_time']}): {p['peak_busy']} {unit} busy, "
                     f"capacity {p['capacity']}")
    lines += ["", "Wait (s) and bounded slowdown (tau = 10 s), recorded vs replayed:",
              f"  {'queue':<12} {'jobs':>8}  {'wait mean rec/rep':>23}  {'median rec/rep':>19}  "
              f"{'KS':>7}  {'bsld mean rec/rep':>21}  {'KS':>7}"]
    for name, d in report["distributions"].items():
        w, b = d["wait_s"], d["bounded_slowdown"]
        lines.append(
            f"  {name:<12} {d['jobs']:>8}  "
            f"{_fmt(w['recorded']['mean']):>11}/{_fmt(w['replayed']['mean']):<11}  "
            f"{_fmt(w['recorded']['median']):>9}/{_fmt(w['replayed']['median']):<9}  "
            f"{_fmt(w['ks']['statistic']):>7}  "
            f"{_fmt(b['recorded']['mean']):>10}/{_fmt(b['replayed']['mean']):<10}  "
            f"{_fmt(b['ks']['statistic']):>7}")
    util = report["utilization"]
    bins = util["bins"]
    if bins:
        rec = np.array([b["recorded"] for b in bins])
        rep = np.array([b["replayed"] for b in bins])
        lines += ["", f"Utilization per {util['bin_s']} s bin ({len(bins)} bins): recorded mean "
                      f"{rec.mean():.4f} max {rec.max():.4f}; replayed mean {rep.mean():.4f} "
                      f"max {rep.max():.4f}"]
    imp = report["impossible_starts"]
    by = ", ".join(f"{k} {v}" for k, v in imp["by_reason"].items())
    lines += ["", f"Recorded starts impossible under FCFS + EASY: {imp['jobs']} ({by})"]
    for f in imp["list"][:max_rows]:
        lines.append(f"  job {f['job_id']} at {f['start_time']}: {f['reason']}: {f['detail']}")
    if imp["jobs"] > max_rows:
        lines.append(f"  ... {imp['jobs'] - max_rows} more (see the JSON report)")
    return "\n".join(lines) + "\n"
