"""The 10 real SWF traces: each validates without a crash, and exactly the known rules fire."""

from __future__ import annotations

import pytest

from swftools.validate import validate

from .conftest import trace_path

# rule -> count on each trace (full counts; findings themselves are not kept: max_findings=50)
EXPECTED = {
    "CEA-Curie-2011-2.1-cln.swf.gz": (312826, {
        "flurry": 9, "job-id-gaps": 1, "missing-values": 10, "rule-skipped": 1,
        "swf-allocated-below-requested": 1, "swf-header-recommended": 2, "swf-late-start": 1,
        "walltime-overrun": 89, "zero-runtime": 1}),
    "HPC2N-2002-2.1-cln.swf.gz": (202876, {
        "capacity-gpus": 21, "flurry": 6, "job-id-gaps": 1, "missing-values": 9,
        "rule-skipped": 1, "swf-cpu-time": 14253, "walltime-overrun": 582}),
    "KTH-SP2-1996-2.1-cln.swf.gz": (27992, {
        "capacity-gpus": 20, "job-id-gaps": 1, "missing-values": 8, "rule-skipped": 1,
        "swf-header-counts": 2, "swf-late-start": 1}),
    "LLNL-Thunder-2007-1.1-cln.swf.gz": (121039, {
        "flurry": 3, "job-id-gaps": 1, "missing-values": 14, "rule-skipped": 1,
        "submit-unknown": 1190, "zero-runtime": 1}),
    "METACENTRUM-2009-2.swf.gz": (103656, {
        "flurry": 16, "missing-values": 9, "rule-skipped": 2, "swf-header-missing": 1,
        "zero-runtime": 1}),
    "NASA-iPSC-1993-3-excerpt228.swf.gz": (228, {
        "missing-values": 11, "rule-skipped": 1, "swf-header-counts": 2}),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (18239, {
        "job-id-gaps": 1, "missing-values": 12, "rule-skipped": 1, "zero-runtime": 1}),
    "RICC-2010-2.swf.gz": (447794, {
        "flurry": 21, "missing-values": 8, "rule-skipped": 2, "swf-allocated-below-requested": 1,
        "swf-header-missing": 1, "walltime-overrun": 1839, "zero-runtime": 1}),
    "SDSC-BLUE-2000-4.2-cln.swf.gz": (243306, {
        "capacity-gpus": 21, "job-id-gaps": 1, "missing-values": 11, "rule-skipped": 1,
        "swf-allocated-below-requested": 1, "swf-cpu-time": 13, "swf-late-start": 1,
        "walltime-overrun": 2512, "zero-runtime": 1}),
    "lublin_256.swf.gz": (10000, {
        "missing-values": 12, "rule-skipped": 2, "swf-header-recommended": 9, "swf-notes": 1}),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_exactly_the_known_rules_fire(name):
    report = validate(trace_path(name), max_findings=50)
    rows, counts = EXPECTED[name]
    assert report.rows == rows
    assert report.rule_counts() == counts
    assert report.valid  # the archive's defects are warnings: no rule finds an error


def _findings(name, rule):
    report = validate(trace_path(name), rules=[rule])
    return [f for f in report.findings if f.rule == rule]


@pytest.mark.slow
def test_kth_header_counts_disagree_with_the_data():
    found = _findings("KTH-SP2-1996-2.1-cln.swf.gz", "swf-header-counts")
    assert [(f.field, f.value, f.expected, f.line) for f in found] == [
        ("MaxJobs", 28490, "27992", 8), ("MaxRecords", 28476, "27992", 9)]


@pytest.mark.slow
def test_nasa_excerpt_maxjobs_vs_228_lines():
    found = _findings("NASA-iPSC-1993-3-excerpt228.swf.gz", "swf-header-counts")
    assert [(f.field, f.value, f.expected) for f in found] == [
        ("MaxJobs", 42264, "228"), ("MaxRecords", 42264, "228")]


@pytest.mark.slow
def test_cleaned_logs_counts_match_after_their_documented_removals():
    for name in ("CEA-Curie-2011-2.1-cln.swf.gz", "NASA-iPSC-1993-3.1-cln.swf.gz"):
        assert _findings(name, "swf-header-counts") == []


@pytest.mark.slow
def test_llnl_lines_with_submit_minus_one():
    found = _findings("LLNL-Thunder-2007-1.1-cln.swf.gz", "submit-unknown")
    assert len(found) == 1190 and (found[0].line, found[0].job_id) == (325, 299)
    assert _findings("LLNL-Thunder-2007-1.1-cln.swf.gz", "submit-order") == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ["METACENTRUM-2009-2.swf.gz", "RICC-2010-2.swf.gz"])
def test_traces_without_a_header(name):
    found = _findings(name, "swf-header-missing")
    assert len(found) == 1 and found[0].line == 1


@pytest.mark.slow
def test_cea_curie_starts_late():
    found = _findings("CEA-Curie-2011-2.1-cln.swf.gz", "swf-late-start")
    assert [(f.line, f.job_id, f.value) for f in found] == [(75, 272393, 31656837)]
