"""Progress display for long runs (rich), shown only for large inputs on a terminal."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

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
    if str(p).endswith(".gz") and size >= 4:
        with open(p, "rb") as fh:
            fh.seek(-4, os.SEEK_END)
            size = int.from_bytes(fh.read(4), "little")  # ISIZE: uncompressed size mod 2**32
    return size // _BYTES_PER_LINE


def wanted(path: str | Path, enabled: bool | None) -> bool:
    """Whether to show progress: forced on/off, else for large inputs on an interactive stderr."""
    if enabled is not None:
        return enabled
    return sys.stderr.isatty() and estimated_lines(path) > LARGE_INPUT_LINES


@contextlib.contextmanager
def stages(labels: list[str], enabled: bool) -> Iterator[Callable[[], None]]:
    """A progress bar over named stages; yields ``advance()`` to call after each stage."""
    if not enabled:
        yield lambda: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  transient=True) as bar:
        task = bar.add_task(labels[0], total=len(labels))
        done = 0

        def advance() -> None:
            nonlocal done
            done += 1
            bar.update(task, advance=1,
                       description=labels[min(done, len(labels) - 1)])

        yield advance


__all__ = ["estimated_lines", "stages", "wanted"]
