"""Workload anomalies the archive documents when it cleans logs: flurries and duplicate records."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from swftools.validate.context import Context
from swftools.validate.registry import NotApplicable, rule
from swftools.validate.rules_capacity import when

_MIX = np.uint64(0x9E3779B97F4A7C15)


def _codes(ctx: Context, column: str) -> tuple[np.ndarray, np.ndarray]:
    """(integer codes, known) of any column: dictionary codes for strings, values for numbers."""
    col = ctx.table.column(column)
    if pa.types.is_string(col.type):
        enc = pc.dictionary_encode(col).combine_chunks() if isinstance(col, pa.ChunkedArray) \
            else pc.dictionary_encode(col)
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
    all_times = np.sort(submit[np.flatnonzero(sk)])
    # merge each user's overlapping hot windows [t, t + window) into bursts
    hot_idx = np.flatnonzero(hot)
    ends = np.searchsorted(key, key[hot_idx] + opts.flurry_window_s, side="left")
    bursts: list[tuple[int, int]] = []
    for start, end in zip(hot_idx.tolist(), ends.tolist()):
        if bursts and start < bursts[-1][1] and users[rows[start]] == users[rows[bursts[-1][0]]]:
            bursts[-1] = (bursts[-1][0], max(bursts[-1][1], end))
        else:
            bursts.append((start, end))
    found = []
    for start, end in bursts:
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
                 f"lines {ctx.lines[row]}..{ctx.lines[int(rows[end - 1])]})", row=row,
                 field="user", value=mine, expected=f"< {opts.flurry_min_jobs} jobs per "
                 f"{opts.flurry_window_s} s, or a cleaned log")
    if len(found) > cap:
        ctx.note(f"{len(found) - cap} more flurries", field="user", value=len(found) - cap)


@rule("duplicate-record", "warning", "anomaly",
      "Records identical in every field but the job id (same user, submit time, resources, times): "
      "the same job logged twice.")
def duplicate_record(ctx: Context) -> None:
    ctx.require("submit_time")
    columns = [c for c in ctx.table.column_names
               if c != "job_id" and ctx.table.column(c).null_count < ctx.n]
    _, sk = ctx.values("submit_time")
    coded = [_codes(ctx, c) for c in columns]
    h = np.zeros(ctx.n, np.uint64)
    with np.errstate(over="ignore"):
        for values, known in coded:
            v = np.where(known, values, np.int64(-7_777_777_777)).astype(np.uint64)
            h = (h ^ v) * _MIX
            h ^= h >> np.uint64(29)
    rows = np.flatnonzero(sk)
    order = rows[np.argsort(h[rows], kind="stable")]
    same = h[order][1:] == h[order][:-1]
    if not same.any():
        return
    first, later = order[:-1][same], order[1:][same]
    exact = np.ones(len(first), bool)
    for values, known in coded:  # confirm hash matches column by column
        exact &= (known[first] == known[later]) & (~known[first] | (values[first] == values[later]))
    pairs = sorted(zip(np.maximum(first, later)[exact].tolist(),
                       np.minimum(first, later)[exact].tolist()))
    if not pairs:
        return
    dup = np.array([p[0] for p in pairs], np.int64)
    original = dict(pairs)
    ids = ctx.job_ids
    ctx.flag(dup, "job_id", lambda i: f"same record as job {ids[original[i]]} (line "
             f"{ctx.lines[original[i]]}) in every field but the job id", value=ids,
             expected="a distinct record")
