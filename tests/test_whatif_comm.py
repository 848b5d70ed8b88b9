"""``swftools.whatif.comm``: the ring all-reduce of the what-ifs, against the alpha-beta formula
worked by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from swftools.whatif.comm import level_allreduce_s, ring_allreduce_array_s, ring_allreduce_s


def test_the_alpha_beta_formula():
    # 8 GPUs, 100 MB, 10 GB/s, 10 us: 2 * 7/8 * 0.01 s + 2 * 7 * 1e-5 s
    assert ring_allreduce_s(8, 1e8, 1e10, 1e-5) == pytest.approx(0.0175 + 0.00014, rel=1e-12)
    assert ring_allreduce_s(2, 1e8, 1e10, 0.0) == pytest.approx(0.01, rel=1e-12)
    assert ring_allreduce_s(1, 1e8, 1e10, 1e-5) == 0.0


def test_the_array_form_is_zero_for_one_gpu_or_none_and_warns_of_nothing():
    """``p`` = 0 (a division by zero in the formula) and 1 give 0, with no numpy warning, also
    for an empty message (0 x inf); integer inputs give the float results."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ring_allreduce_array_s(np.array([0, 1, 2, 8]), 1e8, 1e10, 1e-5)
        empty = ring_allreduce_array_s(np.array([0, 8]), 0, 10**10, 0)
        ints = ring_allreduce_array_s(np.array([2, 8]), 10**8, 10**10, 0)
    assert got.tolist() == [0.0, 0.0, ring_allreduce_s(2, 1e8, 1e10, 1e-5),
                            ring_allreduce_s(8, 1e8, 1e10, 1e-5)]
    assert empty.tolist() == [0.0, 0.0]
    assert ints.dtype == np.float64 and ints.tolist() == [0.01, 0.0175]


def test_a_level_zero_ring_costs_nothing():
    assert level_allreduce_s(0, 8, 1e8, 1e10, 1e-5) == 0.0
    assert level_allreduce_s(3, 8, 1e8, 1e10, 1e-5) == ring_allreduce_s(8, 1e8, 1e10, 1e-5)
    assert level_allreduce_s(1, 1, 1e8, 1e10, 1e-5) == 0.0


def test_the_array_form_computes_in_float64_whatever_the_input_types():
    """The same floats as the scalar form for float32 and integer GPU counts."""
    want = [ring_allreduce_s(p, 1e8 / 3, 1e10, 1e-5) for p in (2, 3, 7)]
    for p in (np.array([2, 3, 7], np.float32), np.array([2, 3, 7]), [2, 3, 7]):
        got = ring_allreduce_array_s(p, 1e8 / 3, 1e10, 1e-5)
        assert got.dtype == np.float64 and got.tolist() == want
