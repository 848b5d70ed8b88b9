"""Worked telemetry samples shared by the ``attach`` and Dask engine tests.

Job 1 holds GPU g1/0 from T0 - 180 to T0 + 120 (T0 a UTC midnight); its samples come in two
files, one per UTC day, the second repeating midnight's samples with other values (the first
file wins).
"""

from __future__ import annotations

from pathlib import Path

T0 = 1_700_006_400  # a UTC midnight
DAY = 86_400
#  minute:        -2     -1     0      +1
UTIL = [0.5, 30.0, 50.0, 70.0]  # idle at a 30 % threshold: 2 of 4; at the default 0 %: none
ENERGY = [100.0, 160.0, 250.0, 40.0]  # +60, +90 across midnight, a reset: +40


def sample_rows(metric: str, values, minutes=(-2, -1, 0, 1)) -> list[tuple]:
    """Long-table rows ``(ts, node, gpu_index, metric, value)`` of g1/0 at T0 + each minute."""
    return [(T0 + 60.0 * m, "g1", 0, metric, v) for m, v in zip(minutes, values)]


def write_long(path: Path, rows) -> Path:
    """A canonical long table (``ts, node, gpu_index, metric, value``): Parquet (written by
    DuckDB: no pandas to import) or CSV, by the name's suffix."""
    if path.suffix == ".parquet":
        import duckdb

        values = ", ".join(f"({ts!r}, '{node}', {gpu}, '{metric}', {value!r})"
                           for ts, node, gpu, metric, value in rows)
        duckdb.execute(f"COPY (SELECT ts::DOUBLE AS ts, node::VARCHAR AS node, "
                       f"gpu_index::INTEGER AS gpu_index, metric::VARCHAR AS metric, "
                       f"value::DOUBLE AS value FROM (VALUES {values}) t(ts, node, gpu_index, "
                       f"metric, value)) TO '{path}' (FORMAT parquet)")
    else:
        path.write_text("ts,node,gpu_index,metric,value\n" + "".join(
            f"{int(r[0])},{r[1]},{r[2]},{r[3]},{r[4]}\n" for r in rows))
    return path


def two_day_samples(folder: Path, suffix: str = ".parquet") -> list[Path]:
    """``day0`` and ``day1`` (``suffix``): UTIL and ENERGY split at T0; the first also holds
    midnight's samples, which the second repeats with other values (99 %, 999 J)."""
    rows = sample_rows("gpu_util_pct", UTIL) + sample_rows("gpu_energy_j", ENERGY)
    first = [r for r in rows if r[0] <= T0]
    second = [r for r in rows if r[0] > T0] + [(T0, "g1", 0, "gpu_util_pct", 99.0),
                                                (T0, "g1", 0, "gpu_energy_j", 999.0)]
    return [write_long(folder / f"day0{suffix}", first),
            write_long(folder / f"day1{suffix}", second)]
