"""The time zone of formats whose times are local without a zone (Slurm sacct, PBS record
stamps): ``--tz``, else the site's time zone, else UTC, which is assumed aloud: a reader that
names its file gets an ``AssumedTimeZoneWarning`` (the CLI prints ``swftools: warning: ...``)."""

from __future__ import annotations

import warnings
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pyarrow as pa

from swftools.errors import UsageError
from swftools.metadata import TableMetadata
from swftools.site import Site, resolve_site

DEFAULT_TIME_ZONE = "UTC"


class AssumedTimeZoneWarning(UserWarning):
    """A file's local times were read in UTC because no zone was given (no ``--tz``, no site)."""


def time_zone_of(site: Site | str | Path | None, tz: str | None, *,
                 source: str | Path | None = None) -> tuple[Site | None, str]:
    """(the site, the IANA time zone local times are read in); an unknown ``tz`` is a
    ``UsageError``. With neither ``tz`` nor a site the zone is UTC, assumed: a reader passes
    its file as ``source`` to have that said once (``AssumedTimeZoneWarning``)."""
    site_obj = resolve_site(site) if site is not None else None
    if tz:
        try:
            ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"unknown time zone {tz!r} (an IANA name such as Asia/Tokyo)") from None
        return site_obj, tz
    if site_obj is None and source is not None:
        warnings.warn(f"{source}: times have no zone; taken as {DEFAULT_TIME_ZONE} "
                      "(use --tz ZONE)", AssumedTimeZoneWarning, stacklevel=2)
    return site_obj, site_obj.time_zone if site_obj else DEFAULT_TIME_ZONE


def zone_note(table: pa.Table, site: Site | str | Path | None, zone: str) -> list[str]:
    """The loss line when the table's own time zone is not the one written."""
    own = TableMetadata.from_table(table).time_zone
    if own is None:
        site_obj = resolve_site(site, table)
        own = site_obj.time_zone if site_obj else None
    if own and own != zone:
        return [f"times written as {zone} local times: the table's time zone {own} is in no "
                f"column of this format (write with --tz {own} for site-local times, and read "
                "back with the same --tz)"]
    return []
