"""``swftools synth --jobs N --seed S --out OUT``: a calibrated synthetic AAIC-like NQSII job log."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from swftools import formats
from swftools.cli.common import JSON_HELP, OUT_OPTION, handle_errors, output_path, print_json
from swftools.errors import UsageError

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
        nodes: int = typer.Option(38, "--nodes", min=1, help="Nodes of 8 GPUs to schedule on."),
        force: bool = typer.Option(False, "--force", help="Overwrite an existing output."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Write a synthetic AAIC-like job log calibrated on the AAIC workload paper.

        Deterministic and prefix-stable: the first N jobs of a seed never change with --jobs.
        """
        from swftools.synth.jobs import generate  # keeps `swftools --help` fast

        with handle_errors():
            out = output_path(out, old_out, "the positional OUT")
            if form not in FORMS:
                raise UsageError(f"--form: {form!r} is not one of {', '.join(FORMS)}")
            table = generate(jobs, seed, nodes=nodes)
            losses = formats.write(table, out, "nqsii", form=form, force=force)
        if as_json:
            print_json({"jobs": table.num_rows, "seed": seed, "nodes": nodes, "out": str(out),
                        "form": form, "losses": losses})
            return
        typer.echo(f"wrote {table.num_rows} synthetic jobs (seed {seed}, {nodes} nodes) to {out} "
                   f"(NQSII, {form} form)", err=True)
        for loss in losses:
            typer.echo(f"  note: {loss}", err=True)
