"""The validation context's shared column arrays: the same values whatever the table's chunks
and null columns (views of contiguous columns, lazily zeroed arrays for all-null ones)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings

from swftools.validate import validate
from swftools.validate.context import Context, Options
from swftools.validate.report import Report

from .strategies import sparse_job_tables


def _context(table: pa.Table) -> Context:
    return Context(table, Report(path="t"), path="t", lines=np.arange(table.num_rows) + 2,
                   source_format="table", site=None, options=Options())


@given(sparse_job_tables())
@settings(max_examples=60, deadline=None)
def test_values_are_the_column_with_unknowns_as_zero(table):
    ctx = _context(table)
    for field in table.schema:
        if not (pa.types.is_integer(field.type) or pa.types.is_floating(field.type)):
            continue
        cells = table.column(field.name).to_pylist()
        values, known = ctx.values(field.name)
        assert known.dtype == bool and known.tolist() == [c is not None for c in cells]
        assert values.dtype == field.type.to_pandas_dtype()
        assert values.tolist() == [0 if c is None else c for c in cells]
        assert ctx.column(field.name).to_pylist() == cells


@given(sparse_job_tables())
@settings(max_examples=25, deadline=None)
def test_findings_do_not_depend_on_the_chunks(table):
    one = validate(table.combine_chunks(), site="aaic")
    many = validate(table, site="aaic")
    assert one.to_json() == many.to_json()


# --- input facts, guards and reporting, one helper at a time --------------------------------

def _ctx(table: pa.Table, source_format: str = "table", site=None, **options) -> Context:
    return Context(table, Report(path="t"), path="t.csv", lines=np.arange(table.num_rows) * 2 + 5,
                   source_format=source_format, site=site, options=Options(**options))


def _jobs(n: int, meta: dict | None = None, **columns) -> pa.Table:
    from swftools import table as jt

    return jt.from_columns({"job_id": [100 + i for i in range(n)], **columns}, meta or {})


def test_input_facts_of_the_context():
    import dataclasses

    from swftools.site import load_site

    header = [["Version", "2.2"], ["MaxProcs", " 240 (2 partitions)"], ["maxprocs", "7"],
              ["Note", "processors are GPUs"]]
    plain, swf = _ctx(_jobs(1)), _ctx(_jobs(1, {"swf_header": header}))
    assert (plain.is_swf, swf.is_swf, _ctx(_jobs(1), "swf").is_swf) == (False, True, True)
    assert plain.header == [] and swf.header == header
    assert swf.header_value("MAXPROCS") == " 240 (2 partitions)" and plain.header_value("x") is None
    assert swf.header_values("maxProcs") == [" 240 (2 partitions)", "7"]
    assert swf.header_int("MaxProcs") == 240 and swf.header_int("Version") == 2
    assert swf.header_int("Nothing") is None
    aaic = load_site("aaic")
    processors = _jobs(1, {"source_format": "swf"})
    assert (_ctx(processors).unit, _ctx(processors).unit_word) == ("processor", "processors")
    assert (_ctx(processors, site=aaic).unit, _ctx(processors, site=aaic).unit_word) == (
        "gpu", "GPUs")
    stated = _jobs(1, {"source_format": "swf", "processor_unit": "processor"})
    assert _ctx(stated, site=aaic).unit == "processor"
    assert _ctx(_jobs(1, {"source_format": "swf", "swf_header": header})).unit == "gpu"
    assert _ctx(stated).metadata.processor_unit == "processor"
    assert _ctx(processors).grace_s == 300
    assert _ctx(processors, site=dataclasses.replace(aaic, walltime_grace_s=60)).grace_s == 60
    assert _ctx(processors, site=aaic, walltime_grace_s=0).grace_s == 0


def test_guards_say_why_a_rule_does_not_apply():
    import pytest

    from swftools.site import load_site
    from swftools.validate.registry import NotApplicable

    ctx = _ctx(_jobs(2, wait_s=[None, 3], walltime_s=[None, None]))
    assert (ctx.has("wait_s"), ctx.has("walltime_s"), _ctx(_jobs(0)).has("job_id")) == (
        True, False, False)
    ctx.require("job_id", "wait_s")
    with pytest.raises(NotApplicable, match="^no known values in walltime_s, cpus$"):
        ctx.require("wait_s", "walltime_s", "cpus")
    ctx.require_jobs(2)
    for n, minimum, reason in ((0, 1, "no jobs"), (1, 2, "fewer than two jobs"),
                               (2, 3, "fewer than 3 jobs")):
        with pytest.raises(NotApplicable, match=f"^{reason}$") as why:
            _ctx(_jobs(n)).require_jobs(minimum)
        assert not why.value.actionable
    _ctx(_jobs(1)).require_jobs()
    with pytest.raises(NotApplicable, match=r"^no site settings \(pass --site aaic or a site "
                                            r"file\)$") as why:
        ctx.require_site()
    assert why.value.actionable
    aaic = load_site("aaic")
    assert _ctx(_jobs(1), site=aaic).require_site() is aaic


def test_flag_and_note_locate_findings_by_line_and_job():
    ctx = _ctx(_jobs(4, wait_s=[1, 2, 3, 4]))
    ctx.rule_id, ctx.rule_severity = "r1", "warning"
    values = np.array([0.5, 2.0, 3.0, 4.0])
    assert ctx.flag(np.array([False, True, False, True]), "wait_s", "m", value=values,
                    expected=lambda i: i * 10) == 2
    assert ctx.flag(np.array([2]), None, lambda i: f"row {i}", value=np.float64(7.0),
                    expected=None, severity="info", rule="r2") == 1
    assert ctx.flag(np.zeros(4, bool), "x", "never") == 0
    assert ctx.flag(np.array([], np.int64), "x", "never") == 0
    ctx.note("whole input", value=2.5, expected=3)
    ctx.note("one row", row=3, field="f", line=99, path="other.csv", severity="error", rule="r3")
    assert [(f.path, f.line, f.job_id, f.field, f.rule, f.severity, f.message, f.value,
             f.expected) for f in ctx.report.findings] == [
        ("t.csv", 7, 101, "wait_s", "r1", "warning", "m", 2, "10"),
        ("t.csv", 11, 103, "wait_s", "r1", "warning", "m", 4, "30"),
        ("t.csv", 9, 102, None, "r2", "info", "row 2", 7, None),
        ("t.csv", None, None, None, "r1", "warning", "whole input", 2.5, "3"),
        ("other.csv", 11, 103, "f", "r3", "error", "one row", None, None)]
    assert all(type(f.value) is int for f in ctx.report.findings[:3])
    assert ctx.report.rule_counts() == {"r1": 3, "r2": 1, "r3": 1}


def test_job_lists_are_cut_after_the_listed_maximum():
    ctx = _ctx(_jobs(5), max_listed_jobs=3)
    assert ctx.list_jobs([4, 0]) == "104, 100"
    assert ctx.list_jobs(np.arange(3)) == "100, 101, 102"
    assert ctx.list_jobs(np.arange(5)) == "100, 101, 102, ... (+2 more)"


def test_distinct_values_sorted():
    from swftools.validate.context import distinct

    assert distinct(np.array([3, 1, 3, 2, 1])).tolist() == [1, 2, 3]
    assert distinct(np.array([], np.int64)).tolist() == []
    assert distinct(np.array([5])).tolist() == [5]


def test_a_rule_run_on_a_fresh_context_reports_errors_by_file_line():
    """Outside validate() a Context counts file lines, selects no other rule and reports
    under no rule id, as errors; has() needs one known value, even in a one-job table."""
    from swftools.validate.registry import RULES

    ctx = _ctx(_jobs(3, submit_time=[1, 2, 3]).set_column(
        0, "job_id", pa.array([7, 8, 7], pa.int64())))
    RULES["job-id-unique"].check(ctx)
    assert [(f.rule, f.severity, f.line, f.message) for f in ctx.report.findings] == [
        ("", "error", 9, "job id 7 already used on line 5")]
    assert _ctx(_jobs(1)).has("job_id") and not _ctx(_jobs(1)).has("wait_s")
