"""The rule registry: every rule has a stable kebab-case id, a default severity and a description."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from swftools.errors import UsageError, plural

if TYPE_CHECKING:  # pragma: no cover
    from swftools.validate.context import Context

_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


@dataclass(frozen=True)
class Rule:
    """A check over whole columns of the job table (or over the input file / its metadata)."""

    id: str
    severity: str
    group: str
    description: str
    check: Callable[["Context"], None]
    phase: str = "table"  # "package": runs on a data package's files before the table is read


class NotApplicable(Exception):
    """Raised by a rule that cannot run on this input; ``actionable`` reasons become info findings."""

    def __init__(self, reason: str, actionable: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.actionable = actionable


RULES: dict[str, Rule] = {}
GROUP_ORDER = ("input", "schema", "time", "order", "queue", "termcode", "capacity", "swf-header",
               "swf-fields", "anomaly")


def ordered_rules() -> list[Rule]:
    """Registered rules by group (GROUP_ORDER), then in registration order."""
    index = {g: i for i, g in enumerate(GROUP_ORDER)}
    return sorted(RULES.values(), key=lambda r: index.get(r.group, len(index)))


def rule(id: str, severity: str, group: str, description: str, phase: str = "table") -> Callable:
    """Register the decorated ``check(ctx)`` function as a rule."""
    if not _ID.fullmatch(id):  # not match with "$": that takes a trailing newline
        raise ValueError(f"rule id {id!r} is not kebab-case")
    if id in RULES or id in ENGINE_RULES:
        raise ValueError(f"rule id {id!r} registered twice")

    def decorate(check: Callable[["Context"], None]) -> Callable[["Context"], None]:
        RULES[id] = Rule(id, severity, group, description, check, phase)
        return check

    return decorate


# Findings produced by the engine itself rather than by a check.
ENGINE_RULES = {
    "unreadable-input": ("error", "input", "The input cannot be read at all (missing, binary, "
                         "truncated gzip, wrong format, malformed value): one finding, no other rule runs."),
    "rule-skipped": ("info", "input", "A selected rule could not run on this input (no site "
                     "settings, no SWF header capacity, ...); the message says why and how to enable it."),
}


def _split(ids: Iterable[str] | str | None) -> list[str] | None:
    if ids is None:
        return None
    if isinstance(ids, str):
        ids = ids.split(",")
    return [i.strip() for i in ids if i.strip()]


def select_rules(rules: Iterable[str] | str | None = None,
                 skip_rules: Iterable[str] | str | None = None) -> list[Rule]:
    """The rules to run, in registry order; unknown ids are a usage error."""
    chosen, skipped = _split(rules), _split(skip_rules) or []
    known = set(RULES) | set(ENGINE_RULES)
    unknown = sorted((set(chosen or []) | set(skipped)) - known)
    if unknown:
        raise UsageError(f"unknown rule {plural(len(unknown), 'id')}: {', '.join(unknown)} "
                         "(swftools validate --list-rules lists them)")
    return [r for r in ordered_rules()
            if (chosen is None or r.id in chosen) and r.id not in skipped]


def describe_rules() -> list[tuple[str, str, str, str]]:
    """(id, severity, group, description) of every rule, engine rules first."""
    rows = [(i, s, g, d) for i, (s, g, d) in ENGINE_RULES.items()]
    rows += [(r.id, r.severity, r.group, r.description) for r in ordered_rules()]
    return rows
