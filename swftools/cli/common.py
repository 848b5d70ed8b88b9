"""Helpers shared by the CLI commands: error rendering, exit codes, the output
option and its deprecated spellings, JSON results."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import typer

from swftools.formats import FORMATS  # the registry only; format modules load on use
from swftools.site import PRESETS
from swftools.errors import (InputError, UsageError, memory_error_message, open_error_reason,
                             os_error_message, shorten)

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
# audit, release and verify --raw when no raw name can be searched for: not a failure (an SWF
# trace's numeric user ids are no names), but never CLEAN; the warning says so in one sentence.
EXIT_NOTHING_TO_SEARCH = EXIT_OK


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
    except BrokenPipeError:
        # the reader of our output went away (`| head`): stop quietly, as Python's docs advise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(EXIT_INVALID) from None
    except FileNotFoundError as exc:
        if exc.filename is None:
            raise fail(os_error_message(exc, _file_in_traceback(exc)), EXIT_INVALID) from None
        raise fail(f"{shorten(str(exc.filename), 320)}: {open_error_reason(exc)}",
                   EXIT_INVALID) from None
    except OSError as exc:  # disk full, read-only output, permissions, I/O errors
        raise fail(os_error_message(exc, _file_in_traceback(exc)), EXIT_INVALID) from None
    except MemoryError as exc:
        raise fail(memory_error_message(exc), EXIT_INVALID) from None


_FILE_LOCALS = ("path", "tmp", "target", "dest", "out", "fh", "raw", "sink", "f")


def _file_in_traceback(exc: BaseException) -> str | None:
    """The file an OSError without a file name was about: the innermost frame's open file
    object or path-like local (``os.write`` on a descriptor names no file)."""
    try:
        frames = []
        tb = exc.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        for frame in reversed(frames):
            values = frame.f_locals
            for name in _FILE_LOCALS:
                value = values.get(name)
                named = getattr(value, "name", None) if hasattr(value, "write") or \
                    hasattr(value, "read") else None
                if isinstance(named, str) and named:
                    return named
                if isinstance(value, (str, Path)) and str(value) and name != "f":
                    return str(value)
    except Exception:  # a best guess only: never fail while reporting a failure
        return None
    return None


def warn(message: str) -> None:
    """Print ``swftools: warning: message`` to stderr."""
    typer.echo(f"swftools: warning: {message}", err=True)


def nothing_to_search(message: str | None) -> None:
    """Warn with ``swftools.privacy.audit.nothing_to_search``'s sentence and exit with
    ``EXIT_NOTHING_TO_SEARCH``; nothing when ``message`` is None."""
    if message:
        warn(message)
        raise typer.Exit(EXIT_NOTHING_TO_SEARCH)


def deprecated(old: str, new: str) -> None:
    """Warn that the option spelling ``old`` is deprecated in favour of ``new``."""
    warn(f"{old} is deprecated, use {new}")


def output_path(out: Optional[Path], old: Optional[Path], old_name: str, *,
                required: bool = True) -> Optional[Path]:
    """The output path from ``--out/-o`` or its deprecated spelling ``old_name`` (a hidden
    option or positional kept for one release; warns). Usage error if both or (when
    ``required``) neither are given."""
    if old is not None:
        deprecated(old_name, "--out")
        if out is not None:
            raise UsageError(f"give the output once, with --out (not also as {old_name})")
        return old
    if out is None and required:
        raise UsageError("missing option --out/-o: the output path")
    return out


def print_json(value: Any) -> None:
    """A result as indented JSON with sorted keys on stdout (``--json``)."""
    typer.echo(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False))


OUT_OPTION = ("--out", "-o")
ALLOW_EMPTY_HELP = "Accept a trace without job rows (by default an error, as a sign of a broken export)."
STRICT_HELP = "Warnings fail too (exit 1): a release gate."
JSON_HELP = "Print the result as JSON on stdout."


def listing(names: "tuple[str, ...] | list[str]") -> str:
    """A registry's names as help text lists them: ``fcfs, easy``."""
    return ", ".join(names)


# Help texts generated from the registries (tests/test_cli_vocabulary.py checks every command):
# the site presets (swftools.site.PRESETS), the formats (swftools.formats.FORMATS), the
# schedulers (SCHEDULERS == swftools.replay.POLICIES, tests/test_cli_startup.py).
SCHEDULERS = ("fcfs", "easy")
SCHEDULER_HELP = f"Scheduling policy: {listing(SCHEDULERS)}."
SITE_PRESETS_HELP = f"Site preset ({listing(PRESETS)}) or site settings JSON file"
SITE_HELP = (f"{SITE_PRESETS_HELP}. Default: the site the trace names, else aaic for an NQSII "
             "log, else none.")
FROM_HELP = f"Input format ({listing(FORMATS)}); default: from the name."
TO_HELP = f"Output format ({listing(FORMATS)}); default: from the name."
