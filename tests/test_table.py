"""``swftools.table``'s numpy <-> Arrow helpers (issue 15): equal to pyarrow's own conversions,
without the pandas import those cost (checked in a fresh interpreter)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import table as jt
from tests.strategies import examples, numeric_columns


def _same(a: pa.Array, b: pa.Array) -> bool:
    """Same type, nulls and values (NaN equal to NaN, as ``Array.equals`` does not have it)."""
    if a.type != b.type or len(a) != len(b) or a.null_count != b.null_count:
        return False
    if a.is_null().to_pylist() != b.is_null().to_pylist():
        return False
    return all(x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))
               for x, y in zip(a.to_pylist(), b.to_pylist()))


@settings(max_examples=examples(70), deadline=None)
@given(numeric_columns())
def test_from_numpy_equals_pa_array(column):
    values, null = column
    assert _same(jt.from_numpy(values, null), pa.array(values, mask=null))
    assert _same(jt.from_numpy(values), pa.array(values))


@settings(max_examples=examples(70), deadline=None)
@given(numeric_columns(), st.data())
def test_to_numpy_round_trips_slices_and_chunks(column, data):
    values, _ = column
    array = jt.from_numpy(values)
    assert np.array_equal(jt.to_numpy(array), values, equal_nan=values.dtype.kind == "f")
    assert jt.to_numpy(array).dtype == values.dtype
    lo = data.draw(st.integers(0, len(values)))
    hi = data.draw(st.integers(lo, len(values)))
    sliced = array.slice(lo, hi - lo)  # an offset into the buffer
    assert np.array_equal(jt.to_numpy(sliced), values[lo:hi], equal_nan=values.dtype.kind == "f")
    chunked = pa.chunked_array([sliced, array], type=array.type)
    assert np.array_equal(jt.to_numpy(chunked), np.concatenate([values[lo:hi], values]),
                          equal_nan=values.dtype.kind == "f")


@settings(max_examples=examples(70), deadline=None)
@given(numeric_columns(), st.integers(0, 40))
def test_boolean_to_numpy_and_filled(column, offset):
    values, null = column
    array = jt.from_numpy(values, null)
    offset = min(offset, len(values))
    assert jt.to_numpy(array.is_null()).tolist() == null.tolist()
    assert jt.to_numpy(array.slice(offset).is_null()).tolist() == null[offset:].tolist()
    if values.dtype.kind == "i":
        expected = np.where(null, 7, values)
        assert jt.filled(array, 7).tolist() == expected.tolist()
        assert jt.filled(pa.chunked_array([array], type=array.type), 7).tolist() == \
            expected.tolist()


@settings(max_examples=examples(70), deadline=None)
@given(numeric_columns(), st.integers(0, 40), st.integers(0, 3))
def test_filled_into_a_buffer_and_validity(column, offset, cut):
    """``filled(..., out=)`` (the SWF writer's reused buffer) and ``validity`` on slices with
    any bit offset, cut into chunks, with and without nulls."""
    values, null = column
    if values.dtype.kind != "i":
        return
    array = jt.from_numpy(values, null).slice(min(offset, len(values)))
    kept = slice(min(offset, len(values)), None)
    parts = [array.slice(0, len(array) // 2), array.slice(len(array) // 2)][:cut or 2]
    chunked = pa.chunked_array(parts if cut else [array], type=array.type)
    n = len(chunked)
    expected = np.where(null[kept], 7, values[kept])[:n]
    out = np.full(n + 3, 99, np.int64)[2:2 + n]
    assert jt.filled(chunked, 7, out) is out and out.tolist() == expected.tolist()
    valid = jt.validity(chunked)
    assert (valid is None) == (not null[kept][:n].any())
    if valid is not None:
        assert valid.tolist() == (~null[kept][:n]).tolist()
    all_null = jt.from_numpy(values, True)
    assert jt.filled(all_null, 7, np.empty(len(values), np.int64)).tolist() == [7] * len(values)
    with pytest.raises(ValueError, match="out holds"):
        jt.filled(chunked, 7, np.empty(n + 1, np.int64))


@pytest.mark.parametrize("kind", [pa.int64(), pa.float64(), pa.int32(), pa.string(), pa.bool_()])
@pytest.mark.parametrize("n", [0, 1, 9, 1000])
def test_nulls_equal_pa_nulls(kind, n):
    built = jt.nulls(n, kind)
    built.validate(full=True)
    assert built.equals(pa.nulls(n, kind)) and built.null_count == n


@settings(max_examples=examples(70), deadline=None)
@given(st.lists(st.text(max_size=12), max_size=50))
def test_strings_equal_pa_array(texts):
    built = jt.strings(texts)
    assert built.equals(pa.array(texts, pa.string()))
    built.validate(full=True)


@given(st.one_of(st.integers(-2 ** 63, 2 ** 63 - 1).map(lambda v: (v, pa.int64())),
                 st.floats(allow_nan=False).map(lambda v: (v, pa.float64()))))
def test_scalar_equals_pa_scalar(case):
    value, kind = case
    assert jt.scalar(value, kind).equals(pa.scalar(value, kind))


def test_bad_inputs_are_refused():
    with pytest.raises(TypeError, match="1-D integer or float"):
        jt.from_numpy(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="1-D integer or float"):
        jt.from_numpy(np.array(["a"], dtype=object))
    with pytest.raises(ValueError, match="has nulls"):
        jt.to_numpy(jt.from_numpy(np.array([1, -1]), np.array([False, True])))
    with pytest.raises(TypeError, match="numeric or boolean"):
        jt.to_numpy(jt.strings(["a"]))
    assert jt.to_numpy(pa.chunked_array([], pa.int64())).tolist() == []


def test_helpers_do_not_import_pandas():
    code = """
import json, sys
import numpy as np
from swftools import table as jt
a = jt.from_numpy(np.arange(5), np.arange(5) == 2)
jt.to_numpy(a.is_null()); jt.filled(a, 0); jt.strings(["x"]); jt.scalar(3)
jt.filled(a, 0, np.empty(5, np.int64)); jt.validity(a); jt.nulls(3, a.type)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "pandas")))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert json.loads(done.stdout) == []


@given(st.lists(st.text(max_size=6), min_size=1, max_size=8).flatmap(
    lambda words: st.tuples(st.just(words),
                            st.lists(st.integers(0, len(words) - 1), max_size=40))))
def test_strings_at_picks_the_words(case):
    words, index = case
    array = jt.strings_at(words, np.array(index, dtype=np.int64))
    assert array.type == pa.string() and array.null_count == 0
    assert array.to_pylist() == [words[i] for i in index]


def test_validity_of_a_null_type_column():
    """A null-type array has no bitmap and every value null (the fingerprint hashes it so)."""
    chunked = pa.chunked_array([pa.nulls(2), pa.nulls(3)])
    assert jt.validity(chunked).tolist() == [False] * 5
    assert jt.validity(pa.array([1, None, 3])).tolist() == [True, False, True]


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_string_buffers_of_a_slice_of_either_width(kind):
    arr = pa.array(["ab", "", "cde", None, "f"], kind).slice(1, 3)
    offsets, data = jt.string_buffers(arr)
    assert offsets.dtype == (np.int64 if kind == pa.large_string() else np.int32)
    assert [bytes(data[a:b]) for a, b in zip(offsets[:-1], offsets[1:])] == [b"", b"cde", b""]
