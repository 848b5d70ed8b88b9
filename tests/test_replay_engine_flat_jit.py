"""The compiled flat engine (``_engine_flat``) gives ``run_flat``'s start times job for job."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from swftools.formats import swf
from swftools.replay import resource_model
from swftools.replay.engine_flat import fits_int64_keys, run_flat
from swftools.replay.model import FlatPool
from swftools.replay.workload import prepare
from swftools.replay import _engine_flat  # noqa: F401  (the twin must be built: ``make dev``)

from .conftest import trace_path
from .strategies import examples, replay_swf_jobs


@settings(max_examples=examples(50), deadline=None)
@given(replay_swf_jobs(max_jobs=60))
def test_compiled_matches_python_on_random_workloads(case):
    table, procs = case
    work = prepare(table, FlatPool(procs))
    for policy in ("easy", "fcfs"):
        python = run_flat(work, procs, policy, compiled=False)
        compiled = run_flat(work, procs, policy, compiled=True)
        assert np.array_equal(python, compiled), policy


@settings(max_examples=examples(70), deadline=None)
@given(replay_swf_jobs(max_jobs=60, tie_grid=100))
def test_compiled_matches_python_at_shadow_ties(case):
    """Times on a 100 s grid: EASY's ``<=`` / ``<`` boundaries at the shadow time."""
    test_compiled_matches_python_on_random_workloads.hypothesis.inner_test(case)


def test_keys_too_large_for_int64_fall_back_to_python():
    table, _ = swf_table([(1, 0, 10, 1), (2, 1 << 60, 10, 1)])
    work = prepare(table, FlatPool(1))
    assert not fits_int64_keys(work)
    assert run_flat(work, 1, "easy", compiled=True).tolist() == [0, 1 << 60]


def swf_table(jobs):
    from swftools import table as jt

    cols = {"job_id": [], "submit_time": [], "walltime_s": [], "gpus": [],
            "requested_procs": [], "requested_walltime_s": []}
    for job_id, submit, run, size in jobs:
        for key, value in zip(cols, (job_id, submit, run, size, size, run)):
            cols[key].append(value)
    return jt.from_columns(cols), None


@pytest.mark.slow
@pytest.mark.parametrize("name,procs,jobs", [("KTH-SP2-1996-2.1-cln.swf.gz", None, None),
                                             ("SDSC-BLUE-2000-4.2-cln.swf.gz", None, None),
                                             ("RICC-2010-2.swf.gz", 8192, 150_000)])
def test_compiled_matches_python_on_real_traces(name, procs, jobs):
    """Job for job, whole traces; RICC's first 150,000 of 447,794 jobs keep the Python engine's
    run short (its EASY queue on 8,192 processors is already up to 19,770 jobs deep there)."""
    table = swf.read(trace_path(name))
    table = table if jobs is None else table.slice(0, jobs)
    model = resource_model(table, None, procs)
    work = prepare(table, model)
    python = run_flat(work, model.procs, "easy", compiled=False)
    assert np.array_equal(python, run_flat(work, model.procs, "easy", compiled=True))


_REPLAY = """
import json, sys
if sys.argv[1] == "reference":
    sys.modules["swftools.replay._engine_flat"] = None  # as where they were not built
    sys.modules["swftools.replay._engine_gpu"] = None
from swftools import synth
from swftools.replay import replay, engine_flat, engine_gpu
engine_flat.COMPILED_MIN_JOBS = engine_gpu.COMPILED_MIN_JOBS = 1
table = synth.generate(300, seed=4)
gpu = replay(table, site="aaic").summary
flat = replay(table, procs=64).summary
print(json.dumps({"numba": "numba" in sys.modules, "gpu": gpu["mean_wait_s"],
                  "flat": flat["mean_wait_s"],
                  "compiled": "swftools.replay._engine_flat" in sys.modules}))
"""


def test_compiled_replays_never_import_numba_and_the_fallback_says_so():
    import json
    import subprocess
    import sys

    runs = {}
    for which in ("compiled", "reference"):
        done = subprocess.run([sys.executable, "-c", _REPLAY, which], capture_output=True,
                              text=True, check=False, timeout=300)
        assert done.returncode == 0, done.stderr
        runs[which] = (json.loads(done.stdout.splitlines()[-1]), done.stderr.splitlines())
    (compiled, quiet), (reference, notes) = runs["compiled"], runs["reference"]
    assert compiled["numba"] is False and compiled["compiled"] is True and quiet == []
    assert (compiled["gpu"], compiled["flat"]) == (reference["gpu"], reference["flat"])
    assert [n for n in notes if "is not built" in n] == notes and len(notes) == 2, notes
