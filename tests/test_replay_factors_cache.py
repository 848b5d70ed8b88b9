"""A factor kernel's C callback (``factors_jit.compiled``, what the compiled engine calls) and any
``njit`` of the same function keep apart on numba's disk cache: fresh processes sharing one empty
cache directory, in every order, load their own machine code and give the Python function's
float (issue 30: the callback and an ``njit`` shared a cache entry and the second process
crashed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# one process: the sensitivity kernel (``whatif.kernel``) on a fixed placement signature, as
# STEP computes it; exits 0 when it equals the pure-Python evaluation of the same function
_STEP = """
import sys
import numpy as np
from numba import njit
from swftools.replay import factors_jit
from swftools.replay.factors import FactorKernel
from swftools.whatif.kernel import pack, sensitivity_factor

params = pack(np.array([1.0, 2.0]), np.array([[1.0, 1.5], [1.0, 2.5]]), np.array([0.2, 0.4]),
              np.array([1e8, 3e8]), np.array([0.0, 1e11, 2e10, 1e10]),
              np.array([0.0, 1e-6, 5e-6, 1e-5]), 4, 8)
args = (1, 2, 1.0, 3, 2, 4, params)  # key, models, s_min, nodes, racks, per_node, params
expected = sensitivity_factor(*args)
step = sys.argv[1]
if step == "callback":  # what the compiled engine compiles
    kernel = factors_jit.compiled(sensitivity_factor)
    got = factors_jit.call(sensitivity_factor, *args)
    hits = kernel.cache_hits
elif step == "call":  # what a test holding the kernel to its Python twin does
    got = FactorKernel(sensitivity_factor, params, np.array([1])).factor(0, *args[1:6])
    hits = factors_jit.compiled(sensitivity_factor).cache_hits
else:  # an njit of the kernel itself, cached (as before issue 30, or by a user)
    got = njit(factors_jit.SIGNATURE, cache=True)(sensitivity_factor)(*args)
    hits = -1
assert expected != 1.0 and got == expected, (step, got, expected)
print(hits)
"""


@pytest.mark.parametrize("steps", [("callback", "call", "njit", "call"),
                                   ("njit", "callback", "njit")])
def test_the_kernel_callback_and_an_njit_of_it_never_share_a_cache_entry(tmp_path, steps):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    hits = []
    for step in steps:
        done = subprocess.run([sys.executable, "-c", _STEP, step], capture_output=True,
                              text=True, env=env, timeout=300, check=False)
        assert done.returncode == 0, (steps, step, done.returncode, done.stderr[-2000:])
        hits.append(int(done.stdout.split()[-1]))
    # the callback compiled in the first process that needed it and was loaded after that
    callback_hits = [h for step, h in zip(steps, hits) if step != "njit"]
    assert callback_hits == [0] + [1] * (len(callback_hits) - 1)
