"""Compiled kernels for SWF job lines: tokenize+parse, format, and the id columns' text.

Parsing 450,000 lines is ~8 million tokens; numpy needs a dozen passes over the bytes for the
same work, and pandas' C tokenizer does not report column positions (needed for the byte-exact
layout). One compiled pass does both. The kernels are ``_kernels.pyx`` (Cython, built at
install); they release the GIL, so ``tokenize`` and ``format_lines`` split large inputs into one
chunk per core and run the chunks in threads. Where they were not built, ``kernels_ref`` (the
same code in pure Python, the tests' reference) runs in one chunk (``swftools.extensions``).

Fresh memory is expensive (page faults): ``tokenize`` touches only the rows it writes and the
decimal arrays only where a token has a decimal point, and ``format_lines`` writes into buffers
its caller reuses from one row slice to the next.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np

from swftools.extensions import load
from swftools.fileio import usable_cores as _workers  # threads (tests set it: any machine)

# Error kinds reported by ``tokenize`` (first offending line only).
OK, TOO_FEW, BAD_CHAR, TOO_LONG = 0, 1, 2, 3
MAX_DIGITS = 18  # digits before (or after) the point that fit an int64 exactly
_MIN_CHUNK_BYTES = 4 << 20  # below this size, threads cost more than they save
# The writer formats 32,768-row slices (``writer.ROWS_PER_SLICE``), each split across the cores;
# a 4,096-row part takes about 0.5 ms, many times a thread's start-up.
_MIN_CHUNK_ROWS = 4096
# ``tokenize``'s flags and stats rows (see ``kernels_ref.tokenize_chunk``)
TABS, TRAILING_BLANKS, EXTRA_FIELDS, NEGATIVE, LINES = range(5)
DECIMAL_TOKENS, UNKNOWN_TOKENS = 3, 4
EXPORTS = ("tokenize_chunk", "format_rows", "int_strings", "parse_ids")  # each kernel module's


class Kernels(NamedTuple):
    """One set of the kernels (``EXPORTS``) and whether they release the GIL."""

    tokenize_chunk: Any
    format_rows: Any
    int_strings: Any
    parse_ids: Any
    threads: bool


_native: Kernels | None = None


def native() -> Kernels:
    """The compiled kernels, else (not built) the pure-Python reference."""
    global _native
    if _native is None:
        module = load("swftools.formats.swf._kernels", "reading and writing SWF")
        if module is None:
            from swftools.formats.swf import kernels_ref as module
        _native = Kernels(*(getattr(module, name) for name in EXPORTS),
                          threads=module.__name__.endswith("._kernels"))
    return _native


def reference() -> Kernels:
    """The pure-Python kernels (``kernels_ref``), the compiled ones' reference."""
    from swftools.formats.swf import kernels_ref

    return Kernels(*(getattr(kernels_ref, name) for name in EXPORTS), threads=False)


def _newlines(buf: np.ndarray, a: int, b: int) -> int:
    """How many newlines ``buf[a:b]`` holds (a block at a time: little fresh memory)."""
    block = 1 << 20
    return sum(int(np.count_nonzero(buf[i:min(i + block, b)] == 10)) for i in range(a, b, block))


def _chunks(data: bytes, buf: np.ndarray, start: int, parts: int) -> list[tuple[int, int, int]]:
    """(byte start, byte end, first line) of up to ``parts`` newline-aligned chunks of
    ``data[start:]`` (``buf``: its bytes as numpy)."""
    bounds = [start]
    for k in range(1, parts):
        cut = data.find(b"\n", start + (len(data) - start) * k // parts)
        if cut < 0 or cut + 1 <= bounds[-1]:
            break
        bounds.append(cut + 1)
    bounds.append(len(data))
    out, line = [], 0
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b > a:
            out.append((a, b, line))
            line += _newlines(buf, a, b)
    return out


def tokenize(data: bytes, n_fields: int, start: int = 0):
    """Parse the newline-terminated SWF job lines of ``data[start:]`` (bytes, or any buffer with
    ``find``, such as a memory map), ``n_fields`` numbers each (extra fields skipped).

    Returns field-major arrays ints[f, n], floats[f, n] (valid where point > 0) and point[f, n]
    (0 = no '.', else 1 + the digits after it), then extra_per_line[n], stats[5, f] (padded
    widths, decimal and -1 tokens per field: see ``kernels_ref.tokenize_chunk``), flags[5]
    (``TABS``, ..., ``LINES``) and error[3] (kind, row, field; kind OK when every line parsed).
    A field whose every value is -1 (``stats[UNKNOWN_TOKENS]`` = n) keeps a row of zeros in
    ``ints``, memory never touched: its values are known without it.
    """
    kernels = native()
    parts = _workers() if kernels.threads and len(data) - start >= 2 * _MIN_CHUNK_BYTES else 1
    buf = np.frombuffer(data, dtype=np.uint8)
    if parts > 1:
        chunks = _chunks(data, buf, start, parts)
        n_lines = chunks[-1][2] + _newlines(buf, chunks[-1][0], len(buf)) if chunks else 0
    else:  # one pass, no line count: a parsed line holds n_fields tokens and separators
        chunks = [(start, len(data), 0)] if len(data) > start else []
        n_lines = (len(data) - start) // (2 * max(n_fields, 1)) + 1
    ints = np.zeros((n_fields, n_lines), np.int64)  # pages touched only where values are
    floats = np.empty((n_fields, n_lines), np.float64)  # ... and only for decimals
    point = np.zeros((n_fields, n_lines), np.int8)
    extra = np.zeros(n_lines, np.int32)
    big = np.iinfo(np.int64).max
    stats = np.zeros((max(len(chunks), 1), 5, n_fields), np.int64)
    stats[:, 0:2, :] = big
    stats[:, 2, :] = -1
    flags = np.zeros((max(len(chunks), 1), 5), np.int64)
    errors = np.zeros((max(len(chunks), 1), 3), np.int64)

    def run(k: int) -> None:
        a, b, first = chunks[k]
        kernels.tokenize_chunk(buf[a:b], first, ints, floats, point, extra, stats[k], flags[k],
                               errors[k])

    if len(chunks) > 1:
        with ThreadPoolExecutor(len(chunks)) as pool:
            list(pool.map(run, range(len(chunks))))
    else:
        for k in range(len(chunks)):
            run(k)
    failed = [e for e in errors if e[0]]
    error = min(failed, key=lambda e: e[1]) if failed else np.zeros(3, np.int64)
    flag = flags.max(axis=0)
    if parts == 1:  # (after an error, the lines of the file, as many as the arrays hold)
        flag[LINES] = flags[0, LINES] if not error[0] else min(_newlines(buf, start, len(buf)),
                                                               n_lines)
    else:
        flag[LINES] = n_lines
    merged = np.concatenate([stats[:, 0:2].min(axis=0), stats[:, 2:3].max(axis=0),
                             stats[:, 3:].sum(axis=0)])
    n = int(flag[LINES])
    for k in np.flatnonzero(merged[UNKNOWN_TOKENS] < n):  # the kernel wrote values + 1
        ints[k, :n] -= 1
    return (ints[:, :n], floats[:, :n], point[:, :n], extra[:n], merged, flag, error)


def layout_from_pads(pads: np.ndarray) -> tuple[list[int], bool]:
    """Column widths (smallest padded width; 1 when there are no lines) and whether every line
    follows them exactly: a token wider than its field keeps one separator, and every token with
    more padding is padded to exactly the field's width (``pads``: ``tokenize``'s stats[0:3])."""
    big = np.iinfo(np.int64).max
    widths = np.where(pads[0] == big, 1, pads[0])
    padded_ok = (pads[2] < 0) | ((pads[1] == widths) & (pads[2] == widths))
    return [int(w) for w in widths], bool(padded_ok.all())


def format_lines(ints: np.ndarray, scaled: np.ndarray, dec_digits: np.ndarray,
                 widths: np.ndarray, n_rows: int | None = None,
                 buffers: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """SWF text of rows [0, n_rows) (default: all) of the field-major values, as consecutive
    byte chunks (one per worker thread). With ``buffers`` (a list the caller keeps from one call
    to the next) the chunks are views of its arrays, reused and grown as needed: each is valid
    until the next call with the same list."""
    n_rows = ints.shape[1] if n_rows is None else n_rows
    kernels = native()
    parts = _workers() if kernels.threads and n_rows >= 2 * _MIN_CHUNK_ROWS else 1
    bounds = [n_rows * k // parts for k in range(parts + 1)]
    spans = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a] or [(0, 0)]
    buffers = [] if buffers is None else buffers
    line = int(np.maximum(widths, 21).sum()) + len(widths)  # the kernel's bound, most often
    while len(buffers) < len(spans):
        buffers.append(np.empty(0, np.uint8))

    def run(k: int) -> np.ndarray:
        a, b = spans[k]
        if len(buffers[k]) < (b - a) * line:  # pages are touched only where text is written
            buffers[k] = np.empty((b - a) * line, np.uint8)
        size = kernels.format_rows(ints, scaled, dec_digits, widths, a, b, buffers[k])
        if size < 0:  # many decimals: a longer bound
            buffers[k] = np.empty(-size, np.uint8)
            size = kernels.format_rows(ints, scaled, dec_digits, widths, a, b, buffers[k])
        return buffers[k][:size]

    if len(spans) == 1:
        return [run(0)]
    with ThreadPoolExecutor(len(spans)) as pool:
        return list(pool.map(run, range(len(spans))))


def int_strings(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int32[n + 1], data uint8) of an Arrow string array holding the decimal text of
    ``values`` (>= 0; -1, unknown, is written empty: the caller marks it null). Up to about
    110 million values (int32 offsets)."""
    offsets = np.empty(len(values) + 1, np.int32)
    if len(values) * 19 >= 1 << 31:
        raise ValueError("int_strings: too many values for int32 offsets")
    return offsets, native().int_strings(values, offsets)


def parse_ids(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray | None,
              out: np.ndarray) -> int:
    """Parse an Arrow string array (``offsets`` int32[n + 1] into ``data``; ``valid``: uint8
    per row, None when all are) into ``out`` (int64[n]) when every valid string is an id as
    Python writes a non-negative int64; returns the first row that is not one, or -1."""
    none = np.empty(0, np.uint8)
    return int(native().parse_ids(offsets, data, none if valid is None else valid, out))
