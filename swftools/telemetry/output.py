"""Merged partials -> the ``job_telemetry`` table (``schemas/job_telemetry.schema.json``)."""

from __future__ import annotations

import copy
from typing import Any

import duckdb
import pyarrow as pa

from swftools.resources import load_json
from swftools.table import arrow_schema_of
from swftools.telemetry.engine import MERGE_SQL, MICRO

DIGITS = 6  # figures are rounded to 1e-6 of their unit (sums are exact to that resolution)


def table_schema() -> dict[str, Any]:
    """The Table Schema of ``job_telemetry`` (a fresh copy)."""
    return copy.deepcopy(load_json("job_telemetry.schema.json"))


def arrow_schema() -> pa.Schema:
    """The Arrow schema of ``job_telemetry``, from its Table Schema file."""
    return arrow_schema_of(load_json("job_telemetry.schema.json"))


def _mean(metric: str) -> str:
    return (f"round(CAST(sum(sum_micro) FILTER (WHERE metric = '{metric}') AS DOUBLE) / "
            f"sum(n) FILTER (WHERE metric = '{metric}') / {MICRO}, {DIGITS})")


def _max(metric: str) -> str:
    return f"max(vmax) FILTER (WHERE metric = '{metric}')"


def finalize_sql(interval_s: int, gpu_present: bool, node_present: bool) -> str:
    """Per-job figures from merged partials and ``jobinfo``, in job-table order."""
    i = int(interval_s)
    no_samples = "'no_samples'" if gpu_present else "NULL"
    no_node = "'no_node_samples'" if node_present else "NULL"
    return f"""
    WITH m AS ({MERGE_SQL}),
    g AS (
        SELECT job_id,
            count(DISTINCT node || '/' || gpu_index) FILTER (WHERE gpu_index IS NOT NULL) AS gpus_seen,
            {_mean('gpu_util_pct')} AS gpu_util_mean_pct,
            {_max('gpu_util_pct')} AS gpu_util_max_pct,
            round(sum(n_low) FILTER (WHERE metric = 'gpu_util_pct') /
                  sum(n) FILTER (WHERE metric = 'gpu_util_pct'), {DIGITS}) AS gpu_idle_fraction,
            {_mean('gpu_sm_active_pct')} AS gpu_sm_active_mean_pct,
            {_mean('gpu_mem_used_mib')} AS gpu_mem_used_mean_mib,
            {_max('gpu_mem_used_mib')} AS gpu_mem_used_max_mib,
            {_mean('gpu_power_w')} AS gpu_power_mean_w,
            {_max('gpu_power_w')} AS gpu_power_max_w,
            round(CAST(sum(sum_micro) FILTER (WHERE metric = 'gpu_energy_j') AS DOUBLE) / {MICRO},
                  {DIGITS}) AS gpu_energy_j,
            {_mean('node_cpu_util_pct')} AS node_cpu_util_mean_pct,
            {_max('node_mem_used_gib')} AS node_mem_used_max_gib,
            {_mean('node_power_w')} AS node_power_mean_w,
            sum(n) FILTER (WHERE gpu_index IS NULL) AS node_n
        FROM m GROUP BY job_id),
    obs AS (
        SELECT job_id, max(total) AS observed FROM (
            SELECT job_id, metric, sum(n) AS total FROM m
            WHERE gpu_index IS NOT NULL AND metric <> 'gpu_energy_j' GROUP BY job_id, metric)
        GROUP BY job_id),
    j AS (
        SELECT ji.*,
            CASE WHEN ji.gpus_attributed IS NOT NULL THEN ji.gpus_attributed *
                 ((ji.finish_time + {i - 1}) // {i} - (ji.start_time + {i - 1}) // {i}) END AS expected,
            CASE WHEN ji.gpus_attributed IS NOT NULL THEN coalesce(o.observed, 0) END AS observed
        FROM jobinfo ji LEFT JOIN obs o USING (job_id))
    SELECT j.job_id, j.gpus AS gpus_allocated,
        CASE WHEN j.gpus_attributed IS NOT NULL THEN coalesce(g.gpus_seen, 0) END AS gpus_with_telemetry,
        j.expected AS gpu_samples_expected, j.observed AS gpu_samples_observed,
        CASE WHEN j.expected > 0 THEN round(least(1.0, j.observed / j.expected), {DIGITS}) END
            AS telemetry_coverage,
        g.gpu_util_mean_pct, g.gpu_util_max_pct, g.gpu_idle_fraction, g.gpu_sm_active_mean_pct,
        g.gpu_mem_used_mean_mib, g.gpu_mem_used_max_mib, g.gpu_power_mean_w, g.gpu_power_max_w,
        g.gpu_energy_j, j.node_shared,
        g.node_cpu_util_mean_pct, g.node_mem_used_max_gib, g.node_power_mean_w,
        NULLIF(concat_ws(';',
            CASE WHEN NOT j.has_times THEN 'no_times' END,
            CASE WHEN j.has_times AND NOT j.in_alloc THEN 'no_allocation' END,
            CASE WHEN j.has_times AND j.in_alloc AND j.gpus_attributed IS NULL
                 THEN 'gpu_indices_unknown' END,
            CASE WHEN j.gpus_attributed IS NOT NULL AND j.observed = 0 THEN {no_samples} END,
            CASE WHEN j.has_times AND j.node_shared THEN 'node_shared' END,
            CASE WHEN j.has_times AND j.node_shared = false AND coalesce(g.node_n, 0) = 0
                 THEN {no_node} END), '') AS telemetry_null_reason
    FROM j LEFT JOIN g USING (job_id)
    ORDER BY j.row_order"""


def finalize(con: duckdb.DuckDBPyConnection, interval_s: int, gpu_present: bool,
             node_present: bool) -> pa.Table:
    """The ``job_telemetry`` table (no metadata yet)."""
    result = con.sql(finalize_sql(interval_s, gpu_present, node_present)).to_arrow_table()
    schema = arrow_schema()
    arrays = [result.column(f.name).cast(f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def out_of_range(con: duckdb.DuckDBPyConnection) -> tuple[str, float] | None:
    """A merged metric whose values break the schema (negative, or a percentage above 100)."""
    row = con.execute("""
        SELECT metric, CASE WHEN min(vmin) < 0 THEN min(vmin) ELSE max(vmax) END FROM partials
        GROUP BY metric
        HAVING min(vmin) < 0 OR (metric LIKE '%\\_pct' ESCAPE '\\' AND max(vmax) > 100.000001)
        ORDER BY metric LIMIT 1""").fetchone()
    return None if row is None else (row[0], float(row[1]))


def describe(interval_s: int, sources: list[dict[str, Any]], metrics: list[str],
             map_names: list[str]) -> str:
    """The resource description: sampling interval, sources and units (for the package README)."""
    samplings = sorted({s["sampling"] for s in sources})
    files = ", ".join(f"{s['file']} ({s['format']}, {s['sampling']})" for s in sources)
    return (
        f"Per-job GPU and node telemetry aggregates, one row per job of 'jobs'. Nominal sampling "
        f"interval {int(interval_s)} s; samples were {' and '.join(samplings)} "
        f"(resampled = Prometheus query_range grid, which repeats the last value for up to 5 min "
        f"after an exporter dies). Sources: {files}. Metric maps: {', '.join(map_names)}. "
        f"Canonical metrics present: {', '.join(metrics) or 'none'}. Units are in the column "
        f"names: percentages are 0-100 of one GPU (node CPU: of all the node's CPUs), memory MiB "
        f"(GPU) or GiB (node), power W, energy J; means are over every sample of every GPU "
        f"(node) of the job; a sample at ts belongs to a job when start_time <= ts < finish_time "
        f"(UTC epoch seconds). Null means no samples or not attributable (see "
        f"telemetry_null_reason), never 0; node figures are null when the node was shared.")
