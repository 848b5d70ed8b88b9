"""The report's sections as plain blocks (text, notes, headings, tables, figures).

One description of every section, rendered twice: as Markdown (``render.markdown``, report.md)
and as HTML (``html.page``, index.html, through its Jinja2 template). Cells are final text.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from swftools.report.frame import is_skipped
from swftools.report.wra import bin_label


@dataclass(frozen=True)
class Text:
    """A paragraph."""

    text: str
    kind: str = "text"


@dataclass(frozen=True)
class Note:
    """A remark in italics (an analysis or table that could not be computed)."""

    text: str
    kind: str = "note"


@dataclass(frozen=True)
class Heading:
    """A sub-heading: a level-3 heading (``###``) or a bold line (``level`` 4)."""

    text: str
    level: int = 4
    kind: str = "heading"


@dataclass(frozen=True)
class Table:
    """A table; ``caption`` is shown in HTML and, when ``titled``, as a bold line in Markdown.

    ``numeric`` marks the columns aligned right in HTML (every column but the first by default).
    """

    caption: str
    headers: list[str]
    rows: list[list[str]]
    titled: bool = False
    kind: str = "table"
    numeric: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.numeric:
            object.__setattr__(self, "numeric", [i > 0 for i in range(len(self.headers))])


@dataclass(frozen=True)
class FigureRef:
    """A figure by file name, with its short label (the Markdown alt text)."""

    name: str
    label: str
    kind: str = "figure"


Block = Text | Note | Heading | Table | FigureRef


@dataclass(frozen=True)
class Section:
    """One section: ``key`` (anchor), title, level (2 or 3) and its blocks."""

    key: str
    title: str
    blocks: list[Block]
    level: int = 2


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal (``n/a`` when unknown)."""
    return "n/a" if value is None else f"{100 * value:.1f} %"


def num(value: Any, digits: int = 3) -> str:
    """An integer with thousands separators, a float with ``digits`` decimals (``n/a`` if None)."""
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def _skip(result: dict[str, Any]) -> list[Block]:
    return [Note(f"Not computed: {result['reason']}.")]


def _figure(name: str, figures: list[str], label: str) -> list[Block]:
    return [FigureRef(name, label)] if name in figures else []


Body = Callable[[dict[str, Any], list[str]], list[Block]]


def _analysis(key: str, title: str) -> Callable[[Body], Callable[[dict[str, Any], list[str]], Section]]:
    """A numbered analysis section: its blocks, or why it was skipped."""
    def wrap(body: Body) -> Callable[[dict[str, Any], list[str]], Section]:
        @functools.wraps(body)
        def build(r: dict[str, Any], figures: list[str]) -> Section:
            return Section(key, title, _skip(r) if is_skipped(r) else body(r, figures))
        return build
    return wrap


@_analysis("parallelism", "1. Parallelism")
def _parallelism(r: dict[str, Any], figures: list[str]) -> list[Block]:
    out: list[Block] = [Text(f"Population: {r['population']} ({r['jobs']:,} jobs; "
                             f"{r['excluded_unknown_size']:,} of unknown size left out). "
                             f"Node counts: {r['nodes_source'] or 'unknown'}.")]
    out.append(Table("Jobs by parallelism class", ["Class", "Jobs", "Share"],
                     [[c["label"], f"{c['jobs']:,}", pct(c["share"])]
                      for c in r["classes"].values()]))
    pe = r["processing_element"]
    if r["nodes_source"] is None:  # one note for the two node-count tables, not one each
        out.append(Note(f"No single-node or multi-node breakdown: "
                        f"{r['multi_node_by_node_count']['reason']}."))
    for key, title, col in (("single_node_by_pe_count", f"Single-node jobs by {pe} count", "pes"),
                            ("multi_node_by_node_count", "Multi-node jobs by node count", "nodes"),
                            ("by_pe_count_bins", f"Jobs by {pe} count (power-of-two bins)", "bin")):
        if key not in r:
            continue
        rows = r[key]
        if is_skipped(rows) and r["nodes_source"] is None:
            continue
        if is_skipped(rows):
            out += [Heading(title)] + _skip(rows)
        elif not rows:
            out += [Heading(title), Note("No such jobs.")]
        else:
            out.append(Table(title, [col if col != "pes" else f"{pe}s", "Jobs", "Share"],
                             [[str(x[col]), f"{x['jobs']:,}", pct(x["share"])] for x in rows],
                             titled=True))
    quarterly = r["quarterly"]
    if is_skipped(quarterly):
        out += [Heading("Per quarter")] + _skip(quarterly)
    else:
        labels = {k: c["label"] for k, c in r["classes"].items()}
        out.append(Table("Per quarter", ["Quarter", "Jobs"] + [f"{v} (share)" for v in labels.values()],
                         [[q["quarter"], f"{q['jobs']:,}"] +
                          [f"{q['classes'][k]:,} ({pct(q['shares'][k])})" for k in labels]
                          for q in quarterly], titled=True))
    return out + _figure("parallelism.png", figures, "parallelism") + \
        _figure("parallelism_breakdown.png", figures, "parallelism breakdown")


@_analysis("wra", "2. Walltime request accuracy")
def _wra(r: dict[str, Any], figures: list[str]) -> list[Block]:
    out: list[Block] = [Text(f"WRA = actual walltime / requested walltime. Population: "
                             f"{r['population']} ({r['jobs']:,} jobs).")]
    q = r["quantiles"]
    out.append(Table("Walltime request accuracy: statistics",
                     ["Mean", "Std", "Median", "P10", "P25", "P75", "P90", "Above 1"],
                     [[num(r["mean"]), num(r["std"]), num(r["median"]), num(q["p10"]),
                       num(q["p25"]), num(q["p75"]), num(q["p90"]), pct(r["share_above_1"])]],
                     numeric=[True] * 8))
    at_max = r["at_queue_max"]
    title = "Jobs requesting their queue's maximum walltime"
    if is_skipped(at_max):
        out += [Heading(title)] + _skip(at_max)
    else:
        out += [Heading(title), Text(f"{at_max['at_max']:,} of {at_max['jobs']:,} jobs "
                                     f"({pct(at_max['share'])}).")]
        out.append(Table(f"{title}, per queue",
                         ["Queue", "Max walltime (h)", "Jobs", "At max", "Share"],
                         [[b["queue"], num(b["walltime_max_s"] / 3600, 1), f"{b['jobs']:,}",
                           f"{b['at_max']:,}", pct(b["share"])] for b in at_max["by_queue"]]))
    out.append(Table("Distribution", ["WRA", "Jobs", "Share"],
                     [[bin_label(h), f"{h['jobs']:,}", pct(h["share"])] for h in r["histogram"]],
                     titled=True))
    out.append(Text("Each bin includes its upper edge: a job that ran exactly its request "
                    "(WRA 1.0) counts in 0.9 to 1.0, so the bin above 1.0 holds the jobs that "
                    "ran past their request (Above 1)."))
    if is_skipped(r["quarterly"]):
        out += [Heading("Per quarter")] + _skip(r["quarterly"])
    else:
        out.append(Table("Per quarter", ["Quarter", "Jobs", "Mean", "Median", "Std"],
                         [[x["quarter"], f"{x['jobs']:,}", num(x["mean"]), num(x["median"]),
                           num(x["std"])] for x in r["quarterly"]], titled=True))
    return out + _figure("wra.png", figures, "walltime request accuracy")


@_analysis("walltime", "3. Walltime")
def _walltime(r: dict[str, Any], figures: list[str]) -> list[Block]:
    out: list[Block] = [Text(f"Population: {r['population']} ({r['jobs']:,} jobs). Hours.")]
    rows = []
    for group in r["groups"].values():
        if is_skipped(group):
            continue
        rows.append([group["label"], f"{group['count']:,}", num(group["mean"]), num(group["std"]),
                     num(group["median"]), num(group["min"]), num(group["max"])])
    out.append(Table("Walltime in hours by parallelism class",
                     ["Jobs", "Count", "Mean", "Std", "Median", "Min", "Max"], rows))
    missing = {g["reason"]: None for g in r["groups"].values() if is_skipped(g)}
    if missing:  # each reason once ("node counts are unknown" covers two classes)
        out.append(Text("Not computed: " + "; ".join(missing) + "."))
    return out + _figure("walltime_cdf.png", figures, "walltime CDF")


@_analysis("correlation", "4. Parallelism vs walltime")
def _correlation(r: dict[str, Any], figures: list[str]) -> list[Block]:
    out: list[Block] = [Text(
        f"Population: {r['population']}. Variables: {r['variables']}. Balanced sample: up to "
        f"{r['per_class']:,} single and {r['per_class']:,} multi jobs, seed {r['seed']}.")]
    rows = []
    for name, c in (("balanced sample", r["balanced_sample"]), ("all jobs", r["all_jobs"])):
        if is_skipped(c):
            rows.append([name, "n/a", c["reason"], "", "", ""])
        else:
            rows.append([name, f"{c['jobs']:,}", num(c["spearman"]),
                         f"{c['spearman_p_value']:.2g}", num(c["pearson_log"]),
                         f"{c['pearson_log_p_value']:.2g}"])
    out.append(Table("Rank and log-linear correlation of parallelism and walltime",
                     ["Jobs", "Count", "Spearman", "p", "Pearson (log)", "p"], rows))
    out.append(Text("The box plot draws the balanced sample, the jobs the coefficients above "
                    "are computed from."))
    return out + _figure("correlation.png", figures, "walltime by parallelism")


@_analysis("arrivals", "5. Arrivals")
def _arrivals(r: dict[str, Any], figures: list[str]) -> list[Block]:
    out: list[Block] = [Text(
        f"Population: {r['population']} ({r['jobs']:,} jobs over {r['days']:,} days). Local "
        f"time zone {r['time_zone']} (from {r['time_zone_source']}). Jobs per day: "
        f"{num(r['jobs_per_day']['mean'], 1)} ± {num(r['jobs_per_day']['std'], 1)}; "
        f"{pct(r['weekday_share'])} on weekdays.")]
    out.append(Table("Submissions by hour of day", ["Hour", "Jobs", "Mean per day", "Std"],
                     [[f"{h['hour']:02d}", f"{h['jobs']:,}", num(h["mean"], 2), num(h["std"], 2)]
                      for h in r["by_hour"]]))
    out.append(Table("Submissions by day of week",
                     ["Day", "Days counted", "Jobs", "Mean per day", "Std"],
                     [[d["weekday"], str(d["weeks"]), f"{d['jobs']:,}", num(d["mean"], 1),
                       num(d["std"], 1)] for d in r["by_weekday"]]))
    return out + _figure("arrivals.png", figures, "arrivals")


def _context(c: dict[str, Any], figures: list[str]) -> list[Section]:
    q = c["queues"]
    queues: list[Block] = []
    queues += _skip(q) if is_skipped(q) else [Table(
        "Jobs per queue", ["Queue", "Jobs", "Share"],
        [[x["label"], f"{x['jobs']:,}", pct(x["share"])] for x in q["queues"]])]
    queues += _figure("queues.png", figures, "queues")
    o = c["outcomes"]
    if is_skipped(o):
        outcomes = _skip(o)
    else:
        outcomes = [Text(f"Success: {o['success_rule']}; {pct(o['success_share'])} of jobs with "
                         f"a known outcome ({o['unknown']:,} unknown)."),
                    Table("Jobs per outcome", [o["column"], "Meaning", "Jobs", "Share"],
                          [[str(x["code"]), x["label"], f"{x['jobs']:,}", pct(x["share"])]
                           for x in o["codes"]], numeric=[False, False, True, True])]
    outcomes += _figure("outcomes.png", figures, "outcomes")
    p = c["per_quarter"]
    if is_skipped(p):
        quarter = _skip(p)
    else:
        quarter = [Table("Jobs and active users per quarter",
                         ["Quarter", "Jobs", "Jobs ≥ 60 s", "Active users", "Active groups"],
                         [[x["quarter"], f"{x['jobs']:,}", f"{x['jobs_min_60s']:,}",
                           num(x["users"]), num(x["groups"])] for x in p["quarters"]])]
        if p["notes"]:
            quarter.append(Text("\n".join(note + "." for note in p["notes"])))
    quarter += _figure("per_quarter.png", figures, "jobs and active users per quarter")
    u = c["utilization"]
    if is_skipped(u):
        usage = _skip(u)
    else:
        cap = u["capacity"]
        text = (f"{u['jobs']:,} jobs with known start, finish and size; peak bin mean "
                f"{num(u['peak_bin_busy_pes'], 1)} busy {u['processing_element']}s.")
        if is_skipped(cap):
            text += f" Utilization not computed: {cap['reason']}."
        else:
            text += (f" Mean utilization {pct(cap['mean_utilization'])} of the capacity "
                     f"({cap['source']}); {cap['bins_over_capacity']} bins above capacity.")
        usage = [Text(text)]
    usage += _figure("utilization.png", figures, "utilization over time")
    return [Section("context-queues", "Queues", queues, 3),
            Section("context-outcomes", "Outcomes", outcomes, 3),
            Section("context-per-quarter", "Per quarter", quarter, 3),
            Section("context-utilization", "Utilization", usage, 3)]


CONTEXT_INTRO = "All jobs (no 60 s filter)."
ANALYSES = ("parallelism", "wra", "walltime", "correlation", "arrivals")
_BUILDERS = {"parallelism": _parallelism, "wra": _wra, "walltime": _walltime,
             "correlation": _correlation, "arrivals": _arrivals}


def analyses(data: dict[str, Any]) -> list[Section]:
    """The five analysis sections, in the paper's order."""
    return [_BUILDERS[key](data["analyses"][key], data["figures"]) for key in ANALYSES]


def context(data: dict[str, Any]) -> list[Section]:
    """The context sub-sections: queues, outcomes, per quarter, utilization."""
    return _context(data["context"], data["figures"])
