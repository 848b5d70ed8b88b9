"""Benchmark ``telemetry attach --engine dask`` on ABCI-size per-minute telemetry.

Site: ABCI-like, ``--nodes`` x ``--gpus`` (default 1,088 x 4). Data (cached under
benchmarks/.cache/telemetry-dask-*/, generated day by day with DuckDB, never held whole): one
Parquet long table per UTC day, rows in ts order, 0.5 % of samples dropped, 4 GPU metrics
(gpu_util_pct, gpu_mem_used_mib, gpu_power_w, and the gpu_energy_j counter, whose increments
reach back across midnight) and node_power_w per node; the job table: per node either
whole-node 4-GPU jobs (a quarter of the nodes, mean 6 h) or back-to-back single-GPU jobs (mean
2 h, mean gap 20 min), with the allocation table job_id, node, gpu_index. A full year at
1,088 x 4 is 2.29e9 samples per GPU metric: too much for a 2-core machine in a benchmark run,
so the default is one week; the full-year figure printed is an extrapolation, labelled as such.

Each engine runs in its own subprocess:
* dask:   a LocalCluster of ``--workers`` processes (1 thread each, 127.0.0.1, no dashboard,
          ``--worker-memory`` each: the day tasks' DuckDB takes 60 % of it), ``attach(...,
          engine='dask', scheduler=...)``; worker peak RSS (VmHWM) read with ``client.run``;
* duckdb: ``attach`` with its defaults (DuckDB memory limit 60 % of RAM, at most 2 GiB:
          ``engine.DEFAULT_MEMORY_CAP_MB``; ``--memory-limit`` sets another, e.g. ``14131MB``
          for the uncapped 60 % of a 23 GiB machine that peaked at 8.2 GiB here), same data,
          same process layout as bench_telemetry. Its peak RSS is the whole process's.

Goal: peak memory under 2 GiB per worker; the outputs of both engines are compared (bytes of
the CSV) to show they are the same table.

    .venv/bin/python benchmarks/bench_telemetry_dask.py                 # a week, 1,088 x 4
    .venv/bin/python benchmarks/bench_telemetry_dask.py --days 1        # quick look
    .venv/bin/python benchmarks/bench_telemetry_dask.py --days 365 --nodes 16   # a year, small
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

from _harness import peak_rss_mb, run_child

CACHE = Path(__file__).resolve().parent / ".cache"
T0 = 1_672_531_200  # 2023-01-01T00:00:00Z, a UTC midnight
DAY = 86_400
GPU_METRICS = ("gpu_util_pct", "gpu_mem_used_mib", "gpu_power_w", "gpu_energy_j")
ABCI_NODES, ABCI_GPUS, YEAR_MIN = 1088, 4, 365 * 1440


def folder(days: int, nodes: int, gpus: int) -> Path:
    return CACHE / f"telemetry-dask-{nodes}x{gpus}-{days}d"


def generate(days: int, nodes: int, gpus: int) -> Path:
    """Write (once) one samples file per day, then the jobs and allocations."""
    import duckdb

    out = folder(days, nodes, gpus)
    days_dir = out / "samples"
    days_dir.mkdir(parents=True, exist_ok=True)
    per_minute = nodes * gpus
    con = duckdb.connect()
    con.execute("SET threads = 2")
    con.execute("SET memory_limit = '2GB'")
    for d in range(days):
        path = days_dir / f"day-{d:03d}.parquet"
        if path.exists():
            continue
        slots = per_minute + nodes  # each minute: every GPU, then every node
        first = d * 1440 * slots  # global row number of the day's first row
        tmp = path.with_suffix(".tmp")
        # Row i: minute i // slots, slot i % slots (GPU, then node rows): range order is ts
        # order. Energy (J) is a per-GPU counter: an offset plus the minute times an average
        # power, plus jitter below one increment.
        con.execute(f"""
            COPY (
                SELECT ts, node, gpu_index,
                       unnest(CASE WHEN is_gpu THEN ['gpu_util_pct', 'gpu_mem_used_mib',
                                                     'gpu_power_w', 'gpu_energy_j']
                                   ELSE ['node_power_w'] END) AS metric,
                       unnest(CASE WHEN is_gpu THEN [util, mem, 25.0 + 2.2 * util,
                                                     1e6 * slot + 9000.0 * minute + (i * 7919) % 4000]
                                   ELSE [400.0 + (i * 31) % 1200] END) AS value
                FROM (
                    SELECT i, i // {slots} AS minute, i % {slots} AS slot,
                           i % {slots} < {per_minute} AS is_gpu,
                           CAST({T0} + (i // {slots}) * 60 AS DOUBLE) AS ts,
                           'node' || lpad(CAST(CASE WHEN i % {slots} < {per_minute}
                                                    THEN (i % {slots}) // {gpus}
                                                    ELSE i % {slots} - {per_minute} END
                                               AS VARCHAR), 4, '0') AS node,
                           CASE WHEN i % {slots} < {per_minute}
                                THEN CAST(i % {gpus} AS INTEGER) END AS gpu_index,
                           CAST((i * 2654435761) % 101 AS DOUBLE) AS util,
                           CAST((i * 40503) % 16281 AS DOUBLE) AS mem
                    FROM range({first}, {first + 1440 * slots}) r(i)
                    WHERE hash(i) % 200 <> 7)
            ) TO '{tmp}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)""")
        tmp.rename(path)
        print(f"  generated day {d + 1}/{days}", flush=True)
    if not (out / "alloc.parquet").exists():
        _jobs(out, days, nodes, gpus)
    return out


def _jobs(out: Path, days: int, nodes: int, gpus: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(15)
    end_s = T0 + days * DAY
    starts, finishes, width, a_job, a_node, a_gpu = [], [], [], [], [], []

    def add(t: int, run: int, node: int, gpu_list: list[int]) -> None:
        job = len(starts)
        starts.append(t)
        finishes.append(min(t + run, end_s))
        width.append(len(gpu_list))
        for g in gpu_list:
            a_job.append(job), a_node.append(node), a_gpu.append(g)

    for n in range(nodes):
        streams = [list(range(gpus))] if n % 4 == 0 else [[g] for g in range(gpus)]
        mean = 6 * 3600 if n % 4 == 0 else 2 * 3600
        for gpu_list in streams:
            t = T0 + int(rng.integers(0, 3600))
            while t < end_s:
                run = max(60, int(rng.exponential(mean)))
                add(t, run, n, gpu_list)
                t += run + int(rng.exponential(1200))
    order = np.argsort(np.array(starts), kind="stable")
    job_id = np.empty(len(starts), np.int64)
    job_id[order] = np.arange(1, len(starts) + 1)
    w = np.array(width)[order]
    pq.write_table(pa.table({"job_id": job_id[order], "nodes": np.ones(len(w), np.int64),
                             "gpus_per_node": w, "gpus": w,
                             "start_time": np.array(starts)[order],
                             "finish_time": np.array(finishes)[order]}), out / "jobs.parquet")
    pq.write_table(pa.table({"job_id": job_id[np.array(a_job)],
                             "node": [f"node{n:04d}" for n in a_node],
                             "gpu_index": np.array(a_gpu, np.int32)}), out / "alloc.parquet")


def _worker_peak_mb() -> float:
    return peak_rss_mb()  # runs inside each worker process (client.run)


def _cpu_s() -> float:
    """This process's CPU time (user + system), seconds."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_engine(out: Path, which: str, workers: int, worker_memory: str, gpus: int,
               memory_limit: str | None = None) -> dict:
    import pyarrow.parquet as pq

    from swftools import table as jt
    from swftools.telemetry import attach, write_table

    jobs = jt.from_columns({c: pq.read_table(out / "jobs.parquet").column(c) for c in
                            ("job_id", "nodes", "gpus_per_node", "gpus", "start_time", "finish_time")})
    samples = sorted((out / "samples").glob("day-*.parquet"))
    options = dict(metric_map=None, allocations=out / "alloc.parquet", gpus_per_node=gpus,
                   work_dir=out)
    result: dict = {}
    if which == "dask":
        from distributed import Client

        from swftools.telemetry.dask_engine import local_cluster

        t = time.perf_counter()
        cluster = local_cluster(workers, memory_limit=worker_memory)
        client = Client(cluster)
        result["cluster_start_s"] = time.perf_counter() - t
        t, cpu0, wcpu0 = time.perf_counter(), _cpu_s(), sum(client.run(_cpu_s).values())
        table = attach(jobs, samples, engine="dask", scheduler=cluster.scheduler_address, **options)
        result["seconds"] = time.perf_counter() - t
        result["cpu_s"] = _cpu_s() - cpu0 + sum(client.run(_cpu_s).values()) - wcpu0
        result["worker_peak_gib"] = sorted(v / 1024 for v in client.run(_worker_peak_mb).values())
        client.close()
        cluster.close()
    else:
        t, cpu0 = time.perf_counter(), _cpu_s()
        table = attach(jobs, samples, memory_limit=memory_limit, **options)
        result["seconds"] = time.perf_counter() - t
        result["cpu_s"] = _cpu_s() - cpu0
    csv = out / f"result-{which}.csv"
    csv.unlink(missing_ok=True)
    write_table(table, csv)
    result["sha256"] = hashlib.sha256(csv.read_bytes()).hexdigest()
    csv.unlink()
    observed = table.column("gpu_samples_observed").to_pylist()
    result.update(jobs=table.num_rows, gpu_samples_attributed=int(sum(v or 0 for v in observed)),
                  peak_rss_gib=peak_rss_mb() / 1024)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", type=int, default=7, help="simulated days (default: a week)")
    ap.add_argument("--nodes", type=int, default=ABCI_NODES)
    ap.add_argument("--gpus", type=int, default=ABCI_GPUS)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-memory", default="2GiB", help="memory limit of each Dask worker")
    ap.add_argument("--no-duckdb", action="store_true", help="skip the DuckDB engine run")
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask engine run")
    ap.add_argument("--memory-limit", help="DuckDB engine: its memory limit (default: attach's)")
    ap.add_argument("--child", choices=("dask", "duckdb"))
    args = ap.parse_args()
    out = folder(args.days, args.nodes, args.gpus)
    if args.child:
        print(json.dumps(run_engine(out, args.child, args.workers, args.worker_memory, args.gpus,
                                    args.memory_limit)))
        return
    t = time.perf_counter()
    generate(args.days, args.nodes, args.gpus)
    import pyarrow.parquet as pq

    files = sorted((out / "samples").glob("day-*.parquet"))
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    n_jobs = pq.ParquetFile(out / "jobs.parquet").metadata.num_rows
    size = sum(f.stat().st_size for f in files)
    print(f"data: {args.days} days x {args.nodes} nodes x {args.gpus} GPUs: {rows / 1e6:.1f} M "
          f"samples ({len(GPU_METRICS)} GPU metrics + node_power_w) in {len(files)} Parquet files "
          f"({size / 2**30:.2f} GiB), {n_jobs} jobs ({time.perf_counter() - t:.0f} s to generate "
          f"or load)", flush=True)
    common = ("--days", str(args.days), "--nodes", str(args.nodes), "--gpus", str(args.gpus),
              "--workers", str(args.workers), "--worker-memory", args.worker_memory)
    import os

    print(f"load average before the runs: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(other processes slow the wall times; CPU-seconds are steadier)", flush=True)
    dask = None if args.no_dask else run_child(__file__, "--child", "dask", *common)
    if dask is not None:
        peaks = ", ".join(f"{p:.2f}" for p in dask["worker_peak_gib"])
        print(f"dask   ({args.workers} workers): {dask['seconds']:7.1f} s  "
              f"{rows / dask['seconds'] / 1e6:6.2f} M samples/s  ({rows / dask['cpu_s'] / 1e6:.2f} "
              f"M per CPU-second, workers + coordinator)  worker peak RSS [{peaks}] GiB "
              f"({'under' if max(dask['worker_peak_gib']) < 2 else 'OVER'} 2 GiB)  coordinator "
              f"{dask['peak_rss_gib']:.2f} GiB  (+{dask['cluster_start_s']:.1f} s cluster start)",
              flush=True)
    if not args.no_duckdb:
        limit = ("--memory-limit", args.memory_limit) if args.memory_limit else ()
        duck = run_child(__file__, "--child", "duckdb", *common, *limit)
        print(f"duckdb (1 process, memory limit {args.memory_limit or 'default'}): "
              f"{duck['seconds']:7.1f} s  {rows / duck['seconds'] / 1e6:6.2f} M samples/s  "
              f"({rows / duck['cpu_s'] / 1e6:.2f} M per CPU-second)  peak RSS "
              f"{duck['peak_rss_gib']:.2f} GiB ({'under' if duck['peak_rss_gib'] < 4 else 'OVER'} "
              f"4 GiB)  output sha256 {duck['sha256'][:16]}")
        if dask is not None:
            print(f"same output bytes  : {dask['sha256'] == duck['sha256']} "
                  f"({dask['jobs']} jobs, {dask['gpu_samples_attributed'] / 1e6:.1f} M GPU "
                  f"samples attributed)")
    if dask is None:
        return
    per_day = rows / args.days * (ABCI_NODES * ABCI_GPUS) / (args.nodes * args.gpus)
    year = per_day * 365
    rate, cpu_rate = rows / dask["seconds"], rows / dask["cpu_s"]
    print(f"EXTRAPOLATION, not measured: a full ABCI year ({ABCI_NODES} x {ABCI_GPUS} GPUs, "
          f"{ABCI_GPUS * ABCI_NODES * YEAR_MIN / 1e9:.2f}e9 samples per GPU metric, {year / 1e9:.1f}e9 "
          f"rows as generated here) at this run's rate would take {year / rate / 3600:.1f} h on "
          f"{args.workers} workers of this machine, i.e. {year / cpu_rate / 3600:.0f} CPU-hours: "
          f"about {year / cpu_rate / 3600:.0f} h / W on W one-thread workers, since the day tasks "
          f"are independent (linear scaling assumed, not measured), plus the coordinator's "
          f"up-front checks (one read of every file's metric column) and the merge")


if __name__ == "__main__":
    main()
