"""Benchmark ``swftools.telemetry.attach`` against a hand-written DuckDB ASOF query.

Data (cached under benchmarks/.cache/, generated with DuckDB in a minute or two):
40 nodes x 8 GPUs x 180 days at 1 minute, 0.5 % of samples dropped (about 82.5 M samples), 3
metrics (gpu_util_pct, gpu_mem_used_mib, gpu_power_w) as the canonical long table in Parquet
(one row per metric: about 247.6 M rows, sorted by ts), and back-to-back single-GPU jobs (mean
2 h, mean gap 30 min; about 550 k jobs) with their allocation table.

Each contender runs in its own subprocess (peak RSS = the child's VmHWM):
* hand:   ``read_parquet ASOF JOIN alloc ON node, gpu, ts >= start WHERE ts < end GROUP BY job,
          metric`` with count/sum/min/max, DuckDB defaults (no memory limit set, one query);
* attach: ``swftools.telemetry.attach`` with its defaults (memory limit 60 % of RAM, at
          most 2 GiB, day partitions staged one day at a time, duplicate resolution,
          validation, exact integer sums, output table).

Target: attach within 1.5x of the hand query's time, peak memory under 2 GiB.

    /tmp/venv/bin/python benchmarks/bench_telemetry.py            # full size
    /tmp/venv/bin/python benchmarks/bench_telemetry.py --days 10  # quick look
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _harness import peak_rss_mb, run_child

CACHE = Path(__file__).resolve().parent / ".cache"
T0 = 1_500_000_000 // 86400 * 86400  # a UTC midnight in July 2017
METRICS = ("gpu_util_pct", "gpu_mem_used_mib", "gpu_power_w")


def paths(days: int, nodes: int, gpus: int) -> dict[str, Path]:
    stem = f"telemetry-{nodes}x{gpus}-{days}d"
    return {"samples": CACHE / f"{stem}-samples.parquet", "jobs": CACHE / f"{stem}-jobs.parquet",
            "alloc": CACHE / f"{stem}-alloc.parquet"}


def generate(days: int, nodes: int, gpus: int) -> dict[str, Path]:
    """Write (once) the samples, jobs and allocations of the benchmark."""
    import duckdb
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = paths(days, nodes, gpus)
    CACHE.mkdir(exist_ok=True)
    if all(f.exists() for f in p.values()):
        return p
    per_minute = nodes * gpus
    total = days * 1440 * per_minute
    con = duckdb.connect()
    tmp = p["samples"].with_suffix(".tmp")
    # Row i is minute i // per_minute, GPU i % per_minute; rows come out in range order (ts order).
    con.execute(f"""
        COPY (
            SELECT ts, node, gpu_index, unnest(['{METRICS[0]}', '{METRICS[1]}', '{METRICS[2]}']) AS metric,
                   unnest([util, mem, 25.0 + 2.2 * util]) AS value
            FROM (
                SELECT CAST({T0} + (i // {per_minute}) * 60 AS DOUBLE) AS ts,
                       'node' || lpad(CAST((i % {per_minute}) // {gpus} AS VARCHAR), 3, '0') AS node,
                       CAST(i % {gpus} AS INTEGER) AS gpu_index,
                       CAST((i * 2654435761) % 101 AS DOUBLE) AS util,
                       CAST((i * 40503) % 16281 AS DOUBLE) AS mem
                FROM range({total}) r(i)
                WHERE hash(i) % 200 <> 7)
        ) TO '{tmp}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)""")
    tmp.rename(p["samples"])
    rng = np.random.default_rng(7)
    job_ids, starts, finishes, alloc_node, alloc_gpu = [], [], [], [], []
    end_s = T0 + days * 86400
    for n in range(nodes):
        for g in range(gpus):
            t = T0 + int(rng.integers(0, 3600))
            while t < end_s:
                run = max(60, int(rng.exponential(7200)))
                starts.append(t)
                finishes.append(min(t + run, end_s))
                alloc_node.append(f"node{n:03d}")
                alloc_gpu.append(g)
                t += run + int(rng.exponential(1800))
    order = np.argsort(np.array(starts), kind="stable")
    job_ids = np.arange(1, len(starts) + 1)
    starts, finishes = np.array(starts)[order], np.array(finishes)[order]
    ones = np.ones(len(job_ids), dtype=np.int64)
    pq.write_table(pa.table({"job_id": job_ids, "nodes": ones, "gpus_per_node": ones, "gpus": ones,
                             "start_time": starts, "finish_time": finishes}), p["jobs"])
    pq.write_table(pa.table({"job_id": job_ids, "node": np.array(alloc_node)[order],
                             "gpu_index": np.array(alloc_gpu, dtype=np.int32)[order]}), p["alloc"])
    return p


HAND_SQL = """
    SELECT a.job_id, s.metric, count(*) AS n, sum(s.value) AS total, min(s.value) AS lo,
           max(s.value) AS hi
    FROM read_parquet('{samples}') s
    ASOF JOIN alloc a ON s.node = a.node AND s.gpu_index = a.gpu_index AND s.ts >= a.start_s
    WHERE s.ts < a.end_s
    GROUP BY a.job_id, s.metric"""


def run_hand(p: dict[str, Path]) -> dict:
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    t = time.perf_counter()
    con.execute(f"""CREATE TABLE alloc AS SELECT a.job_id, a.node, a.gpu_index,
                    j.start_time AS start_s, j.finish_time AS end_s
                    FROM read_parquet('{p['alloc']}') a JOIN read_parquet('{p['jobs']}') j USING (job_id)""")
    rows = con.execute(f"SELECT count(*), sum(n) FROM ({HAND_SQL.format(samples=p['samples'])})").fetchone()
    return {"seconds": time.perf_counter() - t, "groups": rows[0], "samples_joined": int(rows[1])}


def run_attach(p: dict[str, Path]) -> dict:
    import pyarrow.parquet as pq

    from swftools import table as jt
    from swftools.telemetry import attach

    jobs = jt.from_columns({c: pq.read_table(p["jobs"]).column(c) for c in
                            ("job_id", "nodes", "gpus_per_node", "gpus", "start_time", "finish_time")})
    t = time.perf_counter()
    out = attach(jobs, [p["samples"]], metric_map=None, allocations=p["alloc"], gpus_per_node=8,
                 work_dir=CACHE)
    seconds = time.perf_counter() - t
    observed = out.column("gpu_samples_observed").to_pylist()
    return {"seconds": seconds, "jobs": out.num_rows,
            "samples_joined": int(sum(v or 0 for v in observed))}


def child(which: str, days: int, nodes: int, gpus: int) -> dict:
    """Run one contender in a fresh interpreter; add its peak RSS."""
    return run_child(__file__, "--child", which, "--days", str(days), "--nodes", str(nodes),
                     "--gpus", str(gpus))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", type=int, default=180)
    ap.add_argument("--nodes", type=int, default=40)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--child", choices=("hand", "attach"))
    args = ap.parse_args()
    p = paths(args.days, args.nodes, args.gpus)
    if args.child:
        result = (run_hand if args.child == "hand" else run_attach)(p)
        result["peak_rss_gib"] = peak_rss_mb() / 1024
        print(json.dumps(result))
        return
    t = time.perf_counter()
    generate(args.days, args.nodes, args.gpus)
    import pyarrow.parquet as pq

    rows = pq.ParquetFile(p["samples"]).metadata.num_rows
    print(f"data: {rows / 1e6:.1f} M rows = {rows / 3e6:.1f} M samples x 3 metrics, "
          f"{pq.ParquetFile(p['jobs']).metadata.num_rows} jobs "
          f"({time.perf_counter() - t:.0f} s to generate or load)")
    hand = child("hand", args.days, args.nodes, args.gpus)
    att = child("attach", args.days, args.nodes, args.gpus)
    print(f"hand DuckDB ASOF query : {hand['seconds']:7.1f} s  peak {hand['peak_rss_gib']:.2f} GiB  "
          f"({hand['samples_joined'] / 3e6:.1f} M samples joined)")
    print(f"swftools attach        : {att['seconds']:7.1f} s  peak {att['peak_rss_gib']:.2f} GiB  "
          f"({att['samples_joined'] / 1e6:.1f} M GPU samples attributed)")
    ratio = att["seconds"] / hand["seconds"]
    print(f"ratio attach / hand    : {ratio:.2f}x (target <= 1.5x); attach peak "
          f"{'under' if att['peak_rss_gib'] < 2 else 'OVER'} 2 GiB")


if __name__ == "__main__":
    main()
