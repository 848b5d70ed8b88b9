from __future__ import annotations
import pyarrow as pa
from hypothesis import strategies as st
from swftools import table as jt


# --- replay (issue 5): small traces with ties, zero run times, unknowns and misfits -------------
@st.composite
def replay_swf_jobs(draw, max_jobs: int = 40) -> tuple[pa.Table, int]:
    """(table, processors) for a flat-pool replay: crowded instants, under/over-estimates."""
    procs = draw(st.integers(1, 16))
    n = draw(st.integers(0, max_jobs))
    ids = draw(st.lists(st.integers(1, 10**6), min_size=n, max_size=n, unique=True))
    t = draw(st.integers(-1000, 10**6))
    cols: dict[str, list] = {c: [] for c in ("job_id", "submit_time", "walltime_s", "gpus",
                                             "requested_procs", "requested_walltime_s")}
    for job_id in ids:
        t += draw(st.sampled_from([0, 0, 1, 3, 10, 50]))
        run = draw(st.sampled_from([0, 1, 5, 10, 30, 100]) | st.integers(0, 300))
        request = draw(st.none() | st.just(run) | st.integers(0, 400))
        alloc = draw(st.integers(1, procs + 1) | st.none())
        cols["job_id"].append(job_id)
        cols["submit_time"].append(draw(st.just(t) | st.just(t) | st.just(t) | st.none()))
        cols["walltime_s"].append(draw(st.just(run) | st.just(run) | st.just(run) | st.none()))
        cols["gpus"].append(alloc)
        cols["requested_procs"].append(draw(st.none() | st.integers(0, procs + 1)))
        cols["requested_walltime_s"].append(request)
    return jt.from_columns(cols), procs


@st.composite
def replay_sites(draw):
    """Small GPU sites: 1-4 GPUs per node, a capacity timeline of 1-3 entries of 1-5 nodes."""
    from swftools.site import site_from_settings

    g = draw(st.sampled_from([1, 2, 4]))
    entries = draw(st.integers(1, 3))
    since = sorted(draw(st.lists(st.integers(0, 3000), min_size=entries, max_size=entries,
                                 unique=True)))
    timeline = [{"since": f"1970-01-01T00:00:00+00:00", "nodes": draw(st.integers(1, 5))}]
    for t in since[1:]:
        from datetime import datetime, timezone
        stamp = datetime.fromtimestamp(t, timezone.utc).isoformat()
        timeline.append({"since": stamp, "nodes": draw(st.integers(1, 5))})
    queue = {"name": "q", "number": 1, "nodes_min": 1, "nodes_max": 5, "gpus_per_node_min": 1,
             "gpus_per_node_max": g, "walltime_default_s": 60, "walltime_max_s": 600}
    return site_from_settings({"name": "test", "time_zone": "UTC", "gpus_per_node": g,
                               "capacity_timeline": timeline, "queues": [queue]})


@st.composite
def replay_gpu_jobs(draw, max_jobs: int = 30):
    """(table, site) for a GPU-node replay: explicit shapes, sizes only, multi-node jobs."""
    site = draw(replay_sites())
    g = site.gpus_per_node
    n = draw(st.integers(0, max_jobs))
    t = draw(st.integers(0, 2000))
    cols: dict[str, list] = {c: [] for c in ("job_id", "submit_time", "walltime_s", "gpus",
                                             "nodes", "gpus_per_node", "requested_walltime_s")}
    for job_id in range(1, n + 1):
        t += draw(st.sampled_from([0, 0, 1, 5, 20, 100]))
        run = draw(st.sampled_from([0, 10, 50, 200]) | st.integers(0, 500))
        nodes = draw(st.sampled_from([1, 1, 1, 2, 3, 6]))
        per_node = g if nodes > 1 else draw(st.integers(1, g))
        explicit = draw(st.booleans())
        cols["job_id"].append(job_id)
        cols["submit_time"].append(t)
        cols["walltime_s"].append(run)
        cols["gpus"].append(nodes * per_node)
        cols["nodes"].append(nodes if explicit else None)
        cols["gpus_per_node"].append(per_node if explicit else None)
        cols["requested_walltime_s"].append(draw(st.none() | st.just(run) | st.integers(0, 600)))
    return jt.from_columns(cols), site
