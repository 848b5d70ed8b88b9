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
of ``generate(N + M, s)``.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.metadata import TableMetadata
from swftools.site import Queue, load_site
from swftools.synth.arrivals import ArrivalClock, make_users
from swftools.synth.rng import Stream, cumulative
from swftools.synth.schedule import schedule
from swftools.synth.shapes import ShapeModel, ShapeSampler

DEFAULT_START = "2017-07-14T00:00:00+09:00"
SITE = "aaic"
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
    for q in load_site(SITE).queues:
        queues[q.name] = Queue(q.name, q.number, q.nodes_min, min(q.nodes_max, nodes),
                               q.gpus_per_node_min, min(q.gpus_per_node_max, gpus_per_node),
                               q.walltime_default_s, q.walltime_max_s)
    return queues


def generate(n_jobs: int, seed: int = 0, *, nodes: int = 38, gpus_per_node: int = 8,
             start: str = DEFAULT_START, users: int = 106,
             model: ShapeModel | None = None) -> pa.Table:
    """A synthetic AAIC-like job table of ``n_jobs`` jobs (job ids 1..N in submission order).

    Deterministic and prefix-stable for a ``seed``; times are UTC epoch seconds starting at
    ``start`` (ISO 8601 with offset). ``model`` overrides the calibrated shape parameters.
    """
    _check(n_jobs, seed, nodes, gpus_per_node, users)
    origin_s = _epoch(start)
    site = load_site(SITE)
    columns = _draw_jobs(n_jobs, seed, origin_s, nodes, gpus_per_node, users,
                         model or ShapeModel(), site.time_zone)
    start_s, finish_s = schedule(columns["submit_time"], columns["nodes"],
                                 columns["gpus_per_node"], columns.pop("run_s"),
                                 columns.pop("cancel_at_s"), nodes, gpus_per_node)
    columns["start_time"] = start_s
    columns["finish_time"] = finish_s
    columns["wait_s"] = start_s - columns["submit_time"]
    columns["walltime_s"] = finish_s - start_s
    columns["job_id"] = np.arange(1, n_jobs + 1, dtype=np.int64)
    metadata = TableMetadata(
        site=SITE, time_zone=site.time_zone, source_format="synth",
        synth={"seed": int(seed), "n_jobs": int(n_jobs), "nodes": int(nodes),
               "gpus_per_node": int(gpus_per_node), "start": start, "users": int(users)})
    return jt.from_columns(columns, metadata)


def _draw_jobs(n_jobs: int, seed: int, origin_s: int, nodes: int, gpus_per_node: int,
               n_users: int, model: ShapeModel, time_zone: str) -> dict[str, Any]:
    """Every attribute but the schedule, drawn event by event in submission order."""
    people = make_users(seed, n_users, max(1, round(n_users * GROUPS_PER_USER)))
    activity = cumulative([p.activity for p in people])
    who, when = Stream(seed, 2), Stream(seed, 3)
    clock = ArrivalClock(origin_s, time_zone)
    shapes = ShapeSampler(seed, model, _queues(gpus_per_node, nodes), nodes, gpus_per_node)
    rate_per_s = JOBS_PER_NODE_DAY * nodes / 86400.0 / shapes.mean_event_jobs(people)

    user_idx = np.empty(n_jobs, dtype=np.int64)
    cols = {k: np.empty(n_jobs, dtype=np.int64) for k in (
        "nodes", "gpus_per_node", "requested_walltime_s", "termcode", "submit_time", "run_s",
        "cancel_at_s")}
    queue_names: list[str] = []
    busy_s, last_submit, i = 0.0, origin_s, 0
    while i < n_jobs:
        busy_s += when.exponential() / rate_per_s
        user = who.pick(activity)
        sweep = who.u() < people[user].sweep_probability
        shape = shapes.event(sweep)
        submit = max(int(clock.clock(busy_s)), last_submit)
        for k in range(min(shape.jobs, n_jobs - i)):
            termcode, run_s, cancel_after_s = shapes.job(shape, k)
            user_idx[i] = user
            cols["nodes"][i] = shape.nodes
            cols["gpus_per_node"][i] = shape.gpus_per_node
            cols["requested_walltime_s"][i] = shape.requested_walltime_s
            cols["termcode"][i] = termcode
            cols["submit_time"][i] = submit
            cols["run_s"][i] = math.ceil(run_s)
            cols["cancel_at_s"][i] = submit + math.ceil(cancel_after_s) if termcode == 3 else -1
            queue_names.append(shape.queue.name)
            last_submit = submit
            i += 1
            if shape.jobs > 1:
                submit += int(when.u() * SWEEP_GAP_MAX_S)
    names = np.array([p.name for p in people], dtype=object)
    groups = np.array([p.group for p in people], dtype=object)
    cols["gpus"] = cols["nodes"] * cols["gpus_per_node"]
    return {**cols, "user": pa.array(names[user_idx], pa.string()),
            "group": pa.array(groups[user_idx], pa.string()),
            "queue": pa.array(queue_names, pa.string())}
