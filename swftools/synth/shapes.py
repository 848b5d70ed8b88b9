"""Job shapes of the synthetic AAIC-like workload: size, GPUs, run time, queue, request, outcome.

Calibration notes (what each parameter is tuned against, see ``swftools.synth.calibration``):

- size classes (single GPU / single node multi-GPU / multi-node) -> 96 % single-GPU jobs among
  jobs of at least 60 s, 99 % single-node; GPU and node counts favour powers of two;
- planned run times per class: a split log-logistic law (separate spreads below and above the
  median) -> the walltime medians of successful jobs of at least 60 s and, through the spreads,
  the parallelism-walltime correlations of the balanced sample;
- requests -> WRA mean/median and the share of jobs requesting their queue's maximum;
- termination codes -> 83 % successful jobs.

The calibrated figures are medians and shares of fairly small groups (multi-node jobs are under
1 %), so successful jobs' run-time quantiles, size classes and request choices are stratified
(``swftools.synth.rng``): the figures land close to their targets for any seed from about
20,000 jobs on, instead of wandering with the sampling noise of a few hundred jobs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from swftools.site import Queue
from swftools.synth.rng import DyadicSequence, SoftQuota, Stream, StratifiedUniform, cumulative

SINGLE_GPU, SINGLE_NODE_MULTI_GPU, MULTI_NODE = 0, 1, 2

# Requests users type (minutes): round numbers. A request above a queue's limit becomes the limit.
REQUEST_LADDER_MIN = (10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 300, 360, 480, 600, 720, 960,
                      1080, 1440, 2160, 2880, 4320, 5760, 7200, 10080, 14400, 20160)


@dataclass(frozen=True)
class RunTimeLaw:
    """Split log-logistic run time ``median * exp(scale * logit(u))``, scale by side of median."""

    median_s: float
    scale_below: float
    scale_above: float
    max_s: float

    def quantile(self, u: float) -> float:
        """Run time (seconds, >= 1) at probability ``u``."""
        z = math.log(u / (1.0 - u))
        scale = self.scale_below if z < 0 else self.scale_above
        return min(max(self.median_s * math.exp(scale * z), 1.0), self.max_s)


@dataclass(frozen=True)
class ShapeModel:
    """Every tunable number of the job-shape model (defaults: calibrated on the AAIC paper)."""

    class_shares: tuple[float, float, float] = (0.965, 0.0265, 0.0085)
    run_times: tuple[RunTimeLaw, RunTimeLaw, RunTimeLaw] = (
        RunTimeLaw(1134.0, 1.8, 1.15, 336 * 3600.0),
        RunTimeLaw(19171.0, 1.5, 1.1, 168 * 3600.0),
        RunTimeLaw(591.0, 0.8, 1.2, 72 * 3600.0),
    )
    gpus_single_node: tuple[tuple[int, float], ...] = (
        (2, 0.20), (3, 0.02), (4, 0.19), (5, 0.01), (6, 0.02), (7, 0.01), (8, 0.55))
    nodes_multi_node: tuple[tuple[int, float], ...] = ((2, 0.85), (3, 0.03), (4, 0.10), (8, 0.02))
    sweep_size_min: int = 10
    sweep_size_max: int = 150
    sweep_radius_bins: int = 2  # a sweep's run-time quantiles stay within this many bins
    batch_sizes: tuple[tuple[int, float], ...] = ((1, 0.75), (2, 0.12), (3, 0.06), (4, 0.07))
    short_queue_max_planned_s: float = 1800.0
    middle_share: float = 0.03
    long_share: float = 0.008
    max_request_share: float = 0.337
    ratio_median: float = 0.064
    ratio_scale: float = 0.762
    ratio_elasticity: float = 0.25  # longer jobs are requested more tightly
    termcode_shares: tuple[float, ...] = (0.83, 0.095, 0.03, 0.04, 0.005)
    quick_failure_share: float = 0.45
    cancel_median_s: float = 900.0
    cancel_scale: float = 1.0
    exceed_over_request_max_s: int = 120
    quota_horizon_jobs: float = 400.0
    runtime_bins: int = 40


@dataclass
class EventShape:
    """What every job of one submission event shares."""

    size_class: int
    nodes: int
    gpus_per_node: int
    queue: Queue
    requested_walltime_s: int
    center_u: float
    jobs: int
    termcode: int | None  # None: drawn per job
    job_u: tuple[float, ...]  # per-job run-time quantiles (empty: a sweep, drawn near center_u)


class ShapeSampler:
    """Draws event shapes and per-job outcomes; stateful (quotas), consumed in job order."""

    def __init__(self, seed: int, model: ShapeModel, queues: dict[str, Queue], nodes: int,
                 gpus_per_node: int) -> None:
        self.model = model
        self.queues = queues
        self.nodes = nodes
        self.gpus_per_node = gpus_per_node
        self.classes = Stream(seed, 10)
        self.counts = Stream(seed, 11)
        self.runs = Stream(seed, 12)
        self.requests = Stream(seed, 13)
        self.outcomes = Stream(seed, 14)
        horizon = model.quota_horizon_jobs
        self.class_quota = SoftQuota(list(model.class_shares), horizon)
        # single-GPU jobs (sweeps): balanced bins; the small classes: a low-discrepancy sequence
        self.run_quantiles = StratifiedUniform(model.runtime_bins)
        self.small_class_quantiles = {SINGLE_NODE_MULTI_GPU: DyadicSequence(Stream(seed, 15)),
                                      MULTI_NODE: DyadicSequence(Stream(seed, 16))}
        self.max_quota = SoftQuota([model.max_request_share, 1 - model.max_request_share], horizon)
        self.ratio_quantiles = StratifiedUniform(20)
        self.termcode_cumulative = cumulative(list(model.termcode_shares))
        fitting = [(g, w) for g, w in model.gpus_single_node if g <= gpus_per_node] or [(1, 1.0)]
        self.gpu_values = [g for g, _ in fitting]
        self.gpu_cumulative = cumulative([w for _, w in fitting])
        self.node_values = [n for n, _ in model.nodes_multi_node]
        self.node_cumulative = cumulative([w for _, w in model.nodes_multi_node])
        self.batch_values = [b for b, _ in model.batch_sizes]
        self.batch_cumulative = cumulative([w for _, w in model.batch_sizes])

    def mean_event_jobs(self, users: list) -> float:
        """Expected jobs per submission event over ``users`` (weighted by their activity)."""
        m = self.model
        lo, hi = m.sweep_size_min, m.sweep_size_max + 1
        sweep_mean = (hi - lo) / math.log(hi / lo)
        batch_mean = sum(b * w for b, w in m.batch_sizes) / sum(w for _, w in m.batch_sizes)
        total = sum(u.activity for u in users)
        return sum(u.activity * (u.sweep_probability * sweep_mean
                                 + (1 - u.sweep_probability) * batch_mean) for u in users) / total

    def event(self, sweep: bool) -> EventShape:
        """Shape of the next submission event: a hyper-parameter sweep or a small batch."""
        m = self.model
        if sweep:
            lo, hi = math.log(m.sweep_size_min), math.log(m.sweep_size_max + 1)
            jobs = int(math.exp(lo + (hi - lo) * self.counts.u()))
        else:
            jobs = self.batch_values[self.counts.pick(self.batch_cumulative)]
        if sweep:  # sweeps are single-GPU jobs; the quota makes up for them with other events
            size_class = SINGLE_GPU
            self.class_quota.count(SINGLE_GPU, jobs)
        else:
            size_class = self.class_quota.choose(self.classes, jobs)
        nodes, per_node = 1, 1
        if size_class == SINGLE_NODE_MULTI_GPU:
            per_node = self.gpu_values[self.counts.pick(self.gpu_cumulative)]
        elif size_class == MULTI_NODE:
            nodes = min(self.node_values[self.counts.pick(self.node_cumulative)], self.nodes)
            per_node = self.gpus_per_node
            if nodes == 1:  # a one-node site: the job becomes a whole-node job
                size_class = SINGLE_NODE_MULTI_GPU if per_node > 1 else SINGLE_GPU
        # A sweep shares a run-time quantile (similar jobs) and draws outcomes job by job; a small
        # batch shares one outcome (same script, same fate) and draws each job's run time.
        # Successful jobs' quantiles are stratified: the calibrated figures are on those.
        termcode = None if sweep else self.outcomes.pick(self.termcode_cumulative)
        if sweep:
            center_u, job_u = self.run_quantiles.peek(self.runs), ()
            # the request must cover the sweep's longest members: the top of its window
            top = min(int(center_u * m.runtime_bins) + m.sweep_radius_bins + 1,
                      m.runtime_bins - 0.5)
            planned_s = m.run_times[size_class].quantile(top / m.runtime_bins)
        else:
            job_u = tuple(self._stratified_u(size_class) if termcode == 0 else self.runs.u()
                          for _ in range(jobs))
            center_u = max(job_u)
            planned_s = m.run_times[size_class].quantile(center_u)
        queue = self._queue(size_class, planned_s)
        request = self._request(queue, planned_s, jobs)
        return EventShape(size_class, nodes, per_node, queue, request, center_u, jobs, termcode,
                          job_u)

    def _stratified_u(self, size_class: int) -> float:
        if size_class == SINGLE_GPU:
            return self.run_quantiles.draw(self.runs)
        return self.small_class_quantiles[size_class].draw()

    def _queue(self, size_class: int, planned_s: float) -> Queue:
        m, q = self.model, self.queues
        if size_class == MULTI_NODE:
            return q["Normal"]
        if planned_s > q["Middle"].walltime_max_s:
            return q["Long"]
        if planned_s > q["Normal"].walltime_max_s:
            return q["Middle"] if self.requests.u() < 0.7 else q["Long"]
        u = self.requests.u()
        if size_class == SINGLE_GPU and planned_s <= m.short_queue_max_planned_s and u < 0.12:
            return q["Short"]
        if u > 1 - m.middle_share:
            return q["Middle"]
        if u > 1 - m.middle_share - m.long_share:
            return q["Long"]
        return q["Normal"]

    def _request(self, queue: Queue, planned_s: float, jobs: int) -> int:
        """Requested walltime: the queue's limit, or a round value above ``planned_s / ratio``."""
        m = self.model
        u = self.ratio_quantiles.draw(self.requests, jobs)
        spread = math.exp(m.ratio_scale * math.log(u / (1 - u)))
        tightness = (planned_s / 1800.0) ** m.ratio_elasticity
        ratio = min(1.0, max(1e-3, m.ratio_median * spread * tightness))
        wanted_s = planned_s / ratio
        request = next((minutes * 60 for minutes in REQUEST_LADDER_MIN if minutes * 60 >= wanted_s),
                       queue.walltime_max_s)
        if request >= queue.walltime_max_s:  # asked for more than the limit: gets the limit
            self.max_quota.count(0, jobs)
            return queue.walltime_max_s
        if self.max_quota.choose(self.requests, jobs) == 0:
            return queue.walltime_max_s
        return request

    def job(self, shape: EventShape, index: int) -> tuple[int, float, float]:
        """``(termcode, run_s, cancel_after_s)`` of one job of ``shape``.

        ``run_s`` is the run time once started; for cancelled jobs (termcode 3) the scheduler
        decides, from ``cancel_after_s`` (delay after submission), whether the job ever ran.
        """
        m = self.model
        if shape.job_u:
            u = shape.job_u[index]
        else:
            u = self.run_quantiles.draw_near(self.runs, shape.center_u, m.sweep_radius_bins)
        planned_s = min(m.run_times[shape.size_class].quantile(u), shape.requested_walltime_s)
        termcode = shape.termcode
        if termcode is None:
            termcode = self.outcomes.pick(self.termcode_cumulative)
        request = shape.requested_walltime_s
        if termcode == 2 and request == shape.queue.walltime_max_s:
            termcode = 1  # jobs asking for the queue's limit rarely outlive it; they fail instead
        cancel_after_s = 0.0
        if termcode == 0:
            run_s = planned_s
        elif termcode == 1:
            if self.outcomes.u() < m.quick_failure_share:
                run_s = 1 + 58 * self.outcomes.u()
            else:
                run_s = planned_s * self.outcomes.u() ** 1.5
        elif termcode == 2:
            run_s = request + m.exceed_over_request_max_s * self.outcomes.u()
        elif termcode == 3:
            cancel_after_s = m.cancel_median_s * math.exp(m.cancel_scale * self.outcomes.logistic())
            run_s = request
        else:
            run_s = planned_s * self.outcomes.u()
        return termcode, max(1.0, run_s), max(1.0, cancel_after_s)
