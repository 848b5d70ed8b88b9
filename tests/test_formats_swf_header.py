"""SWF header comments (``formats/swf/header.py``) and the packed row masks of the layout
(``formats/swf/layout.py``)."""

from __future__ import annotations

import base64

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from swftools.formats.swf.header import (header_int, header_value, header_values, parse_header,
                                         render_header)
from swftools.formats.swf.layout import pack_mask, unpack_mask


def test_parse_header_keys_repeats_continuations_and_free_text():
    lines = ["; free text first", ";", "; Version: 2.2", ";Computer:  IBM SP2  ",
             "; Queue: 1 short", "; Queue: 2 long", ";    (the long one)",
             ";  http://example.org/x: not a key", "; Note:", ";   first line of the note",
             "; 1bad: digits cannot start a key", ";no blank after the semicolon"]
    assert parse_header(lines) == [
        ["", "free text first"], ["Version", "2.2"], ["Computer", "IBM SP2"],
        ["Queue", "1 short"], ["Queue", "2 long\n(the long one)\nhttp://example.org/x: not a key"],
        ["Note", "first line of the note\n1bad: digits cannot start a key\n"
                 "no blank after the semicolon"]]


def test_render_header_indents_continuations_under_the_value():
    pairs = [["", "free  \nmore"], ["Queue", "2 long\n(the long one)  "], ["Note", ""],
             ["MaxProcs", 128]]
    assert render_header(pairs) == ["; free", "; more", "; Queue: 2 long",
                                    ";        (the long one)", "; Note:", "; MaxProcs: 128"]


_KEY = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True)
_TEXT = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters=";"),
                min_size=1, max_size=8)
_VALUE = st.lists(st.lists(_TEXT, min_size=1, max_size=3).map(" ".join), min_size=1,
                  max_size=3).map("\n".join)


@given(st.lists(st.tuples(_KEY, _VALUE), max_size=6))
def test_render_then_parse_gives_the_pairs_back(pairs):
    """Keyed pairs with trimmed values survive a write and a read, continuations included."""
    pairs = [[k, v] for k, v in pairs]
    assert parse_header(render_header(pairs)) == pairs


def test_header_lookups_are_case_insensitive_and_ordered():
    pairs = [["Queue", "1 a"], ["MaxProcs", " 240 (2 partitions)"], ["queue", "2 b"],
             ["MaxNodes", "n/a"], ["Offset", "-5 s"]]
    assert header_values(pairs, "QUEUE") == ["1 a", "2 b"]
    assert header_value(pairs, "queue") == "1 a"
    assert header_value(pairs, "Missing") is None
    assert header_int(pairs, "maxprocs") == 240
    assert header_int(pairs, "Offset") == -5
    assert header_int(pairs, "MaxNodes") is None
    assert header_int(pairs, "Missing") is None


@given(st.lists(st.booleans(), max_size=300))
def test_pack_mask_round_trip(bits):
    mask = np.array(bits, dtype=bool)
    back = unpack_mask(pack_mask(mask), len(mask))
    assert back.dtype == np.bool_ and back.tolist() == bits


def test_pack_mask_is_compact_text():
    text = pack_mask(np.zeros(100_000, bool))
    assert text.isascii() and len(text) < 200
    # zlib's header says level 9, "best compression" (RFC 1950: FLEVEL 3): the same bytes on
    # every machine and version
    assert base64.b64decode(text)[:2] == b"\x78\xda"
    assert unpack_mask(text, 100_000).sum() == 0
