"""``swftools.whatif.kernel``: the sensitivity factor from a placement signature, worked by
hand, and its compiled twin attached at import."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from swftools import extensions
from swftools.whatif import kernel as kernel_module
from swftools.whatif.kernel import pack, sensitivity_factor

BW = np.array([0.0, 1e11, 2e10, 1e10])  # none, intra-node, inter-node, inter-rack
LAT = np.array([0.0, 1e-6, 5e-6, 1e-5])
# one class, GPU-model masks 0..1; 4 GPUs a node, racks of up to 8 nodes
PARAMS = pack(np.array([1.0]), np.array([[2.0, 1.0]]), np.array([0.5]), np.array([1e8]),
              BW, LAT, 4, 8)


def ring(p, level):
    """The alpha-beta ring all-reduce of 100 MB over ``p`` GPUs on ``level``, by hand."""
    return 2 * (p - 1) / p * 1e8 / BW[level] + 2 * (p - 1) * LAT[level]


def test_the_layout_of_params():
    assert PARAMS.dtype == np.float64
    assert PARAMS.tolist() == [1, 2, 4, 8, 1.0, 2.0, 1.0, 0.5, 1e8, *BW, *LAT]


@pytest.mark.parametrize("factor", ["python", "compiled"])
def test_the_factor_worked_by_hand(factor):
    def f(models, s_min, nodes, racks, per_node):
        args = (0, models, s_min, nodes, racks, per_node)
        if factor == "compiled":
            return sensitivity_factor.compiled(PARAMS).factor(*args)
        return sensitivity_factor(*args, PARAMS)

    # as recorded: 8 GPUs packed on 2 nodes of one rack, the trace's speed: exactly 1
    assert f(1, 1.0, 2, 1, 4) == 1.0
    # the same speed over two racks: the ring's slower links, against the recorded ones
    assert f(1, 1.0, 2, 2, 4) == pytest.approx((0.5 + ring(8, 3)) / (0.5 + ring(8, 2)), rel=1e-12)
    # spread over 8 nodes of one rack (the recorded level): the same cost, speed 1: exactly 1
    assert f(1, 1.0, 8, 1, 1) == 1.0
    # 4 GPUs on one node (recorded: one node), models of mask 0 at twice the trace's speed
    assert f(0, 1.0, 1, 1, 4) == pytest.approx((0.5 / 2 + ring(4, 1)) / (0.5 + ring(4, 1)),
                                               rel=1e-12)
    # one GPU: no ring; scores scale the speed
    assert f(1, 0.8, 1, 1, 1) == pytest.approx(1.25, rel=1e-12)
    assert f(1, 1.0, 1, 1, 1) == 1.0


def test_import_attaches_the_compiled_twin_or_says_why_not(monkeypatch, capsys):
    try:
        fresh = importlib.reload(kernel_module)
        assert fresh.sensitivity_factor.compiled.__name__ == "SensitivityFactor"
        monkeypatch.setitem(sys.modules, "swftools.whatif._kernel", None)
        monkeypatch.setattr(extensions, "_told", set())
        capsys.readouterr()
        blocked = importlib.reload(kernel_module)
        assert not hasattr(blocked.sensitivity_factor, "compiled")
        notice = capsys.readouterr().err
        assert notice == ("swftools: note: compiled module swftools.whatif._kernel is not built; "
                          "the what-if factor kernel runs in pure Python (slower). Build it "
                          "with: pip install . (needs a C compiler)\n")
    finally:
        monkeypatch.undo()
        importlib.reload(kernel_module)
