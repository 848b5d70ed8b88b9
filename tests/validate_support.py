"""Helpers shared by the tests of swftools.validate: tiny AAIC tables and SWF files with planted defects."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from swftools import table as jt
from swftools.validate import Report, validate

T0 = 1_500_000_000  # 2017-07-14T02:40:00Z

DEFAULT_JOB = {"user": "alice", "group": "lab", "queue": "Normal", "nodes": 1, "gpus_per_node": 1,
               "requested_walltime_s": 3600, "termcode": 0, "wait_s": 10, "walltime_s": 600}


def aaic_table(jobs: list[dict[str, Any]], metadata: dict[str, Any] | None = None,
               derive: bool = True):
    """A job table from partial job dicts: defaults filled, times derived unless given.

    Submit times default to T0 + 60 s x index; start/finish/gpus follow from wait/run/nodes.
    """
    rows = []
    for i, job in enumerate(jobs):
        row = dict(DEFAULT_JOB)
        row["job_id"] = i + 1
        row["submit_time"] = T0 + 60 * i
        row.update(job)
        if derive:
            if "gpus" not in job and row["nodes"] is not None and row["gpus_per_node"] is not None:
                row["gpus"] = row["nodes"] * row["gpus_per_node"]
            if "start_time" not in job and row["wait_s"] is not None and row["submit_time"] is not None:
                row["start_time"] = row["submit_time"] + row["wait_s"]
            if "finish_time" not in job and row.get("start_time") is not None and \
                    row["walltime_s"] is not None:
                row["finish_time"] = row["start_time"] + row["walltime_s"]
        rows.append(row)
    names = sorted({k for r in rows for k in r}, key=jt.column_names().index)
    cols = {n: [r.get(n) for r in rows] for n in names}
    meta = {"site": "aaic", "time_zone": "Asia/Tokyo", "source_format": "nqsii"}
    meta.update(metadata or {})
    return jt.from_columns(cols, meta)


def run(source, *rules: str, **kwargs: Any) -> Report:
    """Validate with only ``rules`` (all when none given)."""
    return validate(source, rules=list(rules) or None, **kwargs)


def fired_rows(report: Report, rule: str) -> list[int | None]:
    """Job ids of the kept findings of ``rule``."""
    return [f.job_id for f in report.findings if f.rule == rule]


def assert_fires(report: Report, rule: str, count: int | None = None,
                 severity: str | None = None) -> list:
    """The planted defect is found by ``rule`` (``count`` times, at ``severity``)."""
    found = [f for f in report.findings if f.rule == rule]
    assert found, f"{rule} did not fire; findings: {[f.render() for f in report.findings]}"
    if count is not None:
        assert report.rule_counts()[rule] == count, [f.render() for f in found]
    if severity is not None:
        assert {f.severity for f in found} == {severity}
    return found


def assert_silent(report: Report, rule: str) -> None:
    found = [f.render() for f in report.findings if f.rule == rule]
    assert not found, found


HEADER = """; Version: 2.2
; Computer: test machine
; Installation: test site
; Acknowledge: nobody
; Information: http://example.org
; Conversion: swftools tests
; MaxJobs: {n}
; MaxRecords: {n}
; Preemption: No
; UnixStartTime: 1000000000
; TimeZoneString: UTC
; StartTime: Sun Sep 09 01:46:40 UTC 2001
; EndTime:   Sun Sep 09 05:00:00 UTC 2001
; MaxNodes: 4
; MaxProcs: 16
; MaxQueues: 2
; Queue: 1 batch
; Queue: 2 express
; Note: test file
"""


def swf_line(job: int, submit: int = 0, wait: int = 0, run: int = 100, procs: int = 4,
             cpu: float | int = -1, mem: int = -1, req_procs: int = 4, req_time: int = 3600,
             req_mem: int = -1, status: int = 1, user: int = 1, group: int = 1, app: int = -1,
             queue: int = 1, partition: int = -1, prev: int = -1, think: int = -1) -> str:
    fields = [job, submit, wait, run, procs, cpu, mem, req_procs, req_time, req_mem, status, user,
              group, app, queue, partition, prev, think]
    return " ".join(str(f) for f in fields)


def write_swf(path: Path, lines: list[str], header: str | None = None, n: int | None = None,
              compress: bool = False) -> Path:
    """An SWF file with ``lines`` and the test header (``{n}`` = job count unless given)."""
    head = HEADER.format(n=len(lines) if n is None else n) if header is None else header
    text = head + "\n".join(lines) + "\n"
    if compress:
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        path.write_text(text)
    return path


def swf_jobs(n: int = 5, **overrides: Any) -> list[str]:
    """``n`` consistent SWF job lines, one every 100 s."""
    return [swf_line(i + 1, submit=100 * i, **overrides) for i in range(n)]
