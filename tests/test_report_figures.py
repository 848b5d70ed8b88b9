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
from tests.report_support import swf_table


@pytest.fixture(scope="module")
def data():
    return analyze(synth.generate(3000, seed=5)).data


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
