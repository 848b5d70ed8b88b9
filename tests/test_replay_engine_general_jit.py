"""The compiled general path (``_engine_general.pyx``) gives ``run_gpu``'s Python general-path
schedule job for job: start times, node sets, GPU sets, dropped jobs, replayed run times and
estimates, for every built-in placement, with and without keyed factors (a compiled kernel and
its Python callback), on GPU nodes and flat pools, FCFS and EASY."""

from __future__ import annotations

import dataclasses
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import synth
from swftools.errors import UsageError
from swftools.replay import PlacementInputs, _general_inputs, engine_general, replay
from swftools.replay.placement.tables import COMPILED_POLICIES  # the policies with a twin
from swftools.replay import engine_gpu
from swftools.replay.engine_gpu import run_gpu
from swftools.replay.factors import FactorKernel
from swftools.replay.model import FlatPool, GpuNodes
from swftools.replay.workload import prepare
from swftools.site import load_site, resolve_site

from .test_replay_placement import KEYED_SCALE as SCALE, make_keyed_factor
from .strategies import (examples, pal_placement_cases, placement_flat_cases,
                         placement_gpu_cases, placement_wide_flat_cases, placement_wide_gpu_cases,
                         priority_wc_cases, whatif_replay_cases)



def keyed_kernel(key, models, s_min, nodes, racks, per_node, params):  # pragma: no cover
    """``keyed_factor``'s factor from the key and the placement signature; ``params``: the
    number of keys, the scale per key, the speed per GPU model (``kernel_params``)."""
    n_keys = np.int64(params[0])
    slowest = np.inf
    m = 0
    while models:
        if models & 1 and params[1 + n_keys + m] < slowest:
            slowest = params[1 + n_keys + m]
        models >>= 1
        m += 1
    return params[1 + key] / (slowest * s_min) * (1 + 0.1 * (racks - 1))


def kernel_params(scale, speed) -> np.ndarray:
    """``keyed_kernel``'s params array."""
    return np.array([len(scale), *scale, *speed], dtype=np.float64)


def keyed_factor(inputs: PlacementInputs, n_nodes: int, g: int, n_rows: int):
    """(inputs with the keyed flag and the kernel, the Python callback, a lower bound): the
    keyed factor of ``test_replay_placement.make_keyed_factor`` and its kernel."""
    factor, lower = make_keyed_factor(inputs, n_nodes, g, n_rows)
    m = inputs.resolved(n_nodes, g)
    kernel = FactorKernel(keyed_kernel, kernel_params(SCALE, m.model_speed),
                          np.arange(n_rows, dtype=np.int64) % 3)
    keyed = dataclasses.replace(inputs, factor_by_key=True, factor_kernel=kernel)
    return keyed, factor, lower


def assert_same_run(python, compiled, gpu=True):
    assert compiled.node_sets is None, "the compiled twin did not run"
    assert python.start.tolist() == compiled.start.tolist()
    assert python.node_masks() == compiled.node_masks()
    assert python.gpu_masks() == compiled.gpu_masks()
    assert python.dropped == compiled.dropped
    assert python.runtime.tolist() == compiled.runtime.tolist()
    assert python.estimate.tolist() == compiled.estimate.tolist()
    assert python.node_ids().equals(compiled.node_ids())
    if gpu:
        assert python.gpu_ids().equals(compiled.gpu_ids())


def both_runs(table, model, name, inputs, policy, factor=None, bound=None, seed=0):
    """The Python and the compiled general path on the same inputs (a fresh placement each)."""
    work = prepare(table, model)
    runs = []
    for compiled in (False, True):
        m, w, chosen, f, b, kernel = _general_inputs(model, work, name, inputs, factor, bound,
                                                     seed)
        runs.append(run_gpu(w, m, policy, chosen, f, b, compiled=compiled, factor_kernel=kernel))
    return runs, len(work)


def check_case(table, model, name, inputs, policy, factors, seed, n_nodes, g):
    factor = lower = None
    if factors != "none":
        inputs, factor, lower = keyed_factor(inputs, n_nodes, g, table.num_rows)
    bound = {"none": None, "factor": None, "bound": lower, "too-high": 1.2,
             "per-job": None}[factors]
    if factors == "per-job":
        bound = np.array([lower * (1 + (r % 2)) for r in range(table.num_rows)])
    (python, compiled), n = both_runs(table, model, name, inputs, policy, factor, bound, seed)
    if n:
        assert_same_run(python, compiled, gpu=isinstance(model, GpuNodes))


FACTORS = st.sampled_from(["none", "factor", "bound", "too-high", "per-job"])
POLICIES = st.sampled_from(["easy", "fcfs"])


@settings(max_examples=examples(100), deadline=None)
@given(placement_gpu_cases(), st.sampled_from(COMPILED_POLICIES), POLICIES, FACTORS,
       st.integers(0, 3))
def test_compiled_general_path_matches_python_on_small_sites(case, name, policy, factors, seed):
    table, site, inputs = case
    check_case(table, GpuNodes(site), name, inputs, policy, factors, seed, site.max_nodes,
               site.gpus_per_node)


@settings(max_examples=examples(70), deadline=None)
@given(placement_wide_gpu_cases(), st.sampled_from(COMPILED_POLICIES), POLICIES, FACTORS,
       st.integers(0, 3))
def test_compiled_general_path_matches_python_on_sites_wider_than_a_word(case, name, policy,
                                                                         factors, seed):
    """Sites of up to 70 nodes: node sets over several 32-node words, wide multi-node jobs."""
    table, site, inputs = case
    check_case(table, GpuNodes(site), name, inputs, policy, factors, seed, site.max_nodes,
               site.gpus_per_node)


@settings(max_examples=examples(70), deadline=None)
@given(st.one_of(placement_flat_cases(), placement_wide_flat_cases()),
       st.sampled_from(COMPILED_POLICIES), POLICIES, FACTORS, st.integers(0, 3))
def test_compiled_general_path_matches_python_on_flat_pools(case, name, policy, factors, seed):
    """Flat pools as one-GPU nodes (``FlatNodes``): a job of s processors is s whole nodes."""
    table, procs, inputs = case
    check_case(table, FlatPool(procs), name, inputs, policy, factors, seed, procs, 1)


@settings(max_examples=examples(100), deadline=None)
@given(pal_placement_cases(), st.sampled_from(["pm-first", "pal"]), POLICIES, FACTORS,
       st.sampled_from([62, 62, 62, 4, 0]))
def test_pm_first_and_pal_compiled_match_python(case, name, policy, factors, bits):
    """``pm-first`` and ``pal`` with tied GPU values, per-class score grids (each job ranks by
    its class's) or one, no factor or the keyed kernel, all or few combination bits: the
    compiled choice (``placement/_pal.pyx``) is Python's, job for job."""
    table, site, inputs = case
    with mock.patch.object(engine_general, "COMPILED_MAX_BITS", bits):
        check_case(table, GpuNodes(site), name, inputs, policy, factors, 0, site.max_nodes,
                   site.gpus_per_node)


def test_a_refused_class_does_not_hold_back_another_class():
    """``pm-first``, two classes ranking two nodes oppositely: the head waits for node 0, a
    one-GPU candidate of class 0 (best GPU on node 0) is refused, and the next one of class 1
    (best GPU on node 1) still backfills -- the job's class is part of its queue bit."""
    from swftools import table as jt
    from swftools.site import site_from_settings

    queue = {"name": "q", "number": 1, "nodes_min": 1, "nodes_max": 2, "gpus_per_node_min": 1,
             "gpus_per_node_max": 2, "walltime_default_s": 60, "walltime_max_s": 10**5}
    site = site_from_settings({"name": "two", "time_zone": "UTC", "gpus_per_node": 2,
                               "capacity_timeline": [{"since": "1970-01-01T00:00:00+00:00",
                                                      "nodes": 2}], "queues": [queue]})
    # R0 (class 0) and R1 (class 1) hold a GPU of node 0 and node 1; H needs a whole node
    table = jt.from_columns({"job_id": [1, 2, 3, 4, 5], "submit_time": [0, 0, 1, 2, 2],
                             "walltime_s": [100, 1000, 10, 500, 500], "gpus": [1, 1, 2, 1, 1],
                             "nodes": [1, 1, 1, 1, 1], "gpus_per_node": [1, 1, 2, 1, 1],
                             "requested_walltime_s": [100, 1000, 10, 500, 500]})
    near, far = [[1.0, 1.0], [2.0, 2.0]], [[2.0, 2.0], [1.0, 1.0]]
    inputs = PlacementInputs(class_score=[near, far], job_class=[0, 1, 0, 0, 1])
    (python, compiled), _ = both_runs(table, GpuNodes(site), "pm-first", inputs, "easy")
    assert_same_run(python, compiled)
    assert compiled.start.tolist() == [0, 0, 100, 110, 2]


def test_pal_tables_decline_what_they_cannot_order():
    """NaN values (no order to follow) or job classes not one per job: the Python path."""
    from swftools.replay.placement.tables import pal_tables

    nan = PlacementInputs().resolved(1, 2)  # resolved() refuses a NaN score: a Machine's own
    nan.score = [[1.0, float("nan")]]
    assert pal_tables("pm-first", nan, 1, 2, 3) is None
    short = PlacementInputs(class_score=[[[1.0, 2.0]], [[2.0, 1.0]]],
                            job_class=[0, 1]).resolved(1, 2)
    assert pal_tables("pal", short, 1, 2, 3) is None
    assert pal_tables("pal", short, 1, 2, 2)[2].tolist() == [0, 1]


def _counting():
    """A spy on the compiled general path: how many replays it ran."""
    calls = []
    real = engine_general.run_general_compiled

    def spy(*args, **kwargs):
        run = real(*args, **kwargs)
        calls.append(run is not None)
        return run
    return calls, mock.patch.object(engine_general, "run_general_compiled", spy)


def _whatif_both(table, site, policies, **kwargs):
    from swftools.whatif.run import whatif

    out = []
    for threshold in (1 << 62, 1):
        calls, spy = _counting()
        with spy, mock.patch.object(engine_gpu, "COMPILED_MIN_JOBS", threshold):
            out.append(whatif(table, site, policies=policies, **kwargs))
        # (a trace whose every job can never fit may run no engine at all)
        replayed = any(r.jobs.num_rows for r in out[-1].results.values())
        expected = ({len(policies)} if replayed else {0, len(policies)}) if threshold == 1 \
            else {0}
        assert all(calls) and len(calls) in expected
    return out


@settings(max_examples=examples(40), deadline=None)
@given(whatif_replay_cases(), st.sampled_from(["easy", "fcfs"]), st.integers(0, 2))
def test_whatif_sensitivity_kernel_matches_python(case, scheduler, seed):
    """The what-if model's kernel (``FactorModel.kernel``) on heterogeneous sites: every
    placement's replay is the same with the compiled general path as in Python."""
    table, site, profile = case
    python, compiled = _whatif_both(table, site, list(COMPILED_POLICIES), profile=profile,
                                    scheduler=scheduler, seed=seed)
    for name in COMPILED_POLICIES:
        assert python.results[name].jobs.equals(compiled.results[name].jobs), name
        assert python.results[name].skipped.equals(compiled.results[name].skipped), name


@settings(max_examples=examples(40), deadline=None)
@given(whatif_replay_cases(), st.data(), st.sampled_from(["easy", "fcfs"]))
def test_whatif_per_class_scores_match_python(case, data, scheduler):
    """A profile with per-class scores (``score:<class>`` grids): the factor's lowest score is
    read from the job's class's grid (``FactorKernel.score_grids``); every placement's replay is
    the same with the compiled general path as in Python, where the factor is not keyed."""
    from swftools.whatif.sensitivity import load_sensitivity

    table, site, profile = case
    names = load_sensitivity("mlperf-p100-v100").names
    shape = profile.scores.shape
    pool = data.draw(st.lists(st.floats(0.7, 1.3), min_size=1, max_size=4), label="pool")
    chosen = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names),
                                unique=True), label="classes with a grid")
    grids = tuple((name, np.array([[data.draw(st.sampled_from(pool)) for _ in range(shape[1])]
                                   for _ in range(shape[0])], dtype=np.float64))
                  for name in chosen)
    profile = dataclasses.replace(profile, app_scores=grids)
    python, compiled = _whatif_both(table, site, list(COMPILED_POLICIES), profile=profile,
                                    scheduler=scheduler)
    for name in COMPILED_POLICIES:
        assert python.results[name].jobs.equals(compiled.results[name].jobs), name
        assert python.results[name].skipped.equals(compiled.results[name].skipped), name


def test_per_class_grids_decide_the_compiled_factor():
    """The compiled factor reads the job's class's grid, not the site's scores: with every
    class's grid at half the site's scores, a 1-GPU job runs twice as long, in both paths."""
    from swftools.whatif.profile import Profile
    from swftools.whatif.sensitivity import load_sensitivity

    site = resolve_site("aaic")
    table = synth.generate(60, seed=3, site=site)
    n, g = len(site.gpu_model_of_node), site.gpus_per_node
    names = load_sensitivity("mlperf-p100-v100").names
    ones = np.ones((n, g))
    base = Profile(scores=ones, classes=np.zeros((n, g), dtype=np.int64))
    halved = dataclasses.replace(base, app_scores=tuple((c, ones * 0.5) for c in names))
    plain = _whatif_both(table, site, ["packed"], profile=base)
    slow = _whatif_both(table, site, ["packed"], profile=halved)
    assert plain[1].results["packed"].jobs.equals(plain[0].results["packed"].jobs)
    assert slow[1].results["packed"].jobs.equals(slow[0].results["packed"].jobs)
    run_a = plain[1].results["packed"].jobs.column("run_s").to_numpy()
    run_b = slow[1].results["packed"].jobs.column("run_s").to_numpy()
    one_gpu = plain[1].results["packed"].jobs.column("size").to_numpy() == 1
    assert one_gpu.any()
    # one GPU: no communication term, so the factor is exactly the score's inverse
    assert (run_b[one_gpu] == np.round(run_a[one_gpu] * 2.0)).all()


@pytest.mark.slow
def test_whatif_on_a_synthetic_aaic_trace_is_the_same_compiled():
    """A few thousand synthetic AAIC jobs on ``aaic-v100-half`` with a generated profile (as
    ``benchmarks/bench_whatif.py``): every policy's ``whatif()`` result is the same either way."""
    from swftools.whatif.profile import generate_profile

    site = load_site("aaic-v100-half")
    table = synth.generate(4000, seed=11, site=resolve_site("aaic"))
    profile = generate_profile(site, spread=0.05, seed=1, classes=4)
    python, compiled = _whatif_both(table, site, list(COMPILED_POLICIES), profile=profile)
    assert python.to_json() == compiled.to_json()
    for name in COMPILED_POLICIES:
        assert python.results[name].jobs.equals(compiled.results[name].jobs), name
        assert python.results[name].skipped.equals(compiled.results[name].skipped), name


def test_capacity_timeline_and_replay_output_are_the_same_either_way():
    """The AAIC preset's capacity timeline, through ``replay()``: the same jobs table."""
    site = resolve_site("aaic")
    table = synth.generate(3000, seed=5, site=site)
    inputs = PlacementInputs(gpu_model=[0] * 20 + [1] * 20, model_speed=[1.0, 1.5],
                             gpu_class=[[k % 3] * 8 for k in range(40)],
                             rack=[k // 10 for k in range(40)],
                             gain=[1.0 + (r % 4) for r in range(table.num_rows)])
    keyed, factor, lower = keyed_factor(inputs, 40, 8, table.num_rows)
    for name in COMPILED_POLICIES:
        for kwargs in ({"placement_inputs": inputs},
                       {"placement_inputs": keyed, "runtime_factor": factor,
                        "min_factor": lower}):
            results = []
            for threshold in (1 << 62, 1):
                calls, spy = _counting()
                with spy, mock.patch.object(engine_gpu, "COMPILED_MIN_JOBS", threshold):
                    results.append(replay(table, site=site, placement=name, seed=7, **kwargs))
                assert all(calls) and len(calls) == (threshold == 1)
            assert results[0].jobs.equals(results[1].jobs), name
            assert results[0].skipped.equals(results[1].skipped), name


def test_what_the_compiled_path_does_not_take_runs_in_python():
    """A user subclass, an uncompiled factor or a factor without keys: the Python path."""
    from swftools.replay.placement import Placement

    class Mine(Placement):
        pass

    site = resolve_site("aaic")
    table = synth.generate(300, seed=2, site=site)
    model = GpuNodes(site)
    work = prepare(table, model)
    keyed, factor, lower = keyed_factor(PlacementInputs(), 40, 8, table.num_rows)
    assert run_gpu(work, model, "easy", Mine(), compiled=True).node_sets is not None
    m, w, chosen, f, b, kernel = _general_inputs(model, work, "lxv", keyed, factor, lower, 0)
    assert run_gpu(w, m, "easy", chosen, f, b, compiled=True).node_sets is not None
    assert run_gpu(w, m, "easy", chosen, f, b, compiled=True,
                   factor_kernel=kernel).node_sets is None
    unkeyed = dataclasses.replace(keyed, factor_by_key=False)
    m, w, chosen, f, b, kernel = _general_inputs(model, work, "lxv", unkeyed, factor, lower, 0)
    assert run_gpu(w, m, "easy", chosen, f, b, compiled=True,
                   factor_kernel=kernel).node_sets is not None


def test_a_bad_factor_is_the_same_usage_error():
    """A factor of 0 (``keyed_kernel`` with a zero scale for odd rows): the same error."""
    site = resolve_site("aaic")
    table = synth.generate(50, seed=2, site=site)
    kernel = FactorKernel(keyed_kernel, kernel_params([1.0, 0.0], [1.0]),
                          np.arange(table.num_rows, dtype=np.int64) % 2)
    inputs = PlacementInputs(factor_by_key=True, factor_kernel=kernel)

    def factor(row, nodes, gpus):
        return row % 2 if nodes is None else float(1 - row % 2)

    messages = []
    for threshold in (1 << 62, 1):
        with mock.patch.object(engine_gpu, "COMPILED_MIN_JOBS", threshold):
            with pytest.raises(UsageError, match="must be positive") as err:
                replay(table, site=site, placement="packed", placement_inputs=inputs,
                       runtime_factor=factor)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


@settings(max_examples=40, deadline=None)
@given(placement_wide_gpu_cases(), st.sampled_from(COMPILED_POLICIES), POLICIES,
       st.sampled_from(["none", "bound", "too-high"]), st.integers(0, 62))
def test_the_combination_bits_change_no_start(case, name, policy, factors, bits):
    """Fewer queue bits for the (size, group, bound) combinations (none at all from 0 on): the
    same schedule as Python; the bits only spare candidates."""
    table, site, inputs = case
    with mock.patch.object(engine_general, "COMPILED_MAX_BITS", bits):
        check_case(table, GpuNodes(site), name, inputs, policy, factors, 0, site.max_nodes,
                   site.gpus_per_node)


def test_the_tables_header_is_the_compiled_one():
    from swftools.replay.placement import _choose, _pal, tables

    assert tables.HEADER == _choose.TABLES_HEADER
    assert tables.PAL_HEADER == _pal.TABLES_HEADER
    assert set(_choose.POLICY_IDS) == set(COMPILED_POLICIES)


def test_round_half_to_even_like_python():
    """Scaled times round half to even as Python's ``round`` of the float product."""
    from swftools.replay._engine_general import scaled

    for t, f in [(1, 0.5), (3, 0.5), (5, 0.5), (7, 1.5), (9, 0.5), (2, 1.25), (10, 0.05),
                 (12345, 1.0000001), (1 << 40, 1.5), (0, 3.0)]:
        assert scaled(t, f) == round(t * f), (t, f)


def _two_jobs() -> dict:
    """``run_general``'s arguments for two 1-GPU jobs at 0 on two 1-GPU nodes, ``packed``."""
    i64 = lambda n: np.zeros(n, dtype=np.int64)  # noqa: E731
    return dict(submit=i64(2), runtime=i64(2), size=i64(2) + 1, estimate=i64(2),
              tree_est=i64(2), nodes_of=i64(2) + 1, per_node=i64(2) + 1, bit=i64(2) + 1,
              bit_shape=i64(64), bit_combo=np.zeros(64, np.uint8),
              bit_lower=np.zeros(64), shape_index=i64(2), distinct=i64(1) + 1,
              fit_masks=np.array([0, 1], np.int64), shape_nodes=i64(1) + 1,
              shape_per_node=i64(1) + 1, g=1, n_nodes=2, easy=True, cap_t=i64(0),
              cap_n=i64(0), nodes_t0=2, pol=0, aux=i64(100), score=np.ones((2, 1)),
              kernel=None, keys=i64(2), mt=np.zeros(625, np.uint32))


def test_inconsistent_arrays_are_refused_not_read_out_of_bounds():
    """The compiled loop reads without bounds checks: ``run_general`` refuses arrays of the
    wrong lengths (a ValueError, not a crash)."""
    from swftools.replay import _factors
    from swftools.replay._engine_general import run_general
    from swftools.replay.placement._choose import POLICY_IDS
    from swftools.replay.placement.tables import pal_tables

    i64 = lambda n: np.zeros(n, dtype=np.int64)  # noqa: E731
    ok = _two_jobs()
    status, start, _, node_list = run_general(**ok)[:4]  # two 1-GPU jobs on two nodes
    assert (status, start.tolist(), node_list.tolist()) == (0, [0, 0], [0, 1])
    for name, bad in [("runtime", i64(1)), ("keys", i64(3)), ("bit_lower", np.zeros(3)),
                      ("fit_masks", i64(1)), ("score", np.ones((1, 1))),
                      ("score", np.ones((3, 1))),
                      ("mt", np.zeros(3, np.uint32)), ("nodes_t0", 3)]:
        with pytest.raises(ValueError, match="inconsistent"):
            run_general(**{**ok, name: bad})
    # a grid per key (two keys, two nodes): a key without its grid is refused
    assert run_general(**{**ok, "score": np.ones((4, 1)), "keys": np.array([0, 1]),
                          "kernel": _factors.FactorCallback()})[0] == 0
    with pytest.raises(ValueError, match="no score grid"):
        run_general(**{**ok, "score": np.ones((4, 1)), "keys": np.array([0, 2])})
    # pm-first's tables (placement/_pal.pyx): checked, and a job class past the classes refused
    paux, pval, _ = pal_tables("pm-first", PlacementInputs().resolved(2, 1), 2, 1, 2)
    pm = {**ok, "pol": POLICY_IDS["pm-first"], "paux": paux, "pval": pval}
    assert run_general(**pm)[1].tolist() == [0, 0]
    bad_class = paux.copy()
    bad_class[-1] = 1
    for bad in [{"paux": None}, {"paux": bad_class}, {"pval": pval[:1]}]:
        with pytest.raises(ValueError, match="inconsistent"):
            run_general(**{**pm, **bad})


def test_pal_tables_a_choice_cannot_use_are_refused():
    """``pal``'s compiled choice finds a node only if a cell admits every value, each node's
    GPUs are ranked by value and ``POS`` inverts ``WORST``: tables that break one of these
    (before, each ran on, reading before the arrays with node -1) are refused."""
    from swftools.replay.placement._pal import check_tables
    from swftools.replay.placement.tables import pal_tables

    inputs = PlacementInputs(class_score=[[[1.0, 2.0], [1.0, 3.0]], [[3.0, 1.0], [2.0, 2.0]]],
                             job_class=[0, 1, 1])
    paux, pval, _ = pal_tables("pal", inputs.resolved(2, 2), 2, 2, 3)
    assert check_tables(paux, pval, 2, 2, 3)
    rank, worst, pos, cells = paux[4:8]  # _pal.pxd's offsets
    first = slice(paux[cells], paux[cells + 1])  # class 0's cells: its two values, ascending
    low, high = pval[first]
    assert sorted(set(pval[:4])) == [low, high] and low < high

    def refused(table, values):
        return not check_tables(table, values, 2, 2, 3)

    for cell_values in ([low, float("nan")], [low, (low + high) / 2], [high, low]):
        values = pval.copy()
        values[first] = cell_values
        assert refused(paux, values), cell_values
    row = rank + (1 * 2 + 1) * 2  # class 1, node 1
    assert paux[rank:rank + 2].tolist() == [1, 0]  # class 0, node 0: GPU 1 is the lower value
    for at, value in [(row + 1, paux[row]),  # a GPU twice
                      (rank, 0), (pos + 1, paux[pos])]:  # higher value first; two nodes first
        table = paux.copy()
        table[at] = value
        assert refused(table, pval), at
    table = paux.copy()
    table[worst:worst + 2] = table[worst:worst + 2][::-1]
    assert refused(table, pval)  # WORST reversed without POS


@settings(max_examples=examples(80), deadline=None)
@given(priority_wc_cases(), POLICIES, st.sampled_from(["none", "factor", "bound", "per-job"]))
def test_priority_wc_compiled_matches_python(case, policy, factors):
    """``priority-wc`` with a gain on every job: the waiting jobs of higher gain (highest first,
    then queue order) claim the fastest nodes that fit them, and the job placed takes the
    fastest unclaimed ones (else the slowest it fits on). The compiled twin keeps the waiting
    jobs by gain in C: Python's schedule job for job, FCFS and EASY, with and without a keyed
    factor kernel, on GPU nodes and flat pools."""
    table, where, inputs = case
    if isinstance(where, int):
        check_case(table, FlatPool(where), "priority-wc", inputs, policy, factors, 0, where, 1)
    else:
        check_case(table, GpuNodes(where), "priority-wc", inputs, policy, factors, 0,
                   where.max_nodes, where.gpus_per_node)


def _priority_wc_nodes(rows, gains, nodes, policy="easy", gpu_model=(0, 1)):
    """Each job's node ids under ``priority-wc`` on the compiled engine, and in Python; the
    site: ``nodes`` nodes of ``gpus`` (rows: (job id, submit, run, nodes, GPUs per node,
    request)), the last GPU model (speed 1.5) faster than the first (1.0)."""
    from .test_replay import gpu_site, gpu_table

    site = gpu_site(nodes=len(gpu_model), gpus=nodes)
    inputs = PlacementInputs(gpu_model=list(gpu_model), model_speed=[1.0, 1.5], gain=gains)
    out = []
    for threshold in (1, 1 << 62):
        calls, spy = _counting()
        with spy, mock.patch.object(engine_gpu, "COMPILED_MIN_JOBS", threshold):
            run = replay(gpu_table(rows), site=site, policy=policy, placement="priority-wc",
                         placement_inputs=inputs)
        assert calls == ([True] if threshold == 1 else [])
        out.append(run.jobs.column("node_ids").to_pylist())
    return out


@pytest.mark.parametrize("policy", ["easy", "fcfs"])
def test_priority_wc_compiled_counts_the_instants_arrivals_as_waiting(policy):
    """A P100 node (0) and a V100 node (1) of one GPU, two one-GPU jobs submitted together, the
    lower gain first in the queue: when it is placed the other is waiting and claims the V100
    (``test_replay_placement_priority``'s case), compiled too; one arriving later is not
    waiting yet."""
    for later, nodes in ((0, ["0", "1"]), (10, ["1", "0"])):
        rows = [(1, 0, 150, 1, 1, 150), (2, later, 150, 1, 1, 150)]
        assert _priority_wc_nodes(rows, [1.24, 1.51], 1, policy) == [nodes, nodes]


def test_priority_wc_shares_no_choice_between_jobs_of_one_size():
    """``priority-wc``'s choice follows the queue (its ``choice_group`` is None), so its queue
    bits are its sizes' only: two one-GPU jobs of different gains are not one combination.
    Nodes 0-1 P100, node 2 V100, 2 GPUs each. At 60 the head (job 5, a whole node) waits for
    the V100 node, free at 100; job 6 (gain 3, long) is chosen the V100's free GPU, which the
    reservation refuses; job 7 (gain 1, short) sees job 6 waiting, claiming that GPU, and
    backfills on node 1 (sharing job 6's refused choice, it would take the V100)."""
    rows = [(1, 0, 100, 1, 1, 100), (2, 0, 50, 1, 1, 50), (3, 0, 10**4, 1, 2, 10**4),
            (4, 0, 10**4, 1, 1, 10**4), (5, 60, 100, 1, 2, 100), (6, 60, 10**4, 1, 1, 10**4),
            (7, 60, 10, 1, 1, 10)]
    nodes = ["2", "2", "0", "1", "2", "1", "1"]
    assert _priority_wc_nodes(rows, [1, 1, 1, 1, 1, 3, 1], 2,
                              gpu_model=(0, 0, 1)) == [nodes, nodes]


def test_priority_wc_arrays_are_checked():
    """``priority-wc``'s own arrays (gain ranks per job, the nodes fastest first) are checked
    like the others; two jobs of one GPU on two equal nodes: job 1, of higher gain, waits when
    job 0 is placed and claims node 0, so job 0 takes node 1."""
    from swftools.replay._engine_general import run_general
    from swftools.replay.placement._choose import POLICY_IDS
    from swftools.replay.placement.tables import placement_tables, waiting_tables

    machine = PlacementInputs().resolved(2, 1)
    aux, score, _ = placement_tables("priority-wc", machine, 2, 1, [1.0, 2.0], 2)
    rank, order = waiting_tables(machine, 2, [1.0, 2.0], 2)
    assert (rank.tolist(), order.tolist()) == ([1, 0], [0, 1])
    ok = {**_two_jobs(), "pol": POLICY_IDS["priority-wc"], "aux": aux, "score": score,
          "gain_rank": rank, "node_order": order}
    status, start, _, node_list = run_general(**ok)[:4]
    assert (status, start.tolist(), node_list.tolist()) == (0, [0, 0], [1, 0])
    for name, bad in [("gain_rank", None), ("node_order", None), ("gain_rank", [0]),
                      ("gain_rank", [0, -1]), ("gain_rank", [0, 2]), ("node_order", [1, 1]),
                      ("node_order", [0, 2]), ("node_order", [0])]:
        with pytest.raises(ValueError, match="inconsistent"):
            run_general(**{**ok, name: None if bad is None else np.array(bad, np.int64)})
    assert waiting_tables(machine, 2, [1.0, float("nan")], 2) is None  # Python's own order


def test_priority_wc_compiled_ranks_past_one_word():
    """42 distinct gains (ranks over two 32-rank words): job 1 (the lowest gain, rank 41) is
    placed while job 2 (the highest, rank 0) waits and claims the V100; the 40 later jobs run
    one at a time, each on the V100."""
    rows = [(1, 0, 150, 1, 1, 150), (2, 0, 150, 1, 1, 150)]
    rows += [(3 + i, 1000 + 10 * i, 5, 1, 1, 5) for i in range(40)]
    gains = [1.0, 100.0] + [2.0 + i for i in range(40)]
    nodes = ["0", "1"] + ["1"] * 40
    assert _priority_wc_nodes(rows, gains, 1) == [nodes, nodes]


def test_integer_gains_rank_as_numbers_in_both_twins():
    """Gains handed to ``run_gpu``'s placement as unsigned integers (a numpy ``uint8`` array):
    ``priority-wc`` ranks them as numbers, compiled as in Python (negated they must not wrap).
    A P100 node (0) and a V100 node (1) of one GPU, two one-GPU jobs at 0, gains 0 and 1: job 1,
    of the higher gain, waits when job 0 is placed and claims the V100, so job 0 takes the P100."""
    from swftools.replay.placement import make_placement

    from .test_replay import gpu_site, gpu_table

    model = GpuNodes(gpu_site(nodes=2, gpus=1))
    work = prepare(gpu_table([(1, 0, 150, 1, 1, 150), (2, 0, 150, 1, 1, 150)]), model)
    machine = PlacementInputs(gpu_model=[0, 1], model_speed=[1.0, 1.5]).resolved(2, 1)
    for compiled in (False, True):
        placement = make_placement("priority-wc", machine, np.array([0, 1], dtype=np.uint8))
        run = run_gpu(work, model, "easy", placement, compiled=compiled)
        assert (run.node_sets is None) == compiled
        assert run.node_ids().to_pylist() == ["0", "1"], compiled


def test_placement_tables_decline_what_the_compiled_placements_cannot_hold():
    """None (the Python path) for a policy without a compiled twin, a machine not of the
    replay's size, GPU model indices outside 0..62 (bits of an int64), ``priority`` gains not
    one per job, node-group or class-threshold masks past ``MAX_WORDS`` words; the limits
    themselves are taken."""
    from swftools.replay.placement import tables

    def t(name, inputs, n=2, g=2, gains=None, jobs=2):
        return tables.placement_tables(name, inputs.resolved(n, g), n, g, gains, jobs)

    plain = PlacementInputs()
    assert t("packed", plain) is not None
    assert t("mine", plain) is None
    machine = plain.resolved(2, 2)
    assert tables.placement_tables("packed", machine, 3, 2, None, 1) is None
    assert tables.placement_tables("packed", machine, 2, 1, None, 1) is None
    # a Machine made by hand whose lists are not of its size
    from swftools.replay.placement.base import Machine

    ok = dict(n_nodes=2, g=2, rack=[0, 0], model=[0, 0], score=[[1.0, 1.0]] * 2,
              cls=[[0, 0]] * 2, model_speed=[1.0])
    assert tables.placement_tables("packed", Machine(**ok), 2, 2, None, 1) is not None
    for bad in ({"n_nodes": 3}, {"rack": [0]}, {"model": [0]}, {"score": [[1.0, 1.0], [1.0]]},
                {"cls": [[0, 0], [0]]}):
        assert tables.placement_tables("packed", Machine(**{**ok, **bad}), 2, 2, None,
                                       1) is None, bad
    assert t("packed", PlacementInputs(gpu_model=[0, 62], model_speed=[1.0] * 63)) is not None
    assert t("packed", PlacementInputs(gpu_model=[0, 63], model_speed=[1.0] * 64)) is None
    assert t("packed", PlacementInputs(gpu_model=[-1, 0])) is None
    assert t("priority", plain, gains=[1.0, 2.0, 3.0]) is None
    assert t("priority", plain, gains=[1.0, 2.0])[2].tolist() == [False, True]
    assert t("priority", plain, gains=[])[2].tolist() == [False, False]
    # even: four models on 1-GPU nodes, four group masks of one or two words (34 nodes); lxv:
    # two class thresholds of (g + 2) masks each
    even = PlacementInputs(gpu_model=[k % 4 for k in range(34)], model_speed=[1.0] * 4)
    lxv = PlacementInputs(gpu_class=[[k % 2] for k in range(34)])
    for name, inputs, n, words in (("even", even, 4, 4), ("even", even, 34, 8),
                                   ("lxv", lxv, 2, 6), ("lxv", lxv, 34, 12)):
        with mock.patch.object(tables, "MAX_WORDS", words):
            assert t(name, inputs, n=n, g=1) is not None, name
        with mock.patch.object(tables, "MAX_WORDS", words - 1):
            assert t(name, inputs, n=n, g=1) is None, name
