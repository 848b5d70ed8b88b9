"""The rule registry: registration checks, rule order, selection by id and its usage errors."""

from __future__ import annotations

import pytest

from swftools.errors import UsageError
from swftools.validate import registry
from swftools.validate.registry import (ENGINE_RULES, GROUP_ORDER, RULES, NotApplicable, Rule,
                                        describe_rules, rule, select_rules)


@pytest.fixture
def scratch_rules(monkeypatch):
    """An empty registry that the test may fill, the real one restored afterwards."""
    monkeypatch.setattr(registry, "RULES", {})
    return registry.RULES


def check(ctx) -> None:
    pass


def test_rule_registers_the_check_and_returns_it(scratch_rules):
    assert rule("my-rule", "warning", "time", "Mine.")(check) is check
    assert scratch_rules == {"my-rule": Rule("my-rule", "warning", "time", "Mine.", check)}
    assert scratch_rules["my-rule"].phase == "table"
    rule("pkg-rule", "error", "input", "Package.", phase="package")(check)
    assert scratch_rules["pkg-rule"].phase == "package"


@pytest.mark.parametrize("bad", ["My-rule", "my_rule", "my--rule", "-my-rule", "my-rule-", "",
                                 "my rule", "my-rule\n"])
def test_rule_ids_must_be_kebab_case(scratch_rules, bad):
    with pytest.raises(ValueError, match="is not kebab-case"):
        rule(bad, "error", "time", "Bad.")
    assert scratch_rules == {}


@pytest.mark.parametrize("good", ["a", "r2", "wait-arithmetic", "swf-header-0-counts"])
def test_kebab_case_ids_are_accepted(scratch_rules, good):
    rule(good, "error", "time", "Good.")(check)
    assert list(scratch_rules) == [good]


def test_an_id_registers_once_and_never_as_an_engine_finding(scratch_rules):
    rule("my-rule", "error", "time", "Mine.")(check)
    with pytest.raises(ValueError, match="'my-rule' registered twice"):
        rule("my-rule", "info", "order", "Again.")
    with pytest.raises(ValueError, match="'unreadable-input' registered twice"):
        rule("unreadable-input", "error", "input", "Shadow.")
    assert list(scratch_rules) == ["my-rule"]


def test_rules_are_ordered_by_group_then_registration(scratch_rules):
    for rule_id, group in (("z-anomaly", "anomaly"), ("b-new", "brand-new"), ("y-input", "input"),
                           ("a-time", "time"), ("x-anomaly", "anomaly"), ("c-new", "other-new")):
        rule(rule_id, "info", group, "Some rule.")(check)
    ids = [r.id for r in select_rules()]
    # groups of GROUP_ORDER first in that order; groups it does not name last, as registered
    assert ids == ["y-input", "a-time", "z-anomaly", "x-anomaly", "b-new", "c-new"]
    assert [row[0] for row in describe_rules()] == [*ENGINE_RULES, *ids]


def test_every_registered_rule_is_in_a_known_group_and_described():
    rows = describe_rules()
    assert [row[0] for row in rows[:len(ENGINE_RULES)]] == ["unreadable-input", "rule-skipped"]
    for rule_id, severity, group, description in rows:
        assert group in GROUP_ORDER, rule_id
        assert description.endswith(".") and not description.isupper(), rule_id
    assert rows[0][1:3] == ("error", "input") and rows[1][1:3] == ("info", "input")
    groups = [GROUP_ORDER.index(row[2]) for row in rows[len(ENGINE_RULES):]]
    assert groups == sorted(groups)


def test_selection_takes_lists_or_comma_separated_ids(scratch_rules):
    for rule_id in ("a-one", "b-two", "c-three"):
        rule(rule_id, "info", "time", "Some rule.")(check)
    assert [r.id for r in select_rules(" c-three , a-one,")] == ["a-one", "c-three"]
    assert [r.id for r in select_rules(["c-three", " b-two "])] == ["b-two", "c-three"]
    assert [r.id for r in select_rules(skip_rules="b-two")] == ["a-one", "c-three"]
    assert [r.id for r in select_rules("a-one,b-two", "b-two")] == ["a-one"]
    assert [r.id for r in select_rules([], None)] == []  # an empty selection runs no rule
    assert [r.id for r in select_rules(None, [])] == ["a-one", "b-two", "c-three"]
    # engine findings are known ids: selecting or skipping them is no error
    assert [r.id for r in select_rules("a-one,unreadable-input", "rule-skipped")] == ["a-one"]


def test_unknown_ids_are_one_usage_error_naming_each(scratch_rules):
    rule("a-one", "info", "time", "Some rule.")(check)
    with pytest.raises(UsageError) as err:
        select_rules("zz-bad,a-one", "aa-bad")
    assert str(err.value) == ("unknown rule ids: aa-bad, zz-bad "
                              "(swftools validate --list-rules lists them)")
    with pytest.raises(UsageError) as err:
        select_rules(None, "a-one,nope")
    assert str(err.value).startswith("unknown rule id: nope (")
    with pytest.raises(UsageError) as err:  # an id given twice is one unknown id
        select_rules("nope,a-one", "nope,nope")
    assert str(err.value).startswith("unknown rule id: nope (")
    with pytest.raises(UsageError) as err:
        select_rules(None, "nope,nope")
    assert str(err.value).startswith("unknown rule id: nope (")
    with pytest.raises(UsageError, match="unknown rule id: nope "):
        select_rules("nope")


def test_not_applicable_keeps_its_reason_and_is_not_actionable_by_default():
    plain = NotApplicable("no jobs")
    assert plain.reason == "no jobs" and str(plain) == "no jobs" and plain.actionable is False
    assert NotApplicable("no site", actionable=True).actionable is True


def test_the_real_registry_is_untouched_by_these_tests():
    assert "wait-arithmetic" in RULES and "my-rule" not in RULES
