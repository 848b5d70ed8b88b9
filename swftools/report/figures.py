"""The report's figures, drawn from the report data alone (matplotlib; deterministic PNG and SVG).

Each figure is a function of ``report.json``'s content: same numbers, same bytes. Determinism
comes from the object API with the Agg canvas (no pyplot, so the caller's backend and state are
left alone), matplotlib's default style whatever the user's matplotlibrc, a fixed size and DPI,
PNG metadata without the ``Software`` entry (Agg writes no timestamp), and for the SVG that the
HTML page inlines: a fixed ``svg.hashsalt``, text as paths and no date or creator metadata.

Series are told apart by more than colour (hatching for bars, line styles and markers for
lines), so that the figures read in greyscale too.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import matplotlib.dates as mdates
from matplotlib import rc_context, style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from swftools.report.frame import is_skipped, time_series
from swftools.report.wra import bin_label as wra_bin_label

DPI = 100
SIZE_IN = (9.0, 4.0)
# The phone-width variant of the HTML page: panels stacked, each this size
NARROW_PANEL_IN = (4.2, 3.1)
_NARROW: ContextVar[bool] = ContextVar("narrow", default=False)
_STYLE = {"font.family": "DejaVu Sans", "font.size": 9.0, "svg.hashsalt": "swftools",
          "figure.dpi": DPI, "savefig.dpi": DPI, "savefig.bbox": None}
CLASS_COLORS = {"single": "#4477aa", "single_node_multi": "#ee6677", "multi_node": "#228833",
                "multi": "#ee6677", "all": "#000000"}
# What tells the classes apart without colour: bar hatching and line style
CLASS_HATCHES = {"single": "", "single_node_multi": "///", "multi_node": "xxx", "multi": "///",
                 "all": ""}
CLASS_LINESTYLES = {"all": "-", "single": "--", "single_node_multi": "-.", "multi_node": ":",
                    "multi": "-."}
_SVG_STYLE = {"svg.fonttype": "path", "svg.hashsalt": "swftools", "svg.image_inline": True}
_SVG_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}


def _ok(value: Any) -> bool:
    return isinstance(value, dict) and not is_skipped(value) and bool(value)


def _save(fig: Figure, path: Path) -> None:
    FigureCanvasAgg(fig)
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})


def _note(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, transform=ax.transAxes,
            fontsize=8, color="#666666")
    ax.set_xticks([])
    ax.set_yticks([])


def _title(ax: Any, text: str, **options: Any) -> None:
    """An axes title, wrapped to the panel's width in the narrow variant."""
    if _NARROW.get():
        import textwrap

        text = "\n".join(textwrap.wrap(text, 42))
    ax.set_title(text, **options)


def _pair(fig: Figure, **options: Any) -> Any:
    """Two panels side by side (stacked in the narrow variant)."""
    if _NARROW.get():
        return fig.subplots(2, 1)
    return fig.subplots(1, 2, **options)


def _panels(fig: Figure, two: bool, **options: Any) -> tuple[Any, Any]:
    """Two panels, or one and None (a figure whose second panel has no data to draw)."""
    return tuple(_pair(fig, **options)) if two else (fig.subplots(), None)


def _per_quarter_axes(ax: Any, names: list[str], ylabel: str, title: str | None = None) -> None:
    """Finish an axes over quarters: the quarter names slanted, the y label, a small legend."""
    ax.set_xticks(range(len(names)), names, rotation=45, fontsize=7)
    ax.set_ylabel(ylabel)
    if title is not None:
        _title(ax, title)
    if ax.get_legend_handles_labels()[0]:  # an empty trace draws no series
        ax.legend(fontsize=7)


def _parallelism(data: dict[str, Any], fig: Figure) -> None:
    result = data["analyses"]["parallelism"]
    quarterly = result["quarterly"]
    ax_share, ax_quarter = _panels(fig, time_series(quarterly), width_ratios=[1, 2])
    keys = list(result["classes"])
    labels = [result["classes"][k]["label"] for k in keys]
    shares = [100 * result["classes"][k]["share"] for k in keys]
    bars = ax_share.bar(range(len(keys)), shares, color=[CLASS_COLORS[k] for k in keys],
                        hatch=[CLASS_HATCHES[k] for k in keys], edgecolor="white")
    ax_share.bar_label(bars, labels=[f"{s:.1f} %" for s in shares], fontsize=8)
    ax_share.set_xticks(range(len(keys)), labels, rotation=15, fontsize=8)
    ax_share.set_ylabel("share of jobs (%)")
    _title(ax_share, f"Parallelism ({result['jobs']:,} jobs of at least 60 s)")
    if ax_quarter is None:
        return
    names = [q["quarter"] for q in quarterly]
    bottom = [0] * len(names)
    for k, label in zip(keys, labels):
        counts = [q["classes"][k] for q in quarterly]
        ax_quarter.bar(range(len(names)), counts, bottom=bottom, label=label, color=CLASS_COLORS[k],
                       hatch=CLASS_HATCHES[k], edgecolor="white")
        bottom = [b + c for b, c in zip(bottom, counts)]
    _per_quarter_axes(ax_quarter, names, "jobs", "Jobs per quarter by class")


def _parallelism_breakdown(data: dict[str, Any], fig: Figure) -> None:
    result = data["analyses"]["parallelism"]
    pe = result["processing_element"]
    if "by_pe_count_bins" in result:  # node counts unknown: the PE-count bins alone
        panels = [(fig.subplots(), result["by_pe_count_bins"], "bin",
                   f"{pe}s (all jobs, power-of-two bins)")]
    else:
        left, right = _pair(fig)
        panels = [(left, result["single_node_by_pe_count"], "pes", f"{pe}s (single-node jobs)"),
                  (right, result["multi_node_by_node_count"], "nodes", "nodes (multi-node jobs)")]
    for ax, rows, key, xlabel in panels:
        if is_skipped(rows) or not rows:
            _note(ax, rows["reason"] if is_skipped(rows) else "no jobs")
            continue
        ax.bar(range(len(rows)), [r["jobs"] for r in rows], color="#4477aa")
        ax.set_xticks(range(len(rows)), [str(r[key]) for r in rows], fontsize=7,
                      rotation=45 if len(rows) > 12 else 0)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("jobs")


def _wra(data: dict[str, Any], fig: Figure) -> None:
    result = data["analyses"]["wra"]
    quarterly = result["quarterly"]
    ax_hist, ax_quarter = _panels(fig, time_series(quarterly))
    hist = result["histogram"]
    labels = [wra_bin_label(h, short=True) for h in hist]
    ax_hist.bar(range(len(hist)), [100 * h["share"] for h in hist], color="#4477aa")
    ax_hist.set_xticks(range(len(hist)), labels, rotation=45, fontsize=7)
    ax_hist.set_xlabel("walltime request accuracy (actual / requested)")
    ax_hist.set_ylabel("share of jobs (%)")
    _title(ax_hist, f"WRA of {result['jobs']:,} jobs: mean {result['mean']:.3f}, "
                    f"median {result['median']:.3f}")
    if ax_quarter is None:
        return
    x = range(len(quarterly))
    ax_quarter.plot(x, [q["mean"] for q in quarterly], marker="o", label="mean")
    ax_quarter.plot(x, [q["median"] for q in quarterly], marker="s", linestyle="--",
                    label="median")
    _per_quarter_axes(ax_quarter, [q["quarter"] for q in quarterly], "WRA", "WRA per quarter")


def _walltime_cdf(data: dict[str, Any], fig: Figure) -> None:
    result = data["analyses"]["walltime"]
    ax = fig.subplots()
    probabilities = result["cdf_probabilities"]
    for key, group in result["groups"].items():
        if is_skipped(group):
            continue
        hours = [max(h, 1e-3) for h in group["cdf_hours"]]
        ax.plot(hours, probabilities, label=f"{group['label']} ({group['count']:,})",
                color=CLASS_COLORS.get(key), linestyle=CLASS_LINESTYLES.get(key, "-"),
                linewidth=1.4, drawstyle="steps-post")
    ax.set_xscale("log")
    ax.set_xlabel("walltime (hours)")
    ax.set_ylabel("cumulative share of jobs")
    _title(ax, f"Walltime CDF: {result['population']}", fontsize=8)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7)


def _correlation(data: dict[str, Any], fig: Figure) -> None:
    result = data["analyses"]["correlation"]
    ax = fig.subplots()
    rows = result["walltime_h_by_pe_bin"]
    stats = [{"label": f"{r['bin']}\n({r['jobs']:,})", "whislo": max(r["p5"], 1e-3),
              "q1": max(r["p25"], 1e-3), "med": max(r["median"], 1e-3), "q3": max(r["p75"], 1e-3),
              "whishi": max(r["p95"], 1e-3), "fliers": []} for r in rows]
    ax.bxp(stats, showfliers=False)
    ax.set_yscale("log")
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel(f"{data['trace']['processing_element']}s "
                  "(power-of-two bins; whiskers 5th-95th percentile)")
    ax.set_ylabel("walltime (hours)")
    sample = result["balanced_sample"]
    title = f"Balanced sample ({sum(r['jobs'] for r in rows):,} jobs)"
    if not is_skipped(sample):
        title += (f": Spearman {sample['spearman']:.3f}, "
                  f"Pearson (log) {sample['pearson_log']:.3f}")
    _title(ax, title)


def _arrivals(data: dict[str, Any], fig: Figure) -> None:
    result = data["analyses"]["arrivals"]
    ax_hour, ax_day = _pair(fig)
    hours = result["by_hour"]
    ax_hour.bar([h["hour"] for h in hours], [h["mean"] for h in hours],
                yerr=_spread([h["mean"] for h in hours], [h["std"] for h in hours]),
                color="#4477aa", ecolor="#888888", capsize=2)
    ax_hour.set_xticks(range(0, 24, 3))
    ax_hour.set_xlabel(f"hour of day ({result['time_zone']})")
    ax_hour.set_ylabel("jobs submitted per day (mean ± sd)")
    days = result["by_weekday"]
    means = [d["mean"] or 0 for d in days]
    ax_day.bar(range(7), means, yerr=_spread(means, [d["std"] for d in days]),
               color="#ee6677", ecolor="#888888", capsize=3)
    ax_day.set_xticks(range(7), [d["weekday"][:3] for d in days])
    ax_day.set_ylabel("jobs submitted per day (mean ± sd over weeks)")
    for ax in (ax_hour, ax_day):
        ax.set_ylim(bottom=0)  # counts: the axis never goes below zero


def _spread(means: list[float], stds: list[float | None]) -> list[list[float]]:
    """Error bars of mean ± sd for counts: the lower bar stops at zero (no count is negative)."""
    upper = [s or 0.0 for s in stds]
    return [[min(m, s) for m, s in zip(means, upper)], upper]


def _bars(rows: list[dict[str, Any]], label_key: str, title: str, fig: Figure) -> None:
    ax = fig.subplots()
    bars = ax.bar(range(len(rows)), [r["jobs"] for r in rows], color="#4477aa")
    ax.bar_label(bars, labels=[f"{100 * r['share']:.1f} %" for r in rows], fontsize=7)
    slant = len(rows) > (3 if _NARROW.get() else 6)
    ax.set_xticks(range(len(rows)), [str(r[label_key]) for r in rows], fontsize=7,
                  rotation=30 if slant else 0, ha="right" if slant else "center",
                  rotation_mode="anchor")
    ax.set_ylabel("jobs")
    _title(ax, title)


def _queues(data: dict[str, Any], fig: Figure) -> None:
    _bars(data["context"]["queues"]["queues"], "label", "Jobs per queue", fig)


def _outcomes(data: dict[str, Any], fig: Figure) -> None:
    result = data["context"]["outcomes"]
    rows = [dict(r, name=f"{r['code']} {r['label']}") for r in result["codes"]]
    _bars(rows, "name", f"Jobs per {result['column']}", fig)


def _per_quarter(data: dict[str, Any], fig: Figure) -> None:
    rows = data["context"]["per_quarter"]["quarters"]
    ax_jobs, ax_users = _pair(fig)
    x = range(len(rows))
    names = [r["quarter"] for r in rows]
    ax_jobs.bar(x, [r["jobs"] for r in rows], color="#4477aa", label="all jobs")
    ax_jobs.bar(x, [r["jobs_min_60s"] for r in rows], color="#ee6677", width=0.5,
                hatch="///", edgecolor="white", label="jobs of at least 60 s")
    _per_quarter_axes(ax_jobs, names, "jobs submitted")
    for key, marker, line in (("users", "o", "-"), ("groups", "s", "--")):
        values = [r[key] for r in rows]
        if all(v is not None for v in values):
            ax_users.plot(x, values, marker=marker, linestyle=line, label=f"active {key}")
    _per_quarter_axes(ax_users, names, "active (submitting) in the quarter")


def _utilization(data: dict[str, Any], fig: Figure) -> None:
    result = data["context"]["utilization"]
    ax = fig.subplots()
    starts = result["bin_start_epoch_s"]
    if result["absolute_times"]:
        x: list[Any] = [datetime.fromtimestamp(t, tz=timezone.utc).replace(tzinfo=None)
                        for t in starts]
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        ax.set_xlabel("date (UTC)")
    else:
        x = [(t - starts[0]) / 86400.0 for t in starts]
        ax.set_xlabel("days since the first bin")
    pe = result["processing_element"]
    ax.step(x, result["busy_pes_mean"], where="post", linewidth=0.8,
            label=f"busy {pe}s (mean per {'day' if result['bin_s'] == 86400 else 'week'})")
    capacity = result["capacity"]
    if not is_skipped(capacity):
        ax.step(x, capacity["capacity_pes"], where="post", color="#cc3311", linewidth=1.2,
                linestyle="--", label=f"capacity ({capacity['source']})")
        _title(ax, f"Utilization: mean {100 * capacity['mean_utilization']:.1f} %")
    ax.set_ylabel(f"{pe}s")
    ax.legend(fontsize=7, loc="lower right")


# file name -> (drawer, path in the report data that must be a completed result)
FIGURES: dict[str, tuple[Callable[[dict[str, Any], Figure], None], tuple[str, ...]]] = {
    "parallelism.png": (_parallelism, ("analyses", "parallelism")),
    "parallelism_breakdown.png": (_parallelism_breakdown, ("analyses", "parallelism")),
    "wra.png": (_wra, ("analyses", "wra")),
    "walltime_cdf.png": (_walltime_cdf, ("analyses", "walltime")),
    "correlation.png": (_correlation, ("analyses", "correlation")),
    "arrivals.png": (_arrivals, ("analyses", "arrivals")),
    "queues.png": (_queues, ("context", "queues")),
    "outcomes.png": (_outcomes, ("context", "outcomes")),
    "per_quarter.png": (_per_quarter, ("context", "per_quarter")),
    "utilization.png": (_utilization, ("context", "utilization")),
}


# Charts over time need a series: per quarter at least two quarters, utilization two bins
_SERIES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "per_quarter.png": lambda d: d["context"]["per_quarter"]["quarters"],
    "utilization.png": lambda d: d["context"]["utilization"]["bin_start_epoch_s"],
}


def available(data: dict[str, Any]) -> list[str]:
    """File names of the figures the report data supports (skipped analyses have none, nor a
    chart over time with a single period)."""
    names = []
    for name, (_, (section, key)) in FIGURES.items():
        if _ok(data.get(section, {}).get(key)) and (
                name not in _SERIES or time_series(_SERIES[name](data))):
            names.append(name)
    return names


def panel_count(data: dict[str, Any], name: str) -> int:
    """How many panels figure ``name`` draws for this report data (1 or 2): a per-quarter panel
    only over two quarters or more, the node-count panel only when node counts are known."""
    analyses = data["analyses"]
    if name in ("parallelism.png", "wra.png"):
        key = "parallelism" if name == "parallelism.png" else "wra"
        return 2 if time_series(analyses[key]["quarterly"]) else 1
    if name == "parallelism_breakdown.png":
        return 1 if "by_pe_count_bins" in analyses["parallelism"] else 2
    return 2 if name in ("arrivals.png", "per_quarter.png") else 1


def figure(data: dict[str, Any], name: str, *, narrow: bool = False) -> Figure:
    """Figure ``name`` drawn from the report data (call inside ``style_context()``); ``narrow``
    stacks the panels for a phone-width page."""
    drawer, _ = FIGURES[name]
    width, height = NARROW_PANEL_IN
    size = (width, height * panel_count(data, name)) if narrow else SIZE_IN
    fig = Figure(figsize=size, dpi=DPI, layout="constrained")
    token = _NARROW.set(narrow)
    try:
        drawer(data, fig)
    finally:
        _NARROW.reset(token)
    return fig


def style_context() -> Any:
    """The fixed matplotlib style every figure is drawn in (whatever the user's matplotlibrc)."""
    from contextlib import ExitStack

    stack = ExitStack()
    stack.enter_context(style.context("default"))
    stack.enter_context(rc_context({**_STYLE, **_SVG_STYLE}))
    return stack


def draw(data: dict[str, Any], out_dir: Path) -> list[str]:
    """Write every available figure into ``out_dir``; returns their file names."""
    written = []
    with style_context():
        for name in available(data):
            _save(figure(data, name), out_dir / name)
            written.append(name)
    return written


def svg(data: dict[str, Any], name: str, *, narrow: bool = False) -> str:
    """Figure ``name`` as SVG text: same input, same bytes (text drawn as paths, no dates)."""
    import io

    buffer = io.BytesIO()
    with style_context():
        fig = figure(data, name, narrow=narrow)
        FigureCanvasAgg(fig)
        fig.savefig(buffer, format="svg", dpi=DPI, metadata=_SVG_METADATA)
    return buffer.getvalue().decode("utf-8")
