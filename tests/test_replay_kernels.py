"""``replay.kernels``: the engines compiled ahead of time (``swftools.aot``) give the numba
twins' schedules, and a replay that loads them never imports numba."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import aot
from swftools.replay import kernels
from swftools.replay.engine_flat import run_flat
from swftools.replay.engine_gpu import run_gpu
from swftools.replay.model import FlatPool, GpuNodes
from swftools.replay.workload import prepare

from .aot_support import build_aot_module
from .strategies import replay_gpu_jobs, replay_swf_jobs


@pytest.fixture(scope="module")
def aot_dir(tmp_path_factory):
    """The replay engines built ahead of time into a fresh directory (~15 s), loaded."""
    return build_aot_module(tmp_path_factory, kernels.build_aot, kernels.AOT_MODULE,
                            kernels._sources())


def _with(functions):
    saved = dict(kernels._loaded)
    kernels._loaded.clear()
    kernels._loaded.update(functions)
    return saved


def _numba():
    from swftools.replay.engine_flat_jit import run_flat_compiled
    from swftools.replay.engine_gpu_jit import run_gpu_compiled

    return {"run_flat_compiled": run_flat_compiled, "run_gpu_compiled": run_gpu_compiled}


@settings(max_examples=80, deadline=None)
@given(replay_swf_jobs(max_jobs=60), st.sampled_from(["easy", "fcfs"]))
def test_aot_flat_engine_equals_numba(aot_dir, case, policy):
    _, module = aot_dir
    table, procs = case
    work = prepare(table, FlatPool(procs))
    starts = []
    for functions in (_numba(), {"run_flat_compiled": module.run_flat_compiled}):
        saved = _with(functions)
        try:
            starts.append(run_flat(work, procs, policy, compiled=True).tolist())
        finally:
            _with(saved)
    assert starts[0] == starts[1]


@settings(max_examples=80, deadline=None)
@given(replay_gpu_jobs(max_jobs=60, max_nodes=40), st.sampled_from(["easy", "fcfs"]),
       st.sampled_from(["first-fit", "best-fit"]))
def test_aot_gpu_engine_equals_numba(aot_dir, case, policy, allocation):
    _, module = aot_dir
    table, site = case
    model = GpuNodes(site, allocation)
    work = prepare(table, model)
    if not len(work):
        return
    runs = []
    for functions in (_numba(), {"run_gpu_compiled": module.run_gpu_compiled}):
        saved = _with(functions)
        try:
            runs.append(run_gpu(work, model, policy, compiled=True))
        finally:
            _with(saved)
    a, b = runs
    assert a.node_sets is None and b.node_sets is None  # both ran a compiled twin
    assert np.array_equal(a.start, b.start) and a.dropped == b.dropped
    assert a.node_masks() == b.node_masks() and a.gpu_masks() == b.gpu_masks()


_REPLAY = """
import json, sys
from swftools import synth
from swftools.replay import replay, engine_flat, engine_gpu
engine_flat.COMPILED_MIN_JOBS = engine_gpu.COMPILED_MIN_JOBS = 1
table = synth.generate(300, seed=4)
gpu = replay(table, site="aaic").summary
flat = replay(table, procs=64).summary
print(json.dumps({"numba": "numba" in sys.modules, "gpu": gpu["mean_wait_s"],
                  "flat": flat["mean_wait_s"]}))
"""


def test_a_replay_with_the_built_engines_never_imports_numba(aot_dir):
    directory, _ = aot_dir
    results = []
    for switch in ("1", "0"):
        env = dict(os.environ, **{aot.ENV_DIR: str(directory), aot.ENV_SWITCH: switch})
        done = subprocess.run([sys.executable, "-c", _REPLAY], capture_output=True, text=True,
                              env=env, check=False, timeout=300)
        assert done.returncode == 0, done.stderr
        results.append(json.loads(done.stdout.splitlines()[-1]))
    built, numba = results
    assert built["numba"] is False and numba["numba"] is True
    assert (built["gpu"], built["flat"]) == (numba["gpu"], numba["flat"])
