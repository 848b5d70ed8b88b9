"""Finding and Report: rendering, counts, the max-findings cap, flattening, JSON shape."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.resources import load_json
from swftools.validate import Finding, Report


def finding(rule="wait-arithmetic", severity="error", line=1042, job=1041, field="wait_s",
            message="wait_s is 5 s but start_time - submit_time = 7 s", value=5, expected="7"):
    return Finding("trace.swf", line, job, field, rule, severity, message, value, expected)


def test_render_locates_file_line_job_and_field():
    text = finding().render()
    assert text == ("trace.swf:1042: job 1041: wait_s: error [wait-arithmetic] "
                    "wait_s is 5 s but start_time - submit_time = 7 s")


def test_render_adds_value_and_expected_when_the_message_lacks_them():
    f = Finding("p.csv", None, None, "MaxJobs", "swf-header-counts", "warning", "count differs",
                42264, "228")
    assert f.render() == ("p.csv: MaxJobs: warning [swf-header-counts] count differs "
                          "(value 42264, expected 228)")


def test_unknown_severity_is_refused():
    with pytest.raises(ValueError):
        finding(severity="fatal")


def test_valid_means_no_error_warnings_allowed():
    report = Report("t")
    report.add(finding(severity="warning"))
    report.add(finding(rule="job-id-gaps", severity="info"))
    assert report.valid and report.warnings == 1 and report.total("info") == 1
    report.add(finding())
    assert not report.valid and report.errors == 1


def test_cap_keeps_counts_complete_and_says_partial():
    report = Report("t", max_findings=3)
    built = []

    def lazily():
        for i in range(10):
            built.append(i)
            yield finding(line=i + 1)

    report.extend("wait-arithmetic", "error", 10, lazily())
    assert len(report.findings) == 3 and report.total() == 10 and report.partial
    assert built == [0, 1, 2]  # findings beyond the cap are never built
    assert report.rule_counts() == {"wait-arithmetic": 10}
    assert "partial report: 3 of 10" in report.status_line()


def test_flatten_gives_one_dict_per_finding():
    report = Report("t")
    report.add(finding())
    assert report.flatten() == [{
        "path": "trace.swf", "line": 1042, "job_id": 1041, "field": "wait_s",
        "rule": "wait-arithmetic", "severity": "error",
        "message": "wait_s is 5 s but start_time - submit_time = 7 s", "value": 5, "expected": "7"}]


def test_summary_orders_errors_first():
    report = Report("t")
    report.add(finding(rule="zero-runtime", severity="info"))
    report.add(finding(rule="flurry", severity="warning"))
    report.add(finding())
    assert [r["severity"] for r in report.summary()] == ["error", "warning", "info"]


findings = st.builds(
    Finding, path=st.text(min_size=1, max_size=10), line=st.none() | st.integers(1, 10**6),
    job_id=st.none() | st.integers(0, 10**7), field=st.none() | st.sampled_from(["wait_s", "queue"]),
    rule=st.sampled_from(["wait-arithmetic", "queue-nodes", "flurry", "missing-values"]),
    severity=st.sampled_from(["error", "warning", "info"]), message=st.text(min_size=1, max_size=30),
    value=st.none() | st.integers() | st.text(max_size=5) | st.floats(allow_nan=False),
    expected=st.none() | st.text(max_size=10))


@given(st.lists(findings, max_size=30), st.none() | st.integers(0, 10))
def test_report_json_matches_the_schema_and_the_cap(items, cap):
    report = Report("trace.swf", "swf", 5, max_findings=cap)
    for item in items:
        report.add(item)
    assert report.total() == len(items)
    kept = len(items) if cap is None else min(cap, len(items))
    assert len(report.findings) == kept and report.partial == (kept < len(items))
    assert report.valid == all(f.severity != "error" for f in items)
    document = {"swftools_version": "0", "valid": report.valid, "reports": [report.to_json()]}
    jsonschema.Draft202012Validator(load_json("validation-report.schema.json")).validate(document)
