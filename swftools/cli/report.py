"""``swftools report PATH --out DIR``: the AAIC paper's five analyses, with figures."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools.cli.common import ALLOW_EMPTY_HELP, FROM_HELP, OUT_OPTION, SITE_HELP, handle_errors
from swftools.errors import count

SRC_HELP = ("Trace: NQSII log (.csv[.gz]), SWF (.swf[.gz]) or data package (directory or "
            "datapackage.json).")
OUT_HELP = ("Output directory (report.md, report.json, PNG figures; index.html with --html); must "
            "not exist unless --force.")
HTML_HELP = ("Also write index.html: the report as one self-contained page (figures inlined, no "
             "script, no network), with the validation and replay consistency summaries.")
WHATIF_HELP = "Add the comparison of a `swftools whatif --out DIR` folder to index.html."


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to ``app``."""

    @app.command("report")
    def report(
        src: Path = typer.Argument(..., metavar="SRC", help=SRC_HELP),
        out: Path = typer.Option(..., *OUT_OPTION, help=OUT_HELP),
        site: Optional[str] = typer.Option(None, "--site", help=SITE_HELP),
        seed: int = typer.Option(0, "--seed", min=0,
                                 help="Seed of the balanced correlation sample."),
        from_format: Optional[str] = typer.Option(None, "--from",
                                                  help=FROM_HELP),
        force: bool = typer.Option(False, "--force", help="Replace an existing output directory."),
        allow_empty: bool = typer.Option(False, "--allow-empty", help=ALLOW_EMPTY_HELP),
        html: bool = typer.Option(False, "--html", help=HTML_HELP),
        whatif: Optional[Path] = typer.Option(None, "--whatif", help=WHATIF_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print report.json on stdout too."),
    ) -> None:
        """Workload report: parallelism, request accuracy, walltime, correlation, arrivals."""
        from swftools.report import report as make_report
        from swftools.report.frame import is_skipped

        with handle_errors():
            result = make_report(src, out, site=site, seed=seed, force=force, fmt=from_format,
                                 allow_empty=allow_empty, html=html, whatif=whatif)
        data = result.data
        typer.echo(f"wrote {out}/report.md, report.json{', index.html' if html else ''} and "
                   f"{count(len(result.figures), 'figure')} "
                   f"({count(data['trace']['jobs'], 'job', thousands=True)})", err=True)
        for section in ("analyses", "context"):
            for name, value in data[section].items():
                if is_skipped(value):
                    typer.echo(f"  skipped {name}: {value['reason']}", err=True)
        if as_json:
            typer.echo((out / "report.json").read_text(encoding="utf-8"), nl=False)
