"""What a replay produces: per-job schedule, skipped jobs, summary; deterministic output files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.atomic import atomic_dir
from swftools.resources import load_json

BOUNDED_SLOWDOWN_TAU_S = 10

JOBS_SCHEMA = pa.schema([
    pa.field("job_id", pa.int64(), nullable=False),
    pa.field("queue", pa.string()),
    pa.field("submit_time", pa.int64(), nullable=False),
    pa.field("start_time", pa.int64(), nullable=False),
    pa.field("end_time", pa.int64(), nullable=False),
    pa.field("wait_s", pa.int64(), nullable=False),
    pa.field("run_s", pa.int64(), nullable=False),
    pa.field("estimate_s", pa.int64(), nullable=False),
    pa.field("size", pa.int64(), nullable=False),
    pa.field("nodes", pa.int64()),
    pa.field("node_ids", pa.string()),
    pa.field("gpu_ids", pa.string()),
])
# With run-time factors (what-if replays): ``run_s`` and ``estimate_s`` are the replayed (scaled)
# run time and the scaled estimate EASY used (``end_time = start_time + run_s``), and the trace's
# own values follow; without factors the per-job table is exactly ``JOBS_SCHEMA``.
SCALED_JOBS_SCHEMA = JOBS_SCHEMA.append(
    pa.field("recorded_run_s", pa.int64(), nullable=False)).append(
    pa.field("recorded_estimate_s", pa.int64(), nullable=False))
SKIPPED_SCHEMA = pa.schema([
    pa.field("job_id", pa.int64(), nullable=False),
    pa.field("reason", pa.string(), nullable=False),
])
OUTPUT_FILES = ("jobs.parquet", "jobs.csv", "skipped.csv", "summary.json")


@dataclass
class ReplayResult:
    """A replayed schedule.

    ``jobs``: one row per replayed job in queue order (``JOBS_SCHEMA``); ``skipped``: job id and
    reason for every job that was not replayed; ``summary``: the figures of
    ``schemas/replay-summary.schema.json``; ``capacity``: the model's capacity timeline as
    ``(since, units)`` pairs (used by ``compare``).
    """

    jobs: pa.Table
    skipped: pa.Table
    summary: dict[str, Any]
    capacity: list[tuple[int, int]] = field(default_factory=list)

    def write(self, out_dir: str | Path, force: bool = False,
              extra: dict[str, str] | None = None) -> list[Path]:
        """Write ``jobs.parquet``, ``jobs.csv``, ``skipped.csv``, ``summary.json`` and the
        ``extra`` text files (name -> content) into ``out_dir``, all at once (atomic)."""
        import pyarrow.csv as pacsv  # on use: a replay without --out needs neither (start-up)

        from swftools.fileio import write_parquet

        extra = extra or {}
        with atomic_dir(out_dir, force=force) as tmp:
            write_parquet(self.jobs, tmp / "jobs.parquet")
            pacsv.write_csv(self.jobs, tmp / "jobs.csv")
            pacsv.write_csv(self.skipped, tmp / "skipped.csv")
            (tmp / "summary.json").write_text(summary_json(self.summary), encoding="utf-8")
            for name, text in extra.items():
                (tmp / name).write_text(text, encoding="utf-8")
        return [Path(out_dir) / name for name in (*OUTPUT_FILES, *extra)]


def summary_json(summary: dict[str, Any]) -> str:
    """The summary as stable, pretty JSON."""
    return json.dumps(summary, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def summary_schema() -> dict[str, Any]:
    """JSON Schema of the summary (``schemas/replay-summary.schema.json``)."""
    return load_json("replay-summary.schema.json")


def peak_busy(start: np.ndarray, end: np.ndarray, size: np.ndarray,
              steps: tuple[np.ndarray, np.ndarray] | None = None) -> int:
    """Largest number of units held at once; jobs hold ``[start, end)`` (``steps``: the
    ``busy_steps`` of the same jobs, when already computed)."""
    if len(start) == 0:
        return 0
    _, level = steps if steps is not None else busy_steps(start, end, size)
    # within one instant ends come before starts, so the level peaks at the end of an instant
    return int(max(0, level.max()))


def busy_steps(start: np.ndarray, end: np.ndarray, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step function of units held: (instants, level from each instant on); ``[start, end)``."""
    times = np.concatenate([start, end])
    # the level after all changes of one instant does not depend on their order: sort by time
    # only, and keep one copy of each array of 2 x jobs at a time (10M jobs: 160 MB each)
    order = np.argsort(times, kind="stable")
    times = times[order]
    level = np.concatenate([units, -units])[order]
    del order
    np.cumsum(level, out=level)
    last = np.empty(len(times), dtype=bool)
    np.not_equal(times[1:], times[:-1], out=last[:-1])
    last[-1:] = True  # level after all changes of one instant
    return times[last], level[last]


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` without its hash table, which takes 15x longer on the near-sorted
    event instants of a large replay (0.9 s vs 0.06 s for 920,000 of them) and imports
    ``numpy.ma`` (~10 ms a process): signed integers spanning at most a few times their count
    (job sizes, GPU sets) by counting, others by sorting."""
    if values.size and values.dtype.kind == "i":
        low, high = int(values.min()), int(values.max())
        if high - low <= 4 * values.size + 1024:
            return (np.flatnonzero(np.bincount(values - low)) + low).astype(values.dtype)
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if ordered.size else ordered


def capacity_steps(capacity: list[tuple[int, int]], times: np.ndarray) -> np.ndarray:
    """Capacity in force at each instant (the first entry also covers earlier times)."""
    since = np.array([t for t, _ in capacity], dtype=np.int64)
    units = np.array([u for _, u in capacity], dtype=np.int64)
    return units[np.maximum(np.searchsorted(since, times, side="right") - 1, 0)]


UTILIZATION_CHUNK = 1 << 20  # grid segments at a time (a replay of 10M jobs has 20M of them)


def utilization(start: np.ndarray, end: np.ndarray, size: np.ndarray,
                capacity: list[tuple[int, int]], t0: int, t1: int,
                steps: tuple[np.ndarray, np.ndarray] | None = None) -> float | None:
    """Busy unit-seconds over available unit-seconds in ``[t0, t1)``.

    Available is the capacity in force, or the units busy when more: GPUs of nodes that left
    the managed pool stay available while the jobs they still hold run. ``steps``: the
    ``busy_steps`` of the same jobs, when already computed.
    """
    if t1 <= t0:
        return None
    times, level = steps if steps is not None else busy_steps(start, end, size)
    cap_times = np.array([t for t, _ in capacity], dtype=np.int64)
    # the grid: the step function's instants (sorted, distinct) with t0, t1 and the capacity
    # changes inside merged in -- a few points, so inserted, not sorted again with the rest
    points = sorted_distinct(np.concatenate([[t0, t1], cap_times[(cap_times > t0) &
                                                                   (cap_times < t1)]]))
    at = np.searchsorted(times, points)
    known = (at < len(times)) & (times[np.minimum(at, len(times) - 1)] == points) \
        if len(times) else np.zeros(len(points), dtype=bool)
    grid = np.insert(times, at[~known], points[~known])
    grid = grid[np.searchsorted(grid, t0):np.searchsorted(grid, t1, side="right")]
    busy_total = total = 0  # unit-seconds, exact integers
    chunk = UTILIZATION_CHUNK
    for lo in range(0, len(grid) - 1, chunk):
        left = grid[lo:lo + chunk + 1]
        idx = np.searchsorted(times, left[:-1], side="right") - 1
        busy = np.where(idx >= 0, level[np.maximum(idx, 0)], 0) if len(level) else np.zeros_like(idx)
        available = np.maximum(capacity_steps(capacity, left[:-1]), busy)
        width = np.diff(left)
        busy_total += int((busy * width).sum())
        total += int((available * width).sum())
    return float(busy_total) / float(total) if total else None


def bounded_slowdown(wait: np.ndarray, run: np.ndarray) -> np.ndarray:
    """Per job ``max(1, (wait + run) / max(run, tau))``, tau = ``BOUNDED_SLOWDOWN_TAU_S``."""
    return np.maximum(1.0, (wait + run) / np.maximum(run, BOUNDED_SLOWDOWN_TAU_S))


def summarize(jobs: pa.Table, skipped: pa.Table, *, model: str, policy: str, allocation: str | None,
              kill_at_request: bool, unit: str, capacity: list[tuple[int, int]]) -> dict[str, Any]:
    """The replay summary: jobs, makespan, waits, bounded slowdown, utilization, peak busy."""
    submit, start, end, run, size = (jt.to_numpy(jobs.column(name)) for name in (
        "submit_time", "start_time", "end_time", "run_s", "size"))  # required: no nulls
    reasons: dict[str, int] = {}
    for reason in skipped.column("reason").to_pylist():
        key = reason.split(":")[0]
        reasons[key] = reasons.get(key, 0) + 1
    summary: dict[str, Any] = {
        "model": model,
        "policy": policy,
        "allocation": allocation,
        "kill_at_request": kill_at_request,
        "unit": unit,
        "capacity": max((units for _, units in capacity), default=0),
        "jobs": int(jobs.num_rows),
        "skipped": int(skipped.num_rows),
        "skipped_by_reason": dict(sorted(reasons.items())),
        "first_submit_time": None, "last_end_time": None, "makespan_s": 0,
        "mean_wait_s": None, "median_wait_s": None,
        "bounded_slowdown_tau_s": BOUNDED_SLOWDOWN_TAU_S, "mean_bounded_slowdown": None,
        "utilization": None, "peak_busy": 0,
    }
    if jobs.num_rows == 0:
        return summary
    wait = start - submit
    t0, t1 = int(submit.min()), int(end.max())
    bsld = bounded_slowdown(wait, run)
    steps = busy_steps(start, end, size)
    used = utilization(start, end, size, capacity, t0, t1, steps)
    summary.update({
        "first_submit_time": t0,
        "last_end_time": t1,
        "makespan_s": t1 - t0,
        "mean_wait_s": round(float(wait.mean()), 3),
        "median_wait_s": float(np.median(wait)),
        "mean_bounded_slowdown": round(float(bsld.mean()), 6),
        "utilization": None if used is None else round(used, 6),
        "peak_busy": peak_busy(start, end, size, steps),
    })
    return summary
