"""The one rule for name cells (user, group, account, queue, pod and node names) of every reader.

A name holds no control character: nothing of Unicode category Cc (U+0000-U+001F, U+007F-U+009F:
NUL, tab, line breaks, escape, DEL, the C1 controls). Such a name cannot be typed, prints
invisibly or garbles a terminal, and a NUL ends it early in C tools; a scheduler never writes
one, so it means a corrupt or hostile log. Each reader reports the first bad cell with its own
location (file, line, field) and the value escaped (``repr``), with ``NAME_EXPECTED``.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.errors import InputError

# The same class in Python's re and in RE2 (pyarrow): code points, not bytes.
CONTROL_CLASS = r"[\x00-\x1f\x7f-\x9f]"
NAME_EXPECTED = ("a name without control characters: no NUL, tab, line break, escape, DEL or "
                 "other character of Unicode category Cc")
NAME_MESSAGE = "holds a control character"
_CONTROL = re.compile(CONTROL_CLASS)


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (Unicode category Cc)."""
    return _CONTROL.search(text) is not None


def bad_names(cells: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Which cells hold a control character (nulls are fine)."""
    if not _may_hold_control(cells):
        return np.zeros(len(cells), dtype=bool)
    found = pc.fill_null(pc.match_substring_regex(cells, CONTROL_CLASS), False)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)


def _may_hold_control(cells: pa.Array | pa.ChunkedArray) -> bool:
    """False when no byte of the cells' text can be part of a control character (the common
    case, found without a regex): in UTF-8 those are the bytes 0x00-0x1F and 0x7F, and U+0080 to
    U+009F start with 0xC2. True when some byte might be (the regex then decides)."""
    for chunk in jt.chunks(cells):
        if pa.types.is_null(chunk.type):  # all null (a column a CSV reader found empty)
            continue
        if not pa.types.is_string(chunk.type) and not pa.types.is_large_string(chunk.type):
            return True
        offsets, data = jt.string_buffers(chunk)
        text = data[int(offsets[0]):int(offsets[-1])]
        if ((text < 0x20) | (text == 0x7F) | (text == 0xC2)).any():
            return True
    return False


def first_bad_name(cells: pa.Array | pa.ChunkedArray) -> int | None:
    """The row of the first cell holding a control character, or None (nulls are fine)."""
    bad = bad_names(cells)
    return int(np.argmax(bad)) if bad.any() else None


def check_name(value: str, path: str, line: int | None, field: str) -> str:
    """``value`` when it holds no control character, else the located ``InputError``."""
    if has_control(value):
        raise InputError(path, f"{value!r} {NAME_MESSAGE}", line=line, field=field, value=value,
                         expected=NAME_EXPECTED)
    return value
