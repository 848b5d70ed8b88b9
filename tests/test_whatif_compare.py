"""swftools.whatif.compare: the per-policy figures, the table and the JCT figure."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.replay.result import JOBS_SCHEMA
from swftools.whatif.compare import compare, figures, jct_cdf_figure, table_text


def jobs(rows: list[tuple[int, int, int, int]]) -> pa.Table:
    """(submit, wait, run, size) rows as a replayed-jobs table."""
    cols: dict[str, list] = {name: [] for name in JOBS_SCHEMA.names}
    for k, (submit, wait, run, size) in enumerate(rows):
        values = {"job_id": k + 1, "queue": None, "submit_time": submit,
                  "start_time": submit + wait, "end_time": submit + wait + run, "wait_s": wait,
                  "run_s": run, "estimate_s": run, "size": size, "nodes": None,
                  "node_ids": None, "gpu_ids": None}
        for name in JOBS_SCHEMA.names:
            cols[name].append(values[name])
    return pa.table(cols, schema=JOBS_SCHEMA)


def test_figures_by_hand():
    table = jobs([(0, 0, 100, 2), (10, 90, 5, 1), (20, 0, 0, 4)])
    got = figures(table, [(0, 8)])
    assert got["jobs"] == 3
    assert got["mean_wait_s"] == 30 and got["median_wait_s"] == 0
    assert got["geomean_jct_s"] == pytest.approx((100 * 95 * 1) ** (1 / 3))
    # bounded slowdown: 100/100, 95/10, max(1, 0/10)
    assert got["mean_bounded_slowdown"] == pytest.approx((1 + 9.5 + 1) / 3)
    assert got["makespan_s"] == 105  # first submit 0, last end 105
    assert got["total_run_s"] == 105
    assert got["gpu_hours"] == pytest.approx((200 + 5) / 3600)
    assert got["utilization"] == pytest.approx(205 / (8 * 105))


def test_relative_to_the_first_policy_and_table():
    a = jobs([(0, 0, 100, 1), (0, 100, 100, 1)])
    b = jobs([(0, 0, 50, 1), (0, 50, 50, 1)])
    rows = compare([("even", a, [(0, 1)]), ("priority", b, [(0, 1)])])
    assert rows[0].relative["total_run_s"] == 1.0
    assert rows[1].relative["total_run_s"] == 0.5 and rows[1].relative["makespan_s"] == 0.5
    text = table_text(rows)
    assert text.splitlines()[0].split()[:3] == ["policy", "jobs", "mean"]
    assert "x0.500" in text and "priority" in text


def test_capacity_timeline_is_integrated_over_the_makespan():
    # 1,000 GPU-seconds used of 10 x 50 + 20 x 50 available
    assert figures(jobs([(0, 0, 100, 10)]), [(0, 10), (50, 20)])["utilization"] == \
        pytest.approx(1000 / (10 * 50 + 20 * 50))
    # the first entry holds from the start: 250 of 10 x 50
    assert figures(jobs([(0, 0, 50, 5)]), [(100, 10)])["utilization"] == pytest.approx(250 / 500)
    assert figures(jobs([(5, 0, 0, 1)]), [(0, 10)])["utilization"] == 0  # no makespan


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**5), st.integers(0, 10**5),
                          st.integers(1, 64)), min_size=1, max_size=30))
def test_figures_are_finite_and_bounded(rows):
    got = figures(jobs(rows), [(0, 64)])
    assert all(math.isfinite(v) for v in got.values())
    assert got["mean_bounded_slowdown"] >= 1
    assert got["utilization"] >= 0  # (<= 1 only for schedules that respect the capacity)
    assert got["gpu_hours"] == sum(r[2] * r[3] for r in rows) / 3600
    assert got["median_wait_s"] <= max(r[1] for r in rows)


def test_jct_figure_is_deterministic(tmp_path):
    runs = [("packed", jobs([(0, 0, 3600, 1), (0, 60, 7200, 2)])),
            ("lxv", jobs([(0, 0, 1800, 1), (0, 30, 3600, 2)]))]
    first = jct_cdf_figure(runs, tmp_path / "a.png").read_bytes()
    second = jct_cdf_figure(runs, tmp_path / "b.png").read_bytes()
    assert first == second and first.startswith(b"\x89PNG")


# --- the readable table (issue 25, item 6) -----------------------------------------------------


def test_each_time_column_gets_the_unit_that_shows_it():
    from swftools.whatif.compare import column_unit

    waits = ("s", "min", "h")
    assert column_unit([0.0, 18.0], waits) == "s"  # was 0.00 h beside x13.527
    assert column_unit([9.0, 599.0], waits) == "s"  # 9.98 min: below 10 of the unit
    assert column_unit([600.0, 30.0], waits) == "min"
    assert column_unit([36000.0, 100.0], waits) == "h"
    assert column_unit([0.0, 0.0], waits) == "s"
    spans = ("s", "min", "h", "d")
    assert column_unit([5 * 86400.0], spans) == "h" and column_unit([30 * 86400.0], spans) == "d"


def test_table_rows_are_labelled_and_zero_baselines_read_n_a():
    """Waits of seconds are visible, ratio rows say against what, a ratio against a zero
    baseline is ``n/a`` in the text and in the HTML report alike."""
    from swftools.report.html import whatif_table

    a = jobs([(0, 0, 100, 1), (0, 0, 100, 1)])  # no wait at all: a zero baseline
    b = jobs([(0, 0, 50, 1), (0, 30, 50, 1)])
    rows = compare([("packed", a, [(0, 2)]), ("lxv", b, [(0, 2)])])
    text = table_text(rows, "gpu", ["site s", ""])
    lines = text.splitlines()
    assert lines[:2] == ["site s", ""]
    head = lines[2]
    assert "mean wait (s)" in head and "GPU-hours" in head and "makespan (s)" in head
    body = lines[4:]
    assert [line[:17].rstrip() for line in body] == ["packed", "lxv", "  ratio to packed"]
    assert body[1].split()[2] == "15.0"  # lxv's mean wait: 15 s, not 0.00 h
    ratio = body[2].split()
    assert ratio[3:7] == ["x1.000", "n/a", "n/a", "x0.632"]  # packed waits 0; JCT sqrt(50 80)/100
    assert "x0.000" not in text and "xnan" not in text
    html = whatif_table({"policies": [r.to_json() for r in rows]})
    assert html["rows"][1][2] == "15.0 (n/a)" and html["headers"][2] == "mean wait (s)"
    assert "ratio to packed" in html["caption"]


def test_processor_hours_on_a_cpu_trace():
    rows = compare([("packed", jobs([(0, 0, 3600, 4)]), [(0, 4)])])
    assert "processor-hours" in table_text(rows, "processor").splitlines()[0]
    assert "GPU-hours" in table_text(rows, "gpu").splitlines()[0]


def test_no_jobs_give_zero_figures_and_an_empty_table_has_headings():
    from swftools.whatif.compare import FIGURES, column_unit, table_cells

    assert figures(jobs([]), [(0, 8)]) == {name: 0.0 for name in FIGURES}
    assert column_unit([], ("s", "min", "h")) == "s"
    cells = table_cells([])
    assert cells.baseline == "" and cells.values == [] and cells.ratios == []
    assert cells.headings[1] == "mean wait (s)" and cells.headings[7] == "GPU-hours"


def test_makespan_runs_from_the_first_submit():
    got = figures(jobs([(1000, 0, 100, 1), (1500, 200, 50, 1)]), [(0, 8)])
    assert got["makespan_s"] == 1750 - 1000


def test_cells_show_times_in_their_column_unit():
    from swftools.whatif.compare import cell_text

    waits = ("s", "min", "h")
    assert cell_text(90.0, waits) == "90.0"  # no unit given: the first, seconds
    assert cell_text(90.0, waits, "s") == "90.0"
    assert cell_text(5400.0, waits, "min") == "90.00"
    assert cell_text(5400.0, waits, "h") == "1.50"
    assert cell_text(1234.5, "{:,.1f}") == "1,234.5"


def test_table_columns_in_minutes_and_hours_and_their_unit_words():
    """Waits of 10 and 20 min show in min, a makespan of 41,200 s (11.44 h) in h; the hours heading
    names the trace's unit (GPU by default, any other word as given)."""
    from swftools.whatif.compare import table_cells

    a = jobs([(0, 600, 6000, 1), (0, 600, 6000, 1)])
    b = jobs([(0, 1200, 40000, 1), (0, 1200, 40000, 1)])
    policies = [r.to_json() for r in compare([("packed", a, [(0, 2)]), ("lxv", b, [(0, 2)])])]
    cells = table_cells(policies)
    assert cells.headings[1:3] == ["mean wait (min)", "median wait (min)"]
    assert cells.headings[5] == "makespan (h)" and cells.headings[7] == "GPU-hours"
    assert cells.values[0][1][1:3] == ["10.00", "10.00"] and cells.values[1][1][5] == "11.44"
    assert table_cells(policies, "core").headings[7] == "core-hours"
    assert "GPU-hours" in table_text(compare([("packed", a, [(0, 2)])])).splitlines()[0]


def test_text_table_aligns_names_left_and_figures_right():
    import re

    rows = compare([("packed", jobs([(0, 0, 100, 1)]), [(0, 1)]),
                    ("variability-first", jobs([(0, 5, 100, 1)]), [(0, 1)])])
    lines = table_text(rows).splitlines()
    assert re.fullmatch(r"[- ]+", lines[1])
    spans = [m.span() for m in re.finditer(r"-+", lines[1])]
    assert len(spans) == 10
    for line in [lines[0], *lines[2:]]:
        assert line[0] != " " or line.startswith("  ratio to packed")  # names: left
        for start, end in spans[1:]:  # figures: right, each ending under its dashes
            assert line[end - 1] != " " and line[start:end].strip()
    assert lines[2].startswith("packed ") and lines[3].startswith("variability-first ")


def _png_size(data: bytes) -> tuple[int, int]:
    import struct

    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_jct_figure_plots_each_policys_cdf(tmp_path, monkeypatch):
    """Five policies (line styles cycle after four); a job of 0 s counts as 1 s of JCT. The
    figure is 700 x 400 pixels, names no software version, and plots per policy the sorted
    JCTs in hours against the fraction of jobs done."""
    import warnings

    import numpy as np
    from matplotlib.colors import to_hex
    from matplotlib.figure import Figure

    saved = []
    original = Figure.savefig

    def record(fig, *args, **kwargs):
        saved.append(fig)
        return original(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", record)
    runs = [(f"p{k}", jobs([(0, 3600 * k, 7200, 1), (0, 0, 0, 1), (0, 60, 1800, 2)]))
            for k in range(5)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing for a user to read on stderr
        data = jct_cdf_figure(runs, tmp_path / "f.png").read_bytes()
    assert _png_size(data) == (700, 400)
    assert b"Software" not in data and b"matplotlib" not in data.lower()
    (fig,) = saved
    (ax,) = fig.axes
    assert [round(v, 6) for v in ax.get_position().bounds] == [0.1, 0.15, 0.87, 0.75]
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "job completion time (wait + run), hours, log scale"
    assert ax.get_ylabel() == "fraction of jobs"
    assert ax.get_title() == "Job completion time per placement policy"
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == [f"p{k}" for k in range(5)]
    assert [line.get_linestyle() for line in lines] == ["-", "--", ":", "-.", "-"]
    for k, line in enumerate(lines):
        assert line.get_drawstyle() == "steps-post" and line.get_linewidth() == 1.4
        want = sorted([1 / 3600, 1860 / 3600, (3600 * k + 7200) / 3600])
        assert np.allclose(line.get_xdata(), want, rtol=0, atol=1e-12)
        assert np.allclose(line.get_ydata(), [1 / 3, 2 / 3, 1])
    grid = ax.xaxis.get_gridlines()[0]
    assert grid.get_visible() and grid.get_linewidth() == 0.4
    assert to_hex(grid.get_color()) == "#cccccc"
    legend = ax.get_legend()
    assert legend._loc == 4  # lower right
    assert [t.get_text() for t in legend.get_texts()] == [f"p{k}" for k in range(5)]
    assert all(t.get_fontsize() == 8 for t in legend.get_texts())
