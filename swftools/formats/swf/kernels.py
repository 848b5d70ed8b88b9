"""Compiled kernels for SWF job lines: tokenize+parse, and format.

Parsing 450,000 lines is ~8 million tokens; numpy needs a dozen passes over the bytes for the
same work, and pandas' C tokenizer does not report column positions (needed for the byte-exact
layout). One compiled pass does both. The kernels themselves are in ``kernels_jit`` (numba,
cached on disk after the first call); they run from there, releasing the GIL, so ``tokenize``
and ``format_lines`` split the rows into one chunk per core and run the chunks in threads.
When the same kernels have been compiled ahead of time (``build_aot``, ``make aot``; see
``swftools.aot``) they run from that extension module instead, one chunk after the other (it
holds the GIL), and the process never imports numba (~0.3 s saved; same results).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from swftools import aot
from swftools.aot import kernel_threads as _workers  # (tests set it: chunks on any machine)
from swftools.aot import load_numba_target  # also this module's: the numba kernels' set-up

# Error kinds reported by ``tokenize`` (first offending line only).
OK, TOO_FEW, BAD_CHAR, TOO_LONG = 0, 1, 2, 3
MAX_DIGITS = 18  # digits before (or after) the point that fit an int64 exactly
_MIN_CHUNK_BYTES = 4 << 20  # below these sizes, threads cost more than they save
_MIN_CHUNK_ROWS = 50_000
AOT_MODULE = "swftools_swf_kernels"  # the ahead-of-time compiled module's name
# Its exports: name -> (function in kernels_jit, numba signature of the arrays the callers pass).
AOT_EXPORTS = {
    "tokenize_chunk": ("_tokenize_chunk", "void(uint8[:], int64, int64[:, :], float64[:, :], "
                                          "int8[:, :], int32[:], int64[:, :], int64[:], int64[:])"),
    "format_rows": ("_format_rows", "uint8[:](int64[:, :], int64[:, :], int8[:, :], int64[:], "
                                    "int64, int64)"),
}
_native: tuple[Any, Any, bool] | None = None  # (tokenize_chunk, format_rows, releases the GIL)
_threaded: tuple[Any, Any, bool] | None = None  # the numba kernels (they release the GIL)
# From these sizes on, the numba kernels in threads beat the ahead-of-time ones (which hold the
# GIL): loading numba costs ~0.3 s once, threads save about half of ~5 ms per MB on 2 cores.
_THREADED_MIN_BYTES = 128 << 20
_THREADED_MIN_ROWS = 1_500_000


def _jit_source() -> tuple[Path, Path]:
    """The files the compiled kernels depend on: their code and this module's constants."""
    return Path(__file__).with_name("kernels_jit.py"), Path(__file__)


def native(large: bool = False) -> tuple[Any, Any, bool]:
    """(tokenize_chunk, format_rows, whether they release the GIL): the ahead-of-time compiled
    kernels when built for this source and these versions, else the numba ones; for ``large``
    inputs the numba ones, which run in threads."""
    global _native, _threaded
    if large:
        if _threaded is None:
            load_numba_target()
            from swftools.formats.swf import kernels_jit

            _threaded = (kernels_jit._tokenize_chunk, kernels_jit._format_rows, True)
        return _threaded
    if _native is None:
        module = aot.load(AOT_MODULE, _jit_source())
        _native = ((module.tokenize_chunk, module.format_rows, False) if module is not None
                   else native(large=True))
    return _native


def build_aot() -> Path:
    """Compile the kernels ahead of time (``swftools.aot.build``); returns the module's path.
    Later processes load it instead of numba (``native``)."""
    from swftools.formats.swf import kernels_jit

    return aot.build(AOT_MODULE, _jit_source(),
                     {name: (getattr(kernels_jit, function).py_func, signature)
                      for name, (function, signature) in AOT_EXPORTS.items()})


def _chunks(body: bytes, parts: int) -> list[tuple[int, int, int]]:
    """(byte start, byte end, first line) of up to ``parts`` newline-aligned chunks."""
    bounds = [0]
    for k in range(1, parts):
        cut = body.find(b"\n", len(body) * k // parts)
        if cut < 0 or cut + 1 <= bounds[-1]:
            break
        bounds.append(cut + 1)
    bounds.append(len(body))
    out, line = [], 0
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b > a:
            out.append((a, b, line))
            line += body.count(b"\n", a, b)
    return out


def tokenize(body: bytes, n_fields: int):
    """Parse newline-terminated SWF job lines, ``n_fields`` numbers each (extra fields skipped).

    Returns field-major arrays ints[f, n], floats[f, n] (valid where frac >= 0) and frac[f, n]
    (-1 = no '.'), then extra_per_line[n], pads[3, f] (see ``kernels_jit._tokenize_chunk``), flags[3] and
    error[3] (kind, row, field; kind OK when every line parsed).
    """
    tokenize_chunk, _, threads = native(large=len(body) >= _THREADED_MIN_BYTES)
    parts = _workers() if len(body) >= 2 * _MIN_CHUNK_BYTES else 1
    chunks = _chunks(body, parts)
    n_lines = chunks[-1][2] + body.count(b"\n", chunks[-1][0]) if chunks else 0
    ints = np.empty((n_fields, n_lines), np.int64)
    floats = np.empty((n_fields, n_lines), np.float64)  # pages are touched only for decimals
    frac = np.full((n_fields, n_lines), -1, np.int8)
    extra = np.zeros(n_lines, np.int32)
    buf = np.frombuffer(body, dtype=np.uint8)
    big = np.iinfo(np.int64).max
    pads = np.empty((len(chunks), 3, n_fields), np.int64)
    pads[:, 0:2, :] = big
    pads[:, 2, :] = -1
    flags = np.zeros((len(chunks), 3), np.int64)
    errors = np.zeros((len(chunks), 3), np.int64)

    def run(k: int) -> None:
        a, b, first = chunks[k]
        tokenize_chunk(buf[a:b], first, ints, floats, frac, extra, pads[k], flags[k], errors[k])

    if len(chunks) > 1 and threads:
        with ThreadPoolExecutor(len(chunks)) as pool:
            list(pool.map(run, range(len(chunks))))
    else:
        for k in range(len(chunks)):
            run(k)
    failed = [e for e in errors if e[0]]
    error = min(failed, key=lambda e: e[1]) if failed else np.zeros(3, np.int64)
    flag = flags.max(axis=0) if len(chunks) else np.zeros(3, np.int64)
    merged = np.array([pads[:, 0].min(axis=0) if len(chunks) else np.full(n_fields, big),
                       pads[:, 1].min(axis=0) if len(chunks) else np.full(n_fields, big),
                       pads[:, 2].max(axis=0) if len(chunks) else np.full(n_fields, -1)])
    return ints, floats, frac, extra, merged, flag, error


def layout_from_pads(pads: np.ndarray) -> tuple[list[int], bool]:
    """Column widths (smallest padded width; 1 when there are no lines) and whether every line
    follows them exactly: a token wider than its field keeps one separator, and every token with
    more padding is padded to exactly the field's width."""
    big = np.iinfo(np.int64).max
    widths = np.where(pads[0] == big, 1, pads[0])
    padded_ok = (pads[2] < 0) | ((pads[1] == widths) & (pads[2] == widths))
    return [int(w) for w in widths], bool(padded_ok.all())


def format_lines(ints, scaled, dec_digits, widths) -> list[np.ndarray]:
    """SWF text of every row, as consecutive byte chunks (one per worker thread)."""
    n_rows = ints.shape[1]
    _, format_rows, threads = native(large=n_rows >= _THREADED_MIN_ROWS)
    parts = _workers() if n_rows >= 2 * _MIN_CHUNK_ROWS else 1
    bounds = [n_rows * k // parts for k in range(parts + 1)]
    spans = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    if len(spans) <= 1:
        return [format_rows(ints, scaled, dec_digits, widths, 0, n_rows)]
    if not threads:
        return [format_rows(ints, scaled, dec_digits, widths, a, b) for a, b in spans]
    with ThreadPoolExecutor(len(spans)) as pool:
        return list(pool.map(lambda s: format_rows(ints, scaled, dec_digits, widths, *s), spans))
