"""DuckDB engine: as-of join of samples to allocations, per-day partitions, exact merge.

For each partition ``[lo, hi)`` (a UTC day by default) the same SQL runs:

1. samples with ``lo <= ts < hi``, one value per (node, gpu, metric, ts) (first series, first file);
2. ``ASOF JOIN`` to the GPU (or exclusive-node) allocations on (node[, gpu]) by ``ts >= start``
   — allocations of one GPU never overlap, so the latest start is the only candidate —
   then the filter ``ts < end`` (never a range join, which compares every sample with every job
   of its GPU);
3. ``GROUP BY`` allocation interval (one id per job and GPU, or job and exclusive node) and
   metric into decomposable partials: count, count at or below the idle threshold, the sum as an
   exact integer of micro-units, min and max.

Partials of all partitions are merged by sum/min/max, so a partitioned run equals a single run
byte for byte (integer sums do not depend on order). ``dask_engine`` runs the same
``compute_partition`` on a Dask cluster, one day per task.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa

from swftools.errors import UsageError

DAY_S = 86_400
PARTITIONS = ("day", "none")
ENGINES = ("duckdb", "dask")
MICRO = 1_000_000  # sums are kept as integers of 1e-6 canonical units

PARTIALS_DDL = """CREATE OR REPLACE TABLE partials (
    alloc_id BIGINT, metric VARCHAR,
    n BIGINT, n_low BIGINT, sum_micro HUGEINT, vmin DOUBLE, vmax DOUBLE)"""


# DuckDB's memory limit unless one is given: 60 % of physical memory, at most this. DuckDB spills
# sorts, joins and aggregates beyond it (not every operator can: a week of ABCI-size samples
# staged at once runs out at 2 GiB, hence the day tasks for Parquet inputs, see dask_engine).
# The uncapped 60 % of a 23 GiB machine let a simulated ABCI week grow to 8.2 GiB
# (benchmarks/bench_telemetry_dask.py).
DEFAULT_MEMORY_CAP_MB = 2048


def default_memory_limit() -> str:
    """60 % of physical memory, at most ``DEFAULT_MEMORY_CAP_MB``, as a DuckDB size string."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return f"{DEFAULT_MEMORY_CAP_MB}MB"
    return f"{max(256, min(DEFAULT_MEMORY_CAP_MB, int(total * 0.6 / 2**20)))}MB"


@contextmanager
def connection(work_dir: str | Path | None = None, *, memory_limit: str | None = None,
               threads: int | None = None, in_memory: bool = False
               ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection whose database and spill files live in a fresh temporary folder.

    ``work_dir`` is where that folder is created (the CLI passes the output's directory, so a
    failed run leaves nothing beside the output and spilling never fills /tmp unexpectedly).
    ``in_memory``: no database file (short tasks; spilling still goes to the folder).
    """
    base = Path(work_dir) if work_dir is not None else None
    if base is not None and not base.is_dir():
        raise UsageError(f"{base}: work directory does not exist")
    tmp = Path(tempfile.mkdtemp(prefix=".swftools-telemetry.", suffix=".tmp", dir=base))
    con = duckdb.connect(":memory:" if in_memory else str(tmp / "work.duckdb"))
    try:
        con.execute(f"SET memory_limit = '{memory_limit or default_memory_limit()}'")
        con.execute(f"SET temp_directory = '{tmp / 'spill'}'")
        con.execute("SET preserve_insertion_order = false")
        con.execute("SET enable_progress_bar = false")
        con.execute("SET parquet_metadata_cache = true")  # one footer read, not one per day
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        yield con
    except duckdb.Error as exc:
        raise UsageError(f"DuckDB failed: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
        shutil.rmtree(tmp, ignore_errors=True)


def register_jobs(con: duckdb.DuckDBPyConnection, jobs: pa.Table) -> None:
    """``jobs(job_id, gpus, gpus_per_node, nodes, start_time, finish_time, row_order)``."""
    cols = ["job_id", "gpus", "gpus_per_node", "nodes", "start_time", "finish_time"]
    view = jobs.select(cols)
    con.register("jobs_arrow", view)
    con.execute("CREATE OR REPLACE TABLE jobs AS SELECT *, row_number() OVER () AS row_order "
                "FROM jobs_arrow")
    con.unregister("jobs_arrow")


def alloc_where(lo: float | None, hi: float | None) -> str:
    """The allocation intervals that can own a sample of the partition ``[lo, hi)``."""
    return " AND ".join(w for w in (
        "end_s > start_s", f"end_s > {lo!r}" if lo is not None else "",
        f"start_s < {hi!r}" if hi is not None else "") if w)


def partition_allocations(con: duckdb.DuckDBPyConnection, lo: float, hi: float
                          ) -> tuple[pa.Table, pa.Table]:
    """``gpu_alloc`` and ``node_excl`` rows of one partition (what a remote partition needs)."""
    where = alloc_where(lo, hi)
    return (con.sql(f"SELECT * FROM gpu_alloc WHERE {where}").to_arrow_table(),
            con.sql(f"SELECT * FROM node_excl WHERE {where}").to_arrow_table())


def compute_partition(con: duckdb.DuckDBPyConnection, lo: float | None, hi: float | None,
                      idle_threshold_pct: float = 0.0, dedupe: bool = True) -> None:
    """Add one partition's partial aggregates to ``partials`` (the one per-partition step of
    every engine: DuckDB runs it in place, Dask on a worker over that day's files)."""
    con.execute("INSERT INTO partials " + partition_sql(lo, hi, idle_threshold_pct, dedupe))


def partition_sql(lo: float | None, hi: float | None, idle_threshold_pct: float = 0.0,
                  dedupe: bool = True) -> str:
    """The partial-aggregate query of one time partition (``None`` bounds: unbounded).

    Reads ``samples``, ``gpu_alloc``, ``node_excl``; returns rows shaped like ``partials``.
    ``dedupe`` keeps one value per (node, gpu, metric, ts): the first series, the first file.
    """
    t_where = " AND ".join(w for w in (
        f"ts >= {lo!r}" if lo is not None else "", f"ts < {hi!r}" if hi is not None else "") if w)
    a_where = alloc_where(lo, hi)
    t_where = f"WHERE {t_where}" if t_where else ""
    aggregates = f"""count(*) AS n,
               count(*) FILTER (WHERE s.metric = 'gpu_util_pct'
                                AND s.value <= {float(idle_threshold_pct)!r}) AS n_low,
               sum(CAST(round(s.value * {MICRO}) AS BIGINT)) AS sum_micro,
               min(s.value) AS vmin, max(s.value) AS vmax"""
    dedupe_sql = f"""SELECT node, gpu_index, metric, ts,
                   arg_min(value, {{'s': series, 'r': src}}) AS value, max(prev_ts) AS prev_ts
            FROM samples {t_where} GROUP BY node, gpu_index, metric, ts"""
    plain_sql = f"SELECT node, gpu_index, metric, ts, value, prev_ts FROM samples {t_where}"
    return f"""
        WITH s AS ({dedupe_sql if dedupe else plain_sql}),
        ga AS (SELECT * FROM gpu_alloc WHERE {a_where}),
        na AS (SELECT * FROM node_excl WHERE {a_where})
        SELECT a.alloc_id, s.metric, {aggregates}
        FROM (SELECT * FROM s WHERE gpu_index IS NOT NULL) s
        ASOF JOIN ga a ON s.node = a.node AND s.gpu_index = a.gpu_index AND s.ts >= a.start_s
        WHERE s.ts < a.end_s AND (s.prev_ts IS NULL OR s.prev_ts >= a.start_s)
        GROUP BY a.alloc_id, s.metric
        UNION ALL
        SELECT a.alloc_id, s.metric, {aggregates}
        FROM (SELECT * FROM s WHERE gpu_index IS NULL) s
        ASOF JOIN na a ON s.node = a.node AND s.ts >= a.start_s
        WHERE s.ts < a.end_s AND (s.prev_ts IS NULL OR s.prev_ts >= a.start_s)
        GROUP BY a.alloc_id, s.metric"""


def day_partitions(con: duckdb.DuckDBPyConnection) -> list[tuple[int, int]]:
    """UTC days covering every allocation interval (samples outside them cannot count)."""
    lo, hi = con.execute("SELECT min(start_s), max(end_s) FROM (SELECT start_s, end_s FROM gpu_alloc "
                     "UNION ALL SELECT start_s, end_s FROM node_excl) WHERE end_s > start_s"
                     ).fetchone()
    if lo is None:
        return []
    first, last = int(lo) // DAY_S, (int(hi) - 1) // DAY_S
    return [(d * DAY_S, (d + 1) * DAY_S) for d in range(first, last + 1)]


def run_partitions(con: duckdb.DuckDBPyConnection, partition: str = "day",
                   idle_threshold_pct: float = 0.0, progress=None, dedupe: bool = True) -> int:
    """Fill ``partials``; returns the number of partitions run."""
    if partition not in PARTITIONS:
        raise UsageError(f"unknown partitioning {partition!r} (choose from {', '.join(PARTITIONS)})")
    con.execute(PARTIALS_DDL)
    if partition == "none":
        compute_partition(con, None, None, idle_threshold_pct, dedupe)
        return 1
    days = day_partitions(con)
    for i, (lo, hi) in enumerate(days):
        compute_partition(con, lo, hi, idle_threshold_pct, dedupe)
        if progress is not None:
            progress(i + 1, len(days))
    return len(days)


MERGE_SQL = """
    SELECT i.job_id, i.node, i.gpu_index, p.metric, p.n, p.n_low, p.sum_micro, p.vmin, p.vmax
    FROM (SELECT alloc_id, metric, sum(n) AS n, sum(n_low) AS n_low, sum(sum_micro) AS sum_micro,
                 min(vmin) AS vmin, max(vmax) AS vmax
          FROM partials GROUP BY alloc_id, metric) p
    JOIN alloc_ids i USING (alloc_id)"""
