"""Helpers shared by the CLI commands: error rendering, exit codes, progress, site option."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import typer

from swftools.errors import InputError, UsageError

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def fail(message: str, code: int) -> typer.Exit:
    """Print ``swftools: error: message`` to stderr and return the Exit to raise."""
    typer.echo(f"swftools: error: {message}", err=True)
    return typer.Exit(code)


@contextlib.contextmanager
def handle_errors() -> Iterator[None]:
    """Turn library exceptions into a one-line message and the documented exit code."""
    try:
        yield
    except InputError as exc:
        raise fail(str(exc), EXIT_INVALID) from None
    except UsageError as exc:
        raise fail(str(exc), EXIT_USAGE) from None
    except FileNotFoundError as exc:
        raise fail(f"{exc.filename}: no such file", EXIT_INVALID) from None


def stderr_is_terminal() -> bool:
    """Whether progress bars make sense (interactive stderr)."""
    return sys.stderr.isatty()
