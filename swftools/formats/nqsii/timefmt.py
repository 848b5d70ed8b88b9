"""Whole-column conversion between text and seconds for NQSII logs (no per-row Python).

Instants: UNIX seconds, local ``YYYY-MM-DD HH:MM:SS`` (an IANA zone), ISO 8601 with an offset.
Durations: seconds or ``HH:MM:SS`` (hours unbounded). Date-times are fixed width, so they are
parsed and formatted as an ``(n, 19)`` byte matrix with numpy; the zone offset is computed with
``zoneinfo`` once per distinct day, and per value only on days where the offset changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt

DATETIME_WIDTH = 19  # YYYY-MM-DD HH:MM:SS
_DIGIT_POSITIONS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
_EPOCH = datetime(1970, 1, 1)
_DAY_S = 86_400
# Rows converted per step by the row-wise parsers: their temporaries (tens of bytes a row) stay
# bounded on a 10-million-job log; the results are the same for any chunk size.
CHUNK_ROWS = 1 << 18

# How each text format is named in error messages, in the order messages list them.
FORMAT_LABELS = {
    "epoch": "UNIX seconds",
    "local": "YYYY-MM-DD HH:MM:SS local time",
    "iso": "ISO 8601 with offset",
    "seconds": "seconds",
    "hms": "HH:MM:SS",
}
TIMESTAMP_FORMATS = ("epoch", "local", "iso")
DURATION_FORMATS = ("seconds", "hms")

EPOCH_PATTERN = r"^[0-9]{1,18}$"
LOCAL_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$"
ISO_SEPARATORS = ("T", " ")  # between date and time
ISO_PATTERN = (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[" + "".join(ISO_SEPARATORS)
               + r"][0-9]{2}:[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:?[0-9]{2})$")
HMS_PATTERN = r"^[0-9]{1,12}:[0-5][0-9]:[0-5][0-9]$"


def describe_formats(formats: list[str] | tuple[str, ...]) -> str:
    """``'A, B, or C'`` for the given format names, in the canonical order."""
    order = [f for f in (*TIMESTAMP_FORMATS, *DURATION_FORMATS) if f in formats]
    labels = [FORMAT_LABELS[f] for f in order]
    if len(labels) <= 2:
        return " or ".join(labels)
    return ", ".join(labels[:-1]) + ", or " + labels[-1]


# ---------------------------------------------------------------- string arrays <-> byte matrix

def contiguous(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A string array in one piece (a copy when it came in several chunks)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if arr.type != pa.string():
        arr = arr.cast(pa.string())
    return arr


def row_pieces(arr: pa.Array | pa.ChunkedArray) -> Iterator[tuple[int, pa.Array]]:
    """``(first row, string array)`` pieces of at most ``CHUNK_ROWS`` rows, in order, without
    copying the text (a column read in blocks is never put in one piece)."""
    start = 0
    for chunk in jt.chunks(arr):
        if chunk.type != pa.string():
            chunk = chunk.cast(pa.string())
        for i in range(0, len(chunk), CHUNK_ROWS):
            yield start + i, chunk.slice(i, CHUNK_ROWS)
        start += len(chunk)


def string_matrix(arr: pa.Array | pa.ChunkedArray, width: int) -> np.ndarray | None:
    """View a string array whose values all have ``width`` bytes as an ``(n, width)`` uint8 matrix."""
    arr = contiguous(arr)
    n = len(arr)
    if arr.null_count:
        return None
    if n == 0:
        return np.zeros((0, width), dtype=np.uint8)
    offsets, data = jt.string_buffers(arr)
    if not np.all(np.diff(offsets) == width):
        return None
    return data[offsets[0]:offsets[0] + n * width].reshape(n, width)


def matrix_strings(matrix: np.ndarray) -> pa.Array:
    """A string array from an ``(n, width)`` uint8 matrix of ASCII bytes."""
    n, width = matrix.shape
    offsets = (np.arange(n + 1, dtype=np.int64) * width).astype(np.int32)
    data = np.ascontiguousarray(matrix, dtype=np.uint8).tobytes()
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.tobytes()),
                                                 pa.py_buffer(data)])


# ---------------------------------------------------------------------------- civil date-times

_MONTH_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)
_DAYS_BEFORE_MONTH = np.concatenate([[0], np.cumsum(_MONTH_DAYS)[:-1]])


def _leap_days_through(year: np.ndarray) -> np.ndarray:
    """Gregorian leap years in 1..``year``."""
    return year // 4 - year // 100 + year // 400


def parse_datetime_matrix(matrix: np.ndarray, separators: bytes = b" ") -> tuple[np.ndarray, np.ndarray]:
    """Parse rows ``YYYY-MM-DD?HH:MM:SS`` (``?`` one of ``separators``) as naive seconds since 1970.

    Returns ``(seconds, ok)``; ``ok`` is False where a row is not a real calendar date-time
    (month 13, 30 February, hour 24, second 60, a non-digit, a wrong separator).
    """
    return _in_chunks(_parse_datetime_rows, matrix, separators)


def _in_chunks(rows, values: np.ndarray, *args) -> tuple[np.ndarray, np.ndarray]:
    """``rows(values, *args) -> (int64 array, bool array)`` applied ``CHUNK_ROWS`` rows at a
    time (each call's temporaries are a few times its input: at 10M rows, gigabytes at once)."""
    if len(values) <= CHUNK_ROWS:
        return rows(values, *args)
    out, ok = np.empty(len(values), np.int64), np.empty(len(values), bool)
    for i in range(0, len(values), CHUNK_ROWS):
        out[i:i + CHUNK_ROWS], ok[i:i + CHUNK_ROWS] = rows(values[i:i + CHUNK_ROWS], *args)
    return out, ok


def _parse_datetime_rows(matrix: np.ndarray, separators: bytes) -> tuple[np.ndarray, np.ndarray]:
    digits = matrix[:, _DIGIT_POSITIONS].astype(np.int32) - 48
    ok = ((digits >= 0) & (digits <= 9)).all(axis=1)
    ok &= (matrix[:, 4] == ord("-")) & (matrix[:, 7] == ord("-"))
    ok &= (matrix[:, 13] == ord(":")) & (matrix[:, 16] == ord(":"))
    separator_ok = matrix[:, 10] == separators[0]
    for extra in separators[1:]:
        separator_ok |= matrix[:, 10] == extra
    ok &= separator_ok
    pairs = digits.reshape(-1, 7, 2)
    numbers = (pairs[:, :, 0] * 10 + pairs[:, :, 1]).astype(np.int64)  # YY YY MM DD hh mm ss
    year = numbers[:, 0] * 100 + numbers[:, 1]
    month, day, hour, minute, second = (numbers[:, i] for i in range(2, 7))
    ok &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1)
    ok &= (hour <= 23) & (minute <= 59) & (second <= 59)
    month_index = np.where(ok, month - 1, 0)
    year = np.where(ok, year, 1970)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    after_february = month_index >= 2
    ok &= day <= _MONTH_DAYS[month_index] + (leap & (month_index == 1))
    days = (365 * (year - 1970) + _leap_days_through(year - 1) - _leap_days_through(np.int64(1969))
            + _DAYS_BEFORE_MONTH[month_index] + (leap & after_february) + day - 1)
    seconds = days * _DAY_S + hour * 3600 + minute * 60 + second
    return np.where(ok, seconds, 0), ok


# Per byte of ``YYYY-MM-DD?HH:MM:SS``: the lowest value and the span above it (a digit 0..9,
# a separator exactly); the separator (position 10) is set per call.
_LAYOUT_LOW = np.frombuffer(b"0000-00-00 00:00:00", np.uint8).copy()
_LAYOUT_SPAN = np.where(_LAYOUT_LOW == ord("0"), 9, 0).astype(np.uint8)


def parse_datetimes(arr: pa.Array | pa.ChunkedArray, separator: bytes = b" ") -> np.ndarray | None:
    """Naive seconds since 1970 of strings ``YYYY-MM-DD?HH:MM:SS`` (``?`` the ``separator``)
    when every one is a real calendar date-time, else None (:func:`parse_datetime_matrix` then
    says which are not). The layout is checked with numpy, the calendar by Arrow's ISO 8601
    cast: the same answers, a few times faster."""
    low = _LAYOUT_LOW.copy()
    low[10] = separator[0]
    seconds = np.empty(len(arr), dtype=np.int64)
    for start, piece in row_pieces(arr):
        matrix = string_matrix(piece, DATETIME_WIDTH)
        if matrix is None or ((matrix - low) > _LAYOUT_SPAN).any():
            return None  # a byte out of place
        try:
            stamps = pc.cast(piece, pa.timestamp("s"))
        except pa.ArrowInvalid:
            return None
        seconds[start:start + len(piece)] = stamps.view(pa.int64()).to_numpy()
    return seconds if not len(seconds) or seconds.min() >= _YEAR_1 else None  # year 0


_YEAR_1 = -62_135_596_800  # 0001-01-01 00:00:00
_YEAR_10000 = 253_402_300_800  # 10000-01-01 00:00:00
_OUTSIDE = "date outside years 1..9999"


def format_datetime_matrix(naive_s: np.ndarray, separator: str = " ") -> np.ndarray:
    """Naive seconds since 1970 as an ``(n, 19)`` matrix of ``YYYY-MM-DD?HH:MM:SS`` bytes.

    Raises ``ValueError`` for instants outside years 1..9999.
    """
    naive_s = np.asarray(naive_s, dtype=np.int64)
    days = naive_s // _DAY_S
    second_of_day = naive_s - days * _DAY_S
    date = days.astype("datetime64[D]")
    month_start = date.astype("datetime64[M]")
    year = month_start.astype("datetime64[Y]").astype(np.int64) + 1970
    if len(year) and (year.min() < 1 or year.max() > 9999):
        raise ValueError(_OUTSIDE)
    month = month_start.astype(np.int64) % 12 + 1
    day = days - month_start.astype("datetime64[D]").astype(np.int64) + 1
    parts = (year // 1000, year // 100 % 10, year // 10 % 10, year % 10,
             month // 10, month % 10, day // 10, day % 10,
             second_of_day // 36000, second_of_day // 3600 % 10,
             second_of_day % 3600 // 600, second_of_day % 3600 // 60 % 10,
             second_of_day % 60 // 10, second_of_day % 10)
    out = np.empty((len(naive_s), DATETIME_WIDTH), dtype=np.uint8)
    for position, value in zip(_DIGIT_POSITIONS, parts):
        out[:, position] = value + 48
    out[:, 4] = out[:, 7] = ord("-")
    out[:, 10] = ord(separator)
    out[:, 13] = out[:, 16] = ord(":")
    return out


# ------------------------------------------------------------------------------ time zones

def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` without sorting when the range is small."""
    low, high = int(values.min()), int(values.max())
    if high - low > 10_000_000:
        return np.unique(values, return_inverse=True)
    present = np.zeros(high - low + 1, dtype=bool)
    present[values - low] = True
    distinct = np.flatnonzero(present)
    index = np.cumsum(present) - 1
    return distinct + low, index[values - low]


@lru_cache(maxsize=16)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def _local_offset(naive: datetime, zone: ZoneInfo, fold: int) -> int:
    return int(naive.replace(tzinfo=zone, fold=fold).utcoffset().total_seconds())


def local_to_utc(naive_s: np.ndarray, zone_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Convert naive local seconds in ``zone_name`` to UTC epoch seconds.

    Returns ``(utc_s, ok)``; ``ok`` is False for local times that are ambiguous or do not exist
    (a daylight-saving change).
    """
    return _in_chunks(_local_to_utc_rows, np.asarray(naive_s, dtype=np.int64), zone_name)


def _local_to_utc_rows(naive_s: np.ndarray, zone_name: str) -> tuple[np.ndarray, np.ndarray]:
    zone = _zone(zone_name)
    ok = np.ones(len(naive_s), dtype=bool)
    if not len(naive_s):
        return naive_s.copy(), ok
    days, inverse = _distinct(naive_s // _DAY_S)
    day_offset = np.zeros(len(days), dtype=np.int64)
    uniform = np.ones(len(days), dtype=bool)
    for i, day in enumerate(days.tolist()):
        start = _EPOCH + timedelta(days=day)
        end = start + timedelta(seconds=_DAY_S - 1)
        seen = {_local_offset(t, zone, fold) for t in (start, end) for fold in (0, 1)}
        if len(seen) == 1:
            day_offset[i] = seen.pop()
        else:
            uniform[i] = False
    offset = day_offset[inverse]
    for j in np.flatnonzero(~uniform[inverse]).tolist():
        moment = _EPOCH + timedelta(seconds=int(naive_s[j]))
        first, second = _local_offset(moment, zone, 0), _local_offset(moment, zone, 1)
        offset[j] = first
        ok[j] = first == second
    return naive_s - offset, ok


def utc_offsets(utc_s: np.ndarray, zone_name: str) -> np.ndarray:
    """UTC offset (seconds) of ``zone_name`` at each UTC epoch second.

    Raises ``ValueError`` for instants outside years 1..9999, in UTC or in the zone.
    """
    zone = _zone(zone_name)
    utc_s = np.asarray(utc_s, dtype=np.int64)
    if not len(utc_s):
        return utc_s.copy()
    if utc_s.min() < _YEAR_1 or utc_s.max() >= _YEAR_10000:
        raise ValueError(_OUTSIDE)
    days, inverse = _distinct(utc_s // _DAY_S)
    day_offset = np.zeros(len(days), dtype=np.int64)
    uniform = np.ones(len(days), dtype=bool)

    def offset_at(t: int) -> int:
        moment = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=t)
        try:
            return int(moment.astimezone(zone).utcoffset().total_seconds())
        except OverflowError:  # the zone's date is in year 0 or 10000
            raise ValueError(_OUTSIDE) from None

    for i, day in enumerate(days.tolist()):
        first, last = offset_at(day * _DAY_S), offset_at(day * _DAY_S + _DAY_S - 1)
        day_offset[i] = first
        uniform[i] = first == last
    offset = day_offset[inverse]
    for j in np.flatnonzero(~uniform[inverse]).tolist():
        offset[j] = offset_at(int(utc_s[j]))
    return offset


_OFFSET = re.compile(r"[+-]([0-9]{2}):?([0-9]{2})")


def parse_offset(text: str) -> int | None:
    """Seconds east of UTC for ``Z``, ``+HH:MM`` or ``+HHMM``; None if not a valid offset."""
    if text == "Z":
        return 0
    match = _OFFSET.fullmatch(text)
    if match is None:
        return None
    hours, minutes = int(match[1]), int(match[2])
    if hours > 23 or minutes > 59:
        return None
    seconds = hours * 3600 + minutes * 60
    return -seconds if text[0] == "-" else seconds


def format_offset(seconds: int, colon: bool = True) -> str:
    """``+HH:MM`` (or ``+HHMM``) for an offset in whole minutes."""
    sign = "-" if seconds < 0 else "+"
    hours, minutes = divmod(abs(int(seconds)) // 60, 60)
    return f"{sign}{hours:02d}{':' if colon else ''}{minutes:02d}"


# ---------------------------------------------------------------------------------- durations

_TWO_DIGITS = jt.strings([f"{i:02d}" for i in range(60)])


def parse_hms(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parse ``H+:MM:SS`` strings (1 to 12 hour digits). Returns ``(seconds, ok, hour_digits)``
    per value (``hour_digits`` is the length before ``:MM:SS``, meaningful where ``ok``)."""
    out = (np.empty(len(arr), np.int64), np.empty(len(arr), bool), np.empty(len(arr), np.int64))
    for start, piece in row_pieces(arr):
        for whole, part in zip(out, _parse_hms_rows(piece)):
            whole[start:start + len(piece)] = part
    return out


_HMS_TAIL = np.arange(-6, 0)  # ":MM:SS", the last six bytes


def _parse_hms_rows(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``HMS_PATTERN`` on the string bytes with numpy: the fixed ``:MM:SS`` tail, then the hour
    digits right to left."""
    n = len(arr)
    offsets, data = jt.string_buffers(arr)
    end = offsets[1:].astype(np.int64)
    hour_digits = end - offsets[:-1] - 6
    ok = (hour_digits >= 1) & (hour_digits <= 12)
    valid = jt.validity(arr)
    if valid is not None:
        ok &= valid
    seconds = np.zeros(n, dtype=np.int64)
    if not ok.any():
        return seconds, ok, hour_digits
    at = np.where(ok, end, 7)  # rows that cannot match look at valid bytes too
    tail = data[at[:, None] + _HMS_TAIL]
    digit = tail - np.uint8(48)  # a byte below '0' wraps to over 9
    ok &= (tail[:, 0] == 58) & (tail[:, 3] == 58)  # ':'
    ok &= (digit[:, 1] <= 5) & (digit[:, 2] <= 9) & (digit[:, 4] <= 5) & (digit[:, 5] <= 9)
    d = digit.astype(np.int64)
    total = d[:, 1] * 600 + d[:, 2] * 60 + d[:, 4] * 10 + d[:, 5]
    for k in range(int(hour_digits[ok].max(initial=0))):  # hour digit k, from the right
        has = ok & (hour_digits > k)
        value = data[np.where(has, at - 7 - k, 0)] - np.uint8(48)
        ok &= ~has | (value <= 9)
        total += np.where(has, value, 0).astype(np.int64) * (3600 * 10 ** k)
    seconds[ok] = total[ok]
    return seconds, ok, hour_digits


def format_hms(seconds: np.ndarray, hour_width: int = 2) -> pa.Array:
    """Non-negative seconds as ``HH:MM:SS`` (hours zero-padded to ``hour_width`` digits)."""
    seconds = np.asarray(seconds, dtype=np.int64)
    hours = pc.cast(pa.array(seconds // 3600), pa.string())
    if hour_width > 1:
        hours = pc.utf8_lpad(hours, hour_width, "0")
    minutes = _TWO_DIGITS.take(pa.array(seconds % 3600 // 60))
    secs = _TWO_DIGITS.take(pa.array(seconds % 60))
    return pc.binary_join_element_wise(hours, minutes, secs, ":")


def format_integers(values: np.ndarray) -> pa.Array:
    """Integers as decimal strings."""
    return pc.cast(pa.array(np.asarray(values, dtype=np.int64)), pa.string())


def format_instants(utc_s: np.ndarray, fmt: dict, zone_name: str) -> pa.Array:
    """Format UTC epoch seconds in a recorded text format (``{"format": "epoch"|"local"|"iso", ...}``)."""
    kind = fmt.get("format", "epoch")
    utc_s = np.asarray(utc_s, dtype=np.int64)
    if kind == "epoch":
        return format_integers(utc_s)
    if kind == "local":
        return matrix_strings(format_datetime_matrix(utc_s + utc_offsets(utc_s, zone_name)))
    separator = fmt.get("separator", "T")
    fixed = fmt.get("offset")
    if fixed is not None:
        offset_s = parse_offset(fixed)
        base = matrix_strings(format_datetime_matrix(utc_s + offset_s, separator))
        return pc.binary_join_element_wise(base, pa.scalar(fixed), "")
    offsets = utc_offsets(utc_s, zone_name)
    base = matrix_strings(format_datetime_matrix(utc_s + offsets, separator))
    distinct, inverse = np.unique(offsets, return_inverse=True)
    suffix = pa.array([format_offset(o) for o in distinct.tolist()], pa.string()).take(inverse)
    return pc.binary_join_element_wise(base, suffix, "")


def format_durations(seconds: np.ndarray, fmt: dict) -> pa.Array:
    """Format durations in a recorded text format (``{"format": "seconds"|"hms", ...}``)."""
    if fmt.get("format", "seconds") == "hms":
        return format_hms(seconds, fmt.get("hour_width", 2))
    return format_integers(seconds)
