"""``swftools.formats.swf.kernels_ref`` (issue 30): the pure-Python SWF kernels on hand-worked
cases of their docstrings' rules, at the edges the properties of ``test_formats_swf_kernels.py``
rarely draw: a chunk that starts after line 0, the digit limits, -0 and -2, each trailing blank,
the formatter's buffer bound, and the Arrow buffers' exact sizes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from swftools.formats.swf import kernels, kernels_ref

_BIG = np.iinfo(np.int64).max


def _chunk(body: bytes, n_fields: int, first_line: int = 0, rows: int = 8) -> SimpleNamespace:
    """``tokenize_chunk`` on ``body`` as ``kernels.tokenize`` calls it (zeroed ints and point,
    stats at their start values); the raw outputs, ints still holding value + 1."""
    out = SimpleNamespace(
        ints=np.zeros((n_fields, rows), np.int64), floats=np.zeros((n_fields, rows)),
        point=np.zeros((n_fields, rows), np.int8), extra=np.zeros(rows, np.int32),
        stats=np.array([[_BIG] * n_fields, [_BIG] * n_fields, [-1] * n_fields,
                        [0] * n_fields, [0] * n_fields], np.int64),
        flags=np.zeros(5, np.int64), error=np.zeros(3, np.int64))
    kernels_ref.tokenize_chunk(np.frombuffer(body, np.uint8), first_line, out.ints, out.floats,
                               out.point, out.extra, out.stats, out.flags, out.error)
    return out


# -- tokenize_chunk --------------------------------------------------------------------------


def test_a_chunk_after_line_0_writes_its_own_rows_and_counts_its_own_lines():
    """A chunk starting at line 3 of the file (``first_line``, as the threaded ``tokenize`` cuts
    it) writes rows 3 and 4, and parsed 2 lines."""
    got = _chunk(b"5 6\n7 8.5\n", 2, first_line=3)
    assert got.error.tolist() == [0, 0, 0]
    assert got.flags[kernels.LINES] == 2
    assert got.ints[:, 3].tolist() == [6, 7] and got.ints[:, 4].tolist() == [8, 9]  # value + 1
    assert not got.ints[:, :3].any() and not got.ints[:, 5:].any()
    assert got.point[1].tolist() == [0, 0, 0, 0, 2, 0, 0, 0] and got.floats[1, 4] == 8.5


def test_a_bad_line_in_a_later_chunk_is_reported_with_its_file_row():
    got = _chunk(b"5 6\n7 x\n", 2, first_line=3)
    assert got.error.tolist() == [kernels.BAD_CHAR, 4, 1]
    got = _chunk(b"5 6\n7\n", 2, first_line=3)
    assert got.error.tolist() == [kernels.TOO_FEW, 4, 1]


@pytest.mark.parametrize("token,kind", [
    (b"9" * 18, kernels.OK),                      # MAX_DIGITS before the point fit an int64
    (b"1" + b"0" * 18, kernels.TOO_LONG),        # 19 digits do not
    (b"-" + b"9" * 18, kernels.OK),
    (b"-1" + b"0" * 18, kernels.TOO_LONG),
    (b"1" + b"0" * 18 + b".", kernels.TOO_LONG),  # 19 before an empty fraction
    (b"9" * 18 + b".5", kernels.OK),               # 18 before, 1 after
    (b"0." + b"9" * 18, kernels.OK),              # MAX_DIGITS after the point
    (b"0." + b"0" * 19, kernels.TOO_LONG),
    (b"." + b"1" * 19, kernels.TOO_LONG),
    (b"1" + b"0" * 18 + b"x", kernels.BAD_CHAR),  # a bad character before a long number
    (b"-", kernels.BAD_CHAR),                     # no digit
    (b".", kernels.BAD_CHAR),
    (b"-.", kernels.BAD_CHAR),
    (b"1..5", kernels.BAD_CHAR),                  # a second point, right after the first
    (b"1.5.5", kernels.BAD_CHAR),
    (b"--1", kernels.BAD_CHAR),
    (b"1-", kernels.BAD_CHAR),
    (b"1:", kernels.BAD_CHAR),                    # the bytes either side of the digits
    (b"/1", kernels.BAD_CHAR),
])
def test_the_digit_limits_and_the_token_grammar(token, kind):
    """A token is an optional '-', digits, and at most one '.' among them, with at most
    ``MAX_DIGITS`` digits before the point and as many after it (the first bad line's kind)."""
    got = _chunk(b"1 " + token + b"\n", 2)
    assert got.error.tolist() == ([0, 0, 0] if kind == kernels.OK else [kind, 0, 1])
    if kind == kernels.OK:
        text = token.decode()
        whole = int(text.split(".")[0].lstrip("-") or "0")
        assert got.ints[1, 0] == (-whole if text.startswith("-") else whole) + 1
        assert got.point[1, 0] == (len(text) - text.index(".") if "." in text else 0)


@pytest.mark.parametrize("token,raw,unknown,negative", [
    (b"-1", 0, 1, 0),       # unknown: the raw value + 1 is 0, the row left untouched
    (b"-1.0", 0, 1, 0),
    (b"-1.00", 0, 1, 0),
    (b"-0", 1, 0, 0),       # zero, written with a sign: neither
    (b"-0.0", 1, 0, 0),
    (b"-0.", 1, 0, 0),
    (b"-2", -1, 0, 1),      # a negative value other than -1
    (b"-2.0", -1, 0, 1),
    (b"-0.5", 1, 0, 1),
    (b"-1.5", 0, 0, 1),
    (b"1", 2, 0, 0),
])
def test_unknown_and_negative_values(token, raw, unknown, negative):
    """stats row 4 counts the tokens that are exactly -1; flags[NEGATIVE] is any other value
    below zero; ints holds the integer part + 1."""
    got = _chunk(b"3 " + token + b" 3\n", 3)
    assert got.error.tolist() == [0, 0, 0]
    assert got.ints[1, 0] == raw
    assert got.stats[kernels.UNKNOWN_TOKENS].tolist() == [0, unknown, 0]
    assert got.flags[kernels.NEGATIVE] == negative
    assert got.stats[kernels.DECIMAL_TOKENS].tolist() == [0, int(b"." in token), 0]


def test_a_value_of_minus_2_reads_back_as_minus_2(monkeypatch):
    monkeypatch.setattr(kernels, "_native", kernels.reference())
    ints = kernels.tokenize(b"-2 -1 0\n-1 -2 5\n", 3)[0]
    assert ints.tolist() == [[-2, -1], [-1, -2], [0, 5]]


@pytest.mark.parametrize("line,tabs,trailing", [
    (b"1 2", 0, 0),
    (b"1 2 ", 0, 1),
    (b"1 2\t", 1, 1),
    (b"1 2\r", 1, 1),
    (b"1\t2", 1, 0),
    (b"1\r2", 1, 0),
    (b"1 2 3 ", 0, 1),   # after an extra field
    (b" 1 2", 0, 0),
])
def test_tabs_and_trailing_blanks(line, tabs, trailing):
    got = _chunk(b"5 5\n" + line + b"\n5 5\n", 2)
    assert got.error.tolist() == [0, 0, 0]
    assert got.flags[kernels.TABS] == tabs and got.flags[kernels.TRAILING_BLANKS] == trailing


def test_padded_widths_and_extra_fields_by_hand():
    """Field k's width runs from just after the previous separator to the token's end; rows 1
    and 2 only take tokens with more than the one separator in front. flags[EXTRA_FIELDS] is
    the most extra fields of a line."""
    body = b"   5 10 1 x y\n 15  7 22 x\n  9 8 33\n"
    got = _chunk(body, 3)
    assert got.error.tolist() == [0, 0, 0]
    # field 0: widths 4, 3, 3 (every token padded); field 1: 2 (not padded), 2, 1 (not padded);
    # field 2: 1, 2, 2, never padded
    assert got.stats[0].tolist() == [3, 1, 1]
    assert got.stats[1].tolist() == [3, 2, _BIG]
    assert got.stats[2].tolist() == [4, 2, -1]
    assert got.extra[:3].tolist() == [2, 1, 0] and got.flags[kernels.EXTRA_FIELDS] == 2


def test_decimal_and_unknown_tokens_are_counted_per_field():
    got = _chunk(b"1.5 -1 -1.0 7\n2.5 -1 -1.00 -1\n0 3 1.25 8\n", 4)
    assert got.error.tolist() == [0, 0, 0]
    assert got.stats[kernels.DECIMAL_TOKENS].tolist() == [2, 0, 3, 0]
    assert got.stats[kernels.UNKNOWN_TOKENS].tolist() == [0, 2, 2, 1]


def test_decimal_values_with_several_digits_after_the_point():
    """floats holds the token's value (these fractions are exact in binary, so Python's
    float() of the text is the value bit for bit)."""
    tokens = [b"0.125", b"-12.75", b"3.0625", b"100.5", b"-0.0078125", b"7.50"]
    got = _chunk(b" ".join(tokens) + b"\n", len(tokens))
    assert got.error.tolist() == [0, 0, 0]
    assert got.floats[:, 0].tolist() == [float(t) for t in tokens]
    assert got.point[:, 0].tolist() == [len(t.split(b".")[1]) + 1 for t in tokens]


# -- format_rows ---------------------------------------------------------------------------


def _bound(widths, most, rows: int) -> int:
    """The docstring's bound: per field max(width, 21, most decimals + 3) and a separator."""
    return rows * sum(max(w, 21, m + 3) + 1 for w, m in zip(widths, most))


def _format(ints, scaled, digits, widths, r0, r1, size):
    out = np.full(size, 255, np.uint8)
    got = kernels_ref.format_rows(np.array(ints, np.int64), np.array(scaled, np.int64),
                                  np.array(digits, np.int8), np.array(widths, np.int64),
                                  r0, r1, out)
    return got, out


def test_format_rows_asks_for_its_bound_and_writes_in_exactly_that_much():
    ints, scaled = [[7, -3, 12], [5, 6, 7]], [[0, 0, 0], [123, -4, 5]]
    digits, widths = [[-1, -1, -1], [30, 2, -1]], [5, 30]
    # rows [1, 3): field 0 no decimals, field 1 at most 2 (row 0's 30 is outside the range)
    need = _bound(widths, [-1, 2], 2)
    assert need == 2 * (22 + 31)
    got, out = _format(ints, scaled, digits, widths, 1, 3, need - 1)
    assert got == -need and (out == 255).all()  # nothing written
    got, out = _format(ints, scaled, digits, widths, 1, 3, need)
    text = f"{'-3':>5} {'-0.04':>30}\n{'12':>5} {'7':>30}\n"
    assert got == len(text) and bytes(out[:got]).decode() == text
    # the whole range: row 0's 30 decimals need 33 characters
    need = _bound(widths, [-1, 30], 3)
    assert _format(ints, scaled, digits, widths, 0, 3, need - 1)[0] == -need


@pytest.mark.parametrize("d", [0, 1, 2, 17, 18, 19, 25])
def test_the_widest_fields_fit_the_bound(d):
    """Rows of the widest field, in a buffer of exactly the bound: -2**63 with a point (21
    characters up to 18 decimals), then -1 with ``d`` > 18 decimals (d + 3); the text is
    Python's string arithmetic."""
    low = -(2 ** 63)
    v = low if d <= 18 else -1
    need = _bound([1], [d], 2)
    got, out = _format([[0, 0]], [[v, v]], [[d, d]], [1], 0, 2, need)
    whole = str(-v).rjust(d + 1, "0")
    text = "-" + whole[:len(whole) - d] + "." + whole[len(whole) - d:] + "\n"
    assert len(text) == need // 2  # the bound is tight here
    assert bytes(out[:got]).decode() == text * 2


def test_minus_2_to_the_63_as_an_integer_within_the_bound():
    low = -(2 ** 63)
    need = _bound([1, 3], [-1, -1], 2)
    got, out = _format([[low, 0], [-1, low]], [[0, 0], [0, 0]], [[-1, -1], [-1, -1]], [1, 3],
                       0, 2, need)
    assert bytes(out[:got]).decode() == f"{low}  -1\n0 {low}\n"


@pytest.mark.parametrize("d", [-1, 0, 3])
def test_the_values_next_to_int64s_minimum(d):
    """Only -2**63 has a magnitude int64 cannot hold; its neighbours are written as they are."""
    values = [-(2 ** 63) + k for k in (0, 1, 2, 3, 9, 10, 11)]
    digits = [[d] * len(values)]
    need = _bound([1], [d], len(values))
    got, out = _format([values], [values], digits, [1], 0, len(values), need)
    texts = []
    for v in values:
        if d < 0:
            texts.append(str(v))
        else:
            whole = str(-v).rjust(d + 1, "0")
            texts.append("-" + whole[:len(whole) - d] + "." + whole[len(whole) - d:])
    assert bytes(out[:got]).decode() == "".join(t + "\n" for t in texts)


# -- int_strings, parse_ids ----------------------------------------------------------------


def test_int_strings_data_holds_exactly_the_digits():
    values = [0, 7, -1, 10, 2 ** 63 - 1, -1, 123456]
    offsets = np.empty(len(values) + 1, np.int32)
    data = kernels_ref.int_strings(np.array(values, np.int64), offsets)
    expected = "".join(str(v) for v in values if v >= 0)
    assert len(data) == len(expected) == offsets[-1]
    assert bytes(data).decode() == expected


def _ids(texts):
    import pyarrow as pa

    array = pa.array(texts, pa.string())
    _, offsets, data = array.buffers()
    return (np.frombuffer(offsets, np.int32, count=len(texts) + 1), np.frombuffer(data, np.uint8),
            np.array([t is not None for t in texts], np.uint8))


def test_parse_ids_writes_0_for_the_rows_without_a_value():
    offsets, data, valid = _ids(["12", None, "0", None, "345"])
    out = np.full(5, 99, np.int64)
    assert kernels_ref.parse_ids(offsets, data, valid, out) == -1
    assert out.tolist() == [12, 0, 0, 0, 345]


@pytest.mark.parametrize("text", ["1:", ":", "9:", "1/", "/", "01", "00", "-1", "+1", " 1",
                                  "9223372036854775808", "10000000000000000000"])
def test_parse_ids_rejects_what_python_does_not_write_as_an_id(text):
    offsets, data, valid = _ids(["5", text, "6"])
    out = np.full(3, 99, np.int64)
    assert kernels_ref.parse_ids(offsets, data, valid, out) == 1
    assert out[:2].tolist() == [5, 0]
