"""swftools.report.parallelism: shares of single-PE, single-node multi-PE and multi-node jobs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.report import parallelism
from swftools.report.frame import is_skipped, prepare
from swftools.site import load_site
from tests import strategies
from tests.report_support import T0, aaic_table, swf_table

AAIC = load_site("aaic")
OCT_2017 = 1_507_000_000  # 2017-10-03, fourth quarter


def _jobs():
    rows = [{"gpus_per_node": 1}] * 6 + [{"gpus_per_node": 4}] * 2
    rows += [{"nodes": 2, "gpus_per_node": 8, "submit_time": OCT_2017}]
    rows += [{"gpus_per_node": 1, "walltime_s": 59}]  # under 60 s: left out
    return aaic_table(rows)


def test_class_shares_and_breakdowns():
    result = parallelism.analyze(prepare(_jobs(), AAIC))
    assert result["jobs"] == 9
    classes = result["classes"]
    assert [classes[k]["jobs"] for k in ("single", "single_node_multi", "multi_node")] == [6, 2, 1]
    assert classes["single"]["share"] == pytest.approx(6 / 9)
    assert classes["single"]["label"] == "single-GPU"
    assert result["single_node_by_pe_count"] == [
        {"pes": 1, "jobs": 6, "share": 0.75}, {"pes": 4, "jobs": 2, "share": 0.25}]
    assert result["multi_node_by_node_count"] == [{"nodes": 2, "jobs": 1, "share": 1.0}]


def test_quarterly_counts_and_shares():
    quarterly = parallelism.analyze(prepare(_jobs(), AAIC))["quarterly"]
    assert [q["quarter"] for q in quarterly] == ["2017Q3", "2017Q4"]
    assert quarterly[0]["classes"] == {"single": 6, "single_node_multi": 2, "multi_node": 0}
    assert quarterly[1]["shares"]["multi_node"] == 1.0


def test_swf_trace_without_nodes_uses_processor_bins():
    table = swf_table({"job_id": list(range(1, 7)), "gpus": [1, 1, 2, 3, 4, 100],
                       "walltime_s": [120] * 6, "submit_time": [T0] * 6})
    result = parallelism.analyze(prepare(table, None))
    assert set(result["classes"]) == {"single", "multi"}
    assert result["classes"]["multi"]["label"] == "multi-processor"
    assert [(b["bin"], b["jobs"]) for b in result["by_pe_count_bins"]] == [
        ("1", 2), ("2", 1), ("3-4", 2), ("65-128", 1)]
    assert is_skipped(result["multi_node_by_node_count"])
    assert "node counts" in result["single_node_by_pe_count"]["reason"]


def test_relative_times_skip_quarters_with_the_reason():
    table = swf_table({"job_id": [1], "gpus": [1], "walltime_s": [120], "submit_time": [0]},
                      origin=None)
    quarterly = parallelism.analyze(prepare(table, None))["quarterly"]
    assert is_skipped(quarterly) and "UnixStartTime" in quarterly["reason"]


def test_unknown_sizes_are_counted_and_left_out():
    table = swf_table({"job_id": [1, 2, 3], "gpus": [1, None, 0], "walltime_s": [120] * 3,
                       "submit_time": [T0] * 3})
    result = parallelism.analyze(prepare(table, None))
    assert result["jobs"] == 1 and result["excluded_unknown_size"] == 2


def test_skipped_when_no_job_reaches_60_s():
    result = parallelism.analyze(prepare(aaic_table([{"walltime_s": 10}]), AAIC))
    assert is_skipped(result) and "60 s" in result["reason"]


@given(st.integers(1, 10**6))
def test_power_of_two_bin_contains_the_value(value):
    upper = int(parallelism.power_of_two_bin(np.array([float(value)]))[0])
    assert upper >= value and (upper == 1 or upper // 2 < value)
    label = parallelism.bin_label(upper)
    low = 1 if upper <= 2 else upper // 2 + 1
    assert label == (str(upper) if upper <= 2 else f"{low}-{upper}")


@given(strategies.aaic_jobs(min_size=1, max_size=40))
def test_counts_add_up(table):
    result = parallelism.analyze(prepare(table, AAIC))
    if is_skipped(result):
        return
    assert sum(c["jobs"] for c in result["classes"].values()) == result["jobs"]
    assert sum(c["share"] for c in result["classes"].values()) == pytest.approx(1.0)
    assert sum(r["jobs"] for r in result["single_node_by_pe_count"]) == \
        result["classes"]["single"]["jobs"] + result["classes"]["single_node_multi"]["jobs"]
    assert sum(q["jobs"] for q in result["quarterly"]) == result["jobs"]
