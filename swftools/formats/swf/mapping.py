"""Mapping the job table onto SWF's 18 fields: values, generated header, and the loss report."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa

from swftools import __version__
from swftools import table as jt
from swftools.errors import count
from swftools.metadata import TableMetadata
from swftools.site import Site, resolve_site
from swftools.formats.swf import kernels as swf_kernels
from swftools.formats.swf.fields import FIELDS, SwfField

# swf.md §8: termcode 0->1, 1->0, 2 (walltime exceeded)->0, 3 and 4 (cancelled)->5.
DEFAULT_STATUS = {0: 1, 1: 0, 2: 0, 3: 5, 4: 5}


def _is_swf(table: pa.Table, meta: TableMetadata | None = None) -> bool:
    return (meta or TableMetadata.from_table(table)).source_format == "swf"


def time_origin(table: pa.Table) -> int:
    """Epoch second that SWF field 2 counts from (header UnixStartTime, else the first submit)."""
    meta = jt.get_metadata(table)
    if "swf_time_origin" in meta:
        return int(meta["swf_time_origin"] or 0)
    import pyarrow.compute as pc

    first = pc.min(table.column("submit_time")).as_py()
    return int(first) if first is not None else 0


def _as_ids(col: pa.ChunkedArray) -> pa.Array | None:
    """The column as integer ids when every value is written exactly as a non-negative decimal
    number ('7', not '007', '+7' or '-7'); else None (names, to be numbered). One compiled pass
    over the text (``kernels.parse_ids``)."""
    if not pa.types.is_string(col.type):
        import pyarrow.compute as pc

        col = pc.cast(col, pa.string())
    out = np.empty(len(col), np.int64)
    pos = 0
    for chunk in jt.chunks(col):
        n = len(chunk)
        offsets, data = jt.string_buffers(chunk)
        valid = jt.validity(chunk)
        valid = None if valid is None else valid.view(np.uint8)
        if swf_kernels.parse_ids(offsets, data, valid, out[pos:pos + n]) >= 0:
            return None
        pos += n
    valid = jt.validity(col)
    return jt.from_numpy(out, None if valid is None else ~valid)


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
    import pyarrow.compute as pc

    distinct = pc.unique(col.drop_null())
    return pc.add(pc.cast(pc.index_in(col, value_set=distinct), pa.int64()), jt.scalar(1))


def queue_numbers(col: pa.ChunkedArray, site: Site | None, ids: Any = _UNKNOWN) -> pa.Array:
    """SWF queue numbers: numeric queues kept, site queue names by the site's numbering.
    ``ids``: ``_as_ids(col)`` when already known."""
    ids = _as_ids(col) if ids is _UNKNOWN else ids
    if ids is not None or site is None:
        return dense_ids(col, ids)
    import pyarrow.compute as pc

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


def queue_names(col: pa.ChunkedArray, site: Site | None,
                ids: Any = _UNKNOWN) -> list[tuple[int, str]]:
    """(SWF queue number, queue name) of every queue ``col`` holds, by number (the first name
    seen for a number; a numeric queue's name is its number): the header's ``Queue:`` lines.
    Numbered as ``queue_numbers`` numbers the whole column (distinct values keep the order of
    their first appearance)."""
    import pyarrow.compute as pc

    ids = _as_ids(col) if ids is _UNKNOWN else ids
    if ids is not None:
        return [(n, str(n)) for n in sorted(pc.unique(ids.drop_null()).to_pylist())]
    names = pc.unique(col.drop_null())
    if not len(names):
        return []
    numbers = queue_numbers(pa.chunked_array([names]), site, None).to_pylist()
    first: dict[int, str] = {}
    for number, name in zip(numbers, names.to_pylist()):
        first.setdefault(number, name)
    return sorted(first.items())


def _queue_header(table: pa.Table, site: Site | None) -> list[list[str]]:
    """``MaxQueues`` and one ``Queue:`` line per queue number written: the site's queues with
    their limits, then every other queue the jobs are in (``MaxQueues`` covers the highest
    number)."""
    used = queue_names(table.column("queue"), site)
    pairs: list[list[str]] = []
    known = {q.number for q in site.queues} if site else set()
    if site:
        for q in sorted(site.queues, key=lambda q: q.number):
            pairs.append(["Queue", f"{q.number} {q.name} ({q.nodes_min}-{q.nodes_max} nodes, "
                                   f"{q.gpus_per_node_min}-{q.gpus_per_node_max} GPUs per node, "
                                   f"walltime default/max {q.walltime_default_s / 3600:g}/"
                                   f"{q.walltime_max_s / 3600:g} h)"])
    for number, name in used:
        if number in known:
            continue
        text = str(number) if name == str(number) else f"{number} {name}"
        pairs.append(["Queue", text + (f" (not a queue of site {site.name})" if site else "")])
    if not pairs:
        return []
    highest = max([len(known)] + [number for number, _ in used] + list(known))
    return [["MaxQueues", str(highest)], *pairs]


# Fills ``out`` (int64, float64 for field 6) with rows [begin, begin + len(out)) of one SWF
# field's values, -1 for unknown: ``fill(begin, out)``.
Filler = Callable[[int, np.ndarray], None]


def _column(column: pa.Array | pa.ChunkedArray, kind: pa.DataType = pa.int64()) -> Filler:
    if column.type != kind:  # (a table not conformed to the job table's types)
        import pyarrow.compute as pc

        column = pc.cast(column, kind)
    return lambda begin, out: jt.filled(column.slice(begin, len(out)), -1, out)


def _shifted(column: pa.ChunkedArray, origin: int) -> Filler:
    """The known values of ``column`` minus ``origin``."""
    values = _column(column)
    if not origin:
        return values

    def fill(begin: int, out: np.ndarray) -> None:
        values(begin, out)
        valid = jt.validity(column.slice(begin, len(out)))
        np.subtract(out, origin, out=out, where=True if valid is None else valid)
    return fill


def _difference(end: pa.ChunkedArray, start: pa.ChunkedArray) -> Filler:
    """``end - start`` where both are known."""
    def fill(begin: int, out: np.ndarray) -> None:
        ends, starts = end.slice(begin, len(out)), start.slice(begin, len(out))
        np.subtract(jt.filled(ends, 0, np.empty_like(out)),
                    jt.filled(starts, 0, np.empty_like(out)), out=out)
        for part in (ends, starts):
            valid = jt.validity(part)
            if valid is not None:
                out[~valid] = -1
    return fill


def _coalesce(first: pa.Array | pa.ChunkedArray, fallback: Filler) -> Filler:
    """``first`` where it is known, else ``fallback`` (``first`` alone when it has no null)."""
    values = _column(first)
    if first.null_count == 0:
        return values

    def fill(begin: int, out: np.ndarray) -> None:
        values(begin, out)
        valid = jt.validity(first.slice(begin, len(out)))
        if valid is not None:
            other = np.empty_like(out)
            fallback(begin, other)
            np.copyto(out, other, where=~valid)
    return fill


def _constant(value: int) -> Filler:
    def fill(begin: int, out: np.ndarray) -> None:
        out[:] = value
    return fill


def _status(table: pa.Table, site: Site | None) -> Filler:
    """SWF status: the recorded one, else the site's mapping of the termcode."""
    status, termcode = table.column("swf_status"), table.column("termcode")
    if termcode.null_count == len(termcode):
        return _column(status)
    mapping = site.termcode_to_swf_status if site and site.termcode_to_swf_status else DEFAULT_STATUS
    codes = np.array(sorted(mapping), dtype=np.int64)
    statuses = np.array([mapping[c] for c in codes], dtype=np.int64)
    codes_of = _column(termcode)

    def mapped(begin: int, out: np.ndarray) -> None:
        codes_of(begin, out)
        at = np.minimum(np.searchsorted(codes, out), len(codes) - 1)
        found = codes[at] == out
        known = jt.validity(termcode.slice(begin, len(out)))
        if known is not None:
            found &= known
        out[:] = np.where(found, statuses[at], -1)
    return _coalesce(status, mapped)


def field_fillers(table: pa.Table, site: Any = None, *,
                  ids: dict[str, pa.Array | None] | None = None,
                  meta: TableMetadata | None = None) -> list[Filler]:
    """For each SWF field, the function filling a buffer with a row slice of its values (int64,
    field 6 float64; -1 for unknown), with numpy from the table's column buffers. What needs
    whole columns (first-appearance numbering, the time origin) is computed here once, the rest
    slice by slice when asked: no column is copied whole. ``ids``: ``id_columns(table)``,
    ``meta``: the table's metadata, when already known."""
    site = resolve_site(site, table)
    ids = id_columns(table) if ids is None else ids
    col = table.column
    derived = not _is_swf(table, meta)
    allocated = allocated_filler(table, meta)
    fillers: dict[SwfField, Filler] = {
        SwfField.JOB_ID: _column(col("job_id")),
        SwfField.SUBMIT_TIME: _shifted(col("submit_time"), time_origin(table)),
        SwfField.WAIT_TIME:
            _coalesce(col("wait_s"), _difference(col("start_time"), col("submit_time"))),
        SwfField.RUN_TIME:
            _coalesce(col("walltime_s"), _difference(col("finish_time"), col("start_time"))),
        SwfField.ALLOCATED_PROCESSOR_COUNT: allocated,
        SwfField.AVERAGE_CPU_TIME_USED: _column(col("avg_cpu_time_s"), pa.float64()),
        SwfField.USED_MEMORY: _column(col("used_memory_kb")),
        SwfField.REQUESTED_NUMBER_OF_PROCESSORS:
            _coalesce(col("requested_procs"), allocated) if derived
            else _column(col("requested_procs")),
        SwfField.REQUESTED_TIME: _column(col("requested_walltime_s")),
        SwfField.REQUESTED_MEMORY: _column(col("requested_memory_kb")),
        SwfField.STATUS: _status(table, site),
        SwfField.USER_ID: _column(dense_ids(col("user"), ids["user"])),
        SwfField.GROUP_ID: _column(dense_ids(col("group"), ids["group"])),
        SwfField.EXECUTABLE_ID: _column(col("executable")),
        SwfField.QUEUE_ID: _column(queue_numbers(col("queue"), site, ids["queue"])),
        SwfField.PARTITION_ID:
            _coalesce(col("partition"), _constant(1)) if derived and site
            else _column(col("partition")),
        SwfField.PRECEDING_JOB_ID: _column(col("preceding_job_id")),
        SwfField.THINK_TIME_FROM_PRECEDING_JOB: _column(col("think_time_s")),
    }
    return [fillers[field] for field in FIELDS]


def _maybe_column(table: pa.Table, name: str) -> pa.ChunkedArray | None:
    """A column with some known value, or None (absent, or all unknown)."""
    if name not in table.column_names:
        return None
    column = table.column(name)
    return column if column.null_count < table.num_rows else None


def allocated_filler(table: pa.Table, meta: TableMetadata | None = None) -> Filler:
    """SWF field 5 in the table's unit: ``gpus`` on a GPU site; on a processor site ``cpus``
    where known, else ``gpus`` (SWF traces keep their processors there)."""
    meta = meta or TableMetadata.from_table(table)
    cpus = _maybe_column(table, "cpus")
    if meta.unit == "gpu" or cpus is None:
        return _column(table.column("gpus"))
    return _coalesce(cpus, _column(table.column("gpus")))


def field_dtype(field: SwfField) -> np.dtype:
    """The numpy type of an SWF field's values: float64 for the average CPU time (decimals
    allowed), int64 for the others."""
    return np.dtype(np.float64 if field is SwfField.AVERAGE_CPU_TIME_USED else np.int64)


def swf_field_values(table: pa.Table, site: Any = None) -> list[pa.Array]:
    """The 18 SWF columns of ``table`` (int64, field 6 float64) with -1 for unknown."""
    return next(iter_field_values(table, site, max(table.num_rows, 1)))


def iter_field_values(table: pa.Table, site: Any = None, rows_per_slice: int = 1 << 18, *,
                      ids: dict[str, pa.Array | None] | None = None) -> Iterator[list[pa.Array]]:
    """``swf_field_values`` of consecutive row slices of ``table`` (at least one, empty for an
    empty table; see ``field_fillers``). ``ids``: ``id_columns(table)`` when already known."""
    fillers = field_fillers(table, site, ids=ids)
    n_rows = table.num_rows
    for begin in range(0, max(n_rows, 1), rows_per_slice):
        count = min(rows_per_slice, n_rows - begin)
        out = []
        for field, fill in zip(FIELDS, fillers):
            values = np.empty(count, field_dtype(field))
            fill(begin, values)
            out.append(jt.from_numpy(values))
        yield out


def _date1(epoch: int, tz: str) -> str:
    """``date(1)``-style rendering, e.g. ``Fri Jul 14 11:40:00 JST 2017``."""
    return datetime.fromtimestamp(epoch, ZoneInfo(tz)).strftime("%a %b %d %H:%M:%S %Z %Y")


def build_header(table: pa.Table, site: Any = None) -> list[list[str]]:
    """A complete SWF 2.2 header for a table that did not come from SWF."""
    import pyarrow.compute as pc

    site = resolve_site(site, table)
    meta = TableMetadata.from_table(table)
    tz = meta.time_zone or (site.time_zone if site else "UTC")
    origin = time_origin(table)
    end = pc.max(table.column("finish_time")).as_py()
    pairs: list[list[str]] = [["Version", "2.2"]]
    if site:
        gpu = " ".join(filter(None, [site.settings.get("gpu_model"), "GPUs"]))
        pairs += [["Computer", f"{site.max_nodes} nodes x {site.gpus_per_node} {gpu}"],
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
                  ["AllowOveruse", "No"]]
        queues = _queue_header(table, site)
        pairs += queues[:1] + [["Queues", "all batch queues share one node pool; no interactive "
                                          "queue"]] + queues[1:]
        pairs += [["MaxPartitions", "1"], ["Partition", "1 all nodes (one shared pool)"],
                  ["Note", f"processors are GPUs; nodes = ceil(GPUs/{site.gpus_per_node}) "
                           "(multi-node jobs hold every GPU of their nodes); requested time is "
                           "wall-clock seconds"]]
        timeline = ", ".join(f"{n} nodes from {datetime.fromtimestamp(t, ZoneInfo(tz)).date()}"
                             for t, n in zip(site.capacity_since, site.capacity_nodes))
        pairs.append(["Note", f"managed capacity over time: {timeline}"])
    else:
        pairs += _queue_header(table, None)
    if site is None and meta.unit == "gpu":
        pairs.append(["Note", "processors are GPUs (field 5 counts the GPUs allocated; "
                              "CPU-only jobs hold 0)"])
    mapping = site.termcode_to_swf_status if site and site.termcode_to_swf_status else DEFAULT_STATUS
    if table.column("termcode").null_count < table.num_rows:
        text = ", ".join(f"{k}->{v}" for k, v in sorted(mapping.items()))
        pairs.append(["Note", f"status from termcode (0 success, 1 fail, 2 walltime exceeded, "
                              f"3 cancelled by user, 4 killed by system): {text}"])
    if not _numeric_ids(table.column("user")):
        pairs.append(["Note", "users and groups numbered 1..N by first appearance in submit order"])
    return pairs


def describe_losses(table: pa.Table, site: Any = None, *,
                    ids: dict[str, pa.Array | None] | None = None,
                    meta: TableMetadata | None = None) -> list[str]:
    """What an SWF file cannot carry of ``table``: one sentence per loss, nothing when lossless.
    ``ids``: ``id_columns(table)``, ``meta``: the table's metadata, when already known."""
    site = resolve_site(site, table)
    ids = id_columns(table) if ids is None else ids
    meta = meta or TableMetadata.from_table(table)
    col = table.column
    losses = []
    for name in ("user", "group"):
        if ids[name] is None:
            import pyarrow.compute as pc

            n = len(pc.unique(col(name).drop_null()))
            losses.append(f"{name} names replaced by numbers 1..{n} in order of first appearance")
    if ids["queue"] is None:
        losses.append("queue names replaced by queue numbers (listed in the Queue: header lines)")
    if site is not None:
        own = {q.number for q in site.queues}
        other = [f"{n} {name}" for n, name in queue_names(col("queue"), site, ids["queue"])
                 if n not in own]
        if other:
            losses.append(f"queue: {count(len(other), 'queue')} site {site.name} does not have, "
                          f"numbered after its queues: {', '.join(other[:10])}"
                          f"{', ...' if len(other) > 10 else ''} (MaxQueues and the Queue: header "
                          "lines list them)")
    shape = [name for name in ("nodes", "gpus_per_node") if col(name).null_count < table.num_rows]
    if shape:
        losses.append(f"{' and '.join(shape)} have no SWF field: field 5 holds total {meta.unit_word}"
                      + (f" (nodes = ceil(GPUs/{site.gpus_per_node}) under the whole-node policy)"
                         if site else ""))
    losses += unit_losses(table, meta)
    if _count_rows(table, _termcode_without_status):
        losses.append("termcode mapped to SWF status: failed and walltime-exceeded both become 0, "
                      "user and system cancels both become 5")
    for start, base, dur, label in (("start_time", "submit_time", "wait_s", "wait"),
                                    ("finish_time", "start_time", "walltime_s", "walltime")):
        n_bad = _count_rows(table, _disagreeing(start, base, dur))
        if n_bad:
            losses.append(f"{n_bad} jobs: {start} disagrees with {base} + {dur}; SWF keeps the "
                          f"recorded {label} only")
    sources = table.num_rows - col("source_job_id").null_count
    if sources:
        losses.append(f"source_job_id: {sources} source job ids not carried (SWF holds job "
                      "numbers only)")
    layout = meta.swf_layout or {}
    if layout.get("reasons") and layout.get("n_rows") == table.num_rows:
        losses.append("not byte-identical to the SWF input: " + "; ".join(layout["reasons"]))
    return losses


def _known(table: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(int64 values, known) of a column (all unknown when absent)."""
    column = table.column(name) if name in table.column_names else None
    if column is None or column.null_count == len(column):  # nothing to copy
        return np.zeros(table.num_rows, np.int64), np.zeros(table.num_rows, bool)
    known = jt.validity(column)
    values = jt.filled(column, 0, np.empty(table.num_rows, np.int64))
    return values, np.ones(table.num_rows, bool) if known is None else known


def job_list(table: pa.Table, rows: np.ndarray, first: int = 5) -> str:
    """``N jobs (job ids a, b, c, ...)`` (``1 job`` for one) for the rows marked in ``rows``."""
    picked = np.flatnonzero(rows)
    ids = table.column("job_id").take(jt.from_numpy(picked[:first].astype(np.int64))).to_pylist()
    more = ", ..." if len(picked) > first else ""
    label = "job id" if len(picked) == 1 else "job ids"
    return f"{count(len(picked), 'job')} ({label} {', '.join(map(str, ids))}{more})"


def unit_losses(table: pa.Table, meta: TableMetadata) -> list[str]:
    """Field 5 holds one unit: what the other unit's column and the recorded run time lose."""
    losses = []
    cpus, ck = _known(table, "cpus")
    if ck.any():  # (without cpus the GPUs are written whole: their column is not read)
        gpus, gk = _known(table, "gpus")
        if meta.unit == "gpu":
            losses.append(f"cpus: no SWF field on a GPU site (field 5 holds GPUs): the processor "
                          f"count of {job_list(table, ck)} dropped")
            cpu_only = ck & gk & (gpus == 0) & (cpus > 0)
            if cpu_only.any():
                losses.append(f"{job_list(table, cpu_only)} are CPU-only (cpus, no GPUs): field "
                              "5 is 0; exports that need GPUs (Batsim, Tiresias) skip them")
        else:
            losses.append("cpus: written as field 5 (processors, the site's unit); SWF has no "
                          "separate column, so a read gives them back as gpus")
            other = ck & (~gk | (gpus != cpus))
            with_gpus = other & gk & (gpus > 0)
            if other.any():
                dropped = (f"; the GPUs of {job_list(table, with_gpus)} are dropped"
                           if with_gpus.any() else "")
                losses.append(f"gpus: field 5 holds cpus (processors, the site's unit) for "
                              f"{job_list(table, other)}{dropped}")
    recorded, rk = _known(table, "recorded_walltime_s")
    if rk.any():
        wall, wk = _known(table, "walltime_s")
        diff = np.abs(recorded - wall)[rk & wk]
        largest = f" (largest difference {int(diff.max())} s)" if len(diff) else ""
        losses.append(f"recorded_walltime_s: the log's own run time of {job_list(table, rk)} "
                      f"dropped{largest}; field 4 holds finish - start")
    return losses


_CHECK_ROWS = 1 << 16  # rows checked at a time: the temporaries stay small


def _count_rows(table: pa.Table, rows: Callable[[pa.Table], np.ndarray | None]) -> int:
    """How many rows of ``table`` ``rows`` (of a row slice: a bool mask, or None for none)
    marks, slice by slice."""
    return sum(int(np.count_nonzero(mask)) for begin in range(0, table.num_rows, _CHECK_ROWS)
               if (mask := rows(table.slice(begin, _CHECK_ROWS))) is not None)


def _termcode_without_status(rows: pa.Table) -> np.ndarray | None:
    """Rows with a termcode but no SWF status (the status will be mapped from the termcode)."""
    termcode, status = rows.column("termcode"), rows.column("swf_status")
    if termcode.null_count == len(termcode) or status.null_count == 0:
        return None
    known = jt.validity(termcode)
    return ~jt.validity(status) if known is None else known & ~jt.validity(status)


def _disagreeing(end: str, base: str, duration: str) -> Callable[[pa.Table], np.ndarray | None]:
    """Rows where ``end - base`` and ``duration`` are known and differ."""
    def rows(part: pa.Table) -> np.ndarray | None:
        columns = [part.column(name) for name in (end, base, duration)]
        if any(c.null_count == len(c) for c in columns):
            return None
        ends, bases, durations = (jt.filled(c, 0, np.empty(len(c), np.int64)) for c in columns)
        differ = ends - bases != durations
        for column in columns:
            known = jt.validity(column)
            if known is not None:
                differ &= known
        return differ
    return rows
