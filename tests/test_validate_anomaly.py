"""Workload anomalies: flurries (configurable thresholds) and verbatim duplicate records."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.validate import rules_anomaly

from .strategies import aaic_jobs
from .validate_support import T0, aaic_table, assert_fires, assert_silent, run


def burst_table(n_burst: int, n_background: int, spacing_s: int = 10):
    """``n_background`` jobs of various users every 10 min, plus alice's burst in the middle."""
    jobs = [{"user": f"u{i % 7}", "submit_time": T0 + 600 * i} for i in range(n_background)]
    middle = T0 + 600 * (n_background // 2)
    jobs += [{"user": "alice", "submit_time": middle + spacing_s * k} for k in range(n_burst)]
    jobs.sort(key=lambda j: j["submit_time"])
    return aaic_table(jobs)


def test_flurry_is_one_finding_per_burst():
    report = run(burst_table(1200, 200), "flurry")
    found = assert_fires(report, "flurry", 1, severity="warning")
    assert found[0].value == 1200 and "user alice submitted 1200 jobs" in found[0].message


def test_flurry_thresholds_are_options():
    table = burst_table(300, 200)
    assert_silent(run(table, "flurry"), "flurry")
    assert_fires(run(table, "flurry", flurry_min_jobs=250), "flurry", 1)
    assert_silent(run(table, "flurry", flurry_min_jobs=250, flurry_min_share=0.99), "flurry")
    assert_silent(run(burst_table(300, 200, spacing_s=600), "flurry", flurry_min_jobs=250,
                      flurry_window_s=3600), "flurry")


def test_two_separate_bursts_are_two_findings():
    first = burst_table(300, 100)
    jobs = [{"user": "bob", "submit_time": T0 + 10**6 + 5 * k} for k in range(300)]
    second = aaic_table(jobs)
    table = pa.concat_tables([first, second.cast(first.schema)])
    found = assert_fires(run(table, "flurry", flurry_min_jobs=250), "flurry", 2)
    assert [f.message.split()[1] for f in found] == ["alice", "bob"]


def test_duplicate_record():
    table = aaic_table([{"job_id": 1}, {"job_id": 2}, {"job_id": 3}])
    twice = pa.concat_tables([table, table.slice(1, 1)])
    found = assert_fires(run(twice, "duplicate-record"), "duplicate-record", 1)
    assert found[0].line == 4 and found[0].message == "repeats row 2 verbatim"


def test_distinct_jobs_of_a_bulk_submission_are_not_duplicates():
    table = aaic_table([{"job_id": k, "submit_time": T0} for k in range(1, 6)])
    assert_silent(run(table, "duplicate-record"), "duplicate-record")


@given(aaic_jobs(min_size=1, max_size=20), st.data())
def test_any_repeated_row_is_found(table, data):
    row = data.draw(st.integers(0, table.num_rows - 1))
    planted = pa.concat_tables([table, table.slice(row, 1)])
    found = assert_fires(run(planted, "duplicate-record"), "duplicate-record", 1)
    assert found[0].line == table.num_rows + 1


def _one_column_apart(column: str, value, base: dict | None = None):
    """Rows 1 and 3 identical, row 2 between them the same but for ``column``."""
    row = {"job_id": 7, "submit_time": T0, "avg_cpu_time_s": 1.5, **(base or {})}
    return aaic_table([row, {**row, column: value}, row])


@pytest.mark.parametrize("column, value", [
    ("job_id", 8), ("user", "bob"), ("user", None), ("queue", "Short"), ("nodes", 2),
    ("walltime_s", None), ("submit_time", T0 + 1), ("avg_cpu_time_s", 1.25),
    ("avg_cpu_time_s", None)])
def test_duplicate_found_past_a_row_that_differs_in_one_field(column, value):
    report = run(_one_column_apart(column, value), "duplicate-record")
    found = assert_fires(report, "duplicate-record", 1)
    assert found[0].line == 3 and found[0].message == "repeats row 1 verbatim"


@pytest.mark.parametrize("column, first, second", [
    ("avg_cpu_time_s", 1.5, 1.25),  # equal as integers, different as floats
    ("avg_cpu_time_s", 1.5, math.nextafter(1.5, 2)),  # the closest floats
    ("avg_cpu_time_s", 0.0, None),  # a null is not a zero
    ("user", "alice", None),  # a null string is not the first string of the dictionary
    ("walltime_s", 0, None), ("walltime_s", -7_777_777_777, None)])
def test_records_differing_in_a_value_or_a_null_are_not_duplicates(column, first, second):
    table = aaic_table([{"job_id": 7, "submit_time": T0, column: first},
                        {"job_id": 7, "submit_time": T0, column: second}])
    assert_silent(run(table, "duplicate-record"), "duplicate-record")


def test_duplicates_across_chunks_with_different_dictionaries():
    """Strings are compared by value even when the chunks of a column encode them apart."""
    a = aaic_table([{"job_id": 1, "user": "bob"}, {"job_id": 2, "user": "alice", "submit_time": T0}])
    b = aaic_table([{"job_id": 2, "user": "alice", "submit_time": T0}])
    found = assert_fires(run(pa.concat_tables([a, b]), "duplicate-record"), "duplicate-record", 1)
    assert found[0].line == 3 and found[0].message == "repeats row 2 verbatim"


def test_job_id_unique_leaves_verbatim_repeats_to_duplicate_record():
    """Both rules share one search for verbatim repeats (ctx.memo); each reports its own kind."""
    table = aaic_table([{"job_id": 1}, {"job_id": 2}, {"job_id": 1, "user": "bob"}])
    twice = pa.concat_tables([table, table.slice(1, 1)])
    report = run(twice, "duplicate-record", "job-id-unique")
    assert [f.line for f in assert_fires(report, "duplicate-record", 1)] == [4]
    assert [f.line for f in assert_fires(report, "job-id-unique", 1)] == [3]


@pytest.mark.parametrize("column, first, second", [
    ("job_id", 7, 8), ("user", "alice", "bob"), ("user", "alice", None), ("walltime_s", 5, 6),
    ("walltime_s", 0, None), ("avg_cpu_time_s", 1.5, 1.25), ("requested_walltime_s", 60, 61)])
def test_records_whose_hashes_collide_are_compared_field_by_field(monkeypatch, column, first,
                                                                   second):
    """With a row hash that collides for every record (multiplier 0) the findings are the same:
    no false duplicate, and a repeat is found past a different record between the two."""
    monkeypatch.setattr(rules_anomaly, "_MIX", np.uint64(0))
    row = {"job_id": 7, "submit_time": T0, "avg_cpu_time_s": 1.5}
    a, b = {**row, column: first}, {**row, column: second}
    assert_silent(run(aaic_table([a, b]), "duplicate-record"), "duplicate-record")
    found = assert_fires(run(aaic_table([a, b, a, b]), "duplicate-record"), "duplicate-record", 2)
    assert [(f.line, f.message) for f in found] == [(3, "repeats row 1 verbatim"),
                                                    (4, "repeats row 2 verbatim")]
