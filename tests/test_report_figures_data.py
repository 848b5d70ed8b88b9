"""What the report's figures plot, checked against the job table itself (issue 30: figure tests
check the plotted data, not only the bytes). Each expected value is recomputed here from the
table with plain pandas/numpy -- not read from report.json -- so a wrong analysis or a figure
that plots the wrong series fails."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from swftools import synth
from swftools.report import analyze

ZONE = "Asia/Tokyo"


@pytest.fixture(scope="module")
def trace():
    """(jobs as a DataFrame, the report data) of a synthetic trace over two quarters."""
    table = synth.generate(3000, seed=5, start="2017-09-28T00:00:00+09:00")
    return table.to_pandas(), analyze(table).data


def _drawn(data, name):
    from swftools.report.figures import figure, style_context

    with style_context():
        return figure(data, name)


def _heights(ax) -> list[float]:
    return [p.get_height() for p in ax.patches]


def _quarter(seconds: pd.Series) -> pd.Series:
    local = pd.to_datetime(seconds, unit="s", utc=True).dt.tz_convert(ZONE)
    return local.dt.year.astype(str) + "Q" + local.dt.quarter.astype(str)


def _size_class(jobs: pd.DataFrame) -> pd.Series:
    return np.where(jobs["gpus"] == 1, "single",
                    np.where(jobs["nodes"] == 1, "single_node_multi", "multi_node"))


def test_queue_bars_are_the_jobs_per_queue(trace):
    jobs, data = trace
    ax = _drawn(data, "queues.png").axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    counts = jobs["queue"].value_counts()
    assert sorted(labels) == sorted(counts.index)
    assert _heights(ax) == [counts[q] for q in labels]


def test_outcome_bars_are_the_jobs_per_termcode(trace):
    jobs, data = trace
    ax = _drawn(data, "outcomes.png").axes[0]
    codes = [int(t.get_text().split()[0]) for t in ax.get_xticklabels()]
    counts = jobs["termcode"].value_counts()
    assert sorted(codes) == sorted(counts.index)
    assert _heights(ax) == [counts[c] for c in codes]


def test_per_quarter_panels_count_jobs_users_and_groups(trace):
    jobs, data = trace
    fig = _drawn(data, "per_quarter.png")
    ax_jobs, ax_users = fig.axes[:2]
    quarter = _quarter(jobs["submit_time"])
    names = sorted(quarter.unique())
    assert [t.get_text() for t in ax_jobs.get_xticklabels()] == names
    every = quarter.value_counts()
    long = quarter[jobs["walltime_s"] >= 60].value_counts()
    assert _heights(ax_jobs) == [every[q] for q in names] + [long[q] for q in names]
    lines = {line.get_label(): list(line.get_ydata()) for line in ax_users.lines}
    assert lines["active users"] == [jobs.loc[quarter == q, "user"].nunique() for q in names]
    assert lines["active groups"] == [jobs.loc[quarter == q, "group"].nunique() for q in names]


def test_parallelism_shares_and_stacks_are_the_size_classes(trace):
    jobs, data = trace
    fig = _drawn(data, "parallelism.png")
    ax_share, ax_quarter = fig.axes[:2]
    long = jobs[jobs["walltime_s"] >= 60]
    classes = pd.Series(_size_class(long), index=long.index)
    order = ["single", "single_node_multi", "multi_node"]
    share = classes.value_counts(normalize=True)
    assert _heights(ax_share)[:3] == pytest.approx([100 * share[c] for c in order], abs=1e-4)
    quarter = _quarter(long["submit_time"])
    names = sorted(quarter.unique())
    stacked = _heights(ax_quarter)
    expected = [int(((classes == c) & (quarter == q)).sum()) for c in order for q in names]
    assert stacked == expected


def test_walltime_cdf_lines_are_quantiles_of_successful_jobs(trace):
    """Each plotted point (hours, p) of the all-jobs line is a p-quantile of the walltimes of
    successful jobs of at least 60 s: at most p of them below it, at least p at or below it
    (within one job)."""
    jobs, data = trace
    ax = _drawn(data, "walltime_cdf.png").axes[0]
    ok = jobs[(jobs["termcode"] == 0) & (jobs["walltime_s"] >= 60)]
    hours = np.sort(ok["walltime_s"].to_numpy() / 3600.0)
    n = len(hours)
    line = next(x for x in ax.lines if x.get_label().startswith("all"))
    assert line.get_label().endswith(f"({n:,})")
    for h, p in zip(line.get_xdata(), line.get_ydata()):
        # (report.json keeps 6 significant digits)
        below = np.searchsorted(hours, h * (1 - 1e-5), side="left") / n
        at_or_below = np.searchsorted(hours, h * (1 + 1e-5), side="right") / n
        assert below <= p + 1 / n and at_or_below >= p - 1 / n, (h, p)
    assert line.get_ydata()[-1] == 1.0
    assert line.get_xdata()[-1] == pytest.approx(hours[-1], rel=1e-5)


def test_utilization_line_is_busy_gpu_seconds_per_day(trace):
    """The busy line, bin by bin, against a brute-force overlap sum of every job's GPUs over
    [start, finish) with each day of the plotted bins; the capacity line is the AAIC preset's
    managed nodes (32 to 40) x 8 GPUs."""
    jobs, data = trace
    result = data["context"]["utilization"]
    ax = _drawn(data, "utilization.png").axes[0]
    busy_line, capacity_line = ax.lines[:2]
    starts = np.array(result["bin_start_epoch_s"], dtype=np.int64)
    width = result["bin_s"]
    expected = []
    for b in starts:
        lo = np.maximum(jobs["start_time"].to_numpy(), b)
        hi = np.minimum(np.maximum(jobs["finish_time"], jobs["start_time"]).to_numpy(), b + width)
        expected.append(float((np.clip(hi - lo, 0, None) * jobs["gpus"].to_numpy()).sum()) / width)
    # (report.json keeps 6 significant digits)
    assert list(busy_line.get_ydata()) == pytest.approx(expected, rel=1e-5)
    assert len(busy_line.get_ydata()) == len(starts)
    assert set(capacity_line.get_ydata()) <= {8.0 * n for n in range(32, 41)}
