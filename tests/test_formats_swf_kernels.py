"""``swftools.formats.swf.kernels`` (issues 15, 26): the compiled kernels (``_kernels.pyx``,
built at install) give the pure-Python reference's results (``kernels_ref``), in one chunk or
several, and a process that runs them never imports numba."""

from __future__ import annotations

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
from .swf_kernels_support import BIG, compiled, reference_line, running


def test_the_compiled_kernels_run_and_share_the_constants():
    assert kernels.native().tokenize_chunk is _kernels.tokenize_chunk
    assert kernels.native().threads  # they release the GIL
    assert (_kernels.TOO_FEW, _kernels.BAD_CHAR, _kernels.TOO_LONG, _kernels.MAX_DIGITS) == \
        (kernels.TOO_FEW, kernels.BAD_CHAR, kernels.TOO_LONG, kernels.MAX_DIGITS)


_WHICH = {"compiled": compiled, "reference": kernels.reference}


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
    for native in (kernels.reference(), compiled()):
        with running(native, chunked and native.threads):
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
    for native in (kernels.reference(), compiled()):
        with running(native, chunked and native.threads):
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

def _reference_tokenize(body: bytes, n_fields: int):
    """What ``kernels.tokenize`` returns for newline-terminated ``body``, line by line in Python:
    (ints, floats, point, extra, stats, flags, error); the arrays only when every line parses."""
    lines = body.split(b"\n")[:-1]
    rows = len(lines)
    ints = np.zeros((n_fields, rows), np.int64)
    floats = np.zeros((n_fields, rows))
    point = np.zeros((n_fields, rows), np.int8)
    extra = np.zeros(rows, np.int32)
    stats = np.array([[BIG] * n_fields, [BIG] * n_fields, [-1] * n_fields, [0] * n_fields,
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
    with running(_WHICH[which](), False):
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
    expected = "".join(reference_line(ints, scaled, digits, widths, r)
                       for r in range(ints.shape[1]))
    buffers = [np.empty(initial, np.uint8)]  # too short at first: the kernel asks for more
    for _ in range(2):  # the buffers reused
        with running(_WHICH[which](), False):
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
    expected = "".join(reference_line(ints, scaled, digits, widths, r)
                       for r in range(ints.shape[1]))
    with running(_WHICH[which](), False):
        chunks = kernels.format_lines(ints, scaled, digits, widths)
    assert b"".join(c.tobytes() for c in chunks).decode() == expected
    with running(_WHICH[which](), False):
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
    expected = "".join(reference_line(ints, scaled, digits, widths, r)
                       for r in range(r0, n_rows))
    with running(_WHICH["compiled"](), False):
        out = np.empty(30 * 5 * n_rows + 64, np.uint8)
        size = kernels.native().format_rows(ints, scaled, digits, widths, r0, n_rows, out)
    assert bytes(out[:size]).decode() == expected


@pytest.mark.parametrize("which", ["compiled", "reference"])
@settings(max_examples=examples(70), deadline=None)
@given(st.lists(st.integers(-1, 10 ** 18 - 1), max_size=40))
def test_int_strings_write_the_numbers(which, values):
    with running(_WHICH[which](), False):
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
    with running(_WHICH[which](), False):
        assert kernels.parse_ids(offsets, data, valid, out) == (bad[0] if bad else -1)
    if not bad:
        assert [int(v) for v, t in zip(out, texts) if t is not None] == \
            [int(t) for t in texts if t is not None]
    if all(t is not None for t in texts):
        with running(_WHICH[which](), False):
            assert kernels.parse_ids(offsets, data, None, out) == (bad[0] if bad else -1)
