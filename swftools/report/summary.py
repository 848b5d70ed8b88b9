"""The report's headline figures: one row per figure, with the AAIC reference where it applies.

The same rows are ``summary`` in ``report.json``, the summary table of ``report.md`` and what
``summary_table_markdown`` returns for an archive README. The AAIC paper's published values are a
reference only for a trace of the AAIC site (``reference_applies``): another site's trace, a CPU
trace above all, is never framed by them.
"""

from __future__ import annotations

from typing import Any

from swftools.report.frame import is_skipped
from swftools.synth.calibration import published

# The AAIC paper's headline figures by summary key (shares as fractions, walltimes in hours): the
# one table of published values, schemas/aaic-paper.json, which synth calibration uses too.
PAPER_CITATION: str = published()["citation"]
PAPER_COLUMN: str = published()["column"]
PAPER: dict[str, float] = {f["key"]: f["value"] for f in published()["figures"]}
# The sites the paper measured: its presets (and a variant of them) and synthetic AAIC-like tables
AAIC_SITE_PREFIX = "aaic"


def reference_applies(trace: dict[str, Any]) -> bool:
    """Whether the AAIC paper's values are a reference for this trace (report.json ``trace``):
    a GPU trace of the AAIC site (a preset ``aaic*``) or a synthetic AAIC-like table."""
    if trace.get("processing_element") != "GPU":
        return False
    site = trace.get("site") or ""
    return site.lower().startswith(AAIC_SITE_PREFIX) or trace.get("source_format") == "synth"


def _get(data: dict[str, Any], *path: str) -> tuple[Any, str | None]:
    """The value at ``path`` or ``(None, reason)`` when a section on the way was skipped."""
    node: Any = data
    for key in path:
        if is_skipped(node):
            return None, node["reason"]
        if not isinstance(node, dict) or key not in node:
            return None, "not available"
        node = node[key]
    if is_skipped(node):
        return None, node["reason"]
    return node, None


def rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The summary rows of report data: key, label, kind, value, paper value, note."""
    pe = data["trace"]["processing_element"]
    analyses, context = data["analyses"], data["context"]
    reference = PAPER if reference_applies(data["trace"]) else {}
    out: list[dict[str, Any]] = []

    def add(key: str, label: str, kind: str, found: tuple[Any, str | None]) -> None:
        value, note = found
        out.append({"key": key, "label": label, "kind": kind, "value": value,
                    "paper": reference.get(key), "note": note if value is None else None})

    trace = data["trace"]
    add("jobs", "Jobs", "count", (trace["jobs"], None))
    period = trace["first_submit_local"], trace["last_submit_local"]
    add("period", "Submissions (site local time)", "text",
        (f"{period[0][:10]} to {period[1][:10]}", None) if period[0] else
        (None, trace["absolute_times_reason"] or "no submit times"))
    add("users", "Users", "count", (trace["users"], None if trace["users"] is not None
                                    else "no user is recorded"))
    add("success_share", "Successful jobs (all jobs)", "share",
        _get(context, "outcomes", "success_share"))
    par = analyses["parallelism"]
    add("single_pe_share", f"Single-{pe} jobs (jobs of at least 60 s)", "share",
        _get(par, "classes", "single", "share"))
    if is_skipped(par) or "single_node_multi" in par["classes"]:
        single_node = (None, par.get("reason")) if is_skipped(par) else (
            par["classes"]["single"]["share"] + par["classes"]["single_node_multi"]["share"], None)
        add("single_node_share", "Single-node jobs (jobs of at least 60 s)", "share", single_node)
        add("multi_node_share", "Multi-node jobs (jobs of at least 60 s)", "share",
            _get(par, "classes", "multi_node", "share"))
    else:
        add("single_node_share", "Single-node jobs (jobs of at least 60 s)", "share",
            (None, "node counts are unknown"))
    add("wra_mean", "Walltime request accuracy, mean", "ratio", _get(analyses, "wra", "mean"))
    add("wra_median", "Walltime request accuracy, median", "ratio", _get(analyses, "wra", "median"))
    add("at_queue_max_share", "Jobs requesting their queue's maximum walltime", "share",
        _get(analyses, "wra", "at_queue_max", "share"))
    walltime = analyses["walltime"]
    for key in ("all", "single", "single_node_multi", "multi_node"):
        group, why = _get(walltime, "groups", key)
        label = group["label"] if group else {"all": "all jobs", "single": f"single-{pe}",
                                              "single_node_multi": f"single-node multi-{pe}",
                                              "multi_node": "multi-node"}[key]
        add(f"median_walltime_h_{key}", f"Median walltime, {label}", "hours",
            (group["median"], None) if group else (None, why))
    add("spearman_balanced", f"Spearman ({pe}s vs walltime, balanced sample)", "coefficient",
        _get(analyses, "correlation", "balanced_sample", "spearman"))
    add("pearson_log_balanced", "Pearson of logs (balanced sample)", "coefficient",
        _get(analyses, "correlation", "balanced_sample", "pearson_log"))
    add("weekday_share", "Submissions on weekdays (jobs of at least 60 s)", "share",
        _get(analyses, "arrivals", "weekday_share"))
    peak, why = _get(analyses, "arrivals", "peak_hour")
    add("peak_hour", "Busiest hour of day (site local time)", "text",
        (f"{peak:02d}:00-{peak:02d}:59", None) if peak is not None else (None, why))
    add("mean_utilization", f"Mean {pe} utilization", "share",
        _get(context, "utilization", "capacity", "mean_utilization"))
    return out


def format_value(value: Any, kind: str) -> str:
    """A summary value as text: shares in percent, hours with 3 decimals, counts with commas."""
    if value is None:
        return "n/a"
    if kind == "share":
        return f"{100 * value:.1f} %"
    if kind == "hours":
        return f"{value:.3f} h"
    if kind in ("ratio", "coefficient"):
        return f"{value:.3f}"
    if kind == "count":
        return f"{value:,}"
    return str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table_markdown(summary: list[dict[str, Any]]) -> str:
    """The summary rows as a Markdown table (trailing newline included); the AAIC reference
    column only when some row has a reference value."""
    with_reference = any(row["paper"] is not None for row in summary)
    lines = ([f"| Figure | This trace | {PAPER_COLUMN} |", "|---|---:|---:|"] if with_reference
             else ["| Figure | This trace |", "|---|---:|"])
    for row in summary:
        value = format_value(row["value"], row["kind"])
        if row["value"] is None and row["note"]:
            value = f"n/a ({row['note']})"
        cells = [_cell(row["label"]), _cell(value)]
        if with_reference:
            cells.append(format_value(row["paper"], row["kind"]) if row["paper"] is not None
                         else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
