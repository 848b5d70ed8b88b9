"""Whole-column parsing of NQSII fields with located errors.

Each parser takes the column's text tokens (a pyarrow string array, row ``r`` on file line
``r + 2``) and returns the values, or raises ``InputError`` for the first offending row. The
happy path is one vectorized cast or parse; the slower search for the culprit runs only on
failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.errors import InputError
from swftools.formats.names import NAME_EXPECTED, NAME_MESSAGE, first_bad_name
from swftools.formats.nqsii.timefmt import (
    DATETIME_WIDTH,
    EPOCH_PATTERN,
    ISO_PATTERN,
    LOCAL_PATTERN,
    contiguous,
    describe_formats,
    local_to_utc,
    parse_datetime_matrix,
    parse_datetimes,
    parse_hms,
    parse_offset,
    row_pieces,
    string_matrix,
)
from swftools.site import Site

NON_NEGATIVE_INTEGER = "a non-negative integer"


@dataclass(frozen=True)
class FieldRef:
    """One field of one file, as error messages name it: ``log.csv:7: field 'start' (start time)``."""

    path: str
    header: str
    title: str

    def error(self, row: int, value: str, message: str, expected: str | None = None) -> InputError:
        """An InputError for data row ``row`` (0-based; the header is line 1)."""
        return InputError(self.path, f"{value!r} {message}", line=row + 2,
                          field=f"field {self.header!r} ({self.title})", value=value,
                          expected=expected)


def _mask(arr: pa.Array) -> np.ndarray:
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=bool)


def _matches(tokens: pa.Array, pattern: str) -> np.ndarray:
    return _mask(pc.match_substring_regex(tokens, pattern))


def _first(mask: np.ndarray) -> int:
    return int(np.argmax(mask))


def _try_int(tokens: pa.Array) -> np.ndarray | None:
    """All tokens as int64, or None. A failing cast is slow, so a column whose first token is
    not all digits is not tried."""
    if len(tokens) and not re.fullmatch(r"-?[0-9]+", tokens[0].as_py()):
        return None
    values = np.empty(len(tokens), dtype=np.int64)
    for start, piece in row_pieces(tokens):
        # Arrow's cast also takes hexadecimal ('0x10') and a '+' sign: only plain ASCII digits
        # (after an optional '-') are integers here; a cast of only those bytes takes those
        offsets, data = jt.string_buffers(piece)
        if not _DIGIT_OR_MINUS[data[offsets[0]:offsets[-1]]].all():
            return None
        try:
            values[start:start + len(piece)] = pc.cast(piece, pa.int64()).to_numpy()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    return values


_DIGIT_OR_MINUS = np.zeros(256, dtype=bool)
_DIGIT_OR_MINUS[[ord("-"), *range(ord("0"), ord("9") + 1)]] = True


def describe_bad_integer(token: str, not_what: str = "a number") -> str:
    """Why ``token`` is not a non-negative integer, as the end of a sentence."""
    if token == "":
        return "is empty"
    if not token.isascii():  # Python's int() and float() would take other scripts' digits
        return f"is not {not_what}"
    if token.startswith("-") and token[1:].isdigit():
        return "is negative"
    if token.isdigit():
        return "is out of range"
    try:
        float(token)
    except ValueError:
        return f"is not {not_what}"
    return "is not an integer" if not_what == "a number" else f"is not {not_what}"


def parse_integers(tokens: pa.Array, ref: FieldRef, expected: str = NON_NEGATIVE_INTEGER,
                   enum: list[int] | None = None) -> np.ndarray:
    """Non-negative integers (optionally restricted to ``enum``)."""
    values = _try_int(tokens)
    if values is None:
        good = _matches(tokens, EPOCH_PATTERN)
        row = _first(~good)
        token = tokens[row].as_py()
        raise ref.error(row, token, describe_bad_integer(token), expected)
    negative = values < 0
    if negative.any():
        row = _first(negative)
        raise ref.error(row, tokens[row].as_py(), "is negative", expected)
    if enum is not None:
        outside = np.ones(len(values), dtype=bool)
        for allowed in enum:  # a few values: faster than np.isin
            outside &= values != allowed
        if outside.any():
            row = _first(outside)
            raise ref.error(row, tokens[row].as_py(), f"is not a {ref.title}", expected)
    return values


def parse_integer_ids(tokens: pa.Array, ref: FieldRef) -> pa.Array:
    """Integer ids kept as their text, in one piece (published user and group)."""
    parse_integers(tokens, ref)
    return contiguous(tokens)


def parse_names(tokens: pa.Array, ref: FieldRef) -> pa.Array:
    """Non-empty names, in one piece (raw user and group)."""
    empty = _mask(pc.equal(pc.binary_length(tokens), 0))
    if empty.any():
        row = _first(empty)
        raise ref.error(row, "", "is empty", f"a {ref.title} name")
    row = first_bad_name(tokens)
    if row is not None:
        raise ref.error(row, tokens[row].as_py(), NAME_MESSAGE, NAME_EXPECTED)
    return contiguous(tokens)


def parse_queue_numbers(tokens: pa.Array, ref: FieldRef, site: Site) -> pa.Array:
    """Queue numbers -> the site's queue names."""
    expected = (f"a queue number of site {site.name}: "
                + ", ".join(f"{q.number} ({q.name})" for q in site.queues))
    numbers = parse_integers(tokens, ref, expected)
    distinct, inverse = np.unique(numbers, return_inverse=True)
    names = []
    unknown = np.zeros(len(distinct), dtype=bool)
    for i, number in enumerate(distinct.tolist()):
        queue = site.queue_by_number(number)
        unknown[i] = queue is None
        names.append(queue.name if queue else "")
    if unknown.any():
        row = _first(unknown[inverse])
        raise ref.error(row, tokens[row].as_py(), f"is not a queue of site {site.name}", expected)
    return pa.array(names, pa.string()).take(pa.array(inverse))


def parse_queue_names(tokens: pa.Array, ref: FieldRef, site: Site) -> tuple[pa.Array, dict[str, str]]:
    """Queue names (case-insensitive) -> the site's spelling, and the file's spelling of each
    queue where it differs consistently (``{"Normal": "normal"}``)."""
    expected = (f"a queue of site {site.name}: " + ", ".join(q.name for q in site.queues)
                + " (case-insensitive)")
    distinct = pc.unique(tokens)
    canonical = []
    for token in distinct.to_pylist():
        queue = site.queue(token)
        canonical.append(queue.name if queue else None)
    if None in canonical:
        bad = [d for d, c in zip(distinct.to_pylist(), canonical) if c is None]
        row = _first(_mask(pc.is_in(tokens, pa.array(bad, pa.string()))))
        raise ref.error(row, tokens[row].as_py(), f"is not a queue of site {site.name}", expected)
    position = pc.index_in(tokens, distinct)
    if isinstance(position, pa.ChunkedArray):
        position = position.combine_chunks()
    names = pa.array(canonical, pa.string()).take(position)
    spellings: dict[str, set[str]] = {}
    for token, name in zip(distinct.to_pylist(), canonical):
        spellings.setdefault(name, set()).add(token)
    written = {name: next(iter(s)) for name, s in spellings.items()
               if len(s) == 1 and next(iter(s)) != name}
    return names, dict(sorted(written.items()))


def _classify_timestamps(tokens: pa.Array, formats: tuple[str, ...]) -> dict[str, np.ndarray]:
    patterns = {"epoch": EPOCH_PATTERN, "local": LOCAL_PATTERN, "iso": ISO_PATTERN}
    claimed = np.zeros(len(tokens), dtype=bool)
    masks = {}
    for kind in ("epoch", "local", "iso"):
        if kind in formats:
            masks[kind] = _matches(tokens, patterns[kind]) & ~claimed
            claimed |= masks[kind]
    masks["other"] = ~claimed
    return masks


def parse_timestamps(tokens: pa.Array, ref: FieldRef, formats: tuple[str, ...],
                     zone: str) -> tuple[np.ndarray, dict]:
    """Instants in any of ``formats`` -> UTC epoch seconds, and the column's text format."""
    if "epoch" in formats:
        values = _try_int(tokens)
        if values is not None and (values >= 0).all():
            return values, {"format": "epoch"}
    if "local" in formats:
        naive = parse_datetimes(tokens)
        if naive is not None:
            utc, zone_ok = local_to_utc(naive, zone)
            if zone_ok.all() and (utc >= 0).all():
                return utc, {"format": "local"}
    return _parse_timestamps_mixed(tokens, ref, formats, zone)


def _parse_timestamps_mixed(tokens: pa.Array, ref: FieldRef, formats: tuple[str, ...],
                            zone: str) -> tuple[np.ndarray, dict]:
    expected = describe_formats(formats)
    masks = _classify_timestamps(tokens, formats)
    values = np.zeros(len(tokens), dtype=np.int64)
    failed = masks["other"].copy()
    problems: list[tuple[int, str]] = []  # (row, message) candidates; the earliest row wins

    def note(rows: np.ndarray, bad: np.ndarray, message: str) -> None:
        if bad.any():
            failed[rows[bad]] = True
            problems.append((int(rows[_first(bad)]), message))

    if masks["other"].any():
        row = _first(masks["other"])
        problems.append((row, describe_bad_integer(tokens[row].as_py(), "a timestamp")))
    fmt: dict = {}
    for kind in ("epoch", "local", "iso"):
        mask = masks.get(kind)
        if mask is None or not mask.any():
            continue
        rows = np.flatnonzero(mask)
        subset = tokens.filter(pa.array(mask))
        if kind == "epoch":
            values[rows] = np.asarray(pc.cast(subset, pa.int64()).to_numpy(), dtype=np.int64)
            continue
        head = pc.utf8_slice_codeunits(subset, 0, DATETIME_WIDTH)
        naive, ok = parse_datetime_matrix(string_matrix(head, DATETIME_WIDTH), b" T")
        note(rows, ~ok, "is not a timestamp")
        if kind == "local":
            utc, zone_ok = local_to_utc(np.where(ok, naive, 0), zone)
            note(rows, ok & ~zone_ok, f"is ambiguous or does not exist in {zone} local time "
                                      "(a daylight-saving change)")
        else:
            suffix = pc.utf8_slice_codeunits(subset, DATETIME_WIDTH, 64)
            distinct = pc.unique(suffix)
            offsets = [parse_offset(s) for s in distinct.to_pylist()]
            bad_offset = np.array([o is None for o in offsets])
            position = np.asarray(pc.index_in(suffix, distinct).to_numpy(), dtype=np.int64)
            note(rows, bad_offset[position], "is not a timestamp")
            offset_s = np.array([o or 0 for o in offsets], dtype=np.int64)[position]
            utc = naive - offset_s
            if rows[0] == 0:
                only = len(distinct) == 1 and len(rows) == len(tokens)
                fmt = {"format": "iso", "separator": head[0].as_py()[10],
                       "offset": distinct[0].as_py() if only else None}
        values[rows] = utc
    note(np.arange(len(tokens)), (values < 0) & ~failed,
         "is before 1970-01-01 00:00:00 UTC (a negative UNIX time)")
    if problems:
        row, message = min(problems)
        raise ref.error(row, tokens[row].as_py(), message, expected)
    if not fmt:
        fmt = {"format": next(k for k in ("epoch", "local") if masks.get(k) is not None
                              and masks[k][0])}
    return values, fmt


def parse_durations(tokens: pa.Array, ref: FieldRef, formats: tuple[str, ...]) -> tuple[np.ndarray, dict]:
    """Durations in any of ``formats`` (seconds, HH:MM:SS) -> seconds, and the column's text format."""
    if "seconds" in formats:
        values = _try_int(tokens)
        if values is not None and (values >= 0).all():
            return values, {"format": "seconds"}
    if "hms" in formats:
        hms_values, hms_mask, hour_digits = parse_hms(tokens)
    else:
        hms_values, hour_digits = np.zeros((2, len(tokens)), dtype=np.int64)
        hms_mask = np.zeros(len(tokens), dtype=bool)
    # an HH:MM:SS value holds a ':', never seconds: only the other values are searched
    seconds_mask = (_matches(tokens, EPOCH_PATTERN) if "seconds" in formats and not hms_mask.all()
                    else np.zeros(len(tokens), dtype=bool))
    hms_mask &= ~seconds_mask
    bad = ~(seconds_mask | hms_mask)
    if bad.any():
        row = _first(bad)
        token = tokens[row].as_py()
        raise ref.error(row, token, describe_bad_integer(token, "a duration"),
                        describe_formats(formats))
    values = hms_values  # parse_hms's own array
    if seconds_mask.any():
        subset = tokens.filter(pa.array(seconds_mask))
        values[seconds_mask] = np.asarray(pc.cast(subset, pa.int64()).to_numpy(), dtype=np.int64)
    if seconds_mask[0]:
        return values, {"format": "seconds"}
    return values, {"format": "hms", "hour_width": 1 if (hour_digits[hms_mask] == 1).any() else 2}
