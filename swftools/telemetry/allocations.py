"""Allocation table ``job_id, node, gpu_index`` -> per-GPU and per-node job intervals in DuckDB.

``gpu_index`` may be empty: the node is known but not which of its GPUs (a scheduler that records
hosts only). Such a job gets GPU attribution only when it holds every GPU of the node
(``gpus_per_node`` equals the site's); otherwise its GPU figures are null with the reason
``gpu_indices_unknown``. Jobs absent from the table (or every job, without a table) are
``no_allocation``. A GPU given to two jobs at once is an error naming both.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from swftools.errors import InputError, count, plural
from swftools.telemetry.readers_long import _sql_str, csv_compression

ALLOCATION_COLUMNS = ("job_id", "node", "gpu_index")


def load_allocations(con: duckdb.DuckDBPyConnection, source: str | Path | pa.Table | None) -> str:
    """Create ``alloc_raw(job_id, node, gpu_index, line)``; returns the name used in errors."""
    if source is None:
        con.execute("CREATE OR REPLACE TABLE alloc_raw (job_id BIGINT, node VARCHAR, "
                    "gpu_index INTEGER, line BIGINT)")
        return "<no allocation table>"
    if isinstance(source, pa.Table):
        where = "<allocations>"
        missing = [c for c in ALLOCATION_COLUMNS if c not in source.column_names]
        if missing:
            raise InputError(where, f"missing {plural(len(missing), 'column')} {', '.join(missing)}",
                             expected=", ".join(ALLOCATION_COLUMNS))
        con.register("alloc_arrow", source.select(list(ALLOCATION_COLUMNS)))
        try:
            con.execute("CREATE OR REPLACE TEMP VIEW alloc_src AS "
                        "SELECT *, row_number() OVER () + 1 AS line FROM alloc_arrow")
            _check_cells_and_load(con, where)
        finally:
            con.unregister("alloc_arrow")
        return where
    path = Path(source)
    if not path.is_file():
        raise InputError(str(path), "no such allocation file")
    p = _sql_str(str(path))
    name = path.name.lower()
    try:
        if name.endswith(".parquet"):
            rel = f"SELECT *, file_row_number + 1 AS line FROM read_parquet({p}, file_row_number = true)"
        elif name.endswith((".csv", ".csv.gz")):
            rel = (f"SELECT *, row_number() OVER () + 1 AS line FROM read_csv({p}, header = true, "
                   f"all_varchar = true, parallel = false, {csv_compression(path, warn=True)})")
        else:
            raise InputError(str(path), "not an allocation table", expected=".csv, .csv.gz or .parquet")
        cols = [r[0] for r in con.execute(f"DESCRIBE {rel}").fetchall()]
    except duckdb.Error as exc:
        raise InputError(str(path), f"cannot read: {str(exc).splitlines()[0]}") from None
    missing = [c for c in ALLOCATION_COLUMNS if c not in cols]
    if missing:
        raise InputError(str(path), f"missing {plural(len(missing), 'column')} {', '.join(missing)}", line=1,
                         field="header", expected=", ".join(ALLOCATION_COLUMNS))
    con.execute(f"CREATE OR REPLACE TEMP VIEW alloc_src AS {rel}")
    _check_cells_and_load(con, str(path))
    return str(path)


def _check_cells_and_load(con: duckdb.DuckDBPyConnection, where: str) -> None:
    """``alloc_raw`` from the view ``alloc_src`` (its columns and ``line``), after checking every
    cell: InputError at the first bad row, naming which of its cells is bad (job, node, GPU).
    One grammar per cell, here, for files and Arrow tables alike."""
    bad = con.execute("""
        WITH checked AS (
            SELECT line, CAST(job_id AS VARCHAR) AS job, CAST(gpu_index AS VARCHAR) AS gpu,
                   TRY_CAST(job_id AS BIGINT) IS NULL OR TRY_CAST(job_id AS BIGINT) < 0
                   OR TRY_CAST(job_id AS DOUBLE) <> TRY_CAST(job_id AS BIGINT) AS bad_job,
                   node IS NULL OR CAST(node AS VARCHAR) = '' AS bad_node,
                   gpu_index IS NOT NULL AND CAST(gpu_index AS VARCHAR) <> ''
                   AND (TRY_CAST(gpu_index AS INTEGER) IS NULL OR TRY_CAST(gpu_index AS INTEGER) < 0
                        OR TRY_CAST(gpu_index AS DOUBLE) <> TRY_CAST(gpu_index AS INTEGER)) AS bad_gpu
            FROM alloc_src)
        SELECT line, job, gpu, bad_job, bad_node FROM checked
        WHERE bad_job OR bad_node OR bad_gpu ORDER BY line LIMIT 1""").fetchall()
    if bad:  # fetchall: an unfinished result would keep a registered table in use
        line, job, gpu, bad_job, bad_node = bad[0]
        if bad_job:
            raise InputError(where, f"job_id {job!r} is not a job id", line=line,
                             field="job_id", value=str(job), expected="a non-negative integer")
        if bad_node:
            raise InputError(where, "node is empty", line=line, field="node")
        raise InputError(where, f"gpu_index {gpu!r} is not a GPU index", line=line,
                         field="gpu_index", value=str(gpu),
                         expected="a non-negative integer, or empty when unknown")
    con.execute("""CREATE OR REPLACE TABLE alloc_raw AS SELECT CAST(job_id AS BIGINT) AS job_id,
        CAST(node AS VARCHAR) AS node,
        TRY_CAST(NULLIF(CAST(gpu_index AS VARCHAR), '') AS INTEGER) AS gpu_index, line
        FROM alloc_src""")


def prepare_allocations(con: duckdb.DuckDBPyConnection, where: str, gpus_per_node: int) -> None:
    """From ``jobs`` and ``alloc_raw``: ``gpu_alloc``, ``node_excl``, ``alloc_ids``, ``jobinfo``."""
    orphan = con.execute("SELECT a.line, a.job_id FROM alloc_raw a ANTI JOIN jobs j USING (job_id) "
                     "ORDER BY a.line LIMIT 1").fetchone()
    if orphan:
        raise InputError(where, f"job {orphan[1]} is not in the job table", line=orphan[0],
                         field="job_id", value=str(orphan[1]), expected="a job_id of the jobs")
    big = con.execute(f"SELECT line, gpu_index FROM alloc_raw WHERE gpu_index >= {gpus_per_node} "
                  "ORDER BY line LIMIT 1").fetchone()
    if big:
        raise InputError(where, f"gpu_index {big[1]} does not exist on a {gpus_per_node}-GPU node",
                         line=big[0], field="gpu_index", value=str(big[1]),
                         expected=f"0..{gpus_per_node - 1}")
    mixed = con.execute("SELECT min(line), job_id, node FROM alloc_raw GROUP BY job_id, node "
                    "HAVING count(gpu_index) > 0 AND count(*) > count(gpu_index) "
                    "ORDER BY 1 LIMIT 1").fetchone()
    if mixed:
        raise InputError(where, f"job {mixed[1]} on node {mixed[2]} has rows with and without "
                         "gpu_index", line=mixed[0], field="gpu_index",
                         expected="either every GPU listed or one row with gpu_index empty")
    # GPU intervals: listed GPUs, plus every GPU of a node held whole without indices.
    con.execute(f"""
        CREATE OR REPLACE TABLE gpu_alloc AS
        WITH listed AS (SELECT DISTINCT job_id, node, gpu_index FROM alloc_raw
                        WHERE gpu_index IS NOT NULL),
        whole AS (SELECT DISTINCT a.job_id, a.node, CAST(g.i AS INTEGER) AS gpu_index
                  FROM alloc_raw a JOIN jobs j USING (job_id), range({gpus_per_node}) g(i)
                  WHERE a.gpu_index IS NULL AND j.gpus_per_node = {gpus_per_node})
        SELECT row_number() OVER (ORDER BY x.node, x.gpu_index, j.start_time, x.job_id) AS alloc_id,
               x.job_id, x.node, x.gpu_index, j.start_time AS start_s, j.finish_time AS end_s
        FROM (SELECT * FROM listed UNION ALL SELECT * FROM whole) x JOIN jobs j USING (job_id)
        WHERE j.start_time IS NOT NULL AND j.finish_time IS NOT NULL
          AND j.finish_time >= j.start_time
        ORDER BY x.node, x.gpu_index, start_s""")
    clash = con.execute("""
        SELECT node, gpu_index, prev_job, job_id, prev_end, start_s FROM (
            SELECT *, lag(job_id) OVER w AS prev_job, lag(end_s) OVER w AS prev_end
            FROM gpu_alloc WHERE end_s > start_s
            WINDOW w AS (PARTITION BY node, gpu_index ORDER BY start_s, job_id))
        WHERE prev_end > start_s ORDER BY node, gpu_index, start_s LIMIT 1""").fetchone()
    if clash:
        node, gpu, a, b, a_end, b_start = clash
        raise InputError(where, f"GPU {gpu} of node {node} is held by job {a} until {a_end} and "
                         f"by job {b} from {b_start}", field="gpu_index", value=f"{node}/{gpu}",
                         expected="one job per GPU at a time")
    con.execute("""
        CREATE OR REPLACE TABLE node_alloc AS
        SELECT DISTINCT a.job_id, a.node, j.start_time AS start_s, j.finish_time AS end_s
        FROM alloc_raw a JOIN jobs j USING (job_id)
        WHERE j.start_time IS NOT NULL AND j.finish_time IS NOT NULL
          AND j.finish_time >= j.start_time""")
    # A job shares a node when another job's interval on it overlaps (sort, not a range join).
    con.execute("""
        CREATE OR REPLACE TABLE node_shared AS
        SELECT job_id, bool_or(coalesce(prev_max_end > start_s, false)
                               OR coalesce(next_start < end_s, false)) AS shared
        FROM (SELECT *, max(end_s) OVER (PARTITION BY node ORDER BY start_s, job_id
                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_max_end,
                        lead(start_s) OVER (PARTITION BY node ORDER BY start_s, job_id) AS next_start
              FROM node_alloc WHERE end_s > start_s)
        GROUP BY job_id""")
    con.execute("""
        CREATE OR REPLACE TABLE node_excl AS
        SELECT -row_number() OVER (ORDER BY n.node, n.start_s, n.job_id) AS alloc_id, n.*
        FROM node_alloc n JOIN node_shared s USING (job_id)
        WHERE NOT s.shared ORDER BY node, start_s""")
    # One id per GPU interval (positive) or exclusive node interval (negative): partials are
    # keyed by it, so the per-partition GROUP BY has two keys, not four.
    con.execute("""
        CREATE OR REPLACE VIEW alloc_ids AS
        SELECT alloc_id, job_id, node, gpu_index FROM gpu_alloc
        UNION ALL SELECT alloc_id, job_id, node, NULL FROM node_excl""")
    con.execute("""
        CREATE OR REPLACE TABLE jobinfo AS
        SELECT j.job_id, j.row_order, j.gpus, j.start_time, j.finish_time,
               (j.start_time IS NOT NULL AND j.finish_time IS NOT NULL
                AND j.finish_time >= j.start_time) AS has_times,
               a.job_id IS NOT NULL AS in_alloc,
               g.n_gpus AS gpus_attributed,
               CASE WHEN s.job_id IS NOT NULL THEN s.shared
                    WHEN n.job_id IS NOT NULL THEN false END AS node_shared
        FROM jobs j
        LEFT JOIN (SELECT DISTINCT job_id FROM alloc_raw) a USING (job_id)
        LEFT JOIN (SELECT job_id, count(*) AS n_gpus FROM gpu_alloc GROUP BY job_id) g USING (job_id)
        LEFT JOIN node_shared s USING (job_id)
        LEFT JOIN (SELECT DISTINCT job_id FROM node_alloc) n USING (job_id)""")
    wrong = con.execute("""SELECT job_id, gpus, gpus_attributed FROM jobinfo
                       WHERE gpus_attributed IS NOT NULL AND gpus IS NOT NULL
                         AND gpus_attributed <> gpus ORDER BY row_order LIMIT 1""").fetchone()
    if wrong:
        raise InputError(where, f"job {wrong[0]}: the allocation gives {count(wrong[2], 'GPU')} but the "
                         f"job table says gpus = {wrong[1]}", field="gpu_index",
                         value=str(wrong[0]), expected="one row per allocated GPU")
