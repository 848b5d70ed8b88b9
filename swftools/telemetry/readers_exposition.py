"""Prometheus text exposition 0.0.4 (timestamps in ms) and OpenMetrics 1.0 (timestamps in s).

Parsed with ``prometheus_client``'s own parsers; their ``ValueError``s are re-raised as
``InputError`` with the file and line the parser was reading. The format is taken from the
content (an OpenMetrics exposition ends with ``# EOF``) unless given.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from prometheus_client.openmetrics import parser as om_parser
from prometheus_client import parser as text_parser

from swftools.errors import InputError
from swftools.formats.inputs import read_text
from swftools.telemetry.buffer import FileStats, SampleBuffer, number_text

TEXT_FORMATS = ("prometheus-text", "openmetrics")


def _read_lines(path: Path) -> list[str]:
    try:
        return read_text(path, encoding="utf-8", newline="").splitlines(keepends=True)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(str(path), f"cannot read file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), f"not UTF-8 text ({exc.reason})") from None


def detect_text_format(lines: list[str]) -> str:
    """'openmetrics' if the exposition ends with ``# EOF``, else 'prometheus-text'."""
    for line in reversed(lines):
        if line.strip():
            return "openmetrics" if line.strip() == "# EOF" else "prometheus-text"
    return "prometheus-text"


class _LineCounter:
    """Feeds lines to a parser and remembers the number of the last one handed out."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.line = 0

    def __iter__(self) -> Iterator[str]:
        for line in self.lines:
            self.line += 1
            yield line


def _single_line_key(line: str, fmt: str) -> tuple[str, tuple, float | None] | None:
    """(name, labels, timestamp) of one sample line parsed alone, for error location."""
    try:
        if fmt == "openmetrics":
            fams = list(om_parser.text_string_to_metric_families(line.rstrip("\n") + "\n# EOF\n"))
        else:
            fams = list(text_parser.text_string_to_metric_families(line))
        s = fams[0].samples[0]
    except (ValueError, IndexError):
        return None
    ts = None if s.timestamp is None else float(s.timestamp)
    return s.name, tuple(sorted(s.labels.items())), ts


def read_exposition(path: str | Path, buffer: SampleBuffer, src: int,
                    fmt: str | None = None) -> FileStats:
    """Map every sample of one text-exposition / OpenMetrics file into ``buffer``."""
    path = Path(path)
    lines = _read_lines(path)
    fmt = fmt or detect_text_format(lines)
    if fmt not in TEXT_FORMATS:
        raise InputError(str(path), f"unknown text format {fmt!r}", expected=" or ".join(TEXT_FORMATS))
    stats = FileStats(str(path), fmt)
    sample_lines = [i + 1 for i, line in enumerate(lines)
                    if line.strip() and not line.lstrip().startswith("#")]
    _check_ascii_numbers(path, lines, sample_lines)
    counter = _LineCounter(lines)
    parse = om_parser.text_fd_to_metric_families if fmt == "openmetrics" else \
        text_parser.text_fd_to_metric_families
    position = 0  # index into sample_lines of the next sample
    try:
        for family in parse(counter):
            start = position
            position += len(family.samples)
            _add_family(path, fmt, lines, sample_lines, start, family, buffer, src, stats)
    except ValueError as exc:
        unit = "seconds" if fmt == "openmetrics" else "milliseconds"
        field, value = _bad_number(lines[counter.line - 1]) if counter.line else (None, None)
        raise InputError(str(path), f"{fmt} parse error: {exc}", line=counter.line or None,
                         field=field, value=value,
                         expected=f"{fmt} exposition with timestamps in {unit}") from None
    if not stats.samples_read and not sample_lines:
        raise InputError(str(path), "no samples", expected=f"{fmt} samples with timestamps")
    return stats


def _sample_tail(line: str) -> list[str]:
    """The tokens after a sample's name and labels: value, then timestamp (and exemplar). The
    labels end at the first ``}`` outside a quoted value (an exemplar has braces too)."""
    line = line.lstrip()
    name_end = min((k for k in (line.find("{"), line.find(" ")) if k >= 0), default=len(line))
    if line[name_end:name_end + 1] != "{":
        return line[name_end:].split()
    quoted = escaped = False
    for k in range(name_end + 1, len(line)):
        c = line[k]
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            quoted = not quoted
        elif c == "}" and not quoted:
            return line[k + 1:].split()
    return []


def _bad_number(line: str) -> tuple[str | None, str | None]:
    """(field, token) of the value or timestamp of a sample line that does not parse."""
    for field, token in zip(("value", "timestamp"), _sample_tail(line)):
        if not number_text(token):
            return field, token
    return None, None


def _check_ascii_numbers(path: Path, lines: list[str], sample_lines: list[int]) -> None:
    """Values and timestamps are ASCII numbers: the parser's ``float()`` would also take other
    scripts' digits ('١٢' as 12), which no exporter writes."""
    for number in sample_lines:
        tail = _sample_tail(lines[number - 1])
        if all(token.isascii() for token in tail):
            continue
        for k, token in enumerate(tail):
            if not token.isascii():
                field = "value" if k == 0 else "timestamp"
                raise InputError(str(path), f"{token!r} is not a number", line=number,
                                 field=field, value=token,
                                 expected="ASCII digits (a float value, an integer timestamp)")


def _add_family(path: Path, fmt: str, lines: list[str], sample_lines: list[int], start: int,
                family, buffer: SampleBuffer, src: int, stats: FileStats) -> None:
    def where(k: int) -> int | None:
        """Line of the family's k-th sample; verified because OpenMetrics drops exact dups."""
        guess = start + k
        s = family.samples[k]
        want = (s.name.removesuffix("_total"), tuple(sorted(s.labels.items())),
                None if s.timestamp is None else float(s.timestamp))
        for j in range(guess, len(sample_lines)):
            got = _single_line_key(lines[sample_lines[j] - 1], fmt)
            if got is not None and (got[0].removesuffix("_total"),) + got[1:] == want:
                return sample_lines[j]
        return sample_lines[guess] if guess < len(sample_lines) else None

    # Group the family's samples by series, keeping file order.
    groups: dict[tuple, list[int]] = {}
    for k, s in enumerate(family.samples):
        groups.setdefault((s.name, tuple(sorted(s.labels.items()))), []).append(k)
    for (name, label_items), ks in groups.items():
        samples = [family.samples[k] for k in ks]
        missing = next((i for i, s in enumerate(samples) if s.timestamp is None), None)
        if missing is not None:
            raise InputError(str(path), f"sample of {name} has no timestamp", line=where(ks[missing]),
                             field="timestamp", expected="every sample with a timestamp")
        ts = np.array([float(s.timestamp) for s in samples], dtype=np.float64)
        values = np.array([float(s.value) for s in samples], dtype=np.float64)
        buffer.add_series(str(path), src, name, dict(label_items), ts, values, stats,
                          lambda i, ks=ks: where(ks[i]))
