"""``swftools.formats.swf.kernels`` (issue 30), the wrapper around the kernels: loading the
compiled ones or the reference, chunks against one pass, buffers and limits."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from swftools.formats.swf import _kernels  # the compiled kernels must be built (``make dev``)
from swftools.formats.swf import kernels
from swftools.formats.swf import kernels_ref

from .swf_kernels_support import BIG, compiled, reference_line, running

_REF = (kernels_ref.tokenize_chunk, kernels_ref.format_rows, kernels_ref.int_strings,
        kernels_ref.parse_ids)


def test_native_loads_the_compiled_kernels_once_else_runs_the_reference(monkeypatch):
    calls = []

    def load(name, what):
        calls.append((name, what))
        return _kernels

    monkeypatch.setattr(kernels, "_native", None)
    monkeypatch.setattr(kernels, "load", load)
    first = kernels.native()
    assert first == (_kernels.tokenize_chunk, _kernels.format_rows, _kernels.int_strings,
                     _kernels.parse_ids, True)
    assert kernels.native() is first  # loaded once
    assert calls == [("swftools.formats.swf._kernels", "reading and writing SWF")]
    monkeypatch.setattr(kernels, "_native", None)
    monkeypatch.setattr(kernels, "load", lambda name, what: None)  # not built
    assert kernels.native() == (*_REF, False)
    assert kernels.reference() == (*_REF, False)  # pure Python: no threads


def _line(j: int) -> bytes:
    """Job line j: 18 fields of several widths, some -1, a decimal, a negative in one line,
    extra fields, a tab and a trailing blank in others."""
    fields = [f"{j:6d}", str(10 * j), "-1", f"{j % 7}.{j % 3}5" if j % 4 else "-1", str(j % 5)]
    fields += ["-1" if (j + k) % 3 else str(j * k) for k in range(13)]
    if j == 7:
        fields[3] = "-3"  # a negative other than -1
    line = " ".join(fields)
    if j == 5:
        line += " 99 98"  # two extra fields
    if j == 9:
        line = line.replace(" ", "\t", 1)
    if j == 11:
        line += " "
    return line.encode() + b"\n"


_HEAD = b"; Version: 2.2\n; Note: x\n"


def _tokenized(native, body: bytes, start: int = 0, workers: int = 1, min_bytes: int = 1,
               n_fields: int = 18):
    saved = (kernels._native, kernels._MIN_CHUNK_BYTES, kernels._workers)
    kernels._native, kernels._MIN_CHUNK_BYTES = native, min_bytes
    kernels._workers = lambda: workers
    try:
        return kernels.tokenize(body, n_fields, start)
    finally:
        kernels._native, kernels._MIN_CHUNK_BYTES, kernels._workers = saved


def _same(got, expected) -> None:
    ints, floats, point, extra, stats, flags, error = got
    assert error.tolist() == expected[6].tolist()
    assert flags.tolist() == expected[5].tolist()
    assert ints.shape == expected[0].shape and np.array_equal(ints, expected[0])
    assert np.array_equal(point, expected[2]) and np.array_equal(extra, expected[3])
    assert floats[point > 0].tolist() == expected[1][expected[2] > 0].tolist()
    assert np.array_equal(stats, expected[4])


def _spy(calls: list) -> kernels.Kernels:
    def tokenize_chunk(buf, first, *rest):
        calls.append((bytes(buf), first))
        _kernels.tokenize_chunk(buf, first, *rest)

    return compiled()._replace(tokenize_chunk=tokenize_chunk)


@pytest.mark.parametrize("n_lines", [1, 2, 3, 7, 16])
@pytest.mark.parametrize("workers", [2, 3, 8])
def test_tokenize_in_chunks_gives_the_one_pass_result(n_lines, workers):
    """Newline-aligned chunks (each line in one, its rows numbered from the file's start), up to
    one per worker, also more workers than lines, after a header: the reference's one pass."""
    body = _HEAD + b"".join(_line(j) for j in range(1, n_lines + 1))
    expected = _tokenized(kernels.reference(), body, len(_HEAD))
    assert expected[5][kernels.LINES] == n_lines and expected[6][0] == kernels.OK
    calls = []
    _same(_tokenized(_spy(calls), body, len(_HEAD), workers), expected)
    calls.sort(key=lambda call: call[1])  # (the threads' order)
    assert len(calls) <= min(workers, n_lines) and (len(calls) > 1 or n_lines <= 2)
    if n_lines >= 2 * workers:  # a share of two lines or more: a cut in each, one per core
        assert len(calls) == workers
    assert b"".join(buf for buf, _ in calls) == body[len(_HEAD):]
    for buf, first in calls:
        assert buf.endswith(b"\n") and body[len(_HEAD):].split(buf)[0].count(b"\n") == first


def test_tokenize_splits_after_a_long_header_and_never_with_the_reference():
    """The bytes after ``start`` are shared out (one chunk per core even when the header is
    longer than the lines); the pure-Python reference holds the GIL: one chunk."""
    head = b"; Note: " + b"x" * 2000 + b"\n"
    body = head + b"".join(_line(j) for j in range(1, 13))
    expected = _tokenized(kernels.reference(), body, len(head))
    calls = []
    _same(_tokenized(_spy(calls), body, len(head), 3), expected)
    assert len(calls) == 3
    reference, calls = kernels.reference(), []

    def spied(buf, first, *rest):
        calls.append(first)
        kernels_ref.tokenize_chunk(buf, first, *rest)

    _same(_tokenized(reference._replace(tokenize_chunk=spied), body, len(head), 3), expected)
    assert calls == [0]


def test_tokenize_counts_the_lines_past_a_mebibyte():
    """Chunks over 1 MiB (lines counted a block at a time): the same as in one pass."""
    body = b"".join(_line(j) for j in range(1, 21)) * 2000  # about 2.4 MiB
    calls = []
    got = _tokenized(_spy(calls), body, 0, 2)
    calls.sort(key=lambda call: call[1])
    assert len(calls) == 2 and calls[1][1] == body[:-len(calls[1][0])].count(b"\n")
    _same(got, _tokenized(compiled(), body, 0, 1, min_bytes=len(body)))
    assert got[5][kernels.LINES] == 40_000
    body = body[:-10] + b"x" + body[-9:]  # a bad last line: the lines counted after it
    for workers in (1, 2):
        got = _tokenized(compiled(), body, 0, workers, min_bytes=1 if workers > 1 else 1 << 30)
        assert got[6][:2].tolist() == [kernels.BAD_CHAR, 39_999]
        assert got[5][kernels.LINES] == 40_000


def test_tokenize_reports_the_first_bad_line_of_any_chunk():
    lines = [_line(j) for j in range(1, 13)]
    lines[4] = b"1 2 3\n"  # too few fields
    lines[9] = lines[9].replace(b"-1", b"-x", 1)  # a bad character, later
    body = _HEAD + b"".join(lines)
    for workers in (1, 2, 4):
        got = _tokenized(compiled(), body, len(_HEAD), workers)
        assert got[6].tolist() == [kernels.TOO_FEW, 4, 3], workers
    lines[4] = _line(5)  # the bad character alone, in the last chunk
    body = _HEAD + b"".join(lines)
    for workers in (1, 4):
        got = _tokenized(compiled(), body, len(_HEAD), workers)
        assert got[6].tolist() == [kernels.BAD_CHAR, 9, lines[9].split().index(b"-x")]
        assert got[5][kernels.LINES] == got[0].shape[1] == 12  # the lines after the header


def test_tokenize_after_an_error_in_one_pass_holds_the_lines_the_arrays_can():
    """One pass: after an error LINES is the lines of the text (from ``start``), or as many as
    the arrays hold when short lines outnumber their room; the arrays are that long."""
    for native in (compiled(), kernels.reference()):
        got = _tokenized(native, b"1 2\n" * 30, 0, min_bytes=1 << 30)
        assert got[6].tolist() == [kernels.TOO_FEW, 0, 2]
        assert 0 < got[5][kernels.LINES] == got[0].shape[1] == len(got[3]) < 30


def test_tokenize_in_one_pass_fits_lines_of_one_digit_fields():
    """The shortest parsed lines (one digit and one separator a field) fill the arrays."""
    body = b"1 " * 17 + b"2\n"
    for native in (compiled(), kernels.reference()):
        for n in (1, 2, 5):
            got = _tokenized(native, body * n, 0, min_bytes=1 << 30)
            assert got[6].tolist() == [0, 0, 0] and got[5][kernels.LINES] == n
            assert got[0].tolist() == [[1] * n] * 17 + [[2] * n]
    for n in (1, 6):  # one field: "d\n"
        got = _tokenized(kernels.reference(), b"7\n" * n, 0, min_bytes=1 << 30, n_fields=1)
        assert got[0].tolist() == [[7] * n] and got[5][kernels.LINES] == n


def test_tokenize_from_byte_0_by_default_and_a_field_of_unknowns_left_zero():
    with running(compiled(), False):
        ints, floats, point, extra, stats, flags, error = kernels.tokenize(b"1 -1 3\n4 -1 -6\n", 3)
    assert ints.tolist() == [[1, 4], [0, 0], [3, -6]]  # every value of field 2 is -1
    assert stats[kernels.UNKNOWN_TOKENS].tolist() == [0, 2, 0] and flags[kernels.NEGATIVE]
    assert [a.dtype for a in (ints, floats, point, extra, stats, flags, error)] == \
        [np.int64, np.float64, np.int8, np.int32, np.int64, np.int64, np.int64]


def test_tokenize_of_no_lines():
    for native in (compiled(), kernels.reference()):
        for workers in (1, 3):
            ints, _, _, extra, stats, flags, error = _tokenized(native, _HEAD, len(_HEAD),
                                                                workers)
            assert ints.shape == (18, 0) and extra.shape == (0,)
            assert flags.tolist() == [0] * 5 and error.tolist() == [0, 0, 0]
            assert stats.tolist() == [[BIG] * 18, [BIG] * 18, [-1] * 18, [0] * 18, [0] * 18]


def test_layout_from_pads_hand_worked():
    big = BIG
    pads = np.array([[5, 3, big], [5, big, big], [5, -1, -1]], np.int64)  # 3rd: no lines
    assert kernels.layout_from_pads(pads) == ([5, 3, 1], True)
    for row, value in ((1, 6), (2, 6)):  # a padded token wider than the field's smallest
        bad = pads.copy()
        bad[row, 0] = value
        bad[3 - row, 0] = 5
        assert kernels.layout_from_pads(bad) == ([5, 3, 1], False)
    body = b"    1 22\n   10  3\n123456 44\n"  # widths 5, 2; a token wider than its field
    stats = _tokenized(compiled(), body, 0, n_fields=2)[4]
    assert kernels.layout_from_pads(stats[0:3]) == ([5, 2], True)
    stats = _tokenized(compiled(), body + b"     7 55\n", 0, n_fields=2)[4]  # padded to 6
    assert kernels.layout_from_pads(stats[0:3]) == ([5, 2], False)


def _formatting(native, workers: int = 1):
    saved = (kernels._native, kernels._MIN_CHUNK_ROWS, kernels._workers)

    @contextlib.contextmanager
    def patched():
        kernels._native, kernels._MIN_CHUNK_ROWS = native, 1
        kernels._workers = lambda: workers
        try:
            yield
        finally:
            kernels._native, kernels._MIN_CHUNK_ROWS, kernels._workers = saved
    return patched()


_INTS = np.array([[1, -1, 30, 4000, 5, -6, 7], [123456789, 0, -1, 2, 3, 4, 5]], np.int64)
_SCALED = _INTS * 10
_DIGITS = np.full(_INTS.shape, -1, np.int8)
_DIGITS[1, 2] = 1  # -1.0
_WIDTHS = np.array([4, 9], np.int64)


@pytest.mark.parametrize("n_rows", [None, 0, 1, 2, 5, 7])
@pytest.mark.parametrize("workers", [1, 3])
def test_format_lines_in_one_chunk_per_worker(n_rows, workers):
    """Rows [0, n_rows) (all by default) as one chunk of whole lines per worker thread (fewer
    when there are fewer rows), with the reused buffers the same text again."""
    n = 7 if n_rows is None else n_rows
    expected = [reference_line(_INTS, _SCALED, _DIGITS, _WIDTHS, r).encode() for r in range(n)]
    buffers = []
    for _ in range(2):
        with _formatting(compiled(), workers):
            chunks = kernels.format_lines(_INTS, _SCALED, _DIGITS, _WIDTHS, n_rows, buffers)
        text = [c.tobytes() for c in chunks]
        assert b"".join(text) == b"".join(expected)
        assert len(chunks) == max(1, min(workers, n) if n >= 2 else 1)
        assert all(t.endswith(b"\n") and t.count(b"\n") >= 1 for t in text if n)
        assert all(np.shares_memory(c, b) for c, b in zip(chunks, buffers) if n)


def test_format_lines_chunks_reuse_buffers_of_their_bound_and_grow_for_decimals():
    """Buffers of each chunk's bound are kept; many decimals (20) need a longer bound: the
    formatter asks, the text is right; the reference runs in one chunk; without buffers too."""
    bound = max(4, 21) + max(9, 21) + 2
    with _formatting(compiled(), 3):
        rows = [c.tobytes().count(b"\n") for c in kernels.format_lines(_INTS, _SCALED, _DIGITS,
                                                                       _WIDTHS)]
        buffers = [np.empty(r * bound, np.uint8) for r in rows]
        kept = list(buffers)
        chunks = kernels.format_lines(_INTS, _SCALED, _DIGITS, _WIDTHS, buffers=buffers)
    assert len(rows) == 3 and all(b is k for b, k in zip(buffers, kept))
    assert all(np.shares_memory(c, b) for c, b in zip(chunks, buffers))
    digits = _DIGITS.copy()
    digits[0, 3] = 20
    scaled = _SCALED.copy()
    scaled[0, 3] = -(10 ** 18) - 7
    expected = "".join(reference_line(_INTS, scaled, digits, _WIDTHS, r) for r in range(7))
    for native, workers in ((compiled(), 3), (compiled(), 1), (kernels.reference(), 3)):
        with _formatting(native, workers):
            chunks = kernels.format_lines(_INTS, scaled, digits, _WIDTHS, buffers=buffers)
        assert b"".join(c.tobytes() for c in chunks).decode() == expected
        assert len(chunks) == (1 if workers == 1 or not native.threads else 3)
        with _formatting(native, workers):
            chunks = kernels.format_lines(_INTS, scaled, digits, _WIDTHS)
        assert b"".join(c.tobytes() for c in chunks).decode() == expected


def test_format_lines_reuses_a_buffer_long_enough_for_the_kernels_bound():
    """A buffer of the formatter's bound (a field at most max(width, 21) bytes and its separator,
    ``kernels_ref.format_rows``) is written in place; a shorter one is replaced by a longer."""
    bound = 7 * (max(4, 21) + max(9, 21) + 2)
    for native in (compiled(), kernels.reference()):
        buffers = [np.empty(bound, np.uint8)]
        kept = buffers[0]
        with _formatting(native):
            chunks = kernels.format_lines(_INTS, _SCALED, _DIGITS, _WIDTHS, buffers=buffers)
        assert buffers[0] is kept and np.shares_memory(chunks[0], kept)
        buffers = [np.empty(bound - 1, np.uint8)]
        with _formatting(native):
            chunks = kernels.format_lines(_INTS, _SCALED, _DIGITS, _WIDTHS, buffers=buffers)
        assert len(buffers[0]) >= bound and np.shares_memory(chunks[0], buffers[0])
        assert chunks[0].tobytes().count(b"\n") == 7


def test_int_strings_offsets_and_their_limit():
    offsets, data = kernels.int_strings(np.array([12, -1, 0], np.int64))
    assert offsets.dtype == np.int32 and offsets.tolist() == [0, 2, 2, 3]
    assert bytes(data) == b"120"
    most = (2 ** 31 - 1) // 19  # 19 digits a value (int64) must fit int32 offsets
    seen = []
    stub = compiled()._replace(int_strings=lambda values, offsets: seen.append(len(offsets)))
    with running(stub, False):
        kernels.int_strings(np.broadcast_to(np.int64(7), (most,)))  # (no memory: a view)
        assert seen == [most + 1]
        with pytest.raises(ValueError, match=r"^int_strings: too many values for int32 "
                                             r"offsets$"):
            kernels.int_strings(np.broadcast_to(np.int64(7), (most + 1,)))
    assert seen == [most + 1]


def test_parse_ids_with_no_validity_reads_every_row():
    offsets = np.array([0, 2, 3, 4], np.int32)  # "12", "x", "3"
    data = np.frombuffer(b"12x3", np.uint8)
    out = np.full(3, 99, np.int64)
    for native in (compiled(), kernels.reference()):
        with running(native, False):
            assert kernels.parse_ids(offsets, data, None, out) == 1
            assert kernels.parse_ids(offsets, data, np.array([1, 0, 1], np.uint8), out) == -1
            assert out.tolist() == [12, 0, 3]
            assert type(kernels.parse_ids(offsets, data, None, out)) is int
