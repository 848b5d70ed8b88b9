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
    import numpy as np

    from swftools.validate.context import Context, Options
    from swftools.validate.registry import RULES
    from swftools.validate.report import Report

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
    import numpy as np

    from swftools.validate.context import Context, Options
    from swftools.validate.registry import RULES
    from swftools.validate.report import Report

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


# --- every constraint kind, on both sides of its bound -------------------------------------

def _check(table, schema=None, *rules: str, source_format: str = "table"):
    """Run schema ``rules`` on ``table`` against ``schema`` as validate does (skips recorded)."""
    import numpy as np

    from swftools.validate.context import Context, Options
    from swftools.validate.registry import RULES, NotApplicable
    from swftools.validate.report import Report

    report = Report("t")
    ctx = Context(table, report, path="t", lines=np.arange(table.num_rows) + 1,
                  source_format=source_format, site=None, options=Options(), table_schema=schema)
    for rule_id in rules:
        ctx.rule_id, ctx.rule_severity = rule_id, "error"
        try:
            RULES[rule_id].check(ctx)
        except NotApplicable as why:
            report.skipped[rule_id] = why.reason
    return report


def _schema(constraints: dict, **extra) -> dict:
    """The job schema with the constraints of the named fields replaced (others removed)."""
    schema = jt.table_schema()
    for f in schema["fields"]:
        f["constraints"] = constraints.get(f["name"], {})
    schema.pop("primaryKey", None)
    schema.update(extra)
    return schema


def _found(report, rule: str) -> list[tuple]:
    return [(f.job_id, f.field, f.value, f.message, f.expected)
            for f in report.findings if f.rule == rule]


def test_each_bound_kind_flags_only_beyond_its_bound():
    schema = _schema({"requested_walltime_s": {"minimum": 60}, "gpus": {"maximum": 8},
                      "nodes": {"exclusiveMinimum": 0}, "gpus_per_node": {"exclusiveMaximum": 4}})
    table = aaic_table([
        {"requested_walltime_s": 60, "gpus": 8, "nodes": 1, "gpus_per_node": 3},  # at the bounds
        {"requested_walltime_s": 59, "gpus": 9, "nodes": 0, "gpus_per_node": 4},
        {"requested_walltime_s": None, "gpus": None, "nodes": None, "gpus_per_node": None}])
    report = _check(table, schema, "schema-range")
    assert _found(report, "schema-range") == [
        (2, "requested_walltime_s", 59, "requested_walltime_s 59 is not >= 60", ">= 60"),
        (2, "gpus", 9, "gpus 9 is not <= 8", "<= 8"),
        (2, "nodes", 0, "nodes 0 is not > 0", "> 0"),
        (2, "gpus_per_node", 4, "gpus_per_node 4 is not < 4", "< 4")]
    assert "schema-range" not in report.skipped


def test_a_rule_without_its_constraint_is_not_applicable():
    table = aaic_table([{}])
    report = _check(table, _schema({}), *SCHEMA_RULES)
    assert report.skipped == {"schema-enum": "no field with an enum constraint",
                              "schema-range": "no field with a bound",
                              "schema-string": "no string constraint",
                              "schema-unique": "no unique constraint"}
    no_fields = {"primaryKey": []}  # a package's schema may lack its fields: nothing to check
    assert _check(table, no_fields, *SCHEMA_RULES).skipped == report.skipped
    assert _check(table.slice(0, 0), None, "schema-required").skipped == {
        "schema-required": "no jobs"}
    # the job schema's own constraints make the rules applicable, even when nothing is wrong
    report = _check(table, None, *SCHEMA_RULES)
    assert not report.findings and set(report.skipped) == {"schema-string", "schema-unique"}


def test_string_constraints_hold_for_the_whole_text():
    schema = _schema({"user": {"pattern": "[a-z]+|x[0-9]"}, "group": {"minLength": 3},
                      "queue": {"maxLength": 5}, "job_id": {"pattern": "[a-z]+"}})
    table = aaic_table([
        {"user": "alice", "group": "abc", "queue": "Short"},  # at the lengths
        {"user": "alice7", "group": "ab", "queue": "Middle"},
        {"user": "7alice", "group": None, "queue": None},
        {"user": "x1", "group": "abcdefgh", "queue": "L"},
        {"user": None, "queue": None}])
    report = _check(table, schema, "schema-string")
    assert _found(report, "schema-string") == [
        (2, "user", "alice7", "user 'alice7' breaks its constraint", "matching [a-z]+|x[0-9]"),
        (3, "user", "7alice", "user '7alice' breaks its constraint", "matching [a-z]+|x[0-9]"),
        (2, "group", "ab", "group 'ab' breaks its constraint", "at least 3 characters"),
        (2, "queue", "Middle", "queue 'Middle' breaks its constraint", "at most 5 characters")]


def test_enum_messages_and_an_empty_enum():
    schema = _schema({"queue": {"enum": ["Normal", "Long"]}, "termcode": {"enum": []}})
    table = aaic_table([{"queue": "Normal", "termcode": None}, {"queue": "Short", "termcode": 0},
                        {"queue": None}])
    report = _check(table, schema, "schema-enum")
    assert _found(report, "schema-enum") == [
        (2, "queue", "Short", "queue 'Short' is not an allowed value", "one of Normal, Long"),
        (2, "termcode", 0, "termcode 0 is not an allowed value", "one of "),
        (3, "termcode", 0, "termcode 0 is not an allowed value", "one of ")]


def test_swf_fields_are_left_to_the_swf_rules_except_required():
    """On SWF input swf_status and the other SWF columns are checked in SWF terms, but a field
    the schema requires is still required."""
    schema = _schema({"swf_status": {"enum": [0, 1]}, "termcode": {"enum": [0]},
                      "queue": {"required": True}, "wait_s": {"minimum": 0}})
    table = aaic_table([{"swf_status": 9, "termcode": 2, "queue": None, "wait_s": -5}])
    for fmt, expected in (("swf", {"schema-enum": 1, "schema-required": 1}),
                          ("table", {"schema-enum": 2, "schema-required": 1, "schema-range": 1})):
        report = _check(table, schema, "schema-enum", "schema-required", "schema-range",
                        source_format=fmt)
        assert report.rule_counts() == expected, fmt
    assert [f.field for f in report.findings if f.rule == "schema-enum"] == ["termcode",
                                                                            "swf_status"]


def test_required_fields_in_column_order_with_the_primary_key():
    schema = _schema({"queue": {"required": True}, "user": {"required": True},
                      "group": {"required": False}},
                     primaryKey=["job_id", "cpus"])
    table = aaic_table([{"user": None, "queue": None, "group": None, "cpus": 4},
                        {"cpus": None}])
    report = _check(table, schema, "schema-required")
    assert _found(report, "schema-required") == [
        (1, "user", None, "user is required but missing", "a value"),
        (1, "queue", None, "queue is required but missing", "a value"),
        (2, "cpus", None, "cpus is required but missing", "a value")]
    # a field or key column the table does not have is not checked
    partial = table.select(["job_id", "user", "group"])
    report = _check(partial, schema, "schema-required")
    assert [(f.job_id, f.field) for f in report.findings] == [(1, "user")]


def test_unique_constraints_flag_every_repeat_after_the_first():
    schema = _schema({"user": {"unique": True}, "queue": {"unique": True}},
                     uniqueKeys=[["group", "requested_walltime_s"], ["group", "color"]])
    table = aaic_table([
        {"user": "a", "queue": "q1", "group": "g", "requested_walltime_s": 60},
        {"user": "b", "queue": "q2", "group": "g", "requested_walltime_s": 120},
        {"user": "c", "queue": "q1", "group": "g", "requested_walltime_s": 60},
        {"user": "d", "queue": "q2", "group": None, "requested_walltime_s": 60},
        {"user": "e", "queue": "q1", "group": None, "requested_walltime_s": 60},
        {"user": None, "queue": None, "group": "g", "requested_walltime_s": 120}])
    report = _check(table, schema, "schema-unique")
    assert _found(report, "schema-unique") == [
        (3, "queue", None, "queue repeats an earlier value", "unique values"),
        (4, "queue", None, "queue repeats an earlier value", "unique values"),
        (5, "queue", None, "queue repeats an earlier value", "unique values"),
        (3, "group+requested_walltime_s", None,
         "group+requested_walltime_s repeats an earlier value", "unique values"),
        (6, "group+requested_walltime_s", None,
         "group+requested_walltime_s repeats an earlier value", "unique values")]
    # the same on a table without some of the constrained columns
    partial = table.select(["job_id", "queue", "group", "requested_walltime_s"])
    assert _found(_check(partial, schema, "schema-unique"), "schema-unique") == \
        _found(report, "schema-unique")
