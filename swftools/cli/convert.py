"""``swftools convert IN OUT``: any supported format to any other, through the job table."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools import formats, progress
from swftools.cli.common import handle_errors
from swftools.site import resolve_site


def register(app: typer.Typer) -> None:
    """Add the ``convert`` command to ``app``."""

    @app.command("convert")
    def convert(
        src: Path = typer.Argument(..., help="Input trace: NQSII log (.csv[.gz]), SWF (.swf[.gz]) "
                                             "or data package (directory or datapackage.json)."),
        dst: Path = typer.Argument(..., help="Output path; its format comes from the name unless --to."),
        from_format: Optional[str] = typer.Option(None, "--from", help="Input format: swf, nqsii, package."),
        to_format: Optional[str] = typer.Option(None, "--to", help="Output format: swf, nqsii, package."),
        site: str = typer.Option("aaic", "--site", help="Site preset name or site settings JSON file."),
        form: str = typer.Option("raw", "--form", help="NQSII output form: raw or published."),
        force: bool = typer.Option(False, "--force", help="Overwrite an existing output."),
        show_progress: Optional[bool] = typer.Option(None, "--progress/--no-progress",
                                                     help="Progress bar (default: large inputs on a terminal)."),
    ) -> None:
        """Convert a trace between NQSII, SWF and Frictionless data package formats."""
        with handle_errors():
            site_obj = resolve_site(site)
            src_fmt = from_format or formats.detect_format(src)
            dst_fmt = to_format or formats.detect_format(dst)
            write_opts = {"form": form} if dst_fmt == "nqsii" else {}
            with progress.stages([f"reading {src.name}", f"writing {dst.name}"],
                                 progress.wanted(src, show_progress)) as advance:
                table = formats.read(src, src_fmt, site=site_obj)
                advance()
                losses = formats.write(table, dst, dst_fmt, site=site_obj, force=force, **write_opts)
                advance()
        typer.echo(f"converted {table.num_rows} jobs: {src} ({src_fmt}) -> {dst} ({dst_fmt})", err=True)
        if losses:
            typer.echo(f"note: the {dst_fmt} output cannot carry everything:", err=True)
            for loss in losses:
                typer.echo(f"  - {loss}", err=True)
