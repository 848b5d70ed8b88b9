"""``swftools telemetry attach|synth``: per-job telemetry aggregates and their test fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools.cli.common import (JSON_HELP, OUT_OPTION, SITE_PRESETS_HELP, deprecated,
                                 handle_errors, output_path, print_json)
from swftools.cli.group import Typer
from swftools.errors import UsageError, count

# swftools.telemetry.engine.DEFAULT_MEMORY_CAP_MB, spelled here for the help text (no duckdb
# import at start-up; tests/test_cli_startup.py checks they are equal)
MEMORY_CAP_MB = 2048

telemetry_app = Typer(name="telemetry", no_args_is_help=True, add_completion=False,
                      help="Per-job GPU, CPU and power aggregates from Prometheus-style exports."
                           "\n\nattach adds them to a trace; synth writes test fixtures.")


@telemetry_app.command("attach")
def attach_command(
    jobs: Path = typer.Argument(..., metavar="JOBS", help="Data package (directory or "
                                "datapackage.json) to add the job_telemetry resource to; with "
                                "--out, any trace swftools reads."),
    samples: list[Path] = typer.Argument(..., metavar="SAMPLES...", help="Sample files or "
                                         "directories: Prometheus API JSON (.json[.gz]), text "
                                         "exposition/OpenMetrics, long table (.csv[.gz], "
                                         ".parquet)."),
    maps: Optional[list[str]] = typer.Option(None, "--map", help="Metric map: preset (dcgm, "
                                             "nvidia_gpu_exporter, node_exporter, ipmi_exporter) or "
                                             "JSON/YAML file; repeat. Default: dcgm, node_exporter, "
                                             "ipmi_exporter."),
    canonical: bool = typer.Option(False, "--canonical", help="Samples already use canonical "
                                   "metric names and units (long tables); no map."),
    allocations: Optional[Path] = typer.Option(None, "--allocations", help="Allocation table, "
                                               "CSV/Parquet job_id,node,gpu_index (gpu_index "
                                               "empty: node only)."),
    site: Optional[str] = typer.Option(None, "--site", help=SITE_PRESETS_HELP + ": its GPUs per "
                                       "node. Default: the jobs' site."),
    gpus_per_node: Optional[int] = typer.Option(None, "--gpus-per-node",
                                               help="GPUs per node (default: the site's)."),
    interval_s: int = typer.Option(60, "--interval", help="Nominal sampling interval, seconds."),
    idle_threshold_pct: float = typer.Option(0.0, "--idle-threshold", help="GPU utilization (%) "
                                             "at or below which a sample counts as idle."),
    input_format: str = typer.Option("auto", "--from", help="Sample format: auto, "
                                     "prometheus-json, prometheus-text, openmetrics, long."),
    old_format: Optional[str] = typer.Option(None, "--format", hidden=True,
                                             help="Deprecated: use --from."),
    sampling: str = typer.Option("auto", "--sampling", help="auto, raw or resampled (recorded)."),
    partition: str = typer.Option("day", "--partition", help="day (bounded memory) or none."),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit",
                                               help="DuckDB memory limit, e.g. 4GB; it spills beyond it "
                                                    f"(default 60 % of RAM, at most {MEMORY_CAP_MB}MB)."),
    threads: Optional[int] = typer.Option(None, "--threads", help="DuckDB threads (default: all cores)."),
    engine: str = typer.Option("duckdb", "--engine", help="duckdb (this machine) or dask (day "
                               "partitions on a Dask cluster; Parquet long tables only)."),
    dask_scheduler: Optional[str] = typer.Option(None, "--dask-scheduler", help="Dask scheduler "
                                                 "address, e.g. tcp://host:8786 (default: a local "
                                                 "cluster)."),
    old_scheduler: Optional[str] = typer.Option(None, "--scheduler", hidden=True,
                                                help="Deprecated: use --dask-scheduler."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Worker processes of the local "
                                          "Dask cluster (default: one per core)."),
    out: Optional[Path] = typer.Option(None, *OUT_OPTION, help="Write job_telemetry alone to this "
                                       ".csv, .csv.gz or .parquet instead of into the package."),
    force: bool = typer.Option(False, "--force", help="Replace an existing output/resource."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Compute per-job telemetry aggregates and add them to the data package."""
    from swftools import formats
    from swftools.telemetry import DEFAULT_MAPS, attach, attach_to_package, write_table
    from swftools.site import resolve_site

    with handle_errors():
        if old_format is not None:
            deprecated("--format", "--from")
            input_format = old_format
        if old_scheduler is not None:
            deprecated("--scheduler", "--dask-scheduler")
            dask_scheduler = dask_scheduler or old_scheduler
        if canonical and maps:
            raise UsageError("--canonical and --map exclude each other")
        options = dict(metric_map=None if canonical else (maps or list(DEFAULT_MAPS)),
                       allocations=allocations, site=site, gpus_per_node=gpus_per_node,
                       interval_s=interval_s, idle_threshold_pct=idle_threshold_pct,
                       input_format=input_format, sampling=sampling, partition=partition,
                       memory_limit=memory_limit, threads=threads, engine=engine,
                       scheduler=dask_scheduler, workers=workers)
        if out is None:
            if formats.detect_format(jobs) != "package":
                raise UsageError(f"{jobs}: not a data package; give --out to write the table alone")
            attach_to_package(jobs, samples, force=force, **options)
            if as_json:
                print_json({"package": str(jobs), "resource": "job_telemetry"})
            else:
                typer.echo(f"added resource job_telemetry to {jobs}", err=True)
        else:
            from swftools.atomic import check_writable

            check_writable(out, force)
            fmt = formats.detect_format(jobs)
            table = attach(formats.read(jobs, fmt, site=resolve_site(site, fmt=fmt)), samples,
                           work_dir=out.resolve().parent, **options)
            write_table(table, out, force=force)
            if as_json:
                print_json({"rows": table.num_rows, "out": str(out)})
            else:
                typer.echo(f"wrote {count(table.num_rows, 'row')} to {out}", err=True)


@telemetry_app.command("synth")
def synth_command(
    jobs: Path = typer.Argument(..., metavar="JOBS",
                                help="Job trace (package, NQSII, SWF) the samples follow."),
    out: Optional[Path] = typer.Option(None, *OUT_OPTION, help="New directory for the fixtures."),
    old_out: Optional[Path] = typer.Argument(None, hidden=True, metavar="OUT_DIR", help="Deprecated: use --out."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same bytes)."),
    interval_s: int = typer.Option(60, "--interval", help="Sampling interval, seconds."),
    days: Optional[float] = typer.Option(1.0, "--days", help="Cover only the first N days "
                                         "(0: the whole trace)."),
    nodes: Optional[int] = typer.Option(None, "--nodes", help="Nodes (default: the trace's synth "
                                        "metadata, else 38)."),
    gpus_per_node: int = typer.Option(8, "--gpus-per-node", help="GPUs per node."),
    fmt: Optional[list[str]] = typer.Option(None, "--to", help="Formats to write (repeat): "
                                            "prometheus-json, prometheus-json-raw, prometheus-text, "
                                            "openmetrics, long-csv, long-parquet. Default: all."),
    old_fmt: Optional[list[str]] = typer.Option(None, "--format", hidden=True,
                                                help="Deprecated: use --to."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Write deterministic per-minute telemetry fixtures for a job trace.

    One file per sample format that telemetry attach reads (--to chooses).
    """
    from swftools import formats
    from swftools.synth.telemetry import FORMATS, generate_telemetry

    with handle_errors():
        out_dir = output_path(out, old_out, "the positional OUT_DIR")
        if old_fmt:
            deprecated("--format", "--to")
            fmt = [*(fmt or []), *old_fmt]
        written = generate_telemetry(formats.read(jobs), out_dir, formats=tuple(fmt or FORMATS),
                                     seed=seed, interval_s=interval_s, nodes=nodes,
                                     gpus_per_node=gpus_per_node, days=days or None)
    if as_json:
        print_json({**{k: v for k, v in written.items() if isinstance(v, (int, float, str))},
                    "out": str(out_dir)})
        return
    typer.echo(f"wrote {written['minutes']} samples per series for {written['nodes']} nodes "
               f"({written['placed_jobs']} jobs placed) to {out_dir}", err=True)


def register(app: typer.Typer) -> None:
    """Add the ``telemetry`` command group to ``app``."""
    app.add_typer(telemetry_app)
