"""``--skip-bad-lines``: read a line-oriented trace leaving out the lines a reader refuses,
each one reported (file line, field, value, why) and counted.

The reader runs on the bytes; each ``InputError`` located on a data line removes that line and
the reader runs again, so the cost grows with the number of bad lines (``max_skipped`` caps it).
Errors without a line, or on the header (line 1 when ``header``), are never skipped.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import pyarrow as pa

from swftools.errors import InputError
from swftools.metadata import TableMetadata

MAX_SKIPPED = 1000
METADATA_KEY = "skipped_lines"


def read_skipping(parse: Callable[[bytes], pa.Table], data: bytes, path: str, *,
                  header: bool = True, max_skipped: int = MAX_SKIPPED) -> pa.Table:
    """``parse(data)`` leaving out bad lines; the table's metadata lists them under
    ``skipped_lines`` (``[{line, field, value, message, expected}]``, file line numbers; no
    path, so the list can travel with the table)."""
    lines = data.split(b"\n")
    original = list(range(1, len(lines) + 1))
    skipped: list[InputError] = []
    while True:
        try:
            table = parse(b"\n".join(lines))
            break
        except InputError as exc:
            if exc.line is None or (header and exc.line == 1) or exc.line > len(lines):
                raise
            if len(skipped) >= max_skipped:
                raise InputError(path, f"more than {max_skipped} bad lines; the last: {exc}",
                                 expected="a trace with few malformed lines") from None
            index = exc.line - 1
            skipped.append(dataclasses.replace(exc, line=original[index]))
            del lines[index], original[index]
    meta = TableMetadata.from_table(table)
    report = [{"line": e.line, "field": e.field, "value": e.value, "message": e.message,
               "expected": e.expected} for e in sorted(skipped, key=lambda e: e.line or 0)]
    extra = {**meta.extra, METADATA_KEY: report}
    return dataclasses.replace(meta, extra=extra).to_table(table)


def skipped_lines(table: pa.Table) -> list[dict[str, Any]]:
    """The lines ``read_skipping`` left out (empty when none or not asked)."""
    return list(TableMetadata.from_table(table).extra.get(METADATA_KEY, []))


def describe(path: str, entry: dict[str, Any]) -> str:
    """One skipped line as an error message would put it (``file:line: field: why``)."""
    error = InputError(path, entry["message"], line=entry["line"], field=entry["field"],
                       value=entry["value"], expected=entry["expected"])
    return str(error)
