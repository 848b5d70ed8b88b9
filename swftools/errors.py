"""Exceptions that carry the location of bad input."""

from __future__ import annotations

from dataclasses import dataclass


# Every reader refuses a trace without jobs in these words (``allow_empty=True`` accepts one).
NO_JOB_ROWS = "no job rows: the file holds only a header"
NO_JOB_ROWS_EXPECTED = "one job per line after the header, or --allow-empty for an empty trace"


class UsageError(Exception):
    """The caller asked for something impossible (bad option, existing output without force)."""


@dataclass
class InputError(Exception):
    """Bad input, located: file, line, field, offending value and what was expected.

    Renders as ``trace.swf:1042: field 5 (allocated processors): 'x7' is not a number``.
    """

    path: str
    message: str
    line: int | None = None
    field: str | None = None
    value: str | None = None
    expected: str | None = None

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        what = f"{self.field}: " if self.field else ""
        text = f"{where}: {what}{self.message}"
        if self.expected and "(expected" not in self.message:
            text += f" (expected {self.expected})"
        return text
