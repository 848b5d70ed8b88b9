"""One walltime rule for every reader, and the time-zone cross-check of record stamps.

``walltime_s`` is ``finish_time - start_time`` wherever both are known (so the table always
passes validate's ``walltime-arithmetic``); a log's own run-time figure is kept in
``recorded_walltime_s`` only where it differs. Columns are given as lists with ``None`` for
unknown, numpy arrays (masked arrays for unknowns) or Arrow arrays; results come back in the
same kind (Arrow if any input is Arrow, else numpy masked arrays if any is numpy, else lists).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pyarrow as pa

from swftools.errors import InputError
from swftools.formats.skipping import reject_rows
from swftools.table import filled, from_numpy, validity

# Time-zone offsets are whole quarter hours (+05:30, +05:45 exist) and span at most 26 hours
# (UTC-12 .. UTC+14); a record is written up to a few minutes after the event it records.
_QUARTER_HOUR = 900
_MAX_OFFSET_S = 26 * 3600
STAMP_SLACK_S = 300


def _split(column: Any, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(int64 values, bool known) of a column given as a list, numpy or Arrow array."""
    if isinstance(column, (pa.Array, pa.ChunkedArray)):
        known = validity(column)
        values = filled(column.cast(pa.int64()), 0).astype(np.int64)
        return values, np.ones(len(values), bool) if known is None else known.copy()
    if isinstance(column, np.ma.MaskedArray):
        return (np.asarray(column.filled(0), dtype=np.int64),
                ~np.ma.getmaskarray(column))
    if isinstance(column, np.ndarray):
        return column.astype(np.int64), np.ones(len(column), bool)
    if column is None:
        return np.zeros(n or 0, np.int64), np.zeros(n or 0, bool)
    known = np.fromiter((v is not None for v in column), dtype=bool, count=len(column))
    values = np.fromiter((int(v) if v is not None else 0 for v in column), dtype=np.int64,
                         count=len(column))
    return values, known


def _kind(*columns: Any) -> str:
    if any(isinstance(c, (pa.Array, pa.ChunkedArray)) for c in columns):
        return "arrow"
    if any(isinstance(c, np.ndarray) for c in columns):
        return "numpy"
    return "list"


def _join(values: np.ndarray, known: np.ndarray, kind: str) -> Any:
    if kind == "arrow":
        return from_numpy(np.where(known, values, 0).astype(np.int64), ~known)
    if kind == "numpy":
        return np.ma.MaskedArray(np.where(known, values, 0).astype(np.int64), mask=~known)
    return [int(v) if k else None for v, k in zip(values.tolist(), known.tolist())]


def reconcile(start: Any, finish: Any,
              recorded: Any = None) -> tuple[Any, Any, int]:
    """(walltime_s, recorded_walltime_s, largest difference in seconds).

    walltime_s is finish - start where both are known and finish >= start, else the recorded
    figure (or unknown); recorded_walltime_s is the recorded figure where it differs from
    walltime_s, else unknown; the largest difference is max |recorded - (finish - start)| over
    those rows (0 when none). ``recorded`` may be None: no column in the log.
    """
    s, s_ok = _split(start)
    f, f_ok = _split(finish)
    if len(s) != len(f):
        raise ValueError(f"{len(s)} start times but {len(f)} finish times")
    r, r_ok = _split(recorded, len(s))
    if len(r) != len(s):
        raise ValueError(f"{len(s)} start times but {len(r)} recorded walltimes")
    span = f - s
    arithmetic = s_ok & f_ok & (span >= 0)
    wall = np.where(arithmetic, span, r)
    wall_ok = arithmetic | r_ok
    differs = arithmetic & r_ok & (r != span)
    largest = int(np.abs(r - span)[differs].max()) if differs.any() else 0
    kind = _kind(start, finish, recorded)
    return _join(wall, wall_ok, kind), _join(r, differs, kind), largest


def _offset_text(seconds: int) -> str:
    sign = "+" if seconds >= 0 else "-"
    hours, rest = divmod(abs(seconds), 3600)
    return f"{sign}{hours:02d}:{rest // 60:02d}"


def _zone_hint(zone: str | None, at: int, shift: int) -> str:
    """Which --tz reads the stamps right: the zone whose offset is the used one + ``shift``;
    ``at`` is the stamp as read (its UTC offset in ``zone`` is the one the reading used)."""
    used = 0
    if zone:
        try:
            delta = datetime.fromtimestamp(at, ZoneInfo(zone)).utcoffset()
            used = int(delta.total_seconds()) if delta is not None else 0
        except (ZoneInfoNotFoundError, ValueError, OverflowError, OSError):
            used = 0
    wanted = used + shift
    text = f"the stamps are local times of a zone at UTC{_offset_text(wanted)}"
    if wanted == 0:
        return f"{text}: --tz UTC"
    if wanted % 3600 == 0:
        # Etc/GMT zones count west-positive: UTC+09:00 is Etc/GMT-9.
        return (f"{text}: give --tz with the site's IANA zone, or --tz Etc/GMT"
                f"{-wanted // 3600:+d}")
    return f"{text}: give --tz with the site's IANA zone"


def check_stamps(path: str, lines: Sequence[int], record_epochs: Any, field_epochs: Any,
                 field: str, *, zone: str | None = None) -> None:
    """Raise ``InputError`` at the first record (while ``--skip-bad-lines`` collects: note
    every record) whose own time stamp (read as a local time)
    and its epoch field ``field`` differ by a non-zero whole number of quarter hours, give or
    take ``STAMP_SLACK_S`` seconds: the stamps were read in the wrong time zone. ``zone`` is
    the zone they were read in (for the message); rows with either value unknown are skipped.
    """
    rec, rec_ok = _split(record_epochs)
    epo, epo_ok = _split(field_epochs)
    if not (len(rec) == len(epo) == len(lines)):
        raise ValueError(f"{len(lines)} lines, {len(rec)} record stamps, {len(epo)} epochs")
    diff = rec - epo
    shift = np.rint(diff / _QUARTER_HOUR).astype(np.int64) * _QUARTER_HOUR
    bad = (rec_ok & epo_ok & (shift != 0) & (np.abs(shift) <= _MAX_OFFSET_S)
           & (np.abs(diff - shift) <= STAMP_SLACK_S))
    used = f" read in {zone}" if zone else ""

    def error(i: int) -> InputError:
        d, k = int(diff[i]), int(shift[i])
        when = "after" if d > 0 else "before"
        return InputError(
            path, f"the record's time stamp{used} is {abs(d)} s ({_offset_text(k)[1:]} h) "
            f"{when} its {field}= epoch {int(epo[i])}: a time-zone error", line=int(lines[i]),
            field=field, value=str(int(epo[i])), expected=_zone_hint(zone, int(rec[i]), k))

    reject_rows(bad, error)
