"""Progress display for long runs (rich), shown only for large inputs on a terminal."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from swftools.fileio import is_gzip

LARGE_INPUT_LINES = 100_000
_BYTES_PER_LINE = 90  # a typical SWF / NQSII job line


def estimated_lines(path: str | Path) -> int:
    """Rough job-line count of a file (gzip content estimated from its trailer size field)."""
    p = Path(path)
    if p.is_dir():
        p = p / "data" / "jobs.csv.gz"
    if not p.is_file():
        return 0
    size = p.stat().st_size
    if size >= 4 and is_gzip(p):  # by content, not by name
        with open(p, "rb") as fh:
            fh.seek(-4, os.SEEK_END)
            size = int.from_bytes(fh.read(4), "little")  # ISIZE: uncompressed size mod 2**32
    return size // _BYTES_PER_LINE


def large(lines: int) -> bool:
    """Whether an input of ``lines`` job lines is large enough for a progress bar (the one
    threshold, ``LARGE_INPUT_LINES``, read at call time so tests can lower it)."""
    return lines > LARGE_INPUT_LINES


def wanted(path: str | Path, enabled: bool | None) -> bool:
    """Whether to show progress: forced on/off, else for large inputs on an interactive stderr."""
    if enabled is not None:
        return enabled
    return sys.stderr.isatty() and large(estimated_lines(path))


def _noop(*_args: object, **_kwargs: object) -> None:
    return None


@contextlib.contextmanager
def bar(label: str, total: int | None, enabled: bool, *,
        unit: str = "steps") -> Iterator[Callable[..., None]]:
    """A transient rich progress bar on stderr; yields ``advance(n=1, description=None)``.

    ``total`` None shows a spinner; ``unit="bytes"`` counts bytes (``advance(nbytes)``). When
    not ``enabled`` the callback does nothing.
    """
    if not enabled:
        yield _noop
        return
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn)

    columns = ((SpinnerColumn(), TextColumn("{task.description}"), DownloadColumn())
               if unit == "bytes" else
               (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn()))
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress_bar:
        task = progress_bar.add_task(label, total=total)

        def advance(n: int = 1, description: str | None = None) -> None:
            if description is None:
                progress_bar.advance(task, n)
            else:
                progress_bar.update(task, advance=n, description=description)

        yield advance


@contextlib.contextmanager
def stages(labels: list[str], enabled: bool) -> Iterator[Callable[[], None]]:
    """A progress bar over named stages; yields ``advance()`` to call after each stage."""
    with bar(labels[0], len(labels), enabled) as advance:
        done = 0

        def next_stage() -> None:
            nonlocal done
            done += 1
            advance(1, labels[min(done, len(labels) - 1)])

        yield next_stage


__all__ = ["LARGE_INPUT_LINES", "bar", "estimated_lines", "large", "stages", "wanted"]
