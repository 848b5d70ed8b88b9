"""The validate engine: rule selection, the registry, unreadable input, determinism, Python API."""

from __future__ import annotations

import gzip
import importlib
import re

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import swftools
from swftools.validate import SEVERITIES, describe_rules, validate
from swftools.errors import UsageError
from swftools.resources import load_json

from .strategies import aaic_jobs
from .strategies import swf_jobs as swf_tables
from .validate_support import aaic_table, assert_fires, run, swf_jobs, write_swf

# Every rule and the test that plants its defect (test_every_rule_has_a_planted_defect_test).
PLANTED = {
    "unreadable-input": "test_validate::test_unreadable_inputs_are_one_finding",
    "rule-skipped": "test_validate_queue::test_queue_rules_need_a_site_and_say_so",
    "package-descriptor": "test_validate_package::test_absolute_and_missing_paths",
    "package-integrity": "test_validate_package::test_integrity_of_parquet_too",
    "schema-structure": "test_validate_package::test_header_must_match_the_table_schema",
    "schema-type": "test_validate_package::test_every_bad_cell_is_reported_with_its_line",
    "schema-required": "test_validate_schema::test_required_fields",
    "schema-enum": "test_validate_schema::test_enum_constraints",
    "schema-range": "test_validate_schema::test_minimum_constraints",
    "schema-string": "test_validate_schema::test_constraints_declared_by_another_schema",
    "schema-unique": "test_validate_schema::test_constraints_declared_by_another_schema",
    "wait-arithmetic": "test_validate_time::test_wait_arithmetic",
    "walltime-arithmetic": "test_validate_time::test_walltime_arithmetic",
    "recorded-walltime":
        "test_validate_time::test_walltime_arithmetic_accepts_a_recorded_figure_that_differs",
    "start-before-submit": "test_validate_time::test_start_before_submit_and_finish_before_start",
    "finish-before-start": "test_validate_time::test_start_before_submit_and_finish_before_start",
    "clock-hour-shift": "test_validate_time::test_clock_hour_shift",
    "submit-unknown": "test_validate_time::test_submit_order_ignores_unknown_submit_times",
    "missing-values": "test_validate_time::test_missing_values_counts_per_field",
    "zero-runtime": "test_validate_time::test_zero_runtime_is_counted_once",
    "sentinel-timestamp": "test_validate_time::test_sentinel_timestamp",
    "submit-order": "test_validate_time::test_submit_order_is_an_error_for_swf_and_a_warning_otherwise",
    "job-id-unique": "test_validate_time::test_job_id_unique_reports_the_repeat_with_the_first_line",
    "job-id-order": "test_validate_time::test_job_id_order_and_gaps",
    "job-id-gaps": "test_validate_time::test_job_id_order_and_gaps",
    "queue-unknown": "test_validate_queue::test_unknown_queue",
    "queue-nodes": "test_validate_queue::test_short_middle_long_take_one_node",
    "queue-gpus-per-node": "test_validate_queue::test_short_takes_one_gpu",
    "queue-walltime": "test_validate_queue::test_requested_walltime_within_the_queue_maximum",
    "multi-node-whole-nodes": "test_validate_queue::test_multi_node_jobs_hold_whole_nodes",
    "gpus-total": "test_validate_queue::test_gpus_total_is_nodes_times_gpus_per_node",
    "termcode-walltime": "test_validate_queue::test_termcode_walltime_exceeded_runs_its_request",
    "walltime-overrun": "test_validate_queue::test_walltime_overrun_spares_walltime_exceeded_jobs",
    "never-started": "test_validate_queue::test_never_started_jobs_were_cancelled_and_did_not_run",
    "termcode-swf-status": "test_validate_queue::test_termcode_swf_status_follows_the_site_mapping",
    "capacity-gpus": "test_validate_capacity::test_capacity_gpus_reports_the_interval_and_the_jobs_running",
    "capacity-nodes": "test_validate_capacity::test_packing_lower_bound_proves_a_violation",
    "job-exceeds-machine": "test_validate_capacity::test_job_exceeds_machine",
    "swf-header-missing": "test_validate_swf::test_header_missing",
    "swf-header-recommended": "test_validate_swf::test_recommended_keys",
    "swf-header-unknown-key": "test_validate_swf::test_unknown_key_but_not_an_indented_continuation",
    "swf-header-value": "test_validate_swf::test_header_values",
    "swf-header-counts": "test_validate_swf::test_header_counts_with_and_without_cleaning_notes",
    "swf-late-start": "test_validate_swf::test_late_start",
    "swf-start-time": "test_validate_swf::test_start_time_must_name_unix_start_time",
    "swf-end-time": "test_validate_swf::test_jobs_end_before_end_time",
    "swf-queue-ids": "test_validate_swf::test_queue_and_partition_ids",
    "swf-partition-ids": "test_validate_swf::test_queue_and_partition_ids",
    "swf-extra-columns": "test_validate_swf::test_extra_columns",
    "swf-notes": "test_validate_swf::test_notes",
    "swf-negative-value": "test_validate_swf::test_negative_values_on_an_swf_table",
    "swf-status": "test_validate_swf::test_status_codes",
    "swf-cpu-time": "test_validate_swf::test_cpu_time_within_run_time",
    "swf-memory-overuse": "test_validate_swf::test_memory_overuse_only_when_forbidden",
    "swf-allocated-below-requested": "test_validate_swf::test_allocated_below_requested_is_counted_once",
    "swf-partial-execution": "test_validate_swf::test_partial_execution_lines",
    "flurry": "test_validate_anomaly::test_flurry_is_one_finding_per_burst",
    "duplicate-record": "test_validate_anomaly::test_duplicate_record",
}


def test_every_rule_has_a_planted_defect_test():
    ids = [row[0] for row in describe_rules()]
    assert sorted(PLANTED) == sorted(ids)
    for rule_id, where in PLANTED.items():
        module, name = where.split("::")
        test = getattr(importlib.import_module(f"tests.{module}"), name)
        assert callable(test) and f'"{rule_id}"' in open(test.__code__.co_filename).read()


def test_rule_ids_are_kebab_case_with_descriptions():
    for rule_id, severity, group, description in describe_rules():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule_id)
        assert severity in SEVERITIES and group and description.endswith(".")


def test_rule_selection():
    table = aaic_table([{"walltime_s": 0}])
    report = run(table, "zero-runtime", "missing-values")
    assert report.rules_run == ["missing-values", "zero-runtime"]
    report = validate(table, skip_rules="zero-runtime,flurry")
    assert "zero-runtime" not in report.rules_run and "wait-arithmetic" in report.rules_run
    with pytest.raises(UsageError, match="no-such-rule"):
        validate(table, rules=["no-such-rule"])
    with pytest.raises(UsageError):
        validate(table, skip_rules=["nope"])
    with pytest.raises(UsageError):
        validate(table, max_findings=-1)


def test_unreadable_inputs_are_one_finding(tmp_path):
    binary = tmp_path / "b.swf"
    binary.write_bytes(b"\x00\x01\x02garbage\xff")
    truncated = tmp_path / "t.swf.gz"
    truncated.write_bytes(gzip.compress(b"1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n" * 50)[:40])
    empty = tmp_path / "e.swf"
    empty.write_text("")
    short = write_swf(tmp_path / "s.swf", ["1 0 0 10 1"])
    nqsii = tmp_path / "n.csv"
    nqsii.write_text("job_id, user\n1, alice\n")
    for path in (binary, truncated, empty, short, nqsii, tmp_path / "missing.swf"):
        report = validate(path)
        assert report.rule_counts() == {"unreadable-input": 1}, (path, report.flatten())
        assert not report.valid and report.rows == 0
    found = validate(short).findings[0]
    assert found.line == 20 and "expected 18 fields" in found.message


def test_site_option_and_table_metadata():
    table = aaic_table([{"queue": "Nowhere"}], metadata={"site": None})
    report = run(table, "queue-unknown")
    assert "queue-unknown" in report.skipped
    assert_fires(run(table, "queue-unknown", site="aaic"), "queue-unknown", 1)


def test_reports_are_deterministic(tmp_path):
    path = write_swf(tmp_path / "d.swf", swf_jobs(20), n=30)
    assert validate(path).to_json() == validate(path).to_json()


def test_max_findings_caps_the_report(tmp_path):
    table = aaic_table([{"queue": "X"}] * 10)
    report = run(table, "queue-unknown", site="aaic", max_findings=3)
    assert len(report.findings) == 3 and report.partial and report.errors == 10


def test_the_package_is_callable(tmp_path):
    path = write_swf(tmp_path / "c.swf", swf_jobs(2))
    assert swftools.validate(path).to_json() == validate(path).to_json()
    # every argument reaches validate()
    assert swftools.validate(path, rules=["job-id-unique"]).rules_run == ["job-id-unique"]
    assert swftools.validate(path, rules=["job-id-unique"]).to_json() == \
        validate(path, rules=["job-id-unique"]).to_json()


def test_options_are_keywords():
    table = aaic_table([{"walltime_s": 3700}])
    assert_fires(validate(table, rules=["walltime-overrun"], walltime_grace_s=10),
                 "walltime-overrun", 1)
    with pytest.raises(TypeError):
        validate(table, not_an_option=1)


@given(swf_tables(min_size=0, max_size=25) | aaic_jobs(min_size=0, max_size=25),
       st.none() | st.sampled_from(["aaic"]), st.none() | st.integers(0, 5))
def test_any_table_validates_without_crashing(table, site, cap):
    report = validate(table, site=site, max_findings=cap)
    assert report.total() >= len(report.findings)
    assert cap is None or len(report.findings) <= cap
    assert report.valid == (report.errors == 0)
    document = {"swftools_version": "0", "valid": report.valid, "reports": [report.to_json()]}
    jsonschema.Draft202012Validator(load_json("validation-report.schema.json")).validate(document)
