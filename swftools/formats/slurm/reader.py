"""Read ``sacct --parsable2`` output into the job table.

The file is split into cells by pyarrow's CSV reader (``|``, no quoting); job lines and step
lines (``123.batch``, ``123.0``, ``123.extern``) are told apart by their JobID, steps only fill
cells their job line leaves empty (NodeList, NNodes, NCPUS, AllocTRES) and are never jobs.
Jobs still PENDING/RUNNING (and the other unfinished states of the schema's state table) are not
in the table; their count per state is in the metadata under ``slurm.unfinished``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from swftools import table as jt
from swftools.errors import NO_JOB_ROWS, NO_JOB_ROWS_EXPECTED, InputError
from swftools.formats.inputs import first_repeat, read_bytes
from swftools.formats.localtime import time_zone_of
from swftools.formats.skipping import read_skipping
from swftools.formats.slurm import fields as fx
from swftools.formats.slurm.columns import (Column, by_distinct, check_pattern, first, integers,
                                           lookup, mask, matches, times)
from swftools.formats.slurm.schema import fields as schema_fields
from swftools.formats.slurm.schema import map_header, state_rule, states
from swftools.metadata import TableMetadata
from swftools.site import Site

_FILLED_FROM_STEPS = ("NodeList", "NNodes", "NCPUS", "AllocTRES")
# RE2 form of the host-list grammar of fields.expand_hostlist (checked cheaply on every row).
_HOST = r"[A-Za-z0-9_.\-]*(?:\[[A-Za-z0-9,\-]+\][A-Za-z0-9_.\-]*)*"
HOSTLIST_PATTERN = rf"^(?:None assigned|{_HOST}(?:,{_HOST})*)$"


def _version() -> str:
    from swftools import __version__

    return __version__


# ------------------------------------------------------------------------------ splitting

def _field_count_error(data: bytes, path: str, width: int) -> InputError:
    """Locate the line whose field count differs from the header's (pyarrow only says that one
    does)."""
    for number, raw in enumerate(data.split(b"\n")[1:], start=2):
        line = raw.rstrip(b"\r")
        if number > 2 and line == b"" and data.endswith(b"\n") and \
                number == data.count(b"\n") + 1:
            break  # the final newline
        count = line.count(b"|") + 1
        if count != width:
            text = line.decode("utf-8", "replace")
            what = "empty line" if line == b"" else f"{count} fields"
            return InputError(path, f"{what}, the header has {width}", line=number,
                              field="line", value=text,
                              expected=f"{width} '|'-separated fields, as in the header")
    return InputError(path, "cannot split the file into '|'-separated fields",
                      expected="sacct --parsable2 output")


def _has_data(data: bytes, offset: int) -> bool:
    """Whether anything but line breaks follows ``offset`` (without copying the rest)."""
    for i in range(offset, len(data)):
        if data[i] not in b"\r\n":
            return True
    return False


def split(data: bytes, path: str) -> tuple[list[str], dict[str, int], dict[str, Any]]:
    """(header names, canonical name -> position, canonical name -> cells of every data line)."""
    end = data.find(b"\n")
    head = (data if end < 0 else data[:end]).rstrip(b"\r").decode("utf-8", "replace")
    if head.startswith("\ufeff"):
        head = head[1:]
    names = head.split("|")
    positions = map_header(names, path)
    if end < 0 or not _has_data(data, end + 1):
        return names, positions, {k: pa.array([], pa.string()) for k in positions}
    for unused, instead in (("Elapsed", "ElapsedRaw"), ("Account", "Group")):
        if unused in positions and instead in positions:
            del positions[unused]  # not read: the other column says it
    wanted = sorted(positions.values())
    column_names = [f"c{i}" for i in range(len(names))]
    try:
        parsed = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=column_names, skip_rows=1,
                                           block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter="|", quote_char=False, escape_char=False,
                                             newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in column_names},
                include_columns=[column_names[i] for i in wanted],
                strings_can_be_null=False, quoted_strings_can_be_null=False,
                check_utf8=not data.isascii()))  # ASCII (the usual case) is valid UTF-8
    except pa.ArrowInvalid as exc:
        if "columns" in str(exc) or "Expected" in str(exc):
            raise _field_count_error(data, path, len(names)) from None
        raise InputError(path, f"cannot read as sacct --parsable2 output: {exc}",
                         expected="UTF-8 text with '|'-separated fields") from None
    # kept in chunks: only the job lines' cells are made contiguous (build), not the steps'
    cells = {name: parsed.column(f"c{pos}") for name, pos in positions.items()}
    if pc.any(pc.equal(cells["JobID"], "")).as_py():  # pyarrow reads an empty line as a row
        error = _field_count_error(data, path, len(names))
        if error.line is not None:
            raise error
    return names, positions, cells


# ------------------------------------------------------------------------------ job ids

def _job_lines(cells: dict[str, pa.Array], path: str, headers: dict[str, str]) -> np.ndarray:
    """Row numbers of job lines; checks every JobID and that each step has its job line."""
    ids = cells["JobID"]
    lines = np.arange(len(ids)) + 2
    col = Column(path, headers["JobID"], "job id", ids, lines)
    check_pattern(col, schema_fields()["JobID"].pattern or "",
                  "123, 123_4, 123+0, or a step 123.batch, 123.extern, 123.0")
    is_step = mask(pc.match_substring(ids, "."))
    jobs = np.flatnonzero(~is_step)
    if is_step.any():
        steps = np.flatnonzero(is_step)
        parents = pc.list_element(pc.split_pattern(_take(ids, steps), ".", max_splits=1), 0)
        orphan = ~mask(pc.is_in(parents, value_set=_take(ids, jobs)))
        if orphan.any():
            row = int(steps[first(orphan)])
            raise col.error(row, "is a step of a job with no job line",
                            "each step after the line of its job")
        _fill_from_steps(cells, jobs, steps, parents)
    return jobs


def _fill_from_steps(cells: dict[str, pa.Array], jobs: np.ndarray, steps: np.ndarray,
                     parents: pa.Array) -> None:
    """Where a job line leaves NodeList/NNodes/NCPUS/AllocTRES empty, take its first step's."""
    ids = cells["JobID"]
    for name in _FILLED_FROM_STEPS:
        if name not in cells:
            continue
        column = cells[name]
        empty_jobs = jobs[mask(pc.equal(_take(column, jobs), ""))]
        if not len(empty_jobs):
            continue
        step_values = _take(column, steps)
        has = pa.array(mask(pc.not_equal(step_values, "")))
        found: dict[str, str] = {}
        for parent, value in zip(parents.filter(has).to_pylist(),
                                 step_values.filter(has).to_pylist()):
            found.setdefault(parent, value)
        if not found:
            continue
        values = column.to_pylist()
        for row in empty_jobs.tolist():
            values[row] = found.get(ids[row].as_py(), "")
        cells[name] = pa.array(values, pa.string())


def _job_ids(cells: dict[str, pa.Array], ref: dict[str, Column]) -> pa.Array:
    """The job table's job_id: JobIDRaw when present, else a plain numeric JobID."""
    if "JobIDRaw" in ref:
        return integers(ref["JobIDRaw"], empty_ok=False)
    col = ref["JobID"]
    plain = matches(col.cells, r"^[0-9]{1,18}$")
    if not plain.all():
        raise col.error(first(~plain), "is an array task or heterogeneous component id",
                        "a JobIDRaw column (sacct --format=JobIDRaw,...) giving it a unique "
                        "numeric id")
    return pc.cast(col.cells, pa.int64())


def _check_unique(ids: pa.Array, col: Column) -> None:
    repeat = first_repeat(np.asarray(ids.to_numpy(zero_copy_only=False), dtype=np.int64))
    if repeat is not None:
        row, earlier = repeat
        raise col.error(row, f"repeats the job id of line {int(col.lines[earlier])}",
                        "each job once (sacct without --duplicates)")


# ------------------------------------------------------------------------------ the table

def _states(col: Column, finished_end: pa.Array) -> tuple[pa.Array, pa.Array, np.ndarray, dict]:
    """(termcode, swf_status, finished mask, unfinished counts per state) of the job lines."""
    def parse(text: str) -> tuple[Any, str]:
        name, by_uid = fx.parse_state(text)
        rule = state_rule(name, by_uid)
        if rule is None:
            raise ValueError("a sacct state: " + ", ".join(
                s for s in schema_state_names() if " by " not in s) + " (CANCELLED by UID too)")
        return rule, name

    values, index = by_distinct(col, parse)
    termcode = lookup(values, index, lambda v: v[0].termcode)
    status = lookup(values, index, lambda v: v[0].swf_status)
    finished = np.array([v[0].finished for v in values], dtype=bool)[index]
    requeued = np.array([v[1] == "REQUEUED" for v in values], dtype=bool)[index]
    finished &= ~(requeued & mask(pc.is_null(finished_end)))
    unfinished: dict[str, int] = {}
    names = np.array([v[1] for v in values], dtype=object)[index[~finished]]
    for name in names.tolist():
        unfinished[name] = unfinished.get(name, 0) + 1
    return termcode, status, finished, dict(sorted(unfinished.items()))


def schema_state_names() -> list[str]:
    """Every state the schema's state table names."""
    return list(states())


def _tres(col: Column | None, unit: str) -> dict[str, pa.Array | None]:
    """GPUs, CPUs, nodes and memory (KiB) of a TRES column (null where empty or absent)."""
    if col is None:
        return {"gpu": None, "cpu": None, "node": None, "mem": None}

    def parse(text: str) -> tuple[Any, ...]:
        tres = fx.parse_tres(text)
        mem = fx.memory_kb(tres["mem"]) if "mem" in tres else None
        gpu = fx.tres_count(tres, "gres/gpu")
        if gpu is None and text != "" and unit == "gpu":
            gpu = 0  # a TRES string without GPUs: no GPUs
        return (gpu, fx.tres_count(tres, "cpu"), fx.tres_count(tres, "node"), mem)

    values, index = by_distinct(col, parse)
    return {key: lookup(values, index, lambda v, i=i: v[i])
            for i, key in enumerate(("gpu", "cpu", "node", "mem"))}


def _durations(ref: dict[str, Column]) -> pa.Array | None:
    if "ElapsedRaw" in ref:
        return integers(ref["ElapsedRaw"])
    if "Elapsed" in ref:
        values, index = by_distinct(ref["Elapsed"], fx.parse_duration)
        return lookup(values, index, lambda v: v)
    return None


def _nodes(ref: dict[str, Column], alloc: dict[str, pa.Array | None]) -> pa.Array | None:
    nodes = integers(ref["NNodes"]) if "NNodes" in ref else None
    if "NodeList" in ref:
        col = ref["NodeList"]
        check_pattern(col, HOSTLIST_PATTERN, fx.HOSTLIST_EXPECTED)
        if nodes is None or nodes.null_count:
            values, index = by_distinct(col, fx.count_hosts)
            counted = lookup(values, index, lambda v: v if v else None)
            nodes = counted if nodes is None else pc.coalesce(nodes, counted)
    if alloc["node"] is not None:
        nodes = alloc["node"] if nodes is None else pc.coalesce(nodes, alloc["node"])
    return nodes


def _coalesce(*arrays: pa.Array | None) -> pa.Array | None:
    present = [a for a in arrays if a is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else pc.coalesce(*present)


def _divide(numerator: pa.Array | None, denominator: pa.Array | None) -> pa.Array | None:
    """numerator / denominator where it divides exactly (else null)."""
    if numerator is None or denominator is None:
        return None
    num = np.asarray(pc.fill_null(numerator, -1).to_numpy(), dtype=np.int64)
    den = np.asarray(pc.fill_null(denominator, 0).to_numpy(), dtype=np.int64)
    ok = (num >= 0) & (den > 0)
    safe = np.where(ok, den, 1)
    ok &= num % safe == 0
    return pa.array(num // safe, mask=~ok)


def build(cells: dict[str, pa.Array], headers: dict[str, str], path: str, zone: str,
          rows: np.ndarray) -> tuple[dict[str, Any], np.ndarray, dict, str]:
    """The job-table columns of the finished jobs among the job lines ``rows``: (columns, which
    rows are finished, unfinished counts per state, unit). The State and End of every job line
    are checked; the other cells of unfinished jobs (pending, running) are not read."""
    titles = {n: f.title for n, f in schema_fields().items()}
    lines = rows + 2
    ref = {name: Column(path, headers[name], titles[name], _take(cells[name], rows), lines)
           for name in ("State", "End")}
    end = times(ref["End"], zone, required=False)
    termcode, status, finished, unfinished = _states(ref["State"], end)
    if not finished.all():
        keep = pa.array(finished)
        end, termcode, status = end.filter(keep), termcode.filter(keep), status.filter(keep)
        rows, lines = rows[finished], lines[finished]
    ref = {name: Column(path, headers[name], titles[name], _take(cells[name], rows), lines)
           for name in cells}
    submit = times(ref["Submit"], zone, required=True)
    start = times(ref["Start"], zone, required=False)
    if "Eligible" in ref:
        times(ref["Eligible"], zone, required=False)
    if "ExitCode" in ref:
        check_pattern(ref["ExitCode"], r"^[0-9]+:[0-9]+$", fx.EXITCODE_EXPECTED)
    limit = None
    if "Timelimit" in ref:
        values, index = by_distinct(ref["Timelimit"], fx.parse_timelimit)
        limit = lookup(values, index, lambda v: v)
    elapsed = _durations(ref)
    gpu_tres = any(pc.any(pc.match_substring(ref[n].cells, "gres/gpu")).as_py()
                   for n in ("ReqTRES", "AllocTRES") if n in ref)
    unit = "gpu" if gpu_tres else "processor"
    req = _tres(ref.get("ReqTRES"), unit)
    alloc = _tres(ref.get("AllocTRES"), unit)
    ncpus = integers(ref["NCPUS"]) if "NCPUS" in ref else None
    if unit == "gpu":
        gpus, requested = _coalesce(alloc["gpu"], req["gpu"]), req["gpu"]
    else:
        gpus, requested = _coalesce(ncpus, alloc["cpu"], req["cpu"]), req["cpu"]
    nodes = _nodes(ref, alloc)
    late = mask(pc.less(end, start))
    if late.any():
        row = first(late)
        raise ref["End"].error(row, f"is before the start time {ref['Start'].cells[row].as_py()!r}",
                               "an end time at or after the start time")
    ran = mask(pc.is_valid(start))
    wait = pc.subtract(start, submit)
    columns: dict[str, Any] = {
        "submit_time": submit, "start_time": start, "finish_time": end,
        "wait_s": pc.if_else(pc.greater_equal(wait, 0), wait, pa.scalar(None, pa.int64())),
        "termcode": termcode, "swf_status": status,
    }
    if elapsed is not None:
        columns["walltime_s"] = pc.if_else(pa.array(ran), elapsed, pa.scalar(None, pa.int64()))
    else:
        columns["walltime_s"] = pc.subtract(end, start)
    if limit is not None:
        columns["requested_walltime_s"] = limit
    for source, target in (("User", "user"), ("Partition", "queue")):
        if source in ref:
            columns[target] = _names(ref[source].cells)
    group = ref.get("Group") or ref.get("Account")
    if group is not None:
        columns["group"] = _names(group.cells)
    if nodes is not None:
        columns["nodes"] = nodes
    if gpus is not None:
        columns["gpus"] = gpus
        columns["gpus_per_node"] = _divide(gpus, nodes)
    if requested is not None:
        columns["requested_procs"] = requested
        if req["mem"] is not None:
            columns["requested_memory_kb"] = _divide(req["mem"], requested)
    ids = _job_ids(cells, ref)
    columns["job_id"] = ids
    return columns, finished, unfinished, unit


def _take(cells: Any, rows: np.ndarray) -> pa.Array:
    """The cells of rows ``rows`` (ascending) as one contiguous array (a filter: several times
    faster than a take on a chunked column)."""
    keep = np.zeros(len(cells), dtype=bool)
    keep[rows] = True
    taken = cells.filter(pa.array(keep))
    return taken.combine_chunks() if isinstance(taken, pa.ChunkedArray) else taken


def _names(cells: pa.Array) -> pa.Array:
    """Text cells; empty -> null."""
    return pc.if_else(pc.equal(cells, ""), pa.scalar(None, pa.string()), cells)


def read(path: str | Path, *, site: Site | str | Path | None = None, tz: str | None = None,
         progress: bool = False, allow_empty: bool = False, skip_bad_lines: bool = False,
         **_: Any) -> pa.Table:
    """Read ``sacct --parsable2`` output (plain or gzip) into the job table.

    Local times are read in ``tz``, else the site's time zone, else UTC (the zone is recorded in
    the metadata). Bad input raises ``InputError`` naming the line, field, value and what was
    expected; with ``skip_bad_lines`` such lines are left out and listed in the metadata
    (``skipped_lines``). Output without finished jobs is an error unless ``allow_empty``.
    """
    name = str(path)
    site_obj, zone = time_zone_of(site, tz)
    data = read_bytes(path)
    if skip_bad_lines:
        return read_skipping(lambda d: _read_data(d, name, site_obj, zone, allow_empty), data, name)
    return _read_data(data, name, site_obj, zone, allow_empty)


def _read_data(data: bytes, name: str, site_obj: Site | None, zone: str,
               allow_empty: bool) -> pa.Table:
    names, positions, cells = split(data, name)
    del data
    headers = {canonical: names[pos] for canonical, pos in positions.items()}
    jobs = _job_lines(cells, name, headers) if len(cells["JobID"]) else np.zeros(0, np.int64)
    n_lines = len(cells["JobID"])
    columns, finished, unfinished, unit = build(cells, headers, name, zone, jobs)
    if not allow_empty and not int(finished.sum()):
        raise InputError(name, NO_JOB_ROWS if not len(jobs) else
                         "no finished jobs: every job is pending or running", line=None,
                         expected=NO_JOB_ROWS_EXPECTED)
    ids_col = Column(name, headers.get("JobIDRaw", headers["JobID"]), "job id",
                     _take(cells["JobIDRaw" if "JobIDRaw" in cells else "JobID"], jobs[finished]),
                     jobs[finished] + 2)
    _check_unique(columns["job_id"], ids_col)
    metadata = TableMetadata(
        source_file=Path(name).name, source_format="slurm", converter_version=_version(),
        site=site_obj.name if site_obj else None, time_zone=zone, processor_unit=unit,
        extra={"slurm": {"header": names, "jobs": int(finished.sum()),
                         "steps": int(n_lines - len(jobs)), "unfinished": unfinished}})
    return jt.from_columns(columns, metadata)
