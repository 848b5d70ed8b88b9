"""The Dask engine: the per-day partitions of ``engine`` run as tasks on a dask.distributed cluster.

The coordinator (this process) checks every input and prepares the allocations exactly as the
DuckDB engine does (same code, same errors). Then every UTC day that some input file's time span
meets is a task: a worker opens its own DuckDB, reads that day's rows from the Parquet long tables
(paths must mean the same file on every worker: a shared filesystem), stages them with
``samples.stage_partition`` and runs ``engine.compute_partition``, the one join of both engines.
Counter and CPU-time lags reach back across midnight: each task also returns its lagged series'
first and last samples (``samples.lag_boundaries``), and once every day is in, the coordinator
derives the days' first increments from them (``samples.boundary_samples``) and runs the same
join on those few rows. Partials are merged in day order: the output is the DuckDB engine's,
byte for byte.

The DuckDB engine runs the same day tasks one after the other in its own process when every
input is a Parquet long table (``run_partitions(..., in_process=True)``: no dask), so that its
memory is bounded by one day rather than by the whole span it would otherwise stage at once.

dask is imported inside functions only (``swftools.cli`` starts without it).
"""

from __future__ import annotations

import logging
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from swftools.errors import UsageError
from swftools.telemetry import engine
from swftools.telemetry.metric_map import MetricMap
from swftools.telemetry.readers_long import LongTable
from swftools.telemetry.samples import (SampleSet, boundary_samples, derived_metrics,
                                        expand_paths, input_format, lag_boundaries, long_body,
                                        metric_roles, overlapping_sources, present_metrics,
                                        stage_partition, usable_metrics)

IN_FLIGHT_PER_THREAD = 2  # day tasks queued per worker thread (bounds the coordinator's memory)
CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True)
class DayTask:
    """One day for a worker: its bounds, the SQL reading the files that meet it, the options."""

    lo: int
    hi: int
    bodies: tuple[str, ...]
    metric_map: MetricMap
    idle_threshold_pct: float = 0.0
    dedupe: bool = True
    memory_limit: str | None = None  # DuckDB's, per task (default: 60 % of the worker's share)
    threads: int | None = None  # DuckDB threads per task (default 1: Dask runs the tasks side by side)
    work_dir: str | None = None  # where a task run in this process spills (a worker: its own)


def check_inputs(paths: Sequence[str | Path], input_fmt: str = "auto") -> None:
    """The Dask engine reads canonical long tables in Parquet only (workers scan them by day)."""
    if input_fmt not in ("auto", "long"):
        raise UsageError(f"the dask engine reads Parquet long tables, not --from {input_fmt}")
    for path in expand_paths(paths):
        if input_format(path) != "long" or not path.name.lower().endswith(".parquet"):
            raise UsageError(f"{path}: the dask engine reads Parquet long tables only "
                             "(ts, node, gpu_index, metric, value); use --engine duckdb for "
                             "other inputs")


def sample_days(long_tables: Sequence[LongTable]) -> list[tuple[int, int, tuple[int, ...]]]:
    """UTC days met by some file's time span, each with the indices of the files meeting it."""
    by_day: dict[int, list[int]] = {}
    for i, lt in enumerate(long_tables):
        if lt.ts_min is None or lt.ts_max is None:
            continue
        for d in range(int(lt.ts_min // engine.DAY_S), int(lt.ts_max // engine.DAY_S) + 1):
            by_day.setdefault(d, []).append(i)
    return [(d * engine.DAY_S, (d + 1) * engine.DAY_S, tuple(by_day[d])) for d in sorted(by_day)]


def _task_settings(task: DayTask) -> tuple[str | Path | None, str | None, int]:
    """Work folder, DuckDB memory limit and threads for a task on this worker."""
    work_dir, memory = task.work_dir, task.memory_limit
    worker = None
    if "distributed" in sys.modules:  # a worker has it; the DuckDB engine's own tasks need not
        try:
            from distributed import get_worker

            worker = get_worker()
        except (ImportError, ValueError):  # run outside a worker (tests, debugging)
            worker = None
    if worker is not None:
        work_dir = worker.local_directory
        limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None)
        nthreads = getattr(getattr(worker, "state", None), "nthreads", 1) or 1
        if memory is None and limit:
            memory = f"{max(256, int(limit * 0.6 / nthreads / 2**20))}MB"
    return work_dir, memory, int(task.threads or 1)


@contextmanager
def _task_connection(task: DayTask) -> Iterator[duckdb.DuckDBPyConnection]:
    work_dir, memory, threads = _task_settings(task)
    with engine.connection(work_dir, memory_limit=memory, threads=threads, in_memory=True) as con:
        yield con


def day_partials(task: DayTask, gpu_alloc: pa.Table, node_excl: pa.Table
                 ) -> tuple[pa.Table, list[str], pa.Table]:
    """Worker: the day's ``partials`` rows, the derived metrics it holds, its lag boundaries."""
    with _task_connection(task) as con:
        for name, rows in (("gpu_alloc", gpu_alloc), ("node_excl", node_excl)):
            con.register(f"{name}_rows", rows)
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_rows")
            con.unregister(f"{name}_rows")
        stage_partition(con, task.bodies, task.metric_map, task.lo, task.hi)
        con.execute(engine.PARTIALS_DDL)
        if gpu_alloc.num_rows or node_excl.num_rows:
            engine.compute_partition(con, task.lo, task.hi, task.idle_threshold_pct, task.dedupe)
        return (con.sql("SELECT * FROM partials").to_arrow_table(), sorted(derived_metrics(con)),
                lag_boundaries(con))


def check_cluster_options(scheduler: str | None, workers: int | None) -> None:
    """``workers`` sizes a local cluster: at least 1, and not with a ``scheduler``."""
    if workers is not None and workers < 1:
        raise UsageError(f"workers must be >= 1, not {workers}")
    if scheduler and workers is not None:
        raise UsageError("--workers starts a local cluster; it cannot go with --dask-scheduler")


@contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A client of the cluster at ``scheduler``, or of a new LocalCluster on 127.0.0.1 (worker
    processes, one thread each, no dashboard)."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("the dask engine needs dask.distributed: "
                         "pip install 'dask[distributed]'") from None
    check_cluster_options(scheduler, workers)
    if scheduler:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: "
                             f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                             ) from None
        with client:
            yield client
        return
    with local_cluster(workers) as cluster, Client(cluster) as client:
        yield client


def local_cluster(workers: int | None = None, **options: Any) -> Any:
    """A ``LocalCluster`` of worker processes (one thread each) that listens on 127.0.0.1 only:
    no dashboard, its HTTP endpoint (health, metrics) on a free loopback port."""
    from distributed import LocalCluster

    settings = dict(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                    dashboard_address=None, silence_logs=logging.ERROR,
                    scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"})
    settings.update(options)
    return LocalCluster(**settings)


def _result(future: Any) -> Any:
    """A day task's result; a worker lost on the way is a usage error, not a traceback."""
    from distributed import KilledWorker

    try:
        return future.result()
    except KilledWorker as exc:
        raise UsageError(f"a Dask worker died running a day of telemetry ({exc}); is its memory "
                         "limit too small for one day? (see --memory-limit)") from None


def run_partitions(con: duckdb.DuckDBPyConnection, sample_set: SampleSet,
                   idle_threshold_pct: float = 0.0,
                   progress: Callable[[int, int], None] | None = None, *,
                   scheduler: str | None = None, workers: int | None = None,
                   memory_limit: str | None = None, threads: int | None = None,
                   in_process: bool = False, work_dir: str | Path | None = None) -> int:
    """Fill ``partials`` in ``con`` from day tasks on a Dask cluster; set the sample set's metrics.

    ``con`` holds ``gpu_alloc`` and ``node_excl`` (``prepare_allocations``); ``sample_set``
    holds Parquet long tables only. ``in_process``: run the day tasks one after the other here,
    without dask (the DuckDB engine's bounded-memory path; they spill into ``work_dir``).
    Returns the number of days run.
    """
    mm = sample_set.metric_map
    longs = [replace(lt, path=Path(lt.path).resolve()) for lt in sample_set.long_tables]
    bodies = [long_body(lt, mm) for lt in longs]
    _, direct, combine_sum = metric_roles(mm)
    candidates = {m for lt in longs for m in usable_metrics(lt, mm)}
    dedupe = overlapping_sources(sample_set)
    tasks = [DayTask(lo, hi, tuple(bodies[i] for i in files), mm, float(idle_threshold_pct),
                     dedupe, memory_limit, (threads or os.cpu_count()) if in_process else threads,
                     str(work_dir) if in_process and work_dir is not None else None)
             for lo, hi, files in sample_days(longs)]
    con.execute(engine.PARTIALS_DDL)
    con.execute("CREATE OR REPLACE TABLE lag_boundary (ts DOUBLE, node VARCHAR, gpu_index INTEGER, "
                "metric VARCHAR, value DOUBLE, head BOOLEAN)")
    derived: set[str] = set()
    done = 0

    def collect(result: tuple[pa.Table, list[str], pa.Table]) -> None:
        nonlocal done
        rows, metrics, boundaries = result
        derived.update(metrics)
        for table, rel in (("partials", rows), ("lag_boundary", boundaries)):
            con.register("task_rows", rel)
            con.execute(f"INSERT INTO {table} SELECT * FROM task_rows")
            con.unregister("task_rows")
        done += 1
        if progress is not None:
            progress(done, len(tasks))

    if in_process:
        for task in tasks:
            collect(day_partials(task, *engine.partition_allocations(con, task.lo, task.hi)))
    elif tasks:
        with dask_client(scheduler, workers) as client:
            window = IN_FLIGHT_PER_THREAD * max(1, sum(client.nthreads().values()))
            pending: deque[Any] = deque()
            for task in tasks:
                gpu_alloc, node_excl = engine.partition_allocations(con, task.lo, task.hi)
                pending.append(client.submit(day_partials, task, gpu_alloc, node_excl, pure=False))
                while len(pending) >= window:
                    collect(_result(pending.popleft()))
            while pending:
                collect(_result(pending.popleft()))
    # The days' first counter increments and CPU shares, derived here from the boundaries.
    boundary_samples(con, "lag_boundary", combine_sum)
    engine.compute_partition(con, None, None, idle_threshold_pct, dedupe)
    sample_set.metrics = present_metrics(candidates, direct, derived | derived_metrics(con))
    sample_set.overlapping = dedupe
    return len(tasks)
