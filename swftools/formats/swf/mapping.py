"""Mapping the job table onto SWF's 18 fields: values, generated header, and the loss report."""

from __future__ import annotations

from collections.abc import Iterator

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools import __version__
from swftools import table as jt
from swftools.metadata import TableMetadata
from swftools.site import Site, resolve_site
from swftools.formats.swf.fields import FIELDS, SwfField

# swf.md §8: termcode 0->1, 1->0, 2 (walltime exceeded)->0, 3 and 4 (cancelled)->5.
DEFAULT_STATUS = {0: 1, 1: 0, 2: 0, 3: 5, 4: 5}


def _is_swf(table: pa.Table) -> bool:
    return TableMetadata.from_table(table).source_format == "swf"


def time_origin(table: pa.Table) -> int:
    """Epoch second that SWF field 2 counts from (header UnixStartTime, else the first submit)."""
    meta = jt.get_metadata(table)
    if "swf_time_origin" in meta:
        return int(meta["swf_time_origin"] or 0)
    first = pc.min(table.column("submit_time")).as_py()
    return int(first) if first is not None else 0


def _as_ids(col: pa.ChunkedArray) -> pa.Array | None:
    """The column as integer ids when every value is written exactly as a non-negative decimal
    number ('7', not '007', '+7' or '-7'); else None (names, to be numbered)."""
    try:
        ids = pc.cast(col, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if col.null_count == len(col):
        return ids
    same_text = pc.equal(pc.cast(ids, pa.string()), col)
    if pc.min(ids).as_py() < 0 or not pc.all(same_text).as_py():
        return None
    return ids


_UNKNOWN: Any = object()  # "not computed yet" for the ``ids`` arguments below
ID_COLUMNS = ("user", "group", "queue")


def id_columns(table: pa.Table) -> dict[str, pa.Array | None]:
    """``_as_ids`` of the user, group and queue columns: one parse per write, shared by the
    loss report and the values (each costs three whole-column casts)."""
    return {name: _as_ids(table.column(name)) for name in ID_COLUMNS}


def _numeric_ids(col: pa.ChunkedArray, ids: Any = _UNKNOWN) -> bool:
    return (_as_ids(col) if ids is _UNKNOWN else ids) is not None


def dense_ids(col: pa.ChunkedArray, ids: Any = _UNKNOWN) -> pa.Array:
    """Numbers 1..N by first appearance (null stays null); numeric ids are kept as they are.
    ``ids``: ``_as_ids(col)`` when already known."""
    ids = _as_ids(col) if ids is _UNKNOWN else ids
    if ids is not None:
        return ids
    distinct = pc.unique(col.drop_null())
    return pc.add(pc.cast(pc.index_in(col, value_set=distinct), pa.int64()), jt.scalar(1))


def queue_numbers(col: pa.ChunkedArray, site: Site | None, ids: Any = _UNKNOWN) -> pa.Array:
    """SWF queue numbers: numeric queues kept, site queue names by the site's numbering.
    ``ids``: ``_as_ids(col)`` when already known."""
    ids = _as_ids(col) if ids is _UNKNOWN else ids
    if ids is not None or site is None:
        return dense_ids(col, ids)
    names = [q.name.lower() for q in site.queues]
    numbers = jt.from_numpy(np.array([q.number for q in site.queues], dtype=np.int64))
    idx = pc.index_in(pc.utf8_lower(col), value_set=jt.strings(names))
    known = pc.take(numbers, idx)
    if known.null_count == col.null_count:
        return known
    # names the site does not know: number them after the site's queues, by first appearance
    unknown = pc.if_else(pc.is_null(idx), col, pa.nulls(1, pa.string())[0])
    extra = pc.add(dense_ids(unknown), jt.scalar(max(q.number for q in site.queues)))
    return pc.coalesce(known, extra)


def _status(table: pa.Table, site: Site | None) -> pa.Array:
    status = table.column("swf_status")
    mapping = site.termcode_to_swf_status if site and site.termcode_to_swf_status else DEFAULT_STATUS
    codes = sorted(mapping)
    mapped = pc.take(jt.from_numpy(np.array([mapping[c] for c in codes], dtype=np.int64)),
                     pc.index_in(table.column("termcode"),
                                 value_set=jt.from_numpy(np.array(codes, dtype=np.int64))))
    return pc.coalesce(status, mapped)


def swf_field_values(table: pa.Table, site: Any = None) -> list[pa.Array]:
    """The 18 SWF columns of ``table`` (int64, field 6 float64) with -1 for unknown."""
    return next(iter_field_values(table, site, max(table.num_rows, 1)))


def iter_field_values(table: pa.Table, site: Any = None, rows_per_slice: int = 1 << 18, *,
                      ids: dict[str, pa.Array | None] | None = None) -> Iterator[list[pa.Array]]:
    """``swf_field_values`` of consecutive row slices of ``table`` (at least one, empty for an
    empty table): what needs whole columns (first-appearance numbering, the time origin) is
    computed once, the casts and -1 fills slice by slice (memory on large tables). ``ids``:
    ``id_columns(table)`` when already known."""
    site = resolve_site(site, table)
    ids = id_columns(table) if ids is None else ids
    col = table.column
    origin = time_origin(table)
    derived = not _is_swf(table)
    values: dict[SwfField, Any] = {
        SwfField.JOB_ID: col("job_id"),
        SwfField.SUBMIT_TIME: pc.subtract(col("submit_time"), jt.scalar(origin)),
        SwfField.WAIT_TIME: pc.coalesce(col("wait_s"), pc.subtract(col("start_time"), col("submit_time"))),
        SwfField.RUN_TIME: pc.coalesce(col("walltime_s"), pc.subtract(col("finish_time"), col("start_time"))),
        SwfField.ALLOCATED_PROCESSOR_COUNT: col("gpus"),
        SwfField.AVERAGE_CPU_TIME_USED: col("avg_cpu_time_s"),
        SwfField.USED_MEMORY: col("used_memory_kb"),
        SwfField.REQUESTED_NUMBER_OF_PROCESSORS:
            pc.coalesce(col("requested_procs"), col("gpus")) if derived else col("requested_procs"),
        SwfField.REQUESTED_TIME: col("requested_walltime_s"),
        SwfField.REQUESTED_MEMORY: col("requested_memory_kb"),
        SwfField.STATUS: _status(table, site),
        SwfField.USER_ID: dense_ids(col("user"), ids["user"]),
        SwfField.GROUP_ID: dense_ids(col("group"), ids["group"]),
        SwfField.EXECUTABLE_ID: col("executable"),
        SwfField.QUEUE_ID: queue_numbers(col("queue"), site, ids["queue"]),
        SwfField.PARTITION_ID:
            pc.coalesce(col("partition"), jt.scalar(1)) if derived and site else col("partition"),
        SwfField.PRECEDING_JOB_ID: col("preceding_job_id"),
        SwfField.THINK_TIME_FROM_PRECEDING_JOB: col("think_time_s"),
    }
    for field in FIELDS:
        if isinstance(values[field], pa.ChunkedArray):
            values[field] = values[field].combine_chunks()
    n_rows = table.num_rows
    for begin in range(0, max(n_rows, 1), rows_per_slice):
        count = min(rows_per_slice, n_rows - begin)
        out = []
        for field in FIELDS:
            arr = values[field].slice(begin, count)
            if field is SwfField.AVERAGE_CPU_TIME_USED:
                out.append(pc.fill_null(pc.cast(arr, pa.float64()), jt.scalar(-1.0, pa.float64())))
            else:
                out.append(pc.fill_null(pc.cast(arr, pa.int64()), jt.scalar(-1)))
        yield out


def _date1(epoch: int, tz: str) -> str:
    """``date(1)``-style rendering, e.g. ``Fri Jul 14 11:40:00 JST 2017``."""
    return datetime.fromtimestamp(epoch, ZoneInfo(tz)).strftime("%a %b %d %H:%M:%S %Z %Y")


def build_header(table: pa.Table, site: Any = None) -> list[list[str]]:
    """A complete SWF 2.2 header for a table that did not come from SWF."""
    site = resolve_site(site, table)
    meta = TableMetadata.from_table(table)
    tz = meta.time_zone or (site.time_zone if site else "UTC")
    origin = time_origin(table)
    end = pc.max(table.column("finish_time")).as_py()
    pairs: list[list[str]] = [["Version", "2.2"]]
    if site:
        gpu = site.settings.get("gpu_model", "GPU")
        pairs += [["Computer", f"{site.max_nodes} nodes x {site.gpus_per_node} {gpu} GPUs"],
                  ["Installation", site.title]]
    pairs += [["Conversion", f"swftools {__version__} (converted from {meta.source_format or 'a job table'})"],
              ["MaxJobs", str(len(pc.unique(table.column("job_id"))))],
              ["MaxRecords", str(table.num_rows)],
              ["Preemption", "No"],
              ["UnixStartTime", str(origin)],
              ["TimeZoneString", tz],
              ["StartTime", _date1(origin, tz)]]
    if end is not None:
        pairs.append(["EndTime", _date1(int(end), tz)])
    if site:
        pairs += [["MaxNodes", str(site.max_nodes)], ["MaxProcs", str(site.max_gpus)],
                  ["MaxRuntime", str(max(q.walltime_max_s for q in site.queues))],
                  ["AllowOveruse", "No"], ["MaxQueues", str(len(site.queues))],
                  ["Queues", "all batch queues share one node pool; no interactive queue"]]
        for q in sorted(site.queues, key=lambda q: q.number):
            pairs.append(["Queue", f"{q.number} {q.name} ({q.nodes_min}-{q.nodes_max} nodes, "
                                   f"{q.gpus_per_node_min}-{q.gpus_per_node_max} GPUs per node, "
                                   f"walltime default/max {q.walltime_default_s / 3600:g}/"
                                   f"{q.walltime_max_s / 3600:g} h)"])
        pairs += [["MaxPartitions", "1"], ["Partition", "1 all nodes (one shared pool)"],
                  ["Note", f"processors are GPUs; nodes = ceil(GPUs/{site.gpus_per_node}) "
                           "(multi-node jobs hold every GPU of their nodes); requested time is "
                           "wall-clock seconds"]]
        timeline = ", ".join(f"{n} nodes from {datetime.fromtimestamp(t, ZoneInfo(tz)).date()}"
                             for t, n in zip(site.capacity_since, site.capacity_nodes))
        pairs.append(["Note", f"managed capacity over time: {timeline}"])
    mapping = site.termcode_to_swf_status if site and site.termcode_to_swf_status else DEFAULT_STATUS
    if table.column("termcode").null_count < table.num_rows:
        text = ", ".join(f"{k}->{v}" for k, v in sorted(mapping.items()))
        pairs.append(["Note", f"status from termcode (0 success, 1 fail, 2 walltime exceeded, "
                              f"3 cancelled by user, 4 killed by system): {text}"])
    if not _numeric_ids(table.column("user")):
        pairs.append(["Note", "users and groups numbered 1..N by first appearance in submit order"])
    return pairs


def describe_losses(table: pa.Table, site: Any = None, *,
                    ids: dict[str, pa.Array | None] | None = None) -> list[str]:
    """What an SWF file cannot carry of ``table``: one sentence per loss, nothing when lossless.
    ``ids``: ``id_columns(table)`` when already known."""
    site = resolve_site(site, table)
    ids = id_columns(table) if ids is None else ids
    meta = TableMetadata.from_table(table)
    col = table.column
    losses = []
    for name in ("user", "group"):
        if ids[name] is None:
            n = len(pc.unique(col(name).drop_null()))
            losses.append(f"{name} names replaced by numbers 1..{n} in order of first appearance")
    if ids["queue"] is None:
        losses.append("queue names replaced by queue numbers (listed in the Queue: header lines)")
    shape = [name for name in ("nodes", "gpus_per_node") if col(name).null_count < table.num_rows]
    if shape:
        losses.append(f"{' and '.join(shape)} have no SWF field: field 5 holds total GPUs"
                      + (f" (nodes = ceil(GPUs/{site.gpus_per_node}) under the whole-node policy)"
                         if site else ""))
    known_term = pc.and_(pc.is_valid(col("termcode")), pc.is_null(col("swf_status")))
    if pc.any(known_term).as_py():
        losses.append("termcode mapped to SWF status: failed and walltime-exceeded both become 0, "
                      "user and system cancels both become 5")
    for start, base, dur, label in (("start_time", "submit_time", "wait_s", "wait"),
                                    ("finish_time", "start_time", "walltime_s", "walltime")):
        diff = pc.not_equal(pc.subtract(col(start), col(base)), col(dur))
        n_bad = pc.sum(pc.cast(diff, pa.int64())).as_py() or 0
        if n_bad:
            losses.append(f"{n_bad} jobs: {start} disagrees with {base} + {dur}; SWF keeps the "
                          f"recorded {label} only")
    layout = meta.swf_layout or {}
    if layout.get("reasons") and layout.get("n_rows") == table.num_rows:
        losses.append("not byte-identical to the SWF input: " + "; ".join(layout["reasons"]))
    return losses
