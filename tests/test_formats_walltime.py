"""The one walltime rule (``swftools.formats.walltime``): reconcile and the stamp cross-check."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import InputError
from swftools.formats.walltime import check_stamps, reconcile
from tests.strategies import walltime_columns


@given(walltime_columns())
def test_reconcile_follows_the_rule(columns):
    start, finish, recorded = columns
    wall, kept, largest = reconcile(start, finish, recorded)
    recorded = recorded or [None] * len(start)
    diffs = []
    for s, f, r, w, k in zip(start, finish, recorded, wall, kept):
        if s is not None and f is not None and f >= s:
            assert w == f - s  # walltime-arithmetic holds wherever it can
            assert k == (r if r is not None and r != f - s else None)
            if k is not None:
                diffs.append(abs(r - (f - s)))
        else:
            assert (w, k) == (r, None)  # the log's own figure when the arithmetic is not there
    assert largest == max(diffs, default=0)


@given(walltime_columns())
def test_reconcile_gives_the_same_in_every_column_kind(columns):
    start, finish, recorded = columns
    want = reconcile(start, finish, recorded)

    def arrow(values):
        return None if values is None else pa.array(values, pa.int64())

    def masked(values):
        if values is None:
            return None
        return np.ma.MaskedArray([v or 0 for v in values], mask=[v is None for v in values],
                                 dtype=np.int64)

    got = reconcile(arrow(start), arrow(finish), arrow(recorded))
    assert [got[0].to_pylist(), got[1].to_pylist(), got[2]] == list(want)
    got = reconcile(masked(start), masked(finish), masked(recorded))
    assert [[None if m else int(v) for v, m in zip(c.data, np.ma.getmaskarray(c))]
            for c in got[:2]] + [got[2]] == list(want)


def test_reconcile_keeps_the_recorded_figure_only_where_it_differs():
    assert reconcile([0, 10, None, 5], [10, 20, 7, 3], [10, 12, 7, None]) == \
        ([10, 10, 7, None], [None, 12, None, None], 2)


def test_a_job_that_ends_when_it_starts_ran_zero_seconds():
    """finish == start is a walltime of 0 (the arithmetic holds), not a missing one."""
    assert reconcile([100, 100], [100, 100], [5, None]) == ([0, 0], [5, None], 5)


def test_reconcile_refuses_columns_of_different_lengths():
    with pytest.raises(ValueError, match="start times"):
        reconcile([1, 2], [3], None)


@settings(max_examples=60)
@given(st.lists(st.integers(0, 4_000_000_000), min_size=1, max_size=10),
       st.integers(-56, 56).filter(bool), st.integers(-300, 300), st.data())
def test_check_stamps_catches_a_whole_number_of_quarter_hours(epochs, quarters, slack, data):
    """A record stamp off by a non-zero whole number of quarter hours (+/- a few minutes of
    writing delay) is a time-zone error located at its line; small delays pass."""
    lines = [10 + i for i in range(len(epochs))]
    delays = data.draw(st.lists(st.integers(0, 120), min_size=len(epochs), max_size=len(epochs)))
    stamps = [e + d for e, d in zip(epochs, delays)]
    check_stamps("log", lines, stamps, epochs, "end")  # in zone: no error
    bad = data.draw(st.integers(0, len(epochs) - 1))
    shifted = list(stamps)
    shifted[bad] = epochs[bad] + quarters * 900 + slack
    with pytest.raises(InputError) as info:
        check_stamps("log", lines, shifted, epochs, "end", zone="UTC")
    assert info.value.line == lines[bad] and info.value.field == "end"
    assert "time-zone error" in str(info.value) and "--tz" in str(info.value)


def test_check_stamps_names_the_zone_that_fixes_it():
    # read in UTC, the stamps are 9 hours ahead of the end= epochs: a UTC+09:00 site
    with pytest.raises(InputError, match=r"Etc/GMT-9"):
        check_stamps("log", [3], [1_000_000 + 9 * 3600 + 2], [1_000_000], "end", zone="UTC")
    # read in Asia/Tokyo, they are 9 hours behind: the stamps were UTC
    with pytest.raises(InputError, match=r"--tz UTC"):
        check_stamps("log", [3], [1_000_000 - 9 * 3600], [1_000_000], "end", zone="Asia/Tokyo")


def test_check_stamps_skips_unknown_values_and_other_differences():
    check_stamps("log", [1, 2, 3], [None, 5000, 100], [7200, None, 100 + 1800 + 400], "end")


# -- reconcile: column kinds and integer arithmetic ---------------------------------------------

@pytest.mark.parametrize("position", [0, 1, 2])
def test_any_arrow_column_makes_the_results_arrow(position):
    """Arrow if any input is Arrow, else numpy if any is numpy: whichever argument it is."""
    columns = [[0, 10], [10, 25], [12, None]]
    for kind, make, check in (
            ("arrow", lambda c: pa.array(c, pa.int64()), lambda r: isinstance(r, pa.Array)),
            ("numpy", lambda c: np.ma.MaskedArray([v or 0 for v in c],
                                                  mask=[v is None for v in c], dtype=np.int64),
             lambda r: isinstance(r, np.ma.MaskedArray))):
        given_ = list(columns)
        given_[position] = make(given_[position])
        wall, kept, largest = reconcile(*given_)
        assert check(wall) and check(kept), kind
        assert (wall.tolist() if kind == "numpy" else wall.to_pylist()) == [10, 15]
        assert (kept.tolist() if kind == "numpy" else kept.to_pylist()) == [12, None]
        assert largest == 2


def test_the_results_are_int64_in_every_kind():
    wall, kept, _ = reconcile(pa.array([0, None]), pa.array([5, 7]), pa.array([6, 7]))
    assert wall.type == kept.type == pa.int64()
    wall, kept, _ = reconcile(np.ma.MaskedArray([0, 1], mask=[False, True]),
                              np.ma.MaskedArray([5, 7]), None)
    assert wall.dtype == kept.dtype == np.int64


@pytest.mark.parametrize("kind", ["list", "numpy", "masked", "arrow"])
def test_reconcile_is_exact_integer_arithmetic(kind):
    """No float on the way: epoch values past 2**53 (garbage a log can hold) stay exact."""
    big = 2**62
    start, finish, recorded = [big, 0], [big + 3, big + 1], [big + 1, None]
    make = {"list": lambda c: c,
            "numpy": lambda c: np.array([v or 0 for v in c], np.int64),
            "masked": lambda c: np.ma.MaskedArray([v or 0 for v in c],
                                                  mask=[v is None for v in c], dtype=np.int64),
            "arrow": lambda c: pa.array(c, pa.int64())}[kind]
    wall, _, largest = reconcile(make(start), make(finish),
                                    None if kind == "numpy" else make(recorded))
    values = wall.to_pylist() if kind == "arrow" else [int(v) for v in wall]
    assert values == [3, big + 1]
    if kind != "numpy":
        assert largest == big - 2


@pytest.mark.parametrize("masked", [False, True])
def test_unsigned_columns_still_see_a_finish_before_the_start(masked):
    """A reader's narrow unsigned column: 5 - 10 is -5 (not a walltime), not 2**32 - 5."""
    start, finish = np.array([10, 0], np.uint32), np.array([5, 4], np.uint32)
    if masked:
        start, finish = np.ma.MaskedArray(start), np.ma.MaskedArray(finish)
    wall, _, _ = reconcile(start, finish, [7, None])
    assert [None if m else int(v) for v, m in zip(wall.data, np.ma.getmaskarray(wall))] == [7, 4]


def test_empty_columns_give_empty_results():
    assert reconcile([], [], None) == ([], [], 0)
    wall, kept, largest = reconcile(np.array([], np.int64), np.array([], np.int64), None)
    assert len(wall) == len(kept) == largest == 0


def test_reconcile_refuses_a_recorded_column_of_another_length():
    with pytest.raises(ValueError, match="2 start times but 1 recorded walltimes"):
        reconcile([1, 2], [3, 4], [5])
    with pytest.raises(ValueError, match="2 start times but 1 finish times"):
        reconcile([1, 2], [3], None)


# -- check_stamps: the message, the boundaries, the zone hint -----------------------------------

E = 1_000_000  # an end= epoch


def _error(stamp: int, zone: str | None = "UTC", epoch: int = E) -> InputError:
    with pytest.raises(InputError) as info:
        check_stamps("acct/20250309", [41], [stamp], [epoch], "end", zone=zone)
    return info.value


def test_check_stamps_says_where_by_how_much_and_which_zone_reads_it():
    error = _error(E + 9 * 3600 + 2)
    assert (error.path, error.line, error.field, error.value) == ("acct/20250309", 41, "end",
                                                                  str(E))
    assert error.message == ("the record's time stamp read in UTC is 32402 s (09:00 h) after its "
                             "end= epoch 1000000: a time-zone error")
    assert error.expected == ("the stamps are local times of a zone at UTC+09:00: give --tz "
                              "with the site's IANA zone, or --tz Etc/GMT-9")


def test_a_stamp_behind_its_epoch_and_no_zone_named():
    error = _error(E - 5 * 3600 - 1800 - 7, zone=None)
    assert error.message == ("the record's time stamp is 19807 s (05:30 h) before its end= "
                             "epoch 1000000: a time-zone error")
    assert error.expected == ("the stamps are local times of a zone at UTC-05:30: give --tz "
                              "with the site's IANA zone")


def test_the_hint_for_a_west_zone_and_for_utc():
    assert _error(E - 5 * 3600).expected.endswith("at UTC-05:00: give --tz with the site's "
                                                  "IANA zone, or --tz Etc/GMT+5")
    # read in UTC+09:00, 9 h behind: the stamps were UTC
    assert _error(E - 9 * 3600, zone="Asia/Tokyo").expected == (
        "the stamps are local times of a zone at UTC+00:00: --tz UTC")


def test_an_unknown_zone_name_is_taken_as_utc_in_the_hint():
    assert _error(E + 3600, zone="Mars/Olympus").expected.endswith("Etc/GMT-1")


def test_the_hint_uses_the_zone_offset_at_the_stamp_across_a_dst_switch():
    """Tokyo stamps (UTC+09:00) read in America/Denver on the day it springs forward: the
    epoch (00:30 UTC) falls in MST (-07:00) but the stamp as read in MDT (-06:00)."""
    epoch = 1_741_480_200  # 2025-03-09T00:30:00Z; Denver switches at 09:00Z
    stamp = epoch + 15 * 3600  # 09:30 local read as MDT: 15:30Z
    assert _error(stamp, zone="America/Denver", epoch=epoch).expected.endswith(
        "at UTC+09:00: give --tz with the site's IANA zone, or --tz Etc/GMT-9")


@pytest.mark.parametrize("diff,flagged", [
    (26 * 3600, True), (-26 * 3600 + 300, True), (26 * 3600 + 900, False),  # the widest offset
    (3600 + 300, True), (3600 - 300, True), (3600 + 301, False), (3600 - 301, False),  # slack
    (600, True), (599, False), (-600, True), (0, False)])
def test_check_stamps_boundaries(diff, flagged):
    """Offsets up to 26 h, give or take STAMP_SLACK_S (300 s) of writing delay."""
    if flagged:
        assert _error(E + diff).line == 41
    else:
        check_stamps("log", [41], [E + diff], [E], "end", zone="UTC")


def test_check_stamps_refuses_columns_of_different_lengths():
    with pytest.raises(ValueError, match="2 lines, 1 record stamps, 2 epochs"):
        check_stamps("log", [1, 2], [5], [5, 6], "end")


def test_check_stamps_takes_plain_numpy_arrays():
    check_stamps("log", [1, 2], np.array([5, 6]), np.array([5, 6 + 60]), "end")
    with pytest.raises(InputError):
        check_stamps("log", [1, 2], np.array([5, 6 + 7200]), np.array([5, 6]), "end")
