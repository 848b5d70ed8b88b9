"""Read ``sacct --parsable2`` output into the job table.

``layout`` finds the header (or takes ``--columns``), the delimiter and ``--parsable``'s
trailing ``|``; blank lines are left out; job identity follows ``formats.jobids`` and the run
time ``formats.walltime`` (End - Start; Elapsed kept where it differs).

The file is split by a compiled kernel (``kernels``: ``|``, no quoting, line breaks as pyarrow's
CSV reader has them) that copies out only the job lines' cells; job lines and step lines
(``123.batch``, ``123.0``, ``123.extern``) are told apart by their JobID, steps only fill cells
their job line leaves empty (NodeList, NNodes, NCPUS, AllocTRES) and are never jobs.
Jobs still PENDING/RUNNING (and the other unfinished states of the schema's state table) are not
in the table; their count per state is in the metadata under ``slurm.unfinished``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.errors import NO_JOB_ROWS, NO_JOB_ROWS_EXPECTED, InputError
from swftools.formats.inputs import first_repeat, read_bytes
from swftools.formats.jobids import number_jobs
from swftools.formats.localtime import time_zone_of
from swftools.formats.names import NAME_EXPECTED, NAME_MESSAGE, bad_names
from swftools.formats.skipping import collecting, read_skipping, reject_all, reject_rows
from swftools.formats.slurm import fields as fx
from swftools.formats.slurm import kernels
from swftools.formats.slurm.columns import (Column, by_distinct, check_pattern, first, integers,
                                           lookup, mask, matches, times)
from swftools.formats.slurm.layout import END_OF_LINE, RECOMMENDED_COMMAND, Layout, layout, line_spans
from swftools.formats.slurm.schema import fields as schema_fields
from swftools.formats.slurm.schema import state_rule, states
from swftools.formats.walltime import reconcile
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

def _field_count_errors(data: bytes, path: str, lay: Layout) -> list[InputError]:
    """Locate the lines whose field count differs from the header's (the scan only says that
    one does; the first only unless ``--skip-bad-lines`` collects); blank lines are skipped."""
    width = len(lay.names)
    number = lay.first_line
    found: list[InputError] = []
    for start, end, _ in line_spans(data, lay.begin):
        line = data[start:end]
        count = line.count(b"|") + 1
        if line != b"" and count != width:
            shown = width - (lay.names[-1] == END_OF_LINE)
            found.append(InputError(
                path, f"{count} fields, {lay.given} names {shown}"
                + (" and a final '|'" if shown != width else ""), line=number, field="line",
                value=line.decode("utf-8", "replace"),
                expected=f"{width} '|'-separated fields, as {lay.given} has"))
            if not collecting():
                break
        number += 1
    return found or [InputError(path, "cannot split the file into '|'-separated fields",
                                expected="sacct --parsable2 output")]


def _has_data(data: bytes, offset: int) -> bool:
    """Whether anything but line breaks follows ``offset`` (without copying the rest)."""
    for i in range(offset, len(data)):
        if data[i] not in b"\r\n":
            return True
    return False


@dataclass
class Lines:
    """The data lines of a sacct file: the read columns of the job lines (string arrays, chunked
    when the file was scanned in parts), the job lines' file lines, and how many step lines
    there were."""

    cells: dict[str, pa.Array]
    lines: np.ndarray
    steps: int


_THREADED_ROWS = 100_000  # from this many job lines, independent checks run side by side


def _together(rows: int, *steps: Callable[[], Any]) -> list[Any]:
    """The results of ``steps`` (independent column checks and parses; pyarrow and numpy release
    the GIL), side by side in threads for ``rows`` job lines from ``_THREADED_ROWS`` on. The
    error raised is the first step's that fails, in the given order, as if run one by one.
    While ``--skip-bad-lines`` collects, one by one: its errors are noted in check order."""
    if collecting() or rows < _THREADED_ROWS or len(steps) < 2 or kernels.workers() < 2:
        return [step() for step in steps]
    with ThreadPoolExecutor(kernels.workers()) as pool:
        futures = [pool.submit(step) for step in steps]
        return [future.result() for future in futures]  # the first error, in order


def split(lay: Layout, path: str) -> tuple[dict[str, int], Lines]:
    """(read name -> position, the job lines' cells), with every line's field count, every
    JobID and each step's job line checked, blank lines left out, and the cells a job line
    leaves empty filled from its steps (``_FILLED_FROM_STEPS``). A column given twice is read
    twice, as ``NAME#POSITION``."""
    names, data = lay.names, lay.data
    positions = dict(lay.header.positions)
    for name, position in lay.header.repeats:
        positions[f"{name}#{position}"] = position
    if names[-1] == END_OF_LINE:
        positions[END_OF_LINE] = len(names) - 1
    if not _has_data(data, lay.begin):
        return positions, Lines({k: pa.array([], pa.string()) for k in positions},
                                np.zeros(0, np.int64), 0)
    for unused, instead in (("Elapsed", "ElapsedRaw"), ("Account", "Group")):
        if unused in positions and instead in positions:
            for key in [k for k in positions if k.split("#")[0] == unused]:
                del positions[key]  # not read: the other column says it
    order = list(positions)
    want = np.full(len(names), -1, np.int64)
    for k, name in enumerate(order):
        want[positions[name]] = k
    if not data.endswith(b"\n"):
        data += b"\n"  # the scan stops at line breaks only: the last line gets one
    found = kernels.scan(data, lay.begin, len(names), positions["JobID"], want)
    if found.bad_row >= 0:  # no cells to go on with: the lines are reported, the pass ends
        errors = _field_count_errors(data, path, lay)
        reject_all(errors)
        raise errors[0]
    if not data.isascii():
        _check_utf8(data, found, want, names, path)
    cells = dict(zip(order, found.cells))
    job_lines = found.job_row + lay.first_line
    empty = mask(pc.equal(cells["JobID"], ""))
    if empty.any():  # a blank line is a row of empty cells: left out
        starts = found.job_start[empty]
        blank = np.zeros(len(empty), bool)
        blank[empty] = np.isin(np.frombuffer(data, np.uint8)[starts], (10, 13))
        if blank.any():
            keep = pa.array(~blank)
            cells = {k: v.filter(keep) for k, v in cells.items()}
            job_lines = job_lines[~blank]
    if END_OF_LINE in cells:
        extra = ~mask(pc.equal(cells[END_OF_LINE], ""))
        reject_rows(extra, lambda row: InputError(
            path, f"a field after the last column: {cells[END_OF_LINE][row]}",
            line=int(job_lines[row]), field="line", value=cells[END_OF_LINE][row].as_py(),
            expected="lines ending with '|' (sacct --parsable), as the first"))
        del cells[END_OF_LINE]
    headers = {canonical: names[pos] for canonical, pos in positions.items()}
    step_ids = found.step_ids
    step_lines = found.step_row + lay.first_line
    _check_job_ids(cells["JobID"], job_lines, step_ids, step_lines, path, headers)
    if len(found.step_row):
        _check_steps(cells["JobID"], step_ids, found, step_lines, path, headers)
        _fill_from_steps(data, cells, found, step_ids, positions)
    return positions, Lines(cells, job_lines, len(found.step_row))


def _check_utf8(data: bytes, found: kernels.Scan, want: np.ndarray, headers: list[str],
                path: str) -> None:
    """Every read cell (of job and step lines) is UTF-8 text."""
    starts = np.concatenate([found.job_start, found.step_line])
    arrays = kernels.gather(data, starts, want)
    for position in np.flatnonzero(want >= 0).tolist():
        try:
            arrays[want[position]].validate(full=True)
        except pa.ArrowInvalid:
            raise InputError(path, "cannot read as sacct --parsable2 output: invalid UTF-8 in "
                             f"column #{position} ({headers[position]!r})",
                             expected="UTF-8 text with '|'-separated fields") from None


# ------------------------------------------------------------------------------ job ids

_ID_EXPECTED = "123, 123_4, 123+0, or a step 123.batch, 123.extern, 123.0"


def _check_job_ids(job_ids: pa.Array, jobs: np.ndarray, step_ids: pa.Array, steps: np.ndarray,
                   path: str, headers: dict[str, str]) -> None:
    """Every JobID (job and step lines) has the schema's form; the first bad line is reported."""
    pattern = schema_fields()["JobID"].pattern or ""
    half = len(step_ids) // 2  # the steps are most of the lines: two halves side by side
    good_job, good_early, good_late = _together(
        len(job_ids) + len(step_ids), lambda: matches(job_ids, pattern),
        lambda: matches(step_ids.slice(0, half), pattern),
        lambda: matches(step_ids.slice(half), pattern))
    bad_job, bad_step = ~good_job, ~np.concatenate([good_early, good_late])
    if collecting():
        jobs_col = Column(path, headers["JobID"], "job id", job_ids, jobs)
        steps_col = Column(path, headers["JobID"], "job id", step_ids, steps)
        reject_rows(bad_job, lambda row: jobs_col.error(row, "is not valid here", _ID_EXPECTED))
        reject_rows(bad_step, lambda row: steps_col.error(row, "is not valid here", _ID_EXPECTED))
        return
    row_job = int(jobs[first(bad_job)]) if bad_job.any() else None
    row_step = int(steps[first(bad_step)]) if bad_step.any() else None
    if row_job is None and row_step is None:
        return
    if row_step is None or (row_job is not None and row_job < row_step):
        col = Column(path, headers["JobID"], "job id", job_ids, jobs)
        row = first(bad_job)
    else:
        col = Column(path, headers["JobID"], "job id", step_ids, steps)
        row = first(bad_step)
    raise col.error(row, "is not valid here", _ID_EXPECTED)


def _check_steps(job_ids: pa.Array, step_ids: pa.Array, found: kernels.Scan, steps: np.ndarray,
                 path: str, headers: dict[str, str]) -> None:
    """Each step has a job line (the scan saw most follow the line of their job); ``steps``:
    the step lines' file lines."""
    unsure = np.flatnonzero(~found.step_after_job)
    if not len(unsure):
        return
    parents = pc.list_element(pc.split_pattern(_take(step_ids, unsure), ".", max_splits=1), 0)
    if isinstance(job_ids, pa.ChunkedArray):
        job_ids = job_ids.combine_chunks()
    orphan = ~mask(pc.is_in(parents, value_set=job_ids))
    col = Column(path, headers["JobID"], "job id", step_ids, steps)
    reject_rows(orphan, lambda i: col.error(int(unsure[i]), "is a step of a job with no job "
                                            "line", "each step after the line of its job"))


def _fill_from_steps(data: bytes, cells: dict[str, pa.Array], found: kernels.Scan,
                     step_ids: pa.Array, positions: dict[str, int]) -> None:
    """Where a job line leaves NodeList/NNodes/NCPUS/AllocTRES empty, take its first step's."""
    ids = cells["JobID"]
    parents = None
    for name in [k for k in cells if k.split("#")[0] in _FILLED_FROM_STEPS]:
        column = cells[name]
        empty_jobs = np.flatnonzero(mask(pc.equal(column, "")))
        if not len(empty_jobs):
            continue
        if parents is None:
            parents = pc.list_element(pc.split_pattern(step_ids, ".", max_splits=1), 0)
        only = np.where(np.arange(positions[name] + 1) == positions[name], 0, -1)
        step_values = kernels.gather(data, found.step_line, only)[0]
        has = pc.not_equal(step_values, "")
        by_job: dict[str, str] = {}
        for parent, value in zip(parents.filter(has).to_pylist(),
                                 step_values.filter(has).to_pylist()):
            by_job.setdefault(parent, value)
        if not by_job:
            continue
        values = column.to_pylist()
        for row in empty_jobs.tolist():
            values[row] = by_job.get(ids[row].as_py(), "")
        cells[name] = pa.array(values, pa.string())


def _identity(ref: dict[str, Column], submit: pa.Array) -> tuple[pa.Array, pa.Array | None]:
    """(job_id, source_job_id or None): JobIDRaw when every job line has its own; else the
    numeric JobIDs when plain and unique; else the jobs numbered in submit order with JobID
    kept as text (``formats.jobids``: array tasks sharing a JobIDRaw, no JobIDRaw, sacct
    --duplicates)."""
    if "JobIDRaw" in ref:
        raw = integers(ref["JobIDRaw"], empty_ok=False)
        unique = not raw.null_count and first_repeat(  # null: a bad cell --skip-bad-lines noted
            np.asarray(raw.to_numpy(zero_copy_only=False), np.int64)) is None
        if unique:
            return raw, None
    col = ref["JobID"]
    if matches(col.cells, r"^[0-9]{1,18}$").all():
        plain = pc.cast(col.cells, pa.int64())
        if first_repeat(np.asarray(plain.to_numpy(zero_copy_only=False), np.int64)) is None:
            return plain, None
    cells = col.cells.combine_chunks() if isinstance(col.cells, pa.ChunkedArray) else col.cells
    ids, source = number_jobs(cells.to_pylist(), submit.to_pylist())
    return pa.array(ids, pa.int64()), pa.array(source, pa.string())


def _check_repeats(ref: dict[str, Column]) -> None:
    """A column given twice (``NAME#POSITION``, or an alias: NNodes and AllocNodes) holds the
    same cells as its first; the first line where they differ is reported."""
    for key in [k for k in ref if "#" in k]:
        again, once = ref[key], ref[key.split("#")[0]]
        differ = ~mask(pc.equal(again.cells, once.cells))
        reject_rows(differ, lambda row, again=again, once=once: again.error(
            row, f"differs from column {once.header!r} on the same line "
            f"({once.cells[row].as_py()!r})",
            "a column given twice (or under two names) to hold the same value on every line"))


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
    # a state that did not parse (None: --skip-bad-lines collecting) is neither
    finished = np.array([v is not None and v[0].finished for v in values], dtype=bool)[index]
    requeued = np.array([v is not None and v[1] == "REQUEUED" for v in values], dtype=bool)[index]
    finished &= ~(requeued & mask(pc.is_null(finished_end)))
    unfinished: dict[str, int] = {}
    names = np.array([v and v[1] for v in values], dtype=object)[index[~finished]]
    for name in filter(None, names.tolist()):
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


def _gres(col: Column | None) -> pa.Array | None:
    """GPUs of an older sacct GRES column (ReqGRES, AllocGRES); null where empty or absent."""
    if col is None:
        return None
    values, index = by_distinct(col, fx.gres_gpus)
    return lookup(values, index, lambda v: v)


def _has_gpus(ref: dict[str, Column]) -> bool:
    """Whether the file counts GPUs: a gres/gpu TRES or a gpu GRES on some finished job."""
    return any(pc.any(pc.match_substring(ref[n].cells, "gres/gpu")).as_py()
               for n in ("ReqTRES", "AllocTRES") if n in ref) or \
        any(pc.any(pc.match_substring_regex(ref[n].cells, r"(^|,)(gres/)?gpu([:=(,]|$)")).as_py()
            for n in ("ReqGRES", "AllocGRES") if n in ref)


def _durations(ref: dict[str, Column]) -> pa.Array | None:
    if "ElapsedRaw" in ref:
        return integers(ref["ElapsedRaw"])
    if "Elapsed" in ref:
        values, index = by_distinct(ref["Elapsed"], fx.parse_duration)
        return lookup(values, index, lambda v: v)
    return None


def _listed_nodes(ref: dict[str, Column]) -> pa.Array | None:
    """Node counts from NNodes, else counted in NodeList (both checked when present)."""
    nodes = integers(ref["NNodes"]) if "NNodes" in ref else None
    if "NodeList" in ref:
        col = ref["NodeList"]
        check_pattern(col, HOSTLIST_PATTERN, fx.HOSTLIST_EXPECTED)
        if nodes is None or nodes.null_count:
            values, index = by_distinct(col, fx.count_hosts)
            counted = lookup(values, index, lambda v: v if v else None)
            nodes = counted if nodes is None else pc.coalesce(nodes, counted)
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
    num = jt.filled(numerator, -1).astype(np.int64, copy=False)
    den = jt.filled(denominator, 0).astype(np.int64, copy=False)
    ok = (num >= 0) & (den > 0)
    safe = np.where(ok, den, 1)
    ok &= num % safe == 0
    return pa.array(num // safe, mask=~ok)


def build(cells: dict[str, pa.Array], headers: dict[str, str], path: str, zone: str,
          lines: np.ndarray) -> tuple[dict[str, Any], np.ndarray, dict, str, int]:
    """The job-table columns of the finished jobs among the job lines (``cells``, one row per
    job line, on file lines ``lines``): (columns, which rows are finished, unfinished counts per
    state, unit, the largest difference of Elapsed from End - Start). The State and End of every job line are checked; the other cells of
    unfinished jobs (pending, running) are not read."""
    titles = {n: f.title for n, f in schema_fields().items()}
    ref = {name: Column(path, headers[name], titles[name], cells[name], lines)
           for name in ("State", "End")}
    end = times(ref["End"], zone, required=False)
    termcode, status, finished, unfinished = _states(ref["State"], end)
    keep = None
    if not finished.all():
        keep = pa.array(finished)
        end, termcode, status = end.filter(keep), termcode.filter(keep), status.filter(keep)
        lines = lines[finished]
    ref = {name: Column(path, headers[name], titles[name.split("#")[0]],
                        cells[name] if keep is None else cells[name].filter(keep), lines)
           for name in cells}
    _check_repeats(ref)
    unit = "gpu" if _has_gpus(ref) else "processor"

    def limits() -> pa.Array | None:
        if "Timelimit" not in ref:
            return None
        values, index = by_distinct(ref["Timelimit"], fx.parse_timelimit)
        return lookup(values, index, lambda v: v)

    # in the order their errors are reported
    submit, start, _, _, limit, elapsed, req, alloc, ncpus, reqcpus, req_gres, alloc_gres, \
        listed = _together(
            len(lines),
            lambda: times(ref["Submit"], zone, required=True),
            lambda: times(ref["Start"], zone, required=False),
            lambda: times(ref["Eligible"], zone, required=False) if "Eligible" in ref else None,
            lambda: check_pattern(ref["ExitCode"], r"^[0-9]+:[0-9]+$", fx.EXITCODE_EXPECTED)
            if "ExitCode" in ref else None,
            limits,
            lambda: _durations(ref),
            lambda: _tres(ref.get("ReqTRES"), unit),
            lambda: _tres(ref.get("AllocTRES"), unit),
            lambda: integers(ref["NCPUS"]) if "NCPUS" in ref else None,
            lambda: integers(ref["ReqCPUS"]) if "ReqCPUS" in ref else None,
            lambda: _gres(ref.get("ReqGRES")),
            lambda: _gres(ref.get("AllocGRES")),
            lambda: _listed_nodes(ref))
    cpus = _coalesce(ncpus, alloc["cpu"], req["cpu"], reqcpus)
    if unit == "gpu":
        no_gres = None
        if req_gres is not None or alloc_gres is not None:  # an empty GRES cell: no GPUs
            no_gres = pa.array(np.zeros(len(lines), np.int64))
        gpus = _coalesce(alloc["gpu"], alloc_gres, req["gpu"], req_gres, no_gres)
        requested = _coalesce(req["gpu"], req_gres, no_gres)
    else:
        gpus, requested = cpus, _coalesce(req["cpu"], reqcpus)
    nodes = listed
    if alloc["node"] is not None:
        nodes = alloc["node"] if nodes is None else pc.coalesce(nodes, alloc["node"])
    late = mask(pc.less(end, start))
    reject_rows(late, lambda row: ref["End"].error(
        row, f"is before the start time {ref['Start'].cells[row].as_py()!r}",
        "an end time at or after the start time"))
    ran = mask(pc.is_valid(start))
    wait = pc.subtract(start, submit)
    columns: dict[str, Any] = {
        "submit_time": submit, "start_time": start, "finish_time": end,
        "wait_s": pc.if_else(pc.greater_equal(wait, 0), wait, pa.scalar(None, pa.int64())),
        "termcode": termcode, "swf_status": status,
    }
    recorded = None
    if elapsed is not None:  # sacct's Elapsed of a job that never started is 0: not a run time
        recorded = pc.if_else(pa.array(ran), elapsed, pa.scalar(None, pa.int64()))
    columns["walltime_s"], differs, largest = reconcile(start, end, recorded)
    if differs.null_count < len(differs):
        columns["recorded_walltime_s"] = differs
    if limit is not None:
        columns["requested_walltime_s"] = limit
    for source, target in (("User", "user"), ("Partition", "queue")):
        if source in ref:
            columns[target] = _names(ref[source])
    group = ref.get("Group") or ref.get("Account")
    if group is not None:
        columns["group"] = _names(group)
    if nodes is not None:
        columns["nodes"] = nodes
    if gpus is not None:
        columns["gpus"] = gpus
        per_node = _divide(gpus, nodes)
        if per_node is not None:  # no node count (no NNodes, NodeList or node TRES): unknown
            columns["gpus_per_node"] = per_node
    if cpus is not None:
        columns["cpus"] = cpus
    if requested is not None:
        columns["requested_procs"] = requested
        if req["mem"] is not None:
            columns["requested_memory_kb"] = _divide(req["mem"], requested)
    columns["job_id"], source = _identity(ref, submit)
    if source is not None:
        columns["source_job_id"] = source
    return columns, finished, unfinished, unit, largest


def _take(cells: Any, rows: np.ndarray) -> pa.Array:
    """The cells of rows ``rows`` (ascending) as one contiguous array (a filter: several times
    faster than a take on a chunked column)."""
    keep = np.zeros(len(cells), dtype=bool)
    keep[rows] = True
    taken = cells.filter(pa.array(keep))
    return taken.combine_chunks() if isinstance(taken, pa.ChunkedArray) else taken


def _names(col: Column) -> pa.Array:
    """Name cells (no control characters: ``formats.names``); empty -> null."""
    reject_rows(bad_names(col.cells), lambda row: col.error(row, NAME_MESSAGE, NAME_EXPECTED))
    return pc.if_else(pc.equal(col.cells, ""), pa.scalar(None, pa.string()), col.cells)


def read(path: str | Path, *, site: Site | str | Path | None = None, tz: str | None = None,
         progress: bool = False, allow_empty: bool = False, skip_bad_lines: bool = False,
         columns: str | list[str] | None = None, delimiter: str | None = None,
         **_: Any) -> pa.Table:
    """Read sacct output (``--parsable2``, or ``--parsable``; plain or gzip) into the job table.

    The first line is the header, or, for ``sacct --noheader`` dumps, ``columns`` names the
    fields (sacct's ``--format`` list; a header that is there anyway must match it).
    ``delimiter``: what ``sacct --delimiter`` was given, when not ``|``. Local times are read in
    ``tz``, else the site's time zone, else UTC (the zone is recorded in the metadata). Bad
    input raises ``InputError`` naming the line, field, value and what was expected; with
    ``skip_bad_lines`` such lines are left out and listed in the metadata (``skipped_lines``).
    Output without finished jobs (an empty file too) is an error unless ``allow_empty``.
    """
    name = str(path)
    site_obj, zone = time_zone_of(site, tz, source=path)
    data = read_bytes(path)

    def read_data(d: bytes) -> pa.Table:
        return _read_data(d, name, site_obj, zone, allow_empty, columns, delimiter)

    if skip_bad_lines:
        return read_skipping(read_data, data, name)
    return read_data(data)


def _empty(name: str, site_obj: Site | None, zone: str, allow_empty: bool) -> pa.Table:
    if not allow_empty:
        raise InputError(name, "the file is empty", expected="sacct output, such as that of "
                         + RECOMMENDED_COMMAND + " (or --allow-empty)")
    return jt.from_columns({}, _metadata(name, site_obj, zone, "processor", {"header": []}))


def _metadata(name: str, site_obj: Site | None, zone: str, unit: str, slurm: dict) -> TableMetadata:
    return TableMetadata(
        source_file=Path(name).name, source_format="slurm", converter_version=_version(),
        site=site_obj.name if site_obj else None, time_zone=zone, processor_unit=unit,
        unfinished_jobs=sum(slurm.get("unfinished", {}).values()), extra={"slurm": slurm})


def _read_data(data: bytes, name: str, site_obj: Site | None, zone: str, allow_empty: bool,
               columns: str | list[str] | None, delimiter: str | None) -> pa.Table:
    lay = layout(data, name, columns, delimiter)
    del data
    if lay is None:
        return _empty(name, site_obj, zone, allow_empty)
    positions, found = split(lay, name)
    headers = {canonical: lay.names[pos] for canonical, pos in positions.items()}
    table, finished, unfinished, unit, largest = build(found.cells, headers, name, zone,
                                                       found.lines)
    if not allow_empty and not int(finished.sum()):
        raise InputError(name, NO_JOB_ROWS if not len(found.lines) else
                         "no finished jobs: every job is pending or running", line=None,
                         expected=NO_JOB_ROWS_EXPECTED)
    names = [n for n in lay.names if n != END_OF_LINE]
    return jt.from_columns(table, _metadata(name, site_obj, zone, unit, {
        "header": names, "columns_from": "header" if lay.header_line else "--columns",
        "jobs": int(finished.sum()), "steps": found.steps, "unfinished": unfinished,
        "walltime_largest_difference_s": largest}))
