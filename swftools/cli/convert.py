"""``swftools convert IN --out OUT``: any supported format to any other, through the job table."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools.errors import UsageError, count
from swftools.cli.common import (ALLOW_EMPTY_HELP, FROM_HELP, JSON_HELP, OUT_OPTION, SITE_HELP,
                                 TO_HELP, handle_errors, output_path, print_json)
from swftools.formats.sacct_command import RECOMMENDED_COMMAND

SACCT_COLUMNS_HELP = ("Slurm input without a header line (sacct --noheader): its columns, "
                      "the comma list given to sacct --format= (any case). Recommended dump (with a "
                      "header, so read as it is): " + RECOMMENDED_COMMAND)


def register(app: typer.Typer) -> None:
    """Add the ``convert`` command to ``app``."""

    @app.command("convert")
    def convert(
        src: Optional[Path] = typer.Argument(None, metavar="SRC", help="Input trace: NQSII log "
                                             "(.csv[.gz]), SWF (.swf[.gz]) or data package "
                                             "(directory or datapackage.json); see "
                                             "--list-formats."),
        out: Optional[Path] = typer.Option(None, *OUT_OPTION, help="Output path; its format comes "
                                                                   "from the name unless --to."),
        dst: Optional[Path] = typer.Argument(None, hidden=True, metavar="OUT",
                                             help="Deprecated: use --out."),
        from_format: Optional[str] = typer.Option(None, "--from", help=FROM_HELP),
        to_format: Optional[str] = typer.Option(None, "--to", help=TO_HELP),
        site: Optional[str] = typer.Option(None, "--site", help=SITE_HELP),
        tz: Optional[str] = typer.Option(None, "--tz", help="Time zone (IANA name, e.g. Asia/Tokyo) "
                                         "of the local times in Slurm and PBS files. Default: "
                                         "reading, the site's, else UTC, said in a warning; "
                                         "writing, UTC."),
        form: str = typer.Option("raw", "--form", help="NQSII output form: raw or published."),
        force: bool = typer.Option(False, "--force", help="Overwrite an existing output."),
        allow_empty: bool = typer.Option(False, "--allow-empty", help=ALLOW_EMPTY_HELP),
        skip_bad_lines: bool = typer.Option(False, "--skip-bad-lines",
                                            help="Slurm and PBS input: leave out malformed lines "
                                                 "instead of failing; each one and their count "
                                                 "are reported."),
        columns: Optional[str] = typer.Option(None, "--columns", help=SACCT_COLUMNS_HELP),
        delimiter: Optional[str] = typer.Option(None, "--delimiter",
                                                help="Slurm input: the field delimiter sacct "
                                                     "--delimiter was given (default '|')."),
        show_progress: Optional[bool] = typer.Option(None, "--progress/--no-progress",
                                                     help="Progress bar (default: large inputs on a terminal)."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
        list_formats: bool = typer.Option(False, "--list-formats",
                                          help="List every format (direction, extensions, what "
                                               "it cannot carry) and exit."),
    ) -> None:
        """Convert a trace between formats, printing what the output cannot carry.

        Formats: SWF, NQSII, data package, Batsim, Tiresias, Slurm, PBS, ... (--list-formats).
        """
        if src is not None and not list_formats and _reads_whole(src, from_format):
            from swftools.fileio import prefetch

            prefetch(src)  # the read overlaps the imports below
        from swftools import formats, progress  # on use: keeps start-up light (issue 15)
        from swftools.site import resolve_site

        if list_formats:
            _list_formats(as_json)
            return
        with handle_errors():
            if src is None:
                raise UsageError("missing argument SRC: the input trace (or --list-formats)")
            dst = output_path(out, dst, "the positional OUT")
            sacct_in = {k: v for k, v in (("columns", columns), ("delimiter", delimiter)) if v}
            src_fmt = from_format or ("slurm" if sacct_in else formats.detect_format(src))
            if sacct_in and src_fmt != "slurm":
                raise UsageError(f"--{next(iter(sacct_in))} applies to slurm input only")
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
                                     **sacct_in, allow_empty=allow_empty)
                advance()
                site_obj = resolve_site(site, table, fmt=src_fmt)
                losses = formats.write(table, dst, dst_fmt, site=site_obj, force=force, **write_opts)
                advance()
        skipped = _skipped(table) if skip_bad_lines else []
        result = formats.ConversionResult(table, src_fmt, dst_fmt, losses)
        if as_json:
            print_json({"jobs": table.num_rows, "written": result.written,
                        "skipped_jobs": result.jobs - result.written,
                        "unfinished_jobs": result.unfinished, "from": str(src),
                        "from_format": src_fmt, "out": str(dst), "to_format": dst_fmt,
                        "site": site_obj.name if site_obj else None, "losses": losses,
                        **({"skipped_lines": skipped} if skip_bad_lines else {})})
            return
        _report(result, src, dst, skipped if skip_bad_lines else None)


def _report(result, src: Path, dst: Path, skipped: list | None) -> None:
    """The conversion on stderr: bad lines left out, the headline (``wrote N of M jobs``),
    unfinished jobs, what the output cannot carry."""
    if skipped is not None:
        from swftools.formats.skipping import describe

        typer.echo(f"skipped {count(len(skipped), 'bad line')} of {src}", err=True)
        for entry in skipped:
            typer.echo(f"  - {describe(str(src), entry)}", err=True)
    typer.echo(result.headline(src, dst), err=True)
    if result.unfinished:
        typer.echo(f"{count(result.unfinished, 'unfinished job')} (pending or running in the "
                   "log) not converted", err=True)
    notes = result.notes()
    if notes:
        typer.echo(f"note: the {result.target_format} output cannot carry everything:", err=True)
        for loss in notes:
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


def _reads_whole(src: Path, from_format: str | None) -> bool:
    """Whether the input's reader reads the whole file into memory (``inputs.read_bytes``:
    SWF, Slurm, PBS), by ``--from`` or the name: only then is it worth prefetching."""
    if from_format is not None:
        return from_format in ("swf", "slurm", "pbs")
    name = src.name.lower().removesuffix(".gz")
    return name.endswith((".swf", ".sacct"))
