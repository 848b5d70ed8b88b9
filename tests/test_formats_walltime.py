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
