"""``index.html``: the report as one self-contained static page (and a release's landing page).

The page is rendered by Jinja2 from ``swftools/report/templates/index.html.j2``: CSS inlined,
figures inlined as SVG images (``data:`` URLs), no script and no fetch from the network. It holds
the headline numbers, the five analyses with their tables and figures (beside the AAIC paper's
published values only for an AAIC trace), the context, the validation summary per rule, the replay consistency summary,
the what-if comparison when given, and, for a release, the download list (file, size,
SHA-256), how to cite, the licence and the anonymization statement. Same input, same bytes.
"""

from __future__ import annotations

import base64
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from swftools.errors import InputError, count
from swftools.urls import INDEX_HTML, relative_href, web_href
from swftools.report import figures as figures_mod
from swftools.report import sections
from swftools.report.alt import alt_text
from swftools.report.frame import is_skipped
from swftools.report.summary import (PAPER_CITATION, PAPER_COLUMN, format_value,
                                     reference_applies)
from swftools.whatif.compare import COLUMNS as WHATIF_COLUMNS, table_cells

TEMPLATE = "index.html.j2"
TEMPLATES = Path(__file__).resolve().parent / "templates"
CSS_PX_PER_IN = 96  # an SVG sized in points shows at 96 CSS pixels per inch

# Summary rows (report.json "summary" keys) compared with the paper in each section
SECTION_KEYS = {
    "parallelism": ("single_pe_share", "single_node_share", "multi_node_share"),
    "wra": ("wra_mean", "wra_median", "at_queue_max_share"),
    "walltime": ("median_walltime_h_all", "median_walltime_h_single",
                 "median_walltime_h_single_node_multi", "median_walltime_h_multi_node"),
    "correlation": ("spearman_balanced", "pearson_log_balanced"),
    "arrivals": ("weekday_share", "peak_hour"),
    "context-outcomes": ("success_share",),
    "context-utilization": ("mean_utilization",),
}


@dataclass(frozen=True)
class Download:
    """One file of a release: relative path, size in bytes, SHA-256."""

    path: str
    size_bytes: int
    sha256: str

    @property
    def size_text(self) -> str:
        size = float(self.size_bytes)
        for unit in ("bytes", "KiB", "MiB", "GiB"):
            if size < 1024 or unit == "GiB":
                return (f"{self.size_bytes:,}\u00a0bytes" if unit == "bytes" else
                        f"{size:,.1f}\u00a0{unit}")
            size /= 1024
        raise AssertionError("unreachable")


@dataclass
class ReleaseInfo:
    """What a release's landing page adds to the report."""

    title: str
    version: str
    description: str
    downloads: list[Download]
    tarball: str
    citation: str  # from CITATION.cff
    how_to_cite: str
    license_name: str
    license_id: str
    license_url: str | None
    legalcode_url: str | None
    anonymization: list[str]
    source: str
    time_zone: str


def _svg_data_url(svg_text: str) -> str:
    svg_text = re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg_text, count=1)
    return "data:image/svg+xml;base64," + base64.b64encode(svg_text.encode("utf-8")).decode("ascii")


def _summary_row(row: dict[str, Any]) -> dict[str, str]:
    value = format_value(row["value"], row["kind"])
    if row["value"] is None and row["note"]:
        value = f"n/a ({row['note']})"
    paper = format_value(row["paper"], row["kind"]) if row["paper"] is not None else "—"
    return {"key": row["key"], "label": row["label"], "value": value, "paper": paper}


def headline(data: dict[str, Any]) -> list[dict[str, str]]:
    """The headline numbers: jobs, users, groups, period, queues, PEs (GPUs), utilization."""
    trace, context = data["trace"], data["context"]
    summary = {row["key"]: row for row in data["summary"]}
    pe = trace["processing_element"]

    def row(label: str, value: str, key: str | None = None) -> dict[str, str]:
        paper = summary.get(key, {}).get("paper") if key else None
        kind = summary.get(key, {}).get("kind", "text") if key else "text"
        return {"label": label, "value": value,
                "paper": format_value(paper, kind) if paper is not None else "—"}

    def count(value: int | None, missing: str) -> str:
        return f"{value:,}" if value is not None else missing

    first, last = trace["first_submit_local"], trace["last_submit_local"]
    period = (f"{first[:10]} to {last[:10]} ({trace['time_zone']})" if first and last else
              f"unknown ({trace['absolute_times_reason'] or 'no submit times'})")
    queues = context["queues"]
    if is_skipped(queues):
        queue_text = f"unknown ({queues['reason']})"
    else:
        names = [q["label"] for q in queues["queues"]]
        queue_text = f"{len(names):,}: " + ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
    usage = context["utilization"]
    capacity = None if is_skipped(usage) else usage["capacity"]
    if capacity is None or is_skipped(capacity):
        pes = "unknown (" + (capacity or usage)["reason"] + ")"
        utilization = pes
    else:
        low, high = min(capacity["capacity_pes"]), max(capacity["capacity_pes"])
        pes = f"{high:,.0f}" if low == high else f"{low:,.0f} to {high:,.0f} (over time)"
        utilization = format_value(capacity["mean_utilization"], "share")
    return [row("Jobs", f"{trace['jobs']:,}", "jobs"),
            row("Users", count(trace["users"], "not recorded"), "users"),
            row("Groups", count(trace["groups"], "not recorded")),
            row("Period (submissions)", period),
            row("Queues", queue_text),
            row(f"{pe[:1].upper() + pe[1:]}s (capacity)", pes),
            row(f"Mean {pe} utilization", utilization, "mean_utilization")]


def _headline_table(rows: list[dict[str, str]]) -> dict[str, Any]:
    """Headers and rows of the headline table; the paper's column only when it has a value."""
    if any(r["paper"] != "—" for r in rows):
        return {"headers": ["Figure", "This trace", PAPER_COLUMN],
                "rows": [[r["label"], r["value"], r["paper"]] for r in rows]}
    return {"headers": ["Figure", "This trace"], "rows": [[r["label"], r["value"]] for r in rows]}


def _figure_block(data: dict[str, Any], block: sections.FigureRef) -> dict[str, Any]:
    panels = figures_mod.panel_count(data, block.name)
    return {"kind": "figure", "name": block.name, "label": block.label[:1].upper() + block.label[1:],
            "alt": alt_text(data, block.name),
            "src": _svg_data_url(figures_mod.svg(data, block.name)),
            "narrow_src": _svg_data_url(figures_mod.svg(data, block.name, narrow=True)),
            "width": round(figures_mod.SIZE_IN[0] * CSS_PX_PER_IN),
            "height": round(figures_mod.SIZE_IN[1] * CSS_PX_PER_IN),
            "narrow_width": round(figures_mod.NARROW_PANEL_IN[0] * CSS_PX_PER_IN),
            "narrow_height": round(figures_mod.NARROW_PANEL_IN[1] * CSS_PX_PER_IN * panels)}


def _section(data: dict[str, Any], section: sections.Section,
             summary: dict[str, dict[str, Any]]) -> dict[str, Any]:
    blocks: list[Any] = []
    for block in section.blocks:
        blocks.append(_figure_block(data, block) if isinstance(block, sections.FigureRef)
                      else block)
    # the AAIC reference table: rows the paper states a value for, of an AAIC trace only
    paper = [_summary_row(summary[k]) for k in SECTION_KEYS.get(section.key, ())
             if k in summary and summary[k]["paper"] is not None]
    return {"key": section.key, "title": section.title, "level": section.level,
            "blocks": blocks, "paper": paper}


def validation_rows(validation: Any) -> dict[str, Any]:
    """The validation summary per rule: every rule run with its count, and the rules skipped."""
    from swftools.validate import describe_rules

    described = {rule_id: (severity, description)
                 for rule_id, severity, _, description in describe_rules()}
    counts = validation.rule_counts()
    first = {}
    for finding in validation:
        first.setdefault(finding.rule, finding.message)
    fired = {r["rule"]: r["severity"] for r in validation.summary()}
    rules = []
    for rule in sorted(set(validation.rules_run) | set(counts)):
        severity, description = described.get(rule, ("", ""))
        rules.append({"rule": rule, "severity": fired.get(rule, severity),
                      "count": f"{counts.get(rule, 0):,}", "description": description,
                      "first": first.get(rule, "")})
    rules.sort(key=lambda r: (r["count"] == "0", r["rule"]))
    return {"status": validation.status_line(), "valid": validation.valid,
            "errors": validation.errors, "warnings": validation.warnings,
            "info": validation.total("info"), "rules": rules,
            "skipped": [{"rule": r, "reason": why} for r, why in sorted(validation.skipped.items())]}


def load_whatif(path: str | os.PathLike) -> dict[str, Any]:
    """The comparison of a ``swftools whatif --out DIR`` folder (its ``comparison.json``)."""
    folder = Path(path)
    source = folder / "comparison.json" if folder.is_dir() else folder
    if not source.is_file():
        raise InputError(str(source), "no what-if comparison here",
                         expected="the folder written by `swftools whatif --out DIR` "
                                  "(with comparison.json)")
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(str(source), f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    policies = data.get("policies") if isinstance(data, dict) else None
    if not isinstance(policies, list) or not policies:
        raise InputError(str(source), "no policies in the what-if comparison", field="policies",
                         expected="a non-empty list of per-policy figures")
    for i, row in enumerate(policies):
        missing = [k for k, _, _ in WHATIF_COLUMNS if not isinstance(row.get(k), (int, float))]
        if missing or "policy" not in row:
            raise InputError(str(source), f"policy {i + 1} lacks {', '.join(missing) or 'policy'}",
                             field="policies", expected="figures of swftools.whatif.compare")
    return data


def check_whatif_trace(data: dict[str, Any], table: Any, path: str | os.PathLike) -> None:
    """Refuse a comparison made from another trace than ``table``: its recorded fingerprint
    (``swftools.fingerprint``) must be the table's. InputError naming both otherwise."""
    from swftools.fingerprint import table_fingerprint

    folder = Path(path)
    source = str(folder / "comparison.json" if folder.is_dir() else folder)
    trace = data.get("trace") if isinstance(data.get("trace"), dict) else {}
    recorded = trace.get("fingerprint")
    if not isinstance(recorded, str) or not recorded:
        raise InputError(source, "the what-if comparison records no trace fingerprint (an older "
                         "swftools wrote it), so it cannot be checked against this trace",
                         field="trace/fingerprint",
                         expected="a comparison written by this swftools: rerun `swftools whatif "
                                  "TRACE --out DIR` on this trace")
    own = table_fingerprint(table)
    if recorded != own:
        made = f"{trace.get('source_file') or 'a table'}, {trace.get('jobs', '?')} jobs"
        raise InputError(source, f"the what-if comparison was made from another trace ({made}) "
                         f"than this report's ({table.num_rows} jobs)", field="trace/fingerprint",
                         value=recorded, expected=f"{own}, the fingerprint of this trace's job "
                                                  "table: rerun `swftools whatif` on this trace")


def whatif_table(data: dict[str, Any], unit: str | None = None) -> dict[str, Any]:
    """The what-if comparison as a table: one row per policy, each figure with its ratio to the
    baseline (the first policy; ``n/a`` against a zero), units as in the text table: ``unit``
    (``gpu`` or ``processor``, the report's trace), else the one the comparison records."""
    unit = unit or (data.get("trace") or {}).get("processor_unit", "gpu")
    cells = table_cells(data["policies"], unit)
    rows = []
    for (name, values), ratios in zip(cells.values, cells.ratios):
        rows.append([name] + (values if ratios is None else
                              [f"{v} ({r.replace('x', '×', 1)})" for v, r in zip(values, ratios)]))
    context = ", ".join(f"{k} {data[k]}" for k in ("site", "scheduler", "sensitivity", "classes",
                                                   "seed") if data.get(k) is not None)
    if data.get("shape") == "gpus":  # recorded shapes (the default) go unsaid
        context += ", jobs placed by GPU count"
    return {"caption": f"What-if replays per placement policy (ratio to {cells.baseline}, "
                       "the first policy)",
            "headers": ["Policy"] + cells.headings, "rows": rows, "context": context}


def code_spans(text: str) -> Markup:
    """Settings text with Markdown code spans (`` `swftools synth` ``) as ``<code>``, the rest
    escaped: the page shows no literal backticks."""
    escaped = str(escape(text))
    return Markup(re.sub(r"`([^`\n]+)`", r"<code>\1</code>", escaped))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["rowcells"] = lambda r: [r["label"], r["value"], r["paper"]]
    env.filters["rulecells"] = lambda r: [r["rule"], r["severity"], r["count"], r["description"],
                                          r["first"]]
    env.filters["skipcells"] = lambda r: [r["rule"], r["reason"]]
    env.filters["cleancells"] = lambda r: [r["rule"], r["severity"], r["description"]]
    # every href the page writes goes through one of these (swftools.urls): no javascript: link
    env.filters["counted"] = lambda n, noun: count(n, noun)
    env.filters["code_spans"] = code_spans
    env.filters["web_href"] = web_href
    env.filters["relative_href"] = relative_href
    return env


def page(data: dict[str, Any], *, validation: Any = None, consistency: list[str] | None = None,
         whatif: dict[str, Any] | None = None, release: ReleaseInfo | None = None) -> str:
    """The text of index.html for report data (``Report.data``) and what else is known.

    ``validation`` is a ``swftools.validate`` report, ``consistency`` the replay consistency
    findings (``report.consistency.findings``), ``whatif`` a loaded ``comparison.json``
    (``load_whatif``), ``release`` the landing-page additions of an archive.
    """
    summary = {row["key"]: row for row in data["summary"]}
    trace = data["trace"]
    title = (release.title if release else
             f"Workload report: {trace['source_file'] or 'job table'}")
    values = {
        "title": title,
        "data": data,
        "trace": trace,
        "headline": _headline_table(headline(data)),
        "paper_column": PAPER_COLUMN,
        "paper_citation": PAPER_CITATION,
        "reference": reference_applies(trace),
        "analyses": [_section(data, s, summary) for s in sections.analyses(data)],
        "context_intro": sections.CONTEXT_INTRO,
        "context": [_section(data, s, summary) for s in sections.context(data)],
        "validation": validation_rows(validation) if validation is not None else None,
        "consistency": consistency,
        "whatif": whatif_table(whatif, "gpu" if trace["processing_element"] == "GPU"
                               else "processor") if whatif is not None else None,
        "release": release,
    }
    return _environment().get_template(TEMPLATE).render(values)
