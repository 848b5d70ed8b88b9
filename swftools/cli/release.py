"""``swftools release`` and ``swftools verify``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools.cli.common import (EXIT_INVALID, JSON_HELP, OUT_OPTION, SITE_HELP,
                                 handle_errors, nothing_to_search, print_json)
from swftools.errors import count


def register(app: typer.Typer) -> None:
    """Add the ``release`` and ``verify`` commands to ``app``."""

    @app.command("release")
    def release_cmd(
        source: Path = typer.Argument(..., metavar="SOURCE", help="Raw NQSII log, SWF file or data package."),
        out: Path = typer.Option(..., *OUT_OPTION, help="Archive folder to create."),
        version: str = typer.Option(..., "--version", help="Release version (semantic: X.Y.Z)."),
        settings: Path = typer.Option(..., "--settings", help="Release settings JSON (see archive/release-settings.example.json)."),
        site: Optional[str] = typer.Option(None, "--site", help=SITE_HELP),
        key_file: Optional[Path] = typer.Option(None, "--key-file", help="Pseudonymization key file (or env SWFTOOLS_ANON_KEY); make one with `swftools anonymize --new-key FILE`."),
        ephemeral_key: bool = typer.Option(False, "--ephemeral-key", help="Random key: pseudonyms will NOT be stable across releases."),
        time_shift_weeks: int = typer.Option(0, "--time-shift-weeks", help="Shift all times by whole weeks."),
        accept_errors: bool = typer.Option(False, "--accept-errors", help="Publish despite validation errors (listed as known issues)."),
        strict: bool = typer.Option(False, "--strict", help="Validation warnings stop the release too (exit 1)."),
        force: bool = typer.Option(False, "--force", help="Replace an existing output folder."),
        telemetry: Optional[list[Path]] = typer.Option(None, "--telemetry", help="Telemetry export file or folder (repeatable); adds job_telemetry."),
        telemetry_map: Optional[list[str]] = typer.Option(None, "--telemetry-map", help="Metric map preset or file (repeatable; default: all presets)."),
        allocations: Optional[Path] = typer.Option(None, "--allocations", help="Allocation table job_id,node,gpu_index for telemetry."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Build a deterministic, citable archive (folder and tarball) from a trace."""
        from swftools.release import pipeline
        from swftools.release.settings import check_version

        with handle_errors():
            check_version(version)
            from swftools.atomic import check_not_inside

            check_not_inside([key_file], out)  # --force would delete the key with the folder
            key = None
            if key_file is not None or ephemeral_key or _env_key_set():
                from swftools.privacy.pseudonyms import load_key

                key = load_key(key_file, ephemeral=ephemeral_key,
                               warn=lambda message: typer.echo(f"swftools: {message}", err=True))
            from rich.console import Console

            console = Console(stderr=True)
            with console.status("release") as status:
                result = pipeline.release(
                    source, out, version=version, settings=settings, site=site, key=key,
                    accept_errors=accept_errors, strict=strict, force=force,
                    time_shift_weeks=time_shift_weeks,
                    telemetry=_telemetry_options(telemetry, telemetry_map, allocations),
                    on_stage=lambda stage: status.update(f"release: {stage}"))
        for note in result.notes:
            typer.echo(note, err=True)
        if as_json:
            print_json({"out": str(result.out_dir), "files": len(result.files),
                        "valid": result.validation.valid,
                        "validation": result.validation.status_line(),
                        "tarball": str(result.tarball), "tarball_sha256": result.tarball_sha256,
                        "nothing_to_search": result.nothing_to_search})
        else:
            typer.echo(f"wrote {result.out_dir}/ ({count(len(result.files), 'file')}): "
                       f"validation {result.validation.status_line()}")
            typer.echo(f"{result.tarball}  sha256 {result.tarball_sha256}")
        nothing_to_search(result.nothing_to_search)

    @app.command("verify")
    def verify_cmd(
        path: Path = typer.Argument(..., metavar="PATH", help="Archive folder or .tar.gz."),
        names: Optional[Path] = typer.Option(None, "--names", help="File of raw names (one per line) to audit for."),
        raw: Optional[Path] = typer.Option(None, "--raw", help="Raw log whose user, group, host and job names to audit for."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Check an archive: checksums, package, SWF agreement, optional leak audit."""
        from swftools.release.verify import report_json, verify

        with handle_errors():
            terms: dict[str, list[str]] | list[str] | None = None
            if names is not None:
                from swftools.privacy.audit import read_names_file

                terms = read_names_file(names)
            elif raw is not None:
                from swftools.privacy.rawnames import raw_names

                terms = raw_names(raw)  # the names audit --raw and release search for
            report = verify(path, names=terms)
        typer.echo(report_json(report) if as_json else report.render())
        if not report.ok:
            raise typer.Exit(EXIT_INVALID)
        nothing_to_search(report.nothing_to_search)


def _telemetry_options(samples, maps, allocations) -> dict | None:
    if not samples:
        return None
    options: dict = {"samples": list(samples)}
    if maps:
        options["metric_map"] = list(maps)
    if allocations is not None:
        options["allocations"] = allocations
    return options


def _env_key_set() -> bool:
    import os

    return bool(os.environ.get("SWFTOOLS_ANON_KEY"))
