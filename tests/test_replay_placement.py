"""Placement plug-ins and run-time factors on the replay engine (issue 14, the engine side).

The textbook reference of ``test_replay_reference`` is extended to placements and factors that
depend on the placement: the job is placed by the same plug-in on a state rebuilt from scratch,
and its run time and estimate are scaled by the factor of that placement before EASY looks at
them. Every deterministic policy must match it job for job (so EASY never delays the head's
reservation when run times depend on placement); ``random`` is checked by invariants and seeds.
"""

from __future__ import annotations

import dataclasses

import jsonschema
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import table as jt
from swftools.errors import UsageError
from swftools.replay import PLACEMENTS, PlacementInputs, replay
from swftools.replay.model import GpuNodes, GpuState
from swftools.replay.placement import make_placement
from swftools.replay.result import summary_schema
from swftools.replay.workload import prepare

from .conftest import SAMPLES, trace_path
from .strategies import examples, placement_flat_cases, placement_gpu_cases
from .test_replay_reference import Job, Nodes, Placement, simulate

DETERMINISTIC = tuple(p for p in PLACEMENTS if p != "random")


def make_factor(inputs: PlacementInputs, n_nodes: int, g: int):
    """A placement-dependent factor: 1 / speed of the slowest GPU held, +10 % per extra rack."""
    m = inputs.resolved(n_nodes, g)

    def factor(row, nodes, gpus):
        slowest = min(m.model_speed[m.model[k]] * m.score[k][i]
                      for k, held in zip(nodes, gpus) for i in held)
        racks = len({m.rack[k] for k in nodes})
        return (1.0 / slowest) * (1 + 0.1 * (racks - 1))

    lower = 1.0 / max(m.model_speed[m.model[k]] * s for k in range(n_nodes) for s in m.score[k])
    return factor, lower


# --- the reference, with a placement plug-in and factors --------------------------------------
def as_state(free, managed, g):
    """A ``GpuState`` rebuilt from the reference's snapshot (free[node][gpu], managed count)."""
    st_ = GpuState.__new__(GpuState)
    st_.g, st_.n_nodes, st_.full_gpus, st_.best_fit = g, len(free), (1 << g) - 1, False
    st_.free = [sum(row) for row in free]
    st_.gpu_free = [sum(1 << i for i in range(g) if row[i]) for row in free]
    st_.managed = (1 << managed) - 1
    st_.exact = [0] * (g + 1)
    for k in range(managed):
        st_.exact[st_.free[k]] |= 1 << k
    return st_


class PlacedNodes(Nodes):
    """GPU nodes whose placement is a plug-in and whose jobs run ``round(run x factor)``."""

    def __init__(self, g, timeline, placement, factor, queue_index, row_of):
        super().__init__(g, timeline)
        self.placement, self.factor = placement, factor
        self.queue_index, self.row_of = queue_index, row_of
        self.queue = []  # simulate's waiting queue (submitted, not started)

    def take_scaled(self, job, state, now):
        free, managed = state
        st_ = as_state(free, managed, self.g)
        if getattr(self.placement, "watches_queue", False):
            self.placement.set_waiting(self.queue_index[q.job_id] for q in self.queue)
        node_set, gpus = self.placement.choose(st_, self.queue_index[job.job_id], job.nodes,
                                               job.per_node)
        nodes = [k for k in range(self.n) if node_set >> k & 1]
        held = [i for i in range(self.g) if gpus >> i & 1]
        assert len(nodes) == job.nodes and len(held) == job.per_node
        for k in nodes:
            for i in held:
                assert free[k][i]
                free[k][i] = False
        f = 1.0 if self.factor is None else self.factor(self.row_of[job.job_id], nodes,
                                                        [held] * len(nodes))
        scaled = dataclasses.replace(job, run=round(job.run * f), est=round(job.est * f))
        return scaled, Placement(now, tuple(nodes), tuple(held))


def reference_placed(table, site, name, inputs, factor, policy, seed=0):
    """Job id -> (start, nodes, gpus, replayed run) by the reference; ids of dropped jobs."""
    model = GpuNodes(site)
    work = prepare(table, model)
    queue_index = {int(i): q for q, i in enumerate(work.job_id)}
    row_of = {int(i): int(r) for i, r in zip(work.job_id, work.row)}
    gains = None
    if inputs.gain is not None:
        gains = [float(inputs.gain[r]) for r in work.row]
    placement = make_placement(name, inputs.resolved(site.max_nodes, site.gpus_per_node),
                               gains, seed)
    placement.start(GpuState(model, 0), None if factor is None else
                    (lambda j, n, g: factor(int(work.row[j]), n, g)))
    placement.shapes = (work.nodes.tolist(), work.gpus_per_node.tolist())
    jobs = [Job(int(work.job_id[q]), int(work.submit[q]), int(work.runtime[q]),
                int(work.estimate[q]), int(work.nodes[q]), int(work.gpus_per_node[q]))
            for q in range(len(work))]
    machine = PlacedNodes(site.gpus_per_node, list(zip(site.capacity_since, site.capacity_nodes)),
                          placement, factor, queue_index, row_of)
    return simulate(jobs, machine, policy,
                    record=lambda job, p: (p.start, p.node_ids, p.gpu_ids, job.run))


def engine_view(result):
    out = {}
    for r in result.jobs.to_pylist():
        nodes = tuple(int(x) for x in r["node_ids"].split(",")) if r["node_ids"] else ()
        gpus = tuple(int(x) for x in r["gpu_ids"].split(",")) if r["gpu_ids"] else ()
        out[r["job_id"]] = (r["start_time"], nodes, gpus, r["run_s"])
    return out


# --- invariants ------------------------------------------------------------------------------
def check_invariants(result, g, n_nodes, policy, flat=False):
    rows = result.jobs.to_pylist()
    events = []
    for r in rows:
        assert r["start_time"] >= r["submit_time"]
        assert r["end_time"] - r["start_time"] == r["run_s"] >= 0
        nodes = [int(x) for x in r["node_ids"].split(",")]
        assert len(set(nodes)) == len(nodes) and all(0 <= k < n_nodes for k in nodes)
        gpus = [0] if flat else [int(x) for x in r["gpu_ids"].split(",")]
        if flat:
            assert len(nodes) == r["size"]
        else:
            assert len(nodes) == r["nodes"] and len(nodes) * len(gpus) == r["size"]
        events.append((r["start_time"], r["end_time"], nodes, gpus))
    for t in {e[0] for e in events}:
        held: dict[int, list[int]] = {}
        for s, e, nodes, gpus in events:
            if s <= t < e:
                for k in nodes:
                    held.setdefault(k, []).extend(gpus)
        for gs in held.values():
            assert len(gs) == len(set(gs)) <= g
    if policy == "fcfs":  # the jobs table is in queue order: starts never go backwards
        starts = [r["start_time"] for r in rows]
        assert starts == sorted(starts)


@given(placement_gpu_cases(), st.sampled_from(PLACEMENTS), st.sampled_from(["easy", "fcfs"]),
       st.booleans(), st.integers(0, 3))
@settings(max_examples=examples(40))
def test_every_placement_keeps_the_schedule_invariants(case, name, policy, use_factor, seed):
    table, site, inputs = case
    factor, lower = make_factor(inputs, site.max_nodes, site.gpus_per_node)
    r = replay(table, site=site, policy=policy, placement=name, placement_inputs=inputs,
               runtime_factor=factor if use_factor else None, seed=seed)
    ids = sorted(r.jobs.column("job_id").to_pylist() + r.skipped.column("job_id").to_pylist())
    assert ids == sorted(table.column("job_id").to_pylist())
    check_invariants(r, site.gpus_per_node, site.max_nodes, policy)
    assert r.summary["peak_busy"] <= site.max_nodes * site.gpus_per_node
    jsonschema.validate(r.summary, summary_schema())


@given(placement_gpu_cases(), st.sampled_from(DETERMINISTIC), st.sampled_from(["easy", "fcfs"]),
       st.sampled_from(["none", "factor", "factor+bound"]))
@settings(max_examples=examples(70))
def test_deterministic_placements_match_the_reference(case, name, policy, factors):
    """Job for job against the textbook reference with the same plug-in and placement-dependent
    factors: starts, nodes, GPUs and replayed run times; EASY keeps the head's reservation."""
    table, site, inputs = case
    factor, lower = make_factor(inputs, site.max_nodes, site.gpus_per_node)
    use = None if factors == "none" else factor
    r = replay(table, site=site, policy=policy, placement=name, placement_inputs=inputs,
               runtime_factor=use, min_factor=lower if factors == "factor+bound" else None)
    done, dropped = reference_placed(table, site, name, inputs, use, policy)
    assert engine_view(r) == done
    skipped = set(r.skipped.column("job_id").to_pylist())
    assert set(dropped) <= skipped


@given(placement_gpu_cases(), st.sampled_from(["easy", "fcfs"]),
       st.sampled_from(["first-fit", "best-fit"]))
@settings(max_examples=80)
def test_factor_one_with_packed_reproduces_the_plain_replay(case, policy, allocation):
    table, site, inputs = case
    plain = replay(table, site=site, policy=policy, allocation=allocation)
    name = "packed" if allocation == "first-fit" else "best-fit"
    for kwargs in ({"placement": name}, {"runtime_factor": lambda row, n, g: 1.0},
                   {"placement": name, "runtime_factor": lambda row, n, g: 1.0, "min_factor": 1.0}):
        r = replay(table, site=site, policy=policy, allocation=allocation, **kwargs)
        assert r.jobs.select(plain.jobs.column_names).equals(plain.jobs)
        assert r.skipped.equals(plain.skipped)


@given(placement_flat_cases(), st.sampled_from(PLACEMENTS), st.sampled_from(["easy", "fcfs"]),
       st.booleans())
@settings(max_examples=examples(40))
def test_flat_mode_placements(case, name, policy, use_factor):
    """A flat pool runs on the general path as one-GPU nodes: the invariants hold per processor
    and ``packed`` with factor 1 gives ``engine_flat``'s schedule."""
    table, procs, inputs = case
    factor, _ = make_factor(inputs, procs, 1)
    r = replay(table, procs=procs, policy=policy, placement=name, placement_inputs=inputs,
               runtime_factor=factor if use_factor else None)
    check_invariants(r, 1, procs, policy, flat=True)
    assert r.summary["unit"] == "processors" and r.summary["peak_busy"] <= procs
    if name == "packed":
        plain = replay(table, procs=procs, policy=policy)
        one = replay(table, procs=procs, policy=policy, placement="packed",
                     runtime_factor=lambda row, n, g: 1.0)
        keep = [c for c in plain.jobs.column_names if c != "node_ids"]
        assert one.jobs.select(keep).equals(plain.jobs.select(keep))
        assert one.skipped.equals(plain.skipped)


@given(placement_gpu_cases(), st.sampled_from(PLACEMENTS), st.sampled_from(["easy", "fcfs"]))
@settings(max_examples=60)
def test_factor_two_doubles_every_run_time(case, name, policy):
    table, site, inputs = case
    r = replay(table, site=site, policy=policy, placement=name, placement_inputs=inputs,
               runtime_factor=lambda row, n, g: 2.0, min_factor=2.0)
    run = r.jobs.column("run_s").to_numpy()
    assert (run == 2 * r.jobs.column("recorded_run_s").to_numpy()).all()
    assert (r.jobs.column("estimate_s").to_numpy()
            == 2 * r.jobs.column("recorded_estimate_s").to_numpy()).all()
    check_invariants(r, site.gpus_per_node, site.max_nodes, policy)


@given(placement_gpu_cases(), st.integers(0, 10**6))
@settings(max_examples=40)
def test_random_is_deterministic_by_seed(case, seed):
    table, site, inputs = case
    a = replay(table, site=site, placement="random", placement_inputs=inputs, seed=seed)
    b = replay(table, site=site, placement="random", placement_inputs=inputs, seed=seed)
    assert a.jobs.equals(b.jobs)


KEYED_SCALE = (1.0, 0.7, 1.3)  # per key (row % 3)


def make_keyed_factor(inputs: PlacementInputs, n_nodes: int, g: int, n_rows: int):
    """A factor that depends on the job only through a key (row % 3) and on the placement only
    through its signature (models held, lowest score, racks): the keyed-factor protocol."""
    m = inputs.resolved(n_nodes, g)
    scale = KEYED_SCALE

    def factor(row, nodes, gpus):
        if nodes is None:  # the key query
            return row % 3
        slowest_model = min(m.model_speed[m.model[k]] for k in nodes)
        lowest = min(m.score[k][i] for k, held in zip(nodes, gpus) for i in held)
        racks = len({m.rack[k] for k in nodes})
        return scale[row % 3] / (slowest_model * lowest) * (1 + 0.1 * (racks - 1))

    lower = min(scale) / max(m.model_speed[m.model[k]] * s for k in range(n_nodes)
                             for s in m.score[k])
    return factor, lower


@given(placement_gpu_cases(), st.sampled_from(PLACEMENTS), st.sampled_from(["easy", "fcfs"]),
       st.sampled_from(["none", "bound", "too-high"]), st.integers(0, 3))
@settings(max_examples=examples(50))
def test_keyed_factors_give_the_same_schedule(case, name, policy, bound, seed):
    """Keyed factors (``factor_by_key``: cached by job key and placement signature, choices
    cached per key, the engine's choice groups) give the unkeyed callback's schedule job for
    job, also when ``min_factor`` is above some real factors (the groups must not rely on it)."""
    table, site, inputs = case
    factor, lower = make_keyed_factor(inputs, site.max_nodes, site.gpus_per_node,
                                      table.num_rows)
    low = {"none": None, "bound": lower, "too-high": 1.2}[bound]

    def plain(row, nodes, gpus):
        return factor(row, nodes, gpus)

    keyed = dataclasses.replace(inputs, factor_by_key=True)
    a = replay(table, site=site, policy=policy, placement=name, placement_inputs=keyed,
               runtime_factor=factor, min_factor=low, seed=seed)
    b = replay(table, site=site, policy=policy, placement=name, placement_inputs=inputs,
               runtime_factor=plain, min_factor=low, seed=seed)
    assert a.jobs.equals(b.jobs)
    assert a.skipped.equals(b.skipped)


def test_grouped_engine_matches_the_ungrouped_one():
    """The engine's choice groups (skip the rest of a refused (shape, group)) change nothing:
    the same replay with groups switched off."""
    from swftools.formats import read
    from swftools.replay import placement as P

    table = read(SAMPLES / "aaic-sample.csv.gz")
    for name in ("packed", "priority", "lxv"):
        inputs = PlacementInputs(gpu_class=[[k % 3] * 8 for k in range(40)],
                                 gpu_model=[0] * 20 + [1] * 20, model_speed=[1.0, 1.5],
                                 gain=[1.0 + (r % 4) for r in range(table.num_rows)],
                                 factor_by_key=True)
        factor, _ = make_keyed_factor(inputs, 40, 8, table.num_rows)
        runs = []
        for grouped in (True, False):
            cls = P.POLICY_CLASSES[name]
            saved = cls.choice_group
            if not grouped:
                cls.choice_group = lambda self: None
            try:
                runs.append(replay(table, site="aaic", placement=name, placement_inputs=inputs,
                                   runtime_factor=factor, min_factor=0.9))
            finally:
                cls.choice_group = saved
        assert runs[0].jobs.equals(runs[1].jobs)


# --- policies by hand ------------------------------------------------------------------------
def _site(nodes, gpus):
    from .test_replay import gpu_site

    return gpu_site(nodes=nodes, gpus=gpus)


def _one_gpu_jobs(n, run=100):
    from .test_replay import gpu_table

    return gpu_table([(i + 1, 0, run, 1, 1, run) for i in range(n)])


def _nodes_of(result):
    return result.jobs.column("node_ids").to_pylist()


def test_priority_gives_fast_gpus_to_the_jobs_that_gain():
    # nodes 0-1 slow (model 0), nodes 2-3 fast (model 1); job 2 and 4 gain most
    inputs = PlacementInputs(gpu_model=[0, 0, 1, 1], model_speed=[1.0, 2.0],
                             gain=[1.0, 2.0, 1.0, 2.0])
    r = replay(_one_gpu_jobs(4), site=_site(4, 1), placement="priority", placement_inputs=inputs)
    assert _nodes_of(r) == ["0", "2", "1", "3"]  # within a tier: lowest node first
    even = replay(_one_gpu_jobs(2), site=_site(4, 1), placement="even", placement_inputs=inputs)
    assert _nodes_of(even) == ["0", "2"]  # one job per GPU model


def test_variability_first_and_lxv_take_the_best_class():
    inputs = PlacementInputs(gpu_class=[[2], [1], [0], [1]], rack=[0, 0, 1, 1])
    r = replay(_one_gpu_jobs(3), site=_site(4, 1), placement="variability-first",
               placement_inputs=inputs)
    assert _nodes_of(r) == ["2", "1", "3"]
    speed = {0: 2.0, 1: 1.0, 2: 0.5}

    def factor(row, nodes, gpus):
        return max(1.0 / speed[inputs.gpu_class[k][0]] for k in nodes)

    lxv = replay(_one_gpu_jobs(2), site=_site(4, 1), placement="lxv", placement_inputs=inputs,
                 runtime_factor=factor)
    assert _nodes_of(lxv) == ["2", "1"]
    assert lxv.jobs.column("run_s").to_pylist() == [50, 100]


def test_locality_first_keeps_a_multi_node_job_in_one_rack():
    from .test_replay import gpu_table

    inputs = PlacementInputs(rack=[0, 1, 1, 2])
    table = gpu_table([(1, 0, 100, 2, 1, 100)])
    packed = replay(table, site=_site(4, 1), placement="packed", placement_inputs=inputs)
    local = replay(table, site=_site(4, 1), placement="locality-first", placement_inputs=inputs)
    assert _nodes_of(packed) == ["0,1"] and _nodes_of(local) == ["1,2"]


def test_bad_placement_inputs_are_usage_errors():
    with pytest.raises(UsageError, match="unknown placement"):
        replay(_one_gpu_jobs(1), site=_site(2, 1), placement="worst")
    with pytest.raises(UsageError, match="rack: 1 entries for 2 nodes"):
        replay(_one_gpu_jobs(1), site=_site(2, 1), placement="lxv",
               placement_inputs=PlacementInputs(rack=[0]))
    with pytest.raises(UsageError, match="must be positive"):
        replay(_one_gpu_jobs(1), site=_site(2, 1), runtime_factor=lambda r, n, g: 0.0)


def test_empty_table_with_placement():
    r = replay(jt.empty(), procs=4, placement="lxv", runtime_factor=lambda r, n, g: 1.0)
    assert r.jobs.num_rows == 0


# --- the bundled sample and a real trace -----------------------------------------------------
def _same_as_plain(table, **kw):
    plain = replay(table, **kw)
    scaled = replay(table, placement="packed", runtime_factor=lambda r, n, g: 1.0,
                    min_factor=1.0, **kw)
    assert scaled.jobs.select(plain.jobs.column_names).equals(plain.jobs)
    assert (scaled.jobs.column("recorded_run_s").to_numpy()
            == plain.jobs.column("run_s").to_numpy()).all()
    assert scaled.skipped.equals(plain.skipped)
    return plain


def test_factor_one_packed_reproduces_the_bundled_sample():
    from swftools.formats import read

    table = read(SAMPLES / "aaic-sample.csv.gz")
    for policy in ("easy", "fcfs"):
        _same_as_plain(table, site="aaic", policy=policy)


@pytest.mark.slow
def test_factor_one_packed_reproduces_a_real_swf_trace_in_flat_mode():
    from swftools.formats import swf

    table = swf.read(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"))
    plain = replay(table, policy="easy")
    scaled = replay(table, policy="easy", placement="packed", runtime_factor=lambda r, n, g: 1.0,
                    min_factor=1.0)
    keep = [c for c in plain.jobs.column_names if c != "node_ids"]
    assert scaled.jobs.select(keep).equals(plain.jobs.select(keep))
    assert scaled.skipped.equals(plain.skipped)
    assert np.all(scaled.jobs.column("recorded_run_s").to_numpy()
                  == plain.jobs.column("run_s").to_numpy())


@given(st.integers(0, 2**2000),
       st.binary(min_size=2001, max_size=2001).map(lambda b: [x & 3 for x in b]),
       st.integers(0, 3))
@settings(max_examples=60)
def test_wide_bit_sets_match_the_bit_walk(mask, free, at_least):
    """Bit sets of more than 256 nodes (flat pools as one-GPU nodes) take a numpy path. (The
    2,001 free counts, 0 to 3, are drawn as bytes: a list of 2,001 integers took hypothesis
    most of this test's time to draw.)"""
    from swftools.replay.model import bits, nodes_with

    naive = [k for k in range(mask.bit_length()) if mask >> k & 1]
    assert bits(mask) == naive
    assert nodes_with(mask, free, at_least) == sum(1 << k for k in naive if free[k] >= at_least)


@given(placement_flat_cases(max_jobs=30), st.sampled_from(["easy", "easy", "fcfs"]),
       st.sampled_from(["packed", "packed", "packed", "variability-first", "lxv"]))
@settings(max_examples=examples(50))
def test_wide_flat_pools_take_the_bulk_path(case, policy, name):
    """Pools of more than 256 processors (bulk whole-node updates): ``packed`` with factor 1.0
    still gives ``engine_flat``'s schedule, and every policy keeps the invariants."""
    table, procs, _ = case
    wide = 40
    table = table.set_column(table.schema.get_field_index("gpus"), "gpus",
                             pa.compute.multiply(table.column("gpus"), wide))
    table = table.set_column(table.schema.get_field_index("requested_procs"), "requested_procs",
                             pa.compute.multiply(table.column("requested_procs"), wide))
    procs *= wide
    classes = [[k % 3] for k in range(procs)]
    r = replay(table, procs=procs, policy=policy, placement=name,
               placement_inputs=PlacementInputs(gpu_class=classes))
    check_invariants(r, 1, procs, policy, flat=True)
    if name == "packed":
        plain = replay(table, procs=procs, policy=policy)
        keep = [c for c in plain.jobs.column_names if c != "node_ids"]
        assert r.jobs.select(keep).equals(plain.jobs.select(keep))
