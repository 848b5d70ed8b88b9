"""Write the job table as ``sacct --parsable2`` output (what the reader reads back).

One job line per job, no steps; local times in ``tz``, else UTC (what the reader assumes
without ``tz``), so that a write then a read gives the same instants. The loss report lists what
sacct's columns cannot carry.
Jobs are in submit order, ties in row order (a table read from sacct output keeps its order:
``swftools.formats.order``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.atomic import atomic_file
from swftools.errors import UsageError, count
from swftools.formats.nqsii.timefmt import (format_datetime_matrix, local_to_utc, matrix_strings,
                                            utc_offsets)
from swftools.formats.localtime import zone_note
from swftools.formats.order import in_write_order
from swftools.formats.slurm import fields as fx
from swftools.formats.slurm.schema import fields as schema_fields
from swftools.formats.slurm.schema import state_rule, write_states
from swftools.metadata import TableMetadata
from swftools.site import Site

HEADER = ["JobID", "JobIDRaw", "User", "Group", "Partition", "Submit", "Eligible", "Start", "End",
          "Elapsed", "ElapsedRaw", "Timelimit", "State", "ExitCode", "NNodes", "NCPUS",
          "ReqTRES", "AllocTRES"]
_EXIT_CODES = {0: "0:0", 1: "1:0", 2: "0:15", 3: "0:15", 4: "0:9"}
_NOT_CARRIED = ("avg_cpu_time_s", "used_memory_kb", "executable", "partition",
                "preceding_job_id", "think_time_s")


def _local_times(values: pa.Array, zone: str, name: str, job_ids: pa.Array) -> list[str]:
    """UTC epoch seconds -> ``YYYY-MM-DDTHH:MM:SS`` local text; null -> Unknown."""
    utc = jt.filled(values, 0).astype(np.int64, copy=False)
    try:
        naive = utc + utc_offsets(utc, zone)
    except ValueError:
        for row, value in enumerate(utc.tolist()):
            try:
                utc_offsets(np.array([value]), zone)
            except ValueError:
                raise UsageError(f"{name} of job {job_ids[row].as_py()} ({value}) is outside "
                                 f"years 1..9999 in {zone}: sacct's local times cannot carry "
                                 "it") from None
        raise
    _, once = local_to_utc(naive, zone)
    valid = np.asarray(pc.is_valid(values).to_numpy(zero_copy_only=False), dtype=bool)
    if (valid & ~once).any():
        raise UsageError(f"{count(int((valid & ~once).sum()), 'time')} fall in a daylight-saving change "
                         f"of {zone}, where sacct's local times are ambiguous; write with --tz UTC")
    text = matrix_strings(format_datetime_matrix(naive, "T")).to_pylist()
    return [t if valid else "Unknown" for t, valid in zip(text, pc.is_valid(values).to_pylist())]


def _check_text(name: str, values: list[Any]) -> None:
    for value in values:
        if value is not None and ("|" in value or "\n" in value or "\r" in value):
            raise UsageError(f"{name} {value!r} holds '|' or a line break: sacct output cannot "
                             "carry it")


def _is_job_line_id(text: str, job_form: re.Pattern[str]) -> bool:
    """Whether the reader takes ``text`` in JobID for a job line (the schema's JobID form
    without a step suffix: ``123.x`` is a step of job 123)."""
    return "." not in text and job_form.fullmatch(text) is not None


def render(table: pa.Table, *, site: Site | str | Path | None = None,
           tz: str | None = None) -> tuple[str, list[str]]:
    """(the sacct --parsable2 text of ``table``, the loss report)."""
    zone = tz or "UTC"
    losses: list[str] = zone_note(table, site, zone)
    meta = TableMetadata.from_table(table)
    unit = meta.unit
    table = in_write_order(table.cast(jt.arrow_schema()), "slurm", meta.source_format)
    col = {name: table.column(name).combine_chunks() for name in table.column_names}
    n = table.num_rows
    if col["submit_time"].null_count:
        raise UsageError(f"{count(col['submit_time'].null_count, 'job')} without a submit time: sacct "
                         "output needs one for every job")
    late = pc.fill_null(pc.less(col["finish_time"], col["start_time"]), False)
    if pc.any(late).as_py():
        raise UsageError("a job ends before it starts: sacct output cannot carry it")
    for name in ("user", "group", "queue"):
        _check_text(name, col[name].to_pylist())
        empty = pc.sum(pc.equal(col[name], "")).as_py() or 0
        if empty:
            losses.append(f"{name}: {count(empty, 'empty value')} read back as unknown")
    # 0 nodes (a job sacct gives no node count) is null first: pc.divide raises on 0 in any row
    nodes = pc.if_else(pc.greater(col["nodes"], 0), col["nodes"], pa.scalar(None, pa.int64()))
    derived = pc.divide(col["gpus"], nodes)
    exact = pc.equal(pc.multiply(derived, col["nodes"]), col["gpus"])
    derived = pc.if_else(pc.fill_null(exact, False), derived, pa.scalar(None, pa.int64()))
    odd = pc.sum(pc.invert(pc.fill_null(pc.equal(derived, col["gpus_per_node"]),
                                        pc.and_(pc.is_null(derived),
                                                pc.is_null(col["gpus_per_node"]))))).as_py() or 0
    if odd:
        losses.append(f"gpus_per_node: {count(odd, 'job')} whose GPUs per node is not their GPU total "
                      "over their node count (read back as that quotient)")
    for name in _NOT_CARRIED:
        known = n - col[name].null_count
        if known:
            losses.append(f"{name}: {count(known, 'known value')} dropped; sacct output has no such column")
    wait = pc.subtract(col["start_time"], col["submit_time"])
    differs = pc.fill_null(pc.not_equal(col["wait_s"], wait), False)
    if pc.sum(differs).as_py():
        losses.append(f"wait_s: {count(pc.sum(differs).as_py(), 'job')} whose wait is not start - submit "
                      "(sacct has no wait column; it is read back as start - submit)")
    losses.append("eligible time written as the submit time (the job table has none)")
    states = write_states()
    submit, start, end = (_local_times(col[name], zone, name, col["job_id"])
                          for name in ("submit_time", "start_time", "finish_time"))
    rows = zip(*(col[c].to_pylist() for c in (
        "job_id", "user", "group", "queue", "walltime_s", "requested_walltime_s", "termcode",
        "swf_status", "nodes", "gpus", "requested_procs", "requested_memory_kb", "start_time",
        "cpus", "recorded_walltime_s", "source_job_id")))
    # source ids (array tasks, het components) are JobIDs; without a JobIDRaw column the reader
    # numbers the jobs in submit order again, as it numbered them when it read the source
    sourced = col["source_job_id"].null_count < n
    if sourced:
        _check_text("source_job_id", col["source_job_id"].to_pylist())
        job_form = re.compile(schema_fields()["JobID"].pattern or "")
        foreign = sum(1 for s in col["source_job_id"].to_pylist()
                      if s is not None and not _is_job_line_id(s, job_form))
        if foreign:
            losses.append(f"source_job_id: {count(foreign, 'job')} whose source id is no sacct job id "
                          "(123, 123_4, 123_[1-3], 123+0): JobID holds their job_id")
        losses.append("job_id: JobID holds source_job_id (no JobIDRaw): read back, the jobs are "
                      "numbered in submit order")
    lines = ["|".join(h for h in HEADER if not (sourced and h == "JobIDRaw"))]
    counts = {"no_state": 0, "status": 0, "memory": 0, "walltime": 0, "gpus": 0}
    for i, (job, user, group, queue, wall, limit, term, status, nodes, gpus, req, mem,
            started, cpus, recorded, source) in enumerate(rows):
        if term is None:
            term = {1: 0, 0: 1, 5: 3}.get(status, 0)
            counts["no_state"] += 1
        state = states[term]
        rule = state_rule(state, None)
        if rule is not None and status != rule.swf_status:
            counts["status"] += 1
        if wall is not None and started is None:
            counts["walltime"] += 1
        if gpus is None and req is not None:
            counts["gpus"] += 1
        alloc: dict[str, str] = {}
        request: dict[str, str] = {}
        key = "gres/gpu" if unit == "gpu" else "cpu"
        if gpus is not None:
            alloc[key] = str(gpus)
        if cpus is not None and unit == "gpu":
            alloc["cpu"] = str(cpus)
        if nodes is not None:
            alloc["node"] = str(nodes)
        if req is not None:
            request[key] = str(req)
            if mem is not None and req > 0:
                request["mem"] = fx.format_memory(mem * req)
        if mem is not None and not req:
            counts["memory"] += 1
        if recorded is not None:  # the log's own figure: Elapsed; End - Start is walltime_s
            wall = recorded
        ncpus = cpus if cpus is not None else (gpus if unit == "processor" else None)
        cells = [
            source if source is not None and _is_job_line_id(source, job_form) else str(job),
            str(job), user or "", group or "", queue or "", submit[i],
            submit[i], start[i], end[i],
            fx.format_duration(wall or 0) if started is not None else "00:00:00",
            str(wall) if wall is not None and started is not None else ("" if started is not None else "0"),
            fx.format_timelimit(limit), state, _EXIT_CODES[term],
            "" if nodes is None else str(nodes), "" if ncpus is None else str(ncpus),
            fx.format_tres(request), fx.format_tres(alloc)]
        if sourced:
            del cells[1]
        lines.append("|".join(cells))
    notes = {
        "no_state": "termcode unknown: state written from the SWF status (else COMPLETED)",
        "status": "swf_status unknown or other than the state table's for their termination "
                  "code (read back from the state)",
        "memory": "requested_memory_kb without requested processors to multiply it by: dropped",
        "walltime": "walltime_s of jobs without a start time: dropped",
        "gpus": "gpus unknown but requested known: read back as the requested count",
    }
    for name, n in counts.items():
        if n:
            losses.append(f"{count(n, 'job')}: {notes[name]}")
    return "\n".join(lines) + "\n", losses


def write(table: pa.Table, path: str | Path, *, force: bool = False,
          site: Site | str | Path | None = None, tz: str | None = None, **_: Any) -> list[str]:
    """Write ``table`` as sacct --parsable2 output (atomically); returns the loss report."""
    text, losses = render(table, site=site, tz=tz)
    with atomic_file(path, force) as tmp:
        tmp.write_bytes(text.encode("utf-8"))
    return losses
