"""Column parsers of NQSII logs: parse(format(x)) == x for every text format, located errors."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from swftools.errors import InputError
from swftools.formats.nqsii.columns import (
    FieldRef,
    describe_bad_integer,
    parse_durations,
    parse_integers,
    parse_queue_names,
    parse_timestamps,
)
from swftools.formats.nqsii.schema import resolve_site
from swftools.formats.nqsii.timefmt import format_durations, format_instants

REF = FieldRef("log.csv", "start", "start time")
ALL_TIMESTAMPS = ("local", "epoch", "iso")
instants = st.lists(st.integers(0, 4_000_000_000), min_size=1, max_size=40)
durations = st.lists(st.integers(0, 10**8), min_size=1, max_size=40)
timestamp_formats = st.one_of(
    st.just({"format": "epoch"}), st.just({"format": "local"}),
    st.builds(lambda sep, off: {"format": "iso", "separator": sep, "offset": off},
              st.sampled_from(["T", " "]),
              st.sampled_from([None, "Z", "+09:00", "-0330", "+14:00", "-12:00"])))
duration_formats = st.one_of(st.just({"format": "seconds"}),
                             st.builds(lambda w: {"format": "hms", "hour_width": w},
                                       st.sampled_from([1, 2])))


@given(instants, timestamp_formats, st.sampled_from(["Asia/Tokyo", "America/New_York", "UTC"]))
def test_timestamps_parse_what_they_format(values, fmt, zone):
    text = format_instants(np.array(values), fmt, zone)
    if fmt["format"] == "local" and zone == "America/New_York":
        assume(False)  # repeated wall-clock hours are rejected (tested in test_nqsii.py)
    parsed, recorded = parse_timestamps(text, REF, ALL_TIMESTAMPS, zone)
    assert parsed.tolist() == values
    assert recorded["format"] == fmt["format"]
    if fmt["format"] == "iso" and fmt["offset"] is not None:
        assert recorded == fmt


@given(st.lists(st.tuples(st.integers(0, 4_000_000_000), timestamp_formats), min_size=1,
                max_size=30))
def test_columns_mixing_timestamp_formats_parse_each_value(pairs):
    texts = [format_instants(np.array([v]), fmt, "Asia/Tokyo")[0].as_py() for v, fmt in pairs]
    parsed, recorded = parse_timestamps(pa.array(texts), REF, ALL_TIMESTAMPS, "Asia/Tokyo")
    assert parsed.tolist() == [v for v, _ in pairs]
    assert recorded["format"] == pairs[0][1]["format"]


@given(durations, duration_formats)
def test_durations_parse_what_they_format(values, fmt):
    parsed, recorded = parse_durations(format_durations(np.array(values), fmt), REF,
                                       ("hms", "seconds"))
    assert parsed.tolist() == values
    if fmt["format"] == "seconds" or any(v < 36_000 for v in values):
        assert recorded == fmt
    else:  # every hour count has two digits or more: padding to two changes nothing
        assert recorded == {"format": "hms", "hour_width": 2}


@given(st.lists(st.integers(0, 10**17), min_size=1, max_size=40))
def test_integers_parse_what_they_format(values):
    parsed = parse_integers(pa.array([str(v) for v in values]), REF)
    assert parsed.dtype == np.int64 and parsed.tolist() == values


def test_integer_errors_name_the_offending_row():
    assert _message(lambda: parse_integers(pa.array(["1", "-3"]), REF))[1:] == (3, "-3")
    assert _message(lambda: parse_integers(pa.array(["1", "2", "7"]), REF, enum=[1, 2])) == (
        "log.csv:4: field 'start' (start time): '7' is not a start time "
        "(expected a non-negative integer)", 4, "7")


@pytest.mark.parametrize("token, why", [("", "is empty"), ("-3", "is negative"),
                                        ("123456789012345678901", "is out of range"),
                                        ("2.5", "is not an integer"), ("1e3", "is not an integer"),
                                        ("x7", "is not a number")])
def test_bad_integer_descriptions(token, why):
    assert describe_bad_integer(token) == why


def test_errors_name_the_line_of_the_row():
    with pytest.raises(InputError) as info:
        parse_integers(pa.array(["1", "2", "x"]), FieldRef("a.csv", "Nodes", "nodes"))
    assert str(info.value) == "a.csv:4: field 'Nodes' (nodes): 'x' is not a number (expected a non-negative integer)"
    assert (info.value.line, info.value.value) == (4, "x")


def test_queue_names_record_a_consistent_spelling():
    site = resolve_site(None)
    names, spelling = parse_queue_names(pa.array(["normal", "SHORT", "normal", "Long"]), REF, site)
    assert names.to_pylist() == ["Normal", "Short", "Normal", "Long"]
    assert spelling == {"Normal": "normal", "Short": "SHORT"}
    _, mixed = parse_queue_names(pa.array(["normal", "Normal"]), REF, site)
    assert mixed == {}


integer_like = st.one_of(st.integers(0, 10**18).map(str), st.from_regex(r"\A[-+0-9x ]{1,5}\Z"),
                         st.sampled_from(["0x10", "+5", "-0", "1-2", "", " 7", "٣"]))


@given(st.lists(integer_like, min_size=1, max_size=30), st.integers(1, 3))
@example(["-0", "7"], 1)
@example(["-0", "0x10"], 1)
@example(["1" + "0" * 18, "x"], 2)
@example(["+5"], 1)
@example(["1", "+5"], 2)
@example(["1", "0x10"], 2)
def test_integers_are_plain_ascii_digits(tokens, pieces):
    """A column parses when every token is plain ASCII digits, a minus sign at most before them,
    and no value is negative ('-0' is 0; no '+', hexadecimal or blank), whatever its chunking.
    Else the error names the first row whose token is not 1 to 18 plain digits (there '-0'
    counts as bad too)."""
    import re

    from swftools.formats.nqsii.timefmt import EPOCH_PATTERN

    size = -(-len(tokens) // pieces)
    column = pa.chunked_array([pa.array(tokens[i:i + size]) for i in range(0, len(tokens), size)])
    parses = all(re.fullmatch(r"-?[0-9]+", t, re.ASCII) and 0 <= int(t) < 2**63 for t in tokens)
    bad = [] if parses else [i for i, t in enumerate(tokens) if not re.search(EPOCH_PATTERN, t)]
    if bad:
        with pytest.raises(InputError) as info:
            parse_integers(column, REF)
        assert info.value.line == bad[0] + 2
    else:
        assert parse_integers(column, REF).tolist() == [int(t) for t in tokens]


def _message(call) -> tuple[str, int, object]:
    with pytest.raises(InputError) as info:
        call()
    return str(info.value), info.value.line, info.value.value


USER = FieldRef("log.csv", "User", "user")


def test_name_errors_name_the_row_and_the_value():
    from swftools.formats.nqsii.columns import parse_names

    assert _message(lambda: parse_names(pa.array(["a", "b", ""]), USER)) == (
        "log.csv:4: field 'User' (user): '' is empty (expected a user name)", 4, "")
    from swftools.formats.names import NAME_EXPECTED, NAME_MESSAGE

    assert _message(lambda: parse_names(pa.array(["a", "b\x07c", "d"]), USER)) == (
        f"log.csv:3: field 'User' (user): 'b\\x07c' {NAME_MESSAGE} (expected {NAME_EXPECTED})",
        3, "b\x07c")
    assert parse_names(pa.chunked_array([["a"], ["b"]]), USER).to_pylist() == ["a", "b"]


def test_queue_number_errors_list_the_site_queues():
    from swftools.formats.nqsii.columns import parse_queue_numbers

    site = resolve_site(None)
    queues = "a queue number of site aaic: 1 (Normal), 2 (Short), 3 (Middle), 4 (Long)"
    for tokens, why in ((["1", "x"], "'x' is not a number"),
                        (["1", "9"], "'9' is not a queue of site aaic")):
        assert _message(lambda: parse_queue_numbers(pa.array(tokens), REF, site)) == (
            f"log.csv:3: field 'start' (start time): {why} (expected {queues})", 3, tokens[1])
    names = parse_queue_numbers(pa.array(["2", "1", "2"]), REF, site)
    assert names.to_pylist() == ["Short", "Normal", "Short"]
    empty = parse_queue_numbers(pa.array([], pa.string()), REF, site)
    assert empty.type == pa.string() and len(empty) == 0


@pytest.mark.parametrize("tokens, why", [
    (["0", ""], "'' is empty"),
    (["0", "12345678901234567890"], "'12345678901234567890' is out of range"),
    (["0", "-5"], "'-5' is negative"),
    (["0", "2.5"], "'2.5' is not a timestamp"),
    (["0", "2020-01-01T00:00:00+0900x"], "'2020-01-01T00:00:00+0900x' is not a timestamp"),
])
def test_timestamp_errors_say_what_is_wrong(tokens, why):
    expected = "UNIX seconds, YYYY-MM-DD HH:MM:SS local time, or ISO 8601 with offset"
    assert _message(lambda: parse_timestamps(pa.array(tokens), REF, ALL_TIMESTAMPS, "UTC")) == (
        f"log.csv:3: field 'start' (start time): {why} (expected {expected})", 3, tokens[1])


@pytest.mark.parametrize("tokens, why", [
    (["0", ""], "'' is empty"), (["0", "-5"], "'-5' is negative"),
    (["0", "2.5"], "'2.5' is not a duration"), (["0", "1:5"], "'1:5' is not a duration"),
])
def test_duration_errors_say_what_is_wrong(tokens, why):
    assert _message(lambda: parse_durations(pa.array(tokens), REF, ("hms", "seconds"))) == (
        f"log.csv:3: field 'start' (start time): {why} (expected seconds or HH:MM:SS)", 3,
        tokens[1])


def test_an_iso_column_records_its_offset_only_when_every_row_shares_it():
    """The writer writes a recorded offset on every row: it is recorded only when the whole
    column is ISO 8601 with that one offset."""
    def recorded(tokens):
        values, fmt = parse_timestamps(pa.array(tokens), REF, ALL_TIMESTAMPS, "UTC")
        assert values.dtype == np.int64
        return values.tolist(), fmt

    assert recorded(["1970-01-01T09:00:00+09:00", "1970-01-01 00:00:10"]) == (
        [0, 10], {"format": "iso", "separator": "T", "offset": None})
    assert recorded(["1970-01-01T09:00:00+09:00", "1970-01-01T00:00:10Z"]) == (
        [0, 10], {"format": "iso", "separator": "T", "offset": None})
    assert recorded(["1970-01-01 09:00:00+0900", "1970-01-01 09:00:10+0900"]) == (
        [0, 10], {"format": "iso", "separator": " ", "offset": "+0900"})
    assert recorded(["5", "1970-01-01T00:00:10Z"]) == ([5, 10], {"format": "epoch"})


def test_a_zero_does_not_change_how_a_column_of_seconds_parses():
    """19-digit values (past the 18 digits the pattern of the error search takes) parse
    beside a zero as beside any other value."""
    big = "1000000000000000000"
    values, fmt = parse_durations(pa.array(["0", big]), REF, ("hms", "seconds"))
    assert (values.tolist(), fmt) == ([0, 10**18], {"format": "seconds"})
    values, fmt = parse_timestamps(pa.array(["0", big]), REF, ALL_TIMESTAMPS, "UTC")
    assert (values.tolist(), fmt) == ([0, 10**18], {"format": "epoch"})


def test_an_empty_queue_column_is_a_string_column():
    site = resolve_site(None)
    names, spelling = parse_queue_names(pa.array([], pa.string()), REF, site)
    assert names.type == pa.string() and len(names) == 0 and spelling == {}


def test_a_duration_field_takes_only_its_own_formats():
    """Seconds where only HH:MM:SS is declared, HH:MM:SS where only seconds is: errors."""
    assert _message(lambda: parse_durations(pa.array(["01:00:00", "5"]), REF, ("hms",)))[1:] == (
        3, "5")
    assert _message(lambda: parse_durations(pa.array(["5", "01:00:00"]), REF, ("seconds",))) == (
        "log.csv:3: field 'start' (start time): '01:00:00' is not a duration (expected seconds)",
        3, "01:00:00")
    assert parse_durations(pa.array(["01:00:00"]), REF, ("hms",))[0].tolist() == [3600]


def test_a_column_takes_only_the_formats_of_its_field():
    """An epoch-only field refuses date-times, a field without epoch refuses UNIX seconds,
    each as a whole column too (not only mixed with other values)."""
    for tokens, formats in ((["2020-01-01 00:00:00"], ("epoch",)), (["5"], ("local", "iso"))):
        assert _message(lambda: parse_timestamps(pa.array(tokens), REF, formats, "UTC"))[1:] == (
            2, tokens[0])
    values, fmt = parse_timestamps(pa.array(["1970-01-01 00:00:00"]), REF, ("local",), "UTC")
    assert (values.tolist(), fmt) == ([0], {"format": "local"})


def test_a_mixed_duration_column_records_the_format_of_its_first_row():
    values, fmt = parse_durations(pa.array(["5", "01:00:00"]), REF, ("hms", "seconds"))
    assert (values.tolist(), fmt) == ([5, 3600], {"format": "seconds"})
    values, fmt = parse_durations(pa.array(["1:00:00", "5"]), REF, ("hms", "seconds"))
    assert (values.tolist(), fmt) == ([3600, 5], {"format": "hms", "hour_width": 1})


def test_integer_ids_are_kept_as_text_and_checked():
    from swftools.formats.nqsii.columns import parse_integer_ids

    assert parse_integer_ids(pa.chunked_array([["07"], ["3"]]), USER).to_pylist() == ["07", "3"]
    assert _message(lambda: parse_integer_ids(pa.array(["1", "x"]), USER)) == (
        "log.csv:3: field 'User' (user): 'x' is not a number (expected a non-negative integer)",
        3, "x")
