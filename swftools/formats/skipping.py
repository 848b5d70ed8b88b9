"""``--skip-bad-lines``: read a line-oriented trace leaving out the lines a reader refuses,
each one reported (file line, field, value, why) and counted.

One pass collects every located error: while ``read_skipping`` runs a reader, its checks do not
stop at the first bad row (``reject``, ``reject_rows``) but note each one and go on without it.
The noted lines are then blanked (every line-oriented reader skips blank lines, so the others
keep their file line numbers) and the reader runs again; the table is that of a pass that noted
nothing. A file with any number of bad lines is read a few times: twice, plus once per check
that cannot go on past a bad line (a line with the wrong number of fields) or whose verdict
depends on other lines (a step whose job line was left out). Errors without a line, or on the
header (line 1 when ``header``), are never skipped.

The metadata keeps each skipped line's raw value and message, which may name a host, a job or a
path: anonymization keeps only the line numbers and field names (``withhold``).
"""

from __future__ import annotations

import dataclasses
from contextvars import ContextVar
from typing import Any, Callable, Iterable

import numpy as np
import pyarrow as pa

from swftools.errors import InputError
from swftools.metadata import TableMetadata

MAX_SKIPPED = 1000
METADATA_KEY = "skipped_lines"

# The errors noted by the running ``read_skipping`` pass (None: not skipping; errors raise).
_NOTED: ContextVar[list[InputError] | None] = ContextVar("swftools_skipping_noted", default=None)


def collecting() -> bool:
    """Whether a ``read_skipping`` pass is noting errors (checks go on past bad rows)."""
    return _NOTED.get() is not None


def reject(error: InputError) -> None:
    """Raise ``error``; while a ``read_skipping`` pass collects (and the error has a line),
    note it and return: the caller leaves the bad row out and goes on."""
    noted = _NOTED.get()
    if noted is None or error.line is None:
        raise error
    noted.append(error)


def reject_all(errors: Iterable[InputError]) -> None:
    """``reject`` each error (not collecting: the first is raised)."""
    for error in errors:
        reject(error)


def reject_rows(bad: np.ndarray, error_of: Callable[[int], InputError]) -> None:
    """A vectorized check's verdict: the error of the first row where ``bad`` is True is
    raised; while collecting, every bad row's is noted (up to one past the limit)."""
    if not bad.any():
        return
    rows = np.flatnonzero(bad)
    if not collecting():
        raise error_of(int(rows[0]))
    reject_all(error_of(int(row)) for row in rows[:MAX_SKIPPED + 1])


def read_skipping(parse: Callable[[bytes], pa.Table], data: bytes, path: str, *,
                  header: bool = True, max_skipped: int = MAX_SKIPPED) -> pa.Table:
    """``parse(data)`` leaving out bad lines; the table's metadata lists them under
    ``skipped_lines`` (``[{line, field, value, message, expected}]``, file line numbers; no
    path, so the list can travel with the table). ``parse`` must skip blank lines."""
    lines = data.split(b"\n")
    skipped: dict[int, InputError] = {}
    while True:
        table, stop, noted = _pass(parse, b"\n".join(lines))
        if stop is not None and _skippable(stop, header, len(lines)):
            noted.append(stop)
        fresh: dict[int, InputError] = {}
        for error in noted:  # a line's first error, in check order, is its reason
            assert error.line is not None
            if _skippable(error, header, len(lines)) and error.line not in skipped:
                fresh.setdefault(error.line, error)
        if not fresh:
            if stop is not None:
                raise stop
            unskippable = next((e for e in noted if not _skippable(e, header, len(lines))), None)
            if unskippable is not None:
                raise unskippable
            if table is None:  # a step failed with nothing new noted: its own error, as is
                table = parse(b"\n".join(lines))
            break
        for line, error in fresh.items():
            skipped[line] = error
            lines[line - 1] = b""
        if len(skipped) > max_skipped:
            last = skipped[max(skipped)]
            raise InputError(path, f"more than {max_skipped} bad lines; the last: {last}",
                             expected="a trace with few malformed lines")
    meta = TableMetadata.from_table(table)
    report = [{"line": e.line, "field": e.field, "value": e.value, "message": e.message,
               "expected": e.expected} for _, e in sorted(skipped.items())]
    extra = {**meta.extra, METADATA_KEY: report}
    return dataclasses.replace(meta, extra=extra).to_table(table)


def _pass(parse: Callable[[bytes], pa.Table],
          data: bytes) -> tuple[pa.Table | None, InputError | None, list[InputError]]:
    """One collecting run: (the table, or None; the error that stopped it, or None; the noted
    errors)."""
    noted: list[InputError] = []
    token = _NOTED.set(noted)
    try:
        return parse(data), None, noted
    except InputError as exc:
        return None, exc, noted
    except Exception:
        if not noted:
            raise
        # Past a noted bad row a later step may meet a value it never sees in a clean file:
        # this pass ends here; the next one runs without the noted lines.
        return None, None, noted
    finally:
        _NOTED.reset(token)


def _skippable(error: InputError, header: bool, lines: int) -> bool:
    return error.line is not None and not (header and error.line == 1) and error.line <= lines


WITHHELD_MESSAGE = "line left out; its content was withheld by anonymization"


def withhold(entries: list[Any]) -> list[dict[str, Any]]:
    """The skipped-line report without raw content: each entry's ``line`` and ``field`` only
    (a field name is the reader's or the header's word, not a value)."""
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        line = entry.get("line")
        field = entry.get("field")
        out.append({"line": line if isinstance(line, int) else None,
                    "field": field if isinstance(field, str) and len(field) <= 80
                    and field.isprintable() else None})
    return out


def skipped_lines(table: pa.Table) -> list[dict[str, Any]]:
    """The lines ``read_skipping`` left out (empty when none or not asked)."""
    return list(TableMetadata.from_table(table).extra.get(METADATA_KEY, []))


def describe(path: str, entry: dict[str, Any]) -> str:
    """One skipped line as an error message would put it (``file:line: field: why``)."""
    error = InputError(path, entry.get("message") or WITHHELD_MESSAGE, line=entry.get("line"),
                       field=entry.get("field"), value=entry.get("value"),
                       expected=entry.get("expected"))
    return str(error)
