"""``swftools.formats.swf.kernels`` (issue 15): numba's CPU target loads without scipy.linalg,
and linear algebra compiled afterwards still works (fresh interpreters: this test process may
have loaded either already); the kernels compiled ahead of time (``swftools.aot``) give the same
results as the numba ones, and a process using them never imports numba."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import aot
from swftools.formats.swf import kernels
from swftools.formats.swf.writer import to_bytes

from .aot_support import build_aot_module
from .strategies import swf_job_bodies, swf_jobs

_CHECK = """
import json, sys
from swftools.formats.swf import kernels
kernels.load_numba_target()
after_load = "scipy.linalg" in sys.modules
tokens = kernels.tokenize(b" 1 22\\n3  4.5\\n", 2)
import numpy as np
from numba import njit

@njit
def dot(a, b):
    return np.dot(a, b)

value = float(dot(np.arange(3.0), np.arange(3.0)))
print(json.dumps({"after_load": after_load, "ints": tokens[0].tolist(),
                  "dot": value, "linalg_after_dot": "scipy.linalg" in sys.modules,
                  "blocked": sys.modules.get("scipy.linalg.cython_blas", 0) is None}))
"""


def _run(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_target_loads_without_scipy_linalg_and_linear_algebra_still_compiles():
    result = _run(_CHECK)
    assert result["after_load"] is False  # the 0.15-0.2 s import is gone
    assert result["ints"] == [[1, 3], [22, 4]]  # the kernels run
    assert result["dot"] == 5.0  # np.dot compiled later imports scipy.linalg on use
    assert result["linalg_after_dot"] is True
    assert result["blocked"] is False  # the import is not left blocked


def test_nothing_is_blocked_when_scipy_linalg_is_loaded_first():
    result = _run("import scipy.linalg\n" + _CHECK)
    assert result["after_load"] is True and result["dot"] == 5.0 and not result["blocked"]


# -- the same kernels compiled ahead of time (swftools.aot) ------------------------------------

@pytest.fixture(scope="module")
def aot_kernels(tmp_path_factory):
    """The SWF kernels built ahead of time into a fresh directory (~7 s), loaded."""
    return build_aot_module(tmp_path_factory, kernels.build_aot, kernels.AOT_MODULE,
                            kernels._jit_source())


def _jit():
    kernels.load_numba_target()
    from swftools.formats.swf import kernels_jit

    return (kernels_jit._tokenize_chunk, kernels_jit._format_rows, True)


@contextlib.contextmanager
def _running(native, chunked: bool):
    saved = (kernels._native, kernels._MIN_CHUNK_BYTES, kernels._MIN_CHUNK_ROWS, kernels._workers)
    kernels._native = native
    if chunked:  # several chunks even on small inputs (threads with numba, in turn without)
        kernels._MIN_CHUNK_BYTES, kernels._MIN_CHUNK_ROWS, kernels._workers = 1, 1, lambda: 3
    try:
        yield
    finally:
        (kernels._native, kernels._MIN_CHUNK_BYTES, kernels._MIN_CHUNK_ROWS,
         kernels._workers) = saved


@settings(max_examples=150, deadline=None)
@given(swf_job_bodies(), st.booleans())
def test_aot_tokenizer_equals_numba(aot_kernels, body, chunked):
    _, module = aot_kernels
    results = []
    for native in (_jit(), (module.tokenize_chunk, module.format_rows, False)):
        with _running(native, chunked):
            results.append(kernels.tokenize(body, 18))
    (ints, floats, frac, extra, pads, flags, error), other = results
    assert error.tolist() == other[6].tolist()
    if error[0]:
        return  # the reader raises; rows from the bad one on were never written
    assert np.array_equal(ints, other[0]) and np.array_equal(frac, other[2])
    decimal = frac >= 0
    assert floats[decimal].tobytes() == other[1][decimal].tobytes()  # bit for bit
    assert np.array_equal(extra, other[3]) and np.array_equal(pads, other[4])
    assert flags.tolist() == other[5].tolist()


@settings(max_examples=60, deadline=None)
@given(swf_jobs(min_size=0, max_size=40), st.booleans())
def test_aot_formatter_equals_numba(aot_kernels, table, chunked):
    _, module = aot_kernels
    outputs = []
    for native in (_jit(), (module.tokenize_chunk, module.format_rows, False)):
        with _running(native, chunked):
            outputs.append(to_bytes(table))
    assert outputs[0] == outputs[1]


def test_convert_with_aot_kernels_writes_the_same_bytes_without_numba(aot_kernels, tmp_path):
    directory, _ = aot_kernels
    src = tmp_path / "in.swf"
    src.write_text("; Version: 2.2\n; UnixStartTime: 1000\n" + "".join(
        f"{j:5d} {10 * j:6d} {j % 3} {50 + j} {1 + j % 4} {j}.25 -1 {1 + j % 4} 100 -1 1 "
        f"{j % 2} 1 -1 {1 + j % 2} 1 -1 -1\n" for j in range(1, 60)), encoding="ascii")
    code = """
import json, sys
from swftools.formats import swf
table = swf.read(sys.argv[1])
swf.write(table, sys.argv[2])
print(json.dumps({"numba": "numba" in sys.modules,
                  "aot": "swftools_swf_kernels" in sys.modules}))
"""
    seen = {}
    for label, env in (("aot", {aot.ENV_DIR: str(directory), aot.ENV_SWITCH: "1"}),
                       ("jit", {aot.ENV_SWITCH: "0"})):
        out = tmp_path / f"{label}.swf"
        done = subprocess.run([sys.executable, "-c", code, str(src), str(out)],
                              capture_output=True, text=True, check=True, timeout=300,
                              env={**os.environ, **env})
        seen[label] = (json.loads(done.stdout.splitlines()[-1]), out.read_bytes())
    assert seen["aot"][0] == {"numba": False, "aot": True}
    assert seen["jit"][0] == {"numba": True, "aot": False}
    assert seen["aot"][1] == seen["jit"][1] == src.read_bytes()


def test_large_inputs_run_the_threaded_numba_kernels(monkeypatch):
    """The ahead-of-time kernels hold the GIL: from ``_THREADED_MIN_BYTES`` on, the tokenizer
    takes the numba ones, in threads, with the same results."""
    body = b"".join(f"{i} 0 1 2 4 -1 -1 4 10 -1 1 1 1 1 1 -1 -1 -1\n".encode() for i in range(1, 60))
    small = kernels.tokenize(body, 18)
    calls = []
    threaded = kernels.native(large=True)
    assert threaded[2] is True  # releases the GIL

    def spy(*args):
        calls.append(1)
        return threaded[0](*args)

    monkeypatch.setattr(kernels, "_threaded", (spy, threaded[1], True))
    monkeypatch.setattr(kernels, "_THREADED_MIN_BYTES", 1)
    large = kernels.tokenize(body, 18)
    assert calls
    (ints, floats, frac, extra, pads, flags, error), other = small, large
    assert np.array_equal(ints, other[0]) and np.array_equal(frac, other[2])
    assert floats[frac >= 0].tobytes() == other[1][frac >= 0].tobytes()  # (empty elsewhere)
    assert np.array_equal(extra, other[3]) and np.array_equal(pads, other[4])
    assert flags.tolist() == other[5].tolist() and error.tolist() == other[6].tolist()
