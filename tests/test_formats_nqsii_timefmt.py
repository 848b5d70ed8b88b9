"""Whole-column time and duration text conversion, checked against Python's datetime/zoneinfo."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from swftools.formats.nqsii.timefmt import (
    describe_formats,
    format_datetime_matrix,
    format_hms,
    format_offset,
    local_to_utc,
    matrix_strings,
    parse_datetime_matrix,
    parse_datetimes,
    parse_hms,
    parse_offset,
    string_matrix,
    utc_offsets,
)

FIRST_S, LAST_S = -62_135_596_800, 253_402_300_799  # 0001-01-01 .. 9999-12-31 23:59:59
EPOCH = datetime(1970, 1, 1)
ZONES = ["Asia/Tokyo", "America/New_York", "Europe/London", "Australia/Lord_Howe", "UTC"]
seconds_lists = st.lists(st.integers(FIRST_S, LAST_S), min_size=1, max_size=40)
modern_lists = st.lists(st.integers(0, 2_200_000_000), min_size=1, max_size=40)


def _civil(seconds: int, separator: str = " ") -> str:
    t = EPOCH + timedelta(seconds=seconds)
    return (f"{t.year:04d}-{t.month:02d}-{t.day:02d}{separator}"
            f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}")


@given(seconds_lists, st.sampled_from([" ", "T"]))
def test_datetime_format_matches_python_and_parses_back(values, separator):
    matrix = format_datetime_matrix(np.array(values), separator)
    texts = matrix_strings(matrix).to_pylist()
    assert texts == [_civil(v, separator) for v in values]
    parsed, ok = parse_datetime_matrix(string_matrix(matrix_strings(matrix), 19), b" T")
    assert ok.all() and parsed.tolist() == values


datetime_like = st.builds(
    lambda y, mo, d, h, mi, s, sep: f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{s:02d}",
    st.integers(0, 9999), st.integers(0, 19), st.integers(0, 39), st.integers(0, 29),
    st.integers(0, 69), st.integers(0, 69), st.sampled_from([" ", "T", "x"]))


def _python_accepts(text: str) -> bool:
    try:
        datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return False
    return len(text) == 19


@given(st.lists(datetime_like, min_size=1, max_size=40))
def test_datetime_parser_accepts_exactly_the_real_calendar(texts):
    matrix = np.frombuffer("".join(texts).encode(), dtype=np.uint8).reshape(-1, 19)
    parsed, ok = parse_datetime_matrix(matrix)
    assert ok.tolist() == [_python_accepts(t) for t in texts]
    for text, value, good in zip(texts, parsed.tolist(), ok.tolist()):
        if good:
            assert value == (datetime.strptime(text, "%Y-%m-%d %H:%M:%S") - EPOCH) // timedelta(seconds=1)


@given(modern_lists, st.sampled_from(ZONES))
def test_utc_offsets_match_zoneinfo(values, zone):
    expected = [int(datetime.fromtimestamp(v, ZoneInfo(zone)).utcoffset().total_seconds())
                for v in values]
    assert utc_offsets(np.array(values), zone).tolist() == expected


@given(modern_lists, st.sampled_from(ZONES))
def test_local_to_utc_matches_zoneinfo(naive_values, zone):
    utc, ok = local_to_utc(np.array(naive_values), zone)
    for naive, got, good in zip(naive_values, utc.tolist(), ok.tolist()):
        local = EPOCH + timedelta(seconds=naive)
        first = local.replace(tzinfo=ZoneInfo(zone), fold=0)
        second = local.replace(tzinfo=ZoneInfo(zone), fold=1)
        assert good == (first.utcoffset() == second.utcoffset())
        if good:
            assert got == int(first.timestamp())


@given(modern_lists, st.sampled_from(ZONES))
def test_local_time_round_trip(values, zone):
    """UTC -> local wall clock -> UTC is the identity except where the wall clock repeats."""
    utc = np.array(values)
    back, ok = local_to_utc(utc + utc_offsets(utc, zone), zone)
    assert (back[ok] == utc[ok]).all()
    if zone in ("Asia/Tokyo", "UTC"):
        assert ok.all()



@given(st.lists(datetime_like, min_size=1, max_size=40), st.integers(1, 5),
       st.sampled_from([" ", "T"]))
@example(["0000-01-01 00:00:00"], 1, " ")  # year 0: Arrow's cast takes it, the calendar does not
@example(["2018-02-29 00:00:00", "2016-02-29 00:00:00"], 2, " ")
def test_datetime_column_parser_agrees_with_the_matrix_parser(texts, pieces, separator):
    """parse_datetimes (layout by numpy, calendar by Arrow) gives the matrix parser's seconds when
    every value is a real date-time with ``separator``, else None, whatever the chunking."""
    import pyarrow as pa

    matrix = np.frombuffer("".join(texts).encode(), dtype=np.uint8).reshape(-1, 19)
    expected, ok = parse_datetime_matrix(matrix, separator.encode())
    size = -(-len(texts) // pieces)
    column = pa.chunked_array([pa.array(texts[i:i + size]) for i in range(0, len(texts), size)])
    got = parse_datetimes(column, separator.encode())
    if ok.all():
        assert got is not None and got.tolist() == expected.tolist()
    else:
        assert got is None


hms_like = st.one_of(st.from_regex(r"\A[0-9]{0,14}:[0-9]{1,2}:[0-9]{1,3}\Z"),
                     st.text(alphabet="0123456789:+- x", max_size=18), st.none())


@given(st.lists(hms_like, min_size=1, max_size=30), st.integers(1, 4))
@example(["123456789012:59:59", "1234567890123:00:00", None, ":00:00"], 2)
def test_hms_parser_is_the_pattern(texts, pieces):
    """parse_hms accepts exactly HMS_PATTERN's texts (nulls never), in any chunking, and
    gives their seconds and hour digits."""
    import re

    import pyarrow as pa

    from swftools.formats.nqsii.timefmt import HMS_PATTERN

    size = -(-len(texts) // pieces)
    column = pa.chunked_array([pa.array(texts[i:i + size], pa.string())
                               for i in range(0, len(texts), size)])
    seconds, ok, hour_digits = parse_hms(column)
    for text, value, good, digits in zip(texts, seconds.tolist(), ok.tolist(),
                                         hour_digits.tolist()):
        assert good == (text is not None and re.search(HMS_PATTERN, text) is not None), text
        if good:
            h, m, s = text.split(":")
            assert (value, digits) == (int(h) * 3600 + int(m) * 60 + int(s), len(h))

@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=40), st.sampled_from([1, 2]))
def test_hms_format_matches_python_and_parses_back(values, width):
    texts = format_hms(np.array(values), width).to_pylist()
    assert texts == [f"{v // 3600:0{width}d}:{v % 3600 // 60:02d}:{v % 60:02d}" for v in values]
    seconds, ok, hour_digits = parse_hms(format_hms(np.array(values), width))
    assert ok.all() and seconds.tolist() == values
    assert hour_digits.tolist() == [len(t.split(":")[0]) for t in texts]


@given(st.lists(st.from_regex(r"\A[0-9]{0,3}:?[0-9]{1,2}:[0-9]{1,2}\Z"), min_size=1, max_size=20))
def test_hms_parser_rejects_what_is_not_hh_mm_ss(texts):
    import pyarrow as pa

    _, ok, _ = parse_hms(pa.array(texts))
    for text, good in zip(texts, ok.tolist()):
        parts = text.split(":")
        valid = (len(parts) == 3 and parts[0] != "" and len(parts[1]) == 2 and len(parts[2]) == 2
                 and int(parts[1]) < 60 and int(parts[2]) < 60)
        assert good == valid


@given(st.integers(-(23 * 60 + 59), 23 * 60 + 59).map(lambda m: m * 60), st.booleans())
def test_offset_format_parses_back(offset_s, colon):
    text = format_offset(offset_s, colon)
    assert parse_offset(text) == offset_s
    assert text == datetime(2020, 1, 1, tzinfo=timezone(timedelta(seconds=offset_s))).strftime(
        "%z")[:3] + (":" if colon else "") + datetime(
        2020, 1, 1, tzinfo=timezone(timedelta(seconds=offset_s))).strftime("%z")[3:]


def test_offset_parser_rejects_nonsense():
    assert parse_offset("Z") == 0
    assert [parse_offset(t) for t in ("+24:00", "+09:60", "09:00", "+9:00", "+09:00:00", "")] == [
        None] * 6


def test_format_descriptions_follow_the_canonical_order():
    assert describe_formats(("iso", "local", "epoch")) == (
        "UNIX seconds, YYYY-MM-DD HH:MM:SS local time, or ISO 8601 with offset")
    assert describe_formats(("hms", "seconds")) == "seconds or HH:MM:SS"
    assert describe_formats(("epoch",)) == "UNIX seconds"


DST_DAYS = {  # local dates on which the zone's offset changes
    "America/New_York": ["2018-03-11", "2018-11-04"],
    "Europe/London": ["2018-03-25", "2018-10-28"],
    "Australia/Lord_Howe": ["2018-04-01", "2018-10-07"],  # a 30-minute shift
}
dst_cases = st.sampled_from([(z, d) for z, days in DST_DAYS.items() for d in days])


@given(dst_cases, st.lists(st.integers(0, 86_399), min_size=1, max_size=40))
def test_conversions_on_daylight_saving_days_match_zoneinfo(case, seconds_of_day):
    zone, day = case
    day_start = (datetime.fromisoformat(day) - EPOCH) // timedelta(seconds=1)
    naive = [day_start + s for s in seconds_of_day]
    test_local_to_utc_matches_zoneinfo.hypothesis.inner_test(naive, zone)
    utc = [n - 3 * 3600 for n in naive] + [n + 3 * 3600 for n in naive]
    test_utc_offsets_match_zoneinfo.hypothesis.inner_test(utc, zone)


@given(st.lists(st.integers(0, 2_200_000_000), min_size=1, max_size=40),
       st.lists(st.from_regex(r"\A[0-9]{0,3}:?[0-9]{1,2}:[0-9]{1,2}\Z"), min_size=1, max_size=20),
       st.sampled_from(ZONES), st.integers(1, 7))
def test_row_chunks_give_the_same_results(values, hms_texts, zone, chunk):
    """The row-wise parsers work CHUNK_ROWS rows at a time (memory on 10-million-row logs):
    any chunk size gives what one pass gives, valid rows and rejected rows alike."""
    import pyarrow as pa
    import pytest

    from swftools.formats.nqsii import timefmt

    matrix = string_matrix(matrix_strings(format_datetime_matrix(np.array(values))), 19).copy()
    matrix[::3, 5] = ord("x")  # some rows are not date-times
    whole = (parse_datetime_matrix(matrix), local_to_utc(np.array(values), zone),
             parse_hms(pa.array(hms_texts)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(timefmt, "CHUNK_ROWS", chunk)
        parts = (parse_datetime_matrix(matrix), local_to_utc(np.array(values), zone),
                 parse_hms(pa.array(hms_texts)))
    for one, chunked in zip(whole, parts):
        for a, b in zip(one, chunked):
            assert a.dtype == b.dtype and a.tolist() == b.tolist()
