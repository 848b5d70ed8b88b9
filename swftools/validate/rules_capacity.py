"""Capacity rules: per-job size, utilisation sweep, and node packing on the node count in force.

Everything is a sort plus cumulative sums over start/end events (near-linear); the exact packing
check (first-fit decreasing) runs only at the few instants the bounds cannot decide, on per-size
job counts, deduplicated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from swftools.validate.context import Context
from swftools.validate.registry import NotApplicable, rule
from swftools.validate.rules_queue import node_shape

FFD_MAX_CASES = 20_000  # distinct undecided packing cases solved by FFD per trace
SEARCH_BUDGET = 20_000  # placements an exact packing search may try per case
UNSOLVED = 1 << 40


@dataclass
class Timeline:
    """Capacity in force over time: ``units[i]`` from ``since[i]`` (the first also covers before)."""

    since: np.ndarray
    units: np.ndarray
    unit: str  # "GPUs" or "processors" (the trace's unit, Context.unit_word)
    source: str
    severity: str = "error"  # an SWF header's MaxProcs is descriptive: violations are warnings

    def at(self, times: np.ndarray) -> np.ndarray:
        idx = np.searchsorted(self.since, times, side="right") - 1
        return self.units[np.clip(idx, 0, len(self.units) - 1)]


def gpu_timeline(ctx: Context) -> Timeline:
    """Processing-element capacity: the site's nodes x GPUs per node, else the SWF MaxProcs.

    Counted in the trace's unit (``ctx.unit_word``: GPUs, or processors for a CPU SWF trace).
    """
    if ctx.site is not None:
        site = ctx.site
        return Timeline(np.array(site.capacity_since, np.int64),
                        np.array(site.capacity_nodes, np.int64) * site.gpus_per_node,
                        ctx.unit_word, f"site {site.name}")
    max_procs = ctx.header_int("MaxProcs") if ctx.is_swf else None
    if max_procs is None or max_procs <= 0:
        raise NotApplicable("no site settings and no MaxProcs in an SWF header "
                            "(pass --site to give the capacity)", actionable=True)
    return Timeline(np.zeros(1, np.int64), np.array([max_procs], np.int64), ctx.unit_word,
                    "SWF header MaxProcs", "warning")


def when(ctx: Context, t: int) -> str:
    """An instant for messages: ISO UTC for absolute times, an offset for origin-less SWF."""
    if ctx.is_swf and ctx.meta.get("swf_time_origin") is None:
        return f"t={t} s"
    return datetime.fromtimestamp(int(t), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Sweep:
    """Start/end events of jobs that held resources, sorted (ends before starts at one instant).

    Index arrays are int32 when the events allow (a 10-million-job sweep has 2 x 10^7 events:
    each array kept here is a few tens of MB, and every rule of the sweep keeps them all)."""

    rows: np.ndarray  # table rows of the jobs swept
    start: np.ndarray
    finish: np.ndarray
    order: np.ndarray  # event order; events 0..k-1 are ends, k..2k-1 starts, then extra instants
    last: np.ndarray  # event index (in sorted order) closing each distinct instant
    instants: np.ndarray  # the distinct instants

    def running(self, deltas: np.ndarray, at: np.ndarray | None = None) -> np.ndarray:
        """Cumulative per-instant total of a per-job quantity over running jobs (int32 sums:
        counts and GPU totals of one trace stay far below 2**31), at every instant or at the
        instant indices ``at``. One quantity at a time keeps a 10-million-job sweep's memory to a
        few arrays of its events; the totals are int32."""
        deltas = np.asarray(deltas, dtype=np.int32)  # booleans count as 0/1
        k = len(deltas)
        events = np.zeros(len(self.order), np.int32)
        events[:k] = -deltas
        events[k:2 * k] = deltas
        events = events[self.order]
        np.cumsum(events, out=events)
        return events[self.last if at is None else self.last[at]]

    def jobs_at(self, t: int) -> np.ndarray:
        """Table rows of jobs running at instant ``t`` (start <= t < finish), by start time."""
        sel = np.flatnonzero((self.start <= t) & (self.finish > t))
        return self.rows[sel[np.argsort(self.start[sel], kind="stable")]]


def _index(values: np.ndarray) -> np.ndarray:
    """An index array as int32 when its values allow (half the memory of int64)."""
    return values.astype(np.int32) if len(values) < 2**31 - 1 else values


def sweep(ctx: Context, size: np.ndarray, size_known: np.ndarray, extra: np.ndarray) -> Sweep:
    start, sk = ctx.values("start_time")
    finish, fk = ctx.values("finish_time")
    sel = np.flatnonzero(sk & fk & size_known & (finish > start) & (size > 0))
    s, f = start[sel], finish[sel]
    times = np.concatenate((f, s, extra))
    # A stable sort by time keeps the concatenation order at one instant: ends, starts, extras.
    order = _index(np.argsort(times, kind="stable"))
    times = times[order]
    last = _index(np.flatnonzero(np.r_[times[1:] != times[:-1], True])) if len(order) else \
        np.zeros(0, np.int32)
    return Sweep(sel, s, f, order, last, times[last])


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """[first, end) index ranges of the runs of True in ``flags``."""
    edges = np.diff(np.r_[0, flags.astype(np.int8), 0])
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()))


def report_intervals(ctx: Context, sw: Sweep, flags: np.ndarray, describe, field: str,
                     severity: str | None = None) -> None:
    """One finding per violation interval (the first ``max_intervals``), then one summary."""
    intervals = runs(flags)
    cap = ctx.options.max_intervals
    for first, end in intervals[:cap]:
        t0 = int(sw.instants[first])
        t1 = int(sw.instants[end]) if end < len(sw.instants) else None
        jobs = sw.jobs_at(t0)
        trigger = int(jobs[-1]) if len(jobs) else None
        span = f"from {when(ctx, t0)}" + (f" for {t1 - t0} s" if t1 is not None else "")
        message, value, expected = describe(first, end)
        ctx.note(f"{span}: {message}; {len(jobs)} jobs running at {when(ctx, t0)}: "
                 f"{ctx.list_jobs(jobs)}", row=trigger, field=field, value=value,
                 expected=expected, severity=severity)
    if len(intervals) > cap:
        rest = intervals[cap:]
        total = sum(int(sw.instants[min(e, len(sw.instants) - 1)]) - int(sw.instants[f])
                    for f, e in rest)
        ctx.note(f"{len(rest)} more violation intervals (about {total} s in all), the first from "
                 f"{when(ctx, int(sw.instants[rest[0][0]]))}", field=field, value=len(rest),
                 severity=severity)


@rule("capacity-gpus", "error", "capacity",
      "At no instant do running jobs hold more GPUs (processors, for a CPU SWF trace: findings "
      "name the trace's unit) than the site has in force then (nodes_at x GPUs per node); "
      "without a site, than the SWF header's MaxProcs (a warning: the header is descriptive and "
      "may leave partitions out). Sweep over [start, finish) events; one finding per violation "
      "interval with the jobs running.")
def capacity_gpus(ctx: Context) -> None:
    ctx.require("start_time", "finish_time", "gpus")
    timeline = gpu_timeline(ctx)
    gpus, gk = ctx.values("gpus")
    sw = sweep(ctx, gpus, gk, timeline.since)
    if not len(sw.rows):
        raise NotApplicable("no job with a known start, finish and size")
    busy = sw.running(gpus[sw.rows])
    capacity = timeline.at(sw.instants)
    over = busy > capacity

    def describe(first: int, end: int):
        peak = int(busy[first:end].max())
        cap = int(capacity[first])
        return (f"{peak} {timeline.unit} busy at peak, {cap} available ({timeline.source})",
                peak, f"<= {cap}")

    report_intervals(ctx, sw, over, describe, "gpus", severity=timeline.severity)


def _chain(size: int) -> np.ndarray:
    """Job sizes forming a divisible chain with the node size (powers of two dividing it, and it)."""
    sizes = {size} | {1 << k for k in range(size.bit_length()) if size % (1 << k) == 0}
    return np.array(sorted(sizes), np.int64)


def ffd_nodes(counts: np.ndarray, size: int) -> int:
    """Nodes first-fit decreasing needs for ``counts[s]`` single-node jobs of ``s`` GPUs each."""
    free: list[int] = []
    for s in range(len(counts) - 1, 0, -1):
        for _ in range(int(counts[s])):
            for b, room in enumerate(free):
                if room >= s:
                    free[b] = room - s
                    break
            else:
                free.append(size - s)
    return len(free)


def packs(counts: np.ndarray, bins: int, size: int, budget: int = SEARCH_BUDGET) -> bool | None:
    """Whether ``counts[s]`` jobs of ``s`` GPUs fit on ``bins`` nodes of ``size`` GPUs (exact).

    Depth-first search, largest jobs first, one branch per distinct free capacity; None when
    ``budget`` placements were tried without an answer.
    """
    items = [s for s in range(len(counts) - 1, 0, -1) for _ in range(int(counts[s]))]
    if bins < 0 or any(s > size for s in items):
        return False
    if sum(items) > bins * size:
        return False
    free = [size] * bins
    steps = 0

    def place(i: int) -> bool | None:
        nonlocal steps
        if i == len(items):
            return True
        steps += 1
        if steps > budget:
            return None
        tried = set()
        for b, room in enumerate(free):
            if room >= items[i] and room not in tried:
                tried.add(room)
                free[b] -= items[i]
                result = place(i + 1)
                free[b] += items[i]
                if result is not False:
                    return result
        return False

    return place(0)


@rule("capacity-nodes", "error", "capacity",
      "Running jobs fit on the node count in force: multi-node jobs take whole nodes (M), "
      "single-node jobs of s GPUs are packed into nodes of G GPUs. At each instant, error when "
      "M + #(s > G/2) + max(ceil((sum of s <= G/2 - free GPUs beside those big jobs) / G), "
      "ceil(#(s = G/2) / 2)) > nodes (a proven lower bound); fine when "
      "M + #(sizes outside the divisible chain 1, 2, 4, ..., G) + ceil(their complement's GPUs / G) "
      "<= nodes (a packing exists); otherwise first-fit decreasing, then an exact search "
      "(bounded to 20,000 placements per case) decide, and a warning says when neither could.")
def capacity_nodes(ctx: Context) -> None:
    site = ctx.require_site()
    ctx.require("start_time", "finish_time")
    nodes, per_node, known = node_shape(ctx)
    G = site.gpus_per_node
    multi = nodes > 1
    size = np.where(multi, 0, np.minimum(per_node, G + 1))  # > G is flagged elsewhere
    holds = known & ((multi & (nodes > 0)) | (size > 0))
    since = np.array(site.capacity_since, np.int64)
    sw = sweep(ctx, np.where(multi, nodes, size), holds, since)
    if not len(sw.rows):
        raise NotApplicable("no job with a known start, finish and size")
    r = sw.rows
    m_nodes, s = np.where(multi[r], nodes[r], 0), size[r]
    big = s > G / 2
    half = s * 2 == G
    in_chain = np.isin(s, _chain(G))
    # The bounds are summed one running total at a time (each is an array over the instants).
    m = sw.running(m_nodes)
    del m_nodes
    loose = sw.running(np.where(big, 0, s)) - sw.running(np.where(big, np.maximum(G - s, 0), 0))
    np.maximum(-(-np.maximum(loose, 0) // G), -(-sw.running(half) // 2), out=loose)
    lower = m + sw.running(big) + loose  # m + #big + max(ceil(small - free / G), ceil(half / 2))
    del loose
    upper = m + sw.running(~in_chain & (s > 0)) + -(-sw.running(np.where(in_chain, s, 0)) // G)
    available = np.array([site.nodes_at(int(t)) for t in since], np.int64)
    have = available[np.clip(np.searchsorted(since, sw.instants, side="right") - 1, 0,
                             len(since) - 1)]
    proven = lower > have
    undecided = ~proven & (upper > have)
    unproven = np.zeros(len(have), bool)
    ffd = np.zeros(len(have), np.int64)
    idx = np.flatnonzero(undecided)
    if len(idx):
        counts = np.empty((len(idx), G + 2), np.int64)
        for v in range(1, G + 2):  # running jobs of each size, at the undecided instants
            counts[:, v] = sw.running(s == v, at=idx)
        counts[:, 0] = have[idx] - m[idx]
        cases, inverse = np.unique(counts, axis=0, return_inverse=True)
        needed = np.array([ffd_nodes(np.r_[0, c[1:]], G) if i < FFD_MAX_CASES else UNSOLVED
                           for i, c in enumerate(cases)], np.int64)
        verdict = np.zeros(len(cases), np.int8)  # 1 packs, -1 proven not to, 0 unknown
        for i, c in enumerate(cases):
            if needed[i] <= c[0]:
                verdict[i] = 1
            elif i < FFD_MAX_CASES:
                exact = packs(np.r_[0, c[1:]], int(c[0]), G)
                verdict[i] = 0 if exact is None else (1 if exact else -1)
        ffd[idx] = m[idx] + needed[inverse.ravel()]
        case_verdict = verdict[inverse.ravel()]
        proven[idx[case_verdict == -1]] = True
        unproven[idx] = case_verdict == 0

    def describe_proven(first: int, end: int):
        k = first + int(np.argmax(lower[first:end] - have[first:end]))
        if lower[k] > have[k]:
            return (f"at least {lower[k]} nodes needed ({m[k]} for multi-node jobs), "
                    f"{have[k]} in force", int(lower[k]), f"<= {have[k]} nodes")
        return (f"the running jobs cannot be packed on the {have[k]} nodes in force (exact "
                f"search; first-fit decreasing needs {ffd[k]})", int(ffd[k]), f"<= {have[k]} nodes")

    def describe_unproven(first: int, end: int):
        k = first
        if ffd[k] >= UNSOLVED:
            return (f"between {lower[k]} and {upper[k]} nodes needed, {have[k]} in force; "
                    f"not solved (more than {FFD_MAX_CASES} distinct cases)", int(upper[k]),
                    f"<= {have[k]} nodes")
        return (f"first-fit decreasing needs {ffd[k]} nodes (lower bound {lower[k]}), "
                f"{have[k]} in force: packing not proven", int(ffd[k]), f"<= {have[k]} nodes")

    report_intervals(ctx, sw, proven, describe_proven, "nodes")
    report_intervals(ctx, sw, unproven, describe_unproven, "nodes", severity="warning")


@rule("job-exceeds-machine", "error", "capacity",
      "No single job holds or requests more than the machine: GPUs (processors, for a CPU SWF "
      "trace; allocated or requested) within the capacity in force at its start (site) or "
      "MaxProcs (SWF header), "
      "nodes within the nodes in force or MaxNodes, GPUs per node within the node size. Against "
      "an SWF header (no site) a warning, as for capacity-gpus.")
def job_exceeds_machine(ctx: Context) -> None:
    timeline = gpu_timeline(ctx)
    start, sk = ctx.values("start_time")
    submit, _ = ctx.values("submit_time")
    at = np.where(sk, start, submit)
    cap = timeline.at(at)
    for column, label in (("gpus", "allocated"), ("requested_procs", "requested")):
        values, known = ctx.values(column)
        bad = known & (values > cap)
        ctx.flag(bad, column, lambda i, v=values, w=label:
                 f"{v[i]} {w} {timeline.unit} exceed the {cap[i]} {timeline.unit} of the machine "
                 f"({timeline.source})",
                 value=values, expected=lambda i: f"<= {cap[i]}", severity=timeline.severity)
    site = ctx.site
    if site is not None:
        nodes, per_node, known = node_shape(ctx)
        have = np.array([site.nodes_at(int(t)) for t in site.capacity_since], np.int64)
        since = np.array(site.capacity_since, np.int64)
        in_force = have[np.clip(np.searchsorted(since, at, side="right") - 1, 0, len(have) - 1)]
        ctx.flag(known & (nodes > in_force), "nodes",
                 lambda i: f"{nodes[i]} nodes, but the site has {in_force[i]}",
                 value=nodes, expected=lambda i: f"<= {in_force[i]}")
        ctx.flag(known & (per_node > site.gpus_per_node), "gpus_per_node",
                 lambda i: f"{per_node[i]} {ctx.unit_word} per node, but a node has "
                           f"{site.gpus_per_node}",
                 value=per_node, expected=f"<= {site.gpus_per_node}")
    elif ctx.is_swf and ctx.has("nodes") and ctx.header_int("MaxNodes"):
        max_nodes = ctx.header_int("MaxNodes")
        nodes, known = ctx.values("nodes")
        ctx.flag(known & (nodes > max_nodes), "nodes", lambda i: f"{nodes[i]} nodes > MaxNodes",
                 value=nodes, expected=f"<= {max_nodes}", severity="warning")
