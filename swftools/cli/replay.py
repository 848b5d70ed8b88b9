"""``swftools replay TRACE``: FCFS / EASY replay on the declared resources, and ``--compare``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools.cli.common import (FROM_HELP, JSON_HELP, OUT_OPTION, SCHEDULER_HELP, SCHEDULERS,
                                 SITE_HELP, deprecated, handle_errors)
from swftools.errors import UsageError

# The help text needs these names before the replay library (numpy, pyarrow) is loaded, so they
# are spelled here; tests/test_cli_startup.py checks that they equal swftools.replay.POLICIES,
# swftools.replay.ALLOCATIONS and swftools.replay.compare.DAY_S.
POLICIES = SCHEDULERS
ALLOCATIONS = ("first-fit", "best-fit")
DAY_S = 86_400


def render_summary(summary: dict) -> str:
    """The replay summary as aligned text."""
    unit = summary["unit"]
    rows = [
        ("model", summary["model"]),
        ("policy", summary["policy"] + (" (run times capped at the request)"
                                         if summary["kill_at_request"] else "")),
        ("jobs replayed", summary["jobs"]),
        ("jobs skipped", f"{summary['skipped']}" + "".join(
            f"; {k}: {v}" for k, v in summary["skipped_by_reason"].items())),
        ("makespan (s)", summary["makespan_s"]),
        ("mean wait (s)", summary["mean_wait_s"]),
        ("median wait (s)", summary["median_wait_s"]),
        (f"mean bounded slowdown (tau={summary['bounded_slowdown_tau_s']} s)",
         summary["mean_bounded_slowdown"]),
        ("utilization", summary["utilization"]),
        (f"peak {unit} busy", f"{summary['peak_busy']} of {summary['capacity']}"),
    ]
    width = max(len(k) for k, _ in rows)
    return "".join(f"{k:<{width}}  {'-' if v is None else v}\n" for k, v in rows)


def register(app: typer.Typer) -> None:
    """Add the ``replay`` command to ``app``."""

    @app.command("replay")
    def replay_command(
        trace: Path = typer.Argument(..., metavar="TRACE", help="Trace to replay: SWF "
                                     "(.swf[.gz]), NQSII log or data package."),
        from_format: Optional[str] = typer.Option(None, "--from",
                                                  help=FROM_HELP),
        site: Optional[str] = typer.Option(
            None, "--site", help="Replay on this site's GPU nodes. " + SITE_HELP),
        procs: Optional[int] = typer.Option(
            None, "--procs", help="Replay on a flat pool of N processors (SWF mode; default: "
                                  "the SWF header's MaxProcs)."),
        scheduler: str = typer.Option("easy", "--scheduler", help=SCHEDULER_HELP),
        old_policy: Optional[str] = typer.Option(None, "--policy", hidden=True,
                                                 help="Deprecated: use --scheduler."),
        allocation: str = typer.Option("first-fit", "--allocation",
                                       help=f"GPU model node choice: {', '.join(ALLOCATIONS)}."),
        kill_at_request: bool = typer.Option(False, "--kill-at-request",
                                             help="Cap each run time at the requested time."),
        out: Optional[Path] = typer.Option(
            None, *OUT_OPTION, help="Write jobs.parquet, jobs.csv, skipped.csv, summary.json "
                                "(and compare.json, compare.txt with --compare) to this directory."),
        compare_flag: bool = typer.Option(False, "--compare",
                                          help="Consistency report: recorded vs replayed."),
        bin_s: int = typer.Option(DAY_S, "--bin-s", min=1,
                                  help="Utilization bin width for --compare, seconds."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
        force: bool = typer.Option(False, "--force", help="Overwrite an existing --out directory."),
    ) -> None:
        """Replay a trace through FCFS or EASY backfilling on the declared resources."""
        from swftools import formats  # on use: keeps start-up light (issue 15)
        from swftools.atomic import check_not_inside, check_writable
        from swftools.replay import replay
        from swftools.replay.result import summary_json
        from swftools.site import resolve_site

        with handle_errors():
            if old_policy is not None:
                deprecated("--policy", "--scheduler")
                scheduler = old_policy
            if out is not None:
                check_writable(out, force, directory=True)
                check_not_inside([trace, site if site and Path(site).is_file() else None], out)
            fmt = from_format or formats.detect_format(trace)
            if site is not None and procs is not None:
                raise UsageError("give either --site (GPU nodes) or --procs (flat pool), not both")
            table = formats.read(trace, fmt, site=resolve_site(site, fmt=fmt))
            replay_site = resolve_site(site, table, fmt=fmt) if procs is None else None
            result = replay(table, site=replay_site, policy=scheduler, allocation=allocation,
                            kill_at_request=kill_at_request, procs=procs)
            report = None
            if compare_flag:
                from swftools.replay.compare import compare, render_text

                report = compare(table, result, bin_s=bin_s)
            if out is not None:
                extra = {} if report is None else {"compare.json": summary_json(report),
                                                   "compare.txt": render_text(report)}
                result.write(out, force=force, extra=extra)
        if as_json:
            payload = result.summary if report is None else {"summary": result.summary,
                                                             "compare": report}
            typer.echo(summary_json(payload), nl=False)
            return
        typer.echo(render_summary(result.summary), nl=False)
        if report is not None:
            typer.echo("")
            typer.echo(render_text(report), nl=False)
