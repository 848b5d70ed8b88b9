"""Time arithmetic, ordering and identity rules, each with a planted defect."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from .strategies import aaic_jobs
from .validate_support import (T0, aaic_table, assert_fires, assert_silent, run, swf_jobs, swf_line,
                              write_swf)

from swftools import table as jt

ARITHMETIC = ["wait-arithmetic", "walltime-arithmetic", "start-before-submit",
              "finish-before-start", "submit-order", "job-id-unique"]


def test_wait_arithmetic():
    table = aaic_table([{}, {"start_time": T0 + 60 + 99}, {}])  # wait_s stays 10
    found = assert_fires(run(table, "wait-arithmetic"), "wait-arithmetic", 1)
    assert found[0].job_id == 2 and found[0].line == 2 and found[0].field == "wait_s"
    assert found[0].value == 10 and found[0].expected.startswith("99")


def test_walltime_arithmetic():
    table = aaic_table([{"finish_time": T0 + 10 + 5}, {}])
    found = assert_fires(run(table, "walltime-arithmetic"), "walltime-arithmetic", 1)
    assert found[0].job_id == 1 and found[0].value == 600


def test_walltime_arithmetic_accepts_a_recorded_figure_that_differs():
    """A reader's table (walltime_s = finish - start, the log's own figure beside it) passes
    walltime-arithmetic; a recorded figure equal to walltime_s is flagged by recorded-walltime."""
    table = aaic_table([{"recorded_walltime_s": 602}, {"recorded_walltime_s": 600}, {}])
    report = run(table, "walltime-arithmetic", "recorded-walltime")
    assert_silent(report, "walltime-arithmetic")
    found = assert_fires(report, "recorded-walltime", 1, severity="warning")
    assert found[0].job_id == 2 and found[0].field == "recorded_walltime_s"


def test_start_before_submit_and_finish_before_start():
    table = aaic_table([{"wait_s": None, "start_time": T0 - 5},
                        {"walltime_s": None, "finish_time": T0 + 60},
                        {}])
    report = run(table, "start-before-submit", "finish-before-start")
    assert [f.job_id for f in assert_fires(report, "start-before-submit", 1)] == [1]
    assert [f.job_id for f in assert_fires(report, "finish-before-start", 1)] == [2]


def test_submit_order_is_an_error_for_swf_and_a_warning_otherwise(tmp_path):
    table = aaic_table([{"submit_time": T0}, {"submit_time": T0 + 100}, {"submit_time": T0 + 50}])
    found = assert_fires(run(table, "submit-order"), "submit-order", 1, severity="warning")
    assert found[0].job_id == 3 and "50 s before" in found[0].message
    lines = [swf_line(1, submit=0), swf_line(2, submit=500), swf_line(3, submit=400)]
    found = assert_fires(run(write_swf(tmp_path / "t.swf", lines), "submit-order"), "submit-order",
                         1, severity="error")
    assert found[0].line == 22  # 19 header lines + 3rd job line


def test_submit_order_ignores_unknown_submit_times(tmp_path):
    lines = [swf_line(1, submit=10), swf_line(2, submit=-1, wait=-1, run=-1), swf_line(3, submit=20)]
    report = run(write_swf(tmp_path / "t.swf", lines), "submit-order", "submit-unknown")
    assert_silent(report, "submit-order")
    assert [f.job_id for f in assert_fires(report, "submit-unknown", 1)] == [2]


def test_clock_hour_shift():
    table = aaic_table([{"submit_time": T0 + 7200}, {"submit_time": T0 + 3600},
                        {"submit_time": T0 + 9000, "wait_s": -3600}])
    report = run(table, "clock-hour-shift")
    assert sorted(f.job_id for f in assert_fires(report, "clock-hour-shift", 2)) == [2, 3]


def test_job_id_unique_reports_the_repeat_with_the_first_line():
    table = aaic_table([{"job_id": 7}, {"job_id": 8}, {"job_id": 7, "user": "bob"}])
    found = assert_fires(run(table, "job-id-unique"), "job-id-unique", 1)
    assert found[0].line == 3 and found[0].message == "job id 7 already used on row 1"


def test_job_id_unique_leaves_verbatim_repeats_to_duplicate_record():
    table = aaic_table([{"job_id": 7}, {"job_id": 8}])
    twice = pa.concat_tables([table, table.slice(0, 1)])
    report = run(twice, "job-id-unique", "duplicate-record")
    assert_silent(report, "job-id-unique")
    assert_fires(report, "duplicate-record", 1)
    assert_fires(run(twice, "job-id-unique"), "job-id-unique", 1)  # alone, it still counts them


def test_job_id_unique_allows_partial_execution_lines(tmp_path):
    header = "; Preemption: Double\n; UnixStartTime: 0\n"
    lines = [swf_line(1, run=30, status=1), swf_line(1, run=10, status=2),
             swf_line(1, submit=-1, run=20, status=3), swf_line(2, submit=50)]
    report = run(write_swf(tmp_path / "p.swf", lines, header=header), "job-id-unique",
                 "swf-partial-execution")
    assert_silent(report, "job-id-unique")
    assert_silent(report, "swf-partial-execution")


def test_job_id_order_and_gaps():
    table = aaic_table([{"job_id": 1}, {"job_id": 5}, {"job_id": 3}, {"job_id": 9}])
    report = run(table, "job-id-order", "job-id-gaps")
    assert [f.job_id for f in assert_fires(report, "job-id-order", 1)] == [3]
    gaps = assert_fires(report, "job-id-gaps", 1, severity="info")[0]
    assert gaps.value == 5 and "2, 4, 6..8" in gaps.message


def test_missing_values_counts_per_field(tmp_path):
    lines = swf_jobs(4) + [swf_line(5, submit=400, wait=-1)]
    found = assert_fires(run(write_swf(tmp_path / "m.swf", lines), "missing-values"),
                         "missing-values")
    wait = [f for f in found if f.field == "wait_s"]
    assert wait and wait[0].value == 1 and "field 3 (wait time)" in wait[0].message


def test_zero_runtime_is_counted_once():
    table = aaic_table([{"walltime_s": 0}, {"walltime_s": 0, "termcode": 1}, {"walltime_s": 0}, {}])
    found = assert_fires(run(table, "zero-runtime"), "zero-runtime", 1, severity="info")
    assert found[0].value == 2  # the failed job is not counted


def test_sentinel_timestamp():
    table = aaic_table([{}, {"start_time": 0, "wait_s": None, "finish_time": 600,
                             "walltime_s": 600}])
    found = assert_fires(run(table, "sentinel-timestamp"), "sentinel-timestamp")
    assert {f.field for f in found} == {"start_time", "finish_time"}


@given(aaic_jobs(min_size=1, max_size=25))
def test_consistent_tables_pass_the_arithmetic_rules(table):
    report = run(table, *ARITHMETIC)
    assert not report.fired(), [f.render() for f in report.findings]


@given(aaic_jobs(min_size=1, max_size=25), st.data())
def test_a_planted_wait_error_is_found_exactly_where_it_is(table, data):
    row = data.draw(st.integers(0, table.num_rows - 1))
    shift = data.draw(st.integers(1, 1000))
    wait = np.asarray(table.column("wait_s").to_numpy()).copy()
    wait[row] += shift
    planted = table.set_column(table.schema.get_field_index("wait_s"), "wait_s", pa.array(wait))
    found = assert_fires(run(jt.conform(planted), "wait-arithmetic"), "wait-arithmetic", 1)
    assert found[0].line == row + 1 and found[0].job_id == table.column("job_id")[row].as_py()


def test_cpus_is_a_non_negative_count():
    """cpus (processors beside GPUs) is checked by the job Table Schema like every count."""
    from swftools.validate import validate

    report = validate(aaic_table([{"cpus": -1}, {"cpus": 4}]))
    found = [f for f in report.findings if f.field == "cpus"]
    assert [(f.rule, f.job_id) for f in found] == [("schema-range", 1)]


# --- issue 30: the clock-hour tolerance at its boundaries ------------------------------------

# The rule's documented window: one hour, 3600 s +/- 2 s, both ends included. Written out here
# (not taken from rules_time) so that a changed constant or comparison fails.
_HOUR_HITS = [3598, 3599, 3600, 3601, 3602]
_HOUR_MISSES = [3596, 3597, 3603, 3604, 1, 1800, 3000, 5400, 7198, 7200, 7202, 10800]


def test_clock_hour_shift_back_steps_at_the_tolerance_boundaries():
    """Each back-step stands alone (the next pair starts far later): exactly the steps within
    3600 +/- 2 s fire, on the later job."""
    steps = _HOUR_HITS + _HOUR_MISSES
    jobs, expected = [], []
    for k, step in enumerate(steps):
        base = T0 + 100_000 * (k + 1)
        jobs += [{"submit_time": base}, {"submit_time": base - step}]
        if step in _HOUR_HITS:
            expected.append(len(jobs))  # job ids are 1-based row numbers
    found = run(aaic_table(jobs), "clock-hour-shift")
    assert sorted(f.job_id for f in found.findings if f.rule == "clock-hour-shift") == expected
    assert len(expected) == len(_HOUR_HITS)


def test_clock_hour_shift_negative_durations_at_the_tolerance_boundaries():
    """Waits and run times of minus one hour +/- 2 s fire on their own field; a second further
    out does not, nor do other negative durations."""
    values = _HOUR_HITS + _HOUR_MISSES
    jobs = [{"wait_s": -v} for v in values] + [{"walltime_s": -v} for v in values]
    report = run(aaic_table(jobs), "clock-hour-shift")
    found = {(f.job_id, f.field) for f in report.findings if f.rule == "clock-hour-shift"}
    expected = {(i + 1, "wait_s") for i, v in enumerate(values) if v in _HOUR_HITS}
    expected |= {(len(values) + i + 1, "walltime_s") for i, v in enumerate(values)
                 if v in _HOUR_HITS}
    assert found == expected


# -- the arithmetic and order rules: what they need, what they say ------------------------------

@pytest.mark.parametrize("rule_name, columns", [
    ("wait-arithmetic", ("wait_s", "submit_time", "start_time")),
    ("walltime-arithmetic", ("walltime_s", "start_time", "finish_time")),
    ("start-before-submit", ("submit_time", "start_time")),
    ("finish-before-start", ("start_time", "finish_time"))])
def test_a_time_rule_without_one_of_its_columns_is_not_applicable(rule_name, columns):
    for column in columns:
        table = aaic_table([{}, {}])
        table = table.set_column(table.column_names.index(column), column,
                                 pa.nulls(2, pa.int64()))
        report = run(table, rule_name)
        assert report.skipped.get(rule_name) == f"no known values in {column}", column


def test_a_row_with_one_time_unknown_is_not_checked():
    """Row 1: start unknown, row 2: wait unknown; neither breaks an arithmetic or order rule."""
    table = aaic_table([{"start_time": None, "finish_time": None},
                        {"wait_s": None, "start_time": T0 + 60 + 500}, {}], derive=False)
    report = run(table, "wait-arithmetic", "start-before-submit", "finish-before-start")
    for name in ("wait-arithmetic", "start-before-submit", "finish-before-start"):
        assert_silent(report, name)


def test_what_the_order_and_arithmetic_findings_say():
    table = aaic_table([{}, {"start_time": T0 + 60 - 30, "finish_time": T0 + 60 + 600}])
    found = assert_fires(run(table, "start-before-submit"), "start-before-submit", 1)
    assert (found[0].field, found[0].message, found[0].value, found[0].expected) == (
        "start_time", "starts 30 s before its submission", T0 + 30, f">= {T0 + 60} (submit_time)")
    table = aaic_table([{}, {"start_time": T0 + 60 + 99}])
    found = assert_fires(run(table, "wait-arithmetic"), "wait-arithmetic", 1)
    assert found[0].message == "wait_s is 10 s but start_time - submit_time = 99 s"


def test_submit_order_names_the_previous_known_job():
    table = aaic_table([{}, {"submit_time": None}, {"submit_time": T0 + 500},
                        {"submit_time": T0 + 400}])
    found = assert_fires(run(table, "submit-order"), "submit-order", 1)
    assert found[0].job_id == 4
    assert found[0].message.endswith("submitted 100 s before the previous job (row 3)")


@pytest.mark.parametrize("status, partial", [(0, False), (1, False), (2, True), (3, True),
                                             (4, True), (5, False)])
def test_only_swf_partial_execution_lines_may_repeat_a_job_id(status, partial):
    rows = [{"job_id": 1, "swf_status": status}, {"job_id": 1, "swf_status": status,
                                                 "submit_time": T0 + 1}]
    swf = aaic_table(rows, {"source_format": "swf"})
    report = run(swf, "job-id-unique")
    assert bool([f for f in report.findings if f.rule == "job-id-unique"]) == (not partial)
    # outside SWF the status column gives no licence to repeat an id
    assert_fires(run(aaic_table(rows), "job-id-unique"), "job-id-unique", 1)
