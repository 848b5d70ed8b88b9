"""Schema layer on the typed table: required, enum, range, string and unique constraints."""

from __future__ import annotations

from hypothesis import given

from swftools import table as jt

from .strategies import aaic_jobs
from .validate_support import aaic_table, assert_fires, assert_silent, run

SCHEMA_RULES = ["schema-required", "schema-enum", "schema-range", "schema-string", "schema-unique"]


def test_enum_constraints():
    table = aaic_table([{"termcode": 0}, {"termcode": 7}, {"swf_status": 9}])
    found = assert_fires(run(table, "schema-enum"), "schema-enum", 2)
    assert [(f.job_id, f.field, f.value) for f in found] == [(2, "termcode", 7), (3, "swf_status", 9)]
    assert found[0].expected == "one of 0, 1, 2, 3, 4"


def test_minimum_constraints():
    table = aaic_table([{"walltime_s": -3, "finish_time": None}, {"nodes": -1, "gpus": 0}])
    found = assert_fires(run(table, "schema-range"), "schema-range", 2)
    assert {(f.job_id, f.field) for f in found} == {(1, "walltime_s"), (2, "nodes")}
    assert found[0].expected == ">= 0"


def test_constraints_declared_by_another_schema(tmp_path):
    """A package's own Table Schema can add maximum, pattern, length and unique constraints."""
    from swftools.validate.context import Context, Options
    from swftools.validate.registry import RULES
    from swftools.validate.report import Report
    import numpy as np

    schema = jt.table_schema()
    for f in schema["fields"]:
        if f["name"] == "gpus":
            f["constraints"]["maximum"] = 16
        if f["name"] == "user":
            f["constraints"] = {"pattern": "[a-z]+", "maxLength": 5, "unique": True}
    table = aaic_table([{"user": "alice", "nodes": 3, "gpus_per_node": 8}, {"user": "Bob7"},
                        {"user": "alice"}, {"user": "carolyn"}])
    report = Report("t")
    ctx = Context(table, report, path="t", lines=np.arange(4) + 1, source_format="table",
                  site=None, options=Options(), table_schema=schema)
    for rule_id in ("schema-range", "schema-string", "schema-unique"):
        ctx.rule_id, ctx.rule_severity = rule_id, "error"
        RULES[rule_id].check(ctx)
    counts = report.rule_counts()
    assert counts == {"schema-range": 1, "schema-string": 2, "schema-unique": 1}
    assert [f.job_id for f in report.findings if f.rule == "schema-unique"] == [3]


def test_required_fields():
    from swftools.validate.context import Context, Options
    from swftools.validate.registry import RULES
    from swftools.validate.report import Report
    import numpy as np

    schema = jt.table_schema()
    for f in schema["fields"]:
        if f["name"] == "queue":
            f["constraints"] = {"required": True}
    table = aaic_table([{}, {"queue": None}])
    report = Report("t")
    ctx = Context(table, report, path="t", lines=np.arange(2) + 1, source_format="table",
                  site=None, options=Options(), table_schema=schema)
    ctx.rule_id, ctx.rule_severity = "schema-required", "error"
    RULES["schema-required"].check(ctx)
    assert [(f.job_id, f.field) for f in report.findings] == [(2, "queue")]


@given(aaic_jobs(min_size=1, max_size=25))
def test_strategy_tables_satisfy_the_job_schema(table):
    report = run(table, *SCHEMA_RULES)
    assert not report.fired(), [f.render() for f in report.findings]
    assert_silent(report, "schema-enum")
