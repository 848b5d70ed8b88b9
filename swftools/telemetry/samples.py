"""Read every sample input and stage it in DuckDB as one ``samples`` relation.

``samples(ts, node, gpu_index, metric, value, series, src, prev_ts)`` holds canonical metrics
only: gauges (text inputs de-duplicated here: the first series in label order, the first file;
between several files the engine resolves duplicates per partition the same way; one canonical
long table is taken as it is, one row per ts/node/gpu_index/metric), and what is derived here, once, over the whole time range:
counter increments (``gpu_energy_j``, with the previous sample's time in ``prev_ts``; a drop is a
counter reset and the new value is the increment), ``node_cpu_util_pct`` from idle/total CPU
seconds, ``node_mem_used_gib`` = total - available, and gauges whose map says ``combine: sum``.
The Dask engine stages one day at a time (``stage_partition``) with the same derivation; the lags
that cross midnight are completed from the days' first and last samples (``boundary_samples``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from swftools.errors import InputError
from swftools.telemetry.buffer import FileStats, SampleBuffer
from swftools.telemetry.metric_map import MetricMap, canonical_metrics
from swftools.telemetry.readers_exposition import read_exposition
from swftools.telemetry.readers_long import LongTable, _sql_str, check_long_table
from swftools.telemetry.readers_promjson import SAMPLINGS, read_promjson

INPUT_FORMATS = ("auto", "prometheus-json", "prometheus-text", "openmetrics", "long")


def input_format(path: Path) -> str:
    """Input format from the file name: .json[.gz], .csv[.gz]/.parquet, else text exposition."""
    name = path.name.lower()
    if name.endswith((".json", ".json.gz")):
        return "prometheus-json"
    if name.endswith((".csv", ".csv.gz", ".parquet")):
        return "long"
    return "text"


def expand_paths(paths: Sequence[str | Path]) -> list[Path]:
    """Files in the given order; a directory contributes its non-hidden files in name order."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith(".")))
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(str(p), "no such sample file or directory")
    if not out:
        raise InputError(", ".join(map(str, paths)) or "<samples>", "no sample files given")
    return out


@dataclass
class SampleSet:
    """Checked inputs ready to stage: text-parsed rows plus long-table handles."""

    metric_map: MetricMap
    buffer_rows: Any  # pyarrow.Table of SAMPLE_SCHEMA
    long_tables: list[LongTable]
    stats: list[FileStats]
    metrics: set[str] = field(default_factory=set)  # canonical metrics present after staging
    overlapping: bool = False  # several gauge sources: duplicates resolved per partition

    def describe_sources(self) -> list[dict[str, Any]]:
        out = []
        for s in self.stats:
            d = s.as_dict()
            d["file"] = Path(d["file"]).name  # base names only: output bytes must not depend on paths
            out.append(d)
        return out


def read_samples(paths: Sequence[str | Path], metric_map: MetricMap, con: duckdb.DuckDBPyConnection,
                 *, fmt: str = "auto", sampling: str = "auto") -> SampleSet:
    """Parse/check every input file (text formats fully, long tables by their summary)."""
    if fmt not in INPUT_FORMATS:
        raise InputError("<samples>", f"unknown input format {fmt!r}", expected=", ".join(INPUT_FORMATS))
    if sampling not in SAMPLINGS:
        raise InputError("<samples>", f"unknown sampling {sampling!r}", expected=", ".join(SAMPLINGS))
    buffer = SampleBuffer(metric_map)
    longs: list[LongTable] = []
    stats: list[FileStats] = []
    for src, path in enumerate(expand_paths(paths)):
        kind = input_format(path) if fmt == "auto" else fmt
        if kind == "prometheus-json":
            stats.append(read_promjson(path, buffer, src, sampling))
        elif kind == "long":
            table = check_long_table(path, metric_map, con)
            table.src = src
            longs.append(table)
            stats.append(table.stats)
        else:
            st = read_exposition(path, buffer, src, None if kind == "text" else kind)
            if sampling != "auto":
                st.sampling = sampling
            stats.append(st)
    return SampleSet(metric_map, buffer.to_table(), longs, stats)


def long_metric(name: str, metric_map: MetricMap) -> tuple[str, float] | None:
    """What a long table's metric name stands for, ``(canonical, scale)``, or None when the map
    ignores it (as the text readers do; an entry with label filters never applies: a long table
    has no labels)."""
    found = metric_map.lookup(name)
    entries = [e for e in (found or []) if not e.match]
    if entries:
        return entries[0].canonical, entries[0].scale
    if name in canonical_metrics() and found is None:
        return name, 1.0
    return None


def _long_mapping_sql(table: LongTable, metric_map: MetricMap) -> tuple[str, str]:
    """CASE expressions turning a long table's metric names/values into canonical ones (NULL:
    ignored, a name no staging step selects)."""
    metric_cases, scale_cases = [], []
    for m in table.metrics:
        meaning = long_metric(m, metric_map)
        if meaning is None:
            metric_cases.append(f"WHEN {_sql_str(m)} THEN NULL")
        elif meaning != (m, 1.0):
            metric_cases.append(f"WHEN {_sql_str(m)} THEN {_sql_str(meaning[0])}")
            scale_cases.append(f"WHEN {_sql_str(m)} THEN {meaning[1]!r}")
    metric = f"CASE metric {' '.join(metric_cases)} ELSE metric END" if metric_cases else "metric"
    value = f"value * CASE metric {' '.join(scale_cases)} ELSE 1.0 END" if scale_cases else "value"
    return metric, value


def usable_metrics(table: LongTable, metric_map: MetricMap) -> list[str]:
    """The canonical metrics a long table contributes (names the map ignores left out)."""
    return [meaning[0] for m in table.metrics if (meaning := long_metric(m, metric_map))]


def metric_roles(metric_map: MetricMap) -> tuple[list[str], list[str], list[str]]:
    """``(staged, direct, combine_sum)`` canonical metrics: derived or summed here, taken as
    they are, and summed over series."""
    metrics = canonical_metrics()
    sum_gauges = {e.canonical for e in metric_map.entries if e.combine == "sum" and e.kind == "gauge"}
    staged = {n for n, m in metrics.items() if m.kind == "counter" or m.derives} | sum_gauges
    direct = sorted(n for n, m in metrics.items() if n not in staged)
    combine_sum = sorted({e.canonical for e in metric_map.entries if e.combine == "sum"})
    return sorted(staged), direct, combine_sum


def long_body(table: LongTable, metric_map: MetricMap) -> str:
    """The canonical rows ``(ts, node, gpu_index, metric, value, series, src)`` of a long table."""
    metric_sql, value_sql = _long_mapping_sql(table, metric_map)
    return (f"SELECT ts, node, gpu_index, {metric_sql} AS metric, {value_sql} AS value, "
            f"'' AS series, {table.src}::INTEGER AS src FROM {table.scan_sql()}")


def overlapping_sources(sample_set: SampleSet) -> bool:
    """Several gauge sources may hold the same sample: the engine resolves them per partition."""
    return (sample_set.buffer_rows.num_rows > 0) + len(sample_set.long_tables) > 1


def present_metrics(candidates: set[str], direct: Sequence[str], derived: set[str]) -> set[str]:
    """The canonical metrics present: direct ones found in the inputs, plus every derived one."""
    return {m for m in candidates if m in direct} | derived


def stage(con: duckdb.DuckDBPyConnection, sample_set: SampleSet) -> None:
    """Create the ``samples`` view (and the ``derived`` table) in ``con``."""
    mm = sample_set.metric_map
    staged, direct, combine_sum = metric_roles(mm)
    parts = []
    in_list = ", ".join(_sql_str(m) for m in direct)
    con.register("buffer_rows", sample_set.buffer_rows)
    con.execute("CREATE OR REPLACE TABLE text_raw AS SELECT * FROM buffer_rows")
    con.unregister("buffer_rows")
    # Text inputs resolve their own duplicates (overlapping chunks) once, here.
    con.execute(f"""CREATE OR REPLACE TABLE text_rows AS
        SELECT ts, node, gpu_index, metric, arg_min(value, {{'s': series, 'r': src}}) AS value,
               '' AS series, min(src) AS src
        FROM text_raw WHERE metric IN ({in_list})
        GROUP BY node, gpu_index, metric, ts ORDER BY ts""")
    parts.append("SELECT ts, node, gpu_index, metric, value, series, src FROM text_raw")
    present = {r[0] for r in con.execute("SELECT DISTINCT metric FROM text_raw").fetchall()}
    direct_parts = ["SELECT * FROM text_rows"] if sample_set.buffer_rows.num_rows else []
    for i, lt in enumerate(sample_set.long_tables):
        body = long_body(lt, mm)
        if not lt.ts_sorted:  # materialize in ts order so the per-day filters prune
            con.execute(f"CREATE OR REPLACE TABLE long_{i} AS {body} ORDER BY ts")
            body = f"SELECT * FROM long_{i}"
        parts.append(body)
        direct_parts.append(f"SELECT * FROM ({body}) WHERE metric IN ({in_list})")
        present |= set(usable_metrics(lt, mm))
    con.execute("CREATE OR REPLACE VIEW raw_rows AS " + " UNION ALL ".join(parts))
    _derive(con, staged, combine_sum)
    sample_set.metrics = present_metrics(present, direct, derived_metrics(con))
    sample_set.overlapping = overlapping_sources(sample_set)
    _samples_view(con, direct_parts)


def stage_partition(con: duckdb.DuckDBPyConnection, bodies: Sequence[str], metric_map: MetricMap,
                    lo: float, hi: float) -> None:
    """Stage the samples of one partition ``lo <= ts < hi`` from long-table ``bodies`` alone.

    ``derived`` then equals the whole-range one on ``[lo, hi)`` except at each series' first
    sample of the partition, whose lag is out of reach: ``lag_boundaries`` returns what
    ``boundary_samples`` needs to derive those rows later.
    """
    staged, direct, combine_sum = metric_roles(metric_map)
    where = f"ts >= {float(lo)!r} AND ts < {float(hi)!r}"
    parts = [f"SELECT * FROM ({b}) WHERE {where}" for b in bodies] or [
        "SELECT NULL::DOUBLE AS ts, NULL::VARCHAR AS node, NULL::INTEGER AS gpu_index, "
        "NULL::VARCHAR AS metric, NULL::DOUBLE AS value, '' AS series, 0 AS src WHERE false"]
    con.execute("CREATE OR REPLACE VIEW raw_rows AS " + " UNION ALL ".join(parts))
    _derive(con, staged, combine_sum, ordered=False)
    in_list = ", ".join(_sql_str(m) for m in direct)
    _samples_view(con, [f"SELECT * FROM ({b}) WHERE {where} AND metric IN ({in_list})"
                        for b in bodies])


def derived_metrics(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The metrics of the ``derived`` table."""
    return {r[0] for r in con.execute("SELECT DISTINCT metric FROM derived").fetchall()}


def _samples_view(con: duckdb.DuckDBPyConnection, direct_parts: Sequence[str]) -> None:
    gauges = " UNION ALL ".join(
        f"SELECT ts, node, gpu_index, metric, value, series, src, NULL::DOUBLE AS prev_ts "
        f"FROM ({q})" for q in direct_parts) or (
        "SELECT NULL::DOUBLE AS ts, NULL::VARCHAR AS node, NULL::INTEGER AS gpu_index, "
        "NULL::VARCHAR AS metric, NULL::DOUBLE AS value, '' AS series, 0 AS src, "
        "NULL::DOUBLE AS prev_ts WHERE false")
    con.execute(
        f"CREATE OR REPLACE VIEW samples AS {gauges} "
        "UNION ALL SELECT ts, node, gpu_index, metric, value, '' AS series, 0 AS src, prev_ts "
        "FROM derived")


# The metrics whose derivation reads the previous sample (the lag windows of ``_derive``).
LAG_METRICS = ("gpu_energy_j", "node_cpu_idle_s", "node_cpu_total_s")
CPU_COUNTERS = "'node_cpu_idle_s', 'node_cpu_total_s'"

# Each lag's first and last rows of ``staged``: per GPU the first and last energy sample, per
# node the first and last instant with both CPU counters (``head``: the first).
LAG_BOUNDARIES_SQL = f"""
    SELECT unnest([first_ts, last_ts]) AS ts, node, gpu_index, metric,
           unnest([first_value, last_value]) AS value, unnest([true, false]) AS head
    FROM (SELECT node, gpu_index, metric, min(ts) AS first_ts, arg_min(value, ts) AS first_value,
                 max(ts) AS last_ts, arg_max(value, ts) AS last_value
          FROM staged WHERE metric = 'gpu_energy_j' GROUP BY node, gpu_index, metric)
    UNION ALL
    SELECT s.ts, s.node, s.gpu_index, s.metric, s.value, s.ts = e.first_ts AS head
    FROM staged s JOIN (
        SELECT node, min(ts) AS first_ts, max(ts) AS last_ts FROM (
            SELECT node, ts FROM staged WHERE metric IN ({CPU_COUNTERS}) GROUP BY node, ts
            HAVING count(*) FILTER (WHERE metric = 'node_cpu_idle_s') > 0
               AND count(*) FILTER (WHERE metric = 'node_cpu_total_s') > 0)
        GROUP BY node) e ON s.node = e.node AND (s.ts = e.first_ts OR s.ts = e.last_ts)
    WHERE s.metric IN ({CPU_COUNTERS})"""


def lag_boundaries(con: duckdb.DuckDBPyConnection) -> Any:
    """The first and last ``staged`` rows of every lagged series of a partition (Arrow)."""
    return con.sql(LAG_BOUNDARIES_SQL).to_arrow_table()


def boundary_samples(con: duckdb.DuckDBPyConnection, boundaries: str,
                     combine_sum: Sequence[str]) -> None:
    """The ``samples`` view of the derived rows partitions could not make on their own.

    ``boundaries`` names a table of ``lag_boundaries`` rows of every partition. Over them,
    ``_derive``'s lag from a partition's first row reaches the last row of the latest earlier
    partition with that series: exactly its previous sample. Only those head rows are kept.
    """
    con.execute(f"""CREATE OR REPLACE VIEW raw_rows AS
        SELECT DISTINCT ts, node, gpu_index, metric, value, '' AS series, 0 AS src
        FROM {boundaries}""")
    _derive(con, list(LAG_METRICS), list(combine_sum), ordered=False)
    con.execute(f"""CREATE OR REPLACE TABLE derived AS
        SELECT d.* FROM derived d SEMI JOIN (SELECT DISTINCT ts, node, gpu_index, metric
                                             FROM {boundaries} WHERE head) h
          ON d.ts = h.ts AND d.node = h.node
         AND ((d.metric = 'gpu_energy_j' AND h.metric = 'gpu_energy_j'
               AND d.gpu_index IS NOT DISTINCT FROM h.gpu_index)
              OR (d.metric = 'node_cpu_util_pct' AND h.metric IN ({CPU_COUNTERS})))""")
    _samples_view(con, [])


def _stage_rows(con: duckdb.DuckDBPyConnection, staged: list[str], combine_sum: list[str]) -> None:
    staged_in = ", ".join(_sql_str(m) for m in staged) or "NULL"
    sum_in = ", ".join(_sql_str(m) for m in combine_sum) or "NULL"
    # One value per series and instant (first file wins), then one per node/GPU and instant.
    con.execute(f"""
        CREATE OR REPLACE TABLE staged AS
        WITH per_series AS (
            SELECT metric, series, node, gpu_index, ts,
                   arg_min(value, {{'r': src, 'v': value}}) AS value
            FROM raw_rows WHERE metric IN ({staged_in}) GROUP BY metric, series, node, gpu_index, ts)
        SELECT ts, node, gpu_index, metric,
               CASE WHEN metric IN ({sum_in}) THEN sum(value) ELSE arg_min(value, series) END AS value
        FROM per_series GROUP BY ts, node, gpu_index, metric""")


def _derive(con: duckdb.DuckDBPyConnection, staged: list[str], combine_sum: list[str],
            ordered: bool = True) -> None:
    """``staged``, then ``derived`` (in ts order when ``ordered``: the per-day filters prune)."""
    _stage_rows(con, staged, combine_sum)
    con.execute("""
        CREATE OR REPLACE TABLE derived AS
        WITH energy AS (
            SELECT ts, node, gpu_index, value,
                   lag(value) OVER w AS prev_value, lag(ts) OVER w AS prev_ts
            FROM staged WHERE metric = 'gpu_energy_j'
            WINDOW w AS (PARTITION BY node, gpu_index ORDER BY ts)),
        cpu AS (
            SELECT node, ts,
                   max(value) FILTER (WHERE metric = 'node_cpu_idle_s') AS idle,
                   max(value) FILTER (WHERE metric = 'node_cpu_total_s') AS total
            FROM staged WHERE metric IN ('node_cpu_idle_s', 'node_cpu_total_s') GROUP BY node, ts),
        cpu_delta AS (
            SELECT node, ts, idle - lag(idle) OVER w AS d_idle, total - lag(total) OVER w AS d_total
            FROM cpu WHERE idle IS NOT NULL AND total IS NOT NULL
            WINDOW w AS (PARTITION BY node ORDER BY ts)),
        mem AS (
            SELECT node, ts,
                   max(value) FILTER (WHERE metric = 'node_mem_total_gib') AS total,
                   max(value) FILTER (WHERE metric = 'node_mem_available_gib') AS avail
            FROM staged WHERE metric IN ('node_mem_total_gib', 'node_mem_available_gib')
            GROUP BY node, ts)
        SELECT ts, node, gpu_index, 'gpu_energy_j' AS metric,
               CASE WHEN value >= prev_value THEN value - prev_value ELSE value END AS value, prev_ts
        FROM energy WHERE prev_value IS NOT NULL
        UNION ALL
        SELECT ts, node, NULL, 'node_cpu_util_pct', 100.0 * (1.0 - d_idle / d_total), NULL
        FROM cpu_delta WHERE d_total > 0 AND d_idle >= 0 AND d_idle <= d_total
        UNION ALL
        SELECT ts, node, NULL, 'node_mem_used_gib', greatest(total - avail, 0.0), NULL
        FROM mem WHERE total IS NOT NULL AND avail IS NOT NULL
        UNION ALL
        SELECT ts, node, gpu_index, metric, value, NULL FROM staged
        WHERE metric NOT IN ('gpu_energy_j', 'node_cpu_idle_s', 'node_cpu_total_s',
                             'node_mem_total_gib', 'node_mem_available_gib')
        """ + ("ORDER BY ts" if ordered else ""))
