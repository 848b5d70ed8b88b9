"""The compiled GPU engine (``_engine_gpu``) gives ``run_gpu``'s fast-path schedule job for
job: start times, node sets, GPU sets and dropped jobs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import synth
from swftools.replay import replay, resource_model
from swftools.replay.engine_gpu import compiled_fits, run_gpu
from swftools.replay.model import GpuNodes
from swftools.replay.workload import prepare
from swftools.replay import _engine_gpu  # noqa: F401  (the twin must be built: ``make dev``)
from swftools.site import resolve_site

from .strategies import examples, replay_gpu_jobs


def assert_same_run(work, model, policy):
    python = run_gpu(work, model, policy, compiled=False)
    compiled = run_gpu(work, model, policy, compiled=True)
    assert compiled.node_sets is None, "the compiled twin did not run"
    assert python.start.tolist() == compiled.start.tolist()
    assert python.node_masks() == compiled.node_masks()
    assert python.gpu_masks() == compiled.gpu_masks()
    assert python.dropped == compiled.dropped
    assert python.node_ids().equals(compiled.node_ids())
    assert python.gpu_ids().equals(compiled.gpu_ids())


def assert_same_replay(case, policy, allocation):
    table, site = case
    model = GpuNodes(site, allocation)
    work = prepare(table, model)
    if len(work):
        assert_same_run(work, model, policy)


@settings(max_examples=examples(50), deadline=None)
@given(replay_gpu_jobs(max_jobs=50), st.sampled_from(["easy", "fcfs"]),
       st.sampled_from(["first-fit", "best-fit"]))
def test_compiled_matches_python_on_small_sites(case, policy, allocation):
    assert_same_replay(case, policy, allocation)


@settings(max_examples=examples(100), deadline=None)
@given(replay_gpu_jobs(max_jobs=60, tie_grid=100), st.just("easy"),
       st.sampled_from(["first-fit", "best-fit"]))
def test_compiled_matches_python_at_shadow_ties(case, policy, allocation):
    """Times on a 100 s grid: EASY's boundaries at the shadow time (the random cases above
    draw a tie there about once in 3,000 examples)."""
    assert_same_replay(case, policy, allocation)


@settings(max_examples=60, deadline=None)
@given(replay_gpu_jobs(max_jobs=80, max_nodes=70), st.sampled_from(["easy", "fcfs"]),
       st.sampled_from(["first-fit", "best-fit"]))
def test_compiled_matches_python_on_sites_wider_than_a_word(case, policy, allocation):
    """Sites of up to 70 nodes: node sets span several of the twin's 32-node words."""
    assert_same_replay(case, policy, allocation)


@pytest.mark.parametrize("site_name,jobs", [("aaic", 6000), ("abci", 6000)])
@pytest.mark.parametrize("allocation", ["first-fit", "best-fit"])
def test_compiled_matches_python_on_synthetic_traces(site_name, jobs, allocation):
    """The bundled site presets with synthetic workloads: AAIC's 8-GPU nodes and its capacity
    timeline, ABCI's 1,088 nodes (34 words)."""
    site = resolve_site(site_name)
    table = synth.generate(jobs, seed=3, site=site)
    model = resource_model(table, site, None, allocation)
    work = prepare(table, model)
    assert compiled_fits(work, model)
    assert_same_run(work, model, "easy")


def test_replay_output_is_the_same_either_way(monkeypatch):
    """``replay()`` writes the same jobs table with the compiled twin as with Python."""
    from swftools.replay import engine_gpu

    site = resolve_site("aaic")
    table = synth.generate(3000, seed=5, site=site)
    monkeypatch.setattr(engine_gpu, "COMPILED_MIN_JOBS", 10**9)
    python = replay(table, site=site)
    monkeypatch.setattr(engine_gpu, "COMPILED_MIN_JOBS", 1)
    compiled = replay(table, site=site)
    assert python.jobs.equals(compiled.jobs)
    assert python.skipped.equals(compiled.skipped)


def test_workloads_the_twin_cannot_hold_run_in_python():
    """More than 62 distinct job sizes: the fast path stays in Python (same schedule)."""
    from swftools import table as jt

    site = resolve_site("abci")
    sizes = [4 * k for k in range(2, 70)]
    n = len(sizes)
    table = jt.from_columns({"job_id": list(range(1, n + 1)), "submit_time": list(range(n)),
                             "walltime_s": [100] * n, "gpus": sizes,
                             "requested_walltime_s": [200] * n})
    model = GpuNodes(site)
    work = prepare(table, model)
    assert not compiled_fits(work, model)
    run = run_gpu(work, model, "easy", compiled=True)
    assert run.node_sets is not None
    assert np.all(run.start >= work.submit)


def test_times_too_large_for_int64_keys_run_in_python():
    """``time << shift | job`` keys past int64: the fast path stays in Python."""
    from swftools import table as jt

    site = resolve_site("abci")
    table = jt.from_columns({"job_id": [1, 2], "submit_time": [0, 1 << 60],
                             "walltime_s": [10, 10], "gpus": [4, 4],
                             "requested_walltime_s": [10, 10]})
    model = GpuNodes(site)
    work = prepare(table, model)
    assert not compiled_fits(work, model)
    run = run_gpu(work, model, "easy", compiled=True)
    assert run.node_sets is not None
    assert run.start.tolist() == [0, 1 << 60]
