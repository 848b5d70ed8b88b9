"""The ``swftools`` command line: a thin typer layer over the library.

Each command lives in ``swftools/cli/<command>.py`` and exposes ``register(app)``. Exit codes:
0 success, 1 invalid input (or an invalid trace for ``validate``/``verify``/``audit``), 2 usage
error (click's own too, as ``swftools: error: ...``: ``swftools.cli.group``). ``audit``,
``release`` and ``verify --raw`` with no raw name to search for exit 0
(``common.EXIT_NOTHING_TO_SEARCH``) with one warning,
``swftools.privacy.audit.nothing_to_search``, never CLEAN.
"""

from __future__ import annotations

import os

# swftools does no linear algebra. numpy's wheels bundle OpenBLAS, whose thread pool, started
# when numpy loads, busy-waits about 0.1 s CPU on every other core, taking it from the readers'
# threads. One thread unless the user chose otherwise (dask's workers default it the same).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import copy
import gc
import importlib
import sys
import warnings

import typer

from swftools.cli.group import Typer

app = Typer(
    name="swftools",
    help="Turn batch-scheduler job logs of GPU clusters into open, validated workload archives.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: no rich import, --help in half the time
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


def app_for(argv: list[str]) -> typer.Typer:
    """``app``, or, when ``argv`` starts with a command's name, a copy holding that command
    alone: click then builds the one command that runs (building them all costs ~10 ms a
    process); its help, errors and run are the same."""
    name = argv[0] if argv else None
    commands = [c for c in app.registered_commands if c.name == name]
    groups = [g for g in app.registered_groups
              if typer.main.solve_typer_info_defaults(g).name == name]
    if not commands and not groups:
        return app
    only = copy.copy(app)
    only.registered_commands, only.registered_groups = commands, groups
    return only


def main() -> None:
    """Console-script entry point; usage errors exit 2, bad input 1."""
    warnings.showwarning = _show_warning
    try:
        app_for(sys.argv[1:])(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)
    finally:
        # The process ends next. Its last garbage collection, at interpreter exit, would walk
        # every object the imports made (about 30 ms after a convert) for no garbage worth it:
        # frozen objects are out of its reach. Thread joins, atexit handlers and flushes still
        # run (Instagram's gc.freeze at fork, applied at exit).
        gc.freeze()
