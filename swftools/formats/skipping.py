"""``--skip-bad-lines``: read a line-oriented trace leaving out the lines a reader refuses,
each one reported (file line, field, value, why) and counted.

The reader runs on the bytes; each ``InputError`` located on a data line removes that line and
the reader runs again, so the cost grows with the number of bad lines (``max_skipped`` caps it).
Errors without a line, or on the header (line 1 when ``header``), are never skipped.

The metadata keeps each skipped line's raw value and message, which may name a host, a job or a
path: anonymization keeps only the line numbers and field names (``withhold``).
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
