"""Telemetry strategies under development (moved into strategies.py at the end)."""

from __future__ import annotations

from hypothesis import strategies as st

from swftools import table as jt


# --- telemetry (issue 7) -------------------------------------------------------------------------

TELEMETRY_T0 = 1_700_006_400  # a UTC midnight


@st.composite
def telemetry_cases(draw, max_jobs: int = 8, gpus_per_node: int = 2, nodes: int = 2):
    """A small cluster's jobs, allocations and long-table samples for the telemetry join.

    Returns ``(jobs, allocation_rows, samples)``: a canonical job table; ``(job_id, node,
    gpu_index | None)`` rows (GPU-level jobs never overlap on a GPU; whole-node jobs give
    ``None`` indices; some partial-node jobs give ``None`` too, i.e. indices unknown); and a
    dict of long-table columns (ts, node, gpu_index, metric, value) over up to two days, with
    dropped samples, off-grid timestamps and GPU energy-counter resets.
    """
    import numpy as np

    n_jobs = draw(st.integers(1, max_jobs))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    free = {(n, g): TELEMETRY_T0 + int(rng.integers(0, 3600)) for n in range(nodes)
            for g in range(gpus_per_node)}
    jobs = {c: [] for c in ("job_id", "nodes", "gpus_per_node", "gpus", "start_time", "finish_time")}
    alloc = []
    for job_id in range(1, n_jobs + 1):
        kind = draw(st.sampled_from(["gpu", "gpu", "whole", "unknown"]))
        node = int(rng.integers(0, nodes))
        if kind == "whole":
            gpus = [(node, g) for g in range(gpus_per_node)]
        else:
            gpus = [(node, int(rng.integers(0, gpus_per_node)))]
        start = max(free[k] for k in gpus) + int(rng.integers(0, 4000))
        finish = start + draw(st.sampled_from([0, 59, 60, 61, 3600, 7261, 30000, 90000]))
        if kind != "unknown":
            for k in gpus:
                free[k] = finish
        jobs["job_id"].append(job_id)
        jobs["nodes"].append(1)
        jobs["gpus_per_node"].append(len(gpus))
        jobs["gpus"].append(len(gpus))
        jobs["start_time"].append(start)
        jobs["finish_time"].append(finish)
        for n, g in gpus:
            alloc.append((job_id, f"n{n}", None if kind in ("whole", "unknown") else g))
        if kind == "whole":
            alloc = list(dict.fromkeys(alloc))
    horizon = max(max(jobs["finish_time"]), TELEMETRY_T0 + 3600) + 600
    minutes = (horizon - TELEMETRY_T0) // 60
    offset = draw(st.sampled_from([0.0, 0.25]))
    cols = {"ts": [], "node": [], "gpu_index": [], "metric": [], "value": []}

    def add(ts, node, gpu, metric, values):
        cols["ts"].extend(ts.tolist())
        cols["node"].extend([node] * len(ts))
        cols["gpu_index"].extend([gpu] * len(ts))
        cols["metric"].extend([metric] * len(ts))
        cols["value"].extend(values.tolist())

    grid = TELEMETRY_T0 + 60.0 * np.arange(minutes) + offset
    for n in range(nodes):
        for g in range(gpus_per_node):
            keep = rng.random(minutes) > 0.1
            ts = grid[keep]
            util = np.round(rng.uniform(0, 100, len(ts)) * (rng.random(len(ts)) > 0.2), 1)
            add(ts, f"n{n}", g, "gpu_util_pct", util)
            add(ts, f"n{n}", g, "gpu_power_w", np.round(rng.uniform(20, 250, len(ts)), 2))
            energy = np.cumsum(rng.uniform(1000, 15000, len(ts)))
            if len(ts) > 4 and rng.random() < 0.7:
                cut = int(rng.integers(1, len(ts)))
                energy[cut:] -= energy[cut - 1] - float(rng.uniform(0, 50))
            add(ts, f"n{n}", g, "gpu_energy_j", np.round(energy, 3))
        keep = rng.random(minutes) > 0.1
        add(grid[keep], f"n{n}", None, "node_power_w", np.round(rng.uniform(300, 2000, int(keep.sum())), 1))
    return jt.from_columns(jobs), alloc, cols
