"""Findings and the validation report: what a rule found, where, and how it is rendered."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from dataclasses import asdict, dataclass, field
from typing import Any

from swftools.errors import count

SEVERITIES = ("error", "warning", "info")
_RANK = {s: i for i, s in enumerate(SEVERITIES)}

Scalar = str | int | float | bool | None


@dataclass(frozen=True)
class Finding:
    """One problem found in a trace, located as precisely as the input allows.

    ``line`` is the file line (CSV and SWF) or the 1-based row number (Parquet, in-memory tables);
    ``value`` is the offending value and ``expected`` what a valid trace would hold.
    """

    path: str
    line: int | None
    job_id: int | None
    field: str | None
    rule: str
    severity: str
    message: str
    value: Scalar = None
    expected: str | None = None

    def __post_init__(self) -> None:
        if self.severity not in _RANK:
            raise ValueError(f"severity {self.severity!r} is not one of {SEVERITIES}")

    def to_dict(self) -> dict[str, Any]:
        """The finding as a JSON-ready dict (keys as in the report schema)."""
        return asdict(self)

    def render(self) -> str:
        """``trace.swf:1042: job 1041: wait_s: error [wait-arithmetic] message (value ..., expected ...)``."""
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        parts = [where]
        if self.job_id is not None:
            parts.append(f"job {self.job_id}")
        if self.field:
            parts.append(self.field)
        text = ": ".join(parts) + f": {self.severity} [{self.rule}] {self.message}"
        extra = []
        if self.value is not None and str(self.value) not in self.message:
            extra.append(f"value {self.value}")
        if self.expected and self.expected not in self.message:
            extra.append(f"expected {self.expected}")
        return text + (f" ({', '.join(extra)})" if extra else "")


@dataclass
class Report:
    """The result of validating one input: findings (possibly capped) and complete counts."""

    path: str
    source_format: str | None = None
    rows: int = 0
    max_findings: int | None = None
    findings: list[Finding] = field(default_factory=list)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    rules_run: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    strict: bool = False  # warnings fail the report too (a release gate)

    # -- collecting ----------------------------------------------------------------------------
    def room(self) -> int | None:
        """How many more findings may be kept (None: unlimited)."""
        if self.max_findings is None:
            return None
        return max(self.max_findings - len(self.findings), 0)

    def add(self, finding: Finding) -> None:
        """Count a finding and keep it unless the report is full."""
        self.extend(finding.rule, finding.severity, 1, [finding])

    def extend(self, rule: str, severity: str, count: int, findings: Iterable[Finding]) -> None:
        """Count ``count`` occurrences of ``rule`` and keep as many of ``findings`` as fit.

        ``findings`` may be a lazy iterable: only the ones kept are ever built.
        """
        if count <= 0:
            return
        key = (rule, severity)
        self.counts[key] = self.counts.get(key, 0) + count
        self.findings.extend(islice(findings, self.room()))

    # -- reading -------------------------------------------------------------------------------
    def total(self, severity: str | None = None) -> int:
        """Number of findings counted (of one severity, or all)."""
        return sum(n for (_, sev), n in self.counts.items() if severity in (None, sev))

    @property
    def errors(self) -> int:
        return self.total("error")

    @property
    def warnings(self) -> int:
        return self.total("warning")

    @property
    def valid(self) -> bool:
        """No error was found (warnings and info allowed, unless ``strict``: then no warning)."""
        return self.errors == 0 and not (self.strict and self.warnings)

    @property
    def partial(self) -> bool:
        """Findings were counted beyond ``max_findings`` but not kept."""
        return len(self.findings) < self.total()

    def rule_counts(self) -> dict[str, int]:
        """Occurrences per rule id (all severities)."""
        out: dict[str, int] = {}
        for (rule, _), n in sorted(self.counts.items()):
            out[rule] = out.get(rule, 0) + n
        return out

    def summary(self) -> list[dict[str, Any]]:
        """One row per (rule, severity) found, errors first, then by rule id."""
        rows = [{"rule": r, "severity": s, "count": n} for (r, s), n in self.counts.items()]
        return sorted(rows, key=lambda r: (_RANK[r["severity"]], r["rule"]))

    def flatten(self) -> list[dict[str, Any]]:
        """The kept findings as plain dicts, one per finding (handy in tests and DataFrames)."""
        return [f.to_dict() for f in self.findings]

    def fired(self, severity: str | None = None) -> set[str]:
        """Rule ids that found something (optionally only at one severity)."""
        return {r for (r, s) in self.counts if severity in (None, s)}

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-ready dict (``schemas/validation-report.schema.json``, one entry)."""
        return {
            "path": self.path,
            "source_format": self.source_format,
            "rows": self.rows,
            "valid": self.valid,
            "strict": self.strict,
            "partial": self.partial,
            "max_findings": self.max_findings,
            "totals": {s: self.total(s) for s in SEVERITIES},
            "counts": self.summary(),
            "rules_run": list(self.rules_run),
            "skipped": [{"rule": r, "reason": why} for r, why in sorted(self.skipped.items())],
            "findings": self.flatten(),
        }

    def render_text(self) -> Iterator[str]:
        """One line per kept finding, then a status line."""
        for finding in self.findings:
            yield finding.render()
        yield self.status_line()

    def status_line(self) -> str:
        """``trace.swf: INVALID: 3 errors, 1 warning, 0 info (partial: 100 of 240 findings shown)``."""
        word = "valid" if self.valid else "INVALID"
        text = (f"{self.path}: {word}: {count(self.errors, 'error')}, {count(self.warnings, 'warning')}, "
                f"{self.total('info')} info")
        if self.strict and self.errors == 0 and self.warnings:
            text += " (--strict: warnings fail)"
        if self.partial:
            text += (f" (partial report: {len(self.findings)} of {self.total()} findings shown; "
                     "raise --max-findings, 0 for all)")
        return text
