"""Analysis 2, walltime request accuracy: WRA = actual walltime / requested walltime.

Population: successful jobs of at least 60 s whose requested walltime is known and positive.
Also: the share of those jobs that request exactly their queue's maximum walltime, which needs the
queue limits of a site (``--site``). Histogram bins include their upper edge (0.9 < WRA <= 1.0):
a job that ran exactly its request (WRA 1.0) did not run past it, so the last bin, above 1.0,
holds exactly the jobs ``share_above_1`` counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from swftools.report.frame import (JobFrame, describe, quarters, quarters_skip_reason, skipped,
                                   successful_long)
from swftools.site import Site

HISTOGRAM_EDGES = tuple(round(0.1 * i, 1) for i in range(11)) + (float("inf"),)
QUANTILES = (0.1, 0.25, 0.75, 0.9)


def histogram_counts(wra: np.ndarray) -> np.ndarray:
    """Jobs per bin of ``HISTOGRAM_EDGES``, each bin including its upper edge (see above)."""
    inner = np.array(HISTOGRAM_EDGES[1:-1])
    return np.bincount(np.searchsorted(inner, wra, side="left"), minlength=inner.size + 1)


def bin_label(row: dict[str, Any], *, short: bool = False) -> str:
    """A histogram bin's label: ``0.9 to 1.0`` (``0.9-1.0`` short), ``above 1.0`` (``>1.0``)."""
    if row["to"] is None:
        return f">{row['from']:.1f}" if short else f"above {row['from']:.1f}"
    return f"{row['from']:.1f}{'-' if short else ' to '}{row['to']:.1f}"


def queue_limits(site: Site | None, queues: pd.Series) -> dict[str, int]:
    """Maximum walltime (s) of each queue value found in ``queues`` that the site knows."""
    if site is None:
        return {}
    limits = {}
    for value in queues.dropna().unique():
        text = str(value)
        queue = site.queue(text) or (site.queue_by_number(int(text)) if text.isdigit() else None)
        if queue is not None:
            limits[text] = queue.walltime_max_s
    return limits


def analyze(frame: JobFrame) -> dict[str, Any]:
    """The WRA analysis (see the module docstring)."""
    population, description = successful_long(frame)
    requested = population["requested_walltime_s"].to_numpy()
    if np.isnan(requested).all():
        return skipped("the requested walltime is unknown for every job (SWF field 9 is -1)"
                       if len(population) else f"no {description}")
    jobs = population[requested > 0]
    if jobs.empty:
        return skipped(f"no {description} have a positive requested walltime")
    wra = jobs["walltime_s"].to_numpy() / jobs["requested_walltime_s"].to_numpy()
    counts = histogram_counts(wra)
    stats = describe(wra)
    result: dict[str, Any] = {
        "status": "ok",
        "population": f"{description} with a known requested walltime",
        "jobs": len(jobs),
        "excluded_unknown_request": int(len(population) - len(jobs)),
        "mean": stats["mean"], "std": stats["std"], "median": stats["median"],
        "min": stats["min"], "max": stats["max"],
        "quantiles": {f"p{round(q * 100)}": float(np.quantile(wra, q)) for q in QUANTILES},
        "share_above_1": float(np.mean(wra > 1)),
        "histogram": [{"from": lo, "to": (None if hi == float("inf") else hi), "jobs": int(c),
                       "share": c / len(wra)}
                      for lo, hi, c in zip(HISTOGRAM_EDGES, HISTOGRAM_EDGES[1:], counts)],
        "at_queue_max": _at_queue_max(frame, jobs),
        "quarterly": _quarterly(frame, jobs, wra),
    }
    return result


def _at_queue_max(frame: JobFrame, jobs: pd.DataFrame) -> dict[str, Any]:
    if frame.site is None:
        return skipped("queue walltime limits are unknown (no site settings)")
    queues = jobs["queue"]  # strings (or None) as the job table holds them
    limits = queue_limits(frame.site, queues)
    if not limits:
        return skipped(f"no queue of the trace is a queue of site {frame.site.name}")
    limit = queues.map(limits).to_numpy(dtype="float64", na_value=np.nan)
    known = ~np.isnan(limit)
    at_max = jobs["requested_walltime_s"].to_numpy()[known] == limit[known]
    by_queue = []
    for name in sorted(limits, key=lambda q: (limits[q], q)):
        mask = queues.to_numpy()[known] == name
        n = int(mask.sum())
        hits = int(at_max[mask].sum())
        by_queue.append({"queue": name, "walltime_max_s": limits[name], "jobs": n,
                         "at_max": hits, "share": hits / n if n else None})
    return {"status": "ok", "jobs": int(known.sum()), "excluded_unknown_queue": int((~known).sum()),
            "at_max": int(at_max.sum()),
            "share": float(at_max.mean()) if at_max.size else None, "by_queue": by_queue}


def _quarterly(frame: JobFrame, jobs: pd.DataFrame, wra: np.ndarray) -> Any:
    reason = quarters_skip_reason(frame)
    if reason:
        return skipped(reason)
    quarter = quarters(frame, jobs).to_numpy()
    frame_q = pd.DataFrame({"quarter": quarter, "wra": wra}).dropna(subset=["quarter"])
    grouped = frame_q.groupby("quarter", sort=True)["wra"]
    stats = pd.DataFrame({"jobs": grouped.size(), "mean": grouped.mean(),
                          "median": grouped.median(), "std": grouped.std(ddof=1)})
    return [{"quarter": str(q), "jobs": int(r["jobs"]), "mean": float(r["mean"]),
             "median": float(r["median"]),
             "std": None if np.isnan(r["std"]) else float(r["std"])}
            for q, r in stats.iterrows()]
