"""The ``swftools`` command line: a thin typer layer over the library.

Each command lives in ``swftools/cli/<command>.py`` and exposes ``register(app)``. Exit codes:
0 success, 1 invalid input (or an invalid trace for ``validate``/``verify``/``audit``), 2 usage error.
"""

from __future__ import annotations

import importlib
import sys

import typer

from swftools import __version__

app = typer.Typer(
    name="swftools",
    help="Turn batch-scheduler job logs of GPU clusters into open, validated workload archives.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Command modules, in the order `swftools --help` lists them.
COMMAND_MODULES = ("convert", "synth", "validate", "replay", "anonymize", "telemetry",
                   "report", "release")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"swftools {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """swftools: convert, validate, anonymize, replay and release workload traces."""


for _name in COMMAND_MODULES:
    try:
        _module = importlib.import_module(f"swftools.cli.{_name}")
    except ModuleNotFoundError as exc:  # a command not built yet
        if exc.name != f"swftools.cli.{_name}":
            raise
        continue
    _module.register(app)


def main() -> None:
    """Console-script entry point; usage errors exit 2, bad input 1."""
    if sys.argv[1:3] == ["synth", "telemetry"]:  # `swftools synth telemetry` = `telemetry synth`
        sys.argv[1:3] = ["telemetry", "synth"]
    try:
        app(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)
