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


def test_unknown_severity_message_names_it_and_the_choices():
    with pytest.raises(ValueError, match=r"severity 'fatal' is not one of \('error', 'warning', "
                                         r"'info'\)"):
        finding(severity="fatal")


def test_render_keeps_zero_job_ids_and_values_and_leaves_out_empty_parts():
    f = Finding("t.csv", 3, 0, "", "missing-values", "warning", "no user", 0, "")
    assert f.render() == "t.csv:3: job 0: warning [missing-values] no user (value 0)"
    f = Finding("t.csv", None, None, None, "flurry", "info", "burst of 30", 30, "a user id")
    assert f.render() == "t.csv: info [flurry] burst of 30 (expected a user id)"


def test_counts_add_up_per_rule_and_severity_and_zero_counts_nothing():
    report = Report("t")
    report.extend("flurry", "info", 0, [finding(rule="flurry", severity="info")])
    assert report.counts == {} and report.findings == [] and report.fired() == set()
    report.extend("submit-order", "error", 2, [finding(rule="submit-order")] * 2)
    report.add(finding(rule="submit-order"))
    report.add(finding(rule="submit-order", severity="warning"))
    report.add(finding(rule="flurry", severity="info"))
    assert report.counts == {("submit-order", "error"): 3, ("submit-order", "warning"): 1,
                             ("flurry", "info"): 1}
    assert report.rule_counts() == {"flurry": 1, "submit-order": 4}
    assert list(report.rule_counts()) == ["flurry", "submit-order"]
    assert (report.total(), report.errors, report.warnings, report.total("info")) == (5, 3, 1, 1)
    assert report.fired() == {"flurry", "submit-order"} and report.fired("info") == {"flurry"}
    assert report.fired("warning") == {"submit-order"}
    assert list(report) == report.findings and len(report.findings) == 5


def test_summary_orders_by_severity_then_rule_id():
    report = Report("t")
    for rule_id, severity in (("zero-runtime", "info"), ("b-rule", "error"), ("flurry", "info"),
                              ("a-rule", "warning"), ("a-rule", "error")):
        report.add(finding(rule=rule_id, severity=severity))
    assert [(r["rule"], r["severity"]) for r in report.summary()] == [
        ("a-rule", "error"), ("b-rule", "error"), ("a-rule", "warning"), ("flurry", "info"),
        ("zero-runtime", "info")]
    assert report.summary()[0] == {"rule": "a-rule", "severity": "error", "count": 1}


def test_a_cap_of_zero_keeps_no_finding_but_every_count():
    report = Report("t", max_findings=0)
    assert report.room() == 0
    report.add(finding())
    assert report.findings == [] and report.total() == 1 and report.partial
    full = Report("t", max_findings=1)
    full.add(finding())
    full.add(finding())
    assert full.room() == 0 and len(full.findings) == 1
    assert Report("t").room() is None and Report("t", max_findings=5).room() == 5


def test_strict_reports_fail_on_warnings_and_say_so():
    report = Report("t.swf", strict=True)
    report.add(finding(severity="info"))
    assert report.valid
    assert report.status_line() == "t.swf: valid: 0 errors, 0 warnings, 1 info"
    report.add(finding(severity="warning"))
    assert not report.valid
    assert report.status_line() == ("t.swf: INVALID: 0 errors, 1 warning, 1 info "
                                    "(--strict: warnings fail)")
    report.add(finding())
    assert report.status_line() == "t.swf: INVALID: 1 error, 1 warning, 1 info"
    lenient = Report("t.swf")
    lenient.add(finding(severity="warning"))
    assert lenient.valid and lenient.status_line() == "t.swf: valid: 0 errors, 1 warning, 0 info"


def test_text_rendering_is_the_findings_then_the_status_line():
    report = Report("trace.swf", max_findings=1)
    report.add(finding())
    report.add(finding(severity="warning"))
    assert list(report.render_text()) == [
        finding().render(),
        "trace.swf: INVALID: 1 error, 1 warning, 0 info (partial report: 1 of 2 findings shown; "
        "raise --max-findings, 0 for all)"]


def test_json_document_of_a_report():
    report = Report("trace.swf", "swf", 7, max_findings=1, strict=True,
                    rules_run=["wait-arithmetic", "flurry"],
                    skipped={"queue-nodes": "no site", "capacity": "no header"})
    report.add(finding(severity="warning"))
    report.add(finding(rule="flurry", severity="info"))
    assert report.to_json() == {
        "path": "trace.swf", "source_format": "swf", "rows": 7, "valid": False, "strict": True,
        "partial": True, "max_findings": 1, "totals": {"error": 0, "warning": 1, "info": 1},
        "counts": [{"rule": "wait-arithmetic", "severity": "warning", "count": 1},
                   {"rule": "flurry", "severity": "info", "count": 1}],
        "rules_run": ["wait-arithmetic", "flurry"],
        "skipped": [{"rule": "capacity", "reason": "no header"},
                    {"rule": "queue-nodes", "reason": "no site"}],
        "findings": [finding(severity="warning").to_dict()]}
