"""swftools.report.walltime: walltime statistics (hours) per parallelism class, CDF."""

from __future__ import annotations

import numpy as np
import pytest

from swftools.report import walltime
from swftools.report.frame import is_skipped, prepare
from swftools.site import load_site
from tests.report_support import T0, aaic_table, swf_table

AAIC = load_site("aaic")


def test_statistics_by_class_on_successful_jobs():
    table = aaic_table([{"walltime_s": 1800}, {"walltime_s": 3600}, {"walltime_s": 7200},
                        {"walltime_s": 36_000, "gpus_per_node": 8},
                        {"walltime_s": 720, "nodes": 4, "gpus_per_node": 8},
                        {"walltime_s": 99_999, "termcode": 2}])  # not successful
    result = walltime.analyze(prepare(table, AAIC))
    groups = result["groups"]
    assert result["jobs"] == 5 and result["unit"] == "hours"
    assert groups["all"]["median"] == 1.0  # of 0.2, 0.5, 1, 2, 10 h
    assert groups["single"]["median"] == 1.0
    assert groups["single"]["mean"] == pytest.approx(3.5 / 3)
    assert (groups["single"]["min"], groups["single"]["max"]) == (0.5, 2.0)
    assert groups["single_node_multi"]["median"] == 10.0
    assert groups["multi_node"]["median"] == 0.2
    assert groups["multi_node"]["std"] is None  # one job


def test_cdf_quantiles_are_monotone_and_end_at_the_extremes():
    rng = np.random.default_rng(3)
    table = aaic_table([{"walltime_s": int(s)} for s in rng.integers(60, 10**5, 300)])
    group = walltime.analyze(prepare(table, AAIC))["groups"]["all"]
    cdf = group["cdf_hours"]
    assert len(cdf) == 101 and all(a <= b for a, b in zip(cdf, cdf[1:]))
    assert (cdf[0], cdf[-1], cdf[50]) == (group["min"], group["max"], group["median"])


def test_missing_class_is_skipped_with_reason():
    result = walltime.analyze(prepare(aaic_table([{"walltime_s": 600}]), AAIC))
    assert is_skipped(result["groups"]["multi_node"])
    assert result["groups"]["multi_node"]["reason"] == "no multi-node jobs"


def test_trace_without_outcome_uses_all_jobs_and_says_so():
    table = swf_table({"job_id": [1, 2, 3], "gpus": [1, 1, 8], "walltime_s": [3600, 7200, 30],
                       "submit_time": [T0] * 3})
    result = walltime.analyze(prepare(table, None))
    assert "records no outcome" in result["population"]
    assert result["groups"]["all"]["count"] == 2
    assert "node counts" in result["groups"]["multi_node"]["reason"]
