"""The layout of a sacct dump (``formats.slurm.layout``): where the header is, what names the
fields, the delimiter, --parsable's trailing '|', and the errors that say which dump it is."""

from __future__ import annotations

import pytest

from swftools.errors import InputError, UsageError
from swftools.formats.sacct_command import RECOMMENDED_COMMAND, RECOMMENDED_FORMAT
from swftools.formats.slurm.layout import (END_OF_LINE, layout, line_spans, parse_columns,
                                           seems_delimited_by)

NAMES = ["JobID", "Submit", "Start", "End", "State"]
HEADER = "|".join(NAMES)
ROW = "5|2023-01-01T00:00:00|2023-01-01T00:01:00|2023-01-01T00:02:00|COMPLETED"
COLUMNS = ",".join(NAMES)


def _fields(lay) -> tuple:
    return (lay.names, dict(lay.header.positions), lay.begin, lay.first_line, lay.header_line,
            lay.given)


# ------------------------------------------------------------------------- --columns lists

@pytest.mark.parametrize("given,names", [
    ("JobID%30, User ,State", ["JobID", "User", "State"]),
    (["JobName%12", " Submit"], ["JobName", "Submit"]),
    (("End",), ["End"]),
])
def test_a_columns_list_is_sacct_format_without_widths(given, names):
    assert parse_columns(given) == names


@pytest.mark.parametrize("given", ["", "JobID,,State", "JobID, ", "%30", [], ["JobID", ""]])
def test_a_columns_list_with_an_empty_name_is_refused(given):
    with pytest.raises(UsageError) as info:
        parse_columns(given)
    assert str(info.value) == (f"--columns {given!r}: expected sacct's --format list, column "
                               f"names separated by commas, such as {RECOMMENDED_FORMAT}")


# ------------------------------------------------------------------------- lines

@pytest.mark.parametrize("data,begin,spans", [
    (b"ab\ncd", 0, [(0, 2, 3), (3, 5, 6)]),  # a last line without a break: one past the end
    (b"ab\r\ncd\r\n", 0, [(0, 2, 4), (4, 6, 8)]),
    (b"ab\rcd\n\nx", 0, [(0, 2, 3), (3, 5, 6), (6, 6, 7), (7, 8, 9)]),
    (b"a\rb\r\nc", 2, [(2, 3, 5), (5, 6, 7)]),
    (b"ab\n", 3, []),
    (b"a\rb\rc\n", 0, [(0, 1, 2), (2, 3, 4), (4, 5, 6)]),  # every CR ends a line
])
def test_line_spans_know_every_line_break(data, begin, spans):
    assert list(line_spans(data, begin)) == spans


# ------------------------------------------------------------------------- delimiters

@pytest.mark.parametrize("text,seen", [
    ("JobID,User;State,End", ","),
    ("a;b;c,d", ";"),
    ("a\tb\tc", "\t"),
    ("JobID User_Name node-1.x:y/z [a](b) c=d+e %f 'g' \"h\" @i *j #k ~l", None),
    ("JobIDUser", None),
    ("a☃b☃c,d", "☃"),
])
def test_the_delimiter_a_line_seems_to_use(text, seen):
    assert seems_delimited_by(text) == seen


def test_a_first_line_without_a_bar_names_the_delimiter_it_seems_to_use():
    with pytest.raises(InputError) as info:
        layout(b"\n" + HEADER.replace("|", ",").encode() + b"\n", "f.txt")
    err = info.value
    assert (err.path, err.line, err.field, err.value) == ("f.txt", 2, "line", COLUMNS)
    assert err.message == "the fields are not '|'-separated: the file seems to use ',' as its delimiter"
    assert err.expected == (f"sacct --parsable2 output: read this file with --delimiter ',', or "
                            f"dump it again with {RECOMMENDED_COMMAND}")


def test_a_first_line_without_any_delimiter_is_not_sacct_output():
    with pytest.raises(InputError) as info:
        layout(b"JobID\n", "f.txt")
    err = info.value
    assert (err.path, err.line, err.field, err.value) == ("f.txt", 1, "line", "JobID")
    assert err.message == "the line has no '|': not sacct --parsable2 output"
    assert err.expected == f"'|'-separated fields, as written by {RECOMMENDED_COMMAND}"


def test_another_delimiter_becomes_bars():
    text = f"{HEADER}\n{ROW}\n".replace("|", "::")
    lay = layout(text.encode(), "f", delimiter="::")
    assert lay.data == f"{HEADER}\n{ROW}\n".encode() and lay.names == NAMES


def test_a_bar_delimiter_given_is_the_default():
    data = f"{HEADER}\n{ROW}\n".encode()
    assert _fields(layout(data, "f", delimiter="|")) == _fields(layout(data, "f"))


@pytest.mark.parametrize("delimiter", ["", "\n", ";\r"])
def test_a_delimiter_with_a_line_break_or_none_is_refused(delimiter):
    with pytest.raises(UsageError) as info:
        layout(b"a;b\n", "f", delimiter=delimiter)
    assert str(info.value) == (f"--delimiter {delimiter!r}: expected the text sacct --delimiter "
                               "was given, without line breaks")


@pytest.mark.parametrize("data,line,value", [
    (b"a;b\nc;d\n6;x|y;z \r\n7;|\n8\n9\n", 3, "6;x|y;z "),  # the first '|', its whole line
    (b"\n6;x|yX\r\n7\n", 2, "6;x|yX"),
    (b"|a;b\n", 1, "|a;b"),
    (b"a;b\nc;d\xff|e", 2, "c;d\ufffd|e"),  # no final line break, not UTF-8
])
def test_a_bar_in_a_file_with_another_delimiter_is_located(data, line, value):
    with pytest.raises(InputError) as info:
        layout(data, "f.sacct", delimiter=";")
    err = info.value
    assert (err.path, err.line, err.field, err.value) == ("f.sacct", line, "line", value)
    assert err.message == ("a '|' in a file delimited by ';': its fields cannot be told apart once "
                           "the delimiter is read")
    assert err.expected == "no '|' in the cells of a --delimiter ';' file"


# ------------------------------------------------------------------------- header or not

def test_a_header_after_blank_lines_and_a_byte_order_mark():
    data = b"\xef\xbb\xbf\n\r\n" + f" jobid |{HEADER}\n{ROW}|x\n".encode()
    lay = layout(data, "f")
    assert lay.data == data[3:]
    assert _fields(lay) == ([" jobid ", *NAMES], {"JobID": 0, "Submit": 2, "Start": 3, "End": 4,
                                                   "State": 5}, len(data) - 3 - len(ROW) - 3,
                            4, 3, "the header")
    assert lay.header.repeats == [("JobID", 1)]


def test_only_blank_lines_have_no_layout():
    assert layout(b"\n\r\n\r", "f") is None
    assert layout(b"", "f") is None


def test_a_header_with_parsables_trailing_bar():
    lay = layout(f"{HEADER}|\n{ROW}|\n".encode(), "f")
    assert lay.names == [*NAMES, END_OF_LINE] and dict(lay.header.positions)["State"] == 4


def test_a_header_ending_in_an_empty_name_without_a_bar_after_it():
    """Only the last empty name is --parsable's end of line."""
    lay = layout(f"{HEADER}||\n".encode(), "f")
    assert lay.names == [*NAMES, "", END_OF_LINE]


def test_a_data_line_is_no_header():
    with pytest.raises(InputError) as info:
        layout(f"{ROW}\n".encode(), "f")
    err = info.value
    assert (err.path, err.line, err.field, err.value) == ("f", 1, "line", ROW)
    assert err.message == "no header line: this looks like sacct --noheader output"
    assert err.expected == ("the column list it was made with (sacct --format) as --columns, or "
                            f"a dump with a header: {RECOMMENDED_COMMAND}")


@pytest.mark.parametrize("first,header", [
    ("jobid|x", True),
    (" State |x", True),
    ("JobID|2023-01-01T00:00:00", False),
    ("JobIDX|State2", False),
])
def test_a_header_names_a_read_column_and_holds_no_time(first, header):
    """Told apart by the error a headerless file gets: a header names no missing column."""
    with pytest.raises(InputError) as info:
        layout(f"{first}\n".encode(), "f")
    assert ("missing sacct columns" in info.value.message) is header, str(info.value)


def test_columns_for_a_headerless_dump():
    lay = layout(f"\n{ROW}\n".encode(), "f", columns=COLUMNS.lower())
    assert _fields(lay) == ([n.lower() for n in NAMES], {n: i for i, n in enumerate(NAMES)}, 1, 2,
                            None, "--columns")


def test_columns_for_a_headerless_parsable_dump():
    lay = layout(f"{ROW}|\n".encode(), "f", columns=COLUMNS)
    assert lay.names == [*NAMES, END_OF_LINE] and lay.header_line is None
    lay = layout(f"{ROW}|x|\n".encode(), "f", columns=COLUMNS + ",a,b")
    assert lay.names == [*NAMES, "a", "b"]  # an empty last field of its own: not --parsable's


def test_columns_and_the_header_they_match():
    lay = layout(f"{HEADER.upper()}|\n{ROW}|\n".encode(), "f", columns=" " + COLUMNS)
    assert _fields(lay) == ([*NAMES, END_OF_LINE], {n: i for i, n in enumerate(NAMES)},
                            len(HEADER) + 2, 2, 1, "--columns")


def test_columns_and_a_header_that_differs_in_order():
    with pytest.raises(InputError) as info:
        layout(f"{HEADER}\n".encode(), "f", columns="Submit,JobID,Start,End,State")
    err = info.value
    assert (err.path, err.line, err.field, err.value) == ("f", 1, "header", HEADER)
    assert err.message == "the header differs from --columns"
    assert err.expected == ("the columns Submit,JobID,Start,End,State (or leave --columns out: the "
                            "header names the columns)")


def test_columns_and_a_data_line_of_another_width():
    with pytest.raises(InputError) as info:
        layout(f"{ROW}|x\n".encode(), "f", columns=COLUMNS)
    err = info.value
    assert (err.path, err.line, err.field, err.value) == ("f", 1, "line", ROW + "|x")
    assert err.message == "6 fields, --columns names 5"
    assert err.expected == "5 '|'-separated fields, as --columns names"


def test_a_missing_column_is_on_the_header_line_or_in_columns():
    with pytest.raises(InputError) as info:
        layout(b"\nJobID|Submit|Start|End\n", "f")
    assert (info.value.path, info.value.line, info.value.field) == ("f", 2, "header")
    with pytest.raises(InputError) as info:
        layout(b"\n5|x|y|z\n", "f", columns="JobID,Submit,Start,End")
    assert (info.value.line, info.value.field) == (None, "--columns")


def test_a_header_of_one_name_and_parsables_bar():
    """``JobID|`` is --parsable's header of one column (then missing the others)."""
    with pytest.raises(InputError) as info:
        layout(b"JobID|\n", "f")
    assert info.value.value == "JobID" and "Submit" in info.value.message


def test_a_first_line_that_is_not_utf8_is_read_with_replacements():
    with pytest.raises(InputError) as info:
        layout(b"JobID|x\xff\n", "f")
    assert info.value.value == "JobID|x\ufffd" and "missing sacct columns" in info.value.message
