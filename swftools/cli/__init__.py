"""The ``swftools`` command line: a thin typer layer over the library.

Each command lives in ``swftools/cli/<command>.py`` and exposes ``register(app)``. Exit codes:
0 success, 1 invalid input (or an invalid trace for ``validate``/``verify``/``audit``), 2 usage error.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings

import typer

app = typer.Typer(
    name="swftools",
    help="Turn batch-scheduler job logs of GPU clusters into open, validated workload archives.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Command modules, in the order `swftools --help` lists them.
COMMAND_MODULES = ("convert", "synth", "validate", "replay", "whatif", "anonymize", "telemetry",
                   "report", "release")


def _version(value: bool) -> None:
    if value:
        from swftools import __version__

        typer.echo(f"swftools {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """swftools: convert, validate, anonymize, replay and release workload traces."""


for _name in COMMAND_MODULES:  # an import failure is a bug: let it raise
    importlib.import_module(f"swftools.cli.{_name}").register(app)


_show_python_warning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """swftools' own warnings (e.g. a misnamed .gz input) as ``swftools: warning: ...``."""
    if category.__module__.startswith("swftools."):
        typer.echo(f"swftools: warning: {message}", err=True)
    else:
        _show_python_warning(message, category, filename, lineno, file, line)


def command_paths() -> list[tuple[str, ...]]:
    """Every visible command path of the CLI, ``()`` for the top level, in help order of names
    (the golden help tests, the start-up test and the start-up benchmark walk these)."""
    def walk(group, path):
        yield path
        for name, command in sorted(getattr(group, "commands", {}).items()):
            if not command.hidden:
                yield from walk(command, (*path, name))

    return list(walk(typer.main.get_command(app), ()))


# numpy asks the kernel for transparent huge pages on every array of 4 MiB or more. Where THP
# defrag is "madvise" (a common default) a fault may then compact memory synchronously: on the
# 2-core benchmark machine touching fresh memory got 2 to 4 times slower at times (np.ones of
# 256 MB: 0.4 to 0.9 s, against 0.15 to 0.2 s with small pages), and resident memory grows in
# 2 MiB steps. With small pages a command's cost is steady; convert, replay and validate ran as
# fast or faster. Read by numpy when it is imported (after this: the CLI loads no numpy),
# unless the user set it.
NUMPY_HUGEPAGE_ENV = "NUMPY_MADVISE_HUGEPAGE"


def main() -> None:
    """Console-script entry point; usage errors exit 2, bad input 1."""
    os.environ.setdefault(NUMPY_HUGEPAGE_ENV, "0")
    warnings.showwarning = _show_warning
    try:
        app(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)
