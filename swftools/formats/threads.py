"""How many threads a compiled format kernel (SWF, sacct) splits a large input into."""

from __future__ import annotations

import os


def kernel_threads() -> int:
    """The usable cores, at most 8."""
    return max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1), 8))
