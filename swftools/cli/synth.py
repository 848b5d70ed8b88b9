"""``swftools synth --jobs N --seed S --out OUT``: a calibrated synthetic AAIC-like NQSII job log."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools.cli.common import (JSON_HELP, OUT_OPTION, SITE_PRESETS_HELP, handle_errors,
                                 output_path, print_json)
from swftools.errors import UsageError, count

FORMS = ("raw", "published")


def register(app: typer.Typer) -> None:
    """Add the ``synth`` command to ``app``."""

    @app.command("synth")
    def synth_command(
        out: Optional[Path] = typer.Option(None, *OUT_OPTION,
                                           help="Output NQSII log (.csv, or .csv.gz for gzip)."),
        old_out: Optional[Path] = typer.Argument(None, hidden=True, metavar="OUT", help="Deprecated: use --out."),
        jobs: int = typer.Option(..., "--jobs", min=1, help="Number of jobs to generate."),
        seed: int = typer.Option(0, "--seed", min=0, help="Random seed (same seed, same log)."),
        form: str = typer.Option("raw", "--form",
                                 help="NQSII form: raw (names, queue names) or published."),
        nodes: Optional[int] = typer.Option(
            None, "--nodes", min=1,
            help="Nodes to schedule on. Default: 38 (AAIC), else the site's node count."),
        site: Optional[str] = typer.Option(
            None, "--site",
            help=f"Target site. {SITE_PRESETS_HELP}: its nodes, GPUs per node, time zone "
                 "and queues. Default: aaic."),
        force: bool = typer.Option(False, "--force", help="Overwrite an existing output."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Write a synthetic AAIC-like job log calibrated on the AAIC workload paper.

        Deterministic and prefix-stable: the first N jobs of a seed never change with --jobs.
        Generated and written in chunks, so memory does not grow with --jobs.
        """
        from swftools.synth.jobs import resolve_target, write_log  # keeps `swftools --help` fast

        with handle_errors():
            out = output_path(out, old_out, "the positional OUT")
            if form not in FORMS:
                raise UsageError(f"--form: {form!r} is not one of {', '.join(FORMS)}")
            target, nodes, _ = resolve_target(site, nodes, None)
            try:
                losses = write_log(out, jobs, seed, form=form, force=force, nodes=nodes,
                                   site=target)
            except ValueError as exc:  # a site the job model cannot target
                raise UsageError(str(exc)) from None
        if as_json:
            print_json({"jobs": jobs, "seed": seed, "nodes": nodes, "site": target.name,
                        "out": str(out), "form": form, "losses": losses})
            return
        typer.echo(f"wrote {count(jobs, 'synthetic job')} (seed {seed}, {nodes} nodes of site "
                   f"{target.name}) to {out} (NQSII, {form} form)", err=True)
        for loss in losses:
            typer.echo(f"  note: {loss}", err=True)
