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
