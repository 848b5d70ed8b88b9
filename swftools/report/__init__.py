"""``swftools report``: the AAIC workload paper's five analyses, with figures, for any trace.

``report(path_or_table, out_dir)`` writes ``report.md``, ``report.json`` (every number; its
schema is ``schemas/report.schema.json``) and PNG figures into a new directory, atomically; with
``html=True`` also ``index.html``, the self-contained page of ``swftools.report.html`` (with the
validation summary, the replay consistency summary and, given ``whatif``, its comparison).
``analyze(path_or_table)`` computes the same without writing. ``summary_table_markdown(report)``
is the headline table an archive README embeds.

Analyses (filters of Takizawa, Ogawa, Takano, IPSJ HPC170, 2019: jobs of at least 60 s,
successful jobs where the paper says so): parallelism, walltime request accuracy, walltime
statistics, parallelism-walltime correlation, arrivals; plus context (queues, outcomes, jobs and
active users per quarter, utilization against capacity). An analysis the trace cannot support
(e.g. no requested walltimes) is reported as skipped, with the reason.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from swftools import formats
from swftools.atomic import atomic_dir, check_not_inside, check_writable
from swftools.errors import UsageError
from swftools.report import arrivals, context, correlation, figures, parallelism, walltime, wra
from swftools.report import render, summary
from swftools.report.frame import describe_trace, prepare, skipped
from swftools.site import Site, resolve_site

__all__ = ["Report", "analyze", "report", "summary_table_markdown"]

REPORT_JSON, REPORT_MD, REPORT_HTML = "report.json", "report.md", "index.html"


@dataclass
class Report:
    """A computed report: ``data`` is report.json's content, ``markdown`` report.md's text."""

    data: dict[str, Any]
    markdown: str
    figures: list[str]
    out_dir: Path | None = None
    timings_s: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def summary(self) -> list[dict[str, Any]]:
        """The headline rows (key, label, kind, value, paper, note)."""
        return self.data["summary"]

    def value(self, key: str) -> Any:
        """A headline figure by key (None when it could not be computed); KeyError if no such row."""
        for row in self.summary:
            if row["key"] == key:
                return row["value"]
        raise KeyError(key)


def _load(source: str | os.PathLike | pa.Table, site: Site | str | os.PathLike | None,
          fmt: str | None, allow_empty: bool = False) -> tuple[pa.Table, Site | None]:
    if isinstance(source, pa.Table):
        return source, resolve_site(site, source)
    chosen = fmt or formats.detect_format(source)
    table = formats.read(source, chosen, site=resolve_site(site, fmt=chosen),
                         allow_empty=allow_empty)
    return table, resolve_site(site, table, fmt=chosen)  # the one rule (swftools.site)


def analyze(source: str | os.PathLike | pa.Table, *, site: Site | str | os.PathLike | None = None,
            seed: int = 0, fmt: str | None = None, allow_empty: bool = False) -> Report:
    """Compute the report of a trace file, data package or job table, without writing anything.

    ``site`` (a Site, preset name or settings file) gives queue limits and capacity; without it a
    table whose metadata names a preset uses that preset. ``seed`` draws the balanced sample.
    A trace file without jobs is an error unless ``allow_empty``.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise UsageError(f"seed must be an integer >= 0, got {seed!r}")
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[stage] = now - clock
        clock = now

    table, site_obj = _load(source, site, fmt, allow_empty)
    lap("read")
    frame = prepare(table, site_obj)
    lap("prepare")
    results: dict[str, Any] = {}
    empty = skipped("the trace has no jobs")
    for name, run in (("parallelism", parallelism.analyze), ("wra", wra.analyze),
                      ("walltime", walltime.analyze),
                      ("correlation", lambda f: correlation.analyze(f, seed)),
                      ("arrivals", arrivals.analyze)):
        results[name] = run(frame) if len(frame.jobs) else dict(empty)
        lap(name)
    context_results = (context.analyze(frame) if len(frame.jobs) else
                       {k: dict(empty) for k in context.SECTIONS})
    lap("context")
    from swftools import __version__

    data: dict[str, Any] = {"report_format": 1, "swftools_version": __version__, "seed": seed,
                            "trace": describe_trace(frame), "analyses": results,
                            "context": context_results}
    data["summary"] = summary.rows(data)
    data = render.rounded(data)
    data["figures"] = figures.available(data)
    text = render.markdown(data)
    lap("render")
    return Report(data=data, markdown=text, figures=list(data["figures"]), timings_s=timings)


def write(result: Report, out_dir: str | os.PathLike, *, force: bool = False,
          page: str | None = None) -> Report:
    """Write a computed report (report.md, report.json, figures and, given ``page``, its text as
    index.html) into a new directory atomically."""
    started = time.perf_counter()
    target = Path(out_dir)
    with atomic_dir(target, force=force) as tmp:
        drawn = figures.draw(result.data, tmp)
        if drawn != result.figures:  # pragma: no cover - available() and draw() share one list
            raise RuntimeError(f"figures drawn {drawn} differ from those listed {result.figures}")
        result.timings_s["figures"] = time.perf_counter() - started
        (tmp / REPORT_JSON).write_text(render.json_text(result.data), encoding="utf-8")
        (tmp / REPORT_MD).write_text(result.markdown, encoding="utf-8")
        if page is not None:
            (tmp / REPORT_HTML).write_text(page, encoding="utf-8")
    result.out_dir = target
    result.timings_s["write"] = time.perf_counter() - started - result.timings_s["figures"]
    return result


def report(path_or_table: str | os.PathLike | pa.Table, out_dir: str | os.PathLike, *,
           site: Site | str | os.PathLike | None = None, seed: int = 0, force: bool = False,
           fmt: str | None = None, allow_empty: bool = False, html: bool = False,
           whatif: str | os.PathLike | None = None) -> Report:
    """Analyze a trace and write report.md, report.json and the figures into ``out_dir``.

    With ``html`` also index.html: the report as one self-contained page, with the validation
    and replay consistency summaries of the trace and, given ``whatif`` (a ``swftools whatif
    --out`` folder), its comparison table; a comparison made from another trace (its recorded
    fingerprint differs from this table's) is refused. An existing ``out_dir`` is refused unless ``force``
    (then replaced as a whole, if swftools wrote it); an input inside ``out_dir`` is refused.
    """
    target = Path(out_dir)
    check_writable(target, force, directory=True)  # fail before the (long) analysis
    check_not_inside([path_or_table, whatif, site if isinstance(site, (str, os.PathLike))
                      and os.path.isfile(site) else None], target)
    if whatif is not None and not html:
        raise UsageError("--whatif adds a table to index.html: give --html too")
    if not html:
        return write(analyze(path_or_table, site=site, seed=seed, fmt=fmt,
                             allow_empty=allow_empty), target, force=force)
    from swftools.report import consistency
    from swftools.report import html as html_mod
    from swftools.validate import validate

    comparison = html_mod.load_whatif(whatif) if whatif is not None else None
    table, site_obj = _load(path_or_table, site, fmt, allow_empty)
    if comparison is not None:
        html_mod.check_whatif_trace(comparison, table, whatif)  # never another trace's
    result = analyze(table, site=site_obj, seed=seed, allow_empty=allow_empty)
    page = html_mod.page(result.data, validation=validate(table, site=site_obj),
                         consistency=consistency.findings(table, site_obj) if table.num_rows
                         else None, whatif=comparison)
    return write(result, target, force=force, page=page)


def summary_table_markdown(result: Report | dict[str, Any]) -> str:
    """The headline figures as a Markdown table, with the AAIC reference where it applies."""
    data = result.data if isinstance(result, Report) else result
    return summary.table_markdown(data["summary"])
