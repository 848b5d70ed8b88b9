"""Keyed factors as the compiled engine calls them (``replay/_factors.pyx``): the what-if
model's compiled callback, any Python function through Python (errors included), and the
pure-Python fallbacks when an extension is not built (one notice, the same schedules)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from swftools import synth
from swftools.replay import PlacementInputs, engine_gpu, replay
from swftools.replay.factors import FactorKernel
from swftools.site import resolve_site
from swftools.whatif.kernel import pack, sensitivity_factor

ROOT = Path(__file__).resolve().parent.parent
PARAMS = pack(np.array([1.0, 2.0]), np.array([[1.0, 1.5], [1.0, 2.5]]), np.array([0.2, 0.4]),
              np.array([1e8, 3e8]), np.array([0.0, 1e11, 2e10, 1e10]),
              np.array([0.0, 1e-6, 5e-6, 1e-5]), 4, 8)


def halving(key, models, s_min, nodes, racks, per_node, params):
    """A plain Python factor (no compiled twin)."""
    return params[key] * nodes / (racks + per_node)


def test_a_python_function_is_called_through_python():
    kernel = FactorKernel(halving, np.array([0.5, 3.0]), np.array([1, 0]))
    callback = kernel.callback()
    assert type(callback).__name__ == "PythonFactor"
    assert kernel.factor(0, 1, 1.0, 4, 2, 2) == halving(1, 1, 1.0, 4, 2, 2, kernel.params) == 3.0
    assert callback.factor(0, 1, 1.0, 4, 2, 2) == 0.5


def test_the_sensitivity_kernel_is_compiled_and_equal():
    kernel = FactorKernel(sensitivity_factor, PARAMS, np.array([1]))
    assert type(kernel.callback()).__name__ == "SensitivityFactor"
    for args in [(1, 2, 1.0, 3, 2, 4), (0, 1, 0.9, 1, 1, 1), (1, 3, 0.7, 2, 1, 4),
                 (0, 3, 1.1, 9, 3, 4)]:
        want = sensitivity_factor(*args, PARAMS)
        assert kernel.callback().factor(*args) == want, args


def _keyed_inputs(n_rows, function):
    kernel = FactorKernel(function, np.array([1.0, 2.0]), np.arange(n_rows) % 2)
    return PlacementInputs(factor_by_key=True, factor_kernel=kernel)


def test_an_error_in_a_python_factor_reaches_the_caller():
    site = resolve_site("aaic")
    table = synth.generate(200, seed=3, site=site)

    def failing(key, models, s_min, nodes, racks, per_node, params):
        raise ValueError("factor failed")

    def callback(row, nodes, gpus):  # the Python path's factor: never raises
        return 1.0

    with mock.patch.object(engine_gpu, "COMPILED_MIN_JOBS", 1), \
            pytest.raises(ValueError, match="factor failed"):
        replay(table, site=site, placement="lxv", placement_inputs=_keyed_inputs(
            table.num_rows, failing), runtime_factor=callback)


_FALLBACK = """
import sys
sys.modules[sys.argv[1]] = None  # as if the extension were not built
from unittest import mock
import numpy as np
from swftools import synth
from swftools.replay import engine_gpu, replay
from swftools.site import load_site, resolve_site
from swftools.whatif.profile import generate_profile
from swftools.whatif.run import whatif

site = load_site("aaic-v100-half")
table = synth.generate(1500, seed=4, site=resolve_site("aaic"))
profile = generate_profile(site, spread=0.05, seed=1, classes=4)
runs = []
for threshold in (1 << 62, 1, 1):
    with mock.patch.object(engine_gpu, "COMPILED_MIN_JOBS", threshold):
        result = whatif(table, site, policies=["random", "lxv"], profile=profile)
    runs.append(result.to_json())
assert runs[0] == runs[1] == runs[2]
print("ok")
"""


@pytest.mark.parametrize("blocked", ["swftools.replay._engine_general", "swftools.whatif._kernel"])
def test_without_an_extension_the_python_reference_runs_after_one_notice(blocked):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _FALLBACK, blocked], capture_output=True,
                          text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["ok"]
    notices = [line for line in done.stderr.splitlines() if blocked in line]
    assert len(notices) == 1 and "pure Python" in notices[0], done.stderr


def _contract(key, models, s_min, nodes, racks, per_node, params):
    """A factor that checks the documented form of ``params`` (float64, contiguous)."""
    assert params.dtype == np.float64 and params.flags.c_contiguous
    return float(params[key] * nodes + s_min)


@pytest.mark.parametrize("params", [np.array([1, 3]), np.array([0.5, 2.0, 9.0, 9.0])[::2],
                                    np.array([0.5, 2.0], np.float32)])
def test_params_reach_a_factor_as_float64_whatever_they_were_given_as(monkeypatch, params):
    """The same factor with the extension, and without it (its import failing: the function
    itself is called), for integer, strided and float32 constants."""
    kernel = FactorKernel(_contract, params, np.array([1, 0]))
    want = float(np.asarray(params, np.float64)[0] * 3 + 0.5)
    assert kernel.factor(1, 1, 0.5, 3, 1, 3) == want
    monkeypatch.setitem(sys.modules, "swftools.replay._factors", None)
    monkeypatch.delattr("swftools.replay._factors", raising=False)
    with pytest.raises(ImportError):
        kernel.callback()
    assert kernel.factor(1, 1, 0.5, 3, 1, 3) == want
    assert kernel.factor(0, 1, 0.5, 3, 1, 3) == float(np.asarray(params, np.float64)[1] * 3 + 0.5)


def test_a_compiled_factor_takes_float32_params_as_float64():
    single = PARAMS.astype(np.float32)
    kernel = FactorKernel(sensitivity_factor, single, np.array([1]))
    args = (1, 2, 1.0, 3, 2, 4)
    assert kernel.callback().factor(*args) == sensitivity_factor(*args, single.astype(np.float64))


def test_a_compiled_twin_is_built_from_float64_params():
    """``function.compiled(params)`` (the documented hook for a compiled twin) is handed the
    constants as float64, contiguous, as the function itself gets them."""
    from swftools.replay import _factors

    handed = []

    def twin(params):
        handed.append(params)
        return _factors.PythonFactor(_contract, params)

    def with_twin(*args):
        return _contract(*args)

    with_twin.compiled = twin
    kernel = FactorKernel(with_twin, np.array([1, 3]), np.array([1, 0]))
    assert kernel.factor(1, 1, 0.5, 3, 1, 3) == 3.5
    assert handed[0].dtype == np.float64 and handed[0].flags.c_contiguous
    assert handed[0].tolist() == [1.0, 3.0]
