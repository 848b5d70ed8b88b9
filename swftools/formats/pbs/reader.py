"""Read PBS Pro / OpenPBS / Torque accounting logs into the job table.

Every line is a record ``MM/DD/YYYY HH:MM:SS;T;JOBID;key=value ...``. Each ``E`` record is a
job; ``Q``, ``S``, ``D`` and ``A`` records fill what it lacks (submit, start) and say whether the
job was deleted or aborted. A job with a ``D`` or ``A`` record and no ``E`` record (deleted
before it ended normally, usually before it started) is a job row too: cancelled, no start,
ending at the record's time. The rules are in ``schemas/formats/pbs-accounting.schema.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.errors import InputError, count
from swftools.formats.inputs import read_bytes
from swftools.formats.jobids import number_jobs
from swftools.formats.localtime import time_zone_of
from swftools.formats.names import check_name
from swftools.formats.skipping import read_skipping, reject, reject_all
from swftools.formats.nqsii.timefmt import local_to_utc
from swftools.formats.pbs import fields as fx
from swftools.formats.pbs.records import Job, Located, Records, scan, schema
from swftools.formats.walltime import check_stamps, reconcile
from swftools.metadata import TableMetadata
from swftools.site import Site

__all__ = ["SWF_STATUS", "read", "schema"]

SWF_STATUS = {0: 1, 1: 0, 2: 0, 3: 5, 4: 5}
# Where each resource key's value goes, and the quantity whose absence makes a value that does
# not parse an error (while another key gives that quantity, the value is only noted).
_SHAPE_KEYS = {"Resource_List.select": "nodes", "Resource_List.nodes": "nodes",
               "Resource_List.nodect": "nodes", "Resource_List.ngpus": "gpus",
               "Resource_List.ncpus": "cpus", "exec_host": "nodes",
               "total_execution_slots": "cpus", "resources_used.ncpus": "cpus"}
MAX_NOTED = 50


def _epoch(attrs: dict[str, str], key: str, line: int, where: Located) -> int | None:
    return where.parse(line, key, attrs[key], fx.parse_epoch) if key in attrs else None


def _duration(attrs: dict[str, str], key: str, line: int, where: Located) -> int | None:
    return where.parse(line, key, attrs[key], fx.parse_duration) if key in attrs else None


def _whole(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ValueError("a non-negative integer")
    return int(text)


def _shape(attrs: dict[str, str], line: int, where: Located,
           noted: list[dict[str, Any]]) -> tuple[Any, Any, Any, bool]:
    """(nodes, GPUs, CPUs, same GPUs on every node) of a job: nodes from nodect, else the
    select/nodes chunks, else exec_host's hosts; GPUs from ngpus, else the chunks; CPUs from the
    chunks, else ncpus, else total_execution_slots, else exec_host's slots, else
    resources_used.ncpus. A value that does not parse is an error only when no other key gives
    what it would have given (then it is noted in ``noted``)."""
    parsed: dict[str, Any] = {}
    failed: list[tuple[str, str, str]] = []
    for key in _SHAPE_KEYS:
        if key not in attrs:
            continue
        parse = {"Resource_List.select": fx.parse_select, "Resource_List.nodes": fx.parse_nodes,
                 "exec_host": fx.exec_host_shape}.get(key, _whole)
        try:
            parsed[key] = parse(attrs[key])
        except ValueError as exc:
            failed.append((key, attrs[key], str(exc)))
    chunks = parsed.get("Resource_List.select", parsed.get("Resource_List.nodes"))
    chunk_gpus = chunk_cpus = None
    if chunks is not None:
        spec = "Resource_List.select" if "Resource_List.select" in parsed else "Resource_List.nodes"
        chunk_gpus = where.parse(line, spec, attrs[spec], lambda _: fx.chunk_total(chunks, "ngpus"))
        chunk_cpus = where.parse(line, spec, attrs[spec], lambda _: fx.chunk_total(chunks, "ncpus"))
    hosts, slots = parsed.get("exec_host", (None, None))
    got = {"nodes": _first(parsed.get("Resource_List.nodect"),
                           fx.chunk_nodes(chunks) if chunks is not None else None, hosts),
           "gpus": _first(parsed.get("Resource_List.ngpus"), chunk_gpus),
           "cpus": _first(chunk_cpus, parsed.get("Resource_List.ncpus"),
                          parsed.get("total_execution_slots"), slots or None,
                          parsed.get("resources_used.ncpus"))}
    for key, value, expected in failed:
        if got[_SHAPE_KEYS[key]] is None:
            raise where.error(line, key, value, "is not valid here", expected)
        if len(noted) < MAX_NOTED:
            noted.append({"line": line, "key": key})
    uniform = chunks is None or len({res.get("ngpus", "0") for _, res in chunks}) == 1
    return got["nodes"], got["gpus"], got["cpus"], uniform


def _first(*values: int | None) -> int | None:
    return next((v for v in values if v is not None), None)


def _termcode(job: Job, exit_status: int | None, used: int | None, limit: int | None) -> int | None:
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


def _row(job: Job, where: Located, noted: list[dict[str, Any]]) -> dict[str, Any]:
    """One job's values; times the record stamps give are naive local (``_naive_*``)."""
    attrs = job.ended or {}
    line = job.line
    submit = _epoch(attrs, "qtime", line, where) or _epoch(attrs, "ctime", line, where)
    _epoch(attrs, "etime", line, where)
    start = _epoch(attrs, "start", line, where)
    if start is None and job.started is not None and "start" in job.started:
        start = where.parse(job.started_at[1], "start", job.started["start"], fx.parse_epoch)
    end = _epoch(attrs, "end", line, where)
    if end is not None and start is not None and end < start:
        raise where.error(line, "end", attrs["end"], f"is before the start time {start}",
                          "an end time at or after the start time")
    used = _duration(attrs, "resources_used.walltime", line, where)
    limit = _duration(attrs, "Resource_List.walltime", line, where)
    exit_status = (where.parse(line, "Exit_status", attrs["Exit_status"], fx.parse_exit_status)
                   if "Exit_status" in attrs else None)
    nodes, gpus, cpus, uniform = _shape(attrs, line, where, noted)
    for key in ("user", "group", "queue"):
        if key in attrs:
            check_name(attrs[key], where.path, line, f"key {key!r}")
    naive_end = None
    if end is None:
        naive_end = job.ended_at if job.ended_at is not None else (job.deleted or job.aborted)[0]
    return {"source": job.id_text, "key": job.key, "user": attrs.get("user"),
            "group": attrs.get("group"), "queue": attrs.get("queue"), "submit_time": submit,
            "start_time": start, "finish_time": end, "requested_walltime_s": limit,
            "nodes": nodes, "_gpus": gpus, "_cpus": cpus, "_line": line, "_uniform": uniform,
            "_used": used, "termcode": _termcode(job, exit_status, used, limit),
            "_naive_submit": job.queued_at if submit is None else None,
            "_naive_end": naive_end,
            "_stamp": job.ended_at if job.ended is not None and end is not None else None}


def read(path: str | Path, *, site: Site | str | Path | None = None, tz: str | None = None,
         progress: bool = False, allow_empty: bool = False, skip_bad_lines: bool = False,
         **_: Any) -> pa.Table:
    """Read a PBS / Torque accounting log (plain or gzip) into the job table.

    Record stamps are local times in ``tz``, else the site's zone, else UTC; the ``qtime``,
    ``start`` and ``end`` keys are epoch seconds, and an ``E`` record's stamp that differs from
    its ``end`` by whole hours is a time-zone error. Bad input raises ``InputError`` naming the
    line, key, value and what was expected; with ``skip_bad_lines`` such lines are left out and
    listed in the metadata (``skipped_lines``).
    """
    name = str(path)
    site_obj, zone = time_zone_of(site, tz, source=path)
    raw = read_bytes(path)
    if skip_bad_lines:
        return read_skipping(lambda d: _read_data(d, name, site_obj, zone, allow_empty), raw,
                             name, header=False)
    return _read_data(raw, name, site_obj, zone, allow_empty)


def _to_utc(rows: list[dict[str, Any]], naive_key: str, zone: str) -> list[int | None]:
    """The UTC epochs of the rows' naive local ``naive_key`` times (None where unknown)."""
    indices = [i for i, r in enumerate(rows) if r[naive_key] is not None]
    out: list[int | None] = [None] * len(rows)
    if indices:
        utc, _ = local_to_utc(np.array([rows[i][naive_key] for i in indices], dtype=np.int64),
                              zone)
        for i, value in zip(indices, utc.tolist()):
            out[i] = value
    return out


def _read_data(raw: bytes, name: str, site_obj: Site | None, zone: str,
               allow_empty: bool) -> pa.Table:
    where = Located(name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        errors = _not_utf8(raw, name)
        reject_all(errors)
        raise errors[0] from None
    records = scan(text.lstrip("\ufeff"), where)
    chosen = sorted((j for j in records.jobs.values() if j.is_row), key=lambda j: j.line)
    noted: list[dict[str, Any]] = []
    rows = []
    for job in chosen:
        try:
            rows.append(_row(job, where, noted))
        except InputError as exc:
            reject(exc)  # --skip-bad-lines: noted, and the job is not a row in this pass
    if not rows and not allow_empty:
        raise InputError(name, _no_jobs(text, records), expected="PBS accounting records of "
                         "jobs (E, D or A), or --allow-empty for a log without jobs")
    stamps = _to_utc(rows, "_stamp", zone)
    check_stamps(name, [r["_line"] for r in rows], stamps, [r["finish_time"] for r in rows],
                 "end", zone=zone)
    for column, naive in (("submit_time", "_naive_submit"), ("finish_time", "_naive_end")):
        for r, value in zip(rows, _to_utc(rows, naive, zone)):
            if value is not None:
                r[column] = value
    late = [r for r in rows if r["start_time"] is not None and r["finish_time"] is not None
            and r["finish_time"] < r["start_time"]]
    reject_all(InputError(name, "the record time is before the start time", line=r["_line"],
                          field="record time", value=str(r["finish_time"]),
                          expected="an end at or after the start") for r in late)
    # submit order (unknown submit times last), then the record order: the archive's order
    rows.sort(key=lambda r: (r["submit_time"] is None, r["submit_time"] or 0, r["_line"]))
    return _table(rows, records, name, site_obj, zone, noted)


def _no_jobs(text: str, records: Records) -> str:
    """Why a log without job rows has none: what records it holds instead."""
    if not text.strip():
        return "is empty"
    total = sum(records.kinds.values())
    found = ", ".join(f"{n} {kind}" for kind, n in sorted(records.kinds.items()))
    what = f"{count(total, 'record')} ({found})" if total else "no records"
    unfinished = sum(1 for j in records.jobs.values() if not j.is_row)
    if unfinished:
        what += f"; {count(unfinished, 'job')} queued or running, not ended yet"
    if records.array_parents:
        what += f"; {count(len(records.array_parents), 'array parent')}, left out as its subjobs are the jobs"
    return f"holds no job that ended, no E, D or A record of a job: {what}"


def _not_utf8(raw: bytes, name: str) -> list[InputError]:
    """The lines that are not UTF-8 text (the first only unless ``--skip-bad-lines``
    collects); one at least, as b"\\n" is never part of a UTF-8 sequence."""
    from swftools.formats.skipping import collecting

    found = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            found.append(InputError(name, "is not UTF-8 text", line=number,
                                    expected="UTF-8 text"))
            if not collecting():
                break
    return found


def _table(rows: list[dict[str, Any]], records: Records, name: str, site_obj: Site | None,
           zone: str, noted: list[dict[str, Any]]) -> pa.Table:
    ids, source = number_jobs([r["key"] for r in rows], [r["submit_time"] for r in rows])
    # a job uses GPUs when it asks for some: a site writing ngpus=0 on every job is a CPU site
    unit = "gpu" if any(r["_gpus"] for r in rows) else "processor"
    columns: dict[str, list[Any]] = {k: [r[k] for r in rows] for k in (
        "user", "group", "queue", "submit_time", "start_time", "finish_time",
        "requested_walltime_s", "nodes", "termcode")}
    columns["job_id"] = ids
    walltime, recorded, largest = reconcile(columns["start_time"], columns["finish_time"],
                                            [r["_used"] for r in rows])
    columns["walltime_s"], columns["recorded_walltime_s"] = walltime, recorded
    columns["cpus"] = [r["_cpus"] for r in rows]
    if unit == "gpu":
        size = [0 if r["_gpus"] is None else r["_gpus"] for r in rows]
    else:  # processors; a CPU log's ngpus=0 stands when nothing gives the processors
        size = [r["_cpus"] if r["_cpus"] is not None else r["_gpus"] for r in rows]
    columns["gpus"] = columns["requested_procs"] = size
    columns["gpus_per_node"] = [g // n if g is not None and n and g % n == 0 and r["_uniform"]
                                else None for g, n, r in zip(size, columns["nodes"], rows)]
    columns["wait_s"] = [s - q if s is not None and q is not None and s >= q else None
                         for s, q in zip(columns["start_time"], columns["submit_time"])]
    columns["swf_status"] = [SWF_STATUS.get(t) for t in columns["termcode"]]
    strings = ("user", "group", "queue", "source_job_id")
    if source is not None:
        columns["source_job_id"] = [r["source"] for r in rows]
    arrays = {k: pa.array(v, pa.string() if k in strings else pa.int64())
              for k, v in columns.items()}
    requeued = sum(1 for j in records.jobs.values() if j.is_row and j.requeued)
    pbs = {"jobs": len(rows),
           "without_end_record": sum(1 for j in records.jobs.values()
                                     if j.is_row and j.ended is None),
           "requeued_jobs": requeued, "array_parents_left_out": len(records.array_parents),
           "largest_walltime_difference_s": largest}
    if records.prefixed_lines:
        pbs["prefixed_lines"] = records.prefixed_lines
    if noted:
        pbs["unreadable_values"] = noted
    metadata = TableMetadata(
        source_file=Path(name).name, source_format="pbs", converter_version=_version(),
        site=site_obj.name if site_obj else None, time_zone=zone, processor_unit=unit,
        unfinished_jobs=sum(1 for j in records.jobs.values() if not j.is_row),
        extra={"pbs": pbs})
    return jt.from_columns(arrays, metadata)


def _version() -> str:
    from swftools import __version__

    return __version__
