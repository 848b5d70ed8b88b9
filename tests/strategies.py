"""Hypothesis strategies shared by every test module (one place, as the brief asks).

Add new strategies at the end of this file; keep existing ones stable.
"""

from __future__ import annotations

import string

import pyarrow as pa
from hypothesis import strategies as st

from swftools import table as jt

from .conftest import examples  # noqa: F401  (the heavy properties import it from here)

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
    user_names, group_names = st.sampled_from(users), st.sampled_from(groups)  # one per table
    for job_id in ids:
        submit += draw(st.integers(0, 5000))
        queue = draw(st.sampled_from(AAIC_QUEUES))
        nodes = draw(st.integers(1, 4)) if queue == "Normal" else 1
        per_node = 8 if nodes > 1 else (1 if queue == "Short" else draw(st.integers(1, 8)))
        wait = draw(st.integers(0, 100_000))
        run = draw(st.integers(0, 300_000))
        cols["job_id"].append(job_id)
        cols["user"].append(draw(user_names))
        cols["group"].append(draw(group_names))
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


_OR_NONE: dict[int, tuple] = {}


def _maybe(draw, strategy):
    """A draw from ``strategy``, or None. ``none() | strategy`` is made once per strategy object
    (kept with it, so that its id is not reused): hypothesis validates every new strategy object
    it draws from, which cost more than the draws (most of the time of the properties over
    these tables). Pass long-lived strategies: module constants, or ``st.integers`` and the like,
    which hypothesis itself caches by their arguments."""
    either = _OR_NONE.get(id(strategy))
    if either is None:
        either = _OR_NONE[id(strategy)] = (strategy, st.none() | strategy)
    return draw(either[1])


_SMALL = st.integers(0, 10**6)
# swf_jobs' fields that may be unknown, with their values when known
_SWF_MAYBE = {
    "gpus": st.integers(0, 5000), "avg_cpu_time_s": st.integers(0, 10**6).map(float),
    "used_memory_kb": _SMALL, "requested_procs": st.integers(0, 5000),
    "requested_walltime_s": _SMALL, "requested_memory_kb": _SMALL,
    "swf_status": st.sampled_from((0, 1, 2, 3, 4, 5)), "user": st.integers(1, 500).map(str),
    "group": st.integers(1, 50).map(str), "executable": st.integers(1, 500),
    "queue": st.integers(0, 30).map(str), "partition": st.integers(1, 10),
    "preceding_job_id": st.integers(1, 10**6), "think_time_s": _SMALL}


@st.composite
def swf_jobs(draw, min_size: int = 0, max_size: int = 30) -> pa.Table:
    """Canonical tables as read from SWF: numeric ids as strings, any field may be unknown (null)."""
    n = draw(st.integers(min_size, max_size))
    ids = sorted(draw(st.sets(st.integers(1, 10**6), min_size=n, max_size=n)))
    origin = draw(st.integers(0, 2_000_000_000))
    submit = origin
    rows = []
    for job_id in ids:
        submit += draw(st.integers(0, 10_000))
        wait = _maybe(draw, _SMALL)
        run = _maybe(draw, _SMALL)
        start = submit + wait if wait is not None else None
        finish = start + run if start is not None and run is not None else None
        rows.append({
            "job_id": job_id, "submit_time": submit, "wait_s": wait, "walltime_s": run,
            "start_time": start, "finish_time": finish,
            **{field: _maybe(draw, values) for field, values in _SWF_MAYBE.items()}})
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
    return draw(st.sampled_from((name, name.upper(), name.title())))


@st.composite
def nqsii_layouts(draw) -> dict:
    """A consistent NQSII text layout, shaped like the ``nqsii`` table metadata: form, header
    names (aliases, any case), column order (raw form), separator, line ending, BOM, final
    newline, one text format per time/duration column, queue spellings."""
    from swftools.formats.nqsii.schema import form_schema

    form = draw(st.sampled_from(("raw", "published")))
    schema = form_schema(form)
    fields = [f.name for f in schema.fields]
    if form == "raw":
        fields = draw(st.permutations(fields))
    header = [_nq_cased(draw, draw(st.sampled_from((f.name, *f.aliases))))
              for f in (schema.field(n) for n in fields)]
    formats = {}
    for f in schema.fields:
        if not f.text_formats:
            continue
        kind = draw(st.sampled_from(f.text_formats))
        fmt = {"format": kind}
        if kind == "hms":
            fmt["hour_width"] = draw(st.sampled_from((1, 2)))
        if kind == "iso":
            fmt["separator"] = draw(st.sampled_from(("T", " ")))
            fmt["offset"] = draw(st.sampled_from(("Z", "+09:00", "+0900", "-05:00", "+05:30")))
        formats[f.name] = fmt
    spelling = {}
    if form == "raw":
        for queue in ("Normal", "Short", "Middle", "Long"):
            written = _nq_cased(draw, queue)
            if written != queue:
                spelling[queue] = written
    return {"form": form, "fields": fields, "header": header,
            "separator": draw(st.sampled_from((",", ", "))),
            "line_ending": draw(st.sampled_from(("\n", "\r\n"))),
            "final_newline": draw(st.booleans()), "bom": draw(st.booleans()),
            "formats": formats, "queue_spelling": spelling}


_CANCEL_DELAYS = st.none() | st.integers(1, 3000)


@st.composite
def synth_job_lists(draw):
    """Scheduler inputs in submission order on a small cluster: ``(nodes, gpus_per_node, columns)``
    with columns submit, nodes, GPUs per node, run time and cancel instant (-1: not cancelled)."""
    import numpy as np

    n_nodes = draw(st.integers(1, 4))
    per_node_max = draw(st.sampled_from((2, 4, 8)))
    n = draw(st.integers(1, 60))
    submit, rows = 1_000_000, []
    for _ in range(n):
        submit += draw(st.integers(0, 500))
        nodes = draw(st.integers(1, n_nodes))
        per = per_node_max if nodes > 1 else draw(st.integers(1, per_node_max))
        run = draw(st.integers(1, 5000))
        delay = draw(_CANCEL_DELAYS)  # None: not cancelled
        cancel = -1 if delay is None else submit + delay
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
        kind = draw(st.sampled_from(("gpu", "gpu", "whole", "unknown")))
        node = int(rng.integers(0, nodes))
        if kind == "whole":
            gpus = [(node, g) for g in range(gpus_per_node)]
        else:
            gpus = [(node, int(rng.integers(0, gpus_per_node)))]
        start = max(free[k] for k in gpus) + int(rng.integers(0, 4000))
        finish = start + draw(st.sampled_from((0, 59, 60, 61, 3600, 7261, 30000, 90000)))
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
    offset = draw(st.sampled_from((0.0, 0.25)))
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
            some = ts[rng.random(len(ts)) > 0.3]  # other gauges, sampled less often
            add(some, f"n{n}", g, "gpu_sm_active_pct", np.round(rng.uniform(0, 100, len(some)), 3))
            add(some, f"n{n}", g, "gpu_mem_used_mib", np.round(rng.uniform(0, 16280, len(some)), 1))
            energy = np.cumsum(rng.uniform(1000, 15000, len(ts)))
            if len(ts) > 4 and rng.random() < 0.7:
                cut = int(rng.integers(1, len(ts)))
                energy[cut:] -= energy[cut - 1] - float(rng.uniform(0, 50))
            add(ts, f"n{n}", g, "gpu_energy_j", np.round(energy, 3))
        keep = rng.random(minutes) > 0.1
        add(grid[keep], f"n{n}", None, "node_power_w", np.round(rng.uniform(300, 2000, int(keep.sum())), 1))
        node_ts = grid[rng.random(minutes) > 0.5]
        add(node_ts, f"n{n}", None, "node_cpu_util_pct", np.round(rng.uniform(0, 100, len(node_ts)), 2))
        add(node_ts, f"n{n}", None, "node_mem_used_gib", np.round(rng.uniform(1, 512, len(node_ts)), 3))
    return jt.from_columns(jobs), alloc, cols


# --- replay (issue 5): small traces with ties, zero run times, unknowns and misfits -------------
from datetime import datetime, timezone  # noqa: E402

from swftools.site import site_from_settings  # noqa: E402


# Strategy objects made once (see _maybe: a new one is validated at each draw)
_KEPT_3_IN_4 = st.sampled_from((True, True, True, False))  # a known value, else None
_SWF_STEPS = st.sampled_from((0, 0, 1, 3, 10, 50))
_SWF_RUNS = st.sampled_from((0, 1, 5, 10, 30, 100)) | st.integers(0, 300)
_GPU_STEPS = st.sampled_from((0, 0, 1, 5, 20, 100))
_GPU_RUNS = st.sampled_from((0, 10, 50, 200)) | st.integers(0, 500)
_TIE_STEPS = st.sampled_from((0, 0, 1))
_FLAT_RUNS = st.sampled_from((0, 10, 100)) | st.integers(0, 400)
_WHATIF_RUNS = st.sampled_from((60, 600, 3600)) | st.integers(1, 5000)


def _requested(draw, run: int, other) -> int | None:
    """Unknown, exactly the run time, or another draw (``none() | just(run) | other``)."""
    kind = draw(st.integers(0, 2))
    return None if kind == 0 else run if kind == 1 else draw(other)


@st.composite
def replay_swf_jobs(draw, max_jobs: int = 40, min_run_s: int = 0,
                    tie_grid: int | None = None) -> tuple[pa.Table, int]:
    """(table, processors) for a flat-pool replay: crowded instants, under/over-estimates,
    zero-length jobs (unless ``min_run_s`` > 0), unknown fields and jobs too wide to fit.
    With ``tie_grid``, times are multiples of it (ends and arrivals at the shadow time)."""
    procs = draw(st.integers(1, 16))
    n = draw(st.integers(0, max_jobs))
    ids = draw(st.lists(st.integers(1, 10**6), min_size=n, max_size=n, unique=True))
    t = draw(st.integers(-1000, 10**6))
    cols: dict[str, list] = {c: [] for c in ("job_id", "submit_time", "walltime_s", "gpus",
                                             "requested_procs", "requested_walltime_s")}
    gpus = st.integers(1, procs + 1) | st.none()
    requested_procs = st.none() | st.integers(0, procs + 1)
    other_request = (st.integers(1, 4).map(lambda k: k * tie_grid) if tie_grid
                     else st.integers(0, 400))
    for job_id in ids:
        if tie_grid:
            t += tie_grid * draw(_TIE_STEPS)
            run = max(min_run_s, tie_grid * draw(st.integers(1, 3)))
        else:
            t += draw(_SWF_STEPS)
            run = max(min_run_s, draw(_SWF_RUNS))
        cols["job_id"].append(job_id)
        cols["submit_time"].append(t if draw(_KEPT_3_IN_4) else None)
        cols["walltime_s"].append(run if draw(_KEPT_3_IN_4) else None)
        cols["gpus"].append(draw(gpus))
        cols["requested_procs"].append(draw(requested_procs))
        cols["requested_walltime_s"].append(_requested(draw, run, other_request))
    return jt.from_columns(cols), procs


@st.composite
def replay_sites(draw, max_nodes: int = 5):
    """Small GPU sites: 1, 2 or 4 GPUs per node; a capacity timeline of 1-3 entries of
    1-``max_nodes`` nodes."""
    g = draw(st.sampled_from((1, 2, 4)))
    entries = draw(st.integers(1, 3))
    since = sorted(draw(st.lists(st.integers(1, 3000), min_size=entries - 1,
                                 max_size=entries - 1, unique=True)))
    timeline = [{"since": datetime.fromtimestamp(s, timezone.utc).isoformat(),
                 "nodes": draw(st.integers(1, max_nodes))} for s in [0] + since]
    queue = {"name": "q", "number": 1, "nodes_min": 1, "nodes_max": max_nodes,
             "gpus_per_node_min": 1,
             "gpus_per_node_max": g, "walltime_default_s": 60, "walltime_max_s": 600}
    return site_from_settings({"name": "test", "time_zone": "UTC", "gpus_per_node": g,
                               "capacity_timeline": timeline, "queues": [queue]})


@st.composite
def replay_gpu_jobs(draw, max_jobs: int = 30, max_nodes: int = 5, tie_grid: int | None = None):
    """(table, site) for a GPU-node replay: explicit shapes or sizes only, multi-node jobs,
    jobs wider than the site, capacity changes while jobs wait (sites of up to ``max_nodes``
    nodes; wide sites get wide jobs too). With ``tie_grid``, submit, run and requested times
    are multiples of it, so that jobs end, arrive and would end exactly at the head's shadow
    time (EASY's boundary cases)."""
    site = draw(replay_sites(max_nodes))
    widths = [1, 1, 1, 2, 3, 6] + ([max_nodes // 2, max_nodes] if max_nodes > 6 else [])
    g = site.gpus_per_node
    n = draw(st.integers(0, max_jobs))
    t = draw(st.integers(0, 2000))
    cols: dict[str, list] = {c: [] for c in ("job_id", "submit_time", "walltime_s", "gpus",
                                             "nodes", "gpus_per_node", "requested_walltime_s")}
    shapes = st.sampled_from(widths)
    other_request = (st.integers(1, 4).map(lambda k: k * tie_grid) if tie_grid
                     else st.integers(0, 600))
    for job_id in range(1, n + 1):
        if tie_grid:
            t += tie_grid * draw(_TIE_STEPS)
            run = tie_grid * draw(st.integers(1, 3))
        else:
            t += draw(_GPU_STEPS)
            run = draw(_GPU_RUNS)
        nodes = draw(shapes)
        per_node = g if nodes > 1 else draw(st.integers(1, g))
        explicit = draw(st.booleans())
        cols["job_id"].append(job_id)
        cols["submit_time"].append(t)
        cols["walltime_s"].append(run)
        cols["gpus"].append(nodes * per_node)
        cols["nodes"].append(nodes if explicit else None)
        cols["gpus_per_node"].append(per_node if explicit else None)
        cols["requested_walltime_s"].append(_requested(draw, run, other_request))
    return jt.from_columns(cols), site


# --- malformed tokens for integer fields (issue 13: every reader rejects them) ----------------

_NON_ASCII_DIGITS = st.characters(categories=["Nd"]).filter(lambda c: not c.isascii())

bad_integer_tokens = st.one_of(
    # not an integer: letters, hex, underscores, exponents, special floats, decimals
    st.sampled_from(("x7", "0x1f", "1_000", "1e3", "inf", "nan", "--1", "+-2", "1.", "7a")),
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

trace_file_names = st.sampled_from(("t.swf", "t.swf.gz", "t.log", "t.csv.gz", "t.gz", "t",
                                    "T.GZ", "t.json"))
"""File names with and without a ``.gz`` suffix (the name must not decide decompression)."""


# --- text tokens for Table Schema CSV cells (issue 12: reader and validator share one grammar) ---

_CELL_ALPHABET = st.sampled_from(list("0123456789+-.eE_xX ,\tNaIFinftyTRUEtruefalsFALS") +
                                 ["\u0663", "\uff15", "\u00b2", "\u2212"])
cell_tokens = st.one_of(
    # the edge cases Python's int()/float() accept and the grammar does not, and the spec's own
    st.sampled_from(("1_000", "infinity", "Infinity", " 5", "5 ", "0x10", "1e3", "1E+3", ".5",
                     "5.", "+7", "-0", "NaN", "nan", "INF", "-INF", "+INF", "inf", "-inf", "",
                     "true", "True", "TRUE", "tRUE", "1", "0", "yes", "1.0", "e3", ".")),
    # near misses of valid numbers: short strings over the grammar's own characters
    st.text(_CELL_ALPHABET, max_size=10),
    # valid numbers by construction, sometimes with a blank or an underscore spliced in
    st.from_regex(r"[+-]?([0-9]{1,4}(\.[0-9]{0,3})?|\.[0-9]{1,3})([eE][+-]?[0-9]{1,2})?",
                  fullmatch=True),
    st.tuples(st.from_regex(r"[0-9]{1,4}", fullmatch=True), st.sampled_from((" ", "_", "\t")),
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
    node_scores = st.lists(st.floats(0.5, 1.5), min_size=g, max_size=g)  # made once (_maybe)
    node_classes = st.lists(st.integers(0, classes - 1), min_size=g, max_size=g)
    return PlacementInputs(
        rack=draw(st.lists(st.integers(0, 2), min_size=n_nodes, max_size=n_nodes))
        if draw(maybe) else None,
        gpu_model=draw(st.lists(st.integers(0, models - 1), min_size=n_nodes, max_size=n_nodes)),
        model_speed=draw(st.lists(st.sampled_from((0.5, 1.0, 1.5, 2.0)), min_size=models,
                                  max_size=models)),
        score=[draw(node_scores) for _ in range(n_nodes)] if draw(maybe) else None,
        gpu_class=[draw(node_classes) for _ in range(n_nodes)],
        gain=draw(st.lists(st.sampled_from((1.0, 1.2, 1.5, 2.0)), min_size=n_rows,
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
def whatif_placements(draw, site, max_nodes: int = 4):
    """(nodes, gpus) on ``site``: distinct nodes, a non-empty GPU list on each."""
    n, g = len(site.gpu_model_of_node), site.gpus_per_node
    nodes = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=min(n, max_nodes),
                          unique=True))
    gpus = [sorted(draw(st.lists(st.integers(0, g - 1), min_size=1, max_size=g, unique=True)))
            for _ in nodes]
    return nodes, gpus


# --- telemetry on Dask (issue 15): counters across midnight, stray days, split exports ----------
DASK_SPLITS = ("one", "day", "overlap")


@st.composite
def telemetry_dask_cases(draw, max_jobs: int = 5):
    """``telemetry_cases`` plus node CPU-time counters (idle and total dropped independently, so
    they do not always share an instant), node memory gauges, maybe stray samples days after the
    jobs, and how to split the samples into Parquet files: ``one`` file, one per UTC ``day``, or
    per day with each file repeating the previous day's last hour with other values
    (``overlap``: duplicates the first file must win). Returns ``(jobs, alloc, cols, split)``.
    """
    import numpy as np

    jobs, alloc, cols = draw(telemetry_cases(max_jobs=max_jobs))
    # node CPU and memory come from the counters and gauges below here, as from node_exporter,
    # not also given directly: one source per canonical metric
    keep_rows = [i for i, m in enumerate(cols["metric"])
                 if m not in ("node_cpu_util_pct", "node_mem_used_gib")]
    cols = {k: [v[i] for i in keep_rows] for k, v in cols.items()}
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lo, hi = min(cols["ts"]), max(cols["ts"])
    grid = np.arange(lo, hi + 1, 60.0)

    def add(ts, node, metric, values):
        cols["ts"].extend(ts.tolist())
        cols["node"].extend([node] * len(ts))
        cols["gpu_index"].extend([None] * len(ts))
        cols["metric"].extend([metric] * len(ts))
        cols["value"].extend(values.tolist())

    with_mem = draw(st.booleans())
    for node in sorted(set(cols["node"])):
        idle = np.round(np.cumsum(rng.uniform(0, 240, len(grid))) + 1e5, 2)
        total = 1e6 + 240.0 * np.arange(len(grid))
        for metric, values in (("node_cpu_idle_s", idle), ("node_cpu_total_s", total)):
            keep = rng.random(len(grid)) > 0.15
            add(grid[keep], node, metric, values[keep])
        keep = rng.random(len(grid)) > (0.5 if with_mem else 1.0)
        add(grid[keep], node, "node_mem_total_gib", np.full(int(keep.sum()), 256.0))
        add(grid[keep], node, "node_mem_available_gib",
            np.round(rng.uniform(10, 250, int(keep.sum())), 3))
    if draw(st.booleans()):  # a metric derived only on a day without jobs still counts as present
        ts = TELEMETRY_T0 + 5 * 86400 + 60.0 * np.arange(draw(st.integers(1, 30)))
        for metric in ("node_mem_total_gib", "node_mem_available_gib"):
            add(ts, sorted(set(cols["node"]))[0], metric, np.round(rng.uniform(100, 200, len(ts)), 1))
    return jobs, alloc, cols, draw(st.sampled_from(DASK_SPLITS))


# --- streamed writing (issue 15) ---------------------------------------------------------------

@st.composite
def row_chunks(draw, table: pa.Table) -> list[pa.Table]:
    """``table`` cut into consecutive row chunks at random places (empty chunks included);
    concatenated they give back ``table``."""
    n = table.num_rows
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=5)))
    bounds = [0, *cuts, n]
    return [table.slice(a, b - a) for a, b in zip(bounds, bounds[1:])]


# --- Alibaba openb pod and node lists (issue 16) --------------------------------------------

OPENB_PHASES = ("Pending", "Running", "Succeeded", "Failed")
OPENB_POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                    "creation_time,deletion_time,scheduled_time")


@st.composite
def openb_pod_rows(draw, min_size: int = 0, max_size: int = 20) -> list[list[str]]:
    """Cells of an openb pod list: unique pod numbers (regular ``openb-pod-NNNN`` names and
    irregular ones), CPU-only pods, GPU-sharing pods (num_gpu 1, gpu_milli < 1000), multi-GPU
    pods, every phase, never-scheduled pods, unknown creation or deletion, model constraints with
    ``|``, empty qos; times ordered creation <= scheduled <= deletion where known."""
    n = draw(st.integers(min_size, max_size))
    ids = draw(st.lists(st.integers(0, 99_999), min_size=n, max_size=n, unique=True))
    rows = []
    for i in ids:
        name = draw(st.sampled_from((f"openb-pod-{i:04d}", f"openb-pod-{i:04d}",
                                     f"job-x{i}", f"p{i}")))
        num = draw(st.sampled_from((0, 1, 1, 1, 2, 4, 8)))
        milli = 0 if num == 0 else (draw(st.sampled_from((1000, 1000, 50, 220, 460, 810, 999)))
                                    if num == 1 else 1000)
        phase = draw(st.sampled_from(OPENB_PHASES))
        created = _maybe(draw, st.integers(0, 13_000_000))
        scheduled = None if draw(st.booleans()) and phase in ("Pending", "Failed") else \
            (created or 0) + draw(st.integers(0, 50_000))
        if draw(st.integers(0, 9)) == 0:  # start unknown whatever the phase
            scheduled = None
        deleted = None if draw(st.integers(0, 9)) == 0 else \
            max(t for t in (created, scheduled, 0) if t is not None) + draw(st.integers(0, 10**6))
        rows.append([name, str(draw(st.integers(0, 96_000))), str(draw(st.integers(0, 786_432))),
                     str(num), str(milli), draw(st.sampled_from(("", "", "T4", "V100M16|V100M32"))),
                     draw(st.sampled_from(("LS", "BE", "Burstable", "Guaranteed", ""))), phase,
                     "" if created is None else str(created), "" if deleted is None else str(deleted),
                     "" if scheduled is None else str(scheduled)])
    return rows


@st.composite
def openb_node_rows(draw, min_size: int = 1, max_size: int = 12) -> list[list[str]]:
    """Cells of an openb node list: CPU-only nodes (empty model) and GPU nodes of 1-8 GPUs with
    a model, runs of identical nodes, names numbered in order with gaps."""
    n = draw(st.integers(min_size, max_size))
    rows, number = [], draw(st.integers(0, 50))
    for _ in range(n):
        number += draw(st.sampled_from((1, 1, 1, 7)))
        gpu = draw(st.sampled_from((0, 1, 2, 4, 8)))
        model = draw(st.sampled_from(("G2", "T4", "V100M32", "A10"))) if gpu else ""
        rows.append([f"openb-node-{number:04d}", str(draw(st.sampled_from((32_000, 96_000)))),
                     str(draw(st.sampled_from((262_144, 786_432)))), str(gpu), model])
    return rows


def openb_csv(header: str, rows: list[list[str]]) -> str:
    """CSV text of a header and cell rows (``\\n`` line ends, as the published files)."""
    return "\n".join([header] + [",".join(r) for r in rows]) + "\n"


# ---------------------------------------------------------------- Slurm sacct and PBS (issue 16)

HOST_PREFIXES = ("node", "gpu", "cn-", "r1n")


@st.composite
def slurm_timelimit_texts(draw) -> tuple[str, int | None]:
    """(a Slurm time limit in any of its forms, its seconds; None for no limit of its own)."""
    form = draw(st.sampled_from(("UNLIMITED", "Partition_Limit", "MM", "MM:SS", "HH:MM:SS",
                                 "D-HH", "D-HH:MM", "D-HH:MM:SS")))
    d, h, m, s = (draw(st.integers(0, 30)), draw(st.integers(0, 23)), draw(st.integers(0, 59)),
                  draw(st.integers(0, 59)))
    big = draw(st.integers(0, 20_000))
    return {
        "UNLIMITED": ("UNLIMITED", None), "Partition_Limit": ("Partition_Limit", None),
        "MM": (str(big), big * 60), "MM:SS": (f"{big}:{s:02d}", big * 60 + s),
        "HH:MM:SS": (f"{big:02d}:{m:02d}:{s:02d}", big * 3600 + m * 60 + s),
        "D-HH": (f"{d}-{h:02d}", (d * 24 + h) * 3600),
        "D-HH:MM": (f"{d}-{h:02d}:{m:02d}", (d * 24 + h) * 3600 + m * 60),
        "D-HH:MM:SS": (f"{d}-{h:02d}:{m:02d}:{s:02d}", (d * 24 + h) * 3600 + m * 60 + s),
    }[form]


@st.composite
def slurm_tres(draw) -> dict[str, str]:
    """A TRES mapping as sacct writes it: billing, cpu, plain and typed GPUs, mem, node, energy."""
    out: dict[str, str] = {}
    for key in ("billing", "cpu", "energy", "gres/gpu", "gres/gpu:v100", "gres/gpu:a100",
                "mem", "node", "fs/disk"):
        if draw(st.booleans()):
            if key in ("mem", "fs/disk"):
                out[key] = f"{draw(st.integers(0, 4096))}{draw(st.sampled_from(('', 'K', 'M', 'G', 'T')))}"
            else:
                out[key] = str(draw(st.integers(0, 512)))
    return out


@st.composite
def hostlists(draw, max_size: int = 12) -> list[str]:
    """Host names as Slurm node lists hold them: prefixed numbers of one width, some runs."""
    hosts: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        prefix = draw(st.sampled_from(HOST_PREFIXES))
        width = draw(st.integers(1, 4))
        start = draw(st.integers(0, max(0, 10 ** width - 20)))
        top = min(start + 19, 10 ** width - 1)
        numbers = sorted(draw(st.sets(st.integers(start, top), min_size=1, max_size=6)))
        hosts += [f"{prefix}{n:0{width}d}" for n in numbers]
    if draw(st.booleans()):
        hosts.append(draw(st.sampled_from(("login", "head-a", "gpu1-b"))))
    return list(dict.fromkeys(hosts))[:max_size]


SLURM_FINISHED = {"COMPLETED": (0, 1), "FAILED": (1, 0), "OUT_OF_MEMORY": (1, 0),
                  "TIMEOUT": (2, 0), "CANCELLED by 1001": (3, 5), "CANCELLED": (3, 5),
                  "CANCELLED by 0": (4, 5), "NODE_FAIL": (4, 5), "PREEMPTED": (4, 5),
                  "REQUEUED": (4, 5)}


_SACCT_STATES = st.sampled_from((*sorted(SLURM_FINISHED), "PENDING", "RUNNING"))
_SACCT_STEPS = st.lists(st.sampled_from(("batch", "extern", "0", "1")), unique=True)
_SACCT_TIMELIMITS = slurm_timelimit_texts()


@st.composite
def sacct_files(draw, max_jobs: int = 12, zone: str = "Asia/Tokyo") -> tuple[str, list[dict]]:
    """(sacct --parsable2 text, the jobs it holds as expected job-table values).

    Job lines in every id form (plain, array task 123_4, heterogeneous 123+0, with a unique
    JobIDRaw), their .batch/.extern/.0 steps, pending and running jobs (not jobs), never-started
    cancelled jobs (Start None/Unknown), every time-limit form, plain and typed GPU TRES,
    compressed node lists; lines in file order or shuffled (steps before their jobs). Times are
    local in ``zone`` (a zone without daylight saving)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    tzinfo = ZoneInfo(zone)

    def local(t: int) -> str:
        return datetime.fromtimestamp(t, tzinfo).strftime("%Y-%m-%dT%H:%M:%S")

    header = ("JobID|JobIDRaw|User|Group|Partition|Submit|Eligible|Start|End|Elapsed|ElapsedRaw|"
              "Timelimit|State|ExitCode|NNodes|NCPUS|ReqTRES|AllocTRES|NodeList")
    lines, expected = [header], []
    raw_ids = draw(st.lists(st.integers(1, 10 ** 7), min_size=1, max_size=max_jobs, unique=True))
    t = EPOCH_2017 + draw(st.integers(0, 10 ** 7))
    for raw in raw_ids:
        t += draw(st.integers(0, 3600))
        form = draw(st.sampled_from(("plain", "array", "het")))
        shown = {"plain": str(raw), "array": f"{raw - 3}_{draw(st.integers(0, 99))}",
                 "het": f"{raw}+{draw(st.integers(0, 2))}"}[form] if raw > 3 else str(raw)
        state = draw(_SACCT_STATES)
        never = state.startswith("CANCELLED") and draw(st.booleans()) or state == "PENDING"
        wait, run = draw(st.integers(0, 10 ** 5)), draw(st.integers(0, 3 * 86400))
        start = None if never else t + wait
        end = None if state in ("PENDING", "RUNNING") else (t + wait + run if start else t + wait)
        nodes = draw(st.integers(1, 4))
        per_node = draw(st.sampled_from((0, 1, 2, 4, 8)))
        typed = draw(st.booleans())
        gpu_tres = f"gres/gpu:v100={nodes * per_node}" if typed else f"gres/gpu={nodes * per_node}"
        mem_g = draw(st.integers(1, 64))
        req = f"billing={nodes * 4},cpu={nodes * 4},{gpu_tres},mem={mem_g}G,node={nodes}"
        alloc = req if start else ""
        hosts = [f"gpu{n:02d}" for n in range(1, nodes + 1)]
        limit_text, limit = draw(_SACCT_TIMELIMITS)
        user, group, part = draw(names), draw(names), draw(st.sampled_from(("gpu", "debug", "long")))
        lines.append("|".join((
            shown, str(raw), user, group, part, local(t), local(t) if draw(st.booleans()) else "Unknown",
            local(start) if start else draw(st.sampled_from(("None", "Unknown"))),
            local(end) if end else "Unknown", "00:00:00" if not start else
            (f"{run // 86400}-" if run >= 86400 else "") + f"{run % 86400 // 3600:02d}:{run % 3600 // 60:02d}:{run % 60:02d}",
            str(run if start else 0), limit_text, state,
            draw(st.sampled_from(("0:0", "1:0", "0:15"))), str(nodes), str(nodes * 4), req, alloc,
            ("gpu[01-%02d]" % nodes if nodes > 1 else "gpu01") if start else "None assigned")))
        if start:
            for step in draw(_SACCT_STEPS):
                lines.append("|".join((f"{shown}.{step}", f"{raw}.{step}", "", "", "", "",
                                       local(start), local(start), local(end) if end else "Unknown",
                                       "00:00:00", "0", "", "COMPLETED", "0:0", "1", "4", "",
                                       f"cpu=4,{gpu_tres},node=1", hosts[0])))
        if state in ("PENDING", "RUNNING"):
            continue
        termcode, status = SLURM_FINISHED[state]
        expected.append({
            "job_id": raw, "user": user, "group": group, "queue": part, "nodes": nodes,
            "gpus": nodes * per_node, "gpus_per_node": per_node, "requested_walltime_s": limit,
            "termcode": termcode, "swf_status": status, "submit_time": t, "start_time": start,
            "finish_time": end, "wait_s": wait if start else None,
            "walltime_s": run if start else None, "requested_procs": nodes * per_node,
            "requested_memory_kb": (mem_g * 1024 ** 2 // (nodes * per_node)
                                    if per_node and mem_g * 1024 ** 2 % (nodes * per_node) == 0
                                    else None)})
    if draw(st.booleans()):  # files cut, merged or sorted by hand: steps before their jobs
        lines[1:] = draw(st.permutations(lines[1:]))
    return "\n".join(lines) + "\n", expected


@st.composite
def slurm_job_tables(draw, max_size: int = 20) -> pa.Table:
    """GPU job tables holding only what sacct output carries, consistently (gpus known, GPUs per
    node = gpus / nodes, wait = start - submit, SWF status from the termcode, no run time without
    a start, memory per requested GPU), in UTC."""
    status = {0: 1, 1: 0, 2: 0, 3: 5, 4: 5}
    n = draw(st.integers(1, max_size))
    ids = draw(st.lists(st.integers(0, 10 ** 9), min_size=n, max_size=n, unique=True))
    rows = []
    submit = EPOCH_2017
    for job_id in ids:
        submit += draw(st.integers(0, 10 ** 5))
        started = draw(st.integers(0, 5)) > 0
        wait, run = draw(st.integers(0, 10 ** 5)), draw(st.integers(0, 10 ** 6))
        nodes = _maybe(draw, st.integers(1, 64))
        gpus = draw(st.integers(0, 256))
        req = _maybe(draw, st.integers(0, 256))
        term = draw(st.integers(0, 4))
        start = submit + wait if started else None
        rows.append({
            "job_id": job_id, "user": _maybe(draw, names), "group": _maybe(draw, names),
            "queue": _maybe(draw, names), "nodes": nodes, "gpus": gpus,
            "gpus_per_node": gpus // nodes if nodes and gpus % nodes == 0 else None,
            "requested_walltime_s": _maybe(draw, st.integers(0, 10 ** 7)), "termcode": term,
            "swf_status": status[term], "submit_time": submit, "start_time": start,
            "finish_time": (start + run if started
                            else (submit + wait if draw(st.booleans()) else None)),
            "wait_s": wait if started else None, "walltime_s": run if started else None,
            "requested_procs": req,
            "requested_memory_kb": _maybe(draw, st.integers(0, 10 ** 8)) if req else None})
    table = pa.Table.from_pylist(rows)
    return jt.from_columns({c: table.column(c) for c in table.column_names},
                           {"time_zone": "UTC", "processor_unit": "gpu"})


@st.composite
def pbs_select_chunks(draw) -> list[tuple[int, dict[str, str]]]:
    """PBS Pro select chunks: ``N:ncpus=8:ngpus=4`` joined by ``+``."""
    chunks = []
    for _ in range(draw(st.integers(1, 3))):
        res = {}
        for key in ("ncpus", "ngpus", "mem", "host", "model"):
            if draw(st.booleans()) or (key == "ncpus" and not res):
                res[key] = {"mem": f"{draw(st.integers(1, 512))}gb", "host": f"node{draw(st.integers(1, 99))}",
                            "model": draw(st.sampled_from(("v100", "a100")))}.get(
                                key, str(draw(st.integers(0, 64))))
        chunks.append((draw(st.integers(1, 16)), res))
    return chunks


@st.composite
def pbs_logs(draw, max_jobs: int = 10, zone: str = "UTC") -> tuple[str, list[dict]]:
    """(a PBS Pro / Torque accounting log, its jobs as expected job-table values).

    Q (several per job, routed on), S (an earlier requeued run), E (qtime, only ctime, or
    neither), D, A and other records interleaved; select (``2:ncpus=8:ngpus=4``, several chunks)
    and Torque nodes (``2:ppn=8:gpus=4``) specs; walltime-exceeded, failed, deleted (by the
    user, by root) and aborted jobs; jobs deleted before they ran (D without E)."""
    from datetime import datetime, timezone

    def stamp(t: int) -> str:
        return datetime.fromtimestamp(t, timezone.utc).strftime("%m/%d/%Y %H:%M:%S")

    records: list[tuple[int, str]] = []
    expected = []
    ids = draw(st.lists(st.integers(1, 10 ** 7), min_size=1, max_size=max_jobs, unique=True))
    t = EPOCH_2017
    for job in ids:
        t += draw(st.integers(0, 3600))
        server = draw(st.sampled_from(("pbs01", "torque.example.org", "")))
        jid = f"{job}.{server}" if server else str(job)
        kind = draw(st.sampled_from(("ok", "fail", "walltime", "qdel", "qdel-root", "deleted-queued",
                                     "aborted-queued", "signal")))
        user, group, queue = draw(names), draw(names), draw(st.sampled_from(("gpu", "short")))
        records.append((t, f"{stamp(t)};Q;{jid};queue={queue}"))
        for _ in range(draw(st.integers(0, 2))):  # routed on: later Q records; the earliest counts
            moved = t + draw(st.integers(0, 600))
            records.append((moved, f"{stamp(moved)};Q;{jid};queue={queue}"))
        nodes, per_node, cpus = draw(st.integers(1, 4)), draw(st.integers(0, 8)), draw(st.integers(1, 32))
        spec = (f"Resource_List.select={nodes}:ncpus={cpus}:ngpus={per_node}"
                if draw(st.booleans()) else f"Resource_List.nodes={nodes}:ppn={cpus}:gpus={per_node}")
        limit = draw(st.integers(60, 3 * 86400))
        if kind in ("deleted-queued", "aborted-queued"):
            when = t + draw(st.integers(1, 10 ** 4))
            code = "D" if kind == "deleted-queued" else "A"
            records.append((when, f"{stamp(when)};{code};{jid};requestor={user}@login"))
            expected.append({"job_id": job, "user": None, "termcode": 3 if code == "D" else 4,
                             "swf_status": 5, "submit_time": t, "start_time": None,
                             "finish_time": when, "gpus": 0, "nodes": None})
            continue
        wait = draw(st.integers(0, 10 ** 4))
        run = limit if kind == "walltime" else draw(st.integers(0, limit - 1))
        start, end = t + wait, t + wait + run
        if wait and draw(st.booleans()):  # an earlier run, requeued: the latest S counts
            first = t + draw(st.integers(0, wait - 1))
            records.append((first, f"{stamp(first)};S;{jid};user={user} group={group} start={first}"))
        records.append((start, f"{stamp(start)};S;{jid};user={user} group={group} start={start}"))
        exit_status = {"ok": 0, "fail": draw(st.integers(1, 255)), "walltime": draw(st.sampled_from((-11, -29, 1, 271))),
                       "qdel": 271, "qdel-root": 271, "signal": 265}[kind]
        termcode = {"ok": 0, "fail": 1, "walltime": 2, "qdel": 3, "qdel-root": 4, "signal": 4}[kind]
        if kind in ("qdel", "qdel-root"):
            requestor = user if kind == "qdel" else "root"
            records.append((end, f"{stamp(end)};D;{jid};requestor={requestor}@login"))
        # qtime, else ctime, else the earliest Q record (a UTC stamp: only where the zone is UTC)
        queued = draw(st.sampled_from(("ctime={t} qtime={t} ", "ctime={t} ", "qtime={t} ")
                                      + (("",) if zone == "UTC" else ()))).format(t=t)
        h, m, s = limit // 3600, limit % 3600 // 60, limit % 60
        used = f"{run // 3600:02d}:{run % 3600 // 60:02d}:{run % 60:02d}"
        records.append((end, f"{stamp(end)};E;{jid};user={user} group={group} jobname=my job "
                              f"queue={queue} {queued}etime={t} start={start} "
                              f"exec_host=node01/0*{cpus} {spec} Resource_List.walltime={h:02d}:{m:02d}:{s:02d} "
                              f"session=42 end={end} Exit_status={exit_status} "
                              f"resources_used.walltime={used} resources_used.cput=00:00:01"))
        if draw(st.booleans()):
            records.append((end, f"{stamp(end)};L;license;floating license hour:0/10"))
        expected.append({"job_id": job, "user": user, "termcode": termcode,
                         "swf_status": {0: 1, 1: 0, 2: 0, 3: 5, 4: 5}[termcode],
                         "submit_time": t, "start_time": start, "finish_time": end,
                         "gpus": nodes * per_node, "nodes": nodes})
    records.sort(key=lambda r: r[0])  # stable: a job's records keep their order
    return "".join(text + "\n" for _, text in records), expected


@st.composite
def download_lists(draw):
    """Download rows of an archive page (issue 17): relative paths with awkward characters
    (spaces, quotes, ampersands, angle brackets, non-ASCII), sizes and SHA-256 digests."""
    from swftools.report.html import Download

    name_chars = st.sampled_from(list("abcXYZ019 _-.&<>\"'é漢"))
    parts = st.lists(st.text(name_chars, min_size=1, max_size=12)
                     .filter(lambda p: p not in (".", "..") and p.strip() == p and p),
                     min_size=1, max_size=3)
    paths = draw(st.lists(parts.map("/".join), min_size=0, max_size=6, unique=True))
    return [Download(path, draw(st.integers(0, 10 ** 12)),
                     draw(st.text("0123456789abcdef", min_size=64, max_size=64)))
            for path in paths]


@st.composite
def numeric_columns(draw):
    """(values, null mask) of a numeric numpy column for ``swftools.table.from_numpy`` (issue
    15): int64, int32, uint8 or float64 (with NaN, infinities and -0.0), any nulls, length 0-300."""
    import numpy as np
    from hypothesis.extra import numpy as hnp

    dtype = draw(st.sampled_from((np.int64, np.int32, np.uint8, np.float64)))
    n = draw(st.integers(0, 300))
    elements = (st.floats(allow_nan=True, allow_infinity=True) if dtype is np.float64 else None)
    values = draw(hnp.arrays(dtype, n, elements=elements))
    null = draw(hnp.arrays(np.bool_, n))
    return values, null


# --- lean reading and validation at scale (issue 15) -------------------------------------------

@st.composite
def sparse_job_tables(draw, max_size: int = 30) -> pa.Table:
    """An AAIC job table (at least one row) in which some nullable columns are nulled entirely,
    some in part, and whose columns are cut into random chunks: the layouts a Parquet reader
    that skips all-null columns, and validation's per-column arrays, must treat alike."""
    import numpy as np

    from swftools import table as jt

    table = draw(aaic_jobs(min_size=1, max_size=max_size))
    n = table.num_rows
    nullable = [f.name for f in table.schema if f.nullable]
    for name in draw(st.lists(st.sampled_from(nullable), unique=True, max_size=6)):
        i = table.schema.get_field_index(name)
        mask = np.ones(n, bool) if draw(st.booleans()) else draw(
            st.lists(st.booleans(), min_size=n, max_size=n).map(np.array))
        column = pa.array(table.column(i).to_pylist(), table.schema.field(i).type,
                          mask=np.asarray(mask, bool))
        table = table.set_column(i, table.schema.field(i), column)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
    bounds = [0, *cuts, n]
    chunked = pa.Table.from_batches(
        [b for a, z in zip(bounds, bounds[1:]) for b in table.slice(a, z - a).to_batches()] or
        table.to_batches(), schema=table.schema)
    return jt.with_metadata(chunked, jt.get_metadata(table))


integer_cell_columns = st.lists(
    st.one_of(st.from_regex(r"\A[+-]?[0-9]{1,25}\Z"), st.sampled_from(("", "1.5", "x", " 7"))),
    min_size=1, max_size=12)
"""Columns of integer-like CSV cells, short and long mixed (the 64-bit range check of a column)."""


@st.composite
def swf_job_bodies(draw) -> bytes:
    """Newline-terminated SWF job lines for the tokenizer kernels (issue 15): 18 numbers a line
    (sometimes fewer or more), integers and decimals, -1, separated by runs of spaces, tabs and
    carriage returns, with trailing blanks; now and then a bad token (a letter, 25 digits)."""
    number = st.one_of(
        st.integers(-1, 10 ** 12).map(str),
        st.tuples(st.integers(0, 10 ** 6), st.integers(0, 10 ** 4), st.integers(0, 3)).map(
            lambda t: f"{t[0]}.{str(t[1]).zfill(t[2]) if t[2] else ''}"),
        st.sampled_from(("-0.5", "007", "-1", "0", "1.", "25x", "1" * 25, "-", ".")))
    gap = st.text(" \t\r", min_size=1, max_size=4).filter(lambda g: " " in g or len(g) > 1)
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        count = draw(st.sampled_from([18] * 8 + [17, 19, 20]))
        tokens = draw(st.lists(number, min_size=count, max_size=count))
        seps = draw(st.lists(st.one_of(st.just(" "), gap), min_size=count, max_size=count))
        lead, tail = draw(st.sampled_from(("", " ", "   "))), draw(st.sampled_from(("", "", " ")))
        lines.append(lead + "".join(s + t for s, t in zip(seps, tokens))[1:] + tail)
    return "".join(line + "\n" for line in lines).encode("ascii")


@st.composite
def sacct_split_texts(draw) -> tuple[bytes, int, int]:
    """(sacct-like bytes after the header, fields per line, JobID position) for the compiled
    splitter: job ids and their ``.batch``/``.0`` steps (sometimes after another job, or of no
    job), cells with the separators' neighbours (``.``, spaces, digits, non-ASCII), line breaks
    ``\\n``, ``\\r\\n`` or ``\\r``, with or without a last one; now and then an empty line or one
    with a field too few or too many."""
    width = draw(st.integers(1, 6))
    id_pos = draw(st.integers(0, width - 1))
    letters = st.sampled_from(list("09az.-_=, [],/:") + ["é"])
    short = st.text(letters, max_size=6)
    # now and then a cell longer than the compiled scan's 64-byte blocks
    cell = st.one_of(short, short, short, st.text(letters, min_size=60, max_size=200))
    ids: list[str] = []
    lines = []
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["job"] * 3 + ["step"] * 4 + ["odd", "empty", "count"]))
        if kind == "empty":
            lines.append("")
            continue
        cells = draw(st.lists(cell, min_size=width, max_size=width))
        if kind == "job":
            ids.append(str(draw(st.integers(0, 10 ** 4))))
            cells[id_pos] = ids[-1]
        elif kind == "step":
            parent = draw(st.sampled_from(ids[-2:])) if ids else str(draw(st.integers(0, 99)))
            cells[id_pos] = f"{parent}.{draw(st.sampled_from(('batch', 'extern', '0', '1.2')))}"
        elif kind == "count":
            cells = cells[:-1] if draw(st.booleans()) else cells + ["x"]
        lines.append("|".join(cells))
    breaks = draw(st.lists(st.sampled_from(("\n", "\n", "\r\n", "\r")), min_size=len(lines),
                           max_size=len(lines)))
    text = "".join(line + brk for line, brk in zip(lines, breaks))
    if lines and draw(st.booleans()):
        text = text[:-len(breaks[-1])]  # no line break after the last line
    return text.encode("utf-8"), width, id_pos


# --- the compiled twin of random.Random (replay/placement/mtrand.py) -------------------------

@st.composite
def mt_call_sequences(draw, max_ops: int = 40):
    """(seed, ops) for one generator: ``("bits", k)``, ``("below", n)``, ``("choice", n)``,
    ``("sample", n, k)`` (small and large ``n``, ``k`` up to ``n``: both of ``sample``'s
    branches) and ``("burn", count)`` (``count`` x ``getrandbits(32)``, to reach the 624-word
    twist at any point)."""
    seed = draw(st.one_of(st.integers(0, 20), st.integers(-2 ** 64, 2 ** 64)))
    below = st.one_of(st.integers(1, 70), st.integers(1, 2 ** 32 - 1))
    ops = []
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(("bits", "below", "choice", "sample", "sample", "burn")))
        if kind == "bits":
            ops.append((kind, draw(st.integers(0, 32))))
        elif kind in ("below", "choice"):
            ops.append((kind, draw(below)))
        elif kind == "sample":
            n = draw(st.one_of(st.integers(0, 30), st.integers(0, 400), st.integers(0, 3000)))
            k = draw(st.one_of(st.integers(0, min(n, 8)), st.integers(0, n)))
            ops.append((kind, n, k))
        else:
            ops.append((kind, draw(st.integers(1, 700))))
    return seed, ops


@st.composite
def random_placement_cases(draw, max_nodes: int = 100, max_steps: int = 12):
    """(seed, g, free[node][gpu], managed, steps) for ``mtrand.draw_random`` against
    ``placement.Random.draw``: nodes wholly free, busy or mixed, sites up to ``max_nodes`` wide
    (several 32-node words), 1 to 8 GPUs a node (now and then 24 or 30, for ``sample``'s set
    branch over GPUs); a step is ``("draw", shape pick, commit?)`` (a raw number the test maps
    onto the shapes that fit, and whether the placement is then taken) or ``("free", node)``."""
    seed = draw(st.one_of(st.integers(0, 20), st.integers(-2 ** 40, 2 ** 40)))
    g = draw(st.sampled_from(list(range(1, 9)) * 3 + [24, 30]))
    n_nodes = draw(st.one_of(st.integers(1, 8), st.integers(1, max_nodes)))
    managed = draw(st.one_of(st.just(n_nodes), st.integers(1, n_nodes)))
    free = []
    for _ in range(n_nodes):
        kind = draw(st.sampled_from(("full", "full", "busy", "mixed")))
        if kind == "mixed":
            free.append(draw(st.lists(st.booleans(), min_size=g, max_size=g)))
        else:
            free.append([kind == "full"] * g)
    free[0] = [True] * g  # something always fits at first
    steps = []
    for _ in range(draw(st.integers(1, max_steps))):
        if draw(st.integers(0, 4)):
            steps.append(("draw", draw(st.integers(0, 10 ** 6)), draw(st.booleans())))
        else:
            steps.append(("free", draw(st.integers(0, n_nodes - 1))))
    return seed, g, free, managed, steps


# --- the compiled general replay path (replay/_engine_general.pyx): wider inputs -------------

@st.composite
def placement_wide_gpu_cases(draw, max_jobs: int = 40, max_nodes: int = 70):
    """``placement_gpu_cases`` on sites of up to ``max_nodes`` nodes: node sets over several of
    the compiled engine's 32-node words, wide multi-node jobs."""
    table, site = draw(replay_gpu_jobs(max_jobs=max_jobs, max_nodes=max_nodes))
    inputs = draw(placement_inputs(site.max_nodes, site.gpus_per_node, table.num_rows))
    return table, site, inputs


@st.composite
def placement_wide_flat_cases(draw, max_jobs: int = 40, max_procs: int = 100):
    """(table, procs, inputs) for a flat pool of up to ``max_procs`` processors (one-GPU nodes
    over several words): many multi-processor jobs, some wider than the pool."""
    procs = draw(st.integers(1, max_procs))
    n = draw(st.integers(0, max_jobs))
    t = draw(st.integers(0, 10**5))
    cols: dict[str, list] = {c: [] for c in ("job_id", "submit_time", "walltime_s", "gpus",
                                             "requested_walltime_s")}
    widths = st.sampled_from((1, 1, 2, 3, max(1, procs // 4), max(1, procs // 2), procs,
                              procs + 1)) | st.integers(1, procs)
    for job_id in range(1, n + 1):
        t += draw(st.sampled_from((0, 0, 1, 5, 30)))
        run = draw(_FLAT_RUNS)
        cols["job_id"].append(job_id)
        cols["submit_time"].append(t)
        cols["walltime_s"].append(run)
        cols["gpus"].append(draw(widths))
        cols["requested_walltime_s"].append(_requested(draw, run, st.integers(0, 500)))
    table = jt.from_columns(cols)
    return table, procs, draw(placement_inputs(procs, 1, n))


@st.composite
def whatif_replay_cases(draw, max_jobs: int = 30, max_nodes: int = 40, max_gpus: int = 4):
    """(table, site, profile) for a what-if replay on a ``whatif_sites`` site: jobs of every
    width (wider than the site too), per-GPU scores from a few values (ties) and classes."""
    import numpy as np

    from swftools.whatif.profile import Profile

    site = draw(whatif_sites(max_nodes=max_nodes, max_gpus=max_gpus))
    n, g = len(site.gpu_model_of_node), site.gpus_per_node
    pool = draw(st.lists(st.floats(0.8, 1.2), min_size=1, max_size=4))
    scores = np.array([[draw(st.sampled_from(pool)) for _ in range(g)] for _ in range(n)])
    classes = np.array([[draw(st.integers(0, 2)) for _ in range(g)] for _ in range(n)])
    count = draw(st.integers(1, max_jobs))
    t = draw(st.integers(1_500_000_000, 1_600_000_000))
    cols: dict[str, list] = {c: [] for c in ("job_id", "submit_time", "walltime_s", "gpus",
                                             "nodes", "gpus_per_node", "requested_walltime_s")}
    for job_id in range(1, count + 1):
        t += draw(st.sampled_from((0, 0, 1, 10, 100)))
        run = draw(_WHATIF_RUNS)
        nodes = draw(st.sampled_from((1, 1, 1, 2, 3, max(1, n // 2), n, n + 1)))
        per_node = g if nodes > 1 else draw(st.integers(1, g))
        cols["job_id"].append(draw(st.integers(1, 10**9)) * 100 + job_id)
        cols["submit_time"].append(t)
        cols["walltime_s"].append(run)
        cols["gpus"].append(nodes * per_node)
        cols["nodes"].append(nodes)
        cols["gpus_per_node"].append(per_node)
        cols["requested_walltime_s"].append(_requested(draw, run, st.integers(1, 9000)))
    return jt.from_columns(cols), site, Profile(scores=scores, classes=classes)


def atomic_write_ops(max_size: int = 8):
    """Sequences of ``(op, force, umask)`` for the atomic writers: ``op`` is ``file`` or
    ``dir`` (a swftools write), or ``user`` / ``link`` (the target becomes a user's folder or a
    link to another folder, when it does not exist yet)."""
    op = st.tuples(st.sampled_from(("file", "dir", "file", "dir", "user", "link")), st.booleans(),
                   st.sampled_from((0o022, 0o077, 0o027, 0o002, 0o000, 0o007)))
    return st.lists(op, min_size=1, max_size=max_size)


# --- issue 29: name cells and settings URLs (tests/security/) ---------------------------------

CONTROL_CHARACTERS = [chr(c) for c in list(range(0x20)) + list(range(0x7f, 0xa0))]
"""Every character of Unicode category Cc (what no name cell may hold)."""


@st.composite
def sacct_user_names(draw) -> str:
    """A sacct User cell: any text without the field separator or a line break, often with a
    control character (NUL, tab, ESC, DEL, a C1 control) somewhere in it."""
    plain = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="|\r\n"),
                    min_size=1, max_size=12)
    name = draw(plain)
    if draw(st.booleans()):
        bad = draw(st.sampled_from(tuple(c for c in CONTROL_CHARACTERS if c not in "\r\n")))
        at = draw(st.integers(0, len(name)))
        name = name[:at] + bad + name[at:]
    return name


url_texts = st.one_of(
    st.text(max_size=30),
    st.builds(lambda scheme, sep, rest: scheme + sep + rest,
              st.sampled_from(("http", "https", "HTTPS", "javascript", "JavaScript", "data",
                               "file", "ftp", "vbscript", " javascript", "java\tscript", "")),
              st.sampled_from((":", "://", ":/", ":\\\\", "//")),
              st.lists(st.sampled_from(list("ab.c/?#@:%\\ \t\x00\x7f\u0085é") + ["alert(1)"]),
                       max_size=12).map("".join)))
"""Link targets, good and hostile: web URLs, other schemes, spaces, controls, user@host."""


# ---- tar members for verify (issue 29): names, types and sizes an attacker may choose ----
_TAR_NAME_PARTS = st.one_of(
    st.sampled_from((".", "..", "", "top", "data", "SHA256SUMS", "index.html", "datapackage.json",
                     "a\\b", "..\\..", "C:", "~", " ", "\u00e9t\u00e9", "x" * 120)),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00/"),
            min_size=1, max_size=12))


@st.composite
def tar_member_specs(draw, max_members: int = 6):
    """``[(name, type, size, claimed), ...]`` for a hostile tarball: names with ``.``/``..``/
    empty parts, backslashes, leading slashes; every member type tarfile knows; ``claimed``
    is the size the header states (it may differ from ``size``, the bytes actually there)."""
    import tarfile

    types = [tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE,
             tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE, tarfile.CONTTYPE]
    out = []
    for _ in range(draw(st.integers(1, max_members))):
        parts = draw(st.lists(_TAR_NAME_PARTS, min_size=1, max_size=4))
        name = ("/" if draw(st.booleans()) and draw(st.booleans()) else "") + "/".join(parts)
        kind = draw(st.sampled_from(types))
        size = draw(st.integers(0, 3000))
        claimed = size if draw(st.booleans()) else draw(st.integers(0, 1 << 40))
        out.append((name, kind, size, claimed))
    return out


@st.composite
def pbs_irregular_logs(draw, max_jobs: int = 8) -> tuple[str, list[dict]]:
    """(an irregular PBS log as real servers write them, its jobs as expected values, UTC).

    Several Q records per job (routing queues), E records without qtime (ctime, else the first
    Q stamp), array parents and subjobs ``N[i]``, jobs requeued (an R record, a second S and E:
    the last run counts), free-text A/a/L/Y records, quoted values, the server part written on
    some records only, and the records shuffled."""
    from datetime import datetime, timezone

    def stamp(t: int) -> str:
        return datetime.fromtimestamp(t, timezone.utc).strftime("%m/%d/%Y %H:%M:%S")

    lines: list[str] = []
    expected = []
    numbers = draw(st.lists(st.integers(1, 10 ** 6), min_size=1, max_size=max_jobs, unique=True))
    t = EPOCH_2017
    for number in numbers:
        t += draw(st.integers(0, 600))
        server = draw(st.sampled_from((".pbs01", ".[hostname_1]", "")))
        keys = [str(number)]
        if draw(st.integers(0, 3)) == 0:  # an array job: its parent and 1-3 subjobs
            lines.append(f"{stamp(t)};Q;{number}[]{server};queue=q")
            keys = [f"{number}[{i}]" for i in range(draw(st.integers(1, 3)))]
        for key in keys:
            jid = key + draw(st.sampled_from((server, "")))
            for _ in range(draw(st.integers(1, 3))):
                lines.append(f"{stamp(t)};Q;{jid};queue={draw(st.sampled_from(('route', 'q')))}")
            runs = draw(st.integers(1, 3))
            start = t + draw(st.integers(0, 100))
            for run in range(runs):
                end = start + draw(st.integers(0, 500))
                used = max(0, end - start - draw(st.integers(0, 3)))  # the log's own figure
                qtime = draw(st.sampled_from((f"qtime={t} ctime={t} ", f"ctime={t} ", "")))
                lines.append(f"{stamp(start)};S;{jid};user=u start={start}")
                lines.append(f'{stamp(end)};E;{jid};user=u account="A 1" {qtime}'
                             f"start={start} end={end} Exit_status=0 "
                             f"Resource_List.select=\"1:ncpus=4:note=hi there\" "
                             f"resources_used.walltime={used}")
                if run < runs - 1:
                    lines.append(f"{stamp(end)};R;{jid};requestor=root@pbs01")
                    start = end + draw(st.integers(1, 50))  # a later run ends later: "last" is unambiguous
            if draw(st.booleans()):
                lines.append(f"{stamp(end)};a;{jid};Job attributes altered: walltime = 1:00")
            if draw(st.booleans()):
                lines.append(f"{stamp(end)};A;{jid};message=job aborted by a free text with=signs")
            expected.append({"key": key, "submit_time": t, "start_time": start,
                             "finish_time": end, "walltime_s": end - start, "cpus": 4})
    lines.append(f"{stamp(t)};L;license;floating license hour:0/10")
    order = draw(st.permutations(range(len(lines))))
    return "".join(lines[i] + "\n" for i in order), expected


# --- walltime reconciliation and the cpus column (issue 24 items 4-5) -------------------------

_epoch_or_none = st.none() | st.integers(0, 4_000_000_000)


@st.composite
def walltime_columns(draw, max_size: int = 20) -> tuple[list, list, list | None]:
    """(start, finish, recorded) columns as lists with None for unknown; finish may lie before
    start, recorded may be absent (None instead of a list)."""
    n = draw(st.integers(0, max_size))
    start = draw(st.lists(_epoch_or_none, min_size=n, max_size=n))
    finish = [None if s is None or draw(st.integers(0, 5)) == 0
              else s + draw(st.integers(-10, 10**6)) for s in start]
    if draw(st.booleans()):
        return start, finish, None
    recorded = [draw(st.none() | st.integers(0, 10**6) |
                     st.just(None if f is None or s is None else max(f - s, 0)))
                for s, f in zip(start, finish)]
    return start, finish, recorded


@st.composite
def with_cpus_and_recorded_walltime(draw, tables) -> pa.Table:
    """A table of ``tables`` with ``cpus`` (some CPU-only jobs: 0 GPUs) and a log's own run
    time where it differs from walltime_s, as the issue-24 readers make them."""
    table = draw(tables)
    n = table.num_rows
    cpus = draw(st.lists(st.none() | st.integers(0, 512), min_size=n, max_size=n))
    walls = table.column("walltime_s").to_pylist()
    recorded = [None if w is None or not draw(st.booleans()) else w + draw(st.integers(1, 60))
                for w in walls]
    gpus = table.column("gpus").to_pylist()
    per_node = table.column("gpus_per_node").to_pylist()
    if n and draw(st.booleans()):  # a CPU-only job
        i = draw(st.integers(0, n - 1))
        gpus[i], cpus[i] = 0, cpus[i] or 4
        per_node[i] = 0 if per_node[i] is not None else None
    for name, values in (("gpus", gpus), ("gpus_per_node", per_node), ("cpus", cpus),
                         ("recorded_walltime_s", recorded)):
        table = table.set_column(table.schema.get_field_index(name), name,
                                 pa.array(values, pa.int64()))
    return table


# ---------------------------------------------------------------- sacct layouts (issue 24)

SACCT_ALIASES = {"NNodes": "AllocNodes", "NCPUS": "AllocCPUS"}


@st.composite
def sacct_layouts(draw) -> tuple[str, str, dict]:
    """(a sacct --parsable2 file from ``sacct_files``, the same jobs laid out as real dumps
    have them, the reader options that layout needs): columns in another order, renamed to
    their aliases, in any case, one given twice; the header dropped (``columns=``, sacct's
    --format list) or kept; --parsable's trailing '|'; another --delimiter; blank lines
    anywhere."""
    text, _ = draw(sacct_files(max_jobs=6))
    rows = [line.split("|") for line in text.splitlines()]
    width = len(rows[0])
    order = draw(st.permutations(range(width)))
    if draw(st.booleans()):
        order = list(order) + [draw(st.sampled_from(order))]  # a column given twice
    rows = [[row[k] for k in order] for row in rows]
    header = [SACCT_ALIASES.get(n, n) if draw(st.booleans()) else n for n in rows[0]]
    header = [n.lower() if draw(st.booleans()) else n for n in header]
    options: dict = {}
    if draw(st.booleans()):
        options["columns"] = ",".join(header)
        rows = rows[1:] if draw(st.integers(0, 3)) else [header] + rows[1:]
    else:
        rows = [header] + rows[1:]
    trailing = draw(st.booleans())
    delimiter = draw(st.sampled_from(("|", "|", "☃", ";")))
    if delimiter != "|":
        options["delimiter"] = delimiter
    lines = [delimiter.join(row) + (delimiter if trailing else "") for row in rows]
    for _ in range(draw(st.integers(0, 3))):
        lines.insert(draw(st.integers(0, len(lines))), "")
    return text, "\n".join(lines) + draw(st.sampled_from(("\n", "", "\n\n"))), options


# --- the invariant: every reader x every writer (issue 24 item 7) ------------------------------

IRREGULAR_QUEUES = ("gpu", "cpu", "debug", "long")
"""Queue names of ``irregular_job_tables`` (``irregular_site`` defines them)."""
_SOURCE_ID_FORMS = ("{n}", "{n}_{i}", "{n}+{i}", "{n}[{i}].srv", "{n}.[hostname_1]", "{n}_[1-3]")


@st.composite
def irregular_job_tables(draw, max_size: int = 8, complete: bool | None = None) -> pa.Table:
    """Job tables as the issue-24 readers make them from real logs, valid themselves: rows not
    in submit order, submit ties, unknown names, queues and limits, array-style source ids
    (jobs then numbered 1..n in submit order, ``source_job_id`` kept), CPU-only jobs on a GPU
    site (0 GPUs, their processors in ``cpus``), the log's own run time where it differs from
    finish - start (``recorded_walltime_s``), multi-node jobs, jobs cancelled before they
    started (no start, finish or run time). ``complete``: every user, group, queue and time
    limit known and every job started, as an NQSII log needs (True), not so (False), either
    (None); queues are ``IRREGULAR_QUEUES``."""
    n = draw(st.integers(1, max_size))
    complete = draw(st.booleans()) if complete is None else complete
    maybe = (lambda s: s) if complete else (lambda s: st.none() | s)
    unit = draw(st.sampled_from(("gpu", "processor")))
    t0 = EPOCH_2017 + draw(st.integers(0, 10**6))
    submits, t = [], t0
    for _ in range(n):
        t += draw(st.sampled_from((0, 0, 1, 7, 600)))  # ties
        submits.append(t)
    users = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    # strategy objects made once per table (see _maybe)
    user_names, queues = maybe(st.sampled_from(users)), maybe(st.sampled_from(IRREGULAR_QUEUES))
    limits, cpu_counts = maybe(st.integers(60, 200_000)), st.none() | st.integers(1, 64)
    cols: dict[str, list] = {c: [] for c in (
        "job_id", "user", "group", "queue", "nodes", "gpus_per_node", "gpus", "cpus",
        "requested_walltime_s", "termcode", "submit_time", "start_time", "finish_time", "wait_s",
        "walltime_s", "recorded_walltime_s", "requested_procs")}
    for submit in submits:
        ran = complete or draw(st.integers(0, 7)) > 0
        term = draw(st.sampled_from((0, 0, 1, 2, 3, 4))) if ran else 3
        nodes = draw(st.sampled_from((1, 1, 1, 2, 3)))
        cpu_only = unit == "gpu" and draw(st.integers(0, 3)) == 0
        per_node = 0 if cpu_only else (8 if nodes > 1 else draw(st.integers(1, 8)))
        cpus = draw(cpu_counts) if unit == "gpu" else None
        if cpu_only and cpus is None:
            cpus = draw(st.integers(1, 64))
        wait = draw(st.integers(0, 5000)) if ran else None
        run = draw(st.integers(1, 90_000)) if ran else None
        limit = draw(limits)
        if limit is not None and run is not None and run > limit:
            limit = run if term == 2 or complete else None  # past its limit: ran out of time
        if term == 2 and limit is None and run is not None:
            limit = run
        cols["job_id"].append(None)
        cols["user"].append(draw(user_names))
        cols["group"].append(draw(user_names))
        cols["queue"].append(draw(queues))
        cols["nodes"].append(nodes if ran or draw(st.booleans()) else None)
        cols["gpus_per_node"].append(per_node)
        cols["gpus"].append(nodes * per_node)
        cols["cpus"].append(cpus)
        cols["requested_walltime_s"].append(limit)
        cols["termcode"].append(term)
        cols["submit_time"].append(submit)
        cols["start_time"].append(None if wait is None else submit + wait)
        cols["finish_time"].append(None if wait is None else submit + wait + run)
        cols["wait_s"].append(wait)
        cols["walltime_s"].append(run)
        cols["recorded_walltime_s"].append(
            None if run is None or draw(st.booleans()) else max(0, run + draw(st.sampled_from(
                (-3, -1, 1, 2, 60)))))
        cols["requested_procs"].append(nodes * per_node if draw(st.booleans()) else None)
    if draw(st.booleans()):  # source ids that are not plain numbers: numbered in submit order
        from swftools.formats.jobids import number_jobs

        base = draw(st.integers(1, 10**7))
        sources = [draw(st.sampled_from(_SOURCE_ID_FORMS)).format(n=base + k // 2, i=k)
                   for k in range(n)]
        cols["job_id"], source = number_jobs(sources, submits)
        if source is not None:
            cols["source_job_id"] = source
    else:
        cols["job_id"] = sorted(draw(st.sets(st.integers(1, 10**7), min_size=n, max_size=n)))
    order = draw(st.permutations(range(n)))  # rows not in submit order
    cols = {k: [v[i] for i in order] for k, v in cols.items()}
    meta = {"source_format": draw(st.sampled_from(("slurm", "pbs", "synth"))),
            "processor_unit": unit, "time_zone": "UTC"}
    return jt.from_columns(cols, meta)


def irregular_site():
    """A site for ``irregular_job_tables``: 64 nodes of 8 GPUs, the tables' queues with limits
    every job fits (the NQSII writer numbers queues from it; a pod list's node list)."""
    queues = [{"name": q, "number": k, "nodes_min": 1, "nodes_max": 64, "gpus_per_node_min": 0,
               "gpus_per_node_max": 8, "walltime_default_s": 3600, "walltime_max_s": 10**7}
              for k, q in enumerate(IRREGULAR_QUEUES, 1)]
    return site_from_settings({"name": "irregular", "time_zone": "UTC", "gpus_per_node": 8,
                               "capacity_timeline": [{"since": "1970-01-01T00:00:00+00:00",
                                                      "nodes": 64}], "queues": queues})


@st.composite
def score_csv_with_app_columns(draw):
    """(CSV text, nodes, GPUs per node, {class: scores[node][gpu]}): a score file with 0-3
    per-application-class ``score:<class>`` columns in any order, positive 6-decimal scores."""
    nodes, gpus = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    names = draw(st.lists(st.sampled_from(("IC", "OD", "SA", "RT", "x-1")), max_size=3,
                          unique=True))
    cell = st.integers(1, 3_000_000).map(lambda k: f"{k / 1e6:.6f}")
    rows = [(n, g) for n in range(nodes) for g in range(gpus)]
    rows = draw(st.permutations(rows))
    lines = ["node,gpu_index,score" + "".join(f",score:{c}" for c in names)]
    expected = {c: [[0.0] * gpus for _ in range(nodes)] for c in names}
    for n, g in rows:
        cells = [draw(cell) for _ in names]
        lines.append(f"{n},{g},{draw(cell)}" + "".join(f",{v}" for v in cells))
        for c, v in zip(names, cells):
            expected[c][n][g] = float(v)
    return "\n".join(lines) + "\n", nodes, gpus, expected


@st.composite
def placement_oracle_cases(draw, max_nodes: int = 8):
    """A multi-GPU machine, a partly occupied state and a job shape that fits now, for the
    placement oracle (``test_replay_placement_oracle``): 2-8 GPUs per node, several GPU models,
    racks, classes and per-class scores from a small set (so ties happen), managed nodes a
    prefix. Returns a dict: ``g``, ``n``, ``managed`` (count), ``gpu_free`` (bit set per node),
    ``rack``, ``model``, ``model_speed``, ``score``, ``cls``, ``class_score`` (two grids),
    ``job_class``, ``gain``, ``others`` (the other jobs: nodes, GPUs per node, gain, waiting),
    ``nodes``, ``per_node`` (the job placed, index 0)."""
    g = draw(st.integers(2, 8))
    n = draw(st.integers(2, max_nodes))
    full = (1 << g) - 1
    managed = draw(st.one_of(st.just(n), st.integers(1, n)))
    # whole free nodes often (multi-node jobs need several), full and partial nodes too
    gpu_free = [draw(st.sampled_from((full, full, 0, None))) for _ in range(n)]
    gpu_free = [draw(st.integers(0, full)) if f is None else f for f in gpu_free]
    levels = st.sampled_from((0.8, 0.9, 1.0, 1.0, 1.1, 1.25))
    grid = st.lists(st.lists(levels, min_size=g, max_size=g), min_size=n, max_size=n)
    case = {
        "g": g, "n": n, "managed": managed, "gpu_free": gpu_free,
        "rack": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
        "model": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
        "model_speed": draw(st.lists(st.sampled_from((1.0, 1.5, 2.0)), min_size=3, max_size=3)),
        "score": draw(grid),
        "cls": draw(st.lists(st.lists(st.integers(0, 3), min_size=g, max_size=g),
                             min_size=n, max_size=n)),
        "class_score": [draw(grid), draw(grid)],
        "job_class": draw(st.integers(0, 1)),
        "gain": draw(st.sampled_from((0.5, 1.0, 2.0))),
    }
    # the other jobs of the queue (indices 1..): (nodes, GPUs per node, gain, waiting now)
    others = []
    for _ in range(draw(st.integers(3, 6))):
        nodes = draw(st.integers(1, 3))
        per_node = g if nodes > 1 else draw(st.integers(1, g))
        gain = draw(st.sampled_from((0.5, 1.0, 2.0)))
        others.append((nodes, per_node, gain, draw(st.booleans())))
    case["others"] = others
    live = gpu_free[:managed]
    shapes = [(1, p) for p in range(1, g + 1) if any(f.bit_count() >= p for f in live)]
    whole = sum(f == full for f in live)
    shapes += [(m, g) for m in range(2, whole + 1)]
    if not shapes:  # nothing fits: free the first node
        gpu_free[0] = full
        shapes = [(1, p) for p in range(1, g + 1)]
    multi = [s for s in shapes if s[0] > 1]
    if multi and draw(st.booleans()):
        shapes = multi[:1] + multi  # 2-node jobs twice as often: two racks that fit are common
    case["nodes"], case["per_node"] = draw(st.sampled_from(shapes))
    return case


@st.composite
def training_model_docs(draw):
    """A valid training model file (``schemas/training-model.schema.json``) as a dict: the
    aggregated form or a layer table, with the aggregates the layer table must give."""
    doc = {"name": draw(st.from_regex(r"[a-z0-9][a-z0-9._-]{0,10}", fullmatch=True)),
           "dataset_samples": draw(st.integers(1, 2_000_000)),
           "sample_time_s": draw(st.floats(1e-6, 10.0)),
           "measured_on_flops": draw(st.floats(1e9, 1e15)),
           "bytes_per_item": draw(st.sampled_from((2, 4, 8)))}
    if draw(st.booleans()):
        doc["micro_batch"] = draw(st.integers(1, 1024))
    if draw(st.booleans()):
        doc["weights"] = draw(st.integers(0, 10**9))
        doc["activations_per_sample"] = draw(st.integers(0, 10**8))
        return doc, doc["weights"], doc["activations_per_sample"]
    shape = st.lists(st.integers(0, 64), min_size=1, max_size=4)
    layers = draw(st.lists(st.fixed_dictionaries({
        "name": st.sampled_from(("CONV1", "FC6", "RELU", "BNORM", "MPOOL", "ADD")),
        "x": shape, "w": shape, "y": shape}), min_size=1, max_size=6))
    doc["layers"] = layers

    def prod(dims):
        out = 1
        for d in dims:
            out *= d
        return out
    weights = sum(prod(lay["w"]) for lay in layers)
    acts = sum(prod(lay["x"]) + prod(lay["y"]) for lay in layers
               if lay["name"] not in ("RELU", "BNORM"))
    return doc, weights, acts


@st.composite
def training_platform_docs(draw):
    """A valid training platform file (``schemas/training-platform.schema.json``) as a dict:
    1-4 levels, max_gpus increasing, the last without."""
    n = draw(st.integers(1, 4))
    bounds = sorted(draw(st.lists(st.integers(1, 4096), min_size=n - 1, max_size=n - 1,
                                  unique=True)))
    levels = [{"name": f"l{i}", "bandwidth_bytes_per_s": draw(st.floats(1e6, 1e12)),
               "latency_s": draw(st.floats(0, 1e-3))} for i in range(n)]
    for lv, b in zip(levels, bounds):
        lv["max_gpus"] = b
    return {"name": "p", "gpu_memory_bytes": draw(st.floats(1e9, 1e11)),
            "gpu_flops": draw(st.floats(1e9, 1e15)), "gpus_per_node": draw(st.integers(1, 16)),
            "levels": levels}


def dl_model_mappings():
    """``--dl-models`` mappings: distinct labels to model names (or ``none``)."""
    name = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,8}", fullmatch=True)
    return st.dictionaries(name, st.one_of(name, st.just("none")), min_size=1, max_size=5)


@st.composite
def moldable_shape_cases(draw):
    """(site, queue or None, recorded GPUs) for ``moldable.allowed_shapes``: 1 to 6 GPUs a node
    (powers of two and not), a capacity timeline of up to 3 node counts, a queue's node and
    per-node limits that may exclude every shape, and a recorded size that may be off the node
    grid or larger than the machine."""
    from swftools.site import Queue, Site

    g = draw(st.integers(1, 6))
    nodes = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    queue = None
    if draw(st.booleans()):
        n_lo, p_lo = draw(st.integers(1, 5)), draw(st.integers(1, 6))
        queue = Queue("q", 1, n_lo, n_lo + draw(st.integers(0, 4)), p_lo,
                      p_lo + draw(st.integers(0, 5)), 1, 1)
    site = Site("drawn", "UTC", g, tuple(range(len(nodes))), nodes,
                () if queue is None else (queue,))
    return site, queue, draw(st.integers(1, 40))


@st.composite
def shuffled_rows(draw, table: pa.Table) -> pa.Table:
    """``table`` with its rows in a drawn order: files are not always in submit order."""
    order = draw(st.permutations(range(table.num_rows)))
    return table.take(pa.array(order, pa.int64())) if table.num_rows else table


@st.composite
def swf_with_interleaved_lines(draw, data: bytes) -> bytes:
    """SWF bytes with comment and blank lines put between job lines (traces merged or annotated
    by hand); the job lines and their order are unchanged."""
    lines = data.split(b"\n")
    body = next((i for i, line in enumerate(lines) if line and not line.startswith(b";")),
                len(lines))
    out = lines[:body]
    filler = st.sampled_from((b"; a comment between jobs", b";", b"", b"   ", b"\t; indented"))
    for line in lines[body:]:
        out.extend(draw(st.lists(filler, max_size=2)))
        out.append(line)
    return b"\n".join(out)


@st.composite
def wra_values(draw: st.DrawFn) -> object:
    """Walltime request accuracies (actual / requested > 0) as a numpy array, bin edges and 1.0
    often exactly."""
    import numpy as np

    edge = st.sampled_from(tuple(round(0.1 * i, 1) for i in range(1, 11)))
    value = st.floats(min_value=1e-6, max_value=5.0, allow_nan=False)
    return np.array(draw(st.lists(st.one_of(edge, value), max_size=60)), dtype=np.float64)


@st.composite
def string_columns(draw):
    """A string or binary Arrow column with nulls, empty and non-ASCII values, sliced (an
    offset into its buffers) or not: (the array, its Python values)."""
    binary = draw(st.booleans())
    value = st.binary(max_size=12) if binary else st.text(max_size=12)
    values = draw(st.lists(st.one_of(st.none(), value), max_size=30))
    kind = pa.large_binary() if binary else pa.large_string()
    arr = pa.array(values, type=draw(st.sampled_from((kind, pa.binary() if binary
                                                      else pa.string()))))
    start = draw(st.integers(0, len(values)))
    stop = draw(st.integers(start, len(values)))
    return arr.slice(start, stop - start), values[start:stop]


# --- pm-first and pal on the compiled general path (issue 26): per-class scores, tied values ---

@st.composite
def pal_placement_cases(draw, max_jobs: int = 40, max_nodes: int = 70):
    """``placement_wide_gpu_cases`` whose scores come from a few values (tied GPU values, tied
    worst GPUs, tied best-match counts), and sometimes per-class score grids (``class_score``,
    one to three) with each row's application class (``job_class``; sometimes none: class 0)."""
    import dataclasses

    table, site = draw(replay_gpu_jobs(max_jobs=max_jobs, max_nodes=max_nodes))
    n, g = site.max_nodes, site.gpus_per_node
    inputs = draw(placement_inputs(n, g, table.num_rows))
    pool = draw(st.lists(st.sampled_from((0.5, 0.8, 0.9, 1.0, 1.1, 1.25, 2.0)), min_size=1,
                         max_size=4))

    def grid():
        return [[draw(st.sampled_from(pool)) for _ in range(g)] for _ in range(n)]

    score = grid() if draw(st.booleans()) else inputs.score
    class_score = job_class = None
    if draw(st.booleans()):
        class_score = [grid() for _ in range(draw(st.integers(1, 3)))]
        job_class = draw(st.none() | st.lists(st.integers(0, len(class_score) - 1),
                                              min_size=table.num_rows,
                                              max_size=table.num_rows))
    return table, site, dataclasses.replace(inputs, score=score, class_score=class_score,
                                            job_class=job_class)


# --- priority-wc's compiled twin (issue 26): gains on every job -------------------------------

@st.composite
def priority_wc_cases(draw):
    """(table, site or processor count, inputs) for ``priority-wc``: a GPU-node replay (small
    sites, sites wider than a 32-node word, times on a grid for EASY's boundaries, or up to 70
    jobs of distinct gains: ranks over several 32-rank words) or a flat pool, with a gain on
    every job (else from a few distinct values, zeros of both signs among them), so that
    waiting jobs of higher gain claim nodes before the job placed."""
    import dataclasses

    kind = draw(st.sampled_from(("gpu", "grid", "wide", "flat", "distinct")))
    if kind == "flat":
        table, where, inputs = draw(st.one_of(placement_flat_cases(), placement_wide_flat_cases()))
    else:
        table, where = draw(replay_gpu_jobs(max_jobs=70 if kind == "distinct" else 40,
                                            max_nodes=70 if kind == "wide" else 5,
                                            tie_grid=10 if kind == "grid" else None))
        inputs = draw(placement_inputs(where.max_nodes, where.gpus_per_node, table.num_rows))
    n = table.num_rows
    if kind == "distinct":
        gain = [x / 4 for x in draw(st.permutations(range(n)))]
    else:
        values = draw(st.lists(st.sampled_from((-0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 4.0)),
                               min_size=1, max_size=4))
        gain = draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))
    return table, where, dataclasses.replace(inputs, gain=gain)


# JSON documents: nested objects and arrays of scalars (keys may be empty or repeat as text).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=4),
    max_leaves=20)


# Term sets for the leak matcher's one-pass pattern: words over three letters that are neither
# hex digits nor pseudonym prefixes, many sharing prefixes (``xyz``, ``xyzx``, ``xyy``).
trie_word_sets = st.lists(st.text("xyz", min_size=3, max_size=5), min_size=1, max_size=8,
                          unique=True)


# JSON values for schema checks: few distinct keys and numbers, so that schemas and documents
# meet (1 and 1.0 and True side by side, nested lists holding booleans).
schema_values = st.recursive(
    st.none() | st.booleans() | st.sampled_from((-1, 0, 1, 2, 0.5, 1.0, -1.0)) |
    st.sampled_from(("", "a", "b")),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(("a", "b", "c")),
                                                                inner, max_size=3),
    max_leaves=8)
_SCHEMA_TYPES = ["string", "integer", "number", "object", "array"]


@st.composite
def subset_schemas(draw, depth: int = 2):
    """A JSON Schema of the subset ``swftools.formats.batsim.schema.compile_schema`` compiles."""
    sub = (lambda: subset_schemas(depth - 1)) if depth else (lambda: st.just({}))
    keys = draw(st.lists(st.sampled_from(
        ["type", "minimum", "exclusiveMinimum", "const", "enum", "anyOf", "if", "then",
         "required", "properties", "additionalProperties", "items", "description"]),
        max_size=3, unique=True))
    schema: dict = {}
    for key in keys:
        if key == "type":
            schema[key] = draw(st.sampled_from(_SCHEMA_TYPES) |
                               st.lists(st.sampled_from(_SCHEMA_TYPES), min_size=1, max_size=2,
                                        unique=True))
        elif key in ("minimum", "exclusiveMinimum"):
            schema[key] = draw(st.sampled_from((-1, 0, 1, 0.5, 1.0)))
        elif key == "const":
            schema[key] = draw(schema_values)
        elif key == "enum":
            schema[key] = draw(st.lists(schema_values, min_size=1, max_size=3))
        elif key == "anyOf":
            schema[key] = draw(st.lists(sub(), min_size=1, max_size=2))
        elif key in ("if", "then", "additionalProperties", "items"):
            schema[key] = draw(sub())
        elif key == "required":
            schema[key] = draw(st.lists(st.sampled_from(("a", "b", "c")), max_size=2, unique=True))
        elif key == "properties":
            schema[key] = draw(st.dictionaries(st.sampled_from(("a", "b", "c")), sub(), max_size=2))
        else:
            schema[key] = "an annotation"
    return schema


@st.composite
def openb_node_rows_irregular(draw, min_size: int = 1, max_size: int = 14) -> list[list[str]]:
    """``openb_node_rows`` shuffled, with names of other widths and forms mixed in (``n9``,
    ``n10``, ``gpu-a``), runs of identical nodes, ``nan`` models on CPU-only nodes."""
    rows = draw(openb_node_rows(min_size=min_size, max_size=max_size))
    rows = [list(r) for r in draw(st.permutations(rows))]
    for r in rows:
        kind = draw(st.integers(0, 5))
        if kind == 0:
            r[0] = r[0].replace("openb-node-0", "n")
        elif kind == 1:
            r[0] = r[0].replace("openb-node-", "gpu-x") + "b"
        if r[3] == "0" and draw(st.booleans()):
            r[4] = "nan"
    if rows and draw(st.booleans()):  # a run of identical nodes after the last one
        last = rows[-1]
        k = draw(st.integers(1, 4))
        rows += [[f"z{j:02d}"] + last[1:] for j in range(k)]
    return rows


@st.composite
def openb_foreign_columns(draw, max_size: int = 12, max_gpus: int = 12) -> dict[str, list]:
    """Job-table columns of another log for the openb writer: unique job ids in shuffled order,
    repeated submit times, unknown GPUs, CPUs, queues and times, every termcode; times ordered
    submit <= start <= finish where known."""
    n = draw(st.integers(1, max_size))
    ids = draw(st.lists(st.integers(0, 20_000), min_size=n, max_size=n, unique=True))
    base = draw(st.sampled_from((0, 1_000_000, 1_640_995_200, 1_700_000_000)))
    cols: dict[str, list] = {c: [] for c in ("job_id", "gpus", "requested_procs", "cpus", "queue",
                                             "termcode", "submit_time", "start_time",
                                             "finish_time")}
    for i in ids:
        submit = draw(st.none() | st.sampled_from((base, base + 5)) | st.integers(base, base + 10**6))
        start = None if draw(st.booleans()) else (submit or base) + draw(st.integers(0, 9_000))
        finish = None if draw(st.integers(0, 3)) == 0 else \
            max(t for t in (submit, start, base) if t is not None) + draw(st.integers(0, 10**5))
        cols["job_id"].append(i)
        cols["gpus"].append(_maybe(draw, st.integers(0, max_gpus)))
        cols["requested_procs"].append(_maybe(draw, st.integers(0, max_gpus)))
        cols["cpus"].append(_maybe(draw, st.integers(0, 64)))
        cols["queue"].append(draw(st.sampled_from((None, "LS", "gpu", "long"))))
        cols["termcode"].append(draw(st.sampled_from((None, 0, 1, 2, 3, 4, 5))))
        cols["submit_time"].append(submit)
        cols["start_time"].append(start)
        cols["finish_time"].append(finish)
    return cols


BATSIM_DROPPED_COLUMNS = ("start_time", "finish_time", "wait_s", "termcode", "swf_status", "nodes",
                          "gpus_per_node", "user", "group", "queue", "partition", "executable",
                          "requested_procs", "avg_cpu_time_s", "used_memory_kb",
                          "requested_memory_kb", "preceding_job_id", "think_time_s", "cpus",
                          "recorded_walltime_s")


@st.composite
def batsim_rows(draw, max_size: int = 10) -> tuple[dict[str, list], dict]:
    """Columns and metadata for the Batsim writer: repeated ids, shuffled and tied submit times,
    unknown, zero and negative run times and sizes, 0 s and unknown limits, and a few of the
    columns Batsim cannot carry, each holding data in some rows or in none."""
    n = draw(st.integers(0, max_size))
    cols: dict[str, list] = {
        "job_id": [draw(st.integers(1, 6)) for _ in range(n)],
        "submit_time": [_maybe(draw, st.integers(100, 106)) for _ in range(n)],
        "walltime_s": [_maybe(draw, st.integers(-1, 5)) for _ in range(n)],
        "gpus": [_maybe(draw, st.integers(-1, 9)) for _ in range(n)],
        "requested_walltime_s": [_maybe(draw, st.integers(-1, 4)) for _ in range(n)],
    }
    schema = jt.arrow_schema()
    for name in draw(st.sets(st.sampled_from(BATSIM_DROPPED_COLUMNS), max_size=4)):
        kind = schema.field(name).type
        value = "x" if pa.types.is_string(kind) else (1.5 if pa.types.is_floating(kind) else 0)
        cols[name] = [draw(st.sampled_from((None, value))) for _ in range(n)]
    meta = draw(st.sampled_from(({}, {"processor_unit": "gpu"}, {"processor_unit": "processor"},
                                 {"source_format": "swf"}, {"source_format": "nqsii"})))
    if draw(st.booleans()):
        meta = {**meta, "time_zone": "Asia/Tokyo"}
    if draw(st.booleans()):
        meta = {**meta, "site": "lab"}  # no preset: the site gives no machine size
    return cols, meta


@st.composite
def rack_node_sets(draw, max_nodes: int = 10):
    """For ``locality.fewest_racks``: a rack id per node (0-3, so several nodes share a rack and
    some racks have no free node), the whole free nodes (a bit set) and a node count (2 up to
    the whole free nodes). Returns (rack, whole, nodes)."""
    n = draw(st.integers(2, max_nodes))
    rack = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    free = draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(lambda f: sum(f) >= 2))
    whole = sum(1 << k for k in range(n) if free[k])
    return rack, whole, draw(st.integers(2, sum(free)))


@st.composite
def placement_event_runs(draw, max_events: int = 12):
    """A machine and a partly occupied state (``placement_oracle_cases``) and events on the
    engine's state after the placement's ``start``: ("start", x) starts a job of the x-th shape
    (mod the shapes that fit then), ("end", x) ends the x-th running job, ("capacity", x) manages
    the first 1 + x mod n nodes. Returns (case, events)."""
    case = draw(placement_oracle_cases())
    kinds = st.sampled_from(("start", "start", "start", "end", "end", "capacity"))
    events = draw(st.lists(st.tuples(kinds, st.integers(0, 63)), min_size=1,
                           max_size=max_events))
    return case, events


@st.composite
def pal_count_cases(draw):
    """For ``pal.pal_gpus`` on a GPU count: n nodes (1-4) of g GPUs (1-4), class values from a
    small set (ties), free GPU bit sets, the nodes offered (a bit set), a count (1 up to every
    GPU), a locality penalty (below 1 too: cross-node cells first) and ``spanning``. Returns a
    dict: ``n``, ``g``, ``value``, ``free``, ``nodes``, ``count``, ``penalty``, ``spanning``."""
    n = draw(st.integers(1, 4))
    g = draw(st.integers(1, 4))
    levels = st.sampled_from((0.8, 1.0, 1.0, 1.2, 1.5))
    return {"n": n, "g": g,
            "value": [[draw(levels) for _ in range(g)] for _ in range(n)],
            "free": [draw(st.integers(0, (1 << g) - 1)) for _ in range(n)],
            "nodes": draw(st.integers(0, (1 << n) - 1)),
            "count": draw(st.integers(1, n * g)),
            "penalty": draw(st.sampled_from((0.5, 1.0, 1.1, 1.7))),
            "spanning": draw(st.booleans())}


# --- the sensitivity model's run-time factor (issue 30, whatif/sensitivity.py) --------------
SENSITIVITY_MODELS = ("P100", "V100", "K80")


@st.composite
def sensitivity_factor_cases(draw, max_nodes: int = 9, max_gpus: int = 3, max_classes: int = 3):
    """``(site, sens, links, scores)`` for the run-time factor: a site of up to three node groups
    (GPU models drawn from ``SENSITIVITY_MODELS``, any order and repeats), the trace's GPU model
    any of the three, explicit racks, links drawn per level (``links``: kind -> (GB/s, us), not
    ordered: a level's own link may be faster than a lower level's), a per-GPU score grid from a
    few values (1.0 often, so placements at the recorded speed occur), and a ``Sensitivity`` built
    directly (speeds relative to P100, ties often) with 1..``max_classes`` classes."""
    from swftools.site import LINK_KINDS, site_from_settings
    from swftools.whatif.cluster import with_scores
    from swftools.whatif.sensitivity import JobClass, Sensitivity

    n = draw(st.integers(1, max_nodes))
    g = draw(st.integers(1, max_gpus))
    cuts = sorted(draw(st.lists(st.integers(1, n - 1), max_size=2, unique=True))) if n > 1 else []
    bounds = [0, *cuts, n]
    groups = [{"name": f"g{i}", "nodes": b - a, "gpu_model": draw(st.sampled_from(SENSITIVITY_MODELS)),
               "gpus_per_node": g} for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    racks = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    links = {k: (draw(st.sampled_from((1.0, 6.25, 12.5, 80.0))),
                 draw(st.sampled_from((0.5, 2.0, 10.0, 40.0)))) for k in LINK_KINDS}
    trace = draw(st.sampled_from(SENSITIVITY_MODELS))
    settings = whatif_settings(n, g, gpu_model=f"NVIDIA Tesla {trace}", node_groups=groups,
                               racks=racks,
                               links={k: {"bandwidth_gbytes_per_s": b, "latency_us": l}
                                      for k, (b, l) in links.items()})
    score = st.sampled_from((0.5, 0.8, 1.0, 1.0, 1.25))
    scores = draw(st.lists(st.lists(score, min_size=g, max_size=g), min_size=n, max_size=n))
    site = with_scores(site_from_settings(settings), scores)
    speed = st.sampled_from((0.5, 1.0, 2.0, 3.0))
    classes = tuple(
        JobClass(f"C{i}", {"P100": 1.0, "V100": draw(speed), "K80": draw(speed)},
                 draw(st.sampled_from((0.0, 1.0, 100.0, 500.0))),
                 draw(st.sampled_from((1.0, 50.0, 300.0))))
        for i in range(draw(st.integers(1, max_classes))))
    sens = Sensitivity("drawn", "<drawn>", SENSITIVITY_MODELS, classes,
                       (1 / len(classes),) * len(classes), False)
    return site, sens, links, scores


@st.composite
def flat_queues(draw, max_jobs: int = 24, max_procs: int = 8,
                tie_grid: int | None = None) -> tuple[list[tuple[int, int, int, int]], int]:
    """(jobs, processors) for ``engine_flat`` itself: jobs as (submit, run, estimate, size) in
    queue order, every one replayable (size 1..procs), with crowded instants, zero-length jobs
    and estimates below, at and above the run time (some far above: early ends). With
    ``tie_grid``, times are multiples of it (ends, arrivals and estimated ends at the shadow
    time)."""
    procs = draw(st.integers(1, max_procs))
    n = draw(st.integers(1, max_jobs))
    grid = tie_grid or 1
    t = draw(st.integers(-50, 50)) * grid
    jobs = []
    for _ in range(n):
        t += grid * draw(st.sampled_from((0, 0, 1, 2, 5)))
        run = grid * draw(st.sampled_from((0, 1, 2, 3, 5, 8)))
        est = draw(st.sampled_from((run, run, run + grid, max(0, run - grid), grid * 4, 0,
                                    3 * run + 20 * grid)))
        jobs.append((t, run, est, draw(st.integers(1, procs))))
    return jobs, procs
# --- the count engine (``replay.engine_count``, issue 30): GPU-node cases with factors ---------

@st.composite
def count_engine_cases(draw, max_jobs: int = 20):
    """(table, site, bases) for ``engine_count``: ``replay_gpu_jobs``' jobs (on a time grid half
    the time, so that ends, arrivals and estimates meet the shadow time) on a site of the same
    GPUs per node whose capacity timeline has 1-5 entries of 1-5 nodes (rises and dips while
    jobs wait); per queue position a run-time factor base (1.0, 2.0 and factors that round
    halves), or None for no factor callback."""
    table, drawn = draw(replay_gpu_jobs(max_jobs=max_jobs,
                                        tie_grid=draw(st.sampled_from((None, 10)))))
    g = drawn.gpus_per_node
    entries = draw(st.integers(1, 5))
    since = sorted(draw(st.lists(st.sampled_from((10, 50, 100, 200, 500, 1000, 2000, 3000)),
                                 min_size=entries - 1, max_size=entries - 1, unique=True)))
    timeline = [{"since": datetime.fromtimestamp(s, timezone.utc).isoformat(),
                 "nodes": draw(st.integers(1, 5))} for s in [0] + since]
    queue = {"name": "q", "number": 1, "nodes_min": 1, "nodes_max": 5, "gpus_per_node_min": 1,
             "gpus_per_node_max": g, "walltime_default_s": 60, "walltime_max_s": 600}
    site = site_from_settings({"name": "test", "time_zone": "UTC", "gpus_per_node": g,
                               "capacity_timeline": timeline, "queues": [queue]})
    bases = draw(st.none() | st.lists(st.sampled_from((1.0, 2.0, 0.5, 1.5, 0.75, 1.25)),
                                      min_size=table.num_rows, max_size=table.num_rows))
    return table, site, bases


@st.composite
def queue_bit_cases(draw, max_jobs: int = 40):
    """``engine_general._queue_bits``'s inputs: (size index per job, the number of sizes, side,
    key and factor bound per job, grouped, the queue's bit budget ``COMPILED_MAX_BITS``). Few
    values per column, so combinations repeat; up to 62 sizes, so the budget binds."""
    n_sizes = draw(st.one_of(st.integers(1, 4), st.integers(55, 62)), label="sizes")
    n = draw(st.integers(0, max_jobs), label="jobs")
    column = st.lists(st.integers(0, 2), min_size=n, max_size=n)
    size_index = draw(st.lists(st.integers(0, min(n_sizes, 5) - 1) | st.integers(0, n_sizes - 1),
                               min_size=n, max_size=n), label="size index")
    side = draw(column, label="side")
    key = draw(column, label="key")
    lower = draw(st.lists(st.sampled_from((0.0, -0.0, 0.5, 1.25)), min_size=n, max_size=n),
                 label="bound")
    grouped = draw(st.booleans(), label="grouped")
    bits = draw(st.sampled_from((62, 62, 62, 0, 2, 4, 6, 58, 60)), label="COMPILED_MAX_BITS")
    return size_index, n_sizes, side, key, lower, grouped, bits


@st.composite
def wide_gpu_state_ops(draw, max_ops: int = 16):
    """A GPU state of 300 nodes (more than ``model.BIG_MASK_BITS``: the bit helpers' numpy
    paths) and operations on it: ``("cap", nodes)`` (the managed count: below and above 256),
    ``("whole", n, seed, fast)`` (a job on ``n`` whole nodes chosen at random by ``seed``),
    ``("one", per_node, rank, fast)`` (a single-node job on the ``rank``-th highest node with
    room: mostly past node 256), ``("end", index)``; ``fast``: through ``take`` rather than
    ``take_set``. Returns (GPUs per node, ops)."""
    g = draw(st.sampled_from((1, 2, 4)), label="gpus per node")
    op = st.one_of(st.tuples(st.just("cap"), st.sampled_from((0, 200, 256, 257, 270, 299, 300))),
                   st.tuples(st.just("whole"), st.integers(1, 60), st.integers(0, 2**16),
                             st.booleans()),
                   st.tuples(st.just("one"), st.integers(1, g), st.integers(0, 6), st.booleans()),
                   st.tuples(st.just("end"), st.integers(0, 30)))
    return g, draw(st.lists(op, max_size=max_ops), label="ops")


@st.composite
def wide_reservation_cases(draw, max_jobs: int = 8):
    """An EASY head on a GPU site of 300 nodes (the wide paths): GPUs per node, the capacity
    timeline (300 nodes at 0, ``nodes`` from 5 on, later entries after ``now`` = 10), running
    jobs ``(whole, percent, seed, estimated end)`` started at 300 nodes (a whole-node job on
    ``percent`` % of the whole nodes left, a single-node one on one of the highest nodes with
    room; chosen by ``seed``: past node 256 mostly), the head ``("multi", more)`` (on ``more`` whole
    nodes more than are free now) or ``("one", per_node)``, and
    backfill candidates ``(whole, percent, seed)``."""
    g = draw(st.sampled_from((1, 2)), label="gpus per node")
    caps = st.sampled_from((100, 250, 256, 257, 280, 300))
    later = draw(st.lists(st.tuples(st.integers(1, 40), caps), max_size=2,
                          unique_by=lambda e: e[0]).map(sorted), label="later")
    timeline = [(0, 300), (5, draw(caps, label="nodes"))] + [(10 + dt, n) for dt, n in later]
    job = st.tuples(st.booleans(), st.integers(1, 100), st.integers(0, 2**16), st.integers(0, 50))
    jobs = draw(st.lists(job, min_size=1, max_size=max_jobs), label="jobs")
    head = draw(st.one_of(st.tuples(st.just("multi"), st.integers(1, 40)),
                          st.tuples(st.just("one"), st.integers(1, g))), label="head")
    candidate = st.tuples(st.booleans(), st.integers(1, 100), st.integers(0, 2**16))
    return g, timeline, jobs, head, draw(st.lists(candidate, max_size=4), label="candidates")


@st.composite
def silhouette_cases(draw, max_size: int = 12):
    """For ``pal_classes.silhouette_1d``: ``(values, labels)``, 2 to ``max_size`` values on a
    grid of quarters in 0..3 (repeats within and across clusters, so both distances of a point
    can be 0) and cluster labels 0-3 (sparse ones too; singletons, clusters of three and more);
    at least two clusters."""
    n = draw(st.integers(2, max_size), label="size")
    values = draw(st.lists(st.integers(0, 12).map(lambda q: q / 4), min_size=n, max_size=n),
                  label="values")
    labels = draw(st.lists(st.sampled_from((0, 1, 3)), min_size=n, max_size=n)
                  .filter(lambda ls: len(set(ls)) > 1), label="labels")
    return values, labels
