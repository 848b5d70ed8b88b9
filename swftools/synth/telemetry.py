"""Deterministic telemetry fixtures for a job table, in every input format ``attach`` reads.

``generate_telemetry(jobs, out_dir)`` places the jobs on nodes and GPUs (first fit in start
order; multi-node and whole-node jobs take whole nodes), writes ``allocations.csv`` and
per-minute DCGM, node_exporter and ipmi_exporter samples with the usual defects: dropped scrapes,
an exporter restart (a gap of several minutes on one node) and a GPU energy-counter reset (a node
reboot). Formats: Prometheus ``query_range`` JSON chunks (resampled: gaps up to the 5-minute
lookback are filled with the last value, overlapping chunk edges), raw range-selector JSON,
text exposition 0.0.4 (ms), OpenMetrics (s), and the canonical long table as CSV and Parquet.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from swftools.errors import UsageError, plural
from swftools.fileio import gzip_writer

FORMATS = ("prometheus-json", "prometheus-json-raw", "prometheus-text", "openmetrics",
           "long-csv", "long-parquet")
LOOKBACK_S = 300  # Prometheus default lookback delta: query_range repeats a value this long
CHUNK_S = 6 * 3600
CPUS = 4
MODES = ("idle", "system", "user")
GIB = 2**30

# (source name, type, help) per exporter; values come from the arrays built in _simulate.
DCGM = (("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
        ("DCGM_FI_PROF_SM_ACTIVE", "gauge", "Ratio of cycles an SM has at least 1 warp assigned."),
        ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
        ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
        ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
         "Total energy consumption since boot (in mJ)."))
NODE = (("node_cpu_seconds_total", "counter", "Seconds the CPUs spent in each mode."),
        ("node_memory_MemTotal_bytes", "gauge", "Memory information field MemTotal_bytes."),
        ("node_memory_MemAvailable_bytes", "gauge", "Memory information field MemAvailable_bytes."),
        ("ipmi_dcmi_power_consumption_watts", "gauge", "Current power consumption in Watts."))


@dataclass
class Series:
    """One exported series: name, labels, and its samples (NaN = not scraped)."""

    name: str
    kind: str
    labels: dict[str, str]
    values: np.ndarray  # per grid minute; NaN where no sample exists
    exporter: str  # dcgm | node | ipmi (scrape target, for the raw timestamp offset)
    node_index: int


def place_jobs(jobs: pa.Table, nodes: int, gpus_per_node: int) -> list[tuple[int, int, int]]:
    """(job_id, node index, gpu index) for every job that fits, first fit in start order."""
    cols = {c: jobs.column(c).to_pylist() for c in
            ("job_id", "nodes", "gpus_per_node", "start_time", "finish_time")}
    order = sorted((s, j, i) for i, (s, j) in enumerate(zip(cols["start_time"], cols["job_id"]))
                   if s is not None and cols["finish_time"][i] is not None)
    busy_until = np.full((nodes, gpus_per_node), -math.inf)
    out = []
    for start, job_id, i in order:
        n_nodes = cols["nodes"][i] or 1
        per_node = cols["gpus_per_node"][i] or 1
        finish = cols["finish_time"][i]
        free = busy_until <= start
        if n_nodes > 1 or per_node >= gpus_per_node:
            whole = np.flatnonzero(free.all(axis=1))[:n_nodes]
            if len(whole) < n_nodes:
                continue
            picks = [(int(n), g) for n in whole for g in range(gpus_per_node)]
        else:
            fits = np.flatnonzero(free.sum(axis=1) >= per_node)
            if not len(fits):
                continue
            node = int(fits[0])
            picks = [(node, int(g)) for g in np.flatnonzero(free[node])[:per_node]]
        for n, g in picks:
            busy_until[n, g] = finish
            out.append((int(job_id), n, g))
    return sorted(out)


def node_name(index: int) -> str:
    return f"node{index + 1:03d}"


def _simulate(jobs: pa.Table, placement: list[tuple[int, int, int]], nodes: int,
              gpus_per_node: int, t0: int, minutes: int, interval_s: int, seed: int
              ) -> list[Series]:
    rng = np.random.default_rng(seed)
    job_ids = jobs.column("job_id").to_pylist()
    times = dict(zip(job_ids, zip(jobs.column("start_time").to_pylist(),
                                   jobs.column("finish_time").to_pylist())))
    level = {j: (float(rng.uniform(20, 95)), float(rng.uniform(1000, 15000))) for j in job_ids}
    job_at = np.full((nodes, gpus_per_node, minutes), -1, dtype=np.int64)
    grid = t0 + interval_s * np.arange(minutes)
    for job_id, n, g in placement:
        s, e = times[job_id]
        lo, hi = np.searchsorted(grid, s), np.searchsorted(grid, e)
        job_at[n, g, lo:hi] = job_id
    busy = job_at >= 0
    util_level = np.zeros(job_at.shape)
    mem_level = np.zeros(job_at.shape)
    for job_id in np.unique(job_at[busy]):
        mask = job_at == job_id
        util_level[mask], mem_level[mask] = level[int(job_id)]
    stall = rng.random(job_at.shape) < 0.1  # busy GPUs idle now and then (data loading)
    util = np.where(busy & ~stall, np.clip(np.rint(util_level + rng.normal(0, 8, job_at.shape)),
                                           1, 100), 0.0)
    mem = np.where(busy, np.rint(mem_level + rng.normal(0, 50, job_at.shape).clip(-200, 200)), 0.0)
    power = np.round(25 + 2.2 * util + rng.normal(0, 3, job_at.shape).clip(-9, 9), 2)
    sm = np.round(util / 100 * 0.8, 4)
    energy = np.cumsum(power * interval_s * 1000, axis=2) + np.rint(
        rng.uniform(1e8, 1e9, (nodes, gpus_per_node)))[:, :, None]
    reboot = int(minutes * 0.6)
    energy[0, :, reboot:] -= energy[0, :, reboot - 1][:, None]  # node 0 reboots: counter reset
    # Missing scrapes: 0.5 % per target and minute; an exporter restart on the last node.
    dcgm_ok = rng.random((nodes, minutes)) >= 0.005
    restart = int(minutes * 0.4)
    dcgm_ok[nodes - 1, restart:restart + 7] = False
    node_ok = rng.random((nodes, minutes)) >= 0.005
    series: list[Series] = []
    for n in range(nodes):
        host = node_name(n)
        for g in range(gpus_per_node):
            labels = {"gpu": str(g), "UUID": f"GPU-{n:04x}{g:04x}-0000-0000-0000-000000000000",
                      "device": f"nvidia{g}", "modelName": "Tesla P100-SXM2-16GB",
                      "Hostname": host, "instance": f"{host}:9400", "job": "dcgm"}
            for (name, kind, _), arr in zip(DCGM, (util, sm, mem, power, energy)):
                vals = np.where(dcgm_ok[n], arr[n, g], np.nan)
                series.append(Series(name, kind, dict(labels), vals, "dcgm", n))
        busy_share = busy[n].mean(axis=0)
        user = np.clip(0.08 + 0.7 * busy_share + rng.normal(0, 0.02, minutes), 0, 0.9)
        system = np.full(minutes, 0.04)
        for c in range(CPUS):
            per_mode = {"user": user, "system": system, "idle": 1 - user - system}
            for mode in MODES:
                inc = per_mode[mode] * interval_s
                start = float(np.rint(rng.uniform(1e5, 1e6)))
                vals = np.round(start + np.cumsum(inc), 2)
                vals = np.where(node_ok[n], vals, np.nan)
                series.append(Series("node_cpu_seconds_total", "counter",
                                     {"cpu": str(c), "mode": mode, "instance": f"{host}:9100",
                                      "job": "node"}, vals, "node", n))
        total = np.full(minutes, 256.0 * GIB)
        used = np.rint((8 + 20 * busy[n].sum(axis=0) / gpus_per_node * 8 +
                        rng.normal(0, 0.5, minutes)) * GIB)
        for name, vals in (("node_memory_MemTotal_bytes", total),
                           ("node_memory_MemAvailable_bytes", total - used)):
            series.append(Series(name, "gauge", {"instance": f"{host}:9100", "job": "node"},
                                 np.where(node_ok[n], vals, np.nan), "node", n))
        wall = np.round(200 + power[n].sum(axis=0) + rng.normal(0, 5, minutes), 1)
        series.append(Series("ipmi_dcmi_power_consumption_watts", "gauge",
                             {"instance": f"{host}:9290", "job": "ipmi"},
                             np.where(node_ok[n], wall, np.nan), "ipmi", n))
    return series


def _fmt(v: float) -> str:
    """Prometheus-style shortest number text."""
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))


def _offset_ms(s: Series) -> int:
    """Raw scrape phase of a target, in ms (deterministic per exporter and node)."""
    return {"dcgm": 117, "node": 243, "ipmi": 389}[s.exporter] + 7 * s.node_index


def _write_bytes(path: Path, data: bytes) -> None:
    if path.name.endswith(".gz"):
        with open(path, "wb") as raw, gzip_writer(raw) as gz:
            gz.write(data)
    else:
        path.write_bytes(data)


def _response(result: list[dict[str, Any]]) -> bytes:
    doc = {"status": "success", "data": {"resultType": "matrix", "result": result}}
    return json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()


def _resampled(values: np.ndarray, interval_s: int) -> np.ndarray:
    """What query_range returns on the scrape grid: the last sample within the lookback."""
    out = values.copy()
    last, last_i = np.nan, -10**9
    for i, v in enumerate(values):
        if not np.isnan(v):
            last, last_i = v, i
        elif (i - last_i) * interval_s <= LOOKBACK_S:
            out[i] = last
    return out


def _write_promjson(series: list[Series], out: Path, t0: int, interval_s: int, raw: bool) -> list[str]:
    out.mkdir()
    minutes = len(series[0].values)
    span = CHUNK_S // interval_s
    names = sorted({s.name for s in series})
    written = []
    for c, lo in enumerate(range(0, minutes, span)):
        hi = min(minutes, lo + span + (0 if raw else 1))  # query_range end is inclusive: overlap
        for k, name in enumerate(names):
            result = []
            for s in (s for s in series if s.name == name):
                vals = s.values if raw else _resampled(s.values, interval_s)
                idx = [i for i in range(lo, hi) if not np.isnan(vals[i])]
                if not idx:
                    continue
                if raw:
                    pts = [[round(t0 + i * interval_s + _offset_ms(s) / 1000, 3), _fmt(vals[i])]
                           for i in idx]
                else:
                    pts = [[t0 + i * interval_s, _fmt(vals[i])] for i in idx]
                result.append({"metric": {"__name__": name, **s.labels}, "values": pts})
            suffix = ".json.gz" if (c + k) % 2 else ".json"
            path = out / f"{name}.{c:03d}{suffix}"
            _write_bytes(path, _response(result))
            written.append(str(path))
    return written


def _label_text(labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{labels[k]}"' for k in sorted(labels))
    return "{" + inner + "}"


def _write_text(series: list[Series], path: Path, t0: int, interval_s: int, openmetrics: bool) -> None:
    lines = []
    by_name: dict[str, list[Series]] = {}
    for s in series:
        by_name.setdefault(s.name, []).append(s)
    helps = {n: (k, h) for n, k, h in DCGM + NODE}
    for name in sorted(by_name):
        kind, help_text = helps[name]
        family = name[:-6] if openmetrics and kind == "counter" and name.endswith("_total") else name
        sample_name = f"{family}_total" if openmetrics and kind == "counter" else name
        lines.append(f"# HELP {family} {help_text}")
        lines.append(f"# TYPE {family} {kind}")
        for s in by_name[name]:
            labels = _label_text(s.labels)
            for i in np.flatnonzero(~np.isnan(s.values)):
                ms = (t0 + int(i) * interval_s) * 1000 + _offset_ms(s)
                stamp = f"{ms // 1000}.{ms % 1000:03d}" if openmetrics else str(ms)
                lines.append(f"{sample_name}{labels} {_fmt(s.values[i])} {stamp}")
    if openmetrics:
        lines.append("# EOF")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def long_table(series: list[Series], t0: int, interval_s: int) -> pa.Table:
    """The canonical long table of the fixture (canonical names and units, no gaps filled)."""
    scale = {"DCGM_FI_DEV_GPU_UTIL": ("gpu_util_pct", 1.0), "DCGM_FI_PROF_SM_ACTIVE":
             ("gpu_sm_active_pct", 100.0), "DCGM_FI_DEV_FB_USED": ("gpu_mem_used_mib", 1.0),
             "DCGM_FI_DEV_POWER_USAGE": ("gpu_power_w", 1.0),
             "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": ("gpu_energy_j", 0.001),
             "node_memory_MemTotal_bytes": ("node_mem_total_gib", 1 / GIB),
             "node_memory_MemAvailable_bytes": ("node_mem_available_gib", 1 / GIB),
             "ipmi_dcmi_power_consumption_watts": ("node_power_w", 1.0)}
    cols: dict[str, list] = {"ts": [], "node": [], "gpu_index": [], "metric": [], "value": []}
    cpu: dict[tuple[int, str], np.ndarray] = {}
    for s in series:
        if s.name == "node_cpu_seconds_total":
            for metric in ("node_cpu_total_s",) + (("node_cpu_idle_s",) if s.labels["mode"] == "idle" else ()):
                key = (s.node_index, metric)
                cpu[key] = cpu.get(key, 0) + s.values
            continue
        metric, k = scale[s.name]
        _append(cols, s.values * k, t0, interval_s, node_name(s.node_index),
                int(s.labels["gpu"]) if "gpu" in s.labels else None, metric)
    for (n, metric), vals in sorted(cpu.items()):
        _append(cols, np.round(vals, 2), t0, interval_s, node_name(n), None, metric)
    table = pa.table({"ts": pa.array(cols["ts"], pa.int64()), "node": cols["node"],
                      "gpu_index": pa.array(cols["gpu_index"], pa.int32()),
                      "metric": cols["metric"], "value": pa.array(cols["value"], pa.float64())})
    order = np.lexsort((np.array(cols["metric"]), np.array(cols["gpu_index"], dtype=float),
                        np.array(cols["node"]), np.array(cols["ts"])))
    return table.take(pa.array(order))


def _append(cols, values, t0, interval_s, node, gpu, metric) -> None:
    idx = np.flatnonzero(~np.isnan(values))
    cols["ts"].extend((t0 + idx * interval_s).tolist())
    cols["node"].extend([node] * len(idx))
    cols["gpu_index"].extend([gpu] * len(idx))
    cols["metric"].extend([metric] * len(idx))
    cols["value"].extend(values[idx].tolist())


def generate_telemetry(jobs: pa.Table, out_dir: str | Path, *,
                       formats: Sequence[str] = FORMATS, seed: int = 0, interval_s: int = 60,
                       nodes: int | None = None, gpus_per_node: int = 8,
                       days: float | None = None) -> dict[str, Any]:
    """Write fixtures for ``jobs`` into the new directory ``out_dir``; returns what was written.

    Samples cover the jobs' span (or its first ``days`` days) on ``nodes`` nodes (default: the
    table's synth metadata, else 38) of ``gpus_per_node`` GPUs.
    """
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise UsageError(f"unknown fixture {plural(len(unknown), 'format')} {', '.join(unknown)} (choose from {', '.join(FORMATS)})")
    out = Path(out_dir)
    if out.exists():
        raise UsageError(f"{out}: already exists")
    if interval_s < 1 or gpus_per_node < 1:
        raise UsageError("interval_s and gpus_per_node must be positive")
    from swftools import table as jt

    nodes = nodes or int(jt.get_metadata(jobs).get("synth", {}).get("nodes", 38))
    starts = [s for s in jobs.column("start_time").to_pylist() if s is not None]
    finishes = [f for f in jobs.column("finish_time").to_pylist() if f is not None]
    if not starts:
        raise UsageError("the job table has no started jobs")
    t0 = min(starts) // interval_s * interval_s
    t1 = -(-max(finishes) // interval_s) * interval_s
    if days is not None:
        t1 = min(t1, t0 + int(days * 86400))
    minutes = max(1, (t1 - t0) // interval_s)
    placement = place_jobs(jobs, nodes, gpus_per_node)
    series = _simulate(jobs, placement, nodes, gpus_per_node, t0, minutes, interval_s, seed)
    from swftools.atomic import atomic_dir

    with atomic_dir(out) as tmp:
        written = _write_all(series, placement, tmp, t0, minutes, interval_s, formats)
    written = {k: (v.replace(str(tmp), str(out)) if isinstance(v, str) else
                   [p.replace(str(tmp), str(out)) for p in v] if isinstance(v, list) else v)
               for k, v in written.items()}
    written.update(nodes=nodes, gpus_per_node=gpus_per_node,
                   placed_jobs=len({j for j, _, _ in placement}))
    return written


def _write_all(series: list[Series], placement: list[tuple[int, int, int]], out: Path,
               t0: int, minutes: int, interval_s: int, formats: Sequence[str]) -> dict[str, Any]:
    (out / "allocations.csv").write_text(
        "job_id,node,gpu_index\n" + "".join(f"{j},{node_name(n)},{g}\n" for j, n, g in placement),
        encoding="utf-8")
    written: dict[str, Any] = {"allocations": str(out / "allocations.csv"), "t0": t0,
                               "minutes": minutes}
    if "prometheus-json" in formats:
        written["prometheus-json"] = _write_promjson(series, out / "prometheus-json", t0,
                                                     interval_s, raw=False)
    if "prometheus-json-raw" in formats:
        written["prometheus-json-raw"] = _write_promjson(series, out / "prometheus-json-raw", t0,
                                                         interval_s, raw=True)
    if "prometheus-text" in formats:
        _write_text(series, out / "telemetry.prom", t0, interval_s, openmetrics=False)
        written["prometheus-text"] = str(out / "telemetry.prom")
    if "openmetrics" in formats:
        _write_text(series, out / "telemetry.om", t0, interval_s, openmetrics=True)
        written["openmetrics"] = str(out / "telemetry.om")
    if "long-csv" in formats or "long-parquet" in formats:
        table = long_table(series, t0, interval_s)
        if "long-csv" in formats:
            import pyarrow.csv as pacsv

            pacsv.write_csv(table, out / "telemetry-long.csv")
            written["long-csv"] = str(out / "telemetry-long.csv")
        if "long-parquet" in formats:
            pq.write_table(table, out / "telemetry-long.parquet", compression="zstd")
            written["long-parquet"] = str(out / "telemetry-long.parquet")
    return written
