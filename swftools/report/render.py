"""``report.json`` (every number, sorted keys, 6 significant digits) and ``report.md``."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from typing import Any

from swftools.report.frame import is_skipped
from swftools.report.summary import table_markdown

SIGNIFICANT_DIGITS = 6


def rounded(value: Any) -> Any:
    """``value`` with every float rounded to 6 significant digits (NaN and infinities -> None)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    if isinstance(value, int):
        return value
    if isinstance(value, dict):
        return {str(k): rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v) for v in value]
    if hasattr(value, "item"):  # numpy scalar
        return rounded(value.item())
    return value


def json_text(data: dict[str, Any]) -> str:
    """The canonical text of report.json: sorted keys, 2-space indent, final newline."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def _table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _skip_line(result: dict[str, Any]) -> list[str]:
    return [f"*Not computed: {result['reason']}.*", ""]


def _figure(name: str, figures: list[str], alt: str) -> list[str]:
    return [f"![{alt}]({name})", ""] if name in figures else []


Section = Callable[[dict[str, Any], list[str]], list[str]]


def _section(title: str) -> Callable[[Section], Section]:
    """A numbered analysis section: its heading, then the body's lines or why it was skipped."""
    def wrap(body: Section) -> Section:
        @functools.wraps(body)
        def render(r: dict[str, Any], figures: list[str]) -> list[str]:
            return [title, ""] + (_skip_line(r) if is_skipped(r) else body(r, figures))
        return render
    return wrap


@_section("## 1. Parallelism")
def _parallelism(r: dict[str, Any], figures: list[str]) -> list[str]:
    out = [f"Population: {r['population']} ({r['jobs']:,} jobs; "
           f"{r['excluded_unknown_size']:,} of unknown size left out). "
           f"Node counts: {r['nodes_source'] or 'unknown'}.", ""]
    out += _table(["Class", "Jobs", "Share"],
                  [[c["label"], f"{c['jobs']:,}", _pct(c["share"])] for c in r["classes"].values()])
    pe = r["processing_element"]
    for key, title, col in (("single_node_by_pe_count", f"Single-node jobs by {pe} count", "pes"),
                            ("multi_node_by_node_count", "Multi-node jobs by node count", "nodes"),
                            ("by_pe_count_bins", f"Jobs by {pe} count (power-of-two bins)", "bin")):
        if key not in r:
            continue
        out += [f"**{title}**", ""]
        rows = r[key]
        if is_skipped(rows):
            out += _skip_line(rows)
        elif not rows:
            out += ["*No such jobs.*", ""]
        else:
            out += _table([col if col != "pes" else f"{pe}s", "Jobs", "Share"],
                          [[x[col], f"{x['jobs']:,}", _pct(x["share"])] for x in rows])
    out += ["**Per quarter**", ""]
    quarterly = r["quarterly"]
    if is_skipped(quarterly):
        out += _skip_line(quarterly)
    else:
        labels = {k: c["label"] for k, c in r["classes"].items()}
        out += _table(["Quarter", "Jobs"] + [f"{v} (share)" for v in labels.values()],
                      [[q["quarter"], f"{q['jobs']:,}"] +
                       [f"{q['classes'][k]:,} ({_pct(q['shares'][k])})" for k in labels]
                       for q in quarterly])
    return out + _figure("parallelism.png", figures, "parallelism") + \
        _figure("parallelism_breakdown.png", figures, "parallelism breakdown")


@_section("## 2. Walltime request accuracy")
def _wra(r: dict[str, Any], figures: list[str]) -> list[str]:
    out = [f"WRA = actual walltime / requested walltime. Population: {r['population']} "
           f"({r['jobs']:,} jobs).", ""]
    q = r["quantiles"]
    out += _table(["Mean", "Std", "Median", "P10", "P25", "P75", "P90", "Above 1"],
                  [[_num(r["mean"]), _num(r["std"]), _num(r["median"]), _num(q["p10"]),
                    _num(q["p25"]), _num(q["p75"]), _num(q["p90"]), _pct(r["share_above_1"])]])
    at_max = r["at_queue_max"]
    out += ["**Jobs requesting their queue's maximum walltime**", ""]
    if is_skipped(at_max):
        out += _skip_line(at_max)
    else:
        out += [f"{at_max['at_max']:,} of {at_max['jobs']:,} jobs ({_pct(at_max['share'])}).", ""]
        out += _table(["Queue", "Max walltime (h)", "Jobs", "At max", "Share"],
                      [[b["queue"], _num(b["walltime_max_s"] / 3600, 1), f"{b['jobs']:,}",
                        f"{b['at_max']:,}", _pct(b["share"])] for b in at_max["by_queue"]])
    out += ["**Distribution**", ""]
    out += _table(["WRA", "Jobs", "Share"],
                  [[f"{h['from']:.1f} to " + (f"{h['to']:.1f}" if h["to"] is not None else "∞"),
                    f"{h['jobs']:,}", _pct(h["share"])] for h in r["histogram"]])
    out += ["**Per quarter**", ""]
    if is_skipped(r["quarterly"]):
        out += _skip_line(r["quarterly"])
    else:
        out += _table(["Quarter", "Jobs", "Mean", "Median", "Std"],
                      [[x["quarter"], f"{x['jobs']:,}", _num(x["mean"]), _num(x["median"]),
                        _num(x["std"])] for x in r["quarterly"]])
    return out + _figure("wra.png", figures, "walltime request accuracy")


@_section("## 3. Walltime")
def _walltime(r: dict[str, Any], figures: list[str]) -> list[str]:
    out = [f"Population: {r['population']} ({r['jobs']:,} jobs). Hours.", ""]
    rows = []
    for group in r["groups"].values():
        if is_skipped(group):
            continue
        rows.append([group["label"], f"{group['count']:,}", _num(group["mean"]),
                     _num(group["std"]), _num(group["median"]), _num(group["min"]),
                     _num(group["max"])])
    out += _table(["Jobs", "Count", "Mean", "Std", "Median", "Min", "Max"], rows)
    missing = [f"{k}: {g['reason']}" for k, g in r["groups"].items() if is_skipped(g)]
    if missing:
        out += ["Not computed: " + "; ".join(missing) + ".", ""]
    return out + _figure("walltime_cdf.png", figures, "walltime CDF")


@_section("## 4. Parallelism vs walltime")
def _correlation(r: dict[str, Any], figures: list[str]) -> list[str]:
    out = [f"Population: {r['population']}. Variables: {r['variables']}. Balanced sample: up to "
           f"{r['per_class']:,} single and {r['per_class']:,} multi jobs, seed {r['seed']}.", ""]
    rows = []
    for name, c in (("balanced sample", r["balanced_sample"]), ("all jobs", r["all_jobs"])):
        if is_skipped(c):
            rows.append([name, "n/a", c["reason"], "", "", ""])
        else:
            rows.append([name, f"{c['jobs']:,}", _num(c["spearman"]),
                         f"{c['spearman_p_value']:.2g}", _num(c["pearson_log"]),
                         f"{c['pearson_log_p_value']:.2g}"])
    out += _table(["Jobs", "Count", "Spearman", "p", "Pearson (log)", "p"], rows)
    return out + _figure("correlation.png", figures, "walltime by parallelism")


@_section("## 5. Arrivals")
def _arrivals(r: dict[str, Any], figures: list[str]) -> list[str]:
    out = [f"Population: {r['population']} ({r['jobs']:,} jobs over {r['days']:,} days). Local "
           f"time zone {r['time_zone']} (from {r['time_zone_source']}). Jobs per day: "
           f"{_num(r['jobs_per_day']['mean'], 1)} ± {_num(r['jobs_per_day']['std'], 1)}; "
           f"{_pct(r['weekday_share'])} on weekdays.", ""]
    out += _table(["Hour", "Jobs", "Mean per day", "Std"],
                  [[f"{h['hour']:02d}", f"{h['jobs']:,}", _num(h["mean"], 2), _num(h["std"], 2)]
                   for h in r["by_hour"]])
    out += _table(["Day", "Days counted", "Jobs", "Mean per day", "Std"],
                  [[d["weekday"], d["weeks"], f"{d['jobs']:,}", _num(d["mean"], 1),
                    _num(d["std"], 1)] for d in r["by_weekday"]])
    return out + _figure("arrivals.png", figures, "arrivals")


def _context(c: dict[str, Any], figures: list[str]) -> list[str]:
    out = ["## Context", "", "All jobs (no 60 s filter).", "", "### Queues", ""]
    q = c["queues"]
    out += _skip_line(q) if is_skipped(q) else _table(
        ["Queue", "Jobs", "Share"], [[x["label"], f"{x['jobs']:,}", _pct(x["share"])]
                                     for x in q["queues"]])
    out += _figure("queues.png", figures, "queues") + ["### Outcomes", ""]
    o = c["outcomes"]
    if is_skipped(o):
        out += _skip_line(o)
    else:
        out += [f"Success: {o['success_rule']}; {_pct(o['success_share'])} of jobs with a known "
                f"outcome ({o['unknown']:,} unknown).", ""]
        out += _table([o["column"], "Meaning", "Jobs", "Share"],
                      [[x["code"], x["label"], f"{x['jobs']:,}", _pct(x["share"])]
                       for x in o["codes"]])
    out += _figure("outcomes.png", figures, "outcomes") + ["### Per quarter", ""]
    p = c["per_quarter"]
    if is_skipped(p):
        out += _skip_line(p)
    else:
        out += _table(["Quarter", "Jobs", "Jobs ≥ 60 s", "Active users", "Active groups"],
                      [[x["quarter"], f"{x['jobs']:,}", f"{x['jobs_min_60s']:,}",
                        _num(x["users"]), _num(x["groups"])] for x in p["quarters"]])
        out += [note + "." for note in p["notes"]] + ([""] if p["notes"] else [])
    out += _figure("per_quarter.png", figures, "jobs and active users per quarter")
    out += ["### Utilization", ""]
    u = c["utilization"]
    if is_skipped(u):
        out += _skip_line(u)
    else:
        cap = u["capacity"]
        text = (f"{u['jobs']:,} jobs with known start, finish and size; peak bin mean "
                f"{_num(u['peak_bin_busy_pes'], 1)} busy {u['processing_element']}s.")
        if is_skipped(cap):
            text += f" Utilization not computed: {cap['reason']}."
        else:
            text += (f" Mean utilization {_pct(cap['mean_utilization'])} of the capacity "
                     f"({cap['source']}); {cap['bins_over_capacity']} bins above capacity.")
        out += [text, ""]
    return out + _figure("utilization.png", figures, "utilization over time")


def markdown(data: dict[str, Any]) -> str:
    """The text of report.md."""
    t = data["trace"]
    name = t["source_file"] or "job table"
    out = [f"# Workload report: {name}", "",
           f"Generated by swftools {data['swftools_version']} (`swftools report`). "
           f"{t['jobs']:,} jobs; format {t['source_format'] or 'unknown'}; site "
           f"{t['site'] or 'none'}; processing element: {t['processing_element']}; "
           f"success: {t['success_rule'] or 'not recorded'}; local time zone {t['time_zone']} "
           f"(from {t['time_zone_source']}).", ""]
    if not t["absolute_times"]:
        out += [f"Calendar analyses are limited: {t['absolute_times_reason']}.", ""]
    out += ["Filters follow the AAIC workload paper: jobs of at least 60 s; successful jobs where "
            "the paper says so. Every number is in `report.json`.", "", "## Summary", "",
            table_markdown(data["summary"])]
    a = data["analyses"]
    figures = data["figures"]
    out += _parallelism(a["parallelism"], figures) + _wra(a["wra"], figures)
    out += _walltime(a["walltime"], figures) + _correlation(a["correlation"], figures)
    out += _arrivals(a["arrivals"], figures) + _context(data["context"], figures)
    return "\n".join(out).rstrip("\n") + "\n"
