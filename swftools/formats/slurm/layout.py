"""The layout of a sacct dump before its lines are split: the delimiter, the header line (or the
``--columns`` list of a ``sacct --noheader`` dump), and ``--parsable``'s trailing delimiter.

A header is a first line that names a column swftools reads and holds no time; anything else is
a data line. Delimiters other than ``|`` (``sacct --delimiter``) are read when given and turned
into ``|`` here; otherwise a first line without ``|`` is reported with the delimiter it seems to
use (``formats.sacct_command``: the sacct command line README and ``convert --help`` give).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from swftools.errors import InputError
from swftools.formats.sacct_command import RECOMMENDED_COMMAND, RECOMMENDED_FORMAT
from swftools.formats.slurm.schema import Header, known_names, map_header

END_OF_LINE = "(end of line)"  # the read name of --parsable's empty field after the last '|'
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")
_NOT_DELIMITERS = set(" _-.:/[]()=+%'\"@*#~")


@dataclass
class Layout:
    """``data`` with ``|`` as its delimiter; ``names`` the fields of every line (with
    ``END_OF_LINE`` last for ``--parsable``); the read columns; the byte offset and file line
    of the first line after the header; the header's line (None: headerless); ``given``
    (where the names come from: "the header" or "--columns")."""

    data: bytes
    names: list[str]
    header: Header
    begin: int
    first_line: int
    header_line: int | None
    given: str


def parse_columns(columns: str | list[str] | tuple[str, ...]) -> list[str]:
    """A ``--columns`` list (``sacct --format``'s comma list, or a sequence) -> column names.
    ``%WIDTH`` suffixes (``JobName%30``) are dropped, as they only size sacct's own output."""
    items = columns.split(",") if isinstance(columns, str) else list(columns)
    names = [item.strip().split("%")[0] for item in items]
    if not names or any(not n for n in names):
        from swftools.errors import UsageError

        raise UsageError(f"--columns {columns!r}: expected sacct's --format list, column names "
                         f"separated by commas, such as {RECOMMENDED_FORMAT}")
    return names


def line_spans(data: bytes, begin: int):
    """(start, end of text, start of the next line) of each line from ``begin``."""
    i, n = begin, len(data)
    while i < n:
        nl = data.find(b"\n", i)
        cr = data.find(b"\r", i, n if nl < 0 else nl)  # within the line: linear in the file
        end = min(e for e in (nl, cr, n) if e >= 0)
        after = end + 2 if data[end:end + 2] == b"\r\n" else end + 1
        yield i, end, after
        i = after


def seems_delimited_by(text: str) -> str | None:
    """The character a line seems to separate its fields with (the most frequent one that is not
    part of sacct's values), or None."""
    counts = Counter(ch for ch in text if not ch.isalnum() and ch not in _NOT_DELIMITERS)
    return counts.most_common(1)[0][0] if counts else None


def is_header(cells: list[str]) -> bool:
    """Whether a first line's cells are column names: one names a column swftools reads and
    none is a time (every data line has its Submit time)."""
    known = known_names()
    return any(c.strip().lower() in known for c in cells) and \
        not any(_TIME.fullmatch(c) for c in cells)


def _delimiter_error(path: str, line: int, text: str) -> InputError:
    seen = seems_delimited_by(text)
    if seen is None:
        return InputError(path, "the line has no '|': not sacct --parsable2 output", line=line,
                          field="line", value=text,
                          expected=f"'|'-separated fields, as written by {RECOMMENDED_COMMAND}")
    return InputError(path, f"the fields are not '|'-separated: the file seems to use {seen!r} "
                      "as its delimiter", line=line, field="line", value=text,
                      expected=f"sacct --parsable2 output: read this file with --delimiter "
                               f"{seen!r}, or dump it again with {RECOMMENDED_COMMAND}")


def layout(data: bytes, path: str, columns: str | list[str] | None = None,
           delimiter: str | None = None) -> Layout | None:
    """The layout of ``data`` (None: the file holds nothing but blank lines)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if delimiter not in (None, "|"):
        data = _to_bars(data, path, delimiter)
    given = "--columns" if columns is not None else "the header"
    wanted = parse_columns(columns) if columns is not None else None
    for start, end, after in line_spans(data, 0):
        if end > start:
            break
    else:
        return None
    line = sum(1 for _ in line_spans(data[:start], 0)) + 1  # after leading blank lines
    text = data[start:end].decode("utf-8", "replace")
    cells = text.split("|")
    if len(cells) == 1:
        raise _delimiter_error(path, line, text)
    header = is_header(cells)
    trailing = len(cells) > 1 and cells[-1] == "" and \
        (header or (wanted is not None and len(cells) == len(wanted) + 1))
    found = cells[:-1] if trailing else cells
    if wanted is None:
        if not header:
            raise InputError(path, "no header line: this looks like sacct --noheader output",
                             line=line, field="line", value=text,
                             expected="the column list it was made with (sacct --format) as "
                                      "--columns, or a dump with a header: "
                                      + RECOMMENDED_COMMAND)
        names = found
    else:
        names = wanted
        if header and [c.strip().lower() for c in found] != [c.lower() for c in wanted]:
            raise InputError(path, "the header differs from --columns", line=line,
                             field="header", value=text,
                             expected=f"the columns {','.join(wanted)} (or leave --columns out: "
                                      "the header names the columns)")
        if not header and len(found) != len(wanted):
            raise InputError(path, f"{len(cells)} fields, --columns names {len(wanted)}",
                             line=line, field="line", value=text,
                             expected=f"{len(wanted)} '|'-separated fields, as --columns names")
    mapped = map_header(names, path, line if wanted is None else None,
                        "header" if wanted is None else "--columns")
    all_names = names + ([END_OF_LINE] if trailing else [])
    if header:
        return Layout(data, all_names, mapped, after, line + 1, line, given)
    return Layout(data, all_names, mapped, start, line, None, given)


def _to_bars(data: bytes, path: str, delimiter: str) -> bytes:
    """``data`` with ``delimiter`` (sacct --delimiter) turned into ``|``."""
    if not delimiter or "\n" in delimiter or "\r" in delimiter:
        from swftools.errors import UsageError

        raise UsageError(f"--delimiter {delimiter!r}: expected the text sacct --delimiter was "
                         "given, without line breaks")
    at = data.find(b"|")
    if at >= 0:
        line = data.count(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        text = data[data.rfind(b"\n", 0, at) + 1:end if end >= 0 else len(data)]
        raise InputError(path, f"a '|' in a file delimited by {delimiter!r}: its fields cannot be "
                         "told apart once the delimiter is read", line=line, field="line",
                         value=text.decode("utf-8", "replace").rstrip("\r"),
                         expected=f"no '|' in the cells of a --delimiter {delimiter!r} file")
    return data.replace(delimiter.encode("utf-8"), b"|")
