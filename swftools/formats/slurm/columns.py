"""Whole-column parsing of sacct cells with located errors.

A column arrives as a pyarrow string array of the job lines with ``lines`` (the file line of
each row). A check reports the first bad row (every bad row while ``--skip-bad-lines``
collects: ``formats.skipping``; those rows are then null). The bulk is vectorized: fixed-width times as a byte matrix, integers by a compiled kernel,
and the repetitive forms (states, time limits, TRES, durations) parsed once per *distinct*
value with the scalar grammars of :mod:`swftools.formats.slurm.fields`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools.errors import InputError
from swftools.formats.skipping import reject_rows
from swftools.formats.slurm.kernels import uints
from swftools.table import from_numpy
from swftools.formats.nqsii.timefmt import (local_to_utc, parse_datetime_matrix, parse_datetimes,
                                            string_matrix)
from swftools.formats.slurm.fields import TIME_EXPECTED, UNKNOWN_TIMES

_PLACEHOLDER = "1970-01-01T00:00:00"


@dataclass(frozen=True)
class Column:
    """One sacct column of the job lines: its header, title, cells and their file lines."""

    path: str
    header: str
    title: str
    cells: pa.Array
    lines: np.ndarray

    def error(self, row: int, message: str, expected: str | None = None) -> InputError:
        """The InputError for row ``row`` of this column."""
        value = self.cells[row].as_py()
        return InputError(self.path, f"{value!r} {message}", line=int(self.lines[row]),
                          field=f"field {self.header!r} ({self.title})", value=value,
                          expected=expected)


def mask(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean pyarrow array as numpy (nulls are False)."""
    return np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=bool)


def first(m: np.ndarray) -> int:
    """Index of the first True."""
    return int(np.argmax(m))


def matches(cells: pa.Array, pattern: str) -> np.ndarray:
    """Which cells match the regular expression ``pattern`` (RE2 syntax)."""
    return mask(pc.match_substring_regex(cells, pattern))


def times(col: Column, zone: str, *, required: bool) -> pa.Array:
    """``YYYY-MM-DDTHH:MM:SS`` local times in ``zone`` -> UTC epoch seconds (an int64 array,
    null for Unknown/None, which are errors when ``required``)."""
    cells = col.cells
    lengths = np.asarray(pc.binary_length(cells).to_numpy(zero_copy_only=False), dtype=np.int64)
    known = lengths == 19
    unknown = np.zeros(len(cells), dtype=bool)  # Unknown/None are not 19 bytes long
    if not known.all():
        unknown[~known] = mask(pc.is_in(cells.filter(pa.array(~known)),
                                        pa.array(list(UNKNOWN_TIMES), pa.string())))
    bad = ~known & (~unknown | required)
    filled = cells if known.all() else pc.if_else(pa.array(known), cells, _PLACEHOLDER)
    naive = parse_datetimes(filled, b"T")  # the common case: every cell a time (faster)
    if naive is None:  # which are not
        matrix = string_matrix(filled, 19)
        assert matrix is not None
        naive, ok = parse_datetime_matrix(matrix, b"T")
        bad |= known & ~ok

    def bad_time(row: int) -> InputError:
        why = "is not a time" if col.cells[row].as_py() not in UNKNOWN_TIMES else "is unknown"
        return col.error(row, why, "YYYY-MM-DDTHH:MM:SS (local time)" if required
                         else TIME_EXPECTED)

    reject_rows(bad, bad_time)
    known &= ~bad
    utc, zone_ok = local_to_utc(np.where(known, naive, 0), zone)
    zone_bad = known & ~zone_ok
    reject_rows(zone_bad, lambda row: col.error(
        row, f"is ambiguous or does not exist in {zone} local time (a daylight-saving change)",
        "a local time that exists once"))
    return pa.array(utc, mask=~(known & ~zone_bad))


def integers(col: Column, *, empty_ok: bool = True) -> pa.Array:
    """Non-negative integers (1-18 ASCII digits); an empty cell is missing when ``empty_ok``."""
    values, status = uints(col.cells)
    empty = status == 1
    bad = (status == 2) | (empty & (not empty_ok))
    reject_rows(bad, lambda row: col.error(
        row, "is empty" if empty[row] else "is not a non-negative integer",
        "a non-negative integer"))
    missing = empty | bad
    return from_numpy(values, missing if missing.any() else None)


def check_pattern(col: Column, pattern: str, expected: str) -> None:
    """Every cell matches ``pattern``, else an InputError for the first that does not."""
    good = matches(col.cells, pattern)
    reject_rows(~good, lambda row: col.error(row, "is not valid here", expected))


def by_distinct(col: Column, parse: Callable[[str], Any]) -> tuple[list[Any], np.ndarray]:
    """Parse every distinct cell once: (the parsed values, each row's index into them).

    ``parse`` raises ``ValueError`` (its message: what was expected) for a bad cell; the first
    row holding one is reported (while collecting, every one; their values are None).
    """
    encoded = pc.dictionary_encode(col.cells)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    values: list[Any] = []
    bad: list[int] = []
    why: dict[int, str] = {}
    for i, text in enumerate(encoded.dictionary.to_pylist()):
        try:
            values.append(parse(text))
        except ValueError as exc:
            values.append(None)
            bad.append(i)
            why[i] = str(exc)
    index = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    if bad:
        reject_rows(np.isin(index, bad), lambda row: col.error(
            row, f"is not a valid {col.title}", why[int(index[row])]))
    return values, index


def lookup(values: list[Any], index: np.ndarray, pick: Callable[[Any], Any]) -> pa.Array:
    """A column of ``pick(value)`` for each row (None -> null), through the distinct index; a
    value that did not parse (None) gives null."""
    picked = pa.array([None if v is None else pick(v) for v in values], pa.int64())
    return picked.take(pa.array(index))
