"""swftools.replay's entry point (``replay/__init__.py``): the resource model's resolution, the
general path's inputs mapped from table rows to queue order (gains, classes, factors, bounds,
moldable shapes), its output columns and summary, and the skipped table; each case worked by
hand from the module docstring."""

from __future__ import annotations

import numpy as np
import pytest

import swftools.replay
from swftools import table as jt
from swftools.errors import UsageError
from swftools.replay import PlacementInputs, replay, resource_model
from swftools.replay.engine_gpu import COMPILED_MIN_JOBS
from swftools.replay.factors import FactorKernel
from swftools.replay.model import FlatPool
from swftools.replay.result import JOBS_SCHEMA, SCALED_JOBS_SCHEMA

from .replay_support import Watching
from .test_replay import gpu_site, gpu_table
from .test_replay_reference import flat_table, starts


def column(result, name):
    return dict(zip(result.jobs.column("job_id").to_pylist(),
                    result.jobs.column(name).to_pylist()))


def skipped(result):
    return list(zip(result.skipped.column("job_id").to_pylist(),
                    result.skipped.column("reason").to_pylist()))


# --- the resource model ----------------------------------------------------------------------
def test_resource_model_messages_and_boundaries():
    plain = flat_table([(1, 0, 1, 1, 1)])
    with pytest.raises(UsageError) as both:
        resource_model(plain, site="aaic", procs=4)
    assert str(both.value) == ("give either a site (GPU node model) or a processor count "
                               "(flat pool), not both")
    with pytest.raises(UsageError) as zero:
        resource_model(plain, procs=0)
    assert str(zero.value) == "--procs must be a positive processor count, not 0"
    assert resource_model(plain, procs=1) == FlatPool(1)  # one processor is a pool
    with pytest.raises(UsageError) as neither:
        resource_model(plain)
    assert str(neither.value) == ("the trace declares neither MaxProcs nor MaxNodes in its SWF "
                                  "header; give --procs N (flat pool) or --site (GPU nodes)")
    # a declared MaxProcs of 0 is no capacity: MaxNodes is used; 1 is a capacity
    zero_procs = jt.with_metadata(plain, {"swf_header": [["MaxProcs", "0"], ["MaxNodes", "16"]]})
    assert resource_model(zero_procs) == FlatPool(16)
    one = jt.with_metadata(plain, {"swf_header": [["MaxProcs", "1"], ["MaxNodes", "16"]]})
    assert resource_model(one) == FlatPool(1)
    aaic = jt.with_metadata(plain, {"site": "aaic"})
    assert resource_model(aaic, allocation="best-fit").allocation == "best-fit"
    assert resource_model(aaic).allocation == "first-fit"  # the default


def test_a_whole_float_processor_count_is_a_count():
    r = replay(flat_table([(1, 0, 10, 2, 10)]), procs=4.0)
    assert r.summary["model"] == "flat pool of 4 processors"
    assert r.summary["capacity"] == 4 and isinstance(r.summary["capacity"], int)


def test_replay_argument_messages():
    plain = flat_table([(1, 0, 1, 1, 1)])
    with pytest.raises(UsageError) as policy:
        replay(plain, procs=4, policy="sjf")
    assert str(policy.value) == "unknown policy 'sjf' (choose from fcfs, easy)"
    with pytest.raises(UsageError) as allocation:
        replay(plain, procs=4, allocation="worst-fit")
    assert str(allocation.value) == ("unknown allocation 'worst-fit' (choose from first-fit, "
                                     "best-fit)")
    with pytest.raises(UsageError) as mold:
        replay(gpu_table([(1, 0, 10, 1, 1, 10)]), site=gpu_site(1, 2), shape="gpus",
               mold=lambda row, bound: None)
    assert str(mold.value) == ("moldable policies choose each job's shape themselves: they "
                               "cannot be combined with shape='gpus'")


def test_the_package_is_callable_as_replay():
    """``swftools.replay(table, ...)`` is ``replay(table, ...)``: two 3-processor jobs on a
    pool of 4 run one after the other."""
    table = flat_table([(1, 0, 10, 3, 10), (2, 0, 10, 3, 10)])
    r = swftools.replay(table, procs=4, policy="fcfs")
    assert starts(r) == {1: 0, 2: 10}
    assert r.summary["policy"] == "fcfs"
    assert r.capacity == [(0, 4)]


# --- the general path: output columns and summary ---------------------------------------------
def test_general_path_on_a_flat_pool():
    """A pool of 3 processors with a placement: each job is ``size`` one-GPU "nodes", packed
    from the lowest; node ids list the processors, no node count and no GPU ids; queue column
    carried; rows given out of submit order."""
    table = flat_table([(2, 5, 10, 1, 10), (1, 0, 10, 2, 10), (3, 6, 10, 3, 10)],
                       queue=["b", "a", "c"])
    r = replay(table, procs=3, placement="packed")
    assert r.jobs.schema == JOBS_SCHEMA
    assert r.jobs.column("job_id").to_pylist() == [1, 2, 3]  # queue order
    assert column(r, "queue") == {1: "a", 2: "b", 3: "c"}
    # job 1 holds 0,1 over [0, 10), job 2 takes 2 at 5 (until 15), job 3 waits for all three
    assert starts(r) == {1: 0, 2: 5, 3: 15}
    assert column(r, "node_ids") == {1: "0,1", 2: "2", 3: "0,1,2"}
    assert column(r, "nodes") == {1: None, 2: None, 3: None}
    assert column(r, "gpu_ids") == {1: None, 2: None, 3: None}
    assert column(r, "size") == {1: 2, 2: 1, 3: 3}
    assert column(r, "wait_s") == {1: 0, 2: 0, 3: 9}
    s = r.summary
    assert s["model"] == "flat pool of 3 processors, placement packed"
    assert s["unit"] == "processors" and s["allocation"] is None and s["capacity"] == 3
    assert s["policy"] == "easy"
    assert s["jobs"] == 3 and s["makespan_s"] == 25 and s["peak_busy"] == 3
    assert r.capacity == [(0, 3)]


def test_general_path_on_gpu_nodes_defaults_to_the_allocation_rule():
    """Without a placement, a factor alone runs the general path with the allocation's rule:
    best-fit puts job 3 (1 GPU at 20) on node 1 (1 GPU free) rather than node 0 (4 free),
    first-fit on node 0. The summary names the model, the rule and the placement; capacity
    in GPUs, each capacity step x 4 GPUs."""
    rows = [(1, 0, 10, 1, 4, 10), (2, 0, 100, 1, 3, 100), (3, 20, 50, 1, 1, 50)]
    site = gpu_site(gpus=4, timeline=[(0, 2), (500, 3)])
    one = lambda row, nodes, gpus: 1.0  # noqa: E731
    best = replay(gpu_table(rows), site=site, allocation="best-fit", runtime_factor=one)
    assert column(best, "node_ids") == {1: "0", 2: "1", 3: "1"}
    assert column(best, "gpu_ids") == {1: "0,1,2,3", 2: "0,1,2", 3: "3"}
    assert column(best, "nodes") == {1: 1, 2: 1, 3: 1}
    assert best.summary["model"] == "site t: up to 3 nodes x 4 GPUs, best-fit, placement best-fit"
    assert best.summary["allocation"] == "best-fit" and best.summary["unit"] == "GPUs"
    assert best.capacity == [(0, 8), (500, 12)]
    assert best.jobs.schema == SCALED_JOBS_SCHEMA
    first = replay(gpu_table(rows), site=site, runtime_factor=one)
    assert column(first, "node_ids") == {1: "0", 2: "1", 3: "0"}
    assert first.summary["model"] == ("site t: up to 3 nodes x 4 GPUs, first-fit, "
                                      "placement packed")
    assert first.summary["allocation"] == "first-fit"


@pytest.mark.parametrize("placement", [None, "packed"])
def test_kill_at_request_and_the_summary_of_either_path(placement):
    r = replay(gpu_table([(1, 0, 50, 1, 1, 20)]), site=gpu_site(1, 2), placement=placement,
               kill_at_request=True, allocation="best-fit")
    assert column(r, "run_s") == {1: 20} and column(r, "end_time") == {1: 20}
    assert r.summary["kill_at_request"] is True
    assert r.summary["unit"] == "GPUs" and r.summary["allocation"] == "best-fit"
    flat = replay(flat_table([(1, 0, 50, 1, 20)]), procs=2, placement=placement)
    assert flat.summary["kill_at_request"] is False
    assert flat.summary["unit"] == "processors" and flat.summary["allocation"] is None


def test_jobs_dropped_at_a_capacity_drop_on_either_path():
    """1 node of 2 GPUs from t=1000 (2 before): job 2 (2 nodes, queued behind job 1, which
    holds GPU 0 of node 0 until 2000) never gets its two nodes and is dropped; job 3 (1 GPU, at
    1500) takes node 0's other GPU. The kept rows keep their own node and GPU ids."""
    shrink = gpu_site(gpus=2, timeline=[(0, 2), (1000, 1)])
    table = gpu_table([(1, 0, 2000, 1, 1, 2000), (2, 5, 50, 2, 2, 50),
                       (3, 1500, 10, 1, 1, 10)])
    for placement in (None, "packed"):
        r = replay(table, site=shrink, placement=placement)
        assert starts(r) == {1: 0, 3: 1500}, placement
        assert column(r, "node_ids") == {1: "0", 3: "0"}, placement
        assert column(r, "gpu_ids") == {1: "0", 3: "1"}, placement
        assert skipped(r) == [(2, "never fits: the site manages at most 1 nodes from 1000 on")]
        assert r.summary["skipped"] == 1 and r.summary["jobs"] == 2
        assert r.capacity == [(0, 4), (1000, 2)], placement  # in GPUs


def test_skipped_jobs_are_listed_by_job_id_then_in_the_order_found():
    """Rows skipped when read (in row order), then jobs dropped by the engine: sorted by job id,
    a repeated id keeps that order."""
    shrink = gpu_site(gpus=2, timeline=[(0, 2), (1000, 1)])
    table = gpu_table([(9, 0, 2000, 1, 1, 2000), (4, 5, 50, 2, 2, 50), (4, None, 5, 1, 1, 5),
                       (1, 0, None, 1, 1, 5)])
    for placement in (None, "packed"):
        r = replay(table, site=shrink, placement=placement)
        assert skipped(r) == [(1, "unknown run time"), (4, "unknown submit time"),
                              (4, "never fits: the site manages at most 1 nodes from 1000 on")]


def test_empty_table_on_the_general_path():
    for kwargs in ({"procs": 4}, {"site": gpu_site(1, 2)}):
        r = replay(jt.empty(), placement="priority",
                   placement_inputs=PlacementInputs(gain=[], job_class=[]), **kwargs)
        assert r.jobs.num_rows == 0 and r.skipped.num_rows == 0
        assert r.jobs.schema == JOBS_SCHEMA


# --- the general path: row inputs in queue order ----------------------------------------------
def test_gains_follow_the_table_rows():
    """``priority``: a job above the median gain goes to the fastest GPUs (node 1: model 1,
    speed 2), the others to the slowest (node 0). Rows out of submit order: the gains are per
    row, not per queue position."""
    table = gpu_table([(1, 100, 10, 1, 1, 10), (2, 0, 10, 1, 1, 10), (3, 50, 10, 1, 1, 10)])
    inputs = PlacementInputs(gpu_model=[0, 1], model_speed=[1.0, 2.0], gain=[10.0, 0.0, 1.0])
    r = replay(table, site=gpu_site(2, 1), placement="priority", placement_inputs=inputs)
    assert column(r, "node_ids") == {1: "1", 2: "0", 3: "0"}


def test_job_classes_follow_the_table_rows():
    """``pm-first`` with two application classes on 2 nodes x 1 GPU: class 0 scores node 0
    higher, class 1 node 1. Each job runs alone, on its class's best node."""
    table = gpu_table([(1, 100, 10, 1, 1, 10), (2, 0, 10, 1, 1, 10), (3, 50, 10, 1, 1, 10)])
    inputs = PlacementInputs(class_score=[[[2.0], [1.0]], [[1.0], [2.0]]], job_class=[1, 0, 0])
    r = replay(table, site=gpu_site(2, 1), placement="pm-first", placement_inputs=inputs)
    assert column(r, "node_ids") == {1: "1", 2: "0", 3: "0"}


def test_runtime_factor_is_called_with_the_table_row():
    """Rows out of submit order, a factor per row (row 0: 3, row 1: 0.5, row 2: 2): each job
    runs ``round(run x factor)`` and is estimated at ``round(request x factor)``."""
    table = gpu_table([(1, 100, 10, 1, 1, 20), (2, 0, 10, 1, 1, 30), (3, 50, 7, 1, 1, 7)])
    factors = [3.0, 0.5, 2.0]
    calls = []

    def factor(row, nodes, gpus):
        calls.append((row, nodes, gpus))
        return factors[row]

    r = replay(table, site=gpu_site(1, 2), runtime_factor=factor)
    assert column(r, "run_s") == {1: 30, 2: 5, 3: 14}
    assert column(r, "estimate_s") == {1: 60, 2: 15, 3: 14}
    assert column(r, "recorded_run_s") == {1: 10, 2: 10, 3: 7}
    assert {row for row, _, _ in calls} == {0, 1, 2}
    assert all(nodes == [0] and gpus == [[0]] for _, nodes, gpus in calls)


def test_min_factor_per_row_bounds_the_backfill_in_queue_order():
    """One node of 4 GPUs, EASY; rows 3, 1, 2 (out of submit order), factors per row 1, 10, 10,
    each row's bound its factor. Job 1 (2 GPUs, 10 s x 10) runs until 100; job 2 (4 GPUs) waits
    with its reservation at 100; job 3 (2 GPUs, 60 s x 1, at 10) ends by 70 and backfills. Its
    bound is its row's, 1: a bound of 10 (600 s) would keep it out of the window."""
    table = gpu_table([(3, 10, 60, 1, 2, 60), (1, 0, 10, 1, 2, 10), (2, 5, 1, 1, 4, 1)])
    factors = [1.0, 10.0, 10.0]
    for bound in (factors, 1):  # per row, or one scalar below every factor
        r = replay(table, site=gpu_site(1, 4), runtime_factor=lambda row, n, g: factors[row],
                   min_factor=bound)
        assert starts(r) == {1: 0, 2: 100, 3: 10}, bound
        assert column(r, "run_s") == {1: 100, 2: 10, 3: 60}


def test_random_placement_follows_the_seed():
    """``random`` draws with ``random.Random(seed)``: the same seed, the same placements (the
    default seed is 0); twelve one-GPU jobs, one at a time, on 8 one-GPU nodes, drawn with
    seeds 0 and 1, differ."""
    table = gpu_table([(i, 10 * i, 5, 1, 1, 5) for i in range(1, 13)])
    site = gpu_site(8, 1)
    drawn = {seed: column(replay(table, site=site, placement="random", seed=seed), "node_ids")
             for seed in (0, 1)}
    assert column(replay(table, site=site, placement="random"), "node_ids") == drawn[0]
    assert column(replay(table, site=site, placement="random", seed=1), "node_ids") == drawn[1]
    assert drawn[0] != drawn[1]


# --- shapes: by GPU count, moldable ------------------------------------------------------------
def test_by_gpu_count_nodes_is_the_count_of_nodes_held():
    """``shape="gpus"`` on 2 nodes x 2 GPUs: job 1 (1 GPU) on node 0; job 2 (3 GPUs, at once)
    takes node 0's last GPU and node 1: two nodes; job 3 (later, alone) 2 GPUs on node 0."""
    table = gpu_table([(1, 0, 100, 1, 1, 100), (2, 1, 10, 1, 3, 10), (3, 200, 10, 1, 2, 10)])
    r = replay(table, site=gpu_site(2, 2), shape="gpus")
    assert starts(r) == {1: 0, 2: 1, 3: 200}
    assert column(r, "nodes") == {1: 1, 2: 2, 3: 1}
    assert column(r, "size") == {1: 1, 2: 3, 3: 2}
    assert column(r, "node_ids") == {1: "0", 2: "0,1", 3: "0"}
    assert r.jobs.schema == JOBS_SCHEMA


@pytest.mark.parametrize("nodes,gpus", [(1, 2), (2, 1)])
def test_mold_is_called_with_the_table_row_and_its_shape_is_reported(nodes, gpus):
    """Rows out of submit order, a site of 2 GPUs (1 node x 2 or 2 nodes x 1); ``mold`` gives
    row 0 both GPUs (``nodes x gpus``) at 0.5 x its time and keeps the others' recorded shape
    (1 x 1): the molded job's columns show the shape it ran on and the scaled times, the
    recorded ones beside them."""
    table = gpu_table([(1, 100, 40, 1, 1, 30), (2, 0, 10, 1, 1, 10)])
    seen = []

    def mold(row, bound):
        seen.append((row, bound))
        return (nodes, gpus, 0.5) if row == 0 else None

    r = replay(table, site=gpu_site(nodes, gpus), mold=mold)
    # each job reaches an empty machine (job 2 ends at 10): its bound is both GPUs
    assert sorted(set(seen)) == [(0, 2), (1, 2)]
    assert r.jobs.schema == SCALED_JOBS_SCHEMA
    assert column(r, "nodes") == {1: nodes, 2: 1}
    assert column(r, "size") == {1: 2, 2: 1}
    assert column(r, "node_ids") == {1: ",".join(map(str, range(nodes))), 2: "0"}
    assert column(r, "gpu_ids") == {1: ",".join(map(str, range(gpus))), 2: "0"}
    assert column(r, "run_s") == {1: 20, 2: 10}
    assert column(r, "estimate_s") == {1: 15, 2: 10}
    assert column(r, "recorded_run_s") == {1: 40, 2: 10}
    assert column(r, "recorded_estimate_s") == {1: 30, 2: 10}


def test_a_compiled_factor_reads_its_keys_by_table_row():
    """A replay of ``COMPILED_MIN_JOBS`` jobs runs the compiled twin with the factor's kernel:
    its keys are per table row (here ``row % 2``: factor 1 or 2). The rows are in reverse
    submit order, one 1-GPU job every 10 s for 3 s, so each runs alone, for 3 s x its row's
    factor."""
    n = COMPILED_MIN_JOBS
    table = gpu_table([(n - row, 10 * (n - row), 3, 1, 1, 3) for row in range(n)])
    params = np.array([1.0, 2.0])

    def function(key, models, s_min, nodes, racks, per_node, params):
        return params[key]

    def factor(row, nodes, gpus):
        return row % 2 if nodes is None else float(params[row % 2])

    kernel = FactorKernel(function, params, np.arange(n, dtype=np.int64) % 2)
    inputs = PlacementInputs(factor_by_key=True, factor_kernel=kernel)
    r = replay(table, site=gpu_site(1, 1), placement="packed", placement_inputs=inputs,
               runtime_factor=factor)
    run = column(r, "run_s")
    assert run == {n - row: 3 * (1 + row % 2) for row in range(n)}
    assert column(r, "estimate_s") == run


def test_a_placement_object_is_used_as_given():
    """A ``Placement`` object (here ``packed`` that records its choices) places every job: two
    1-GPU jobs at once on one node of 2 GPUs take GPUs 0 and 1, chosen in queue order."""
    watching = Watching()
    table = gpu_table([(2, 0, 10, 1, 1, 10), (1, 0, 10, 1, 1, 10)])
    r = replay(table, site=gpu_site(1, 2), placement=watching)
    assert [j for j, _ in watching.seen] == [0, 1]
    assert column(r, "gpu_ids") == {1: "0", 2: "1"}
    assert r.summary["model"] == "site t: up to 1 nodes x 2 GPUs, first-fit, placement packed"


def test_by_gpu_count_follows_the_policy():
    """``shape="gpus"`` on one node of 4 GPUs: job 1 holds 3 GPUs until 100, job 2 (4 GPUs)
    waits for them; job 3 (1 GPU, 50 s, at 2) ends by 100: EASY backfills it at once, FCFS
    starts it after job 2 (100 to 110)."""
    table = gpu_table([(1, 0, 100, 1, 3, 100), (2, 1, 10, 1, 4, 10), (3, 2, 50, 1, 1, 50)])
    site = gpu_site(1, 4)
    assert starts(replay(table, site=site, shape="gpus")) == {1: 0, 2: 100, 3: 2}
    assert starts(replay(table, site=site, shape="gpus", policy="fcfs")) == {1: 0, 2: 100, 3: 110}


def test_by_gpu_count_a_spread_job_counts_its_nodes():
    """2 nodes x 2 GPUs, packed: jobs 1 and 2 (1 GPU) fill node 0, job 3 takes GPU 0 of node 1;
    job 2 ends at 10. Job 4 (2 GPUs, at 20) finds one free GPU on each node: it spreads over
    both (GPU 1 of each), so it holds 2 nodes, not the 1 its count would fill."""
    table = gpu_table([(1, 0, 100, 1, 1, 100), (2, 0, 10, 1, 1, 10), (3, 0, 100, 1, 1, 100),
                       (4, 20, 10, 1, 2, 10)])
    r = replay(table, site=gpu_site(2, 2), shape="gpus")
    assert starts(r) == {1: 0, 2: 0, 3: 0, 4: 20}
    assert column(r, "node_ids") == {1: "0", 2: "0", 3: "1", 4: "0,1"}
    assert column(r, "gpu_ids") == {1: "0", 2: "1", 3: "0", 4: "1"}
    assert column(r, "nodes") == {1: 1, 2: 1, 3: 1, 4: 2}


def test_by_gpu_count_with_a_runtime_factor():
    """``shape="gpus"`` and a factor per row (rows out of submit order: row 0 x 3, row 1 x 2):
    each job runs alone for its recorded time x its row's factor."""
    table = gpu_table([(1, 100, 10, 1, 2, 10), (2, 0, 10, 1, 1, 10)])
    r = replay(table, site=gpu_site(1, 2), shape="gpus",
               runtime_factor=lambda row, nodes, gpus: [3.0, 2.0][row])
    assert column(r, "run_s") == {1: 30, 2: 20}
    assert column(r, "estimate_s") == {1: 30, 2: 20}
    assert column(r, "recorded_run_s") == {1: 10, 2: 10}
