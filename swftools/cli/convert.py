"""``swftools convert IN --out OUT``: any supported format to any other, through the job table."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools.errors import UsageError
from swftools.cli.common import (ALLOW_EMPTY_HELP, JSON_HELP, OUT_OPTION, SITE_HELP, handle_errors,
                                 output_path, print_json)


def register(app: typer.Typer) -> None:
    """Add the ``convert`` command to ``app``."""

    @app.command("convert")
    def convert(
        src: Optional[Path] = typer.Argument(None, help="Input trace: NQSII log (.csv[.gz]), SWF "
                                                       "(.swf[.gz]) or data package (directory or "
                                                       "datapackage.json); see --list-formats."),
        out: Optional[Path] = typer.Option(None, *OUT_OPTION, help="Output path; its format comes "
                                                                   "from the name unless --to."),
        dst: Optional[Path] = typer.Argument(None, hidden=True, metavar="OUT",
                                             help="Deprecated: use --out."),
        from_format: Optional[str] = typer.Option(None, "--from", help="Input format (see "
                                                  "--list-formats); default: from the name."),
        to_format: Optional[str] = typer.Option(None, "--to", help="Output format (see "
                                                "--list-formats); default: from the name."),
        site: Optional[str] = typer.Option(None, "--site", help=SITE_HELP),
        tz: Optional[str] = typer.Option(None, "--tz", help="Time zone (IANA name, e.g. Asia/Tokyo) "
                                         "of the local times in Slurm and PBS files. Default: "
                                         "reading, the site's, else UTC; writing, UTC."),
        form: str = typer.Option("raw", "--form", help="NQSII output form: raw or published."),
        force: bool = typer.Option(False, "--force", help="Overwrite an existing output."),
        allow_empty: bool = typer.Option(False, "--allow-empty", help=ALLOW_EMPTY_HELP),
        skip_bad_lines: bool = typer.Option(False, "--skip-bad-lines",
                                            help="Slurm and PBS input: leave out malformed lines "
                                                 "instead of failing; each one and their count "
                                                 "are reported."),
        show_progress: Optional[bool] = typer.Option(None, "--progress/--no-progress",
                                                     help="Progress bar (default: large inputs on a terminal)."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
        list_formats: bool = typer.Option(False, "--list-formats",
                                          help="List every format (direction, extensions, what "
                                               "it cannot carry) and exit."),
    ) -> None:
        """Convert a trace between formats (SWF, NQSII, data package, Batsim, Tiresias, ...;
        see --list-formats), printing what the output cannot carry."""
        from swftools import formats, progress  # on use: keeps start-up light (issue 15)
        from swftools.site import resolve_site

        if list_formats:
            _list_formats(as_json)
            return
        with handle_errors():
            if src is None:
                raise UsageError("missing argument SRC: the input trace (or --list-formats)")
            dst = output_path(out, dst, "the positional OUT")
            src_fmt = from_format or formats.detect_format(src)
            dst_fmt = to_format or formats.detect_format(dst)
            if dst_fmt == "package":
                from swftools.atomic import check_not_inside

                check_not_inside([src], dst)
            write_opts = {"form": form} if dst_fmt == "nqsii" else {}
            with progress.stages([f"reading {src.name}", f"writing {dst.name}"],
                                 progress.wanted(src, show_progress)) as advance:
                zoned = {"slurm", "pbs"}
                if tz and src_fmt not in zoned and dst_fmt not in zoned:
                    raise UsageError("--tz applies to slurm and pbs input or output only")
                tz_in = {"tz": tz} if tz and src_fmt in zoned else {}
                if tz and dst_fmt in zoned:
                    write_opts["tz"] = tz
                if skip_bad_lines and src_fmt not in zoned:
                    raise UsageError("--skip-bad-lines applies to slurm and pbs input only")
                if skip_bad_lines:
                    tz_in["skip_bad_lines"] = True
                table = formats.read(src, src_fmt, site=resolve_site(site, fmt=src_fmt), **tz_in,
                                     allow_empty=allow_empty)
                advance()
                site_obj = resolve_site(site, table, fmt=src_fmt)
                losses = formats.write(table, dst, dst_fmt, site=site_obj, force=force, **write_opts)
                advance()
        skipped = _skipped(table) if skip_bad_lines else []
        if as_json:
            print_json({"jobs": table.num_rows, "from": str(src), "from_format": src_fmt,
                        "out": str(dst), "to_format": dst_fmt,
                        "site": site_obj.name if site_obj else None, "losses": losses,
                        **({"skipped_lines": skipped} if skip_bad_lines else {})})
            return
        if skip_bad_lines:
            from swftools.formats.skipping import describe

            typer.echo(f"skipped {len(skipped)} bad line(s) of {src}", err=True)
            for entry in skipped:
                typer.echo(f"  - {describe(str(src), entry)}", err=True)
        typer.echo(f"converted {table.num_rows} jobs: {src} ({src_fmt}) -> {dst} ({dst_fmt})", err=True)
        if losses:
            typer.echo(f"note: the {dst_fmt} output cannot carry everything:", err=True)
            for loss in losses:
                typer.echo(f"  - {loss}", err=True)


def _skipped(table) -> list:
    """The lines ``--skip-bad-lines`` left out (``swftools.formats.skipping``)."""
    from swftools.formats.skipping import skipped_lines

    return skipped_lines(table)


def _list_formats(as_json: bool) -> None:
    """Print every registered format's descriptor (``swftools.formats.formats_info``)."""
    from swftools import formats
    from swftools.formats.formatinfo import format_table
    from swftools.table import column_names

    with handle_errors():
        infos = formats.formats_info()
    if as_json:
        print_json({"formats": [info.as_dict() for info in infos]})
    else:
        typer.echo(format_table(infos, column_names()), nl=False)
