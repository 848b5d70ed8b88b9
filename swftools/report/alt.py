"""Text alternatives of the report's figures: what each figure shows, stated from its numbers.

``alt_text(data, name)`` is the finding of figure ``name`` in words (the HTML page's ``alt``),
computed from the same report data the figure is drawn from, so it names this trace's values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from swftools.errors import count, plural
from swftools.report.frame import is_skipped, time_series
from swftools.report.summary import PAPER, reference_applies
from swftools.report.wra import bin_label as wra_bin_label


def _pct(share: float) -> str:
    return f"{100 * share:.1f} %"


def _hours(value: float) -> str:
    return f"{value:.2f} h" if value < 10 else f"{value:,.0f} h"


def _most(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The row with the largest ``key`` (the first one on ties)."""
    return max(rows, key=lambda r: (r[key] if r[key] is not None else float("-inf")))


def _least(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    return min(rows, key=lambda r: (r[key] if r[key] is not None else float("inf")))


def _paper(data: dict[str, Any], key: str, text: Callable[[float], str]) -> str:
    """The AAIC reference value in brackets, only where it applies to this trace."""
    value = PAPER.get(key) if reference_applies(data["trace"]) else None
    return f" (AAIC reference: {text(value)})" if value is not None else ""


def _parallelism(data: dict[str, Any]) -> str:
    r = data["analyses"]["parallelism"]
    classes = ", ".join(f"{c['label']} {_pct(c['share'])}" for c in r["classes"].values())
    pe = r["processing_element"]
    text = (f"Bar chart of parallelism among {r['jobs']:,} jobs of at least 60 s: {classes}"
            f"{_paper(data, 'single_pe_share', lambda v: f'{_pct(v)} single-{pe} jobs')}.")
    quarterly = r["quarterly"]
    if time_series(quarterly):
        busiest = _most(quarterly, "jobs")
        text += (f" Stacked bars per quarter over {len(quarterly)} quarters: the busiest is "
                 f"{busiest['quarter']} with {busiest['jobs']:,} jobs.")
    elif not is_skipped(quarterly) and quarterly:
        text += f" No per-quarter chart: every job falls in {quarterly[0]['quarter']}."
    return text


def _largest_bar(rows: Any, key: str, unit: str) -> str:
    if is_skipped(rows):
        return f"not drawn ({rows['reason']})"
    if not rows:
        return "no such jobs"
    top = _most(rows, "jobs")
    largest = rows[-1][key]
    def many(value: Any) -> str:
        return f"{value} {unit if str(value) != '1' else unit[:-1]}"

    return (f"most common {many(top[key])} ({top['jobs']:,} jobs, {_pct(top['share'])}), "
            f"largest {many(largest)}")


def _parallelism_breakdown(data: dict[str, Any]) -> str:
    r = data["analyses"]["parallelism"]
    pe = r["processing_element"]
    if "by_pe_count_bins" in r:
        return (f"Bar chart on a log scale of all jobs by {pe} count (power-of-two bins): "
                f"{_largest_bar(r['by_pe_count_bins'], 'bin', f'{pe}s')}. No node-count chart: "
                f"{r['multi_node_by_node_count'].get('reason', 'node counts are unknown')}.")
    left = _largest_bar(r["single_node_by_pe_count"], "pes", f"{pe}s")
    left_name = f"single-node jobs by {pe} count"
    right = _largest_bar(r["multi_node_by_node_count"], "nodes", "nodes")
    parts = [f"{left_name}: {left}", f"multi-node jobs by node count: {right}"]
    return "Two bar charts on a log scale: " + "; ".join(parts) + "."


def _wra(data: dict[str, Any]) -> str:
    r = data["analyses"]["wra"]
    top = _most(r["histogram"], "jobs")
    text = (f"Histogram of walltime request accuracy (actual over requested walltime) for "
            f"{r['jobs']:,} jobs: mean {r['mean']:.3f}"
            f"{_paper(data, 'wra_mean', lambda v: f'{v:.3f}')}, median {r['median']:.3f}; the "
            f"fullest bin is {wra_bin_label(top)} with {_pct(top['share'])} of jobs, and "
            f"{_pct(r['share_above_1'])} ran past their request (WRA above 1.0).")
    quarterly = r["quarterly"]
    if time_series(quarterly):
        low, high = _least(quarterly, "mean"), _most(quarterly, "mean")
        text += (f" The mean per quarter ranges from {low['mean']:.3f} ({low['quarter']}) to "
                 f"{high['mean']:.3f} ({high['quarter']}).")
    return text


def _walltime_cdf(data: dict[str, Any]) -> str:
    r = data["analyses"]["walltime"]
    groups = [g for g in r["groups"].values() if not is_skipped(g)]
    medians = ", ".join(f"{g['label']} {_hours(g['median'])}" for g in groups)
    longest = _most(groups, "median")
    text = (f"Cumulative distribution of walltime on a log scale, {count(len(groups), 'curve')}. "
            f"Median walltime: {medians}")
    text += _paper(data, "median_walltime_h_all", lambda v: f"{_hours(v)} for all jobs") + "."
    if len(groups) > 1:
        label = longest["label"]
        text += f" {label[:1].upper() + label[1:]} jobs run longest at the median."
    return text


def _strength(rho: float) -> str:
    size = abs(rho)
    word = ("no" if size < 0.1 else "a weak" if size < 0.3 else "a moderate" if size < 0.5
            else "a strong")
    return word + ("" if size < 0.1 else " positive" if rho > 0 else " negative")


def _correlation(data: dict[str, Any]) -> str:
    r = data["analyses"]["correlation"]
    rows = r["walltime_h_by_pe_bin"]
    pe = data["trace"]["processing_element"]
    text = (f"Box plots of walltime per {pe}-count bin of the balanced sample "
            f"({sum(row['jobs'] for row in rows):,} jobs, {len(rows)} bins): the median walltime "
            f"is {_hours(rows[0]['median'])} at {rows[0]['bin']} {plural(2 - (rows[0]['bin'] == '1'), pe)} and "
            f"{_hours(rows[-1]['median'])} at {rows[-1]['bin']} {pe}s")
    top = _most(rows, "median")
    text += f", highest in bin {top['bin']} ({_hours(top['median'])})."
    sample = r["balanced_sample"]
    if not is_skipped(sample):
        text += (f" Spearman {sample['spearman']:.3f} on the balanced sample: "
                 f"{_strength(sample['spearman'])} correlation"
                 f"{_paper(data, 'spearman_balanced', lambda v: f'{v:.3f}')}.")
    return text


def _arrivals(data: dict[str, Any]) -> str:
    r = data["analyses"]["arrivals"]
    hours = [h for h in r["by_hour"] if h["mean"] is not None]
    busy, quiet = _most(hours, "mean"), _least(hours, "mean")
    days = [d for d in r["by_weekday"] if d["mean"] is not None]
    text = (f"Bar charts of submissions per day ({r['time_zone']}): the busiest hour is "
            f"{busy['hour']:02d}:00 (mean {busy['mean']:.1f} jobs per day), the quietest "
            f"{quiet['hour']:02d}:00 ({quiet['mean']:.1f})")
    if days:
        top, low = _most(days, "mean"), _least(days, "mean")
        text += (f"; the busiest weekday is {top['weekday']} (mean {top['mean']:.1f}), the "
                 f"quietest {low['weekday']} ({low['mean']:.1f})")
    return text + (f"; {_pct(r['weekday_share'])} of submissions fall on weekdays"
                   f"{_paper(data, 'weekday_share', _pct)}.")


def _listing(rows: list[dict[str, Any]], name: Callable[[dict[str, Any]], str]) -> str:
    shown = [f"{name(r)} {r['jobs']:,} ({_pct(r['share'])})" for r in rows[:4]]
    rest = len(rows) - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest > 0 else "")


def _queues(data: dict[str, Any]) -> str:
    q = data["context"]["queues"]
    rows = sorted(q["queues"], key=lambda r: -r["jobs"])
    return (f"Bar chart of jobs per queue, {count(len(rows), 'queue')}: "
            f"{_listing(rows, lambda r: r['label'])}.")


def _outcomes(data: dict[str, Any]) -> str:
    o = data["context"]["outcomes"]
    rows = sorted(o["codes"], key=lambda r: -r["jobs"])
    success = _pct(o["success_share"]) if o["success_share"] is not None else "an unknown share"
    return (f"Bar chart of jobs per {o['column']}: {_listing(rows, lambda r: r['label'])}; "
            f"{success} of jobs succeeded{_paper(data, 'success_share', _pct)}.")


def _per_quarter(data: dict[str, Any]) -> str:
    rows = data["context"]["per_quarter"]["quarters"]
    top = _most(rows, "jobs")
    text = (f"Bars of jobs submitted per quarter over {len(rows)} quarters, from "
            f"{rows[0]['jobs']:,} in {rows[0]['quarter']} to {rows[-1]['jobs']:,} in "
            f"{rows[-1]['quarter']}, the most in {top['quarter']} ({top['jobs']:,})")
    users = [r for r in rows if r["users"] is not None]
    if users:
        peak = _most(users, "users")
        text += f"; active users peak at {peak['users']:,} in {peak['quarter']}"
    return text + "."


def _utilization(data: dict[str, Any]) -> str:
    u = data["context"]["utilization"]
    pe, width = u["processing_element"], "day" if u["bin_s"] == 86400 else "week"
    busy = u["busy_pes_mean"]
    text = (f"Step plot of busy {pe}s per {width} over {len(busy)} {width}s: the peak {width} "
            f"averages {u['peak_bin_busy_pes']:,.1f} busy {pe}s")
    cap = u["capacity"]
    if is_skipped(cap):
        return text + f"; the capacity is unknown ({cap['reason']})."
    low, high = min(cap["capacity_pes"]), max(cap["capacity_pes"])
    capacity = f"{high:,.0f}" if low == high else f"{low:,.0f} to {high:,.0f}"
    return (text + f" against a capacity of {capacity} {pe}s; mean utilization "
            f"{_pct(cap['mean_utilization'])}{_paper(data, 'mean_utilization', _pct)}, "
            f"{count(cap['bins_over_capacity'], width)} above capacity.")


ALT: dict[str, Callable[[dict[str, Any]], str]] = {
    "parallelism.png": _parallelism,
    "parallelism_breakdown.png": _parallelism_breakdown,
    "wra.png": _wra,
    "walltime_cdf.png": _walltime_cdf,
    "correlation.png": _correlation,
    "arrivals.png": _arrivals,
    "queues.png": _queues,
    "outcomes.png": _outcomes,
    "per_quarter.png": _per_quarter,
    "utilization.png": _utilization,
}


def alt_text(data: dict[str, Any], name: str) -> str:
    """The finding that figure ``name`` shows, in words, from the report data."""
    return ALT[name](data)
