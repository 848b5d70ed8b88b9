"""The rule counts ``test_validate_traces`` expects on the 10 real SWF traces, recomputed by an
independent scan (issue 30: snapshots backed by something independent). The scan reads each
file with plain Python and numpy's text parser (``numpy.loadtxt``, no swftools code) -- ``;``
lines are the header, every other non-blank line is a job of 18 numbers, -1 is unknown -- and
counts the rules whose definition is one test per line, as the Standard Workload Format and the
rules' documentation state them:

* job rows: the job lines;
* ``submit-unknown``: field 2 is -1;
* ``walltime-overrun``: fields 4 and 9 known and the run time above the request + 300 s (the
  default grace; skipped when the header says ``AllowOveruse: Yes``);
* ``swf-cpu-time``: fields 4 and 6 known and the average CPU time above the run time + 1 s.

A rule the scan finds no line for must not be in the expected counts, and the reverse."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from .conftest import trace_path
from .test_validate_traces import EXPECTED

GRACE_S = 300
CPU_TOLERANCE_S = 1.0


def scan(path) -> tuple[dict[str, str], np.ndarray]:
    """(header ``key -> value``, the job lines as an n x 18 float array).

    The job lines are parsed in one ``numpy.loadtxt`` call (whitespace-separated numbers, no
    comment character: a line that is not 18 numbers raises), four times quicker than a
    ``float()`` per field in Python."""
    header: dict[str, str] = {}
    lines: list[str] = []
    with gzip.open(path, "rt", encoding="latin-1") as fh:  # universal newlines, as iterating
        text = fh.read()
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            key, sep, value = stripped[1:].partition(":")
            if sep:
                header.setdefault(key.strip(), value.strip())
            continue
        lines.append(stripped)
    if not lines:
        return header, np.empty((0, 18), dtype=np.float64)
    jobs = np.loadtxt(lines, dtype=np.float64, comments=None, ndmin=2)
    assert jobs.shape[1] == 18, jobs.shape
    return header, jobs


def independent_counts(path) -> tuple[int, dict[str, int]]:
    header, jobs = scan(path)
    submit, run, cpu, req = jobs[:, 1], jobs[:, 3], jobs[:, 5], jobs[:, 8]
    known = lambda a: a != -1  # noqa: E731
    counts = {"submit-unknown": int((~known(submit)).sum()),
              "swf-cpu-time": int((known(run) & known(cpu) & (cpu > run + CPU_TOLERANCE_S)).sum())}
    if not header.get("AllowOveruse", "").lower().startswith("yes"):
        counts["walltime-overrun"] = int((known(run) & known(req) & (run > req + GRACE_S)).sum())
    return len(jobs), counts


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_expected_rule_counts_are_what_an_independent_scan_counts(name):
    rows, counts = independent_counts(trace_path(name))
    expected_rows, expected = EXPECTED[name]
    assert rows == expected_rows
    for rule, count in counts.items():
        assert expected.get(rule, 0) == count, rule
