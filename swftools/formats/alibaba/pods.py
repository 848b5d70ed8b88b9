"""The pod list: CSV text <-> ``Pods`` (typed columns) <-> job-table columns.

``parse_pods`` checks every cell (``InputError`` with file, line, column, value and what was
expected); ``to_columns`` is the one mapping from pods to the job table, used by the reader and by
the writer's loss report (what a read of the written file gives back).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from typing import Any

from swftools.errors import NO_JOB_ROWS, NO_JOB_ROWS_EXPECTED, InputError
from swftools.formats.alibaba.schema import phase_codes, phases, pod_columns, pod_forms
from swftools.formats.walltime import reconcile
from swftools.formats.names import check_name

_INT = re.compile(r"[0-9]+(\.0*)?")  # pandas writes 12000.0 in a column that has gaps
_NAME = re.compile(r"^(.*?)([0-9]+)$")


@dataclass
class Pods:
    """Pod rows as columns (``None``: empty cell)."""

    job_id: list[int] = field(default_factory=list)
    name: list[str] = field(default_factory=list)
    cpu_milli: list[int] = field(default_factory=list)
    memory_mib: list[int] = field(default_factory=list)
    num_gpu: list[int] = field(default_factory=list)
    gpu_milli: list[int] = field(default_factory=list)
    gpu_spec: list[str] = field(default_factory=list)
    qos: list[str | None] = field(default_factory=list)
    pod_phase: list[str | None] = field(default_factory=list)
    creation_time: list[int | None] = field(default_factory=list)
    deletion_time: list[int | None] = field(default_factory=list)
    scheduled_time: list[int | None] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.job_id)


def split_csv(text: str, path: str, columns: tuple[str, ...], what: str,
              allow_empty: bool = True, other_forms: tuple[tuple[str, ...], ...] = (),
              ) -> tuple[dict[str, int], list[tuple[int, list[str]]]]:
    """(column -> index, [(line, cells)]) of a CSV with exactly ``columns`` in its header (or
    exactly one of ``other_forms``)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(path, f"empty file: no {what} header", line=1,
                         expected=",".join(columns)) from None
    header = [h.strip() for h in header]
    if header and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    index = {h: i for i, h in enumerate(header)}
    for form in other_forms:
        if set(header) == set(form) and len(index) == len(header):
            columns = form
    missing = [c for c in columns if c not in index]
    extra = [h for h in header if h not in columns]
    if missing or extra or len(index) != len(header):
        bad = missing[0] if missing else (extra[0] if extra else "duplicate column")
        raise InputError(path, f"the header is not the {what} header "
                         f"({'no column ' + repr(bad) if missing else 'unexpected ' + repr(bad)})",
                         line=1, field="header", value=",".join(header),
                         expected="the columns " + ",".join(columns) + " (any order)"
                         + "".join(f", or the {len(f)} columns " + ",".join(f)
                                   for f in other_forms))
    rows = []
    try:
        for cells in reader:
            line = reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if len(cells) != len(header):
                raise InputError(path, f"{len(cells)} fields, the header has {len(header)}",
                                 line=line, value=",".join(cells),
                                 expected=f"{len(header)} comma-separated fields")
            rows.append((line, cells))
    except csv.Error as exc:
        raise InputError(path, f"malformed CSV ({exc})", line=reader.line_num,
                         expected="comma-separated fields, quotes balanced") from None
    if not rows and not allow_empty:
        if what == "pod list":
            raise InputError(path, NO_JOB_ROWS, line=1, expected=NO_JOB_ROWS_EXPECTED)
        raise InputError(path, f"no rows: the {what} holds only a header", line=1,
                         expected=f"one row per line after the header of the {what}")
    return index, rows


def integer(text: str, path: str, line: int, column: str, optional: bool = False,
            maximum: int | None = None) -> int | None:
    """A non-negative integer cell (``None`` for an empty optional one)."""
    text = text.strip()
    if not text and optional:
        return None
    if not _INT.fullmatch(text):
        raise InputError(path, f"{text!r} is not a non-negative integer", line=line, field=column,
                         value=text, expected="a non-negative integer"
                         + (", or empty" if optional else ""))
    value = int(text.split(".")[0])
    if maximum is not None and value > maximum:
        raise InputError(path, f"{value} is above {maximum}", line=line, field=column, value=text,
                         expected=f"an integer 0..{maximum}")
    return value


def parse_pods(text: str, path: str, allow_empty: bool = False) -> Pods:
    """Check and type every cell of a pod list (see the schema file for the rules)."""
    full, *short = pod_forms()
    index, rows = split_csv(text, path, full, "pod list", allow_empty, tuple(short))
    known_phases = phases()
    pods = Pods()
    seen: dict[int, int] = {}
    for line, cells in rows:
        def cell(column: str) -> str:
            return cells[index[column]] if column in index else ""

        name = check_name(cell("name").strip(), path, line, "name")
        m = _NAME.match(name)
        if not m:
            raise InputError(path, f"pod name {name!r} does not end in a number", line=line,
                             field="name", value=name,
                             expected="a name ending in the pod number, e.g. openb-pod-0017")
        job_id = int(m.group(2))
        if job_id in seen:
            raise InputError(path, f"pod number {job_id} repeats line {seen[job_id]}", line=line,
                             field="name", value=name, expected="pod numbers unique in the file")
        seen[job_id] = line
        num_gpu = integer(cell("num_gpu"), path, line, "num_gpu")
        gpu_milli = integer(cell("gpu_milli"), path, line, "gpu_milli", maximum=1000)
        if (num_gpu == 0 and gpu_milli != 0) or (num_gpu == 1 and gpu_milli == 0) or \
                (num_gpu > 1 and gpu_milli != 1000):
            want = "0" if num_gpu == 0 else ("1..1000" if num_gpu == 1 else "1000")
            raise InputError(path, f"gpu_milli {gpu_milli} with num_gpu {num_gpu}", line=line,
                             field="gpu_milli", value=cell("gpu_milli"),
                             expected=f"{want} when num_gpu is {num_gpu} (only a one-GPU pod "
                                      "shares its GPU)")
        phase = cell("pod_phase").strip() if "pod_phase" in index else None  # five columns
        if phase is not None and phase not in known_phases:
            raise InputError(path, f"unknown pod phase {phase!r}", line=line, field="pod_phase",
                             value=phase, expected="one of " + ", ".join(known_phases))
        created = integer(cell("creation_time"), path, line, "creation_time", optional=True)
        deleted = integer(cell("deletion_time"), path, line, "deletion_time", optional=True)
        scheduled = integer(cell("scheduled_time"), path, line, "scheduled_time", optional=True)
        for later, lcol, earlier, ecol in ((scheduled, "scheduled_time", created, "creation_time"),
                                           (deleted, "deletion_time", created, "creation_time"),
                                           (deleted, "deletion_time", scheduled, "scheduled_time")):
            if later is not None and earlier is not None and later < earlier:
                raise InputError(path, f"{lcol} {later} is before {ecol} {earlier}", line=line,
                                 field=lcol, value=cell(lcol), expected=f">= {ecol} ({earlier})")
        spec_text = cell("gpu_spec").strip()
        pods.job_id.append(job_id)
        pods.name.append(name)
        pods.cpu_milli.append(integer(cell("cpu_milli"), path, line, "cpu_milli"))
        pods.memory_mib.append(integer(cell("memory_mib"), path, line, "memory_mib"))
        pods.num_gpu.append(num_gpu)
        pods.gpu_milli.append(gpu_milli)
        pods.gpu_spec.append(spec_text)
        pods.qos.append(check_name(cell("qos").strip(), path, line, "qos") or None)
        pods.pod_phase.append(phase)
        pods.creation_time.append(created)
        pods.deletion_time.append(deleted)
        pods.scheduled_time.append(scheduled)
    return pods


def _plus(values: list[int | None], origin: int) -> list[int | None]:
    return [None if v is None else v + origin for v in values]


def _minus(a: list[int | None], b: list[int | None]) -> list[int | None]:
    return [None if x is None or y is None else x - y for x, y in zip(a, b)]


def to_columns(pods: Pods, origin: int) -> dict[str, list[Any]]:
    """The job-table columns of ``pods`` (relative times + ``origin`` = epoch seconds).

    A pod runs on one node: nodes 1, gpus = gpus_per_node = requested_procs = num_gpu (a sharing
    pod holds part of one GPU: its gpu_milli is metadata); cpus is cpu_milli rounded up to whole
    CPUs (the exact figure is metadata). start is scheduled_time, finish deletion_time; wait and
    walltime follow from them (``walltime.reconcile``: the pod list records no run time of its
    own); termcode and SWF status from the phase (unknown without one).
    """
    codes = phase_codes()
    n = len(pods)
    submit = _plus(pods.creation_time, origin)
    start = _plus(pods.scheduled_time, origin)
    finish = _plus(pods.deletion_time, origin)
    walltime, _, _ = reconcile(start, finish)
    no_phase = (None, None)
    return {
        "job_id": list(pods.job_id),
        "queue": list(pods.qos),
        "nodes": [1] * n,
        "gpus_per_node": list(pods.num_gpu),
        "gpus": list(pods.num_gpu),
        "cpus": [-(-m // 1000) for m in pods.cpu_milli],
        "requested_procs": list(pods.num_gpu),
        "termcode": [codes.get(p, no_phase)[0] for p in pods.pod_phase],
        "swf_status": [codes.get(p, no_phase)[1] for p in pods.pod_phase],
        "submit_time": submit,
        "start_time": start,
        "finish_time": finish,
        "wait_s": _minus(start, submit),
        "walltime_s": walltime,
    }


def name_format(pods: Pods) -> dict[str, Any]:
    """How names derive from numbers: ``{prefix, width, other: {number: name}}``."""
    if not len(pods):
        return {"prefix": "openb-pod-", "width": 4, "other": {}}
    m = _NAME.match(pods.name[0])
    prefix, width = m.group(1), len(m.group(2))
    other = {str(i): name for i, name in zip(pods.job_id, pods.name)
             if name != f"{prefix}{i:0{width}d}"}
    return {"prefix": prefix, "width": width, "other": other}


def render(pods: Pods) -> str:
    """The pod list as CSV text (published column order, ``\\n`` line ends)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = pod_columns()
    writer.writerow(columns)
    for i in range(len(pods)):
        row = []
        for c in columns:
            v = getattr(pods, c)[i]
            row.append("" if v is None else str(v))
        writer.writerow(row)
    return out.getvalue()
