"""Leak audit: prove that a published directory or archive names no raw user, group, host, job or
key.

``audit(path, names=..., hosts=..., key=...)`` scans every file, file name, Parquet metadata entry
and archive member (see ``swftools.privacy.scan`` for the file kinds and the caps on what is read,
``swftools.privacy.match`` for the matching policy) and returns an ``AuditReport``: every hit with
its file and location, what could not be read (the audit then fails), the names that could not be
searched, and the re-identification report of the job table found in the archive. The names come
from the raw input before anonymization: ``swftools.privacy.rawnames.raw_names`` reads users,
groups, hosts and job names from a raw log, bad lines included.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from swftools.privacy.kanon import (DEFAULT_QUASI_IDENTIFIERS, ReidentificationReport,
                                    recorded_quasi_identifiers, reidentification_report)
from swftools.privacy.match import Matcher, Term, key_terms
from swftools.privacy.scan import Leak, Scanner
from swftools.errors import InputError, UsageError, count

SHOWN_PER_TERM = 10  # locations printed per file and term by ``render`` (JSON lists all kept)

__all__ = ["AuditReport", "Leak", "ReidentificationReport", "audit", "names_from_table",
           "nothing_to_search", "read_names_file", "reidentification_report"]


def nothing_to_search(unsearchable: int = 0) -> str:
    """The one sentence ``audit``, ``release`` and ``verify`` say when no raw name can be searched
    for (e.g. an SWF trace's numeric user ids): an audit of nothing is never ``CLEAN``."""
    if unsearchable:
        return (f"nothing to search for: no raw user, group, host or job name can be searched "
                f"({unsearchable} unsearchable: numbers or common words, check them by hand); "
                "the audit proves nothing about names")
    return ("nothing to search for: the raw input holds no user, group, host or job name; "
            "the audit proves nothing about names")


def searchable(names: Iterable[str] | Mapping[str, Iterable[str]] = (),
               hosts: Iterable[str] = ()) -> tuple[int, int]:
    """How many of ``names`` and ``hosts`` the audit can search for, and how many it cannot."""
    matcher = Matcher(_terms(names, hosts))
    return len(matcher.terms), len(matcher.unsearchable)


def read_names_file(path: str | os.PathLike) -> list[str]:
    """Names from a file, one per line; blank lines and lines starting with ``#`` are skipped."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(str(p), f"not UTF-8 text (byte {exc.start})",
                         expected="one name per line") from None
    names = [line.strip() for line in text.splitlines()]
    return [n for n in names if n and not n.startswith("#")]


def names_from_table(table: pa.Table, source: str = "raw log") -> dict[str, list[str]]:
    """The distinct user and group names of a raw job table."""
    if "user" not in table.column_names:
        raise InputError(source, "no user column to take the raw names from", field="user",
                         expected="a raw job log with user and group names")
    out = {}
    for column in ("user", "group"):
        if column in table.column_names:
            values = pc.unique(pc.cast(table.column(column), pa.string())).to_pylist()
            out[column] = sorted(v for v in values if v is not None)
    return out


@dataclass
class AuditReport:
    """What the audit found. ``clean`` when there is no hit and every file could be read."""

    path: str
    leaks: list[Leak]
    omitted: dict[tuple[str, str | None, Term], int]
    unreadable: list[tuple[str, str | None, str]]
    files_scanned: int
    bytes_scanned: int
    searched: dict[str, int]
    unsearchable: list[tuple[Term, str]]
    key_searched: bool
    reidentification: ReidentificationReport | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """A hit, or a file that could not be read: the audit fails (exit 1)."""
        return bool(self.leaks or self.unreadable)

    @property
    def names_searched(self) -> bool:
        """At least one raw name (not only the key) was searched for."""
        return any(self.searched.values())

    @property
    def status(self) -> str:
        """``leaks``, ``unreadable``, ``nothing-to-search`` (no raw name searched) or ``clean``."""
        if self.leaks:
            return "leaks"
        if self.unreadable:
            return "unreadable"
        return "clean" if self.names_searched else "nothing-to-search"

    @property
    def clean(self) -> bool:
        """Raw names were searched for, none was found and every file could be read."""
        return self.status == "clean"

    @property
    def nothing_to_search(self) -> str | None:
        """The :func:`nothing_to_search` sentence when no raw name was searched for, else None."""
        if self.status != "nothing-to-search":
            return None
        return nothing_to_search(len(self.unsearchable))

    @property
    def hit_count(self) -> int:
        """Occurrences found (listed and unlisted)."""
        return sum(leak.count for leak in self.leaks) + sum(self.omitted.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready report (``schemas/audit-report.schema.json``); never contains the key."""
        return {
            "path": self.path, "status": self.status, "clean": self.clean,
            "hits": self.hit_count,
            "files_scanned": self.files_scanned, "bytes_scanned": self.bytes_scanned,
            "searched": dict(sorted(self.searched.items())), "key_searched": self.key_searched,
            "unsearchable": [{"kind": t.kind, "name": t.text, "reason": r}
                             for t, r in self.unsearchable],
            "leaks": [leak.to_dict() for leak in self.leaks],
            "unlisted": [{"file": f, "member": m, "what": t.describe(), "count": n}
                         for (f, m, t), n in self.omitted.items()],
            "unreadable": [{"file": f, "member": m, "reason": r} for f, m, r in self.unreadable],
            "reidentification": (self.reidentification.to_dict()
                                 if self.reidentification else None),
            "notes": self.notes,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"

    def render(self) -> str:
        """Human report: hits grouped by file and term, then the re-identification figures."""
        lines = []
        groups: dict[tuple[str, str | None, Term], list[Leak]] = {}
        for leak in self.leaks:
            groups.setdefault((leak.file, leak.member, leak.term), []).append(leak)
        for (file, member, term), leaks in groups.items():
            for leak in leaks[:SHOWN_PER_TERM]:
                lines.append(f"{leak.where()}: {term.describe()} ({leak.match})")
            hidden = sum(l.count for l in leaks[SHOWN_PER_TERM:]) + self.omitted.get(
                (file, member, term), 0)
            if hidden:
                place = file + (f"!{member}" if member else "")
                lines.append(f"{place}: ... and {count(hidden, 'more occurrence')} of "
                             f"{term.describe()} (--json lists up to 100 locations)")
        for file, member, reason in self.unreadable:
            lines.append(f"{file}{'!' + member if member else ''}: could not be scanned: {reason}")
        searched = ", ".join(count(n, "name" if k == "name" else f"{k} name") for k, n in sorted(
            self.searched.items(), key=lambda item: item[0] != "user"))
        key = "the key" if self.key_searched else "no key (give --key-file)"
        status = {"leaks": f"LEAKS FOUND: {count(self.hit_count, 'occurrence')}",
                  "unreadable": "INCOMPLETE", "clean": "CLEAN",
                  "nothing-to-search": "NOTHING TO SEARCH"}[self.status]
        if self.unreadable:
            status += f", {count(len(self.unreadable), 'unreadable file')}"
        lines.append(f"audit {self.path}: {status}; scanned {count(self.files_scanned, 'file')}, "
                     f"{count(self.bytes_scanned, 'byte')} for {searched or 'no raw name'} "
                     f"and {key}")
        if self.nothing_to_search:
            lines.append(self.nothing_to_search)
        if self.unsearchable:
            listed = ", ".join(f"{t.text!r} ({r})" for t, r in self.unsearchable[:10])
            more = f" and {len(self.unsearchable) - 10} more" if len(self.unsearchable) > 10 else ""
            lines.append(f"not searchable, check by hand: {listed}{more}")
        lines.extend(self.notes)
        if self.reidentification is not None:
            lines.append(self.reidentification.render())
        return "\n".join(lines)


def _terms(names: Iterable[str] | Mapping[str, Iterable[str]], hosts: Iterable[str]) -> list[Term]:
    terms: list[Term] = []
    if isinstance(names, Mapping):
        for kind, values in names.items():
            terms.extend(Term(v, kind) for v in values)
    else:
        terms.extend(Term(v, "name") for v in names)
    terms.extend(Term(h, "host") for h in hosts)
    return terms


def _job_table_columns(quasi_identifiers: tuple[str, ...]):
    def want(schema: pa.Schema) -> list[str] | None:
        if "job_id" not in schema.names:
            return None
        needed = set(quasi_identifiers) | {"user", "submit_time"}
        return [n for n in schema.names if n in needed]
    return want


def _counts_processors(table: pa.Table) -> bool:
    from swftools.metadata import TableMetadata

    try:
        return TableMetadata.from_table(table).unit == "processor"
    except (InputError, ValueError):
        return False


def _read_trace(path: Path, notes: list[str]) -> pa.Table | None:
    """The job table of a single trace file (SWF, NQSII), or None with a note why not."""
    from swftools import formats
    try:
        table = formats.read(path)
    except (InputError, UsageError, ImportError) as exc:
        notes.append(f"{path.name} is not a readable trace ({exc})")
        return None
    notes.append(f"re-identification report from {path.name}")
    return table


def audit(path: str | os.PathLike, names: Iterable[str] | Mapping[str, Iterable[str]] = (),
          hosts: Iterable[str] = (), key: bytes | None = None, *, table: pa.Table | None = None,
          quasi_identifiers: tuple[str, ...] = DEFAULT_QUASI_IDENTIFIERS,
          limits: Any = None) -> AuditReport:
    """Scan ``path`` (file, directory or archive) for raw names, host names and the key.

    ``names`` is a list (kind ``name``) or a mapping kind -> names (``user``, ``group``, ``host``,
    ``job``: ``rawnames.raw_names`` gives one). The re-identification report uses ``table`` if
    given, else the first Parquet job table found. ``limits`` (default ``Limits.from_env()``)
    caps what one archive member or Parquet row group may make the audit read.
    """
    root = Path(path)
    if not root.exists():
        raise InputError(str(root), "no such file or directory", expected="an archive to audit")
    terms = _terms(names, hosts)
    if key:
        terms.extend(key_terms(bytes(key)))
    matcher = Matcher(terms)  # no searchable term: the report says nothing_to_search
    scanner = Scanner(matcher, _job_table_columns(tuple(quasi_identifiers)), limits)
    result = scanner.scan_path(root)
    searched: dict[str, int] = {}
    for term in matcher.terms:
        if term.kind != "key":
            searched[term.kind] = searched.get(term.kind, 0) + 1
    report = AuditReport(str(path), result.leaks, dict(result.omitted), result.unreadable,
                         result.files_scanned, result.bytes_scanned, searched,
                         matcher.unsearchable, bool(key))
    chosen = table
    if chosen is None and result.job_tables:
        label, chosen = sorted(result.job_tables, key=lambda t: (Path(t[0]).name != "jobs.parquet",
                                                                  t[0]))[0]
        report.notes.append(f"re-identification report from {label}")
    if chosen is None and root.is_file() and not result.job_tables:
        chosen = _read_trace(root, report.notes)
    if chosen is not None:
        usable = recorded_quasi_identifiers(chosen, quasi_identifiers)
        missing = [q for q in quasi_identifiers if q not in usable]
        if missing:
            report.notes.append(f"quasi-identifiers the table does not record: {', '.join(missing)}")
        if "gpus" in usable and _counts_processors(chosen):
            report.notes.append("gpus counts processors in this trace")
        if usable:
            report.reidentification = reidentification_report(chosen, usable)
    else:
        report.notes.append("no job table found: no re-identification report")
    return report
