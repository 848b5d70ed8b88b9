"""Write the job table as a PBS Pro accounting log (what the reader reads back).

Per job a ``Q`` record at the submit time, a ``D`` record (requestor = the user) for jobs
cancelled by their user, and an ``E`` record stamped at the end time carrying ``qtime``,
``start``, ``end``, ``Exit_status`` and the request (``Resource_List.select``,
``Resource_List.nodect``, ``Resource_List.ngpus`` or ``ncpus``, ``Resource_List.walltime``).
Jobs are in submit order, ties in row order (a table read from a PBS log keeps its
order: ``swftools.formats.order``); stamps are local times in ``tz``, else UTC. A job's
``source_job_id`` is its record id when it is a PBS job id (``1234[5].server``) of no other
job, else ``JOB_ID.swftools``; ``resources_used.walltime`` is ``recorded_walltime_s`` when known, and
``Resource_List.ncpus`` the ``cpus`` column on GPU logs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.atomic import atomic_file
from swftools.errors import UsageError, count
from swftools.formats.nqsii.timefmt import utc_offsets
from swftools.formats.localtime import zone_note
from swftools.formats.order import in_write_order
from swftools.formats.jobids import number_jobs
from swftools.formats.pbs import fields as fx
from swftools.formats.pbs.reader import SWF_STATUS, schema
from swftools.metadata import TableMetadata
from swftools.site import Site

# termcode -> Exit_status the reader maps back to it (-29: PBS Pro JOB_EXEC_KILL_WALLTIME;
# 265: killed by signal 9; 271: killed by SIGTERM, with the D record of the qdel).
EXIT_STATUS = {0: 0, 1: 1, 2: -29, 3: 271, 4: 265}
SYSTEM_REQUESTORS = tuple(schema()["systemRequestors"])
_NOT_CARRIED = ("avg_cpu_time_s", "used_memory_kb", "requested_memory_kb", "executable",
                "partition", "preceding_job_id", "think_time_s")


def _stamp(utc: int, zone: str) -> str:
    offset = int(utc_offsets(np.array([utc], dtype=np.int64), zone)[0])
    return fx.format_record_time(utc + offset)


def render(table: pa.Table, *, site: Site | str | Path | None = None,
           tz: str | None = None) -> tuple[str, list[str]]:
    """(the accounting log text of ``table``, the loss report)."""
    zone = tz or "UTC"
    losses: list[str] = zone_note(table, site, zone)
    meta = TableMetadata.from_table(table)
    unit = meta.unit
    table = in_write_order(table.cast(jt.arrow_schema()), "pbs", meta.source_format)
    rows = table.to_pylist()
    for name in _NOT_CARRIED:
        known = sum(1 for r in rows if r[name] is not None)
        if known:
            losses.append(f"{name}: {count(known, 'known value')} dropped; PBS accounting records "
                          "carry no such key")
    counts = {"gpus": 0, "termcode": 0, "limit_status": 0, "requested_procs": 0, "wait_s": 0,
              "swf_status": 0, "gpus_per_node": 0, "walltime_s": 0, "user": 0, "group": 0,
              "queue": 0, "stamp": 0, "finish_time": 0, "recorded_walltime_s": 0, "cpus": 0,
              "source_job_id": 0}
    lines: list[str] = []
    written: list[str] = []
    key = "ngpus" if unit == "gpu" else "ncpus"
    # the reader takes a log where no job uses a GPU for a CPU log
    cpu_log = unit != "gpu" or not any(r["gpus"] for r in rows)
    record_ids = _record_ids(rows, counts)
    for r, job in zip(rows, record_ids):
        for name in ("user", "group", "queue"):
            value = r[name]
            if value is not None and (any(c in value for c in " ;=\n\r") or value == ""):
                if value == "":
                    counts[name] += 1
                    r[name] = None
                else:
                    raise UsageError(f"{name} {value!r} holds a space, ';', '=' or a line "
                                     "break: PBS accounting records cannot carry it")
        back = _size_back(r, unit, cpu_log)
        if back != r["gpus"]:
            counts["gpus"] += 1
        if r["requested_procs"] is not None and r["requested_procs"] != back:
            counts["requested_procs"] += 1
        start, submit, end = r["start_time"], r["submit_time"], r["finish_time"]
        if r["wait_s"] is not None and (start is None or submit is None
                                        or r["wait_s"] != start - submit):
            counts["wait_s"] += 1
        term = r["termcode"]
        if r["swf_status"] != SWF_STATUS.get(term) and not (
                term is None and r["swf_status"] is None):
            counts["swf_status"] += 1
        gpus, nodes = r["gpus"], r["nodes"]
        per_node = gpus // nodes if gpus is not None and nodes and gpus % nodes == 0 else None
        per_node_back = back // nodes if back is not None and nodes and back % nodes == 0 \
            else None
        if r["gpus_per_node"] != per_node_back:
            counts["gpus_per_node"] += 1
        if r["walltime_s"] is None and start is not None and end is not None:
            counts["walltime_s"] += 1
        recorded = r["recorded_walltime_s"]
        if recorded is None and r["walltime_s"] is not None and start is not None and \
                end is not None and r["walltime_s"] != end - start:
            counts["recorded_walltime_s"] += 1  # read back: walltime_s = end - start
            recorded = r["walltime_s"]
        if recorded is None:
            recorded = r["walltime_s"]
        # the reader compares the written run time (resources_used.walltime) with the limit
        if term in (1, 4) and recorded is not None and \
                r["requested_walltime_s"] is not None and recorded >= r["requested_walltime_s"]:
            counts["termcode"] += 1
            if term == 4 and r["swf_status"] is not None:
                counts["limit_status"] += 1
        attrs: dict[str, str] = {}
        for name in ("user", "group", "queue"):
            if r[name] is not None:
                attrs[name] = r[name]
        if submit is not None:
            attrs["qtime"] = str(submit)
        if start is not None:
            attrs["start"] = str(start)
        if end is not None:
            attrs["end"] = str(end)
        if term is not None:
            attrs["Exit_status"] = str(EXIT_STATUS[term])
        if r["requested_walltime_s"] is not None:
            attrs["Resource_List.walltime"] = fx.format_duration(r["requested_walltime_s"])
        if nodes is not None:
            attrs["Resource_List.nodect"] = str(nodes)
        if gpus is not None:
            attrs[f"Resource_List.{key}"] = str(gpus)
            if per_node is not None:
                attrs["Resource_List.select"] = fx.format_select([(nodes, {key: str(per_node)})])
        if unit == "gpu" and r["cpus"] is not None:
            attrs["Resource_List.ncpus"] = str(r["cpus"])
        elif unit != "gpu" and r["cpus"] != gpus:
            counts["cpus"] += 1
        if recorded is not None:
            attrs["resources_used.walltime"] = fx.format_duration(recorded)
        when = end if end is not None else (start if start is not None else submit)
        if when is None:
            counts["stamp"] += 1
            when = 0
        if end is None:
            counts["finish_time"] += 1
        written.append(job)
        if submit is not None:
            lines.append(f"{_stamp(submit, zone)};Q;{job};queue={r['queue'] or 'default'}")
        if term == 3:
            requestor = r["user"] if r["user"] not in (None, *SYSTEM_REQUESTORS) else "owner"
            lines.append(f"{_stamp(when, zone)};D;{job};requestor={requestor}@localhost")
        lines.append(f"{_stamp(when, zone)};E;{job};{fx.format_attributes(attrs)}")
    notes = {
        "requested_procs": "requested_procs other than the allocation (PBS records one request; "
                           "read back as the allocation)",
        "wait_s": "wait_s other than the start minus the submission (read back as that)",
        "swf_status": "swf_status unknown or other than their termination code's (read back "
                      "from it)",
        "limit_status": "swf_status of jobs killed by the system at their walltime limit: read "
                        "back as walltime exceeded",
        "gpus_per_node": "gpus_per_node other than the GPU total over the node count (read back "
                         "as that)",
        "user": "user: empty names read back as unknown",
        "group": "group: empty names read back as unknown",
        "queue": "queue: empty names read back as unknown",
        "gpus": "gpus unknown: read back as 0 (no GPUs requested)",
        "termcode": "termcode 1 or 4 of jobs that ran to their walltime limit: read back as 2 "
                    "(walltime exceeded)",
        "walltime_s": "walltime_s unknown: read back as the end minus the start",
        "stamp": "jobs without any time stamped 01/01/1970",
        "finish_time": "finish_time unknown: read back as the E record's time",
        "recorded_walltime_s": "walltime_s other than the end minus the start: read back as "
                               "that, the recorded figure as recorded_walltime_s",
        "cpus": "cpus other than the processor total of a CPU log (read back as gpus)",
        "cpu_log": "gpus of a GPU log where no job uses a GPU: read back as a CPU log, gpus "
                   "holding the processor counts where known",
        "source_job_id": "source_job_id not a PBS job id of this job alone (NUMBER[INDEX]"
                         "[.SERVER], once in the log, not an array parent): written as "
                         "JOB_ID.swftools",
        "renumbered": "job_id renumbered 1..n in submit order on reading (source ids that are "
                      "not plain numbers; the ids are kept as source_job_id)",
        "source_back": "source_job_id read back as the written id (JOB_ID.swftools) in a log "
                       "renumbered on reading",
        "source_lost": "source_job_id read back as unknown (the written ids are plain numbers, "
                       "read back as job_id alone)",
    }
    counts["renumbered"], counts["source_back"], counts["source_lost"] = _renumbered(rows, written)
    if unit == "gpu" and cpu_log:
        notes["gpus"] = notes.pop("cpu_log")
    for name, n in counts.items():
        if n:
            losses.append(f"{count(n, 'job')}: {notes[name]}")
    return "".join(line + "\n" for line in lines), losses


def _record_ids(rows: list[dict[str, Any]], counts: dict[str, int]) -> list[str]:
    """The job id each job's records carry: its source id when PBS can carry it and it names
    this job alone, else ``JOB_ID.swftools``. The reader takes records of one id (number and
    array index; the server part aside) for one job and leaves array parents (``7[]``) out, so
    a source id seen twice, a parent's, or one equal to another job's ``JOB_ID.swftools``
    would lose jobs on reading."""
    keys: list[str | None] = []
    for row in rows:
        source = row["source_job_id"]
        try:
            parsed = None if source is None else fx.parse_job_id(source)
        except ValueError:
            parsed = None
        keys.append(None if parsed is None or parsed.parent else parsed.key)
    seen: dict[str, int] = {}
    for key in keys:
        if key is not None:
            seen[key] = seen.get(key, 0) + 1
    kept = {i for i, key in enumerate(keys) if key is not None and seen[key] == 1}
    while True:  # a JOB_ID.swftools id must not be another job's source id
        fallback = {str(rows[i]["job_id"]) for i in range(len(rows)) if i not in kept}
        clash = {i for i in kept if keys[i] in fallback}
        if not clash:
            break
        kept -= clash
    counts["source_job_id"] += sum(1 for i, row in enumerate(rows)
                                   if row["source_job_id"] is not None and i not in kept)
    return [rows[i]["source_job_id"] if i in kept else f"{rows[i]['job_id']}.swftools"
            for i in range(len(rows))]


def _size_back(row: dict[str, Any], unit: str, cpu_log: bool) -> int | None:
    """The gpus value the reader gives back for a row."""
    if not cpu_log:
        return 0 if row["gpus"] is None else row["gpus"]
    if unit == "gpu" and row["cpus"] is not None:
        return row["cpus"]
    return row["gpus"]


def _renumbered(rows: list[dict[str, Any]], written: list[str]) -> tuple[int, int, int]:
    """(jobs the reader will number otherwise than ``job_id``, jobs whose source_job_id comes
    back as another id, jobs whose source_job_id comes back unknown): it numbers the jobs in
    submit order when an id is not a plain number, and then keeps every written id as the
    source id; else it keeps none."""
    keys = [fx.parse_job_id(text).key for text in written]
    # the reader orders jobs by submit time, then by their E record's line (row order here)
    ids, source = number_jobs(keys, [r["submit_time"] for r in rows])
    renumbered = sum(1 for r, i in zip(rows, ids) if r["job_id"] != i)
    if source is None:
        return renumbered, 0, sum(1 for r in rows if r["source_job_id"] is not None)
    return renumbered, sum(1 for r, text in zip(rows, written) if r["source_job_id"] != text), 0


def write(table: pa.Table, path: str | Path, *, force: bool = False,
          site: Site | str | Path | None = None, tz: str | None = None, **_: Any) -> list[str]:
    """Write ``table`` as a PBS accounting log (atomically); returns the loss report."""
    text, losses = render(table, site=site, tz=tz)
    with atomic_file(path, force) as tmp:
        tmp.write_bytes(text.encode("utf-8"))
    return losses
