"""Job identity: the one rule every reader uses to turn a log's job ids into ``job_id``.

A scheduler's job id is kept as the job number when every id of the log is a plain, unique,
non-negative integer. Otherwise (array tasks ``123_4``, heterogeneous components ``123+1``, PBS
``123[4].server``, anonymised servers, a job id seen twice) the jobs are numbered 1..n in submit
order, as the Parallel Workloads Archive numbers its logs, and the ids are kept as text in the
``source_job_id`` column. No log is refused for its ids alone.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Job ids are int64 in the job table; a longer run of digits is not a "plain" id.
_MAX_DIGITS = 18


def plain_id(text: str) -> int | None:
    """``text`` as a non-negative integer when it is only ASCII digits (no sign, no spaces)."""
    if 0 < len(text) <= _MAX_DIGITS and text.isascii() and text.isdigit():
        return int(text)
    return None


def submit_order(submit_times: Sequence[int | None]) -> np.ndarray:
    """Row indices sorted by (submit time, row order); an unknown submit time sorts last."""
    n = len(submit_times)
    known = np.fromiter((t is not None for t in submit_times), dtype=bool, count=n)
    times = np.fromiter((t if t is not None else 0 for t in submit_times), dtype=np.int64,
                        count=n)
    # lexsort: last key is primary; unknown times after every known one, each in row order.
    return np.lexsort((np.arange(n), times, ~known))


def number_jobs(source_ids: Sequence[str],
                submit_times: Sequence[int | None]) -> tuple[list[int], list[str] | None]:
    """job_id per row, and the ``source_job_id`` column (None when no column is needed).

    The source ids themselves when every one is a plain unique non-negative integer; otherwise
    1..n in (submit time, row order) order, with the source ids returned as ``source_job_id``.
    """
    if len(source_ids) != len(submit_times):
        raise ValueError(f"{len(source_ids)} job ids but {len(submit_times)} submit times")
    numbers = [plain_id(s) for s in source_ids]
    if None not in numbers and len(set(numbers)) == len(numbers):
        return numbers, None  # type: ignore[return-value]
    job_ids = np.empty(len(source_ids), dtype=np.int64)
    job_ids[submit_order(submit_times)] = np.arange(1, len(source_ids) + 1, dtype=np.int64)
    return job_ids.tolist(), [str(s) for s in source_ids]
