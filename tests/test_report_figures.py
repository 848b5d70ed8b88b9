"""swftools.report.figures: deterministic PNGs drawn from report.json alone."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import pytest

from swftools import synth
from swftools.report import analyze, figures
from swftools.report.render import json_text
from tests.report_support import T0, swf_table


@pytest.fixture(scope="module")
def data():
    """A complete trace over two calendar quarters (every figure has data)."""
    return analyze(synth.generate(3000, seed=5, start="2017-09-28T00:00:00+09:00")).data


@pytest.fixture(scope="module")
def week():
    """The bundled sample: one week in one quarter (2017Q3)."""
    from pathlib import Path

    return analyze(Path(__file__).resolve().parent.parent / "samples" / "aaic-sample.csv.gz").data


def _drawn(data, name, narrow=False):
    from swftools.report.figures import figure, style_context

    with style_context():
        return figure(data, name, narrow=narrow)


@pytest.fixture(scope="module")
def drawn(data, tmp_path_factory):
    """Figures drawn once from the JSON text of the report (as written to report.json)."""
    out = tmp_path_factory.mktemp("figures")
    (out / "report.json").write_text(json_text(data))
    written = figures.draw(json.loads((out / "report.json").read_text()), out)
    return out, written


def _chunks(png: bytes) -> list[bytes]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, kinds = 8, []
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        kinds.append(kind)
        pos += 12 + length
    return kinds


def test_every_figure_is_drawn_for_a_complete_trace(drawn):
    out, written = drawn
    assert written == list(figures.FIGURES)
    assert sorted(p.name for p in out.glob("*.png")) == sorted(written)


def test_png_has_fixed_size_and_no_time_or_software(drawn):
    out, _ = drawn
    for name in figures.FIGURES:
        png = (out / name).read_bytes()
        kinds = _chunks(png)
        assert b"tIME" not in kinds
        assert b"Software" not in png and b"matplotlib" not in png.lower()
        width, height = struct.unpack(">II", png[16:24])
        assert (width, height) == (900, 400)


def test_figures_are_byte_identical_across_processes(drawn, tmp_path):
    first, _ = drawn
    second = tmp_path
    code = ("import json, sys; from pathlib import Path; from swftools.report import figures; "
            "figures.draw(json.load(open(sys.argv[1])), Path(sys.argv[2]))")
    env = dict(os.environ, PYTHONHASHSEED="12345", MPLBACKEND="Agg")
    subprocess.run([sys.executable, "-c", code, str(first / "report.json"), str(second)],
                   check=True, env=env)
    for name in figures.FIGURES:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_skipped_analyses_have_no_figure():
    table = swf_table({"job_id": [1, 2], "gpus": [1, 2], "walltime_s": [600, 900],
                       "swf_status": [1, 1], "submit_time": [0, 10]}, origin=None)
    names = figures.available(analyze(table).data)
    assert "wra.png" not in names and "arrivals.png" not in names
    assert "walltime_cdf.png" in names and "parallelism.png" in names


def _luminance(color) -> float:
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(color)
    return 0.299 * r + 0.587 * g + 0.114 * b


def _look(handle) -> tuple:
    """What tells a legend entry apart without colour: hatch, line style, marker; and its grey."""
    from matplotlib.lines import Line2D

    if isinstance(handle, Line2D):
        return (handle.get_linestyle(), handle.get_marker(), None), _luminance(handle.get_color())
    patch = handle.patches[0] if hasattr(handle, "patches") else handle
    return (patch.get_hatch() or "", None, None), _luminance(patch.get_facecolor())


@pytest.mark.parametrize("narrow", [False, True])
def test_series_are_told_apart_in_greyscale(data, narrow):
    """Every pair of legend entries differs in hatch, line style or marker, or clearly in grey."""
    from swftools.report.figures import figure, style_context

    checked = 0
    with style_context():
        for name in figures.available(data):
            fig = figure(data, name, narrow=narrow)
            for ax in fig.axes:
                handles, _ = ax.get_legend_handles_labels()
                looks = [_look(h) for h in handles]
                for i in range(len(looks)):
                    for j in range(i + 1, len(looks)):
                        (shape_i, grey_i), (shape_j, grey_j) = looks[i], looks[j]
                        assert shape_i != shape_j or abs(grey_i - grey_j) > 0.25, (name, i, j)
                        checked += 1
    assert checked >= 6


def test_the_balanced_sample_box_plot_draws_the_balanced_sample(week):
    """Titled by the balanced sample's coefficients, the boxes are that sample's: 2,117 jobs of
    the sample, not the 3,509 of the whole population."""
    result = week["analyses"]["correlation"]
    sample = result["balanced_sample"]
    size = sample["single_pe_jobs"] + sample["multi_pe_jobs"]
    assert size == 2117 and sample["jobs"] == size
    assert sum(r["jobs"] for r in result["walltime_h_by_pe_bin"]) == size
    ax = _drawn(week, "correlation.png").axes[0]
    assert ax.get_title().startswith("Balanced sample (2,117 jobs): Spearman")
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert sum(int(lab.split("(")[1].rstrip(")").replace(",", "")) for lab in labels) == size
    medians = [line.get_ydata()[0] for line in ax.lines if line.get_color() in ("C1", "#ff7f0e")]
    expected = [max(r["median"], 1e-3) for r in result["walltime_h_by_pe_bin"]]
    assert medians == pytest.approx(expected)


def test_one_quarter_draws_no_time_series(week):
    """A one-week sample: no per-quarter figure and no per-quarter panel (one bar is no series)."""
    assert [q["quarter"] for q in week["context"]["per_quarter"]["quarters"]] == ["2017Q3"]
    assert "per_quarter.png" not in week["figures"]
    for name in ("parallelism.png", "wra.png"):
        fig = _drawn(week, name)
        assert len(fig.axes) == 1, name
        assert "quarter" not in fig.axes[0].get_title().lower()
        assert figures.panel_count(week, name) == 1
        narrow = _drawn(week, name, narrow=True)
        assert narrow.get_figheight() == pytest.approx(figures.NARROW_PANEL_IN[1])


def test_two_quarters_draw_the_time_series(data):
    assert len(data["context"]["per_quarter"]["quarters"]) >= 2
    assert "per_quarter.png" in data["figures"]
    for name in ("parallelism.png", "wra.png"):
        assert len(_drawn(data, name).axes) == 2
        assert figures.panel_count(data, name) == 2


def test_arrival_counts_never_go_below_zero(week):
    """Mean ± sd of few days: the lower error bar stops at zero, and so does the axis."""
    hours = week["analyses"]["arrivals"]["by_hour"]
    assert any(h["std"] and h["std"] > h["mean"] for h in hours)  # the case that went to -20
    fig = _drawn(week, "arrivals.png")
    for ax in fig.axes:
        assert ax.get_ylim()[0] == 0
        for container in ax.containers:
            if hasattr(container, "lines") and container.lines[2]:
                segments = container.lines[2][0].get_segments()
                assert min(seg[:, 1].min() for seg in segments) >= 0


def test_wra_histogram_plots_the_bins_it_names(week):
    ax = _drawn(week, "wra.png").axes[0]
    heights = [p.get_height() for p in ax.patches]
    shares = [100 * h["share"] for h in week["analyses"]["wra"]["histogram"]]
    assert heights == pytest.approx(shares)
    assert [t.get_text() for t in ax.get_xticklabels()][-2:] == ["0.9-1.0", ">1.0"]


def test_without_node_counts_the_breakdown_is_one_chart():
    """A CPU trace without node counts: the PE-count bins alone, no empty node-count panel."""
    table = swf_table({"job_id": [1, 2, 3], "gpus": [1, 2, 64], "walltime_s": [600, 900, 700],
                       "swf_status": [1, 1, 1], "submit_time": [T0, T0 + 60, T0 + 120]})
    data = analyze(table).data
    fig = _drawn(data, "parallelism_breakdown.png")
    assert len(fig.axes) == 1
    assert [p.get_height() for p in fig.axes[0].patches] == [1, 1, 1]
    assert figures.panel_count(data, "parallelism_breakdown.png") == 1


def test_one_day_draws_no_utilization_series():
    """Jobs within one day: one daily bin is no series, so no utilization step plot."""
    from tests.report_support import aaic_table

    data = analyze(aaic_table([{"walltime_s": 600}, {"walltime_s": 900}]), site="aaic").data
    assert len(data["context"]["utilization"]["bin_start_epoch_s"]) == 1
    assert "utilization.png" not in data["figures"]
