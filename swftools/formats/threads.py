"""How many threads a compiled format kernel (SWF, sacct) splits a large input into."""

from __future__ import annotations

from swftools.fileio import usable_cores


def kernel_threads() -> int:
    """The usable cores, at most 8."""
    return usable_cores()
