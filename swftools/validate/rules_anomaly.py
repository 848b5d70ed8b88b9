"""Workload anomalies the archive documents when it cleans logs: flurries and duplicate records."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools.validate.context import Context
from swftools.validate.registry import rule
from swftools.validate.rules_capacity import when

_MIX = np.uint64(0x9E3779B97F4A7C15)


def _codes(ctx: Context, column: str) -> tuple[np.ndarray, np.ndarray]:
    """(integer codes, known) of any column: dictionary codes for strings, values for numbers."""
    if pa.types.is_string(ctx.table.column(column).type):
        enc = pc.dictionary_encode(ctx.column(column))
        known = np.asarray(pc.is_valid(enc.indices), bool)
        return pc.fill_null(enc.indices, 0).to_numpy(zero_copy_only=False).astype(np.int64), known
    values, known = ctx.values(column)
    if values.dtype.kind == "f":
        values = values.view(np.int64)
    return values.astype(np.int64, copy=False), known


@rule("flurry", "warning", "anomaly",
      "Workload flurries: one user submitting at least --flurry-jobs jobs (default 1000) within "
      "--flurry-window seconds (default 86400) that are at least --flurry-share (default 0.5) of "
      "all submissions in that period; one finding per burst.")
def flurry(ctx: Context) -> None:
    ctx.require("user", "submit_time")
    opts = ctx.options
    users, uk = _codes(ctx, "user")
    submit, sk = ctx.values("submit_time")
    rows = np.flatnonzero(uk & sk)
    if len(rows) < opts.flurry_min_jobs:
        return
    t0 = int(submit[rows].min())
    key = users[rows] * (1 << 34) + (submit[rows] - t0)
    order = np.argsort(key, kind="stable")
    rows, key = rows[order], key[order]
    in_window = np.searchsorted(key, key + opts.flurry_window_s, side="left") - np.arange(len(key))
    hot = in_window >= opts.flurry_min_jobs
    if not hot.any():
        return
    all_times = np.sort(submit[sk])
    # merge overlapping hot windows [key, key + window) into bursts; keys of different users are
    # 2**34 s apart, so windows never merge across users
    hot_idx = np.flatnonzero(hot)
    window_end = key[hot_idx] + opts.flurry_window_s
    reach = np.maximum.accumulate(window_end)
    new_burst = np.r_[True, key[hot_idx[1:]] >= reach[:-1]]
    first_hot = hot_idx[new_burst]
    burst_end_key = np.maximum.reduceat(window_end, np.flatnonzero(new_burst))
    ends = np.searchsorted(key, burst_end_key, side="left")
    found = []
    for start, end in zip(first_hot.tolist(), ends.tolist()):
        first, last = int(submit[rows[start]]), int(submit[rows[end - 1]])
        mine = end - start
        total = int(np.searchsorted(all_times, last, side="right")
                    - np.searchsorted(all_times, first, side="left"))
        if mine / total >= opts.flurry_min_share:
            found.append((start, end, first, last, mine, total))
    user_col = ctx.strings("user")
    cap = opts.max_intervals
    for start, end, first, last, mine, total in found[:cap]:
        row = int(rows[start])
        ctx.note(f"user {user_col[row].as_py()} submitted {mine} jobs in {last - first} s from "
                 f"{when(ctx, first)} ({100 * mine / total:.0f}% of the {total} submissions then; "
                 f"{ctx.line_word}s {ctx.lines[row]}..{ctx.lines[int(rows[end - 1])]})", row=row,
                 field="user", value=mine, expected=f"< {opts.flurry_min_jobs} jobs per "
                 f"{opts.flurry_window_s} s, or a cleaned log")
    if len(found) > cap:
        ctx.note(f"{len(found) - cap} more flurries", field="user", value=len(found) - cap)


def _neighbours(order: np.ndarray, coded: list, same: np.ndarray) -> tuple[np.ndarray, ...]:
    """(earlier, later, identical) of the rows next to each other in ``order`` where ``same``."""
    first, later = order[:-1][same], order[1:][same]
    exact = np.ones(len(first), bool)
    for values, known in coded:
        exact &= (known[first] == known[later]) & (~known[first] | (values[first] == values[later]))
    return first, later, exact


def exact_duplicates(ctx: Context) -> dict[int, int]:
    """{row: earlier identical row} for records equal to an earlier one in every column."""
    if "duplicates" in ctx.memo:
        return ctx.memo["duplicates"]
    columns = [c for c in ctx.table.column_names if ctx.table.column(c).null_count < ctx.n]
    coded = [_codes(ctx, c) for c in columns]
    h = np.zeros(ctx.n, np.uint64)
    with np.errstate(over="ignore"):
        for values, known in coded:
            v = np.where(known, values, np.int64(-7_777_777_777)).astype(np.uint64)
            h = (h ^ v) * _MIX
            h ^= h >> np.uint64(29)
    order = np.argsort(h, kind="stable")
    first, later, exact = _neighbours(order, coded, h[order][1:] == h[order][:-1])
    if not exact.all():
        # a hash collision, which may also part two identical rows: sort by the fields themselves
        order = np.lexsort([x for values, known in coded for x in (np.where(known, values, 0), known)])
        first, later, exact = _neighbours(order, coded, np.ones(ctx.n - 1, bool))
    found = dict(zip(later[exact].tolist(), first[exact].tolist()))
    ctx.memo["duplicates"] = found
    return found


@rule("duplicate-record", "warning", "anomaly",
      "A record repeated verbatim (identical in every field, job id included): the same job "
      "logged twice, to be dropped when cleaning. Distinct jobs of a bulk submission may share "
      "every other field, so only verbatim repeats count; job-id-unique leaves them to this rule.")
def duplicate_record(ctx: Context) -> None:
    ctx.require_jobs()
    found = exact_duplicates(ctx)
    if not found:
        return
    dup = np.array(sorted(found), np.int64)
    ctx.flag(dup, "job_id", lambda i: f"repeats {ctx.line_word} {ctx.lines[found[i]]} verbatim",
             value=ctx.job_ids, expected="each record once")
