"""The canonical long table: CSV or Parquet with ``ts, node, gpu_index, metric, value``.

``ts`` is UTC epoch seconds, ``gpu_index`` empty for node metrics, ``metric`` a canonical metric
name (or a source name the metric map knows; its scale is then applied), ``value`` a number.
Large Parquet files are not loaded into memory: the engine reads them through DuckDB, pushing the
per-day time filter into the Parquet row-group statistics. This module checks the files up
front (columns, types, metric names, timestamp unit) with errors naming file and line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from swftools.errors import InputError, count, plural
from swftools.fileio import is_gzip
from swftools.formats.datapackage.cells import DECIMAL
from swftools.formats.inputs import detect_gzip
from swftools.telemetry.buffer import TS_MAX_S, TS_MIN_S, FileStats, timestamp_problem
from swftools.telemetry.metric_map import MetricMap, canonical_metrics

LONG_COLUMNS = ("ts", "node", "gpu_index", "metric", "value")
# The texts of the CSV's numbers (ASCII; no '_', no blanks, no hex), for DuckDB's RE2.
GPU_INDEX_PATTERN = "[0-9]{1,9}"
TS_PATTERN = DECIMAL
VALUE_PATTERN = TS_PATTERN + "|[+-]?(?i:inf|infinity|nan)"


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def csv_compression(path: Path, *, warn: bool = False) -> str:
    """DuckDB's ``read_csv`` option for ``path``: gzip by content, not by name (``warn``: warn
    once when a ``.gz`` name holds plain content)."""
    compressed = detect_gzip(path) if warn else is_gzip(path)
    return "compression = 'gzip'" if compressed else "compression = 'none'"


@dataclass
class LongTable:
    """A checked long-table file: the DuckDB expression reading it, and what it holds."""

    path: Path
    kind: str  # 'parquet' | 'csv'
    metrics: tuple[str, ...]  # source metric names present
    ts_sorted: bool  # Parquet row groups in ts order (day filters prune)
    stats: FileStats
    src: int = 0  # input order (first file wins among duplicates)
    ts_min: float | None = None  # time span of the rows (None: no rows); the Dask engine
    ts_max: float | None = None  # sends a day only the files whose span meets it

    def scan_sql(self) -> str:
        """A DuckDB table expression with typed columns plus ``line`` (file line / row)."""
        p = _sql_str(str(self.path))
        if self.kind == "parquet":
            return (f"(SELECT CAST(ts AS DOUBLE) AS ts, CAST(node AS VARCHAR) AS node, "
                    f"CAST(gpu_index AS INTEGER) AS gpu_index, CAST(metric AS VARCHAR) AS metric, "
                    f"CAST(value AS DOUBLE) AS value, file_row_number + 1 AS line "
                    f"FROM read_parquet({p}, file_row_number = true))")
        # DuckDB's casts also take '1_000', ' 5', '1.5' as an integer: match the text first
        return (f"(SELECT CASE WHEN regexp_full_match(ts, '{TS_PATTERN}') THEN TRY_CAST(ts AS "
                f"DOUBLE) END AS ts, node, CASE WHEN regexp_full_match(gpu_index, "
                f"'{GPU_INDEX_PATTERN}') THEN CAST(gpu_index AS INTEGER) END AS gpu_index, metric, "
                f"CASE WHEN regexp_full_match(value, '{VALUE_PATTERN}') THEN TRY_CAST(value AS "
                f"DOUBLE) END AS value, "
                f"raw_ts, raw_gpu, raw_value, line "
                f"FROM (SELECT ts, node, gpu_index, metric, value, ts AS raw_ts, "
                f"gpu_index AS raw_gpu, value AS raw_value, row_number() OVER () + 1 AS line "
                f"FROM read_csv({p}, header = true, all_varchar = true, "
                f"{csv_compression(self.path)}, "
                f"parallel = false, columns = {{'ts': 'VARCHAR', 'node': 'VARCHAR', "
                f"'gpu_index': 'VARCHAR', 'metric': 'VARCHAR', 'value': 'VARCHAR'}})))")


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    raise InputError(str(path), "not a long table", expected=".csv, .csv.gz or .parquet")


def _check_header(path: Path, con: duckdb.DuckDBPyConnection, kind: str) -> None:
    p = _sql_str(str(path))
    try:
        if kind == "parquet":
            names = [f.name for f in pq.read_schema(path)]
        else:
            names = [r[0] for r in con.execute(
                f"DESCRIBE SELECT * FROM read_csv({p}, header = true, all_varchar = true, "
                f"{csv_compression(path, warn=True)})").fetchall()]
    except (duckdb.Error, OSError, ValueError) as exc:
        raise InputError(str(path), f"cannot read {kind} file: {str(exc).splitlines()[0]}") from None
    missing = [c for c in LONG_COLUMNS if c not in names]
    if missing:
        raise InputError(str(path), f"missing {plural(len(missing), 'column')} {', '.join(missing)}", line=1,
                         field="header", value=",".join(names),
                         expected=f"columns {', '.join(LONG_COLUMNS)}")
    if kind == "parquet":
        _check_parquet_types(path)


# What each Parquet column may hold (the CSV's cells are checked one by one instead); a column
# of nulls only has the type null (its nulls are refused with the row group, gpu_index aside).
PARQUET_TYPES = {"ts": ("a number", "integer floating null"),
                 "value": ("a number", "integer floating null"),
                 "gpu_index": ("an integer", "integer null"),
                 "node": ("text", "string large_string null"),
                 "metric": ("text", "string large_string null")}


def _check_parquet_types(path: Path) -> None:
    """Refuse a Parquet column whose type cannot hold its values (a text ``ts``, say)."""
    import pyarrow.types as pat

    schema = pq.read_schema(path)
    for name, (what, kinds) in PARQUET_TYPES.items():
        typ = schema.field(name).type
        if not any(getattr(pat, f"is_{k}")(typ) for k in kinds.split()):
            raise InputError(str(path), f"column {name} is of type {typ}", field=name,
                             value=str(typ), expected=what)


def _ts_sorted(path: Path) -> bool:
    """Whether the Parquet row groups' ts ranges follow each other (so day filters prune)."""
    meta = pq.ParquetFile(path).metadata
    col = meta.schema.names.index("ts")
    last_max = -math.inf
    for i in range(meta.num_row_groups):
        st = meta.row_group(i).column(col).statistics
        if st is None or not st.has_min_max:
            return False
        if st.min < last_max:
            return False
        last_max = st.max
    return True


def check_long_table(path: str | Path, metric_map: MetricMap, con: duckdb.DuckDBPyConnection
                     ) -> LongTable:
    """Check one long table (columns, numbers, metric names, timestamp unit); return its handle."""
    path = Path(path)
    if not path.is_file():
        raise InputError(str(path), "no such file")
    kind = _kind(path)
    _check_header(path, con, kind)
    table = LongTable(path, kind, (), False, FileStats(str(path), f"long-{kind}"))
    scan = table.scan_sql()
    if kind == "csv":
        bad = con.execute(
            f"SELECT line, raw_ts, raw_gpu, raw_value, node, metric FROM {scan} "
            f"WHERE (ts IS NULL) OR (raw_gpu IS NOT NULL AND raw_gpu <> '' AND gpu_index IS NULL) "
            f"OR (value IS NULL AND raw_value IS NOT NULL) OR node IS NULL OR metric IS NULL "
            f"OR value IS NULL ORDER BY line LIMIT 1").fetchone()
        if bad:
            line, raw_ts, raw_gpu, raw_value, node, metric = bad
            if raw_ts is None or not re.fullmatch(TS_PATTERN, raw_ts):
                raise InputError(str(path), f"ts {raw_ts!r} is not a number", line=line,
                                 field="ts", value=str(raw_ts), expected="UTC epoch seconds")
            if raw_gpu not in (None, "") and not re.fullmatch(GPU_INDEX_PATTERN, raw_gpu):
                raise InputError(str(path), f"gpu_index {raw_gpu!r} is not a GPU index", line=line,
                                 field="gpu_index", value=raw_gpu,
                                 expected="a non-negative integer, or empty for node metrics")
            if node is None or metric is None:
                which = "node" if node is None else "metric"
                raise InputError(str(path), f"{which} is empty", line=line, field=which)
            raise InputError(str(path), f"value {raw_value!r} is not a number", line=line,
                             field="value", value=str(raw_value), expected="a number")
    try:
        row = _parquet_summary(path) if kind == "parquet" else None
        if row is None:
            row = con.execute(f"SELECT min(ts), max(ts), count(*) FROM {scan}").fetchone()
        metrics = tuple(sorted(r[0] for r in con.execute(f"SELECT DISTINCT metric FROM {scan}").fetchall()))
    except duckdb.Error as exc:
        raise InputError(str(path), f"cannot read: {str(exc).splitlines()[0]}") from None
    lo, hi, n = row
    table.stats.samples_read = int(n)
    if lo is not None and not (TS_MIN_S <= lo and hi < TS_MAX_S):
        line, ts = con.execute(f"SELECT line, ts FROM {scan} WHERE NOT (ts >= {TS_MIN_S} AND "
                           f"ts < {TS_MAX_S}) ORDER BY line LIMIT 1").fetchone()
        raise InputError(str(path), timestamp_problem(ts) or "bad timestamp", line=line,
                         field="ts", value=repr(ts))
    for m in metrics:
        if metric_map.lookup(m) is None and m not in canonical_metrics():
            (line,) = con.execute(f"SELECT min(line) FROM {scan} WHERE metric = {_sql_str(m)}").fetchone()
            raise InputError(str(path), f"metric {m!r} is neither canonical nor in the metric map",
                             line=line, field="metric", value=m,
                             expected=f"one of {', '.join(canonical_metrics())} or a mapped name")
    table.metrics = metrics
    table.ts_min, table.ts_max = (None, None) if lo is None else (float(lo), float(hi))
    table.ts_sorted = kind == "parquet" and _ts_sorted(path)
    return table


def _parquet_summary(path: Path) -> tuple[float | None, float | None, int] | None:
    """(min ts, max ts, rows) from the Parquet footer; None when statistics are missing.

    Also rejects nulls in the required columns (footer null counts), naming the first row group.
    """
    meta = pq.ParquetFile(path).metadata
    names = meta.schema.names
    lo, hi, first_row = math.inf, -math.inf, 0
    for i in range(meta.num_row_groups):
        rg = meta.row_group(i)
        for name in ("ts", "node", "metric", "value"):
            st = rg.column(names.index(name)).statistics
            if st is None:
                return None
            if st.null_count:
                raise InputError(str(path), f"{name} is empty in {count(st.null_count, 'row')}",
                                 line=None, field=name,
                                 expected=f"no nulls (row group {i}, rows from {first_row + 1})")
        st = rg.column(names.index("ts")).statistics
        if rg.num_rows:
            if not st.has_min_max:
                return None
            lo, hi = min(lo, float(st.min)), max(hi, float(st.max))
        first_row += rg.num_rows
    if meta.num_rows == 0:
        return None, None, 0
    return lo, hi, meta.num_rows

