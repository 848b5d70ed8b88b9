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


def _at(text: str) -> int:
    return (datetime.fromisoformat(text) - EPOCH) // timedelta(seconds=1)


# every digit's boundary: years 1000/2000/9000, month 10, day 10, 10:00:00, 00:10:00, 00:00:10
BOUNDARY_INSTANTS = [FIRST_S, LAST_S, _at("1000-01-01 00:00:00"), _at("2000-02-29 23:59:59"),
                     _at("9000-10-10 10:10:10"), _at("2001-09-09 01:46:40"),
                     _at("1999-12-31 09:59:59"), _at("2020-03-01 00:00:00")]


@given(seconds_lists, st.sampled_from([" ", "T"]))
@example(BOUNDARY_INSTANTS, " ")
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
    import re

    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}", text):
        return False  # strptime also takes ' 1' for a day
    try:
        datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return False
    return len(text) == 19


def _one_byte_off(args) -> str:
    """A valid date-time with one byte replaced (calendar, digit and separator boundaries)."""
    seconds, position, byte = args
    text = _civil(seconds)
    return text[:position] + byte + text[position + 1:]


CALENDAR_EDGES = ["1900-02-29 00:00:00", "2000-02-29 00:00:00", "2100-02-29 00:00:00",
                  "1904-02-29 00:00:00", "2020-03-01 00:00:00", "2019-03-01 00:00:00",
                  "2020-04-31 00:00:00", "2020-13-01 00:00:00", "2020-12-31 23:59:59",
                  "2020-01-01 23:60:00", "2020-01-01 23:00:60", "2020-01-01 24:00:00",
                  "2020-01-00 00:00:00", "0001-01-01 00:00:00", "0000-01-01 00:00:00",
                  "2020-0:-01 00:00:00", "2020/01-01 00:00:00", "2020-01/01 00:00:00",
                  "2020-01-01 00.00:00", "2020-01-01 00:00.00", "2020-01-01x0x:00:00",
                  "2020-01-01T00:00:00"]
one_byte_off = st.tuples(st.integers(FIRST_S, LAST_S), st.integers(0, 18),
                         st.sampled_from(list("0123456789-: T/x;"))).map(_one_byte_off)


@given(st.lists(st.one_of(datetime_like, one_byte_off, st.sampled_from(CALENDAR_EDGES)),
                min_size=1, max_size=40))
@example(CALENDAR_EDGES)
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
    got = utc_offsets(np.array(values), zone)
    assert got.dtype == np.int64 and got.tolist() == expected


def test_utc_offsets_do_not_depend_on_the_machine_zone(monkeypatch):
    import time

    # the last second before London's changes of 2018: read as New York wall clock, after them
    values = np.array([1_521_939_599, 1_540_688_399])
    expected = utc_offsets(values, "Europe/London").tolist()
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert utc_offsets(values, "Europe/London").tolist() == expected == [0, 3600]
    finally:
        monkeypatch.undo()
        time.tzset()


@given(st.sampled_from([{"format": "local"}, {"format": "iso", "offset": None},
                        {"format": "iso", "offset": "Z"}]), st.sampled_from(ZONES),
       st.sampled_from([LAST_S + 1, 10**12, 10**15, FIRST_S - 1]))
def test_instants_outside_years_1_to_9999_are_a_value_error(fmt, zone, value):
    """Not an OverflowError from datetime: the writers turn ValueError into a located error."""
    import pytest

    from swftools.formats.nqsii.timefmt import format_instants

    with pytest.raises(ValueError, match="outside years 1..9999"):
        format_instants(np.array([0, value]), fmt, zone)
    if fmt.get("offset") is None:
        with pytest.raises(ValueError, match="outside years 1..9999"):
            utc_offsets(np.array([value]), zone)


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
@example(["2016-02-29T23:59:59", "0001-01-01T00:00:00"], 1, "T")
@example(["9999-12-31 23:59:59", "0001-01-01 00:00:00", "1970-01-01 00:00:00"], 2, " ")
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
        assert got is not None and got.dtype == np.int64 and got.tolist() == expected.tolist()
    else:
        assert got is None


hms_like = st.one_of(st.from_regex(r"\A[0-9]{0,14}:[0-9]{1,2}:[0-9]{1,3}\Z"),
                     st.text(alphabet="0123456789:+- x", max_size=18), st.none())


@given(st.lists(hms_like, min_size=1, max_size=30), st.integers(1, 4))
@example(["123456789012:59:59", "1234567890123:00:00", None, ":00:00"], 2)
@example(["0:00:00", "1234567890123:00:00", "1:5::00", "1:00:5:", "1:00:60", "1x:00:00",
          "+1:00:00", "1:1:00:00", "10:60:00", "00:00:00"], 1)
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
    assert seconds.dtype == hour_digits.dtype == np.int64
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
    # the colon only between hours and minutes, ASCII digits, a sign first
    assert [parse_offset(t) for t in ("+0:900", "+09::00", "+09:0a", "X09:00", "X0900",
                                      "+\u0660\u0669:\u0660\u0660")] == [None] * 6
    assert [parse_offset(t) for t in ("+23:59", "-2359", "+00:00")] == [86_340, -86_340, 0]


def test_format_descriptions_follow_the_canonical_order():
    assert describe_formats(("iso", "local", "epoch")) == (
        "UNIX seconds, YYYY-MM-DD HH:MM:SS local time, or ISO 8601 with offset")
    assert describe_formats(("hms", "seconds")) == "seconds or HH:MM:SS"
    assert describe_formats(("epoch",)) == "UNIX seconds"


DST_DAYS = {  # local dates on which the zone's offset changes
    "America/New_York": ["2018-03-11", "2018-11-04"],
    "Europe/London": ["2018-03-25", "2018-10-28"],
    "Australia/Lord_Howe": ["2018-04-01", "2018-10-07"],  # a 30-minute shift
    "America/Havana": ["2018-03-11", "2018-11-04"],  # midnight skipped, 01:00 repeated
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


def test_text_formats_default_to_their_documented_forms():
    """A format without "format" is UNIX seconds (instants) or seconds (durations); iso
    without "separator" puts a T; hms without "hour_width" pads hours to two digits; a zone's
    offset is written +HH:MM."""
    from swftools.formats.nqsii.timefmt import format_durations, format_instants

    values = np.array([0, 3_661])
    assert format_instants(values, {}, "Asia/Tokyo").to_pylist() == ["0", "3661"]
    assert format_instants(values, {"format": "iso", "offset": "Z"}, "UTC").to_pylist() == [
        "1970-01-01T00:00:00Z", "1970-01-01T01:01:01Z"]
    assert format_instants(values, {"format": "iso", "separator": "T", "offset": None},
                           "Asia/Tokyo").to_pylist() == ["1970-01-01T09:00:00+09:00",
                                                         "1970-01-01T10:01:01+09:00"]
    assert format_durations(values, {}).to_pylist() == ["0", "3661"]
    assert format_durations(values, {"format": "hms"}).to_pylist() == ["00:00:00", "01:01:01"]
    assert format_hms(values).to_pylist() == ["00:00:00", "01:01:01"]
    assert format_hms(values, 1).to_pylist() == ["0:00:00", "1:01:01"]


@given(st.sampled_from([{"format": "epoch"}, {"format": "local"}, {"format": "iso"},
                        {"format": "iso", "offset": "+09:00"}]),
       st.sampled_from([{"format": "seconds"}, {"format": "hms", "hour_width": 1}]),
       st.sampled_from(ZONES))
def test_empty_columns_format_and_convert_to_empty_columns(instant_fmt, duration_fmt, zone):
    """A log without job rows: every conversion takes an empty list and gives an empty column
    (integer seconds where it gives numbers)."""
    from swftools.formats.nqsii.timefmt import format_durations, format_instants

    assert format_instants([], instant_fmt, zone).to_pylist() == []
    assert format_durations([], duration_fmt).to_pylist() == []
    assert format_hms([]).to_pylist() == []
    offsets = utc_offsets([], zone)
    assert offsets.dtype == np.int64 and offsets.tolist() == []
    assert local_to_utc([], zone)[0].dtype == np.int64


def test_null_durations_are_never_valid_whatever_bytes_they_hold():
    import pyarrow as pa

    valid = pa.py_buffer(bytes([0b01]))  # row 0 valid, row 1 null over "02:00:00"
    offsets = pa.py_buffer(np.array([0, 8, 16], np.int32).tobytes())
    column = pa.Array.from_buffers(pa.string(), 2, [valid, offsets,
                                                    pa.py_buffer(b"01:00:0002:00:00")])
    seconds, ok, _ = parse_hms(column)
    assert ok.tolist() == [True, False] and seconds[0] == 3600


def test_string_matrix_views_any_string_column():
    """Several chunks, one, none, a large_string column, a slice: the same (n, width) bytes."""
    import pyarrow as pa

    def rows(column, width=2):
        matrix = string_matrix(column, width)
        assert matrix.dtype == np.uint8 and matrix.shape == (len(column), width)
        return [bytes(r).decode() for r in matrix]

    assert rows(pa.chunked_array([["ab"], ["cd", "ef"]])) == ["ab", "cd", "ef"]
    assert rows(pa.chunked_array([["ab", "cd"]])) == ["ab", "cd"]
    assert rows(pa.chunked_array([], pa.string())) == []
    assert rows(pa.array([], pa.string()), 19) == []
    assert rows(pa.array(["ab", "cd"], pa.large_string())) == ["ab", "cd"]
    assert rows(pa.array(["ab", "cd", "ef"]).slice(1, 1)) == ["cd"]
    assert string_matrix(pa.array(["ab", "c"]), 2) is None
    assert string_matrix(pa.array(["ab", None]), 2) is None


def test_row_pieces_cover_the_column_once_in_order(monkeypatch):
    import pyarrow as pa

    from swftools.formats.nqsii import timefmt

    monkeypatch.setattr(timefmt, "CHUNK_ROWS", 2)
    for kind in (pa.string(), pa.large_string()):
        column = pa.chunked_array([pa.array(["a", "b", "c"], kind), pa.array(["d", "e"], kind)])
        pieces = list(timefmt.row_pieces(column))
        assert [(start, piece.to_pylist()) for start, piece in pieces] == [
            (0, ["a", "b"]), (2, ["c"]), (3, ["d", "e"])]
        assert all(piece.type == pa.string() for _, piece in pieces)


def test_date_time_parsers_default_to_a_space_separator():
    import pyarrow as pa

    texts = ["2020-01-01 00:00:00", "2020-01-01X00:00:00", "2020-01-01T00:00:00"]
    matrix = np.frombuffer("".join(texts).encode(), np.uint8).reshape(-1, 19)
    assert parse_datetime_matrix(matrix)[1].tolist() == [True, False, False]
    assert parse_datetimes(pa.array(texts[:1])).tolist() == [1_577_836_800]
    assert parse_datetimes(pa.array(texts[1:2])) is None


def test_utc_offsets_reach_the_first_and_last_second_of_years_1_to_9999():
    assert utc_offsets(np.array([FIRST_S, LAST_S]), "UTC").tolist() == [0, 0]
    assert utc_offsets(np.array([FIRST_S]), "Asia/Tokyo").tolist() == [
        int(datetime(1, 1, 1, tzinfo=timezone.utc).astimezone(ZoneInfo("Asia/Tokyo"))
            .utcoffset().total_seconds())]
    assert utc_offsets(np.array([LAST_S]), "America/New_York").tolist() == [-5 * 3600]
    import pytest

    with pytest.raises(ValueError, match="outside years 1..9999"):
        utc_offsets(np.array([LAST_S]), "Asia/Tokyo")  # 10000-01-01 in Tokyo
