"""Interpret the SWF header's ``StartTime``/``EndTime`` (``date(1)`` style) as UTC epoch seconds."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_DATE = re.compile(r"^\s*[A-Za-z]{3}\s+([A-Za-z]{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})"
                   r"\s+([A-Za-z][A-Za-z0-9+-]*)\s+(\d{4})\s*$")
_MONTHS = {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}


def zone(name: str | None) -> ZoneInfo | None:
    """The IANA zone ``name`` or None when absent/unknown."""
    if not name:
        return None
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        return None


def parse_date(text: str, zone_name: str | None = None, tz_offset_s: int | None = None) -> int | None:
    """Epoch seconds of ``Fri Jul 14 11:40:00 JST 2017``, or None when it cannot be interpreted.

    The abbreviation picks the fold in ``zone_name`` (``TimeZoneString``); without a zone, UTC/GMT
    are understood, else the deprecated ``TimeZone`` offset (seconds east of UTC) is used.
    """
    m = _DATE.match(text or "")
    if not m:
        return None
    month = _MONTHS.get(m.group(1).lower())
    if month is None:
        return None
    try:
        naive = datetime(int(m.group(7)), month, int(m.group(2)), int(m.group(3)),
                         int(m.group(4)), int(m.group(5)))
    except ValueError:
        return None
    abbr = m.group(6).upper()
    tz = zone(zone_name)
    if tz is not None:
        candidates = [naive.replace(tzinfo=tz, fold=f) for f in (0, 1)]
        for dt in candidates:
            if (dt.tzname() or "").upper() == abbr:
                return int(dt.timestamp())
        if abbr not in ("UTC", "GMT"):
            return int(candidates[0].timestamp())
    if abbr in ("UTC", "GMT"):
        return int(naive.replace(tzinfo=timezone.utc).timestamp())
    if tz_offset_s is not None:
        return int((naive - timedelta(seconds=tz_offset_s)).replace(tzinfo=timezone.utc).timestamp())
    return None
