"""The research seeds' figures, recomputed (issue 25): seed 001's static estimate of priority
assignment, and PAL-style metrics of what-if replays against a baseline.

**Seed 001's static estimate** (``static_estimate``). The seed's method: one job per benchmark,
each with its measured run time on the old (slow) and the new (fast) GPU model; a job's gain is
slow time / fast time. With half of the GPUs new:

- ``even`` (new GPUs spread regardless of job): a job lands on either model with equal chance,
  so it costs the mean of its two times;
- ``priority`` (median split): jobs whose gain is above the median gain run on the new GPUs,
  the others (at or below the median) on the old ones.

The estimate is 1 - total(priority) / total(even). Every job is assumed to get the GPU its rank
entitles it to, at once: no queue, no occupancy, no multi-GPU jobs.

**The no-wait split** (``no_wait_split``): the seed's method on a replayed workload's own jobs,
with no queue: each job's time on the site's slowest and fastest GPU model (its recorded run
time x the what-if's run-time factor on the first nodes of that model, its recorded shape,
scores 1.0; models ranked by their mean speed over the classes, as ``priority`` ranks them),
split by the replay's own gains and median. Set beside a replay of ``priority`` it separates
what the queue costs (jobs that found their side busy, or waited) from what the median split
itself costs; ``fast_s`` (every job on the fastest model) is the ceiling.

**PAL-style metrics** (``pal_metrics``): the figures of ``swftools.whatif.compare.figures`` that
PAL's evaluation reports (geometric-mean JCT, waits, bounded slowdown, utilization, makespan) plus
the 95th percentile of the wait, and total run time. ``change_text`` says how a figure moved
against a baseline, and whether that is better or worse (``METRICS`` gives each figure's good
direction): worse figures are named as plainly as better ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from swftools.errors import UsageError
from swftools.site import Site
from swftools.whatif.compare import figures
from swftools.whatif.sensitivity import Sensitivity

# (figure key, name, good direction): what the seeds' comparison reports, in its order
METRICS = (("geomean_jct_s", "geo-mean JCT", "lower"),
           ("mean_wait_s", "mean wait", "lower"),
           ("p95_wait_s", "p95 wait", "lower"),
           ("mean_bounded_slowdown", "mean bounded slowdown", "lower"),
           ("utilization", "utilization", "higher"),
           ("makespan_s", "makespan", "lower"),
           ("total_run_s", "total run time", "lower"))
SAME = 0.0005  # a ratio within this of 1 is "same" (what three decimals cannot tell apart)
FOLD = 2.0  # increases to this ratio or more are shown as factors (x5.60), not per cent


@dataclass(frozen=True)
class StaticEstimate:
    """Seed 001's static estimate over ``jobs``: per job (name, slow time, fast time, gain,
    whether it runs on the fast GPUs)."""

    jobs: tuple[tuple[str, float, float, float, bool], ...]
    median_gain: float
    even_s: float
    priority_s: float

    @property
    def reduction(self) -> float:
        """1 - total(priority) / total(even)."""
        return 1.0 - self.priority_s / self.even_s


def static_estimate(jobs: Sequence[tuple[str, float, float]]) -> StaticEstimate:
    """Seed 001's method on ``jobs`` = (name, slow time, fast time) per job (see the module
    docstring); UsageError for no jobs or a time that is not positive."""
    if not jobs:
        raise UsageError("the static estimate needs at least one job")
    for name, slow, fast in jobs:
        if not (slow > 0 and fast > 0):
            raise UsageError(f"job {name!r}: run times must be positive (slow {slow}, fast {fast})")
    gains = np.array([slow / fast for _, slow, fast in jobs], dtype=np.float64)
    median = float(np.median(gains))
    rows = tuple((name, float(slow), float(fast), float(g), bool(g > median))
                 for (name, slow, fast), g in zip(jobs, gains.tolist()))
    even = sum((slow + fast) / 2.0 for _, slow, fast, _, _ in rows)
    priority = sum(fast if on_fast else slow for _, slow, fast, _, on_fast in rows)
    return StaticEstimate(rows, median, float(even), float(priority))


def sensitivity_jobs(sens: Sensitivity, classes: Sequence[int] | None = None
                     ) -> list[tuple[str, float, float]]:
    """(class name, time on the file's first GPU model, time on its last) per job of
    ``classes`` (class indices; default one job per class) from a sensitivity model whose
    classes give measured run times (``run_time``), e.g. the MLPerf preset."""
    slow_model, fast_model = sens.gpu_models[0], sens.gpu_models[-1]
    out = []
    for c in (range(len(sens.classes)) if classes is None else classes):
        cls = sens.classes[int(c)]
        if not cls.run_time_s:
            raise UsageError(f"class {cls.name} of {sens.name} gives speeds, not measured run "
                             "times: the static estimate needs run times")
        out.append((cls.name, cls.run_time_s[slow_model], cls.run_time_s[fast_model]))
    return out


@dataclass(frozen=True)
class NoWaitSplit:
    """Total job time of a workload without a queue: ``even`` (mean of the two times),
    ``priority`` (the median split), ``fast`` (every job on the fastest model); ``fast_share``:
    the share of jobs the split sends to the fastest model."""

    even_s: float
    priority_s: float
    fast_s: float
    fast_share: float

    def cut(self, total_s: float) -> float:
        """1 - ``total_s`` / total(even)."""
        return 1.0 - total_s / self.even_s


def no_wait_split(table: pa.Table, site: Site, sens: Sensitivity, classes: np.ndarray
                  ) -> NoWaitSplit:
    """The seed's method on the replayable jobs of ``table`` (``classes``: the class index of
    each row, as ``assign_classes`` gives them) on ``site``: see the module docstring.
    UsageError when the site has a single GPU model (there is nothing to split)."""
    from swftools.replay.model import GpuNodes
    from swftools.replay.workload import prepare
    from swftools.whatif.sensitivity import factor_model

    fm = factor_model(site, sens)
    present = np.unique(fm.node_model)
    if len(present) < 2:
        raise UsageError(f"site {site.name} has one GPU model: the median split needs two")
    work = prepare(table, GpuNodes(site))
    cls = np.asarray(classes, dtype=np.int64)[work.row]
    speeds = fm.speed[:, present]
    gain = (speeds.max(axis=1) / speeds.min(axis=1))[cls]
    high = gain > float(np.median(gain)) if len(gain) else gain.astype(bool)
    by_speed = present[np.argsort(fm.speed[:, present].mean(axis=0), kind="stable")]
    slow_model, fast_model = int(by_speed[0]), int(by_speed[-1])
    node_model = fm.node_model.tolist()
    cache: dict[tuple[int, int, int, int], float] = {}

    def time_on(c: int, model: int, nodes: int, per_node: int) -> float:
        key = (c, model, nodes, per_node)
        if key not in cache:
            ks = [k for k, m in enumerate(node_model) if m == model][:nodes]
            cache[key] = fm.factor(c, ks, [list(range(per_node))] * len(ks))
        return cache[key]

    slow = np.empty(len(work))
    fast = np.empty(len(work))
    for j, (c, n, p, r) in enumerate(zip(cls.tolist(), work.nodes.tolist(),
                                         work.gpus_per_node.tolist(), work.runtime.tolist())):
        slow[j] = r * time_on(c, slow_model, n, p)
        fast[j] = r * time_on(c, fast_model, n, p)
    return NoWaitSplit(float(((slow + fast) / 2).sum()), float(np.where(high, fast, slow).sum()),
                       float(fast.sum()), float(high.mean()) if len(high) else 0.0)


def pal_metrics(jobs: pa.Table, capacity: list[tuple[int, int]]) -> dict[str, float]:
    """The ``METRICS`` of one replayed schedule (``compare.figures`` plus ``p95_wait_s``)."""
    out = figures(jobs, capacity)
    wait = jobs.column("wait_s").to_numpy().astype(np.float64)
    out["p95_wait_s"] = float(np.percentile(wait, 95)) if wait.size else 0.0
    return out


def model_utilization(jobs: pa.Table, gpu_model_of_node: Sequence[str], gpus_per_node: int
                      ) -> dict[str, float]:
    """Per GPU model: GPU-seconds its GPUs were busy / GPU-seconds they existed, from the first
    submit to the last end (a multi-node job holds size / nodes GPUs on each of its nodes)."""
    if jobs.num_rows == 0:
        return {m: 0.0 for m in dict.fromkeys(gpu_model_of_node)}
    span = float(jobs.column("end_time").to_numpy().max()
                 - jobs.column("submit_time").to_numpy().min())
    busy = dict.fromkeys(gpu_model_of_node, 0.0)
    for node_ids, size, run in zip(jobs.column("node_ids").to_pylist(),
                                   jobs.column("size").to_pylist(),
                                   jobs.column("run_s").to_pylist()):
        nodes = [int(n) for n in node_ids.split(",")] if node_ids else []
        for n in nodes:
            busy[gpu_model_of_node[n]] += run * size / len(nodes)
    held = {m: gpu_model_of_node.count(m) * gpus_per_node for m in busy}
    return {m: (busy[m] / (held[m] * span) if span > 0 else 0.0) for m in busy}


def change_text(value: float, base: float, direction: str) -> str:
    """How ``value`` compares with the baseline's ``base`` for a figure whose good
    ``direction`` is ``lower`` or ``higher``: ``same``, ``+3.7 % worse``, ``-2.7 % better``,
    ``x5.60 worse`` (an increase to x2 or more), or ``n/a (baseline 0)``."""
    if base == 0:
        return "same" if value == 0 else "n/a (baseline 0)"
    ratio = value / base
    if abs(ratio - 1.0) < SAME:
        return "same"
    better = (ratio < 1.0) == (direction == "lower")
    word = "better" if better else "worse"
    if ratio >= FOLD:
        return f"x{ratio:.2f} {word}"
    return f"{(ratio - 1.0) * 100:+.1f} % {word}"


def changes(metrics: dict[str, float], base: dict[str, float]) -> dict[str, list[str]]:
    """The ``METRICS`` that got better and worse against ``base``: ``{"better": [...],
    "worse": [...]}``, each entry ``<name> <change_text>``; unchanged figures are left out."""
    out: dict[str, list[str]] = {"better": [], "worse": []}
    for key, name, direction in METRICS:
        text = change_text(metrics[key], base[key], direction)
        for word, entries in out.items():
            if text.endswith(word):
                entries.append(f"{name} {text.removesuffix(' ' + word)}")
    return out


__all__ = ["METRICS", "NoWaitSplit", "StaticEstimate", "change_text", "changes",
           "model_utilization", "no_wait_split", "pal_metrics", "sensitivity_jobs",
           "static_estimate"]
