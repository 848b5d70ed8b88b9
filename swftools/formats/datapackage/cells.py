"""The one grammar of Table Schema CSV cells, shared by the package reader and the validator.

A cell's text has its field's type when it matches (whole text, no surrounding blanks):

- ``integer``: an optional sign and ASCII digits (``-12``, ``+7``, ``007``), nothing else: no
  ``1_000``, ``0x10``, ``1e3``, blanks or group characters; and within 64 bits, the job table's
  integer type (:func:`in_range`; the grammar alone allows any length);
- ``number``: a decimal with an optional sign, fraction and exponent (``1``, ``-2.5``, ``.5``,
  ``5.``, ``1e3``, ``+1.5E-3``), or exactly ``NaN``, ``INF``, ``-INF`` (the Table Schema spellings;
  not ``nan``, ``inf``, ``infinity``, ``1_000``);
- ``boolean``: the default ``trueValues`` ``true True TRUE 1`` and ``falseValues``
  ``false False FALSE 0``;
- ``string`` (and any other type): any text.

Missing values (``missingValues``, ``[""]`` by default) are compared before the grammar applies.
The grammar is written once, as regular expressions without anchors; :data:`PATTERNS` anchors them
for pyarrow (RE2, whole columns at a time) and :func:`is_valid` matches them with Python's ``re``
(one cell at a time), so the two match exactly the same texts.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

TRUE_VALUES = ("true", "True", "TRUE", "1")
FALSE_VALUES = ("false", "False", "FALSE", "0")

# A decimal number with optional sign, fraction and exponent (ASCII; no '_', blanks or hex);
# also the grammar of numbers in telemetry long tables.
DECIMAL = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
# Table Schema type -> the text of a valid cell (unanchored; ASCII only).
GRAMMAR: dict[str, str] = {
    "integer": r"[+-]?[0-9]+",
    "number": DECIMAL + "|NaN|INF|-INF",
    "boolean": "|".join(TRUE_VALUES + FALSE_VALUES),
}
# The same, anchored for pyarrow's RE2 (``$`` is the end of the text there, not of a line).
PATTERNS: dict[str, str] = {kind: f"^(?:{body})$" for kind, body in GRAMMAR.items()}
EXPECTED: dict[str, str] = {"integer": "an integer", "number": "a number",
                            "boolean": "true or false"}

_COMPILED = {kind: re.compile(body) for kind, body in GRAMMAR.items()}
_NON_FINITE = {float("inf"): "INF", float("-inf"): "-INF"}


_INT64_MAX = str(2**63 - 1)


def missing_values(table_schema: dict[str, Any]) -> list[str]:
    """The texts ``table_schema`` declares missing (``missingValues``, ``[""]`` when absent;
    entries as text or ``{"value": text}``, others ignored): a cell equal to one is unknown."""
    declared = table_schema.get("missingValues", [""])
    texts = [m.get("value", "") if isinstance(m, dict) else m
             for m in (declared if isinstance(declared, list) else [])]
    return [t for t in texts if isinstance(t, str)]  # a malformed entry is the profile's finding


def in_range(kind: str, text: str) -> bool:
    """Whether a cell that matches the grammar of ``kind`` fits its 64-bit column type."""
    return kind != "integer" or -2**63 <= int(text) < 2**63


def matches(kind: str, text: str) -> bool:
    """Whether one cell's text matches the grammar of ``kind`` (range not checked)."""
    pattern = _COMPILED.get(kind)
    return pattern is None or pattern.fullmatch(text) is not None


def is_valid(kind: str, text: str) -> bool:
    """Whether one cell's text has the Table Schema type ``kind`` (any text for other types)."""
    return matches(kind, text) and in_range(kind, text)


def valid_mask(kind: str, column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Per cell of a string column, whether it has the type ``kind`` (nulls stay null)."""
    if kind not in PATTERNS:
        return pc.is_valid(column)
    ok = pc.match_substring_regex(column, PATTERNS[kind])
    if kind == "integer" and pc.all(pc.less(pc.binary_length(column), 19)).as_py() is not False:
        return ok  # fewer than 19 characters: fewer than 19 digits, always within 64 bits
    if kind == "integer":  # the same range as in_range, on the text: digits without sign and zeros
        digits = pc.replace_substring_regex(column, r"^[+-]?0*", "")
        length = pc.utf8_length(digits)
        limit = pc.if_else(pc.starts_with(column, "-"), pa.scalar(str(2**63)), pa.scalar(_INT64_MAX))
        fits = pc.or_(pc.less(length, 19),
                      pc.and_(pc.equal(length, 19), pc.less_equal(digits, limit)))
        ok = pc.and_(ok, fits)
    return ok


def parse(kind: str, column: pa.Array | pa.ChunkedArray, target: pa.DataType):
    """The typed values of a string column whose cells all satisfy the grammar (or are null).

    Raises ``pyarrow.ArrowInvalid`` when a value is out of the target's range (an integer beyond
    64 bits).
    """
    if kind == "integer" and pc.any(pc.starts_with(column, "+")).as_py():
        column = pc.replace_substring_regex(column, r"^\+", "")  # pyarrow's cast refuses "+7"
    return pc.cast(column, target)


def format_numbers(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A float column as it is written: unchanged when all finite, else as text with the Table
    Schema's ``INF``, ``-INF`` and ``NaN`` (pyarrow would write ``inf``, ``-inf``, ``nan``)."""
    finite = pc.is_finite(column)
    if pc.all(pc.or_kleene(finite, pc.is_null(column))).as_py() is not False:  # None: empty
        return column
    text = pc.cast(column, pa.string())
    text = pc.if_else(pc.is_nan(column), pa.scalar("NaN"), text)
    for value, spelling in _NON_FINITE.items():
        text = pc.if_else(pc.equal(column, value), pa.scalar(spelling), text)
    return text
