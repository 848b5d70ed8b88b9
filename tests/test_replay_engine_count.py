"""``replay.engine_count`` (``shape="gpus"``): replays checked against a reference written from
the module docstring (FCFS / EASY by GPU count, the shadow time and ``extra`` found by trying
every instant at which the projected free GPUs change, heads dropped when the site never again
manages enough nodes) with ``placement.counts``' rule for ``packed`` (one node, whole nodes,
else spread) on plain per-node GPU sets; and hand-worked schedules."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import UsageError
from swftools.replay.engine_count import run_count
from swftools.replay.model import GpuNodes
from swftools.replay.placement import Placement
from swftools.replay.workload import prepare

from .replay_support import Watching
from .strategies import count_engine_cases
from .test_replay import gpu_site, gpu_table

BIG = float("inf")


def _factor(bases):
    """A run-time factor that depends on the job, on its nodes and on the lowest GPU held on
    each (exactly the base, 1.0 or 2.0 among them, on GPU 0 of node 0)."""
    if bases is None:
        return None

    def rf(j, nodes, gpus):
        return bases[j] * (1 + 0.25 * sum(min(s) for s in gpus) + 0.5 * (len(nodes) - 1)
                           + 0.125 * nodes[0])
    return rf


def _nodes_at(site, t):
    """Managed nodes at ``t`` (the first entry of the timeline also covers earlier times)."""
    current = site.capacity_nodes[0]
    for since, nodes in zip(site.capacity_since, site.capacity_nodes):
        if since <= t:
            current = nodes
    return current


def _reach(site, t):
    """The most nodes the site manages at ``t`` or later."""
    later = [nodes for since, nodes in zip(site.capacity_since, site.capacity_nodes) if since > t]
    return max([_nodes_at(site, t)] + later)


def _reference(work, site, policy, rf=None):
    """The replay the module docstring describes, placing jobs as ``packed`` by count does.

    Returns (start, cells, run, estimate, dropped, choices) per queue position: cells maps a
    node to its sorted GPUs; choices lists (job, waiting jobs) at each one-node or whole-node
    choice (where ``choose_by_count`` asks the placement)."""
    g = site.gpus_per_node
    submit, runtime = work.submit.tolist(), work.runtime.tolist()
    estimate, size = work.estimate.tolist(), work.size.tolist()
    n = len(submit)
    free = [set(range(g)) for _ in range(site.max_nodes)]
    start, cells, run_s, est_s = {}, {}, {}, {}
    dropped, choices = [], []
    running = {}  # job -> its actual end
    queue = []
    since = sorted(site.capacity_since)
    arrived = 0

    def free_now(now):
        return sum(len(free[k]) for k in range(_nodes_at(site, now)))

    def waiting():
        gone = set(start) | {j for j, _ in dropped}
        return frozenset(j for j in range(arrived) if j not in gone)

    def place(j, now):
        count, managed = size[j], range(_nodes_at(site, now))
        if count <= g:
            for k in managed:
                if len(free[k]) >= count:
                    choices.append((j, waiting()))
                    return {k: sorted(free[k])[:count]}
        whole = [k for k in managed if len(free[k]) == g]
        if count % g == 0 and len(whole) >= count // g:
            choices.append((j, waiting()))
            return {k: list(range(g)) for k in whole[:count // g]}
        out, left = {}, count
        for k in sorted(managed, key=lambda k: (-len(free[k]), k)):
            take = sorted(free[k])[:left]
            if take:
                out[k] = take
                left -= len(take)
        assert not left
        return out

    def factor(j, chosen):
        if rf is None:
            return 1.0
        f = rf(j, sorted(chosen), [chosen[k] for k in sorted(chosen)])
        assert 0 < f < BIG
        return f

    def scaled(value, f):
        return value if f == 1.0 else round(value * f)

    def launch(j, chosen, f, now):
        for k, gpus in chosen.items():
            free[k] -= set(gpus)
        start[j], cells[j] = now, chosen
        run_s[j], est_s[j] = scaled(runtime[j], f), scaled(estimate[j], f)
        running[j] = now + run_s[j]

    def drop(j, now):
        dropped.append((j, f"never fits: the site manages at most {_reach(site, now)} nodes "
                           f"from {now} on"))

    def shadow(now, need):
        """(time, extra GPUs, managed nodes then): the first instant of those where the
        projected free GPUs change at which the head fits."""
        ends = {j: max(start[j] + est_s[j], now) for j in running}
        for t in sorted({now, *ends.values(), *(s for s in since if s > now)}):
            managed = _nodes_at(site, t)
            total = sum(len(free[k]) for k in range(managed)) + sum(
                len(gpus) for j in running if ends[j] <= t
                for k, gpus in cells[j].items() if k < managed)
            if total >= need:
                return t, total - need, managed
        return None

    last = submit[0] if n else 0
    while arrived < n or running or queue:
        now = submit[arrived] if arrived < n else BIG
        now = min([now, *running.values()])
        if queue:
            now = min([now, *(s for s in since if s > last)])
        last = now
        for j in [j for j, end in running.items() if end == now]:
            for k, gpus in cells[j].items():
                free[k] |= set(gpus)
            del running[j]
        first = arrived
        while arrived < n and submit[arrived] == now:
            arrived += 1
        if not queue and first == arrived:
            continue
        while queue:
            j = queue[0]
            if size[j] <= free_now(now):
                chosen = place(queue.pop(0), now)
                launch(j, chosen, factor(j, chosen), now)
            elif size[j] > _reach(site, now) * g:
                drop(queue.pop(0), now)
            else:
                break
        for j in range(first, arrived):
            if not queue and size[j] <= free_now(now):
                chosen = place(j, now)
                launch(j, chosen, factor(j, chosen), now)
            elif not queue and size[j] > _reach(site, now) * g:
                drop(j, now)
            else:
                queue.append(j)
        if policy != "easy" or len(queue) < 2 or not free_now(now):
            continue
        res = shadow(now, size[queue[0]])
        if res is None:
            continue
        t_shadow, extra, managed_then = res
        kept = queue[:1]
        for j in queue[1:]:
            if size[j] > free_now(now):
                kept.append(j)
                continue
            chosen = place(j, now)
            f = factor(j, chosen)
            if now + scaled(estimate[j], f) > t_shadow:
                held = sum(len(gpus) for k, gpus in chosen.items() if k < managed_then)
                if held > extra:
                    kept.append(j)
                    continue
                extra -= held
            launch(j, chosen, f, now)
        queue = kept
    return start, cells, run_s, est_s, dropped, choices


def _mask(items):
    return sum(1 << i for i in items)


def _run(table, site, policy, bases=None, watch=False):
    model = GpuNodes(site)
    work = prepare(table, model, shape="gpus")
    placement = Watching() if watch else Placement()
    run = run_count(work, model, policy, placement, _factor(bases))
    return work, run, placement


@given(count_engine_cases(), st.sampled_from(["easy", "fcfs"]), st.booleans())
@settings(max_examples=150, deadline=None)
def test_count_replays_follow_the_reference(case, policy, watch):
    """Start times, nodes and GPUs, scaled run times and estimates, dropped heads with their
    reason, and (for a placement that watches the queue) the waiting jobs at every choice."""
    table, site, bases = case
    work, run, placement = _run(table, site, policy, bases, watch)
    start, cells, run_s, est_s, dropped, choices = _reference(work, site, policy,
                                                              _factor(bases))
    n = len(work)
    assert run.dropped == dropped
    assert sorted([*start, *(j for j, _ in dropped)]) == list(range(n))  # every job once
    got = {j: (int(run.start[j]), run.node_sets[j], run.node_gpus[j], int(run.runtime[j]),
               int(run.estimate[j])) for j in start}
    want = {j: (start[j], _mask(cells[j]), [_mask(cells[j][k]) for k in sorted(cells[j])],
                run_s[j], est_s[j]) for j in start}
    assert got == want
    if watch:
        assert placement.seen == choices
        assert placement.shapes == (work.nodes.tolist(), work.gpus_per_node.tolist())


def _hand(rows, nodes, gpus, policy="easy", timeline=None, bases=None):
    table = gpu_table(rows)
    site = gpu_site(nodes=nodes, gpus=gpus, timeline=timeline)
    work, run, _ = _run(table, site, policy, bases)
    ids = work.job_id.tolist()
    return {ids[j]: int(run.start[j]) for j in range(len(ids))}, run, work


def test_a_head_waits_for_a_capacity_rise_then_is_dropped_when_it_falls_for_good():
    """One 4-GPU node from 0, two from 100, one from 300. Job 1 (4 GPUs, 500 s) holds node 0;
    job 2 (4 GPUs, at 0) waits for node 1 (not dropped: the site will manage two nodes) and
    starts at 100. Job 3 (8 GPUs, at 150) needs both nodes: it waits for job 1, but at 300 the
    site falls to one node for good: dropped then."""
    starts, run, _ = _hand([(1, 0, 500, 1, 4, 500), (2, 0, 50, 1, 4, 50),
                            (3, 150, 10, 2, 4, 10)], nodes=2, gpus=4,
                           timeline=[(0, 1), (100, 2), (300, 1)])
    assert starts[1] == 0 and starts[2] == 100
    assert run.dropped == [(2, "never fits: the site manages at most 1 nodes from 300 on")]


def test_a_wide_job_submitted_before_a_rise_waits_for_it():
    """One 2-GPU node until 100, three after: job 1 (6 GPUs) submitted at 0 cannot start
    before 100, but the site will manage 3 nodes: it waits (not dropped) and starts at 100."""
    starts, run, _ = _hand([(1, 0, 10, 3, 2, 10)], nodes=3, gpus=2,
                           timeline=[(0, 1), (100, 3)])
    assert starts == {1: 100} and run.dropped == []


def test_a_wide_job_waits_through_one_node_entries_for_a_later_rise():
    """One-GPU nodes: one from 0, 100 and 200, two from 300. A 2-GPU job at 0 never fits
    before 300; the largest capacity ahead is two nodes, whichever entry comes next: it waits
    and starts at 300."""
    starts, run, _ = _hand([(1, 0, 10, 2, 1, 10)], nodes=2, gpus=1,
                           timeline=[(0, 1), (100, 1), (200, 1), (300, 2)])
    assert starts == {1: 300} and run.dropped == []


def test_a_waiting_head_is_dropped_when_the_capacity_falls_for_good():
    """One-GPU nodes: one from 0, three from 100, one from 200 and from 300. Job 1 holds node 0
    until 1000. Job 2 (3 GPUs, at 150) waits for it; at 200 the site manages one node and
    never more again: job 2 is dropped at 200 (not at 300, the last entry)."""
    _, run, _ = _hand([(1, 0, 1000, 1, 1, 1000), (2, 150, 10, 3, 1, 10)], nodes=3, gpus=1,
                      timeline=[(0, 1), (100, 3), (200, 1), (300, 1)])
    assert run.dropped == [(1, "never fits: the site manages at most 1 nodes from 200 on")]


def test_a_long_job_may_take_a_gpu_on_a_node_the_site_stops_managing_by_the_shadow_time():
    """Three 1-GPU nodes until 100, then two. Job 1 holds node 0 until 200, job 2 node 1 until
    1000 (estimates exact). Head job 3 (2 GPUs): the first instant it fits the nodes managed
    then (0 and 1) is 1000, extra 0. Job 4 (1 GPU, estimate 5000) fits node 2 now: it runs past
    the shadow time, but on a node not managed then: it starts at once. Job 3 starts at 1000."""
    starts, run, _ = _hand([(1, 0, 200, 1, 1, 200), (2, 0, 1000, 1, 1, 1000),
                            (3, 0, 10, 2, 1, 10), (4, 0, 5000, 1, 1, 5000)], nodes=3, gpus=1,
                           timeline=[(0, 3), (100, 2)])
    assert starts == {1: 0, 2: 0, 3: 1000, 4: 0}
    assert run.node_sets == [0b001, 0b010, 0b011, 0b100]


def test_a_long_job_on_a_node_still_managed_at_the_shadow_time_waits():
    """As above without the fall in capacity: job 4 would hold node 2's GPU past the shadow
    time (then 200: nodes 0 and 2 free, extra 0): refused; it starts when job 3 ends."""
    starts, _, _ = _hand([(1, 0, 200, 1, 1, 200), (2, 0, 1000, 1, 1, 1000),
                          (3, 0, 10, 2, 1, 10), (4, 0, 5000, 1, 1, 5000)], nodes=3, gpus=1)
    assert starts == {1: 0, 2: 0, 3: 200, 4: 210}


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_a_factor_that_is_not_positive_and_finite_is_a_usage_error(bad):
    table = gpu_table([(1, 0, 10, 1, 1, 10), (7, 5, 10, 1, 1, 10)])
    site = gpu_site(nodes=1, gpus=2)
    model = GpuNodes(site)
    work = prepare(table, model, shape="gpus")

    def rf(j, nodes, gpus):
        return bad if j == 1 else 1.0

    with pytest.raises(UsageError, match=r"^run-time factor of job 7 must be positive and "
                                         r"finite, not " + repr(bad).replace(".", r"\.") + "$"):
        run_count(work, model, "fcfs", Placement(), rf)


def test_factors_scale_run_time_and_estimate_rounding_halves_to_even():
    """One 2-GPU node, factor base 2: job 1 on GPU 0 gets 2.0 (scaled as any factor but 1.0):
    5 s -> 10 s, estimate 4 -> 8. Job 2 on GPU 1 gets 2 x 1.25 = 2.5: 5 s -> round(12.5) = 12,
    estimate 3 -> round(7.5) = 8."""
    starts, run, _ = _hand([(1, 0, 5, 1, 1, 4), (2, 0, 5, 1, 1, 3)], nodes=1, gpus=2,
                           bases=[2.0, 2.0])
    assert starts == {1: 0, 2: 0}
    assert run.runtime.tolist() == [10, 12] and run.estimate.tolist() == [8, 8]


def test_a_job_spread_over_different_gpus_per_node_gets_the_factor_of_its_own_sets():
    """Two 4-GPU nodes, factor base 1. Job 1 (3 GPUs) takes node 0's GPUs 0-2 (factor 1.0),
    job 2 (2 GPUs) node 1's GPUs 0-1 (factor 1.125: node 1). Job 3 (3 GPUs) spreads: node 1's
    GPUs 2, 3 and node 0's GPU 3; its factor is asked with those sets: 1 + 0.25 x (3 + 2)
    + 0.5 (two nodes) = 2.75: 100 s -> 275 s, estimate 40 -> 110."""
    starts, run, _ = _hand([(1, 0, 100, 1, 3, 100), (2, 0, 100, 1, 2, 100),
                            (3, 0, 100, 1, 3, 40)], nodes=2, gpus=4, bases=[1.0, 1.0, 1.0])
    assert starts == {1: 0, 2: 0, 3: 0}
    assert run.node_gpus[2] == [0b1000, 0b1100]
    assert run.runtime.tolist() == [100, 112, 275] and run.estimate.tolist() == [100, 112, 110]


def test_the_reservation_reads_each_capacity_entry_ahead_in_turn():
    """One-GPU nodes: one from 0, two from 100, three from 200. Job 1 holds node 0 until 1000
    (estimate exact). At 150 (capacity two) head job 2 needs 3 GPUs: 1 free at 150, 2 from 200
    (three nodes managed), 3 at 1000: shadow 1000. Job 3 (1 GPU, estimate 60) ends by then: it
    is backfilled at once (150, node 1); job 2 starts at 1000."""
    starts, run, _ = _hand([(1, 0, 1000, 1, 1, 1000), (2, 150, 10, 3, 1, 10),
                            (3, 150, 60, 1, 1, 60)], nodes=3, gpus=1,
                           timeline=[(0, 1), (100, 2), (200, 3)])
    assert starts == {1: 0, 2: 1000, 3: 150}
    assert run.node_sets[2] == 0b010


def test_a_factor_of_one_leaves_run_time_and_estimate_exact():
    """A callback factor of exactly 1.0 keeps the recorded seconds, even past a float's 53 bits
    (2**53 + 1 s would round to 2**53 through a float product)."""
    big = 2**53 + 1
    _, run, _ = _hand([(1, 0, big, 1, 1, big)], nodes=1, gpus=1, bases=[1.0])
    assert run.runtime.tolist() == [big] and run.estimate.tolist() == [big]


def test_a_factor_of_one_keeps_the_backfill_estimate_exact():
    """Two 1-GPU nodes, every factor 1.0. Job 1 holds node 0 until 2**53 (its estimate): head
    job 2 (2 GPUs) gets shadow 2**53, extra 0. Job 3 (1 GPU, estimate 2**53 + 1) would end one
    second past it (a float product would make it 2**53, on time): refused, it starts when
    job 2 ends."""
    big = 2**53
    table = gpu_table([(1, 0, big, 1, 1, big), (2, 0, 10, 2, 1, 10), (3, 0, 10, 1, 1, big + 1)])
    model = GpuNodes(gpu_site(nodes=2, gpus=1))
    run = run_count(prepare(table, model, shape="gpus"), model, "easy", Placement(),
                    lambda j, nodes, gpus: 1.0)
    assert run.start.tolist() == [0, big, big + 10]


def test_a_head_that_cannot_fit_before_the_capacity_falls_blocks_backfilling_and_is_dropped():
    """One-GPU nodes: one from 0, three from 100, one from 200. Job 1 holds node 0 until 250
    (estimate exact). At 150 head job 2 needs 3 GPUs: the site still manages three nodes ahead
    of now, so it waits, but no instant gives it 3 (2 free until 200, then one node): no shadow
    time, so job 3 (1 GPU) is not backfilled. At 200 job 2 is dropped; job 3 starts at 250."""
    starts, run, _ = _hand([(1, 0, 250, 1, 1, 250), (2, 150, 10, 3, 1, 10),
                            (3, 150, 10, 1, 1, 10)], nodes=3, gpus=1,
                           timeline=[(0, 1), (100, 3), (200, 1)])
    assert run.dropped == [(1, "never fits: the site manages at most 1 nodes from 200 on")]
    assert starts[1] == 0 and starts[3] == 250


def test_a_backfill_candidate_is_judged_by_its_scaled_estimate():
    """Two 1-GPU nodes. Job 1 holds node 0 until 100 (estimate exact): head job 2 (2 GPUs) gets
    shadow 100, extra 0. Job 3 (1 GPU, estimate 60) has factor 2.0: 120 s, past the shadow:
    refused (unscaled it would fit); it starts when job 2 ends (110)."""
    table = gpu_table([(1, 0, 100, 1, 1, 100), (2, 0, 10, 2, 1, 10), (3, 0, 30, 1, 1, 60)])
    model = GpuNodes(gpu_site(nodes=2, gpus=1))
    run = run_count(prepare(table, model, shape="gpus"), model, "easy", Placement(),
                    lambda j, nodes, gpus: 2.0 if j == 2 else 1.0)
    assert run.start.tolist() == [0, 100, 110]


def test_a_dropped_head_leaves_the_waiting_jobs_a_placement_watches():
    """The case above with a queue-watching placement: when job 3 is placed at 250, job 2
    (dropped at 200) is no longer waiting; job 3 is."""
    table = gpu_table([(1, 0, 250, 1, 1, 250), (2, 150, 10, 3, 1, 10), (3, 150, 10, 1, 1, 10)])
    site = gpu_site(nodes=3, gpus=1, timeline=[(0, 1), (100, 3), (200, 1)])
    _, run, placement = _run(table, site, "easy", watch=True)
    assert run.start.tolist()[2] == 250
    assert placement.seen[-1] == (2, frozenset({2}))
