"""The comparison of what-if replays: one row of figures per placement policy.

Figures per policy, from the replayed per-job schedule (``replay.result.JOBS_SCHEMA``):

- ``jobs`` replayed; ``mean_wait_s`` and ``median_wait_s``;
- ``geomean_jct_s``: geometric mean of the job completion time, wait + run (a JCT under 1 s
  counts as 1 s, so that a zero does not annul the mean);
- ``mean_bounded_slowdown``: mean of ``max(1, (wait + run) / max(run, 10 s))``;
- ``makespan_s``: last end - first submit;
- ``total_run_s``: the sum of run times (the "total job time" of a GPU-assignment study),
  ``gpu_hours``: the sum of GPUs held x run time, in the trace's unit (processor-hours on a CPU
  trace: ``TableMetadata.unit``; the key keeps its name);
- ``utilization``: GPU-seconds used / GPU-seconds available over the makespan, as the replay
  summary computes it (``replay.result.utilization``: the capacity timeline in force).

Each figure is also given relative to the first policy, the baseline (``relative``: value /
baseline value; None, shown ``n/a``, where the baseline's value is 0).

The table (``table_text``) shows each time column in one unit chosen from its magnitudes
(``column_unit``) and named in its heading; every ratio row says what it is against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.replay.result import bounded_slowdown, utilization

FIGURES = ("jobs", "mean_wait_s", "median_wait_s", "geomean_jct_s", "mean_bounded_slowdown",
           "makespan_s", "total_run_s", "gpu_hours", "utilization")
# Time units a column may be shown in: (name, seconds)
TIME_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
# Shown in the comparison table: (figure, heading, format). A tuple format is a time column
# shown in the unit of ``column_unit``; "{unit}" in a heading is the trace's unit word.
COLUMNS = (("jobs", "jobs", "{:,.0f}"),
           ("mean_wait_s", "mean wait", ("s", "min", "h")),
           ("median_wait_s", "median wait", ("s", "min", "h")),
           ("geomean_jct_s", "geo-mean JCT", ("s", "min", "h")),
           ("mean_bounded_slowdown", "mean BSLD", "{:,.2f}"),
           ("makespan_s", "makespan", ("s", "min", "h", "d")),
           ("total_run_s", "total run", ("s", "min", "h")),
           ("gpu_hours", "{unit}-hours", "{:,.1f}"),
           ("utilization", "utilization", "{:.1%}"))
UNIT_HOURS = {"gpu": "GPU", "processor": "processor"}  # the ``gpu_hours`` heading per trace unit
NOT_AVAILABLE = "n/a"  # a ratio against a zero baseline figure


@dataclass
class PolicyFigures:
    """The figures of one policy's replay, and each relative to the first policy's."""

    policy: str
    figures: dict[str, float]
    relative: dict[str, float | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"policy": self.policy, **self.figures,
                "relative": {k: v for k, v in self.relative.items()}}


def figures(jobs: pa.Table, capacity: list[tuple[int, int]]) -> dict[str, float]:
    """The comparison figures of one replayed schedule (see the module docstring)."""
    n = jobs.num_rows
    if n == 0:
        return {name: 0.0 for name in FIGURES}
    # (through the buffers: pyarrow's to_numpy imports pandas, ~0.25 s)
    submit, start, end, wait_s, run_s, size = (
        jt.to_numpy(jobs.column(name))
        for name in ("submit_time", "start_time", "end_time", "wait_s", "run_s", "size"))
    wait, run = wait_s.astype(np.float64), run_s.astype(np.float64)
    jct = np.maximum(wait + run, 1.0)
    first, last = int(submit.min()), int(end.max())
    used = float((size * run).sum())
    busy_share = utilization(start, end, size, capacity, first, last)  # as the replay summary
    return {
        "jobs": float(n),
        "mean_wait_s": float(wait.mean()),
        # (of the integers, the same value: a float median's NaN check imports numpy.ma)
        "median_wait_s": float(np.median(wait_s)),
        "geomean_jct_s": float(np.exp(np.log(jct).mean())),
        "mean_bounded_slowdown": float(bounded_slowdown(wait, run).mean()),
        "makespan_s": float(last - first),
        "total_run_s": float(run.sum()),
        "gpu_hours": used / 3600.0,
        "utilization": busy_share or 0.0,
    }


def compare(runs: list[tuple[str, pa.Table, list[tuple[int, int]]]]) -> list[PolicyFigures]:
    """One ``PolicyFigures`` per ``(policy, replayed jobs, capacity)``, relative to the first."""
    rows = [PolicyFigures(name, figures(jobs, capacity)) for name, jobs, capacity in runs]
    if rows:
        base = rows[0].figures
        for row in rows:
            row.relative = {k: (row.figures[k] / base[k] if base[k] else None) for k in FIGURES}
    return rows


def column_unit(values: list[float], units: tuple[str, ...]) -> str:
    """The unit of a time column: the largest of ``units`` in which the column's largest value
    is at least 10 (two digits before the point), else the smallest. So waits of seconds show in
    seconds, waits of hours in hours, and no column is all ``0.00``."""
    top = max((abs(v) for v in values), default=0.0)
    chosen = units[0]
    for unit in units:
        if top / TIME_UNITS[unit] >= 10:
            chosen = unit
    return chosen


def cell_text(value: float, fmt: str | tuple[str, ...], unit: str | None = None) -> str:
    """One figure as the comparison table shows it: a time in ``unit`` (seconds with one
    decimal, so a mean wait of 0.3 s does not read 0; other units with two), else ``fmt`` (a
    format string from ``COLUMNS``)."""
    if isinstance(fmt, tuple):
        unit = unit or fmt[0]
        return f"{value:,.1f}" if unit == "s" else f"{value / TIME_UNITS[unit]:,.2f}"
    return fmt.format(value)


def ratio_text(ratio: float | None) -> str:
    """A figure's ratio to the baseline's (``x0.923``); ``n/a`` when the baseline's is 0."""
    return NOT_AVAILABLE if ratio is None else f"x{ratio:.3f}"


@dataclass
class TableCells:
    """The comparison laid out for a reader: headings with units, per policy its value cells
    and (not for the baseline) its ratio cells; the text table and the HTML report share it."""

    baseline: str
    headings: list[str]
    values: list[tuple[str, list[str]]]
    ratios: list[list[str] | None]


def table_cells(policies: list[dict[str, Any]], unit: str = "gpu") -> TableCells:
    """Lay out per-policy figures (``PolicyFigures.to_json()``, as ``comparison.json`` holds
    them); ``unit``: the trace's processor unit (``gpu`` or ``processor``)."""
    headings, units = [], []
    for key, heading, fmt in COLUMNS:
        u = column_unit([float(p[key]) for p in policies], fmt) if isinstance(fmt, tuple) else None
        units.append(u)
        heading = heading.format(unit=UNIT_HOURS.get(unit, unit))
        headings.append(f"{heading} ({u})" if u else heading)
    values, ratios = [], []
    for i, p in enumerate(policies):
        values.append((p["policy"], [cell_text(float(p[k]), f, u)
                                     for (k, _, f), u in zip(COLUMNS, units)]))
        relative = p.get("relative") or {}
        ratios.append(None if i == 0 else [ratio_text(relative.get(k)) for k, _, _ in COLUMNS])
    return TableCells(policies[0]["policy"] if policies else "", headings, values, ratios)


def table_text(rows: list[PolicyFigures], unit: str = "gpu", context: list[str] = ()) -> str:
    """The comparison as a fixed-width text table, after the ``context`` lines: per policy a row
    of figures and (after the baseline) a row ``  ratio to <baseline>`` of each figure over the
    baseline's (``n/a`` where the baseline's is 0)."""
    cells = table_cells([r.to_json() for r in rows], unit)
    headings = ["policy"] + cells.headings
    body = []
    for (name, value), ratio in zip(cells.values, cells.ratios):
        body.append([name] + value)
        if ratio is not None:
            body.append([f"  ratio to {cells.baseline}"] + ratio)
    widths = [max(len(line[c]) for line in [headings, *body]) for c in range(len(headings))]

    def fmt(line: list[str]) -> str:
        return "  ".join(cell.ljust(w) if c == 0 else cell.rjust(w)
                         for c, (cell, w) in enumerate(zip(line, widths))).rstrip()

    return "".join(f"{line}\n" for line in context) + "\n".join(
        [fmt(headings), fmt(["-" * w for w in widths]), *map(fmt, body)]) + "\n"


def jct_cdf_figure(runs: list[tuple[str, pa.Table]], path: str | Path) -> Path:
    """A PNG of the job completion time CDF per policy (log x axis); same input, same bytes."""
    from matplotlib import rc_context, style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    with rc_context(), style.context("default"):
        fig = Figure(figsize=(7.0, 4.0), dpi=100)
        ax = fig.add_subplot(1, 1, 1)
        for k, (name, jobs) in enumerate(runs):
            jct = np.sort(np.maximum(jobs.column("wait_s").to_numpy()
                                     + jobs.column("run_s").to_numpy(), 1)) / 3600.0
            if jct.size:
                ax.step(jct, np.arange(1, jct.size + 1) / jct.size, where="post", label=name,
                        linestyle=("-", "--", ":", "-.")[k % 4], linewidth=1.4)
        ax.set_xscale("log")
        ax.set_xlabel("job completion time (wait + run), hours, log scale")
        ax.set_ylabel("fraction of jobs")
        ax.set_title("Job completion time per placement policy")
        ax.grid(True, which="major", linewidth=0.4, color="#cccccc")
        ax.legend(loc="lower right", fontsize=8)
        fig.subplots_adjust(left=0.1, right=0.97, top=0.9, bottom=0.15)
        FigureCanvasAgg(fig)
        fig.savefig(path, format="png", metadata={"Software": None})
    return path


__all__ = ["COLUMNS", "FIGURES", "NOT_AVAILABLE", "PolicyFigures", "TableCells", "cell_text",
           "column_unit", "compare", "figures", "jct_cdf_figure", "ratio_text", "table_cells",
           "table_text"]
