"""The comparison of what-if replays: one row of figures per placement policy.

Figures per policy, from the replayed per-job schedule (``replay.result.JOBS_SCHEMA``):

- ``jobs`` replayed; ``mean_wait_s`` and ``median_wait_s``;
- ``geomean_jct_s``: geometric mean of the job completion time, wait + run (a JCT under 1 s
  counts as 1 s, so that a zero does not annul the mean);
- ``mean_bounded_slowdown``: mean of ``max(1, (wait + run) / max(run, 10 s))``;
- ``makespan_s``: last end - first submit;
- ``total_run_s``: the sum of run times (the "total job time" of a GPU-assignment study),
  ``gpu_hours``: the sum of GPUs held x run time;
- ``utilization``: GPU-seconds used / GPU-seconds available over the makespan, as the replay
  summary computes it (``replay.result.utilization``: the capacity timeline in force).

Each figure is also given relative to the first policy (``relative``: value / first value).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools.replay.result import bounded_slowdown, utilization

FIGURES = ("jobs", "mean_wait_s", "median_wait_s", "geomean_jct_s", "mean_bounded_slowdown",
           "makespan_s", "total_run_s", "gpu_hours", "utilization")
# Shown in the comparison table: (figure, heading, format)
COLUMNS = (("jobs", "jobs", "{:,.0f}"), ("mean_wait_s", "mean wait h", "h"),
           ("median_wait_s", "median wait h", "h"), ("geomean_jct_s", "geo-mean JCT h", "h"),
           ("mean_bounded_slowdown", "mean BSLD", "{:,.2f}"), ("makespan_s", "makespan d", "d"),
           ("total_run_s", "total run h", "h"), ("gpu_hours", "GPU-hours", "{:,.0f}"),
           ("utilization", "utilization", "{:.1%}"))


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
    submit = jobs.column("submit_time").to_numpy()
    start = jobs.column("start_time").to_numpy()
    end = jobs.column("end_time").to_numpy()
    wait = jobs.column("wait_s").to_numpy().astype(np.float64)
    run = jobs.column("run_s").to_numpy().astype(np.float64)
    size = jobs.column("size").to_numpy()
    jct = np.maximum(wait + run, 1.0)
    first, last = int(submit.min()), int(end.max())
    used = float((size * run).sum())
    busy_share = utilization(start, end, size, capacity, first, last)  # as the replay summary
    return {
        "jobs": float(n),
        "mean_wait_s": float(wait.mean()),
        "median_wait_s": float(np.median(wait)),
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


def cell_text(value: float, fmt: str) -> str:
    """One figure as the comparison table shows it (``fmt`` from ``COLUMNS``: h, d or a format)."""
    if fmt == "h":
        return f"{value / 3600:,.2f}"
    if fmt == "d":
        return f"{value / 86400:,.2f}"
    return fmt.format(value)


def table_text(rows: list[PolicyFigures]) -> str:
    """The comparison as a fixed-width text table; below each figure, its ratio to the first
    policy's (``x0.92``)."""
    headings = ["policy"] + [h for _, h, _ in COLUMNS]
    lines_value = [[r.policy] + [cell_text(r.figures[k], f) for k, _, f in COLUMNS] for r in rows]
    lines_ratio = [[""] + ["" if r.relative.get(k) is None or i == 0 else f"x{r.relative[k]:.3f}"
                           for k, _, _ in COLUMNS] for i, r in enumerate(rows)]
    body = []
    for value, ratio in zip(lines_value, lines_ratio):
        body.append(value)
        if any(ratio):
            body.append(ratio)
    widths = [max(len(line[c]) for line in [headings, *body]) for c in range(len(headings))]

    def fmt(line: list[str]) -> str:
        return "  ".join(cell.ljust(w) if c == 0 else cell.rjust(w)
                         for c, (cell, w) in enumerate(zip(line, widths))).rstrip()

    return "\n".join([fmt(headings), fmt(["-" * w for w in widths]), *map(fmt, body)]) + "\n"


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


__all__ = ["COLUMNS", "FIGURES", "PolicyFigures", "cell_text", "compare", "figures",
           "jct_cdf_figure", "table_text"]
