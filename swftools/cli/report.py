"""``swftools report PATH --out DIR``: the AAIC paper's five analyses, with figures."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools.cli.common import handle_errors

SRC_HELP = ("Trace: NQSII log (.csv[.gz]), SWF (.swf[.gz]) or data package (directory or "
            "datapackage.json).")
OUT_HELP = ("Output directory (report.md, report.json, PNG figures); must not exist unless "
            "--force.")
SITE_HELP = ("Site preset name or site settings JSON file (queue limits, capacity, time zone); "
             "default: the site the trace names, if any.")


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to ``app``."""

    @app.command("report")
    def report(
        src: Path = typer.Argument(..., help=SRC_HELP),
        out: Path = typer.Option(..., "--out", "-o", help=OUT_HELP),
        site: Optional[str] = typer.Option(None, "--site", help=SITE_HELP),
        seed: int = typer.Option(0, "--seed", min=0,
                                 help="Seed of the balanced correlation sample."),
        from_format: Optional[str] = typer.Option(None, "--from",
                                                  help="Input format: swf, nqsii, package."),
        force: bool = typer.Option(False, "--force", help="Replace an existing output directory."),
    ) -> None:
        """Workload report: parallelism, request accuracy, walltime, correlation, arrivals."""
        from swftools.report import report as make_report
        from swftools.report.frame import is_skipped

        with handle_errors():
            result = make_report(src, out, site=site, seed=seed, force=force, fmt=from_format)
        data = result.data
        typer.echo(f"wrote {out}/report.md, report.json and {len(result.figures)} figures "
                   f"({data['trace']['jobs']:,} jobs)", err=True)
        for section in ("analyses", "context"):
            for name, value in data[section].items():
                if is_skipped(value):
                    typer.echo(f"  skipped {name}: {value['reason']}", err=True)
