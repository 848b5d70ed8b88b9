"""SWF header comments: parse ``; Key: value`` lines into ordered pairs and render them back.

Parsing keeps repeated keys (``Queue``, ``Partition``, ``Note``) in order and appends continuation
lines (``;`` plus indentation, no key) to the previous value with a newline. The raw lines are kept
separately so that an unmodified header is written back verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# A key line has at most one space between ";" and the key; continuation lines are indented more
# (with spaces or a tab)
# (so '; <spaces> http://...' is not mistaken for a key 'http').
_KEY_LINE = re.compile(r"^; ?([A-Za-z][A-Za-z0-9_]*):(.*)$")

Header = list[list[str]]  # [[key, value], ...]; key "" holds free comment text


def parse_header(lines: Iterable[str]) -> Header:
    """Parse raw header lines (each starting with ';', no newline) into ordered [key, value] pairs."""
    pairs: Header = []
    for line in lines:
        match = _KEY_LINE.match(line)
        if match:
            pairs.append([match.group(1), match.group(2).strip()])
            continue
        text = line[1:].strip()
        if not text:
            continue
        if pairs:
            pairs[-1][1] = f"{pairs[-1][1]}\n{text}" if pairs[-1][1] else text
        else:
            pairs.append(["", text])
    return pairs


def render_header(pairs: Sequence[Sequence[str]]) -> list[str]:
    """Render [key, value] pairs as header lines (continuations indented under the value)."""
    lines: list[str] = []
    for key, value in pairs:
        first, *rest = str(value).split("\n")
        if key:
            lines.append(f"; {key}: {first}".rstrip())
            indent = " " * (len(key) + 2)
        else:
            lines.append(f"; {first}".rstrip())
            indent = ""
        lines.extend(f";{indent} {more}".rstrip() for more in rest)
    return lines


def header_values(pairs: Sequence[Sequence[str]], key: str) -> list[str]:
    """All values of ``key`` (case-insensitive), in order."""
    low = key.lower()
    return [v for k, v in pairs if k.lower() == low]


def header_value(pairs: Sequence[Sequence[str]], key: str) -> str | None:
    """The first value of ``key`` (case-insensitive), or None."""
    values = header_values(pairs, key)
    return values[0] if values else None


def header_int(pairs: Sequence[Sequence[str]], key: str) -> int | None:
    """The leading integer of ``key``'s first value (``MaxProcs: 240 (2 partitions)`` -> 240)."""
    value = header_value(pairs, key)
    if value is None:
        return None
    match = re.match(r"\s*(-?\d+)", value)
    return int(match.group(1)) if match else None
