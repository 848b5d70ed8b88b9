"""``swftools.formats.swf.kernels`` (issues 15, 26): the compiled kernels (``_kernels.pyx``,
built at install) give the pure-Python reference's results (``kernels_ref``), in one chunk or
several, and a process that runs them never imports numba."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.formats.swf import _kernels  # the compiled kernels must be built (``make dev``)
from swftools.formats.swf import kernels
from swftools.formats.swf.writer import to_bytes

from .strategies import examples, swf_job_bodies, swf_jobs


def test_the_compiled_kernels_run_and_share_the_constants():
    assert kernels.native().tokenize_chunk is _kernels.tokenize_chunk
    assert kernels.native().threads  # they release the GIL
    assert (_kernels.TOO_FEW, _kernels.BAD_CHAR, _kernels.TOO_LONG, _kernels.MAX_DIGITS) == \
        (kernels.TOO_FEW, kernels.BAD_CHAR, kernels.TOO_LONG, kernels.MAX_DIGITS)


@contextlib.contextmanager
def _running(native, chunked: bool):
    saved = (kernels._native, kernels._MIN_CHUNK_BYTES, kernels._MIN_CHUNK_ROWS, kernels._workers)
    kernels._native = native
    if chunked:  # several chunks even on small inputs (threads, with the compiled kernels)
        kernels._MIN_CHUNK_BYTES, kernels._MIN_CHUNK_ROWS, kernels._workers = 1, 1, lambda: 3
    try:
        yield
    finally:
        (kernels._native, kernels._MIN_CHUNK_BYTES, kernels._MIN_CHUNK_ROWS,
         kernels._workers) = saved


def _compiled() -> kernels.Kernels:
    return kernels.Kernels(*(getattr(_kernels, name) for name in kernels.EXPORTS), threads=True)


_WHICH = {"compiled": _compiled, "reference": kernels.reference}


@st.composite
def _blank_runs(draw) -> bytes:
    """``swf_job_bodies`` with the blanks between fields sometimes much longer (the tokenizer
    skips eight at a time) and lines of a few long numbers (eight digits and more)."""
    body = draw(swf_job_bodies())
    if draw(st.booleans()):
        body = body.replace(b" ", b" " * draw(st.integers(2, 19)))
    if draw(st.booleans()):
        body += b"".join(b" ".join(str(draw(st.integers(-1, 10 ** 18 - 1))).encode()
                                   for _ in range(18)) + b"\n" for _ in range(3))
    return body


@settings(max_examples=examples(50), deadline=None)
@given(_blank_runs(), st.booleans())
def test_compiled_tokenizer_equals_the_reference(body, chunked):
    results = []
    for native in (kernels.reference(), _compiled()):
        with _running(native, chunked and native.threads):
            results.append(kernels.tokenize(body, 18))
    (ints, floats, point, extra, stats, flags, error), other = results
    assert error.tolist() == other[6].tolist()
    if error[0]:
        return  # the reader raises; rows from the bad one on were never written
    assert np.array_equal(ints, other[0]) and np.array_equal(point, other[2])
    decimal = point > 0
    assert floats[decimal].tobytes() == other[1][decimal].tobytes()  # bit for bit
    assert np.array_equal(extra, other[3]) and np.array_equal(stats, other[4])
    assert flags.tolist() == other[5].tolist()


@settings(max_examples=examples(40), deadline=None)  # 60 before; the digit-count edges are
@given(swf_jobs(min_size=0, max_size=40), st.booleans())  # forced by the boundary test below
def test_compiled_formatter_equals_the_reference(table, chunked):
    outputs = []
    for native in (kernels.reference(), _compiled()):
        with _running(native, chunked and native.threads):
            outputs.append(to_bytes(table))
    assert outputs[0] == outputs[1]


_CONVERT = """
import json, sys
from swftools.formats import swf
table = swf.read(sys.argv[1])
swf.write(table, sys.argv[2])
print(json.dumps({"numba": "numba" in sys.modules,
                  "compiled": "swftools.formats.swf._kernels" in sys.modules}))
"""


def test_convert_with_the_compiled_kernels_never_imports_numba(tmp_path):
    src = tmp_path / "in.swf"
    src.write_text("; Version: 2.2\n; UnixStartTime: 1000\n" + "".join(
        f"{j:5d} {10 * j:6d} {j % 3} {50 + j} {1 + j % 4} {j}.25 -1 {1 + j % 4} 100 -1 1 "
        f"{j % 2} 1 -1 {1 + j % 2} 1 -1 -1\n" for j in range(1, 60)), encoding="ascii")
    out = tmp_path / "out.swf"
    done = subprocess.run([sys.executable, "-c", _CONVERT, str(src), str(out)],
                          capture_output=True, text=True, check=True, timeout=300)
    assert json.loads(done.stdout.splitlines()[-1]) == {"numba": False, "compiled": True}
    assert done.stderr == ""  # no fallback notice
    assert out.read_bytes() == src.read_bytes()


_FALLBACK = """
import json, sys
sys.modules["swftools.formats.swf._kernels"] = None  # as where it was not built
from swftools.formats import swf
table = swf.read(sys.argv[1])
swf.write(table, sys.argv[2])
swf.write(table, sys.argv[3])
print(json.dumps("swftools.formats.swf.kernels_ref" in sys.modules))
"""


def test_without_the_compiled_kernels_the_reference_runs_with_one_notice(tmp_path):
    src = tmp_path / "in.swf"
    src.write_text("; Version: 2.2\n" + "".join(
        f"{j} {10 * j} 0 5 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n" for j in range(1, 9)),
        encoding="ascii")
    outs = [tmp_path / "a.swf", tmp_path / "b.swf"]
    done = subprocess.run([sys.executable, "-c", _FALLBACK, str(src), *map(str, outs)],
                          capture_output=True, text=True, check=True, timeout=300)
    assert json.loads(done.stdout.splitlines()[-1]) is True
    notes = done.stderr.splitlines()
    assert len(notes) == 1 and "swf._kernels is not built" in notes[0]  # once a process
    assert outs[0].read_bytes() == outs[1].read_bytes() == src.read_bytes()


# -- the kernels against plain-Python statements of what they compute ---------------------------

_BIG = np.iinfo(np.int64).max


def _reference_tokenize(body: bytes, n_fields: int):
    """What ``kernels.tokenize`` returns for newline-terminated ``body``, line by line in Python:
    (ints, floats, point, extra, stats, flags, error); the arrays only when every line parses."""
    lines = body.split(b"\n")[:-1]
    rows = len(lines)
    ints = np.zeros((n_fields, rows), np.int64)
    floats = np.zeros((n_fields, rows))
    point = np.zeros((n_fields, rows), np.int8)
    extra = np.zeros(rows, np.int32)
    stats = np.array([[_BIG] * n_fields, [_BIG] * n_fields, [-1] * n_fields, [0] * n_fields,
                      [0] * n_fields], np.int64)
    flags = [0, 0, 0, 0, rows]
    for row, line in enumerate(lines):
        chunk_start = 0
        tokens = list(re.finditer(rb"[^ \t\r]+", line))
        for field, match in enumerate(tokens):
            token, (start, end) = match.group(), match.span()
            if field >= n_fields:
                extra[row] += 1
                flags[2] = max(flags[2], int(extra[row]))
                chunk_start = end + 1
                continue
            neg = token.startswith(b"-")
            text = token[1:] if neg else token
            whole, dot, fraction = text.partition(b".")
            bad = not (whole + fraction).isdigit() if whole + fraction else False
            bad = bad or b"." in fraction or not all(48 <= c <= 57 or c == 46 for c in text)
            digits = len(whole) + len(fraction)
            if bad or digits == 0 or len(whole) > 18 or len(fraction) > 18:
                kind = kernels.TOO_LONG if not bad and digits else kernels.BAD_CHAR
                return None, [kind, row, field]
            sign = -1 if neg else 1
            value = int(whole or b"0")
            ints[field, row] = sign * value
            if dot:
                magnitude = value + (int(fraction) if fraction else 0) / 10.0 ** len(fraction)
                point[field, row] = len(fraction) + 1
                floats[field, row] = sign * magnitude
                stats[3, field] += 1
                unknown, negative = magnitude == 1.0, magnitude > 0.0
            else:
                unknown, negative = value == 1, value > 1
            if neg and unknown:
                stats[4, field] += 1
            elif neg and negative:
                flags[3] = 1
            width = end - chunk_start
            stats[0, field] = min(stats[0, field], width)
            if width > end - start:
                stats[1, field] = min(stats[1, field], width)
                stats[2, field] = max(stats[2, field], width)
            chunk_start = end + 1
        if len(tokens) < n_fields:
            return None, [kernels.TOO_FEW, row, len(tokens)]
        if re.search(rb"[\t\r]", line):
            flags[0] = 1
        if line[-1:] in (b" ", b"\t", b"\r"):
            flags[1] = 1
    return (ints, floats, point, extra, stats, flags), [0, 0, 0]


# 50 bodies a kernel (100 before): the blank runs (2..19, past the tokenizer's steps of eight)
# and the long numbers (up to 18 digits) are forced by ``_blank_runs``, and the compiled
# tokenizer also meets 50 more against the reference (test_compiled_tokenizer_equals_the_reference)
@pytest.mark.parametrize("which", ["compiled", "reference"])
@settings(max_examples=examples(50), deadline=None)
@given(_blank_runs())
def test_tokenizer_equals_a_python_statement_of_it(which, body):
    with _running(_WHICH[which](), False):
        ints, floats, point, extra, stats, flags, error = kernels.tokenize(body, 18)
    expected, expected_error = _reference_tokenize(body, 18)
    assert error.tolist() == expected_error
    if expected is None:
        return
    every_value_unknown = expected[4][4] == ints.shape[1]
    expected[0][every_value_unknown] = 0  # such a field's row is left untouched (zeros)
    assert np.array_equal(ints, expected[0]) and np.array_equal(point, expected[2])
    assert floats[point > 0].tobytes() == expected[1][point > 0].tobytes()  # bit for bit
    assert np.array_equal(extra, expected[3]) and np.array_equal(stats, expected[4])
    assert flags.tolist() == expected[5]


def test_tokenizer_reads_the_header_after_an_offset():
    body = b"; Note: x\n" + b" ".join(b"7" for _ in range(18)) + b"\n"
    ints = kernels.tokenize(body, 18, start=10)[0]
    assert ints.shape == (18, 1) and ints[:, 0].tolist() == [7] * 18


def _reference_line(ints, scaled, digits, widths, r) -> str:
    fields = []
    for k in range(len(widths)):
        d = int(digits[k, r])
        if d >= 0:
            v = int(scaled[k, r])
            text = str(abs(v)).rjust(d + 1, "0")
            text = ("-" if v < 0 else "") + text[:len(text) - d] + "." + text[len(text) - d:]
        else:
            text = str(int(ints[k, r]))
        fields.append(text.rjust(int(widths[k])))
    return " ".join(fields) + "\n"


@st.composite
def _format_inputs(draw):
    n_fields, n_rows = draw(st.integers(1, 5)), draw(st.integers(0, 12))
    value = st.one_of(st.integers(-2 ** 63, 2 ** 63 - 1), st.integers(-1, 10 ** 6))
    ints = np.array(draw(st.lists(st.lists(value, min_size=n_rows, max_size=n_rows),
                                  min_size=n_fields, max_size=n_fields)), np.int64)
    scaled = np.array(draw(st.lists(st.lists(value, min_size=n_rows, max_size=n_rows),
                                    min_size=n_fields, max_size=n_fields)), np.int64)
    digits = np.array(draw(st.lists(st.lists(st.integers(-1, 25), min_size=n_rows,
                                             max_size=n_rows), min_size=n_fields,
                                    max_size=n_fields)), np.int8)
    widths = np.array(draw(st.lists(st.integers(1, 30), min_size=n_fields,
                                    max_size=n_fields)), np.int64)
    return (ints.reshape(n_fields, n_rows), scaled.reshape(n_fields, n_rows),
            digits.reshape(n_fields, n_rows), widths)


@pytest.mark.parametrize("which", ["compiled", "reference"])
@settings(max_examples=examples(70), deadline=None)
@given(_format_inputs(), st.integers(0, 40))
def test_formatter_equals_a_python_statement_of_it(which, inputs, initial):
    ints, scaled, digits, widths = inputs
    expected = "".join(_reference_line(ints, scaled, digits, widths, r)
                       for r in range(ints.shape[1]))
    buffers = [np.empty(initial, np.uint8)]  # too short at first: the kernel asks for more
    for _ in range(2):  # the buffers reused
        with _running(_WHICH[which](), False):
            chunks = kernels.format_lines(ints, scaled, digits, widths, buffers=buffers)
        assert b"".join(c.tobytes() for c in chunks).decode() == expected


# Every digit-count boundary: the compiled writer counts digits from the bit length and one
# comparison with a power of ten, and writes two digits at a time.
_DIGIT_EDGES = sorted({v for k in range(19) for v in (10 ** k - 1, 10 ** k, -(10 ** k - 1),
                                                      -(10 ** k))}
                      | {2 ** 63 - 1, -(2 ** 63), -(2 ** 63) + 1, 2 ** 62, 2 ** 53 + 1})


@pytest.mark.parametrize("which", ["compiled", "reference"])
def test_formatter_at_every_digit_count_boundary(which):
    ints = np.array([_DIGIT_EDGES, _DIGIT_EDGES[::-1]], np.int64)
    digits = np.full(ints.shape, -1, np.int8)
    digits[1, ::3] = 2  # and with decimals, from the scaled values
    scaled = ints[::-1].copy()
    widths = np.array([1, 22], np.int64)
    expected = "".join(_reference_line(ints, scaled, digits, widths, r)
                       for r in range(ints.shape[1]))
    with _running(_WHICH[which](), False):
        chunks = kernels.format_lines(ints, scaled, digits, widths)
    assert b"".join(c.tobytes() for c in chunks).decode() == expected
    with _running(_WHICH[which](), False):
        offsets, data = kernels.int_strings(np.array([v for v in _DIGIT_EDGES if v >= -1],
                                                     np.int64))
    text = bytes(data)
    assert [text[a:b].decode() for a, b in zip(offsets[:-1], offsets[1:])] == \
        ["" if v == -1 else str(v) for v in _DIGIT_EDGES if v >= -1]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(255, 800), st.integers(0, 300))
def test_formatter_across_its_row_tiles(seed, n_rows, r0):
    """The compiled formatter works in tiles of 256 rows: row ranges that start inside one
    and end inside another give the text of a Python statement of it."""
    rng = np.random.default_rng(seed)
    r0 = min(r0, n_rows)
    ints = rng.integers(-1, 10 ** rng.integers(1, 12, size=(5, 1)), size=(5, n_rows))
    scaled = rng.integers(-10 ** 6, 10 ** 6, size=(5, n_rows))
    digits = np.where(rng.random((5, n_rows)) < 0.1, rng.integers(0, 4, (5, n_rows)), -1)
    digits = digits.astype(np.int8)
    widths = rng.integers(1, 12, 5).astype(np.int64)
    expected = "".join(_reference_line(ints, scaled, digits, widths, r)
                       for r in range(r0, n_rows))
    with _running(_WHICH["compiled"](), False):
        out = np.empty(30 * 5 * n_rows + 64, np.uint8)
        size = kernels.native().format_rows(ints, scaled, digits, widths, r0, n_rows, out)
    assert bytes(out[:size]).decode() == expected


@pytest.mark.parametrize("which", ["compiled", "reference"])
@settings(max_examples=examples(70), deadline=None)
@given(st.lists(st.integers(-1, 10 ** 18 - 1), max_size=40))
def test_int_strings_write_the_numbers(which, values):
    with _running(_WHICH[which](), False):
        offsets, data = kernels.int_strings(np.array(values, np.int64))
    text = bytes(data)
    assert [text[a:b].decode() for a, b in zip(offsets[:-1], offsets[1:])] == \
        ["" if v == -1 else str(v) for v in values]


_ID_TEXT = st.one_of(st.integers(0, 2 ** 64).map(str), st.text("0123456789+- x.", max_size=21),
                     st.sampled_from(["9223372036854775807", "9223372036854775808", "0", "00"]))


@pytest.mark.parametrize("which", ["compiled", "reference"])
@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.one_of(st.none(), _ID_TEXT), max_size=30))
def test_parse_ids_takes_exactly_the_numbers_python_writes(which, texts):
    import pyarrow as pa

    array = pa.array(texts, pa.string())
    n = len(array)
    _, offsets, data = array.buffers()
    offsets = np.frombuffer(offsets, np.int32, count=n + 1) if n else np.zeros(1, np.int32)
    data = np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)
    valid = np.array([t is not None for t in texts], np.uint8)
    out = np.empty(n, np.int64)

    def is_id(text: str) -> bool:
        return text.isascii() and text.isdigit() and str(int(text)) == text and \
            int(text) < 2 ** 63

    bad = [r for r, t in enumerate(texts) if t is not None and not is_id(t)]
    with _running(_WHICH[which](), False):
        assert kernels.parse_ids(offsets, data, valid, out) == (bad[0] if bad else -1)
    if not bad:
        assert [int(v) for v, t in zip(out, texts) if t is not None] == \
            [int(t) for t in texts if t is not None]
    if all(t is not None for t in texts):
        with _running(_WHICH[which](), False):
            assert kernels.parse_ids(offsets, data, None, out) == (bad[0] if bad else -1)


# -- the wrapper (issue 30): loading, chunks against one pass, buffers, limits ------------------

from swftools.formats.swf import kernels_ref  # noqa: E402

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

    return _compiled()._replace(tokenize_chunk=tokenize_chunk)


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
    _same(got, _tokenized(_compiled(), body, 0, 1, min_bytes=len(body)))
    assert got[5][kernels.LINES] == 40_000
    body = body[:-10] + b"x" + body[-9:]  # a bad last line: the lines counted after it
    for workers in (1, 2):
        got = _tokenized(_compiled(), body, 0, workers, min_bytes=1 if workers > 1 else 1 << 30)
        assert got[6][:2].tolist() == [kernels.BAD_CHAR, 39_999]
        assert got[5][kernels.LINES] == 40_000


def test_tokenize_reports_the_first_bad_line_of_any_chunk():
    lines = [_line(j) for j in range(1, 13)]
    lines[4] = b"1 2 3\n"  # too few fields
    lines[9] = lines[9].replace(b"-1", b"-x", 1)  # a bad character, later
    body = _HEAD + b"".join(lines)
    for workers in (1, 2, 4):
        got = _tokenized(_compiled(), body, len(_HEAD), workers)
        assert got[6].tolist() == [kernels.TOO_FEW, 4, 3], workers
    lines[4] = _line(5)  # the bad character alone, in the last chunk
    body = _HEAD + b"".join(lines)
    for workers in (1, 4):
        got = _tokenized(_compiled(), body, len(_HEAD), workers)
        assert got[6].tolist() == [kernels.BAD_CHAR, 9, lines[9].split().index(b"-x")]
        assert got[5][kernels.LINES] == got[0].shape[1] == 12  # the lines after the header


def test_tokenize_after_an_error_in_one_pass_holds_the_lines_the_arrays_can():
    """One pass: after an error LINES is the lines of the text (from ``start``), or as many as
    the arrays hold when short lines outnumber their room; the arrays are that long."""
    for native in (_compiled(), kernels.reference()):
        got = _tokenized(native, b"1 2\n" * 30, 0, min_bytes=1 << 30)
        assert got[6].tolist() == [kernels.TOO_FEW, 0, 2]
        assert 0 < got[5][kernels.LINES] == got[0].shape[1] == len(got[3]) < 30


def test_tokenize_in_one_pass_fits_lines_of_one_digit_fields():
    """The shortest parsed lines (one digit and one separator a field) fill the arrays."""
    body = b"1 " * 17 + b"2\n"
    for native in (_compiled(), kernels.reference()):
        for n in (1, 2, 5):
            got = _tokenized(native, body * n, 0, min_bytes=1 << 30)
            assert got[6].tolist() == [0, 0, 0] and got[5][kernels.LINES] == n
            assert got[0].tolist() == [[1] * n] * 17 + [[2] * n]
    for n in (1, 6):  # one field: "d\n"
        got = _tokenized(kernels.reference(), b"7\n" * n, 0, min_bytes=1 << 30, n_fields=1)
        assert got[0].tolist() == [[7] * n] and got[5][kernels.LINES] == n


def test_tokenize_from_byte_0_by_default_and_a_field_of_unknowns_left_zero():
    with _running(_compiled(), False):
        ints, floats, point, extra, stats, flags, error = kernels.tokenize(b"1 -1 3\n4 -1 -6\n", 3)
    assert ints.tolist() == [[1, 4], [0, 0], [3, -6]]  # every value of field 2 is -1
    assert stats[kernels.UNKNOWN_TOKENS].tolist() == [0, 2, 0] and flags[kernels.NEGATIVE]
    assert [a.dtype for a in (ints, floats, point, extra, stats, flags, error)] == \
        [np.int64, np.float64, np.int8, np.int32, np.int64, np.int64, np.int64]


def test_tokenize_of_no_lines():
    for native in (_compiled(), kernels.reference()):
        for workers in (1, 3):
            ints, _, _, extra, stats, flags, error = _tokenized(native, _HEAD, len(_HEAD),
                                                                workers)
            assert ints.shape == (18, 0) and extra.shape == (0,)
            assert flags.tolist() == [0] * 5 and error.tolist() == [0, 0, 0]
            assert stats.tolist() == [[_BIG] * 18, [_BIG] * 18, [-1] * 18, [0] * 18, [0] * 18]


def test_layout_from_pads_hand_worked():
    big = _BIG
    pads = np.array([[5, 3, big], [5, big, big], [5, -1, -1]], np.int64)  # 3rd: no lines
    assert kernels.layout_from_pads(pads) == ([5, 3, 1], True)
    for row, value in ((1, 6), (2, 6)):  # a padded token wider than the field's smallest
        bad = pads.copy()
        bad[row, 0] = value
        bad[3 - row, 0] = 5
        assert kernels.layout_from_pads(bad) == ([5, 3, 1], False)
    body = b"    1 22\n   10  3\n123456 44\n"  # widths 5, 2; a token wider than its field
    stats = _tokenized(_compiled(), body, 0, n_fields=2)[4]
    assert kernels.layout_from_pads(stats[0:3]) == ([5, 2], True)
    stats = _tokenized(_compiled(), body + b"     7 55\n", 0, n_fields=2)[4]  # padded to 6
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
    expected = [_reference_line(_INTS, _SCALED, _DIGITS, _WIDTHS, r).encode() for r in range(n)]
    buffers = []
    for _ in range(2):
        with _formatting(_compiled(), workers):
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
    with _formatting(_compiled(), 3):
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
    expected = "".join(_reference_line(_INTS, scaled, digits, _WIDTHS, r) for r in range(7))
    for native, workers in ((_compiled(), 3), (_compiled(), 1), (kernels.reference(), 3)):
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
    for native in (_compiled(), kernels.reference()):
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
    stub = _compiled()._replace(int_strings=lambda values, offsets: seen.append(len(offsets)))
    with _running(stub, False):
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
    for native in (_compiled(), kernels.reference()):
        with _running(native, False):
            assert kernels.parse_ids(offsets, data, None, out) == 1
            assert kernels.parse_ids(offsets, data, np.array([1, 0, 1], np.uint8), out) == -1
            assert out.tolist() == [12, 0, 3]
            assert type(kernels.parse_ids(offsets, data, None, out)) is int
