"""Time arithmetic, ordering and identity rules (whole-column numpy checks)."""

from __future__ import annotations

import numpy as np

from swftools.formats.swf.fields import FIELDS
from swftools.validate.context import SWF_ONLY, Context, distinct
from swftools.validate.registry import NotApplicable, rule

HOUR_S = 3600
HOUR_TOLERANCE_S = 2


def _pair(ctx: Context, a: str, b: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    va, ka = ctx.values(a)
    vb, kb = ctx.values(b)
    return va, vb, ka & kb


def _duration_rule(ctx: Context, duration: str, first: str, last: str) -> None:
    ctx.require(duration, first, last)
    d, dk = ctx.values(duration)
    v1, v2, known = _pair(ctx, first, last)
    known &= dk
    diff = v2 - v1
    bad = known & (d != diff)
    ctx.flag(bad, duration,
             lambda i: f"{duration} is {d[i]} s but {last} - {first} = {diff[i]} s",
             value=d, expected=lambda i: f"{diff[i]} ({last} - {first})")


def _order_rule(ctx: Context, first: str, last: str, message: str) -> None:
    """Flag ``last`` where it is before ``first``; ``message`` takes the seconds between them."""
    ctx.require(first, last)
    v1, v2, known = _pair(ctx, first, last)
    bad = known & (v2 < v1)
    ctx.flag(bad, last, lambda i: message.format(v1[i] - v2[i]),
             value=v2, expected=lambda i: f">= {v1[i]} ({first})")


@rule("wait-arithmetic", "error", "time",
      "wait_s equals start_time - submit_time wherever all three are known.")
def wait_arithmetic(ctx: Context) -> None:
    _duration_rule(ctx, "wait_s", "submit_time", "start_time")


@rule("walltime-arithmetic", "error", "time",
      "walltime_s equals finish_time - start_time wherever all three are known.")
def walltime_arithmetic(ctx: Context) -> None:
    _duration_rule(ctx, "walltime_s", "start_time", "finish_time")


@rule("recorded-walltime", "warning", "time",
      "recorded_walltime_s (the log's own run-time figure) is kept only where it differs from "
      "walltime_s; where the reader could not compute finish_time - start_time, walltime_s "
      "holds the recorded figure and recorded_walltime_s is unknown.")
def recorded_walltime(ctx: Context) -> None:
    ctx.require("recorded_walltime_s", "walltime_s")
    recorded, rk = ctx.values("recorded_walltime_s")
    wall, wk = ctx.values("walltime_s")
    ctx.flag(rk & wk & (recorded == wall), "recorded_walltime_s",
             "recorded_walltime_s repeats walltime_s", value=recorded,
             expected="unknown where the recorded figure equals walltime_s")


@rule("start-before-submit", "error", "time",
      "A job starts at or after its submission (start_time >= submit_time).")
def start_before_submit(ctx: Context) -> None:
    _order_rule(ctx, "submit_time", "start_time", "starts {} s before its submission")


@rule("finish-before-start", "error", "time",
      "A job finishes at or after its start (finish_time >= start_time).")
def finish_before_start(ctx: Context) -> None:
    _order_rule(ctx, "start_time", "finish_time", "finishes {} s before it starts")


def _prev_known(values: np.ndarray, known: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each known row, the row index of the previous known row (-1 for the first)."""
    rows = np.flatnonzero(known)
    prev = np.empty(len(rows), np.int64)
    prev[0:1] = -1
    prev[1:] = rows[:-1]
    return rows, prev


@rule("submit-order", "error", "order",
      "Submit times never decrease in file order (an error for SWF, which requires it; a "
      "warning for other inputs); unknown submit times are skipped.")
def submit_order(ctx: Context) -> None:
    ctx.require("submit_time")
    submit, known = ctx.values("submit_time")
    rows, prev = _prev_known(submit, known)
    back = np.zeros(len(rows), bool)
    back[1:] = submit[rows[1:]] < submit[rows[:-1]]
    bad, before = rows[back], prev[back]
    step = dict(zip(bad.tolist(), (submit[before] - submit[bad]).tolist()))
    line_before = dict(zip(bad.tolist(), ctx.lines[before].tolist()))
    ctx.flag(bad, "submit_time",
             lambda i: f"submitted {step[i]} s before the previous job ({ctx.line_word} {line_before[i]})",
             value=submit, expected=lambda i: f">= {submit[i] + step[i]}",
             severity="error" if ctx.is_swf else "warning")


@rule("clock-hour-shift", "warning", "time",
      "Steps of exactly one hour (3600 s +/- 2 s) backwards in submit order, or waits/run times of "
      "about -3600 s: local clock time recorded across a daylight-saving change.")
def clock_hour_shift(ctx: Context) -> None:
    ctx.require("submit_time")
    submit, known = ctx.values("submit_time")
    rows, prev = _prev_known(submit, known)
    steps = np.zeros(len(rows), np.int64)
    steps[1:] = submit[rows[:-1]] - submit[rows[1:]]
    hit = np.abs(steps - HOUR_S) <= HOUR_TOLERANCE_S
    ctx.flag(rows[hit], "submit_time", "submit time steps back by about one hour",
             value=submit, expected="non-decreasing submit times in UTC")
    for duration, first, last in (("wait_s", "submit_time", "start_time"),
                                  ("walltime_s", "start_time", "finish_time")):
        v1, v2, both = _pair(ctx, first, last)
        diff = v2 - v1
        bad = both & (np.abs(diff + HOUR_S) <= HOUR_TOLERANCE_S)
        ctx.flag(bad, duration, lambda i, diff=diff, last=last, first=first:
                 f"{last} - {first} = {diff[i]} s, about minus one hour", value=diff,
                 expected=">= 0")


@rule("submit-unknown", "warning", "time",
      "The submit time is known (SWF field 2 is not -1): without it a job cannot be placed in "
      "time and the file's order cannot be checked.")
def submit_unknown(ctx: Context) -> None:
    ctx.require_jobs()
    _, known = ctx.values("submit_time")
    ctx.flag(~known, "submit_time", "submit time unknown (-1)", value=-1 if ctx.is_swf else None,
             expected="a submit time")


def _partial_repeat(ctx: Context, rows_dup: np.ndarray) -> np.ndarray:
    """Rows (among duplicates) that belong to a legal SWF partial-execution group."""
    if not ctx.is_swf or not ctx.has("swf_status"):
        return np.zeros(len(rows_dup), bool)
    status, known = ctx.swf_status
    ids = ctx.job_ids
    partial_ids = distinct(ids[known & (status >= 2) & (status <= 4)])
    return np.isin(ids[rows_dup], partial_ids)


@rule("job-id-unique", "error", "order",
      "Job ids (the Table Schema primary key) are unique; SWF partial-execution lines (status 2-4) "
      "may repeat their job's number (checked by swf-partial-execution), and verbatim repeated "
      "records are reported by duplicate-record instead.")
def job_id_unique(ctx: Context) -> None:
    ctx.require_jobs()
    ids = ctx.job_ids
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    repeat = np.zeros(ctx.n, bool)
    repeat[1:] = sorted_ids[1:] == sorted_ids[:-1]
    dup_rows = np.sort(order[repeat])
    dup_rows = dup_rows[~_partial_repeat(ctx, dup_rows)]
    from swftools.validate.rules_anomaly import exact_duplicates  # verbatim repeats: duplicate-record
    if len(dup_rows) and "duplicate-record" in ctx.selected:
        verbatim = exact_duplicates(ctx)
        dup_rows = dup_rows[~np.isin(dup_rows, np.fromiter(verbatim, np.int64, len(verbatim)))]
    # first row of each id: the first of its run in the stable sort
    starts = np.r_[True, sorted_ids[1:] != sorted_ids[:-1]]
    first_of = order[starts]
    run_of = np.cumsum(starts) - 1
    first_row = np.empty(ctx.n, np.int64)
    first_row[order] = first_of[run_of]
    ctx.flag(dup_rows, "job_id",
             lambda i: f"job id {ids[i]} already used on {ctx.line_word} {ctx.lines[first_row[i]]}",
             value=ids, expected="a unique job id")


@rule("job-id-order", "warning", "order",
      "Job ids increase in file order (SWF numbers jobs in submit order).")
def job_id_order(ctx: Context) -> None:
    ctx.require_jobs(2)
    ids = ctx.job_ids
    bad = np.zeros(ctx.n, bool)
    bad[1:] = ids[1:] < ids[:-1]
    ctx.flag(bad, "job_id", lambda i: f"job id {ids[i]} follows job id {ids[i - 1]}",
             value=ids, expected=lambda i: f"> {ids[i - 1]}")


@rule("job-id-gaps", "info", "order",
      "Gaps in the job numbering (legal in cleaned logs, which keep the original numbers): one "
      "finding with the number of missing ids and the first gaps.")
def job_id_gaps(ctx: Context) -> None:
    ctx.require_jobs(2)
    uniq = distinct(ctx.job_ids)
    step = np.diff(uniq)
    gap_at = np.flatnonzero(step > 1)
    if not len(gap_at):
        return
    missing = int((step[gap_at] - 1).sum())
    first = ", ".join(
        f"{uniq[g] + 1}" if step[g] == 2 else f"{uniq[g] + 1}..{uniq[g + 1] - 1}"
        for g in gap_at[:5])
    more = f", ... ({len(gap_at)} gaps)" if len(gap_at) > 5 else ""
    ctx.note(f"{missing} job ids missing between {uniq[0]} and {uniq[-1]}: {first}{more}",
             field="job_id", value=missing, expected="consecutive job ids (or a cleaning note)")


@rule("missing-values", "info", "time",
      "Unknown values (SWF -1, empty cells) counted per field; arithmetic never uses them.")
def missing_values(ctx: Context) -> None:
    ctx.require_jobs()
    if ctx.is_swf:
        columns = [(f.column, f.label) for f in FIELDS]
    else:
        # unknown by design: recorded_walltime_s wherever the log agrees with finish - start,
        # source_job_id wherever the scheduler's ids are plain unique integers
        columns = [(c, c) for c in ctx.table.column_names
                   if c not in SWF_ONLY and c not in ("recorded_walltime_s", "source_job_id")]
    for column, label in columns:
        unknown = ctx.table.column(column).null_count
        if column == "cpus" and unknown == ctx.n:
            continue  # a log that records no processor counts beside its GPUs (NQSII)
        if unknown:
            ctx.note(f"{label}: {unknown} of {ctx.n} values unknown"
                     + (" (-1)" if ctx.is_swf else ""), field=column, value=unknown,
                     expected="known values")


@rule("zero-runtime", "info", "time",
      "Jobs that completed with a run time of 0 s on some processors (legal, < 0.5 s after "
      "rounding, but counted: PWA's 'runtime 0 but not failed').")
def zero_runtime(ctx: Context) -> None:
    ctx.require("walltime_s")
    run, known = ctx.values("walltime_s")
    sel = known & (run == 0)
    gpus, gk = ctx.values("gpus")
    sel &= ~gk | (gpus > 0)
    if ctx.has("termcode"):
        term, tk = ctx.values("termcode")
        sel &= ~tk | (term == 0)
    elif ctx.has("swf_status"):
        status, sk = ctx.swf_status
        sel &= ~sk | (status == 1)
    rows = np.flatnonzero(sel)
    if len(rows):
        lines = ", ".join(str(int(x)) for x in ctx.lines[rows[:5]])
        ctx.note(f"{len(rows)} completed jobs ran 0 s (first on {ctx.line_word}s {lines})",
                 field="walltime_s", value=len(rows), expected="run times > 0")


SENTINEL_S = 2 * 86_400


@rule("sentinel-timestamp", "warning", "time",
      "Absolute times within two days of the epoch (1970-01-01) are epoch-0 sentinels rendered as "
      "dates, not real instants: treat them as unknown.")
def sentinel_timestamp(ctx: Context) -> None:
    if ctx.is_swf and ctx.meta.get("swf_time_origin") is None:
        raise NotApplicable("SWF times are offsets (no UnixStartTime)")
    for column in ("submit_time", "start_time", "finish_time"):
        values, known = ctx.values(column)
        bad = known & (values < SENTINEL_S)
        ctx.flag(bad, column, f"{column} lies at the epoch (1970-01-01): a sentinel, not a time",
                 value=values, expected="a real instant, or unknown")
