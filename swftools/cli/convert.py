"""``swftools convert IN --out OUT``: any supported format to any other, through the job table."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools import formats, progress
from swftools.cli.common import (ALLOW_EMPTY_HELP, JSON_HELP, OUT_OPTION, SITE_HELP, handle_errors,
                                 output_path, print_json)
from swftools.site import resolve_site


def register(app: typer.Typer) -> None:
    """Add the ``convert`` command to ``app``."""

    @app.command("convert")
    def convert(
        src: Path = typer.Argument(..., help="Input trace: NQSII log (.csv[.gz]), SWF (.swf[.gz]) "
                                             "or data package (directory or datapackage.json)."),
        out: Optional[Path] = typer.Option(None, *OUT_OPTION, help="Output path; its format comes "
                                                                   "from the name unless --to."),
        dst: Optional[Path] = typer.Argument(None, hidden=True, metavar="OUT",
                                             help="Deprecated: use --out."),
        from_format: Optional[str] = typer.Option(None, "--from", help="Input format: swf, nqsii, package."),
        to_format: Optional[str] = typer.Option(None, "--to", help="Output format: swf, nqsii, package."),
        site: Optional[str] = typer.Option(None, "--site", help=SITE_HELP),
        form: str = typer.Option("raw", "--form", help="NQSII output form: raw or published."),
        force: bool = typer.Option(False, "--force", help="Overwrite an existing output."),
        allow_empty: bool = typer.Option(False, "--allow-empty", help=ALLOW_EMPTY_HELP),
        show_progress: Optional[bool] = typer.Option(None, "--progress/--no-progress",
                                                     help="Progress bar (default: large inputs on a terminal)."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Convert a trace between NQSII, SWF and Frictionless data package formats."""
        with handle_errors():
            dst = output_path(out, dst, "the positional OUT")
            src_fmt = from_format or formats.detect_format(src)
            dst_fmt = to_format or formats.detect_format(dst)
            write_opts = {"form": form} if dst_fmt == "nqsii" else {}
            with progress.stages([f"reading {src.name}", f"writing {dst.name}"],
                                 progress.wanted(src, show_progress)) as advance:
                table = formats.read(src, src_fmt, site=resolve_site(site, fmt=src_fmt),
                                     allow_empty=allow_empty)
                advance()
                site_obj = resolve_site(site, table, fmt=src_fmt)
                losses = formats.write(table, dst, dst_fmt, site=site_obj, force=force, **write_opts)
                advance()
        if as_json:
            print_json({"jobs": table.num_rows, "from": str(src), "from_format": src_fmt,
                        "out": str(dst), "to_format": dst_fmt,
                        "site": site_obj.name if site_obj else None, "losses": losses})
            return
        typer.echo(f"converted {table.num_rows} jobs: {src} ({src_fmt}) -> {dst} ({dst_fmt})", err=True)
        if losses:
            typer.echo(f"note: the {dst_fmt} output cannot carry everything:", err=True)
            for loss in losses:
                typer.echo(f"  - {loss}", err=True)
