"""SWF rules: the header against the data, and the field conventions of SWF 2.2."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools.formats.swf.fields import FIELDS, SwfField
from swftools.validate.context import Context, distinct
from swftools.validate.registry import NotApplicable, rule
from swftools.validate.swf_times import parse_date, zone

KNOWN_KEYS = ("Version", "Computer", "Installation", "Acknowledge", "Information", "Conversion",
              "MaxJobs", "MaxRecords", "Preemption", "UnixStartTime", "TimeZone",
              "TimeZoneString", "StartTime", "EndTime", "MaxNodes", "MaxProcs", "MaxRuntime",
              "MaxMemory", "AllowOveruse", "MaxQueues", "Queues", "Queue", "MaxPartitions",
              "Partitions", "Partition", "Note")
RECOMMENDED_KEYS = ("Version", "Computer", "Installation", "Acknowledge", "Information",
                    "Conversion", "MaxJobs", "MaxRecords", "Preemption", "UnixStartTime",
                    "TimeZoneString", "StartTime", "EndTime", "MaxNodes", "MaxProcs")
INTEGER_KEYS = ("MaxJobs", "MaxRecords", "UnixStartTime", "TimeZone", "MaxNodes", "MaxProcs",
                "MaxRuntime", "MaxMemory", "MaxQueues", "MaxPartitions")
CHOICES = {"Preemption": ("No", "Yes", "Double", "TS"), "AllowOveruse": ("Yes", "No")}
_REMOVED = re.compile(r"\((\d+) jobs? removed\)", re.IGNORECASE)
_LEADING_INT = re.compile(r"^\s*(-?\d+)")
_CONTINUATION = re.compile(r"^;(\t|\s{2,})")


def _swf(ctx: Context) -> None:
    if not ctx.is_swf:
        raise NotApplicable("input is not SWF")


def _with_header(ctx: Context) -> None:
    _swf(ctx)
    if not ctx.header:
        raise NotApplicable("the SWF file has no header")


def _header_index(ctx: Context, key: str) -> int | None:
    """Index in the raw header lines of the first line holding ``key``."""
    pattern = re.compile(rf"^;\s*{re.escape(key)}\s*:", re.IGNORECASE)
    for i, line in enumerate(ctx.meta.get("swf_header_lines") or []):
        if pattern.match(line):
            return i
    return None


def header_line(ctx: Context, key: str) -> int | None:
    """File line of the first header line holding ``key`` (None unless the input is the SWF file)."""
    index = _header_index(ctx, key)
    return index + 1 if index is not None and ctx.source_format == "swf" else None


def _origin(ctx: Context) -> int | None:
    origin = ctx.meta.get("swf_time_origin")
    return origin if origin is not None else ctx.header_int("UnixStartTime")


def _header_time(ctx: Context, key: str) -> int | None:
    text = ctx.header_value(key)
    if text is None:
        return None
    return parse_date(text, ctx.header_value("TimeZoneString"), ctx.header_int("TimeZone"))


@rule("swf-header-missing", "warning", "swf-header",
      "An SWF file opens with a header of '; Key: value' comments (capacity, time origin, "
      "provenance); a file without one cannot be checked against its machine.")
def swf_header_missing(ctx: Context) -> None:
    _swf(ctx)
    if not ctx.header:
        ctx.note("the file has no header comments (no UnixStartTime, MaxProcs, provenance)",
                 line=1, expected="'; Version: 2.2' and the other header keys")


@rule("swf-header-recommended", "info", "swf-header",
      "Recommended header keys are present: " + ", ".join(RECOMMENDED_KEYS) + ".")
def swf_header_recommended(ctx: Context) -> None:
    _with_header(ctx)
    present = {k.lower() for k, _ in ctx.header}
    for key in RECOMMENDED_KEYS:
        if key.lower() not in present:
            ctx.note(f"recommended header key {key} is missing", field=key,
                     expected=f"'; {key}: ...'")


@rule("swf-header-unknown-key", "warning", "swf-header",
      "Header keys are those SWF 2.2 defines (" + ", ".join(KNOWN_KEYS) + ").")
def swf_header_unknown_key(ctx: Context) -> None:
    _with_header(ctx)
    known = {k.lower() for k in KNOWN_KEYS}
    raw = ctx.meta.get("swf_header_lines") or []
    for key, value in ctx.header:
        index = _header_index(ctx, key)
        if index is not None and _CONTINUATION.match(raw[index]):
            continue  # an indented comment line such as ';<TAB>see: http://...' is no key
        if key and key.lower() not in known:
            ctx.note(f"unknown header key {key!r}", line=header_line(ctx, key), field=key,
                     value=value.split("\n")[0], expected="a key SWF 2.2 defines")


@rule("swf-header-value", "warning", "swf-header",
      "Header values parse: integers for Max*/UnixStartTime/TimeZone, Preemption in No/Yes/Double/TS, "
      "AllowOveruse Yes/No, TimeZoneString an IANA zone, StartTime/EndTime in date(1) style.")
def swf_header_value(ctx: Context) -> None:
    _with_header(ctx)
    for key, value in ctx.header:
        first = value.split("\n")[0].strip()
        where = {"line": header_line(ctx, key), "field": key, "value": first}
        canonical = next((k for k in KNOWN_KEYS if k.lower() == key.lower()), None)
        if canonical in INTEGER_KEYS and not _LEADING_INT.match(first):
            ctx.note(f"{key} is not an integer", expected="an integer", **where)
        elif canonical in CHOICES and first.split(" ")[0].lower() not in [
                c.lower() for c in CHOICES[canonical]]:
            ctx.note(f"{key} value not understood", expected=" / ".join(CHOICES[canonical]), **where)
        elif canonical == "TimeZoneString" and zone(first) is None:
            ctx.note("TimeZoneString is not a known IANA zone", expected="e.g. Asia/Tokyo", **where)
        elif canonical in ("StartTime", "EndTime") and _header_time(ctx, key) is None:
            ctx.note(f"{key} cannot be interpreted", expected="e.g. 'Fri Jul 14 11:40:00 JST 2017' "
                     "with a TimeZoneString", **where)


@rule("swf-header-counts", "warning", "swf-header",
      "MaxJobs equals the number of jobs and MaxRecords the number of job lines, either directly or "
      "after the removals a cleaned log's notes document ('(N jobs removed)').")
def swf_header_counts(ctx: Context) -> None:
    _with_header(ctx)
    removed = sum(int(n) for v in ctx.header_values("Note") for n in _REMOVED.findall(v))
    n_records = ctx.n
    n_jobs = len(distinct(ctx.job_ids)) if ctx.n else 0
    for key, actual, noun in (("MaxJobs", n_jobs, "jobs"), ("MaxRecords", n_records, "job lines")):
        declared = ctx.header_int(key)
        if declared is None or actual in (declared, declared - removed):
            continue
        after = f" ({declared - removed} after the {removed} jobs its cleaning notes remove)" \
            if removed else ""
        ctx.note(f"header {key} is {declared}{after} but the file has {actual} {noun}",
                 line=header_line(ctx, key), field=key, value=declared, expected=str(actual))


@rule("swf-late-start", "warning", "swf-header",
      "The first job is submitted at the time origin: its field-2 offset from UnixStartTime is at "
      "most --late-start seconds (default one day); a later start means the header describes a "
      "longer log than the file holds.")
def swf_late_start(ctx: Context) -> None:
    _swf(ctx)
    origin = _origin(ctx)
    if origin is None:
        raise NotApplicable("no UnixStartTime")
    submit, known = ctx.values("submit_time")
    if not known.any():
        raise NotApplicable("no known submit time")
    row = int(np.flatnonzero(known)[np.argmin(submit[known])])
    offset = int(submit[row]) - origin
    if offset > ctx.options.late_start_s:
        ctx.note(f"first submission {offset} s ({offset / 86400:.1f} days) after UnixStartTime",
                 row=row, field="submit_time", value=offset,
                 expected=f"<= {ctx.options.late_start_s} s")


@rule("swf-start-time", "warning", "swf-header",
      "The header's StartTime, read in TimeZoneString, is the instant UnixStartTime names.")
def swf_start_time(ctx: Context) -> None:
    _with_header(ctx)
    origin = ctx.header_int("UnixStartTime")
    start = _header_time(ctx, "StartTime")
    if origin is None or start is None:
        raise NotApplicable("StartTime or UnixStartTime missing or unreadable")
    if start != origin:
        ctx.note(f"StartTime is {start - origin:+d} s from UnixStartTime {origin}",
                 line=header_line(ctx, "StartTime"), field="StartTime", value=start,
                 expected=str(origin))


@rule("swf-end-time", "warning", "swf-header",
      "Every job ends (else starts, else is submitted) no later than the header's EndTime.")
def swf_end_time(ctx: Context) -> None:
    _with_header(ctx)
    end = _header_time(ctx, "EndTime")
    if end is None or _origin(ctx) is None:
        raise NotApplicable("EndTime or UnixStartTime missing or unreadable")
    latest = np.full(ctx.n, np.iinfo(np.int64).min)
    for column in ("submit_time", "start_time", "finish_time"):
        values, known = ctx.values(column)
        latest = np.where(known, values, latest)
    bad = latest > end
    ctx.flag(bad, "finish_time", lambda i: f"ends {latest[i] - end} s after the header's EndTime",
             value=latest, expected=f"<= {end} (EndTime)")


def _declared_ids(ctx: Context, key: str, max_key: str, column: str, noun: str) -> None:
    _with_header(ctx)
    lines = ctx.header_values(key)
    declared_max = ctx.header_int(max_key)
    if not lines and declared_max is None:
        raise NotApplicable(f"the header declares no {noun}s")
    numbers = {int(m.group(1)) for v in lines if (m := _LEADING_INT.match(v))}
    if declared_max is not None and lines and declared_max != len(lines):
        ctx.note(f"{max_key} is {declared_max} but {len(lines)} '{key}:' lines follow",
                 line=header_line(ctx, max_key), field=max_key, value=declared_max,
                 expected=str(len(lines)))
    col = ctx.table.column(column)
    values = pc.unique(pc.cast(col, "string") if col.type != "string" else col).drop_null()
    used = sorted({int(v) for v in values.to_pylist() if _LEADING_INT.match(v)})
    for number in used:
        if numbers and number not in numbers:
            rows = np.flatnonzero(np.asarray(pc.equal(pc.cast(col, "string"), str(number)).fill_null(False)))
            ctx.note(f"{noun} {number} is used by {len(rows)} jobs but no '{key}:' line declares it",
                     row=int(rows[0]), field=column, value=number,
                     expected=f"one of {sorted(numbers)}")
        elif not numbers and declared_max is not None and not (0 <= number <= declared_max):
            rows = np.flatnonzero(np.asarray(pc.equal(pc.cast(col, "string"), str(number)).fill_null(False)))
            ctx.note(f"{noun} {number} is outside 0..{max_key} {declared_max}", row=int(rows[0]),
                     field=column, value=number, expected=f"0..{declared_max}")


@rule("swf-queue-ids", "warning", "swf-header",
      "Queue numbers used by jobs (field 15) are declared by the header's 'Queue:' lines, and "
      "MaxQueues matches the number of those lines.")
def swf_queue_ids(ctx: Context) -> None:
    _declared_ids(ctx, "Queue", "MaxQueues", "queue", "queue")


@rule("swf-partition-ids", "warning", "swf-header",
      "Partition numbers used by jobs (field 16) are declared by the header's 'Partition:' lines, "
      "and MaxPartitions matches the number of those lines.")
def swf_partition_ids(ctx: Context) -> None:
    _declared_ids(ctx, "Partition", "MaxPartitions", "partition", "partition")


@rule("swf-extra-columns", "warning", "swf-fields",
      "Job lines have exactly 18 fields; trailing extra columns (SWF-like files) are dropped on read.")
def swf_extra_columns(ctx: Context) -> None:
    _swf(ctx)
    extra = ctx.meta.get("swf_extra_columns")
    if extra:
        ctx.note(f"{extra['lines']} job lines have up to {extra['count']} fields beyond the 18th "
                 "(dropped)", line=extra.get("first_line"), value=18 + extra["count"],
                 expected="18 fields")


@rule("swf-notes", "info", "swf-header",
      "The header has Note lines documenting log-specific semantics (status mapping, meaning of "
      "the requested time, field 5 vs 8).")
def swf_notes(ctx: Context) -> None:
    _with_header(ctx)
    if not ctx.header_values("Note"):
        ctx.note("no 'Note:' lines: the status mapping and the meaning of field 9 are undocumented",
                 field="Note", expected="'; Note: ...' lines")


@rule("swf-negative-value", "error", "swf-fields",
      "SWF: -1 is the only negative value (unknown); the submit offset (field 2) is not before "
      "UnixStartTime. Non-SWF inputs are checked by schema-range.")
def swf_negative_value(ctx: Context) -> None:
    _swf(ctx)
    origin = _origin(ctx) or 0
    for field in FIELDS:
        column = field.column
        if ctx.table.column(column).null_count == ctx.n:
            continue
        col = ctx.strings(column)
        if pa.types.is_string(col.type):  # user, group, queue: numbers kept as text
            bad = np.asarray(pc.starts_with(col, "-").fill_null(False), bool)
            ctx.flag(bad, column, lambda i, c=col, f=field: f"{f.label} is {c[i].as_py()}",
                     value=lambda i, c=col: c[i].as_py(), expected=">= 0, or -1 for unknown")
            continue
        values, known = ctx.values(column)
        base = origin if field is SwfField.SUBMIT_TIME else 0
        bad = known & (values - base < 0)
        ctx.flag(bad, column, lambda i, v=values, f=field, b=base: f"{f.label} is {v[i] - b}",
                 value=lambda i, v=values, b=base: v[i] - b, expected=">= 0, or -1 for unknown")


@rule("swf-status", "error", "swf-fields",
      "SWF status (field 11) is one of -1, 0, 1, 2, 3, 4, 5.")
def swf_status(ctx: Context) -> None:
    ctx.require("swf_status")
    status, known = ctx.swf_status
    bad = known & ((status < 0) | (status > 5))
    ctx.flag(bad, "swf_status", lambda i: f"status {status[i]} is not an SWF status code",
             value=status, expected="-1, 0, 1, 2, 3, 4 or 5")


CPU_TOLERANCE_S = 1.0


def _at_most(ctx: Context, column: str, limit: str, message: str, slack: float = 0) -> None:
    """Flag ``column`` where it exceeds ``limit`` (+ ``slack``); ``message`` formats both values."""
    ctx.require(column, limit)
    value, vk = ctx.values(column)
    top, tk = ctx.values(limit)
    bad = vk & tk & (value > top + slack)
    ctx.flag(bad, column, lambda i: message.format(value[i], top[i]),
             value=value, expected=lambda i: f"<= {top[i]}")


@rule("swf-cpu-time", "warning", "swf-fields",
      "Average CPU time per processor (field 6) does not exceed the run time (field 4) by more "
      "than 1 s (rounding).")
def swf_cpu_time(ctx: Context) -> None:
    _at_most(ctx, "avg_cpu_time_s", "walltime_s",
             "average CPU time {0:g} s exceeds run time {1} s", CPU_TOLERANCE_S)


@rule("swf-memory-overuse", "warning", "swf-fields",
      "Used memory (field 7) stays within requested memory (field 10) when the header says "
      "AllowOveruse: No.")
def swf_memory_overuse(ctx: Context) -> None:
    _swf(ctx)
    if not (ctx.header_value("AllowOveruse") or "").strip().lower().startswith("no"):
        raise NotApplicable("the header does not say AllowOveruse: No")
    _at_most(ctx, "used_memory_kb", "requested_memory_kb", "uses {0} KB of a {1} KB request")


@rule("swf-allocated-below-requested", "info", "swf-fields",
      "Jobs that ran hold at least the processors they requested (field 5 >= field 8); fewer is "
      "resource nonsense or a moldable job, counted as one finding.")
def swf_allocated_below_requested(ctx: Context) -> None:
    ctx.require("gpus", "requested_procs")
    alloc, ak = ctx.values("gpus")
    req, qk = ctx.values("requested_procs")
    run, rk = ctx.values("walltime_s")
    rows = np.flatnonzero(ak & qk & rk & (run > 0) & (alloc > 0) & (alloc < req))
    if len(rows):
        lines = ", ".join(str(int(x)) for x in ctx.lines[rows[:5]])
        ctx.note(f"{len(rows)} jobs ran on fewer processors than they requested (first on "
                 f"{ctx.line_word}s {lines})", field="gpus", value=len(rows), expected="field 5 >= field 8")


@rule("swf-partial-execution", "error", "swf-fields",
      "Partial-execution lines (status 2-4) are consecutive lines of one job number, all but the "
      "last with status 2 and the last with 3 or 4, in a file whose Preemption is Yes or Double; "
      "with Double a summary line (0, 1 or 5) comes first and its run time is the bursts' sum.")
def swf_partial_execution(ctx: Context) -> None:
    ctx.require("swf_status")
    status, known = ctx.swf_status
    burst = known & (status >= 2) & (status <= 4)
    if not burst.any():
        return
    declared = (ctx.header_value("Preemption") or "").split(" ")[0].strip()
    preemption = declared.lower()
    first = int(np.flatnonzero(burst)[0])
    if ctx.is_swf and preemption not in ("yes", "double"):
        ctx.note(f"{int(burst.sum())} partial-execution lines but the header says Preemption: "
                 f"{declared or '(missing)'}", row=first, field="swf_status",
                 value=int(status[first]), expected="Preemption: Yes or Double")
    ids = ctx.job_ids
    run, rk = ctx.values("walltime_s")
    sub = np.flatnonzero(np.isin(ids, distinct(ids[burst])))
    sub = sub[np.argsort(ids[sub], kind="stable")]
    bounds = np.flatnonzero(np.r_[True, ids[sub][1:] != ids[sub][:-1], True])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        rows = sub[lo:hi]
        job = int(ids[rows[0]])
        bursts = rows[burst[rows]]
        codes = status[bursts]
        if np.any(np.diff(rows) != 1):
            ctx.note(f"the {len(rows)} lines of job {job} are not consecutive", row=int(rows[1]),
                     field="job_id", value=job, expected="consecutive lines")
        if codes[-1] not in (3, 4) or np.any(codes[:-1] != 2):
            ctx.note(f"burst statuses {codes.tolist()}", row=int(bursts[-1]), field="swf_status",
                     value=int(codes[-1]), expected="2, ..., 2 then 3 or 4")
        summary = rows[~burst[rows]]
        if preemption == "double" and len(summary) == 1 and rk[summary[0]] and rk[bursts].all():
            total = int(run[bursts].sum())
            if int(run[summary[0]]) != total:
                ctx.note(f"summary run time {int(run[summary[0]])} s, bursts sum to {total} s",
                         row=int(summary[0]), field="walltime_s", value=int(run[summary[0]]),
                         expected=str(total))
