"""Context of the five analyses: queues, outcomes, jobs and active users per quarter, utilization.

All jobs count here (no 60 s filter). Utilization integrates the busy processing elements of
every job with known start, finish and size over fixed bins (a day, or a week for spans over
1,000 days) starting at local midnight of the first start, and compares it with the capacity:
the site's capacity timeline (nodes x GPUs per node), else the SWF header's ``MaxProcs``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from swftools.report.frame import JobFrame, quarters, quarters_skip_reason, skipped

TERMCODES = {0: "success", 1: "fail", 2: "walltime exceeded", 3: "cancelled by user",
             4: "killed by system"}
SWF_STATUSES = {0: "failed", 1: "completed", 2: "partial (to be continued)",
                3: "partial (last)", 4: "partial (failed)", 5: "cancelled"}
DAY_S, WEEK_S = 86_400, 7 * 86_400
MAX_DAILY_BINS = 1000


def queues(frame: JobFrame) -> dict[str, Any]:
    """Jobs per queue (all jobs), most used first."""
    values = frame.jobs["queue"]
    known = values.dropna().astype(str)
    if known.empty:
        return skipped("no queue is recorded for any job")
    counts = known.value_counts()
    rows = []
    for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        label = name
        if frame.site is not None and name.isdigit() and frame.site.queue_by_number(int(name)):
            label = f"{name} ({frame.site.queue_by_number(int(name)).name})"
        rows.append({"queue": name, "label": label, "jobs": int(n), "share": n / len(known)})
    return {"status": "ok", "jobs": int(len(known)), "unknown": int(len(values) - len(known)),
            "queues": rows}


def outcomes(frame: JobFrame) -> dict[str, Any]:
    """Jobs per termination code (or SWF status), and the share of successful jobs."""
    if frame.success_rule is None:
        return skipped("neither termination codes nor SWF status are recorded")
    column, names = (("termcode", TERMCODES) if frame.success_rule.startswith("termcode")
                     else ("swf_status", SWF_STATUSES))
    values = frame.jobs[column].dropna().astype(np.int64)
    counts = values.value_counts()
    rows = [{"code": int(c), "label": names.get(int(c), "other"), "jobs": int(counts.get(c, 0)),
             "share": counts.get(c, 0) / len(values)}
            for c in sorted(set(names) | set(int(k) for k in counts.index))]
    success = frame.jobs["success"].dropna()
    return {"status": "ok", "column": column, "success_rule": frame.success_rule,
            "jobs": int(len(values)), "unknown": int(len(frame.jobs) - len(values)),
            "success_share": float(success.mean()) if len(success) else None, "codes": rows}


def per_quarter(frame: JobFrame) -> dict[str, Any]:
    """Jobs, jobs of at least 60 s, active users and active groups per calendar quarter."""
    reason = quarters_skip_reason(frame)
    if reason:
        return skipped(reason)
    jobs = frame.jobs[frame.jobs["submit_time"].notna()]
    if jobs.empty:
        return skipped("no submit times are known")
    quarter = quarters(frame, jobs)
    data = pd.DataFrame({"quarter": quarter.to_numpy(), "user": jobs["user"].to_numpy(),
                         "group": jobs["group"].to_numpy(),
                         "long": jobs["walltime_s"].to_numpy() >= 60})
    grouped = data.groupby("quarter", sort=True)
    table = pd.DataFrame({"jobs": grouped.size(), "jobs_min_60s": grouped["long"].sum(),
                          "users": grouped["user"].nunique(), "groups": grouped["group"].nunique()})
    notes = []
    have = {}
    for who in ("user", "group"):
        have[who] = bool(jobs[who].notna().any())
        if not have[who]:
            notes.append(f"no {who} is recorded for any job: active {who}s are unknown")
    rows = [{"quarter": str(q), "jobs": int(r["jobs"]), "jobs_min_60s": int(r["jobs_min_60s"]),
             "users": int(r["users"]) if have["user"] else None,
             "groups": int(r["groups"]) if have["group"] else None}
            for q, r in table.iterrows()]
    return {"status": "ok", "time_zone": frame.time_zone, "quarters": rows,
            "users_total": int(jobs["user"].nunique()) if have["user"] else None,
            "groups_total": int(jobs["group"].nunique()) if have["group"] else None,
            "notes": notes}


def _capacity(frame: JobFrame, bin_start: np.ndarray) -> tuple[np.ndarray | None, str | None]:
    site = frame.site
    if site is not None:
        since = np.asarray(site.capacity_since, dtype=np.int64)
        nodes = np.asarray(site.capacity_nodes, dtype=np.int64)
        idx = np.maximum(np.searchsorted(since, bin_start, side="right") - 1, 0)
        return (nodes[idx] * site.gpus_per_node).astype(np.float64), \
            f"site {site.name}: capacity timeline x {site.gpus_per_node} GPUs per node"
    for key, value in frame.metadata.get("swf_header", []):
        if key.lower() == "maxprocs" and value.strip().isdigit() and int(value) > 0:
            return np.full(bin_start.size, float(value)), "SWF header MaxProcs"
    return None, None


def _bin_origin(frame: JobFrame, first_start: int, width: int) -> int:
    if frame.absolute_times:
        local = pd.Timestamp(first_start, unit="s", tz="UTC").tz_convert(frame.time_zone)
        return int(local.normalize().timestamp())
    return first_start // width * width


def busy_integral(start: np.ndarray, finish: np.ndarray, pes: np.ndarray,
                  edges: np.ndarray) -> np.ndarray:
    """Busy PE-seconds before each edge T: sum of ``pes * (min(finish, T) - start)``, started jobs.

    All arguments are int64 (times relative to a common origin), so the sums are exact.
    """
    def cumulative(times: np.ndarray) -> np.ndarray:
        order = np.argsort(times, kind="stable")
        t, g = times[order], pes[order]
        cum_g = np.concatenate(([0], np.cumsum(g)))
        cum_gt = np.concatenate(([0], np.cumsum(g * t)))
        k = np.searchsorted(t, edges, side="left")
        return edges * cum_g[k] - cum_gt[k]

    return cumulative(start) - cumulative(finish)


def utilization(frame: JobFrame) -> dict[str, Any]:
    """Busy processing elements over time against the capacity (see the module docstring)."""
    jobs = frame.jobs
    usable = jobs["start_time"].notna() & jobs["finish_time"].notna() & jobs["gpus"].notna()
    if not usable.any():
        missing = [c for c in ("start_time", "finish_time", "gpus") if jobs[c].isna().all()]
        return skipped("no job has a known start, finish and size"
                       + (f" ({', '.join(missing)} unknown for every job)" if missing else ""))
    use = jobs[usable]
    start = use["start_time"].to_numpy().astype(np.int64)
    finish = np.maximum(use["finish_time"].to_numpy().astype(np.int64), start)
    pes = use["gpus"].to_numpy().astype(np.int64)
    span = int(finish.max() - start.min())
    width = DAY_S if span <= MAX_DAILY_BINS * DAY_S else WEEK_S
    origin = _bin_origin(frame, int(start.min()), width)
    n_bins = max(1, -(-int(finish.max() - origin) // width))  # bins cover [origin, last finish)
    edges = np.arange(n_bins + 1, dtype=np.int64) * width
    busy = np.diff(busy_integral(start - origin, finish - origin, pes, edges)).astype(np.float64)
    busy_mean = busy / width
    bin_start = origin + edges[:-1]
    capacity, capacity_source = _capacity(frame, bin_start)
    result: dict[str, Any] = {
        "status": "ok", "jobs": int(usable.sum()), "excluded_unknown": int((~usable).sum()),
        "processing_element": frame.pe, "bin_s": width, "absolute_times": frame.absolute_times,
        "bin_start_epoch_s": [int(v) for v in bin_start],
        "busy_pes_mean": [float(v) for v in busy_mean],
        "peak_bin_busy_pes": float(busy_mean.max()),
    }
    if capacity is None:
        result["capacity"] = skipped("capacity is unknown (no site settings and no MaxProcs "
                                     "in the SWF header)")
    else:
        result["capacity"] = {
            "status": "ok", "source": capacity_source,
            "capacity_pes": [float(v) for v in capacity],
            "mean_utilization": float(busy.sum() / (capacity * width).sum()),
            "bins_over_capacity": int((busy_mean > capacity * (1 + 1e-9)).sum()),
        }
    return result


SECTIONS = ("queues", "outcomes", "per_quarter", "utilization")


def analyze(frame: JobFrame) -> dict[str, Any]:
    """Every context section, by name."""
    return {"queues": queues(frame), "outcomes": outcomes(frame),
            "per_quarter": per_quarter(frame), "utilization": utilization(frame)}
