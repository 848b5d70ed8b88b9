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
    assert parse_integers(pa.array([str(v) for v in values]), REF).tolist() == values


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
