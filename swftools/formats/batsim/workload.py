"""Batsim JSON workloads: the job table to ``nb_res`` + jobs + delay profiles, and back.

Written for the loader of oar-team/batsim, Batsim v4.x: ``src/workload.cpp``
(``Workload::load_from_json``: ``nb_res`` a positive int), ``src/jobs.cpp`` (``Job::from_json``
at commit 01e21333: ``id`` a string or an int, taken as ``<workload>!<id>`` when it does not
contain the workload name, so plain decimal ids are safe; ``subtime`` a number; ``walltime``
optional, -1 or > 0; ``res`` an int >= 0; ``profile`` an existing profile name; duplicate ids
refused) and ``src/profiles.cpp`` (a ``delay`` profile needs ``delay`` > 0). Other members are
kept by Batsim and ignored, so swftools adds one object, ``swftools``, with what the round trip
needs (the epoch second subtime 0 stands for, the unit ``res`` counts).

Jobs are written in submit order, ties in the table's row order (``swftools.formats.order``).
Mapping: ``id`` = job_id (as a string), ``subtime`` = submit_time - origin (origin: the first
submit written), ``walltime`` = requested_walltime_s (-1 when unknown or 0), ``res`` = gpus (GPUs
for a GPU site, processors for an SWF trace), ``profile`` = a ``delay`` profile of the recorded
run time (walltime_s), one profile per distinct run time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.atomic import atomic_file, check_writable
from swftools.errors import InputError, UsageError, count
from swftools.metadata import TableMetadata
from swftools.site import resolve_site
from swftools.formats.inputs import read_text
from swftools.formats.order import in_submit_order
from swftools.formats.batsim.schema import SCHEMA_FILE, first_error
from swftools.formats.batsim.platform import platform_path, platform_xml

CARRIES = frozenset({"job_id", "submit_time", "walltime_s", "requested_walltime_s", "gpus"})

# Why each column Batsim cannot carry is dropped (the loss report names every one that held data).
_DROPPED = (
    (("start_time", "finish_time", "wait_s"),
     "the recorded schedule is dropped: a Batsim workload holds requests, "
     "Batsim simulates the rest"),
    (("termcode", "swf_status"),
     "the recorded outcome is dropped: delay jobs always complete in Batsim"),
    (("nodes", "gpus_per_node"), "the job shape is dropped: res holds the total only"),
    (("user", "group", "queue", "partition", "executable"),
     "who and where is dropped: a Batsim job has no such field"),
    (("requested_procs", "avg_cpu_time_s", "used_memory_kb", "requested_memory_kb",
      "preceding_job_id", "think_time_s"),
     "SWF-only fields are dropped: a Batsim job has no such field"),
    (("cpus",), "processors beside GPUs are dropped: res counts one kind of resource"),
    (("recorded_walltime_s",), "the log's own run time is dropped: walltime is finish - start"),
)


def _nb_res(table: pa.Table, site: Any, nb_res: int | None) -> tuple[int | None, str]:
    """The machine size and where it came from: ``nb_res``, the site, the workload the table was
    read from, the SWF header MaxProcs (else None: the widest job written)."""
    if nb_res is not None:
        if int(nb_res) < 1:
            raise UsageError(f"nb_res must be a positive number of resources, not {nb_res}")
        return int(nb_res), "the nb_res option"
    site_obj = resolve_site(site, table)
    if site_obj is not None:
        return site_obj.max_gpus, f"site {site_obj.name}"
    earlier = (jt.get_metadata(table).get("batsim") or {}).get("nb_res")
    if isinstance(earlier, int) and earlier > 0:
        return earlier, "the Batsim workload read"
    for key, value in TableMetadata.from_table(table).swf_header or []:
        if key == "MaxProcs" and value.strip().isdigit() and int(value) > 0:
            return int(value), "SWF header MaxProcs"
    return None, "the widest job"


def render(table: pa.Table, *, site: Any = None,
           nb_res: int | None = None) -> tuple[str, str, list[str]]:
    """The workload JSON text, the platform XML and the loss report of ``table``."""
    meta = TableMetadata.from_table(table)
    n_res, origin_of_size = _nb_res(table, site, nb_res)
    keep, skipped = _select(table, n_res)
    kept = table.select(list(CARRIES)).take(keep)
    if n_res is None:
        n_res = max(pc.max(kept.column("gpus")).as_py() or 1, 1)
    kept = in_submit_order(kept)
    origin = pc.min(kept.column("submit_time")).as_py() or 0
    unit = meta.unit
    losses = _skip_lines(skipped, n_res, meta.unit_word, origin_of_size)
    zero_limit = pc.sum(pc.equal(kept.column("requested_walltime_s"), 0)).as_py() or 0
    if zero_limit:
        losses.append(f"requested_walltime_s: {count(zero_limit, 'job')} with a 0 s limit, "
                      "written as walltime -1 (no limit): Batsim wants -1 or more than 0")
    for names, why in _DROPPED:
        held = [c for c in names if pc.any(pc.is_valid(table.column(c)).take(keep)).as_py()]
        if held:
            losses.append(f"{', '.join(held)}: {why}")
    extra = {"time_origin_s": origin, "processor_unit": unit}
    if meta.site:
        extra["site"] = meta.site
    if meta.time_zone:
        extra["time_zone"] = meta.time_zone
    lines = ["{",
             f'  "description": {json.dumps(_description(unit))},',
             f'  "nb_res": {n_res},',
             f'  "swftools": {json.dumps(extra, sort_keys=True)},',
             '  "jobs": [']
    lines.append(",\n".join(_job_lines(kept, origin)))
    lines += ["  ],", '  "profiles": {']
    runs = pc.unique(kept.column("walltime_s")).to_pylist()
    lines.append(",\n".join(f'    "delay_{r}": {{"type": "delay", "delay": {r}}}'
                            for r in sorted(runs)))  # json.dumps' layout, integer run times
    lines += ["  }", "}", ""]
    text = "\n".join(line for line in lines if line)
    return text + "\n", platform_xml(n_res), losses


def _select(table: pa.Table, n_res: int | None) -> tuple[pa.Array, dict[str, int]]:
    """Rows Batsim can take (indices, in table order) and the count skipped for each reason
    (the first reason that applies, in the order of ``_skip_lines``)."""
    import numpy as np

    col = table.column
    run, res = col("walltime_s"), col("gpus")
    tests = {"submit": pc.is_null(col("submit_time")), "run": pc.is_null(run),
             "zero": pc.less_equal(run, 0),
             "res": pc.or_kleene(pc.is_null(res), pc.less_equal(res, 0)),
             "wide": pc.greater(res, n_res) if n_res is not None else pa.scalar(False)}
    left = np.ones(table.num_rows, dtype=bool)
    skipped = {}
    for reason, test in tests.items():
        hit = left & pc.fill_null(test, False).to_numpy(zero_copy_only=False) \
            if not isinstance(test, pa.Scalar) else np.zeros_like(left)
        skipped[reason] = int(hit.sum())
        left &= ~hit
    idx = np.flatnonzero(left)
    ids = col("job_id").to_numpy()[idx]
    _, first = np.unique(ids, return_index=True)  # a repeated id: its first row is written
    skipped["dup"] = len(idx) - len(first)
    return pa.array(np.sort(idx[first]), pa.int64()), skipped


def _job_lines(kept: pa.Table, origin: int) -> list[str]:
    """One ``json.dumps``-formatted job object per row (vectorized: same bytes, faster)."""
    def text(arr: Any) -> pa.Array:
        return pc.cast(arr, pa.string())

    limit = kept.column("requested_walltime_s")
    wall = pc.if_else(pc.fill_null(pc.greater(limit, 0), False), limit, -1)
    parts = ['    {"id": "', text(kept.column("job_id")), '", "subtime": ',
             text(pc.subtract(kept.column("submit_time"), origin)), ', "walltime": ', text(wall),
             ', "res": ', text(kept.column("gpus")), ', "profile": "delay_',
             text(kept.column("walltime_s")), '"}']
    return pc.binary_join_element_wise(*parts, "").to_pylist()


def _description(unit: str) -> str:
    return (f"written by swftools; res counts {'GPUs' if unit == 'gpu' else 'processors'}; "
            "delay profiles replay the recorded run times")


def _skip_lines(skipped: dict[str, int], n_res: int, unit_word: str,
                origin_of_size: str) -> list[str]:
    why = {"submit": "submit_time unknown",
           "run": "never ran (walltime_s unknown): a delay profile needs the run time",
           "zero": "run time 0 s: Batsim delay profiles must last more than 0 s",
           "res": f"requesting no {unit_word} or an unknown number (gpus)",
           "wide": f"requesting more than nb_res = {n_res} {unit_word} (from {origin_of_size})",
           "dup": "repeating a job_id already written (Batsim refuses duplicate ids)"}
    return [f"{count(n, 'job')} skipped: {why[k]}" for k, n in skipped.items() if n]


def write(table: pa.Table, path: str | Path, *, force: bool = False, site: Any = None,
          platform: str | Path | None = None, nb_res: int | None = None,
          **_options: Any) -> list[str]:
    """Write ``table`` as a Batsim workload at ``path`` and its platform beside it
    (``<stem>.platform.xml`` unless ``platform``); returns the loss report. Both files are
    written atomically, and neither is written when either exists without ``force``."""
    target = Path(path)
    plat = Path(platform) if platform is not None else platform_path(target)
    if plat.resolve() == target.resolve():
        raise UsageError(f"{plat}: the platform file cannot be the workload file")
    check_writable(target, force)
    check_writable(plat, force)
    text, xml, losses = render(table, site=site, nb_res=nb_res)
    with atomic_file(plat, force) as tmp_plat, atomic_file(target, force) as tmp:
        tmp.write_bytes(text.encode("utf-8"))
        tmp_plat.write_bytes(xml.encode("utf-8"))
    return losses


# --- reading ---------------------------------------------------------------------------------

def _job_line_numbers(text: str) -> list[int]:
    """1-based line of each job object (the line of each ``"subtime"`` member, in order)."""
    return [n for n, line in enumerate(text.splitlines(), 1) if '"subtime"' in line]


def read(path: str | Path, *, allow_empty: bool = False, **_options: Any) -> pa.Table:
    """Read a Batsim workload into the job table (what Batsim carries; see the module doc)."""
    name = str(path)
    text = read_text(path)

    def no_constant(word: str) -> None:
        line = next((n for n, t in enumerate(text.splitlines(), 1) if word in t), None)
        raise InputError(name, f"{word} is not a JSON number", line=line, value=word,
                         expected="finite numbers (JSON has no NaN or Infinity)")

    try:
        doc = json.loads(text, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise InputError(name, f"not JSON: {exc.msg}", line=exc.lineno,
                         expected="a Batsim JSON workload") from None
    lines = _job_line_numbers(text)
    err = first_error(doc)
    if err is not None:
        where = list(err.path)
        line = lines[where[1]] if len(where) > 1 and where[0] == "jobs" and \
            isinstance(where[1], int) and where[1] < len(lines) else None
        raise InputError(name, err.message, line=line, field="/".join(map(str, where)) or None,
                         value=json.dumps(err.instance)[:80],
                         expected=f"a Batsim workload (schemas/{SCHEMA_FILE})")
    extra = doc.get("swftools", {})
    origin = int(extra.get("time_origin_s", 0))
    profiles = doc["profiles"]
    out: dict[str, list] = {c: [] for c in ("job_id", "submit_time", "walltime_s",
                                            "requested_walltime_s", "gpus")}
    seen: set[int] = set()
    for k, job in enumerate(doc["jobs"]):
        line = lines[k] if k < len(lines) else None
        job_name = str(job["id"]).split("!")[-1]
        if not (job_name.isascii() and job_name.isdigit() and len(job_name) <= 18):
            raise InputError(name, "job id is not a whole number", line=line,
                             field=f"jobs/{k}/id", value=str(job["id"]),
                             expected="a decimal job number, plain or as 'workload!number'")
        prof = profiles.get(job["profile"])
        if prof is None:
            raise InputError(name, "the job's profile is not in profiles", line=line,
                             field=f"jobs/{k}/profile", value=job["profile"],
                             expected="a profile name defined under profiles")
        if int(job_name) in seen:
            raise InputError(name, "job id repeated (Batsim refuses duplicate ids)", line=line,
                             field=f"jobs/{k}/id", value=str(job["id"]),
                             expected="each job id once")
        seen.add(int(job_name))
        wall = job.get("walltime", -1)
        out["job_id"].append(int(job_name))
        out["submit_time"].append(origin + round(job["subtime"]))
        out["requested_walltime_s"].append(None if wall == -1 else round(wall))
        out["gpus"].append(int(job["res"]))
        out["walltime_s"].append(round(prof["delay"]) if prof["type"] == "delay" else None)
    if not out["job_id"] and not allow_empty:
        raise InputError(name, "no job rows: the workload's jobs array is empty",
                         field="jobs", expected="at least one job, or --allow-empty")
    meta: dict[str, Any] = {"source_format": "batsim", "source_file": Path(path).name}
    if "processor_unit" in extra:
        meta["processor_unit"] = extra["processor_unit"]
    for key in ("site", "time_zone"):
        if key in extra:
            meta[key] = extra[key]
    meta["batsim"] = {"nb_res": doc["nb_res"]}
    table = jt.from_columns(out, meta)
    order = pc.sort_indices(table, sort_keys=[("submit_time", "ascending"),
                                              ("job_id", "ascending")])
    return table.take(order)
