"""``swftools.errors``: locating a JSON value for an error's line."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from swftools.errors import json_line, json_position

from .strategies import json_values


@given(json_values, st.integers(0, 4))
def test_json_position_finds_every_value(value, indent):
    """Property: the offset json_position gives decodes to the value at that path, and
    json_line is the line that offset is on."""
    text = json.dumps(value, indent=indent or None)
    decoder = json.JSONDecoder()

    def walk(v, path):
        pos = json_position(text, path)
        got, _ = decoder.raw_decode(text, pos)
        assert got == v
        before = text[:pos]  # complete lines, then the start of the value's own
        assert json_line(text, path) == len(before.splitlines()) + (
            1 if before == "" or before.endswith("\n") else 0)
        if isinstance(v, dict):
            for k, child in v.items():
                walk(child, path + [k])
        elif isinstance(v, list):
            for i, child in enumerate(v):
                walk(child, path + [i])

    walk(value, [])


def test_json_line_of_an_array_element_is_its_own_line():
    text = '{\n  "a": [\n    {"b": 1},\n    {"b": "x"}\n  ]\n}\n'
    assert json_line(text, ["a", 1, "b"]) == 4
    assert json_line(text, ["a", 0, "b"]) == 3
    assert json_line(text, []) == 1


def test_json_position_of_a_missing_path_is_where_the_walk_stopped():
    text = '{"a": {"b": 1}}'
    assert json_position(text, ["a", "zz"]) == text.index("}")  # the end of "a"'s object
    assert json_position(text, ["a", "b", "c"]) == text.index("1")  # not an object: stops there
    assert json_position(text, [0]) == 0  # an index into an object
