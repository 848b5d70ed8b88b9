"""``formats.localtime``: which zone local times without one are read in, and what a writer
says when the table's own zone is not the one it writes."""

from __future__ import annotations

import warnings

import pytest

from swftools import table as jt
from swftools.errors import UsageError
from swftools.formats.localtime import (DEFAULT_TIME_ZONE, AssumedTimeZoneWarning, time_zone_of,
                                        zone_note)
from swftools.metadata import TableMetadata
from swftools.site import preset


def _quiet(site, tz, source=None):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = time_zone_of(site, tz, source=source)
    return result, caught


def test_tz_wins_over_the_site_and_is_said_nothing_about():
    (site, zone), caught = _quiet("aaic", "Europe/Paris", source="log")
    assert site == preset("aaic") and zone == "Europe/Paris"
    assert caught == []


def test_the_site_zone_without_tz():
    (site, zone), caught = _quiet("aaic", None, source="log")
    assert site == preset("aaic") and zone == "Asia/Tokyo"
    assert caught == []


def test_utc_assumed_aloud_only_for_a_named_file():
    assert DEFAULT_TIME_ZONE == "UTC"
    (site, zone), caught = _quiet(None, None)
    assert (site, zone) == (None, "UTC") and caught == []
    (site, zone), caught = _quiet(None, "", source="jobs.sacct")
    assert (site, zone) == (None, "UTC")
    assert [w.category for w in caught] == [AssumedTimeZoneWarning]
    assert str(caught[0].message) == ("jobs.sacct: times have no zone; taken as UTC "
                                      "(use --tz ZONE)")


def test_the_warning_points_at_the_reader_that_asked():
    """``stacklevel=2``: the warning names the caller's line (here this file, or the mutation
    tool's trampoline in between), not this module's."""
    (_, _), caught = _quiet(None, None, source="f")
    assert not caught[0].filename.endswith("formats/localtime.py")
    if "mutmut" not in caught[0].filename:  # uninstrumented: exactly this line's file
        assert caught[0].filename == __file__


@pytest.mark.parametrize("tz", ["Mars/Olympus", "not a zone", "../etc/passwd"])
def test_an_unknown_zone_is_a_usage_error(tz):
    with pytest.raises(UsageError) as err:
        time_zone_of(None, tz)
    assert str(err.value) == f"unknown time zone {tz!r} (an IANA name such as Asia/Tokyo)"
    assert err.value.__cause__ is None and err.value.__suppress_context__


def _table(**meta):
    return TableMetadata(**meta).to_table(jt.from_columns({"job_id": [1]}))


def test_zone_note_when_the_tables_own_zone_is_not_written():
    [note] = zone_note(_table(time_zone="Asia/Tokyo"), None, "UTC")
    assert note == ("times written as UTC local times: the table's time zone Asia/Tokyo is in "
                    "no column of this format (write with --tz Asia/Tokyo for site-local times, "
                    "and read back with the same --tz)")
    assert zone_note(_table(time_zone="Asia/Tokyo"), None, "Asia/Tokyo") == []


def test_zone_note_falls_back_to_the_site_zone():
    assert zone_note(_table(), "aaic", "Asia/Tokyo") == []
    [note] = zone_note(_table(), "aaic", "UTC")
    assert "the table's time zone Asia/Tokyo" in note
    [note] = zone_note(_table(site="aaic"), None, "Europe/Paris")
    assert "the table's time zone Asia/Tokyo" in note
    # the table's own zone wins over its site's
    [note] = zone_note(_table(site="aaic", time_zone="Europe/Paris"), None, "UTC")
    assert "the table's time zone Europe/Paris" in note


def test_no_note_when_no_zone_is_known():
    assert zone_note(_table(), None, "UTC") == []
