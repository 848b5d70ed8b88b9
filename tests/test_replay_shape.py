"""``shape="gpus"`` (``--shape gpus``, issue 25): jobs placed by their GPU count, partial nodes
allowed (``engine_count``, ``placement/counts.py``): hand-worked schedules, the flat engine as
the reference on one-GPU nodes, and an independent feasibility check on random cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import UsageError
from swftools.replay import PLACEMENTS, PlacementInputs, replay
from swftools.replay.model import GpuNodes
from swftools.replay.workload import prepare

from .strategies import examples, placement_gpu_cases, replay_swf_jobs
from .test_replay import gpu_site, gpu_table


def _view(result):
    return {r["job_id"]: (r["start_time"], r["node_ids"], r["gpu_ids"], r["nodes"], r["size"])
            for r in result.jobs.to_pylist()}


def test_a_two_node_job_takes_its_gpus_on_one_node():
    """Two 8-GPU nodes. Job 1: 1 x 8 GPUs for 100 s; job 2 (recorded 2 nodes x 4 GPUs) at t=0.
    Recorded: job 2 needs two whole nodes, so it waits for job 1 (start 100, 16 GPUs held).
    By GPU count: 8 GPUs; node 1 has them: it starts at once there (packed's one-node rule)."""
    table = gpu_table([(1, 0, 100, 1, 8, 100), (2, 0, 50, 2, 4, 50)])
    site = gpu_site(nodes=2, gpus=8)
    recorded = _view(replay(table, site=site, placement="packed"))
    assert recorded[2] == (100, "0,1", "0,1,2,3,4,5,6,7", 2, 16)
    by_count = _view(replay(table, site=site, placement="packed", shape="gpus"))
    assert by_count[1] == (0, "0", "0,1,2,3,4,5,6,7", 1, 8)
    assert by_count[2] == (0, "1", "0,1,2,3,4,5,6,7", 1, 8)


def test_a_job_spreads_over_partial_nodes_when_no_node_holds_it():
    """Two 4-GPU nodes. Job 1 (3 GPUs) takes node 0's GPUs 0-2, job 2 (2 GPUs) node 1's 0-1.
    Job 3 (3 GPUs) fits no node: it spreads over the fewest nodes, most free first: node 1's
    GPUs 2, 3 and node 0's GPU 3, at once. Recorded, it waits for job 1 to end."""
    table = gpu_table([(1, 0, 100, 1, 3, 100), (2, 0, 100, 1, 2, 100), (3, 0, 10, 1, 3, 10)])
    site = gpu_site(nodes=2, gpus=4)
    assert _view(replay(table, site=site, placement="packed"))[3][0] == 100
    by_count = _view(replay(table, site=site, placement="packed", shape="gpus"))
    assert by_count[1] == (0, "0", "0,1,2", 1, 3)
    assert by_count[2] == (0, "1", "0,1", 1, 2)
    assert by_count[3] == (0, "0,1", "3;2,3", 2, 3)


def test_easy_by_count_backfills_into_the_heads_extra_gpus():
    """Two 4-GPU nodes. Job 1 (6 GPUs, 100 s) spreads: node 0 whole, node 1's GPUs 0-1. Job 2
    (8 GPUs) waits: shadow 100 s, when 8 are free, extra 0. Job 3 (2 GPUs, estimate 500)
    would hold 2 past the shadow: refused. Job 4 (2 GPUs, estimate 100) ends by the shadow:
    backfilled at 0. Job 2 starts at 100 on both nodes, job 3 after it."""
    table = gpu_table([(1, 0, 100, 2, 3, 100), (2, 0, 100, 2, 4, 100), (3, 0, 500, 1, 2, 500),
                       (4, 0, 100, 2, 1, 100)])
    view = _view(replay(table, site=gpu_site(nodes=2, gpus=4), placement="packed",
                        shape="gpus"))
    assert view[1] == (0, "0,1", "0,1,2,3;0,1", 2, 6)
    assert view[4] == (0, "1", "2,3", 1, 2)
    assert view[2] == (100, "0,1", "0,1,2,3", 2, 8)
    assert view[3][0] == 200


def test_easy_by_count_lets_a_long_job_use_the_extra_gpus():
    """As above but the head needs 4 GPUs: at the shadow (100 s) 8 are free, extra 4, so job 3
    (2 GPUs, estimate 500) starts at once and leaves extra 2."""
    table = gpu_table([(1, 0, 100, 2, 3, 100), (2, 0, 100, 1, 4, 100), (3, 0, 500, 1, 2, 500)])
    view = _view(replay(table, site=gpu_site(nodes=2, gpus=4), placement="packed",
                        shape="gpus"))
    assert view[3] == (0, "1", "2,3", 1, 2)
    assert view[2][0] == 100


def test_easy_by_count_spends_the_extra_gpus_once():
    """Four 2-GPU nodes. Job 1 (4 GPUs, 100 s); job 2, the head, needs 6: shadow 100 s, extra 2.
    Job 3 (2 GPUs, estimate 500) takes the extra; job 4 (2 GPUs, estimate 500) fits now too but
    would delay the head: it starts when job 2 ends (200 s)."""
    table = gpu_table([(1, 0, 100, 2, 2, 100), (2, 0, 100, 3, 2, 100), (3, 0, 500, 1, 2, 500),
                       (4, 0, 500, 1, 2, 500)])
    view = _view(replay(table, site=gpu_site(nodes=4, gpus=2), placement="packed",
                        shape="gpus"))
    assert [view[j][0] for j in (1, 2, 3, 4)] == [0, 100, 0, 200]


def test_pal_locality_penalty_decides_between_spreading_and_one_node():
    """Two 2-GPU nodes, each GPU 0 at score 1.0 (variability 1), GPU 1 at 0.5 (variability 2):
    classes {1} and {2}, class values 1/1.5 and 2/1.5. A 2-GPU job: PAL's cells by value x
    penalty. Penalty 1.7: within 0.67 (no node has two such GPUs), across 1.13: both GPU 0s,
    spread over the two nodes. Penalty 2.5: within 0.67, within 1.33 (first fit: node 0, with
    two eligible GPUs, lower node on ties) comes before across 1.67: one node."""
    table = gpu_table([(1, 0, 10, 1, 2, 10)])
    site = gpu_site(nodes=2, gpus=2)
    score = [[1.0, 0.5], [1.0, 0.5]]
    spread = _view(replay(table, site=site, placement="pal", shape="gpus",
                          placement_inputs=PlacementInputs(score=score, pal_penalty=1.7)))
    assert spread[1] == (0, "0,1", "0", 2, 2)
    one = _view(replay(table, site=site, placement="pal", shape="gpus",
                       placement_inputs=PlacementInputs(score=score, pal_penalty=2.5)))
    assert one[1] == (0, "0", "0,1", 1, 2)
    recorded = _view(replay(table, site=site, placement="pal",
                            placement_inputs=PlacementInputs(score=score, pal_penalty=1.7)))
    assert recorded[1] == (0, "0", "0,1", 1, 2)  # a recorded one-node job never spans


def test_gpu_counts_and_fewest_node_shapes_by_hand():
    """On 4-GPU nodes: 4 x 1 -> 4 GPUs (1 x 4); 2 x 2 -> 4 (1 x 4); 3 x 2 -> 6 (2 x 4);
    1 x 3 -> 3 (1 x 3); a job without a recorded node count keeps its size (5: 2 x 4)."""
    table = gpu_table([(1, 0, 10, 4, 1, 10), (2, 0, 10, 2, 2, 10), (3, 0, 10, 3, 2, 10),
                       (4, 0, 10, 1, 3, 10), (5, 0, 10, 1, 5, 10)])
    nodes = table.column("nodes").to_pylist()[:4] + [None]
    table = table.set_column(table.column_names.index("nodes"),
                             table.schema.field("nodes"), [nodes])
    model = GpuNodes(gpu_site(nodes=4, gpus=4))
    work = prepare(table, model, shape="gpus")
    assert list(zip(work.size.tolist(), work.nodes.tolist(), work.gpus_per_node.tolist())) == [
        (4, 1, 4), (4, 1, 4), (6, 2, 4), (3, 1, 3), (5, 2, 4)]
    assert prepare(table, model).nodes.tolist()[:3] == [4, 2, 3]  # whole nodes, as recorded


def test_a_job_wider_than_the_site_is_skipped_either_way():
    table = gpu_table([(1, 0, 10, 2, 4, 10), (2, 0, 10, 3, 4, 10)])
    for shape in ("recorded", "gpus"):
        r = replay(table, site=gpu_site(nodes=2, gpus=4), placement="packed", shape=shape)
        assert r.jobs.column("job_id").to_pylist() == [1]
        assert r.skipped.column("job_id").to_pylist() == [2]


def test_unknown_shape_is_a_usage_error():
    with pytest.raises(UsageError, match=r"unknown job shape 'nodes' \(choose from recorded, gpus\)"):
        replay(gpu_table([(1, 0, 10, 1, 1, 10)]), site=gpu_site(), shape="nodes")


@given(replay_swf_jobs(max_jobs=30), st.sampled_from(["easy", "fcfs"]))
@settings(max_examples=60, deadline=None)
def test_on_one_gpu_nodes_the_count_engine_is_the_flat_engine(case, policy):
    """With one GPU per node a GPU count is a processor count: the count engine's FCFS / EASY
    must give ``engine_flat``'s start times (an independent implementation of the same rule)."""
    table, procs = case
    flat = replay(table, procs=procs, policy=policy)
    counted = replay(table, site=gpu_site(nodes=procs, gpus=1), policy=policy, shape="gpus")
    assert counted.jobs.column("job_id").to_pylist() == flat.jobs.column("job_id").to_pylist()
    assert counted.jobs.column("start_time").to_pylist() == flat.jobs.column("start_time").to_pylist()


def _held(row) -> dict[int, set[int]]:
    nodes = [int(x) for x in row["node_ids"].split(",")]
    sets = row["gpu_ids"].split(";")
    sets = sets * len(nodes) if len(sets) == 1 else sets
    assert len(sets) == len(nodes)
    return {k: {int(i) for i in s.split(",")} for k, s in zip(nodes, sets)}


@given(placement_gpu_cases(), st.sampled_from(PLACEMENTS), st.sampled_from(["easy", "fcfs"]),
       st.integers(0, 3))
@settings(max_examples=examples(50), deadline=None)
def test_gpu_count_schedules_are_feasible(case, name, policy, seed):
    """Independently of the engine: every job holds exactly its GPU count, on managed nodes,
    never a GPU another job holds at the same time; FCFS starts in queue order; every job is
    replayed or skipped."""
    table, site, inputs = case
    r = replay(table, site=site, policy=policy, placement=name, placement_inputs=inputs,
               shape="gpus", seed=seed)
    ids = sorted(r.jobs.column("job_id").to_pylist() + r.skipped.column("job_id").to_pylist())
    assert ids == sorted(table.column("job_id").to_pylist())
    by_id = {row["job_id"]: row for row in table.to_pylist()}
    g, events = site.gpus_per_node, []
    for row in r.jobs.to_pylist():
        src = by_id[row["job_id"]]
        count = (src["nodes"] * src["gpus_per_node"] if src["nodes"] and src["gpus_per_node"]
                 else row["size"])
        held = _held(row)
        assert row["size"] == count == sum(len(s) for s in held.values())
        assert row["nodes"] == len(held)
        assert row["start_time"] >= row["submit_time"]
        assert all(0 <= k < site.nodes_at(row["start_time"]) for k in held)
        assert all(0 <= i < g for s in held.values() for i in s)
        events.append((row["start_time"], row["end_time"], held))
    for t in {e[0] for e in events}:
        seen: set[tuple[int, int]] = set()
        for s, e, held in events:
            if s <= t < e:
                for k, gpus in held.items():
                    for i in gpus:
                        assert (k, i) not in seen
                        seen.add((k, i))
    if policy == "fcfs":
        starts = r.jobs.column("start_time").to_pylist()
        assert starts == sorted(starts)


def test_spread_takes_the_nodes_with_most_free_gpus_and_their_lowest_gpus():
    """Three 4-GPU nodes with 1, 3 and 4 free GPUs (node 0 holds GPUs 0-2, node 1 GPU 0): six
    GPUs come from node 2 (all four) and node 1 (its lowest free, 1 and 2); a ninth GPU is
    not there."""
    from swftools.replay.model import GpuState
    from swftools.replay.placement.counts import free_count, spread

    state = GpuState(GpuNodes(gpu_site(nodes=3, gpus=4)), 0)
    state.set_capacity(3)
    state.take_set(0b001, 3, 0b0111)
    state.take_set(0b010, 1, 0b0001)
    assert free_count(state) == 8
    assert spread(state, 6) == [(1, 0b0110), (2, 0b1111)]
    assert spread(state, 1) == [(2, 0b0001)]
    with pytest.raises(AssertionError, match=r"^spread\(\) called for a job that does not fit$"):
        spread(state, 9)


def _count_state(nodes, gpus, taken=()):
    """A state of ``nodes`` nodes of ``gpus`` GPUs, ``taken``: (node, GPU bit set) held."""
    from swftools.replay.model import GpuState

    state = GpuState(GpuNodes(gpu_site(nodes=nodes, gpus=gpus)), 0)
    state.set_capacity(nodes)
    for k, held in taken:
        state.take_set(1 << k, held.bit_count(), held)
    return state


def _by_count(name, state, j, count, gains=None, **inputs):
    from swftools.replay.placement import make_placement
    from swftools.replay.placement.counts import choose_by_count

    machine = PlacementInputs(**inputs).resolved(state.n_nodes, state.g)
    placement = make_placement(name, machine, gains)
    placement.start(state, None)
    return choose_by_count(placement, state, j, count)


def test_a_count_one_node_holds_takes_the_policys_one_node_choice():
    """No whole free node; node 0 has 2 free GPUs, node 1 three: two GPUs go where ``packed``
    puts them (node 0, its GPUs 2 and 3), not where spreading would (node 1, most free)."""
    state = _count_state(2, 4, [(0, 0b0011), (1, 0b0001)])
    assert _by_count("packed", state, 0, 2) == [(0, 0b1100)]


def test_a_count_of_whole_nodes_takes_the_policys_whole_node_choice():
    """Three free 2-GPU nodes, node 2 the fast model; ``priority``, job 1 above the median
    gain: four GPUs are the fastest whole nodes (node 2, then node 0), not the spread's lowest
    nodes 0 and 1."""
    state = _count_state(3, 2)
    assert _by_count("priority", state, 1, 4, gains=[1.0, 2.0], gpu_model=[0, 0, 1],
                     model_speed=[1.0, 1.5]) == [(0, 0b11), (2, 0b11)]


def test_pm_first_by_count_ranks_by_the_jobs_class():
    """Two classes ranking two 1-GPU nodes oppositely: job 1, of class 1, gets node 1."""
    state = _count_state(2, 1)
    grids = [[[2.0], [1.0]], [[1.0], [2.0]]]
    assert _by_count("pm-first", state, 1, 1, class_score=grids, job_class=[0, 1]) == [(1, 1)]
    assert _by_count("pm-first", state, 0, 1, class_score=grids, job_class=[0, 1]) == [(0, 1)]


def test_pm_first_by_count_refuses_a_job_that_does_not_fit():
    state = _count_state(2, 2, [(0, 0b01)])
    with pytest.raises(AssertionError,
                       match=r"^choose_by_count\(\) called for a job that does not fit$"):
        _by_count("pm-first", state, 0, 4)


def test_a_user_placement_is_asked_with_the_job_and_its_shape():
    """``choose_by_count`` calls a placement's ``choose`` as the contract says: the job, then
    one node of ``count`` GPUs, or ``count // g`` whole nodes of ``g`` GPUs."""
    from swftools.replay.placement import Placement
    from swftools.replay.placement.counts import choose_by_count

    calls = []

    class Recording(Placement):
        def choose(self, state, j, nodes, per_node):
            calls.append((j, nodes, per_node))
            return super().choose(state, j, nodes, per_node)

    state = _count_state(3, 2)
    placement = Recording()
    placement.start(state, None)
    assert choose_by_count(placement, state, 5, 4) == [(0, 0b11), (1, 0b11)]
    assert choose_by_count(placement, state, 6, 1) == [(0, 0b01)]
    assert calls == [(5, 2, 2), (6, 1, 1)]
