"""swftools.report.context: queues, outcomes, per-quarter activity, utilization vs capacity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.report import context
from swftools.report.frame import is_skipped, prepare
from swftools.site import load_site
from tests.report_support import T0, aaic_table, swf_table

AAIC = load_site("aaic")
MIDNIGHT_JST = 1_500_217_200  # 2017-07-17 00:00 Asia/Tokyo


@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 500), st.integers(1, 16)),
                min_size=1, max_size=30),
       st.lists(st.integers(0, 1600), min_size=1, max_size=10))
def test_busy_integral_matches_brute_force(jobs, edges):
    start = np.array([j[0] for j in jobs], dtype=np.int64)
    finish = start + np.array([j[1] for j in jobs], dtype=np.int64)
    pes = np.array([j[2] for j in jobs], dtype=np.int64)
    edges_arr = np.array(sorted(edges), dtype=np.int64)
    got = context.busy_integral(start, finish, pes, edges_arr)
    for edge, value in zip(edges_arr, got):
        expected = sum(int(g) * max(0, min(int(f), int(edge)) - int(s))
                       for s, f, g in zip(start, finish, pes))
        assert value == expected


def test_utilization_against_the_site_capacity():
    # One 8-GPU job busy for the whole first local day, one 16-GPU job for half of the second.
    table = aaic_table([
        {"submit_time": MIDNIGHT_JST, "walltime_s": 86400, "gpus_per_node": 8},
        {"submit_time": MIDNIGHT_JST + 86400, "walltime_s": 43200, "nodes": 2,
         "gpus_per_node": 8}])
    result = context.utilization(prepare(table, AAIC))
    assert result["bin_s"] == 86400
    assert result["bin_start_epoch_s"][0] == MIDNIGHT_JST
    assert result["busy_pes_mean"][:2] == [8.0, 8.0]
    capacity = result["capacity"]
    assert capacity["capacity_pes"][0] == 320.0  # 40 nodes x 8 GPUs
    busy_gpu_s = 8 * 86400 + 16 * 43200
    assert capacity["mean_utilization"] == pytest.approx(busy_gpu_s / (320 * 86400 * 2))
    assert capacity["bins_over_capacity"] == 0


def test_swf_capacity_comes_from_max_procs():
    table = swf_table({"job_id": [1], "gpus": [64], "walltime_s": [86400], "wait_s": [0],
                       "submit_time": [0], "start_time": [0], "finish_time": [86400]},
                      origin=None, swf_header=[["MaxProcs", "128"]])
    result = context.utilization(prepare(table, None))
    assert result["capacity"]["source"] == "SWF header MaxProcs"
    assert result["capacity"]["mean_utilization"] == 0.5
    assert result["absolute_times"] is False


def test_unknown_capacity_and_unknown_start_times_are_said():
    table = swf_table({"job_id": [1], "gpus": [4], "walltime_s": [100], "submit_time": [T0],
                       "start_time": [T0], "finish_time": [T0 + 100]})
    assert "capacity is unknown" in context.utilization(prepare(table, None))["capacity"]["reason"]
    no_start = swf_table({"job_id": [1], "gpus": [4], "walltime_s": [100], "submit_time": [T0]})
    result = context.utilization(prepare(no_start, None))
    assert is_skipped(result) and "start_time" in result["reason"]


def test_outcomes_by_termcode_and_by_swf_status():
    table = aaic_table([{"termcode": 0}] * 3 + [{"termcode": 3}])
    result = context.outcomes(prepare(table, AAIC))
    codes = {c["code"]: (c["label"], c["jobs"]) for c in result["codes"]}
    assert codes[0] == ("success", 3) and codes[3] == ("cancelled by user", 1) and codes[4][1] == 0
    assert result["success_share"] == 0.75
    swf = swf_table({"job_id": [1, 2, 3], "swf_status": [1, 5, None]})
    result = context.outcomes(prepare(swf, None))
    assert (result["column"], result["unknown"], result["success_share"]) == ("swf_status", 1, 0.5)


def test_queues_are_labelled_with_site_names():
    table = swf_table({"job_id": [1, 2, 3], "queue": ["1", "1", "2"]})
    rows = context.queues(prepare(table, AAIC))["queues"]
    assert [(r["label"], r["jobs"]) for r in rows] == [("1 (Normal)", 2), ("2 (Short)", 1)]
    assert is_skipped(context.queues(prepare(swf_table({"job_id": [1]}), None)))


def test_active_users_and_groups_per_quarter():
    oct_2017 = 1_507_000_000
    table = aaic_table([{"user": "a", "group": "x"}, {"user": "b", "group": "x"},
                        {"user": "a", "group": "x", "submit_time": oct_2017, "walltime_s": 5}])
    result = context.per_quarter(prepare(table, AAIC))
    assert result["quarters"] == [
        {"quarter": "2017Q3", "jobs": 2, "jobs_min_60s": 2, "users": 2, "groups": 1},
        {"quarter": "2017Q4", "jobs": 1, "jobs_min_60s": 0, "users": 1, "groups": 1}]
    assert (result["users_total"], result["groups_total"]) == (2, 1)


def test_per_quarter_without_users_says_so():
    table = swf_table({"job_id": [1], "submit_time": [T0], "walltime_s": [100]})
    result = context.per_quarter(prepare(table, None))
    assert result["quarters"][0]["users"] is None
    assert any("no user" in note for note in result["notes"])
