"""swftools.report.wra: walltime request accuracy and requests at the queue's maximum."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from swftools.report import wra
from swftools.report.frame import is_skipped, prepare
from swftools.site import load_site
from tests import strategies
from tests.report_support import T0, aaic_table, swf_table

AAIC = load_site("aaic")


def _jobs():
    return aaic_table([
        {"walltime_s": 3600, "requested_walltime_s": 36_000},             # 0.1
        {"walltime_s": 1800, "requested_walltime_s": 3600, "queue": "Short"},  # 0.5
        {"walltime_s": 5400, "requested_walltime_s": 10_800, "queue": "Short"},  # 0.5, at max
        {"walltime_s": 7200, "requested_walltime_s": 259_200},            # Normal max: 1/36
        {"walltime_s": 600, "requested_walltime_s": 600, "termcode": 1},  # failed: left out
        {"walltime_s": 30, "requested_walltime_s": 600},                  # < 60 s: left out
    ])


def test_mean_median_and_distribution():
    result = wra.analyze(prepare(_jobs(), AAIC))
    values = np.array([0.1, 0.5, 0.5, 7200 / 259_200])
    assert result["jobs"] == 4
    assert result["mean"] == pytest.approx(values.mean())
    assert result["median"] == pytest.approx(np.median(values))
    assert result["std"] == pytest.approx(values.std(ddof=1))
    assert result["share_above_1"] == 0
    counts = {(h["from"], h["to"]): h["jobs"] for h in result["histogram"]}
    # bins include their upper edge: 0.1 is in 0.0 to 0.1, 0.5 in 0.4 to 0.5
    assert counts[(0.0, 0.1)] == 2 and counts[(0.4, 0.5)] == 2
    assert counts[(1.0, None)] == 0
    assert sum(counts.values()) == 4


def test_share_requesting_the_queue_maximum():
    at_max = wra.analyze(prepare(_jobs(), AAIC))["at_queue_max"]
    assert (at_max["jobs"], at_max["at_max"], at_max["share"]) == (4, 2, 0.5)
    by_queue = {b["queue"]: (b["jobs"], b["at_max"], b["walltime_max_s"])
                for b in at_max["by_queue"]}
    assert by_queue == {"Short": (2, 1, 10_800), "Normal": (2, 1, 259_200)}


def test_numeric_swf_queues_map_through_the_site():
    table = swf_table({"job_id": [1, 2], "gpus": [1, 1], "walltime_s": [600, 600],
                       "requested_walltime_s": [10_800, 3600], "queue": ["2", "2"],
                       "swf_status": [1, 1], "submit_time": [T0, T0]})
    at_max = wra.analyze(prepare(table, AAIC))["at_queue_max"]
    assert at_max["share"] == 0.5 and at_max["by_queue"][0]["queue"] == "2"


def test_without_site_the_queue_maximum_is_skipped_not_guessed():
    table = swf_table({"job_id": [1], "gpus": [1], "walltime_s": [600],
                       "requested_walltime_s": [1200], "swf_status": [1], "submit_time": [T0]})
    result = wra.analyze(prepare(table, None))
    assert result["mean"] == 0.5
    assert is_skipped(result["at_queue_max"])
    assert "site" in result["at_queue_max"]["reason"]


def test_no_requested_walltimes_skips_with_the_reason():
    table = swf_table({"job_id": [1, 2], "gpus": [1, 2], "walltime_s": [600, 900],
                       "swf_status": [1, 1], "submit_time": [T0, T0]})
    result = wra.analyze(prepare(table, None))
    assert is_skipped(result)
    assert "requested walltime is unknown" in result["reason"]


def test_quarterly_statistics():
    quarterly = wra.analyze(prepare(_jobs(), AAIC))["quarterly"]
    assert [q["quarter"] for q in quarterly] == ["2017Q3"] and quarterly[0]["jobs"] == 4


@given(strategies.aaic_jobs(min_size=1, max_size=40))
def test_wra_is_actual_over_requested(table):
    result = wra.analyze(prepare(table, AAIC))
    df = table.to_pandas()
    ok = df[(df.walltime_s >= 60) & (df.termcode == 0) & (df.requested_walltime_s > 0)]
    if ok.empty:
        assert is_skipped(result)
        return
    expected = ok.walltime_s / ok.requested_walltime_s
    assert result["jobs"] == len(ok)
    assert result["mean"] == pytest.approx(expected.mean())
    assert result["median"] == pytest.approx(expected.median())
    assert sum(h["jobs"] for h in result["histogram"]) == len(ok)
    assert result["histogram"][-1]["jobs"] == int((expected > 1).sum())


def test_exactly_one_is_counted_where_the_text_says():
    """WRA exactly 1.0 did not run past its request: it is in 0.9 to 1.0, not above 1.0, so
    the last bin and "Above 1" count the same jobs."""
    table = aaic_table([{"walltime_s": 3600, "requested_walltime_s": 3600}] * 3 +
                       [{"walltime_s": 3700, "requested_walltime_s": 3600}])
    result = wra.analyze(prepare(table, AAIC))
    counts = {(h["from"], h["to"]): h["jobs"] for h in result["histogram"]}
    assert counts[(0.9, 1.0)] == 3 and counts[(1.0, None)] == 1
    assert result["share_above_1"] == 0.25 == result["histogram"][-1]["share"]
    assert [wra.bin_label(h) for h in result["histogram"][-2:]] == ["0.9 to 1.0", "above 1.0"]


@given(strategies.wra_values())
def test_histogram_bins_include_their_upper_edge(values):
    counts = wra.histogram_counts(values)
    assert counts.sum() == values.size
    edges = wra.HISTOGRAM_EDGES
    for i, n in enumerate(counts):
        low, high = edges[i], edges[i + 1]
        inside = (values > low) & (values <= high) if i else (values <= high)
        assert n == int(inside.sum()), (low, high)
