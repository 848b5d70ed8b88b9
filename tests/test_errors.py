"""``swftools.errors``: locating a JSON value for an error's line; why a file cannot be opened."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from swftools.errors import json_line, json_position, open_error_reason

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


def test_why_a_file_cannot_be_opened_is_said_without_its_name():
    """``no such file``, else the operation of the errno (EISDIR: open as a file; EACCES:
    access), the system's reason and the errno's name."""
    assert open_error_reason(FileNotFoundError(2, "No such file or directory", "a.log")) == \
        "no such file"
    assert open_error_reason(IsADirectoryError(21, "Is a directory", "d.log")) == \
        "cannot open as a file: Is a directory [EISDIR]"
    assert open_error_reason(PermissionError(13, "Permission denied", "p.log")) == \
        "cannot access: Permission denied [EACCES]"
