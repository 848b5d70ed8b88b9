"""Workload anomalies: flurries (configurable thresholds) and verbatim duplicate records."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

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
