"""Calibrated synthetic AAIC-like job logs (``swftools synth``).

``generate(n_jobs, seed)`` returns a canonical job table whose distributions follow the AAIC
workload paper (Takizawa, Ogawa, Takano, IPSJ HPC170, 2019); ``swftools.synth.calibration``
states the targets, the filters they are measured with, and measures them. The pieces:

- ``synth_arrivals``: 106 users in ~14 groups with heavy-tailed activity; submission events
  (single jobs, small batches, hyper-parameter sweeps) peaking in weekday business hours;
- ``synth_shapes``: size class, GPUs, queue, requested walltime, run time, termination code;
- ``synth_schedule``: a feasible schedule on ``nodes`` x ``gpus_per_node`` GPUs.

Every draw comes from streams consumed in job order and every start depends only on earlier
jobs, so the output is deterministic and prefix-stable: ``generate(N, s)`` is the first N rows
of ``generate(N + M, s)``. ``generate_chunks`` yields the same rows in chunks of bounded size
(the generator's state carries over between chunks), so a 10-million-job log is written with
memory that does not grow with N (``write_log``).

``site`` targets another site than AAIC (e.g. the ``abci`` preset): the AAIC job model draws the
jobs on the site's nodes and GPUs per node, then each job goes to the site queue that fits it
(``SiteQueues``).
"""

from __future__ import annotations

import math
from datetime import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.errors import count
from swftools.metadata import TableMetadata
from swftools.site import Queue, Site, load_site, resolve_site
from swftools.synth.arrivals import ArrivalClock, make_users
from swftools.synth.rng import Stream, cumulative
from swftools.synth.schedule import Scheduler
from swftools.synth.shapes import ShapeModel, ShapeSampler

DEFAULT_START = "2017-07-14T00:00:00+09:00"
SITE = "aaic"
AAIC_NODES = 38  # nodes of the AAIC model (its Normal queue's limit)
CHUNK_JOBS = 250_000  # rows per chunk of generate_chunks / write_log
# Mean submission rate per node and day (about 700 jobs a day on 38 nodes), chosen so that the
# GPUs are about 60 % busy on average; scaled by the node count so the load does not depend on it.
JOBS_PER_NODE_DAY = 700 / 38
GROUPS_PER_USER = 14 / 106
SWEEP_GAP_MAX_S = 6  # seconds between two submissions of one sweep (a submit loop)


def _epoch(text: str) -> int:
    try:
        instant = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"start: {text!r} is not an ISO 8601 instant") from None
    if instant.tzinfo is None:
        raise ValueError(f"start: {text!r} has no UTC offset (e.g. +09:00)")
    return int(instant.timestamp())


def _check(n_jobs: int, seed: int, nodes: int, gpus_per_node: int, users: int) -> None:
    for name, value, low in (("n_jobs", n_jobs, 0), ("seed", seed, 0), ("nodes", nodes, 1),
                             ("gpus_per_node", gpus_per_node, 1), ("users", users, 1)):
        if not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def _queues(gpus_per_node: int, nodes: int) -> dict[str, Queue]:
    queues = {}
    for q in load_site(SITE).queues:  # the AAIC model's queues (Short, Normal, Middle, Long)
        queues[q.name] = Queue(q.name, q.number, q.nodes_min, min(q.nodes_max, nodes),
                               q.gpus_per_node_min, min(q.gpus_per_node_max, gpus_per_node),
                               q.walltime_default_s, q.walltime_max_s)
    return queues


def resolve_target(site: Site | str | Path | None, nodes: int | None,
            gpus_per_node: int | None) -> tuple[Site, int, int]:
    """The target site (default AAIC) and the node and GPU counts to schedule on."""
    target = resolve_site(site) if site is not None else load_site(SITE)
    aaic = target.name == SITE
    if nodes is None:
        nodes = AAIC_NODES if aaic else target.max_nodes
    if gpus_per_node is None:
        gpus_per_node = 8 if aaic else target.gpus_per_node
    return target, nodes, gpus_per_node


def generate(n_jobs: int, seed: int = 0, *, nodes: int | None = None,
             gpus_per_node: int | None = None, start: str = DEFAULT_START, users: int = 106,
             model: ShapeModel | None = None, site: Site | str | Path | None = None) -> pa.Table:
    """A synthetic AAIC-like job table of ``n_jobs`` jobs (job ids 1..N in submission order).

    Deterministic and prefix-stable for a ``seed``; times are UTC epoch seconds starting at
    ``start`` (ISO 8601 with offset). ``model`` overrides the calibrated shape parameters.
    ``site`` (default AAIC: 38 nodes x 8 GPUs) gives the nodes, GPUs per node, time zone and
    queues (``nodes`` and ``gpus_per_node`` override the first two).
    """
    chunks = list(generate_chunks(n_jobs, seed, nodes=nodes, gpus_per_node=gpus_per_node,
                                  start=start, users=users, model=model, site=site,
                                  chunk_jobs=max(n_jobs, 1)))
    return chunks[0]


def generate_chunks(n_jobs: int, seed: int = 0, *, nodes: int | None = None,
                    gpus_per_node: int | None = None, start: str = DEFAULT_START,
                    users: int = 106, model: ShapeModel | None = None,
                    site: Site | str | Path | None = None,
                    chunk_jobs: int = CHUNK_JOBS) -> Iterator[pa.Table]:
    """``generate``'s rows as job tables of at most ``chunk_jobs`` rows each (at least one
    table, empty when ``n_jobs`` is 0); their concatenation is ``generate(n_jobs, seed, ...)``."""
    target, nodes, gpus_per_node = resolve_target(site, nodes, gpus_per_node)
    _check(n_jobs, seed, nodes, gpus_per_node, users)
    if not isinstance(chunk_jobs, (int, np.integer)) or chunk_jobs < 1:
        raise ValueError(f"chunk_jobs must be an integer >= 1, got {chunk_jobs!r}")
    mapper = None if target.name == SITE else SiteQueues(target, nodes, gpus_per_node)
    drawer = _Drawer(seed, _epoch(start), nodes, gpus_per_node, users, model or ShapeModel(),
                     target.time_zone)
    scheduler = Scheduler(nodes, gpus_per_node)
    metadata = TableMetadata(
        site=target.name, time_zone=target.time_zone, source_format="synth",
        synth={"seed": int(seed), "n_jobs": int(n_jobs), "nodes": int(nodes),
               "gpus_per_node": int(gpus_per_node), "start": start, "users": int(users)})
    done = 0
    while True:
        count = min(chunk_jobs, n_jobs - done)
        columns = drawer.draw(count)
        if mapper is not None:
            mapper.apply(columns)
        start_s, finish_s = scheduler.place(columns["submit_time"], columns["nodes"],
                                            columns["gpus_per_node"], columns.pop("run_s"),
                                            columns.pop("cancel_at_s"))
        columns["start_time"] = start_s
        columns["finish_time"] = finish_s
        columns["wait_s"] = start_s - columns["submit_time"]
        columns["walltime_s"] = finish_s - start_s
        columns["job_id"] = np.arange(done + 1, done + count + 1, dtype=np.int64)
        yield jt.from_columns(columns, metadata)
        done += count
        if done >= n_jobs:
            return


def write_log(path: str | Path, n_jobs: int, seed: int = 0, *, form: str = "raw",
              force: bool = False, chunk_jobs: int = CHUNK_JOBS, **options: Any) -> list[str]:
    """Generate and write an NQSII log chunk by chunk (memory bounded by ``chunk_jobs``);
    the bytes equal ``nqsii.write(generate(n_jobs, seed, **options), path, form=form)``."""
    from swftools.formats import nqsii

    site = options.get("site")
    chunks = generate_chunks(n_jobs, seed, chunk_jobs=chunk_jobs, **options)
    return nqsii.write_chunks(chunks, path, form=form, site=site, force=force)


class SiteQueues:
    """Puts AAIC-model jobs into another site's queues (vectorised, job by job).

    A job goes to the GPU queue that admits its node count and GPUs per node with the fewest
    GPUs per node, then the fewest nodes (file order breaks ties); it holds at least the queue's
    minimum GPUs per node (allocation by resource type: a 2-GPU job in a 4-GPU queue holds 4).
    A request above the queue's walltime limit becomes the limit; a job whose run would pass it
    is killed there (termcode 2, run = limit), as the scheduler would.
    """

    def __init__(self, site: Site, nodes: int, gpus_per_node: int) -> None:
        gpu_queues = [q for q in site.queues if q.gpus_per_node_max >= 1]
        if not gpu_queues:
            raise ValueError(f"site {site.name}: no queue with GPUs")
        order = sorted(range(len(gpu_queues)),
                       key=lambda i: (gpu_queues[i].gpus_per_node_max, gpu_queues[i].nodes_max, i))
        self.site = site
        self.queues = [gpu_queues[i] for i in order]
        self.names = np.array([q.name for q in self.queues], dtype=object)
        self.gpus_min = np.array([max(1, q.gpus_per_node_min) for q in self.queues], np.int64)
        self.walltime_max = np.array([q.walltime_max_s for q in self.queues], np.int64)

    def apply(self, cols: dict[str, Any]) -> None:
        """Rewrite ``cols`` (``_Drawer.draw``'s columns) in place for the site's queues."""
        nodes, per = cols["nodes"], cols["gpus_per_node"]
        chosen = np.full(len(nodes), -1, dtype=np.int64)
        for i, q in enumerate(self.queues):
            fits = ((chosen < 0) & (nodes >= q.nodes_min) & (nodes <= q.nodes_max)
                    & (per <= q.gpus_per_node_max))
            chosen[fits] = i
        if (chosen < 0).any():
            j = int(np.argmax(chosen < 0))
            raise ValueError(f"site {self.site.name}: no queue admits a job of "
                             f"{count(int(nodes[j]), 'node')} x {count(int(per[j]), 'GPU')}")
        per = np.maximum(per, self.gpus_min[chosen])
        limit = self.walltime_max[chosen]
        old_request = cols["requested_walltime_s"]
        request = np.minimum(old_request, limit)
        run, termcode = cols["run_s"], cols["termcode"]
        exceeded = termcode == 2
        killed = ~exceeded & (termcode != 3) & (run > request)
        cols["run_s"] = np.where(exceeded, request + (run - old_request), np.minimum(run, request))
        cols["termcode"] = np.where(killed, 2, termcode)
        cols["requested_walltime_s"] = request
        cols["gpus_per_node"] = per
        cols["gpus"] = nodes * per
        cols["queue"] = pa.array(self.names[chosen], pa.string())


class _Drawer:
    """Every attribute but the schedule, drawn event by event in submission order; ``draw``
    continues where the previous call stopped (an event may span two calls)."""

    def __init__(self, seed: int, origin_s: int, nodes: int, gpus_per_node: int, n_users: int,
                 model: ShapeModel, time_zone: str) -> None:
        self.people = make_users(seed, n_users, max(1, round(n_users * GROUPS_PER_USER)))
        self.activity = cumulative([p.activity for p in self.people])
        self.who, self.when = Stream(seed, 2), Stream(seed, 3)
        self.clock = ArrivalClock(origin_s, time_zone)
        self.shapes = ShapeSampler(seed, model, _queues(gpus_per_node, nodes), nodes,
                                   gpus_per_node)
        self.rate_per_s = (JOBS_PER_NODE_DAY * nodes / 86400.0
                           / self.shapes.mean_event_jobs(self.people))
        self.busy_s, self.last_submit = 0.0, origin_s
        self.pending: tuple[int, Any, int, int] | None = None  # user, shape, next index, submit
        self.names = np.array([p.name for p in self.people], dtype=object)
        self.groups = np.array([p.group for p in self.people], dtype=object)

    def draw(self, n_jobs: int) -> dict[str, Any]:
        """The next ``n_jobs`` jobs' columns (plus ``run_s`` and ``cancel_at_s``)."""
        who, when, shapes = self.who, self.when, self.shapes
        user_idx = np.empty(n_jobs, dtype=np.int64)
        cols = {k: np.empty(n_jobs, dtype=np.int64) for k in (
            "nodes", "gpus_per_node", "requested_walltime_s", "termcode", "submit_time",
            "run_s", "cancel_at_s")}
        queue_names: list[str] = []
        i = 0
        while i < n_jobs:
            if self.pending is None:
                self.busy_s += when.exponential() / self.rate_per_s
                user = who.pick(self.activity)
                sweep = who.u() < self.people[user].sweep_probability
                shape = shapes.event(sweep)
                submit = max(int(self.clock.clock(self.busy_s)), self.last_submit)
                k = 0
            else:
                user, shape, k, submit = self.pending
            while k < shape.jobs and i < n_jobs:
                termcode, run_s, cancel_after_s = shapes.job(shape, k)
                user_idx[i] = user
                cols["nodes"][i] = shape.nodes
                cols["gpus_per_node"][i] = shape.gpus_per_node
                cols["requested_walltime_s"][i] = shape.requested_walltime_s
                cols["termcode"][i] = termcode
                cols["submit_time"][i] = submit
                cols["run_s"][i] = math.ceil(run_s)
                cols["cancel_at_s"][i] = (submit + math.ceil(cancel_after_s) if termcode == 3
                                          else -1)
                queue_names.append(shape.queue.name)
                self.last_submit = submit
                i += 1
                k += 1
                if shape.jobs > 1:
                    submit += int(when.u() * SWEEP_GAP_MAX_S)
            self.pending = (user, shape, k, submit) if k < shape.jobs else None
        cols["gpus"] = cols["nodes"] * cols["gpus_per_node"]
        return {**cols, "user": pa.array(self.names[user_idx], pa.string()),
                "group": pa.array(self.groups[user_idx], pa.string()),
                "queue": pa.array(queue_names, pa.string())}


def _draw_jobs(n_jobs: int, seed: int, origin_s: int, nodes: int, gpus_per_node: int,
               n_users: int, model: ShapeModel, time_zone: str) -> dict[str, Any]:
    """Every attribute but the schedule of the first ``n_jobs`` jobs (one ``_Drawer`` call)."""
    return _Drawer(seed, origin_s, nodes, gpus_per_node, n_users, model, time_zone).draw(n_jobs)
