"""What each trace format is: its descriptor (``FormatInfo``), declared as ``INFO`` by the format.

Every format subpackage declares ``INFO = FormatInfo(...)`` in its ``__init__.py``; the registry
(``swftools.formats``) reads it for ``convert --list-formats`` and ``tests/test_formats_cross.py``
drives its round-trip property from it. Adding a format means declaring its own ``INFO`` only.

The loss-report convention the descriptor promises (checked by the cross-format test):

- a loss line names, by its job-table column name (``user``, ``start_time``, ...), every column
  it concerns; a column is named exactly when the format did not give it back: not in
  ``carries`` and holding a known value, or in ``carries`` but changed for some jobs;
- jobs left out of the output are reported on lines of the form ``"N job(s) skipped: why"``
  (their counts add up to the jobs missing; column names on these lines do not count as named).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Any

TABLE_KINDS = ("gpu", "swf")
"""Kinds of job tables a round trip is declared for: ``gpu`` (GPU-site logs like AAIC's: names,
node shapes, termination codes, a consistent schedule) and ``swf`` (SWF traces: numeric ids,
any field may be unknown)."""

SKIPPED = re.compile(r"^(\d+) jobs? skipped: ")
"""A loss line reporting jobs left out of the output (see the module docstring)."""


@dataclass(frozen=True)
class FormatInfo:
    """One format's descriptor: its ``--from/--to`` name, direction, file names and what a write
    then read keeps (``carries``: job-table columns) for which kinds of tables (``tables``)."""

    name: str
    title: str
    read: bool
    write: bool
    extensions: tuple[str, ...]
    carries: frozenset[str]
    tables: tuple[str, ...] = TABLE_KINDS
    cannot_carry: str = ""
    reference: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.tables) - set(TABLE_KINDS)
        if unknown:
            raise ValueError(f"format {self.name}: unknown table kinds {sorted(unknown)} "
                             f"(choose from {', '.join(TABLE_KINDS)})")

    @property
    def direction(self) -> str:
        """``read``, ``write`` or ``read/write``."""
        return "/".join(d for d, ok in (("read", self.read), ("write", self.write)) if ok)

    def lost_columns(self, columns: list[str]) -> list[str]:
        """The job-table columns (of ``columns``, in their order) this format does not carry."""
        return [c for c in columns if c not in self.carries]

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (sorted ``carries``)."""
        return {"name": self.name, "title": self.title, "direction": self.direction,
                "read": self.read, "write": self.write, "extensions": list(self.extensions),
                "carries": sorted(self.carries), "tables": list(self.tables),
                "cannot_carry": self.cannot_carry, "reference": self.reference}


def named_columns(losses: list[str], columns: list[str]) -> set[str]:
    """The job-table columns a loss report names (whole words), skipped-job lines excepted."""
    named = set()
    for line in losses:
        if SKIPPED.match(line):
            continue
        named |= {c for c in columns if re.search(rf"(?<![\w.]){re.escape(c)}(?![\w])", line)}
    return named


def skipped_jobs(losses: list[str]) -> int:
    """How many jobs a loss report says were left out."""
    return sum(int(m.group(1)) for m in map(SKIPPED.match, losses) if m)


def format_table(infos: list[FormatInfo], columns: list[str]) -> str:
    """The ``convert --list-formats`` text: one block per format (name, direction, extensions,
    what it cannot carry, the job-table columns it does not carry)."""
    blocks = []
    for info in infos:
        lost = info.lost_columns(columns)
        pad = " " * 11
        wrap = [textwrap.fill(text, 98, initial_indent=pad, subsequent_indent=pad + "  ")
                for text in (info.title, f"cannot carry: {info.cannot_carry or 'nothing'}",
                             f"columns not carried: {', '.join(lost) if lost else 'none'}")]
        blocks.append("\n".join([f"{info.name:<10} {info.direction:<11} "
                                 f"{', '.join(info.extensions)}", *wrap]))
    return "\n\n".join(blocks) + "\n"
