"""Read PBS Pro / OpenPBS / Torque accounting logs into the job table.

Every line is a record ``MM/DD/YYYY HH:MM:SS;T;JOBID;key=value ...``. Each ``E`` record is a
job; ``Q``, ``S``, ``D`` and ``A`` records fill what it lacks (submit, start) and say whether the
job was deleted or aborted. A job with a ``D`` or ``A`` record and no ``E`` record (deleted
before it ended normally, usually before it started) is a job row too: cancelled, no start,
ending at the record's time. The rules are in ``schemas/formats/pbs-accounting.schema.json``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.errors import NO_JOB_ROWS, NO_JOB_ROWS_EXPECTED, InputError
from swftools.formats.inputs import read_bytes
from swftools.formats.localtime import time_zone_of
from swftools.formats.names import check_name
from swftools.formats.skipping import read_skipping
from swftools.formats.nqsii.timefmt import local_to_utc
from swftools.formats.pbs import fields as fx
from swftools.metadata import TableMetadata
from swftools.resources import load_json
from swftools.site import Site

SCHEMA_FILE = "formats/pbs-accounting.schema.json"
SWF_STATUS = {0: 1, 1: 0, 2: 0, 3: 5, 4: 5}


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The PBS accounting schema file (cached; read-only)."""
    return load_json(SCHEMA_FILE)


@dataclass
class _Job:
    """What the records of one job say."""

    job_id: int
    queued_at: int | None = None  # naive local seconds of the Q record
    started: dict[str, str] | None = None
    started_line: int = 0
    ended: dict[str, str] | None = None
    ended_line: int = 0
    ended_at: int | None = None
    deleted: tuple[int, str, int] | None = None  # (naive time, requestor, line)
    aborted: tuple[int, int] | None = None  # (naive time, line)
    first_line: int = 0


class _Located:
    """Error construction for one file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def error(self, line: int, key: str, value: str, message: str, expected: str) -> InputError:
        return InputError(self.path, f"{value!r} {message}", line=line, field=f"key {key!r}",
                          value=value, expected=expected)

    def parse(self, line: int, key: str, value: str, parse: Any) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            raise self.error(line, key, value, "is not valid here", str(exc)) from None


def _records(text: str, where: _Located) -> dict[int, _Job]:
    pattern = re.compile(schema()["recordPattern"])
    jobs: dict[int, _Job] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        m = pattern.match(line)
        if not m:
            raise InputError(where.path, "not a PBS accounting record" if line else "empty line",
                             line=number, field="record", value=line,
                             expected="MM/DD/YYYY HH:MM:SS;TYPE;JOBID;key=value ...")
        stamp, kind, job_text, message = m.groups()
        if kind not in "QSEDA":
            continue
        naive = where.parse(number, "record time", stamp, fx.parse_record_time)
        job_id = where.parse(number, "job id", job_text, fx.parse_job_id)
        attributes = where.parse(number, "message", message, fx.parse_attributes)
        job = jobs.get(job_id)
        if job is None:
            job = jobs[job_id] = _Job(job_id, first_line=number)
        if kind == "Q":
            job.queued_at = naive if job.queued_at is None else job.queued_at
        elif kind == "S":
            job.started, job.started_line = attributes, number
        elif kind == "E":
            if job.ended is not None:
                raise InputError(where.path, f"a second E record for job {job_id}",
                                 line=number, field="record", value=job_text,
                                 expected=f"one E record per job (the first on line {job.ended_line})")
            job.ended, job.ended_line, job.ended_at = attributes, number, naive
        elif kind == "D":
            job.deleted = (naive, attributes.get("requestor", ""), number)
        else:
            job.aborted = (naive, number)
    return jobs


def _epoch(attrs: dict[str, str], key: str, line: int, where: _Located) -> int | None:
    return where.parse(line, key, attrs[key], fx.parse_epoch) if key in attrs else None


def _duration(attrs: dict[str, str], key: str, line: int, where: _Located) -> int | None:
    return where.parse(line, key, attrs[key], fx.parse_duration) if key in attrs else None


def _integer(attrs: dict[str, str], key: str, line: int, where: _Located) -> int | None:
    if key not in attrs:
        return None
    value = attrs[key]
    if not (value.isascii() and value.isdigit()):
        raise where.error(line, key, value, "is not a non-negative integer", "a non-negative integer")
    return int(value)


def _shape(attrs: dict[str, str], line: int, where: _Located) -> tuple[Any, Any, Any, bool]:
    """(nodes, GPUs, CPUs, same GPUs on every node) requested: select/nodes chunks, else the
    totals, else exec_host."""
    chunks = None
    if "Resource_List.select" in attrs:
        chunks = where.parse(line, "Resource_List.select", attrs["Resource_List.select"],
                             fx.parse_select)
        spec = "Resource_List.select"
    elif "Resource_List.nodes" in attrs:
        chunks = where.parse(line, "Resource_List.nodes", attrs["Resource_List.nodes"],
                             fx.parse_nodes)
        spec = "Resource_List.nodes"
    nodes = _integer(attrs, "Resource_List.nodect", line, where)
    gpus = _integer(attrs, "Resource_List.ngpus", line, where)
    cpus = _integer(attrs, "Resource_List.ncpus", line, where)
    if chunks is not None:
        nodes = nodes if nodes is not None else fx.chunk_nodes(chunks)
        if gpus is None:
            gpus = where.parse(line, spec, attrs[spec], lambda _: fx.chunk_total(chunks, "ngpus"))
        if cpus is None:
            cpus = where.parse(line, spec, attrs[spec], lambda _: fx.chunk_total(chunks, "ncpus"))
    if nodes is None and "exec_host" in attrs:
        nodes = where.parse(line, "exec_host", attrs["exec_host"], fx.count_exec_hosts)
    uniform = chunks is None or len({res.get("ngpus", "0") for _, res in chunks}) == 1
    return nodes, gpus, cpus, uniform


def _termcode(job: _Job, exit_status: int | None, used: int | None, limit: int | None) -> int | None:
    rules = schema()
    if job.deleted is not None:
        requestor = job.deleted[1].split("@")[0]
        return 4 if requestor in rules["systemRequestors"] else 3
    if job.ended is None:
        return 4  # an A record without an E record
    if exit_status is None:
        return None
    if exit_status in rules["walltimeExitStatus"] or (
            exit_status != 0 and used is not None and limit is not None and used >= limit):
        return 2
    if exit_status == 0:
        return 0
    if 0 < exit_status < 256:
        return 1
    return 4


def _row(job: _Job, zone_naive: dict[str, list[int]], where: _Located) -> dict[str, Any]:
    attrs = job.ended or {}
    line = job.ended_line or (job.deleted or job.aborted or (0, 0, 0))[-1]
    submit = _epoch(attrs, "qtime", line, where) or _epoch(attrs, "ctime", line, where)
    _epoch(attrs, "etime", line, where)
    start = _epoch(attrs, "start", line, where)
    if start is None and job.started is not None:
        start = _epoch(job.started, "start", job.started_line, where)
    end = _epoch(attrs, "end", line, where)
    if end is not None and start is not None and end < start:
        raise where.error(line, "end", attrs["end"], f"is before the start time {start}",
                          "an end time at or after the start time")
    used = _duration(attrs, "resources_used.walltime", line, where)
    limit = _duration(attrs, "Resource_List.walltime", line, where)
    exit_status = (where.parse(line, "Exit_status", attrs["Exit_status"], fx.parse_exit_status)
                   if "Exit_status" in attrs else None)
    nodes, gpus, cpus, uniform = _shape(attrs, line, where)
    for key in ("user", "group", "queue"):
        if key in attrs:
            check_name(attrs[key], where.path, line, f"key {key!r}")
    row = {"job_id": job.job_id, "user": attrs.get("user"), "group": attrs.get("group"),
           "queue": attrs.get("queue"), "submit_time": submit, "start_time": start,
           "finish_time": end, "requested_walltime_s": limit, "nodes": nodes,
           "_gpus": gpus, "_cpus": cpus, "_line": line, "_uniform": uniform,
           "walltime_s": used if used is not None else (end - start if start is not None
                                                           and end is not None else None),
           "termcode": _termcode(job, exit_status, used, limit)}
    if start is None:
        row["walltime_s"] = used
    # times only the record stamps give (local): filled after the zone conversion
    if submit is None and job.queued_at is not None:
        zone_naive["submit_time"].append(len(zone_naive["_rows"]))
    if end is None and (job.ended_at is not None or job.deleted or job.aborted):
        zone_naive["finish_time"].append(len(zone_naive["_rows"]))
    zone_naive["_rows"].append(job.job_id)
    return row


def read(path: str | Path, *, site: Site | str | Path | None = None, tz: str | None = None,
         progress: bool = False, allow_empty: bool = False, skip_bad_lines: bool = False,
         **_: Any) -> pa.Table:
    """Read a PBS / Torque accounting log (plain or gzip) into the job table.

    Record stamps are local times in ``tz``, else the site's zone, else UTC; the ``qtime``,
    ``start`` and ``end`` keys are epoch seconds. Bad input raises ``InputError`` naming the
    line, key, value and what was expected; with ``skip_bad_lines`` such lines are left out and
    listed in the metadata (``skipped_lines``).
    """
    name = str(path)
    site_obj, zone = time_zone_of(site, tz)
    raw = read_bytes(path)
    if skip_bad_lines:
        return read_skipping(lambda d: _read_data(d, name, site_obj, zone, allow_empty), raw,
                             name, header=False)
    return _read_data(raw, name, site_obj, zone, allow_empty)


def _read_data(raw: bytes, name: str, site_obj: Site | None, zone: str,
               allow_empty: bool) -> pa.Table:
    where = _Located(name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError(name, "is not UTF-8 text", line=line, expected="UTF-8 text") from None
    jobs = _records(text.lstrip("\ufeff"), where)
    chosen = [j for j in jobs.values() if j.ended is not None or j.deleted or j.aborted]
    chosen.sort(key=lambda j: (j.ended_line or (j.deleted or j.aborted)[-1]))
    late: dict[str, list[int]] = {"submit_time": [], "finish_time": [], "_rows": []}
    rows = [_row(j, late, where) for j in chosen]
    if not rows and not allow_empty:
        raise InputError(name, NO_JOB_ROWS.replace("a header", "records without an E, D or A"),
                         expected=NO_JOB_ROWS_EXPECTED)
    by_id = {j.job_id: j for j in chosen}
    for column, indices in (("submit_time", late["submit_time"]), ("finish_time", late["finish_time"])):
        if not indices:
            continue
        naive = []
        for i in indices:
            job = by_id[rows[i]["job_id"]]
            if column == "submit_time":
                naive.append(job.queued_at)
            else:
                naive.append(job.ended_at if job.ended_at is not None
                             else (job.deleted or job.aborted)[0])
        utc, _ = local_to_utc(np.array(naive, dtype=np.int64), zone)
        for i, value in zip(indices, utc.tolist()):
            rows[i][column] = value
    for r in rows:
        if r["start_time"] is not None and r["finish_time"] is not None and \
                r["finish_time"] < r["start_time"]:
            raise InputError(name, "the record time is before the start time", line=r["_line"],
                             field="record time", value=str(r["finish_time"]),
                             expected="an end at or after the start")
    unit = "gpu" if any(r["_gpus"] is not None for r in rows) else "processor"
    columns: dict[str, list[Any]] = {k: [r[k] for r in rows] for k in (
        "job_id", "user", "group", "queue", "submit_time", "start_time", "finish_time",
        "requested_walltime_s", "nodes", "walltime_s", "termcode")}
    size = [r["_gpus"] if unit == "gpu" else r["_cpus"] for r in rows]
    if unit == "gpu":
        size = [0 if s is None else s for s in size]
    columns["gpus"] = size
    columns["requested_procs"] = size
    columns["gpus_per_node"] = [g // n if g is not None and n and g % n == 0 and r["_uniform"]
                                else None for g, n, r in zip(size, columns["nodes"], rows)]
    columns["wait_s"] = [s - q if s is not None and q is not None and s >= q else None
                         for s, q in zip(columns["start_time"], columns["submit_time"])]
    columns["swf_status"] = [SWF_STATUS.get(t) if t is not None else None
                             for t in columns["termcode"]]
    arrays = {k: pa.array(v, pa.string() if k in ("user", "group", "queue") else pa.int64())
              for k, v in columns.items()}
    metadata = TableMetadata(
        source_file=Path(name).name, source_format="pbs", converter_version=_version(),
        site=site_obj.name if site_obj else None, time_zone=zone, processor_unit=unit,
        extra={"pbs": {"jobs": len(rows),
                       "without_end_record": sum(1 for j in chosen if j.ended is None)}})
    return jt.from_columns(arrays, metadata)


def _version() -> str:
    from swftools import __version__

    return __version__
