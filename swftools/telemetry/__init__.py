"""Per-job GPU/CPU/power aggregates from Prometheus-style exports, joined out of core (DuckDB).

``attach(jobs, samples, ...)`` returns the ``job_telemetry`` table (``schemas/job_telemetry
.schema.json``); ``attach_to_package(package, samples, ...)`` adds it to a data package with a
foreign key to ``jobs``. Inputs: Prometheus HTTP API JSON, text exposition 0.0.4 / OpenMetrics,
or the canonical long table (CSV/Parquet), mapped by metric maps (presets in
``schemas/metric-maps/``); allocations ``job_id, node, gpu_index``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from swftools import table as jt
from swftools.errors import InputError, UsageError, plural
from swftools.telemetry import engine, output
from swftools.telemetry import engine as sql  # ``attach`` has an ``engine`` option
from swftools.telemetry.allocations import load_allocations, prepare_allocations
from swftools.telemetry.metric_map import (PRESETS, MetricMap, canonical_metrics, identity_map,
                                           load_metric_map)
from swftools.telemetry.samples import read_samples, stage

RESOURCE = "job_telemetry"
DEFAULT_MAPS = ("dcgm", "node_exporter", "ipmi_exporter")

__all__ = ["DEFAULT_MAPS", "PRESETS", "RESOURCE", "attach", "attach_to_package",
           "canonical_metrics", "generate_telemetry", "load_metric_map"]


def _gpus_per_node(jobs: pa.Table, gpus_per_node: int | None, site: Any) -> int:
    if gpus_per_node is not None:
        if gpus_per_node < 1:
            raise UsageError(f"gpus_per_node must be >= 1, not {gpus_per_node}")
        return int(gpus_per_node)
    from swftools.site import resolve_site

    resolved = resolve_site(site, jobs)  # the one site rule
    if resolved is not None:
        return resolved.gpus_per_node
    raise UsageError("the GPUs per node are unknown: give gpus_per_node or a site")


def _engine_choice(name: str, partition: str, scheduler: str | None, workers: int | None,
                   samples: Sequence[str | Path], input_format: str) -> str:
    """Check the engine options (before any work); returns the engine name."""
    if name not in sql.ENGINES:
        raise UsageError(f"unknown engine {name!r} (choose from {', '.join(sql.ENGINES)})")
    if name == "duckdb":
        if scheduler is not None or workers is not None:
            raise UsageError("--dask-scheduler and --workers need --engine dask")
        if partition == "day" and _parquet_long_only(samples, input_format):
            return "duckdb-days"
        return name
    if partition != "day":
        raise UsageError(f"the dask engine runs day partitions, not partition {partition!r}")
    from swftools.telemetry import dask_engine

    dask_engine.check_cluster_options(scheduler, workers)
    dask_engine.check_inputs(samples, input_format)
    return name


def _parquet_long_only(samples: Sequence[str | Path], input_format: str) -> bool:
    """Every input is a Parquet long table: the DuckDB engine then reads and stages them one
    day at a time, as the Dask engine's tasks do (memory bounded by a day, not the whole span)."""
    from swftools.telemetry import dask_engine

    try:
        dask_engine.check_inputs(samples, input_format)
    except (UsageError, InputError):
        return False
    return True


def attach(jobs: pa.Table, samples: Sequence[str | Path], *,
           metric_map: str | Path | Sequence[str | Path] | MetricMap = DEFAULT_MAPS,
           allocations: str | Path | pa.Table | None = None, gpus_per_node: int | None = None,
           site: Any = None, interval_s: int = 60, idle_threshold_pct: float = 0.0,
           partition: str = "day", input_format: str = "auto", sampling: str = "auto",
           memory_limit: str | None = None, threads: int | None = None,
           work_dir: str | Path | None = None,
           progress: Callable[[int, int], None] | None = None, engine: str = "duckdb",
           scheduler: str | None = None, workers: int | None = None) -> pa.Table:
    """Per-job telemetry aggregates for the canonical job table ``jobs``.

    ``samples``: files or directories (several chunks of one export are de-duplicated; the
    first file wins). ``allocations``: table or CSV/Parquet ``job_id, node, gpu_index``
    (``None``: no job can be attributed). ``interval_s``: nominal sampling interval (for the
    expected sample count). ``partition``: 'day' (bounded memory) or 'none' (one query; same
    bytes). DuckDB runs with ``memory_limit`` (default 60 % of RAM, at most
    ``engine.DEFAULT_MEMORY_CAP_MB``, 2048MB) and spills into a temporary
    folder created in ``work_dir``; Parquet long tables with 'day' are read and staged one day
    at a time (the Dask engine's day tasks, run here), so memory is bounded by a day.
    ``engine='dask'`` runs the day partitions on the Dask cluster at ``scheduler`` (default: a
    local cluster of ``workers`` processes) from Parquet long tables; ``memory_limit`` and
    ``threads`` then apply to each day task. Same bytes as 'duckdb'.
    """
    if isinstance(interval_s, bool) or int(interval_s) != interval_s or interval_s < 1:
        raise UsageError(f"interval_s must be a positive whole number of seconds, not {interval_s!r}")
    interval_s = int(interval_s)
    missing = [c for c in ("job_id", "gpus", "gpus_per_node", "start_time", "finish_time")
               if c not in jobs.column_names]
    if missing:
        raise UsageError(f"the job table lacks {plural(len(missing), 'column')} {', '.join(missing)}")
    gpn = _gpus_per_node(jobs, gpus_per_node, site)
    run_on = _engine_choice(engine, partition, scheduler, workers, samples, input_format)
    mmap = load_metric_map(metric_map) if metric_map is not None else identity_map()
    with sql.connection(work_dir, memory_limit=memory_limit,
                        threads=threads if run_on == "duckdb" else None) as con:
        sample_set = read_samples(samples, mmap, con, fmt=input_format, sampling=sampling)
        if run_on == "duckdb":
            stage(con, sample_set)
        sql.register_jobs(con, jobs)
        where = load_allocations(con, allocations)
        prepare_allocations(con, where, gpn)
        # How the work was split is not recorded: every partitioning gives the same bytes.
        if run_on == "duckdb":
            sql.run_partitions(con, partition, idle_threshold_pct, progress,
                               dedupe=sample_set.overlapping)
        else:
            from swftools.telemetry import dask_engine

            dask_engine.run_partitions(con, sample_set, idle_threshold_pct, progress,
                                       scheduler=scheduler, workers=workers,
                                       memory_limit=memory_limit, threads=threads,
                                       in_process=run_on == "duckdb-days", work_dir=work_dir)
        bad = output.out_of_range(con)
        if bad is not None:
            raise InputError(", ".join(s["file"] for s in sample_set.describe_sources()),
                             f"{bad[0]} reaches {bad[1]!r}: negative or a percentage above 100 "
                             "(wrong scale in the metric map or the long table?)",
                             field=bad[0], value=repr(bad[1]))
        metrics = sorted(sample_set.metrics)
        levels = {canonical_metrics()[m].level for m in metrics}
        table = output.finalize(con, interval_s, "gpu" in levels, "node" in levels)
    sources = sample_set.describe_sources()
    meta = {
        "telemetry": {
            "interval_s": interval_s, "sources": sources, "metrics": metrics,
            "metric_map": mmap.describe(), "metric_maps": mmap.names,
            "sampling": sorted({s["sampling"] for s in sources}),
            "idle_threshold_pct": float(idle_threshold_pct), "gpus_per_node": gpn,
            "allocations": Path(where).name if not where.startswith("<") else where,
            "energy": "sum of gpu_energy_j counter increments between consecutive samples "
                      "inside the job; a drop is a counter reset (the new value is the increment)",
            "description": output.describe(interval_s, sources, metrics, mmap.names),
        }
    }
    return jt.with_metadata(table, meta)


def attach_to_package(package: str | Path, samples: Sequence[str | Path], *, force: bool = False,
                      **options: Any) -> list[str]:
    """Compute ``job_telemetry`` for a package's jobs and add it (foreign key job_id -> jobs)."""
    from swftools.formats import datapackage

    root = datapackage.package_dir(package)
    jobs = datapackage.read(root)
    options.setdefault("work_dir", root.resolve().parent)
    table = attach(jobs, samples, **options)
    description = jt.get_metadata(table)["telemetry"]["description"]
    return datapackage.add_resource(root, RESOURCE, table, output.table_schema(), force=force,
                                    title="Job telemetry", description=description)


def write_table(table: pa.Table, path: str | Path, *, force: bool = False) -> None:
    """Write ``job_telemetry`` alone as .csv, .csv.gz or .parquet, atomically, deterministic bytes."""
    from swftools.atomic import atomic_file
    from swftools.fileio import write_parquet
    from swftools.formats.datapackage.files import write_csv_gz

    target = Path(path)
    name = target.name.lower()
    if not name.endswith((".csv", ".csv.gz", ".parquet")):
        raise UsageError(f"{target}: choose a .csv, .csv.gz or .parquet output")
    with atomic_file(target, force) as tmp:
        if name.endswith(".parquet"):
            write_parquet(table, tmp)
        elif name.endswith(".gz"):
            write_csv_gz(table, tmp)
        else:
            import pyarrow.csv as pacsv

            pacsv.write_csv(table, tmp, pacsv.WriteOptions(include_header=True))


def generate_telemetry(*args: Any, **kwargs: Any) -> Any:
    """Deterministic fixture exports for a job table (see ``swftools.synth.telemetry``)."""
    from swftools.synth.telemetry import generate_telemetry as _generate

    return _generate(*args, **kwargs)
