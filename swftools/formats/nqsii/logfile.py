"""From NQSII log bytes to one text array per column: text checks, header, CSV.

Row ``r`` of the parsed body is file line ``r + 2`` (line 1 is the header; empty lines are
rows too, so the numbering holds).
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from swftools.errors import NO_JOB_ROWS, NO_JOB_ROWS_EXPECTED, InputError
from swftools.fileio import is_gzip
from swftools.formats.inputs import detect_gzip, open_error, read_bytes

_BOM = b"\xef\xbb\xbf"
LOG_EXPECTED = "an NQSII job log: a CSV file with a header row, plain or gzip"


# Plain (not gzip) logs from this size on are parsed from the file, never held whole in memory.
STREAM_MIN_BYTES = 64 << 20
_HEAD_BYTES = 1 << 22  # read to split the header from a streamed log
_SCAN_BYTES = 1 << 24  # block of the streamed checks


@dataclass
class RawLog:
    """An NQSII log split into header and body, with the text layout needed to write it back.

    A large plain log is not loaded: ``body`` stays empty and ``source`` is (path, offset of the
    first job line); :func:`parse_body` reads the job lines from the file."""

    header: list[str]
    body: bytes  # job lines, separators normalized to a bare comma
    separator: str
    line_ending: str
    final_newline: bool
    bom: bool
    estimated_lines: int
    source: tuple[str, int] | None = None

    def load_body(self) -> bytes:
        """The job lines in memory (read from the file when streamed)."""
        if self.source is not None:
            path, offset = self.source
            with open(path, "rb") as fh:
                fh.seek(offset)
                self.body, self.source = fh.read(), None
        return self.body


def _line_of(data: bytes, position: int) -> int:
    return data.count(b"\n", 0, position) + 1


def check_text(data: bytes, path: str) -> None:
    """InputError unless ``data`` is non-empty text without NUL bytes."""
    if not re.search(rb"\S", data):
        raise InputError(path, "empty file: no header row and no job rows",
                         expected="a header row and one job per line")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(path, "binary data: NUL byte, not a text file", line=_line_of(data, nul),
                         expected="a CSV text file")


def check_utf8(data: bytes, path: str, line_offset: int = 0) -> None:
    """InputError at the first byte that is not UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded",
                         line=_line_of(data, exc.start) + line_offset,
                         expected="a CSV text file in UTF-8") from None


def _detect_separator(lines: list[bytes]) -> str:
    """``", "`` when every comma of the header and first job line is followed by one space."""
    commas = sum(line.count(b",") for line in lines)
    spaced = sum(line.count(b", ") for line in lines)
    doubled = any(b",  " in line for line in lines)
    return ", " if commas and spaced == commas and not doubled else ","


def _drop_spaces_after_commas(body: bytes) -> bytes:
    """Remove spaces after field separators (outside quoted values)."""
    if body.find(b", ") < 0:
        return body
    if b'"' not in body:
        while b", " in body:
            body = body.replace(b", ", b",")
        return body
    return re.sub(rb'("(?:[^"]|"")*")|, +', lambda m: m.group(1) or b",", body)


def split_log(data: bytes, path: str, allow_empty: bool = False) -> RawLog:
    """Split the header from the body and record the text layout (separator, line ending, BOM).
    A header without job rows is an error unless ``allow_empty``."""
    check_text(data, path)
    bom = data.startswith(_BOM)
    if bom:
        data = data[len(_BOM):]
    end = data.find(b"\n")
    header_line = data if end < 0 else data[:end]
    line_ending = "\r\n" if header_line.endswith(b"\r") else "\n"
    check_utf8(header_line, path)
    header_text = header_line.decode("utf-8").rstrip("\r")
    try:
        header = next(csv.reader([header_text], skipinitialspace=True), [])
    except csv.Error as exc:  # a bare carriage return (classic Mac line ends), a huge field
        raise InputError(path, f"header is not a CSV line: {exc}", line=1,
                         expected="a header row ending in LF or CR LF") from None
    body = b"" if end < 0 else data[end + 1:]
    if not re.search(rb"\S", body) and not allow_empty:
        raise InputError(path, NO_JOB_ROWS, line=1, expected=NO_JOB_ROWS_EXPECTED)
    first_job_line = body[:body.find(b"\n")] if b"\n" in body[:1 << 16] else body[:1 << 16]
    return RawLog(header=header, body=_drop_spaces_after_commas(body),
                  separator=_detect_separator([header_line, first_job_line]),
                  line_ending=line_ending, final_newline=data.endswith(b"\n"), bom=bom,
                  estimated_lines=len(body) // (len(first_job_line) + 1))


def load_log(path: str | os.PathLike, allow_empty: bool = False) -> RawLog:
    """:func:`split_log` of the file at ``path``: a plain log of ``STREAM_MIN_BYTES`` or more is
    checked block by block (the same checks) and left on disk for :func:`parse_body`; anything
    else (gzip, small, a separator followed by spaces, a NUL byte: what needs the whole text, or
    an error) is read whole. A file that cannot be opened is an InputError (``open_error``)."""
    name = str(path)
    try:
        size = os.path.getsize(path)
        data = read_bytes(path) if size < STREAM_MIN_BYTES or is_gzip(path) else None
    except OSError as exc:  # missing, a directory, not readable
        raise open_error(path, exc, LOG_EXPECTED) from None
    if data is not None:
        return split_log(data, name, allow_empty)
    detect_gzip(path)  # the warning for a plain file named .gz
    with open(path, "rb") as fh:
        head = fh.read(_HEAD_BYTES)
    end = head.find(b"\n")
    first_jobs = head[end + 1:] if end >= 0 else b""
    # split_log looks at the first job line, or at most 64 KiB of it
    if not (b"\n" in first_jobs[:1 << 16] or len(first_jobs) >= 1 << 16) or \
            not re.search(rb"\S", first_jobs) or not _plain_body(path, end + 1):
        return split_log(read_bytes(path), name, allow_empty)
    # the header and the first job lines give the layout exactly as the whole text would
    log = split_log(head[:end + 1 + len(first_jobs)], name, allow_empty)
    with open(path, "rb") as fh:
        fh.seek(size - 1)
        log.final_newline = fh.read(1) == b"\n"
    line = first_jobs.find(b"\n", 0, 1 << 16)
    log.estimated_lines = (size - end - 1) // ((line if line >= 0 else 1 << 16) + 1)
    log.body, log.source = b"", (name, end + 1)
    return log


def _plain_body(path: str | os.PathLike, offset: int) -> bool:
    """Whether the job lines from ``offset`` hold some text, no NUL byte and no separator
    followed by a space (which :func:`split_log` rewrites in memory). The file is read block
    by block (not memory-mapped: a map dies with SIGBUS when the file is truncated under it)."""
    text, last = False, b""
    with open(path, "rb") as fh:
        fh.seek(offset)
        while block := fh.read(_SCAN_BYTES):
            if b"\x00" in block or (last == b"," and block[:1] == b" ") or \
                    _has_spaced_separator(np.frombuffer(block, np.uint8)):
                return False
            text = text or _NON_SPACE.search(block) is not None
            last = block[-1:]
    return text


_NON_SPACE = re.compile(rb"\S")
_SPACED_SEPARATOR = int.from_bytes(b", ", "little")


def _has_spaced_separator(data: np.ndarray) -> bool:
    """Whether the bytes hold ``", "``: a compare of 16-bit words at both alignments (a few
    times faster than a byte search for a pair whose first byte is everywhere)."""
    for start in (0, 1):
        words = data[start:start + (len(data) - start) // 2 * 2].view("<u2")
        if (words == _SPACED_SEPARATOR).any():
            return True
    return False


def _first_invalid_row(body: bytes, names: list[str]) -> tuple[int, int, str] | None:
    """(line, field count, text) of the first row whose field count is wrong, or None."""
    found: list[tuple[int, int, str]] = []

    def handler(row: pacsv.InvalidRow) -> str:
        found.append((row.number + 1, row.actual_columns, row.text))
        return "error"

    try:
        _read(body, names, threads=False, handler=handler)
    except pa.ArrowInvalid:
        pass
    return found[0] if found else None


def _read(body: bytes, names: list[str], threads: bool, handler=None) -> pa.Table:
    return pacsv.read_csv(pa.BufferReader(body), **_csv_options(
        names, threads, min(max(len(body) + 1, 1 << 20), 1 << 24), handler))


def _read_file(source: tuple[str, int], names: list[str]) -> pa.Table:
    """:func:`_read` of the job lines of a streamed log, from the file."""
    path, offset = source
    with pa.OSFile(path, "rb") as fh:
        fh.seek(offset)
        return pacsv.read_csv(fh, **_csv_options(names, True, 1 << 24))


def _csv_options(names: list[str], threads: bool, block_size: int, handler=None) -> dict:
    """pyarrow's CSV options for job lines: every cell as text, empty lines kept as rows."""
    return {
        "read_options": pacsv.ReadOptions(column_names=names, use_threads=threads,
                                          block_size=block_size),
        "parse_options": pacsv.ParseOptions(ignore_empty_lines=False,
                                            invalid_row_handler=handler),
        "convert_options": pacsv.ConvertOptions(
            column_types={n: pa.string() for n in names}, strings_can_be_null=False,
            quoted_strings_can_be_null=False, null_values=[]),
    }


def parse_body(log: RawLog, path: str) -> list[pa.ChunkedArray]:
    """The body's text tokens, one string column per header column (in blocks: pyarrow parses
    them on every core, in the same order); InputError on a wrong field count."""
    names = [f"c{i}" for i in range(len(log.header))]
    if log.source is None and not re.search(rb"\S", log.body):  # a header only (allow_empty)
        return [pa.chunked_array([], pa.string()) for _ in names]
    try:
        table = _read(log.body, names, threads=True) if log.source is None else \
            _read_file(log.source, names)
    except pa.ArrowInvalid as exc:
        log.load_body()
        check_utf8(log.body, path, line_offset=1)
        bad = _first_invalid_row(log.body, names)
        if bad is None:
            raise InputError(path, f"not a readable CSV log ({exc})") from None
        line, count, text = bad
        what = "empty line" if not text.strip() else f"{count} field{'s' * (count != 1)}"
        raise InputError(path, f"{what}, expected {len(names)} (one per header column)",
                         line=line, value=text) from None
    return table.columns  # the table goes: each column is freed on its own once parsed
