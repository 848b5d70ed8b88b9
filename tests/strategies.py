"""Hypothesis strategies shared by every test module (one place, as the brief asks).

Add new strategies at the end of this file; keep existing ones stable.
"""

from __future__ import annotations

import string

import pyarrow as pa
from hypothesis import strategies as st

from swftools import table as jt

AAIC_QUEUES = ("Normal", "Short", "Middle", "Long")
EPOCH_2017 = 1_499_990_400  # 2017-07-14 00:00 UTC, around the AAIC trace start

names = st.text(alphabet=string.ascii_lowercase + string.digits + "_-.", min_size=1, max_size=12)


@st.composite
def aaic_jobs(draw, min_size: int = 0, max_size: int = 30) -> pa.Table:
    """Canonical tables shaped like AAIC NQSII logs: every AAIC column known, SWF-only columns null."""
    n = draw(st.integers(min_size, max_size))
    ids = sorted(draw(st.sets(st.integers(1, 10**7), min_size=n, max_size=n)))
    users = draw(st.lists(names, min_size=1, max_size=6, unique=True))
    groups = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    cols: dict[str, list] = {c: [] for c in (
        "job_id", "user", "group", "queue", "nodes", "gpus_per_node", "gpus",
        "requested_walltime_s", "termcode", "submit_time", "start_time", "finish_time",
        "wait_s", "walltime_s")}
    submit = EPOCH_2017 + draw(st.integers(0, 10**6))
    for job_id in ids:
        submit += draw(st.integers(0, 5000))
        queue = draw(st.sampled_from(AAIC_QUEUES))
        nodes = draw(st.integers(1, 4)) if queue == "Normal" else 1
        per_node = 8 if nodes > 1 else (1 if queue == "Short" else draw(st.integers(1, 8)))
        wait = draw(st.integers(0, 100_000))
        run = draw(st.integers(0, 300_000))
        cols["job_id"].append(job_id)
        cols["user"].append(draw(st.sampled_from(users)))
        cols["group"].append(draw(st.sampled_from(groups)))
        cols["queue"].append(queue)
        cols["nodes"].append(nodes)
        cols["gpus_per_node"].append(per_node)
        cols["gpus"].append(nodes * per_node)
        cols["requested_walltime_s"].append(draw(st.integers(60, 1_209_600)))
        cols["termcode"].append(draw(st.integers(0, 4)))
        cols["submit_time"].append(submit)
        cols["start_time"].append(submit + wait)
        cols["finish_time"].append(submit + wait + run)
        cols["wait_s"].append(wait)
        cols["walltime_s"].append(run)
    return jt.from_columns(cols, {"site": "aaic", "time_zone": "Asia/Tokyo"})


def _maybe(draw, strategy, p_unknown: bool = True):
    return draw(st.none() | strategy) if p_unknown else draw(strategy)


@st.composite
def swf_jobs(draw, min_size: int = 0, max_size: int = 30) -> pa.Table:
    """Canonical tables as read from SWF: numeric ids as strings, any field may be unknown (null)."""
    n = draw(st.integers(min_size, max_size))
    ids = sorted(draw(st.sets(st.integers(1, 10**6), min_size=n, max_size=n)))
    origin = draw(st.integers(0, 2_000_000_000))
    submit = origin
    small = st.integers(0, 10**6)
    rows = []
    for job_id in ids:
        submit += draw(st.integers(0, 10_000))
        wait = _maybe(draw, small)
        run = _maybe(draw, small)
        start = submit + wait if wait is not None else None
        finish = start + run if start is not None and run is not None else None
        rows.append({
            "job_id": job_id, "submit_time": submit, "wait_s": wait, "walltime_s": run,
            "start_time": start, "finish_time": finish,
            "gpus": _maybe(draw, st.integers(0, 5000)),
            "avg_cpu_time_s": _maybe(draw, st.integers(0, 10**6).map(float)),
            "used_memory_kb": _maybe(draw, small),
            "requested_procs": _maybe(draw, st.integers(0, 5000)),
            "requested_walltime_s": _maybe(draw, small),
            "requested_memory_kb": _maybe(draw, small),
            "swf_status": _maybe(draw, st.sampled_from([0, 1, 2, 3, 4, 5])),
            "user": _maybe(draw, st.integers(1, 500).map(str)),
            "group": _maybe(draw, st.integers(1, 50).map(str)),
            "executable": _maybe(draw, st.integers(1, 500)),
            "queue": _maybe(draw, st.integers(0, 30).map(str)),
            "partition": _maybe(draw, st.integers(1, 10)),
            "preceding_job_id": _maybe(draw, st.integers(1, 10**6)),
            "think_time_s": _maybe(draw, small),
        })
    cols = {k: [r[k] for r in rows] for k in (rows[0] if rows else {})}
    meta = {"source_format": "swf", "swf_time_origin": origin,
            "swf_header": [["Version", "2.2"], ["UnixStartTime", str(origin)]]}
    return jt.from_columns(cols, meta)


# --- anonymize / audit ---------------------------------------------------------------------
from swftools.privacy.pseudonyms import MIN_KEY_BYTES  # noqa: E402

anon_keys = st.binary(min_size=MIN_KEY_BYTES, max_size=64)
"""Secret keys long enough for ``swftools.privacy.pseudonyms``."""
raw_user_names = st.text(min_size=1, max_size=20)
"""Any Unicode user or group name, as a raw log might hold."""
hex_like_names = st.text("abcdef0123456789ughx-_", min_size=3, max_size=8)
"""Names made of hex digits and pseudonym prefixes: the audit's worst case for false hits."""
plain_names = st.text("abcdefghijklmnopqrstuvwxyz.-", min_size=3, max_size=10)
"""Lower-case login-like names of at least 3 characters."""


# --- NQSII text layouts (tests/test_nqsii.py) -------------------------------------------------
from hypothesis import strategies as st  # noqa: E402,F811


def _nq_cased(draw, name: str) -> str:
    return draw(st.sampled_from([name, name.upper(), name.title()]))


@st.composite
def nqsii_layouts(draw) -> dict:
    """A consistent NQSII text layout, shaped like the ``nqsii`` table metadata: form, header
    names (aliases, any case), column order (raw form), separator, line ending, BOM, final
    newline, one text format per time/duration column, queue spellings."""
    from swftools.formats.nqsii.schema import form_schema

    form = draw(st.sampled_from(["raw", "published"]))
    schema = form_schema(form)
    fields = [f.name for f in schema.fields]
    if form == "raw":
        fields = draw(st.permutations(fields))
    header = [_nq_cased(draw, draw(st.sampled_from([f.name, *f.aliases])))
              for f in (schema.field(n) for n in fields)]
    formats = {}
    for f in schema.fields:
        if not f.text_formats:
            continue
        kind = draw(st.sampled_from(f.text_formats))
        fmt = {"format": kind}
        if kind == "hms":
            fmt["hour_width"] = draw(st.sampled_from([1, 2]))
        if kind == "iso":
            fmt["separator"] = draw(st.sampled_from(["T", " "]))
            fmt["offset"] = draw(st.sampled_from(["Z", "+09:00", "+0900", "-05:00", "+05:30"]))
        formats[f.name] = fmt
    spelling = {}
    if form == "raw":
        for queue in ("Normal", "Short", "Middle", "Long"):
            written = _nq_cased(draw, queue)
            if written != queue:
                spelling[queue] = written
    return {"form": form, "fields": fields, "header": header,
            "separator": draw(st.sampled_from([",", ", "])),
            "line_ending": draw(st.sampled_from(["\n", "\r\n"])),
            "final_newline": draw(st.booleans()), "bom": draw(st.booleans()),
            "formats": formats, "queue_spelling": spelling}


@st.composite
def synth_job_lists(draw):
    """Scheduler inputs in submission order on a small cluster: ``(nodes, gpus_per_node, columns)``
    with columns submit, nodes, GPUs per node, run time and cancel instant (-1: not cancelled)."""
    import numpy as np

    n_nodes = draw(st.integers(1, 4))
    per_node_max = draw(st.sampled_from([2, 4, 8]))
    n = draw(st.integers(1, 60))
    submit, rows = 1_000_000, []
    for _ in range(n):
        submit += draw(st.integers(0, 500))
        nodes = draw(st.integers(1, n_nodes))
        per = per_node_max if nodes > 1 else draw(st.integers(1, per_node_max))
        run = draw(st.integers(1, 5000))
        cancel = draw(st.one_of(st.just(-1), st.integers(1, 3000).map(lambda d, s=submit: s + d)))
        rows.append((submit, nodes, per, run, cancel))
    cols = [np.array(c, dtype=np.int64) for c in zip(*rows, strict=True)]
    return n_nodes, per_node_max, cols


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


# --- replay (issue 5): small traces with ties, zero run times, unknowns and misfits -------------
from datetime import datetime, timezone  # noqa: E402

from swftools.site import site_from_settings  # noqa: E402


@st.composite
def replay_swf_jobs(draw, max_jobs: int = 40, min_run_s: int = 0) -> tuple[pa.Table, int]:
    """(table, processors) for a flat-pool replay: crowded instants, under/over-estimates,
    zero-length jobs (unless ``min_run_s`` > 0), unknown fields and jobs too wide to fit."""
    procs = draw(st.integers(1, 16))
    n = draw(st.integers(0, max_jobs))
    ids = draw(st.lists(st.integers(1, 10**6), min_size=n, max_size=n, unique=True))
    t = draw(st.integers(-1000, 10**6))
    cols: dict[str, list] = {c: [] for c in ("job_id", "submit_time", "walltime_s", "gpus",
                                             "requested_procs", "requested_walltime_s")}
    for job_id in ids:
        t += draw(st.sampled_from([0, 0, 1, 3, 10, 50]))
        run = max(min_run_s, draw(st.sampled_from([0, 1, 5, 10, 30, 100]) | st.integers(0, 300)))
        cols["job_id"].append(job_id)
        cols["submit_time"].append(draw(st.just(t) | st.just(t) | st.just(t) | st.none()))
        cols["walltime_s"].append(draw(st.just(run) | st.just(run) | st.just(run) | st.none()))
        cols["gpus"].append(draw(st.integers(1, procs + 1) | st.none()))
        cols["requested_procs"].append(draw(st.none() | st.integers(0, procs + 1)))
        cols["requested_walltime_s"].append(draw(st.none() | st.just(run) | st.integers(0, 400)))
    return jt.from_columns(cols), procs


@st.composite
def replay_sites(draw):
    """Small GPU sites: 1, 2 or 4 GPUs per node; a capacity timeline of 1-3 entries of 1-5 nodes."""
    g = draw(st.sampled_from([1, 2, 4]))
    entries = draw(st.integers(1, 3))
    since = sorted(draw(st.lists(st.integers(1, 3000), min_size=entries - 1,
                                 max_size=entries - 1, unique=True)))
    timeline = [{"since": datetime.fromtimestamp(s, timezone.utc).isoformat(),
                 "nodes": draw(st.integers(1, 5))} for s in [0] + since]
    queue = {"name": "q", "number": 1, "nodes_min": 1, "nodes_max": 5, "gpus_per_node_min": 1,
             "gpus_per_node_max": g, "walltime_default_s": 60, "walltime_max_s": 600}
    return site_from_settings({"name": "test", "time_zone": "UTC", "gpus_per_node": g,
                               "capacity_timeline": timeline, "queues": [queue]})


@st.composite
def replay_gpu_jobs(draw, max_jobs: int = 30):
    """(table, site) for a GPU-node replay: explicit shapes or sizes only, multi-node jobs,
    jobs wider than the site, capacity changes while jobs wait."""
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


# --- malformed tokens for integer fields (issue 13: every reader rejects them) ----------------

_NON_ASCII_DIGITS = st.characters(categories=["Nd"]).filter(lambda c: not c.isascii())

bad_integer_tokens = st.one_of(
    # not an integer: letters, hex, underscores, exponents, special floats, decimals
    st.sampled_from(["x7", "0x1f", "1_000", "1e3", "inf", "nan", "--1", "+-2", "1.", "7a"]),
    st.from_regex(r"[0-9]{0,3}[a-zA-Z_#@:][0-9a-z]{0,3}", fullmatch=True),
    st.tuples(st.integers(0, 10**6), st.integers(1, 999)).map(lambda t: f"{t[0]}.{t[1]}"),
    # overlong: more digits than an int64 holds
    st.integers(19, 40).map(lambda n: "9" * n),
    # digits outside ASCII (Python's int() would accept them)
    st.text(_NON_ASCII_DIGITS, min_size=1, max_size=4),
)
"""A token that no integer field may hold (no whitespace, no comma, no separator '|')."""


# --- trace file content for the shared input layer (swftools.formats.inputs) -----------------

trace_file_texts = st.text(st.characters(blacklist_categories=["Cs"]), max_size=400)
"""Any text a trace file might hold (newlines of every kind, non-ASCII), as UTF-8."""

trace_file_names = st.sampled_from(["t.swf", "t.swf.gz", "t.log", "t.csv.gz", "t.gz", "t",
                                    "T.GZ", "t.json"])
"""File names with and without a ``.gz`` suffix (the name must not decide decompression)."""


# --- text tokens for Table Schema CSV cells (issue 12: reader and validator share one grammar) ---

_CELL_ALPHABET = st.sampled_from(list("0123456789+-.eE_xX ,\tNaIFinftyTRUEtruefalsFALS") +
                                 ["\u0663", "\uff15", "\u00b2", "\u2212"])
cell_tokens = st.one_of(
    # the edge cases Python's int()/float() accept and the grammar does not, and the spec's own
    st.sampled_from(["1_000", "infinity", "Infinity", " 5", "5 ", "0x10", "1e3", "1E+3", ".5",
                     "5.", "+7", "-0", "NaN", "nan", "INF", "-INF", "+INF", "inf", "-inf", "",
                     "true", "True", "TRUE", "tRUE", "1", "0", "yes", "1.0", "e3", "."]),
    # near misses of valid numbers: short strings over the grammar's own characters
    st.text(_CELL_ALPHABET, max_size=10),
    # valid numbers by construction, sometimes with a blank or an underscore spliced in
    st.from_regex(r"[+-]?([0-9]{1,4}(\.[0-9]{0,3})?|\.[0-9]{1,3})([eE][+-]?[0-9]{1,2})?",
                  fullmatch=True),
    st.tuples(st.from_regex(r"[0-9]{1,4}", fullmatch=True), st.sampled_from([" ", "_", "\t"]),
              st.integers(0, 4)).map(lambda t: t[0][:t[2]] + t[1] + t[0][t[2]:]),
    # any printable text
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=8),
)
"""A short text token for a CSV cell (no control characters), valid or not for any type."""


# --- placement plug-ins on the replay engine (issue 14): heterogeneous machine inputs ----------

@st.composite
def placement_inputs(draw, n_nodes: int, g: int, n_rows: int):
    """``PlacementInputs`` for ``n_nodes`` x ``g`` GPUs and a table of ``n_rows`` rows: random
    racks, GPU models with speeds, per-GPU scores and classes, per-row gains; sometimes absent."""
    from swftools.replay.placement import PlacementInputs

    models = draw(st.integers(1, 3))
    classes = draw(st.integers(1, 3))
    maybe = st.booleans()
    return PlacementInputs(
        rack=draw(st.lists(st.integers(0, 2), min_size=n_nodes, max_size=n_nodes))
        if draw(maybe) else None,
        gpu_model=draw(st.lists(st.integers(0, models - 1), min_size=n_nodes, max_size=n_nodes)),
        model_speed=draw(st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0]), min_size=models,
                                  max_size=models)),
        score=[draw(st.lists(st.floats(0.5, 1.5), min_size=g, max_size=g))
               for _ in range(n_nodes)] if draw(maybe) else None,
        gpu_class=[draw(st.lists(st.integers(0, classes - 1), min_size=g, max_size=g))
                   for _ in range(n_nodes)],
        gain=draw(st.lists(st.sampled_from([1.0, 1.2, 1.5, 2.0]), min_size=n_rows,
                           max_size=n_rows)) if draw(maybe) else None,
    )


@st.composite
def placement_gpu_cases(draw, max_jobs: int = 25):
    """(table, site, inputs) for a GPU-node replay with a placement (``replay_gpu_jobs``)."""
    table, site = draw(replay_gpu_jobs(max_jobs=max_jobs))
    inputs = draw(placement_inputs(site.max_nodes, site.gpus_per_node, table.num_rows))
    return table, site, inputs


@st.composite
def placement_flat_cases(draw, max_jobs: int = 30):
    """(table, procs, inputs) for a flat-pool replay with a placement (``replay_swf_jobs``)."""
    table, procs = draw(replay_swf_jobs(max_jobs=max_jobs))
    inputs = draw(placement_inputs(procs, 1, table.num_rows))
    return table, procs, inputs


# --- what-if models (issue 14): small heterogeneous sites and placements on them -------------

def whatif_settings(nodes: int, gpus_per_node: int, **extra):
    """Site settings (a dict) of ``nodes`` x ``gpus_per_node`` GPUs, AAIC's queues, plus ``extra``."""
    import copy

    from swftools.site import preset

    settings = copy.deepcopy(preset("aaic").settings)
    settings.update(name="whatif-test", gpus_per_node=gpus_per_node,
                    capacity_timeline=[{"since": "2017-07-01T00:00:00+09:00", "nodes": nodes}])
    settings.update(extra)
    return settings


@st.composite
def whatif_sites(draw, max_nodes: int = 12, max_gpus: int = 4):
    """A small Site with P100 then V100 node groups (either may be absent), racks (none, equal
    size or explicit) and the default links."""
    from swftools.site import site_from_settings

    n = draw(st.integers(1, max_nodes))
    g = draw(st.integers(1, max_gpus))
    cut = draw(st.integers(0, n))
    groups = [{"name": name, "nodes": k, "gpu_model": model, "gpus_per_node": g}
              for name, k, model in (("old", cut, "P100"), ("new", n - cut, "V100")) if k]
    racks = draw(st.one_of(st.none(), st.integers(1, n).map(lambda k: {"nodes_per_rack": k}),
                           st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    extra = {"gpu_model": "NVIDIA Tesla P100", "node_groups": groups}
    if racks is not None:
        extra["racks"] = racks
    return site_from_settings(whatif_settings(n, g, **extra))


@st.composite
def whatif_placements(draw, site):
    """(nodes, gpus) on ``site``: distinct nodes, a non-empty GPU list on each."""
    n, g = len(site.gpu_model_of_node), site.gpus_per_node
    nodes = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=min(n, 4), unique=True))
    gpus = [sorted(draw(st.lists(st.integers(0, g - 1), min_size=1, max_size=g, unique=True)))
            for _ in nodes]
    return nodes, gpus
