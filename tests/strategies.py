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
from swftools.anonymize import MIN_KEY_BYTES  # noqa: E402

anon_keys = st.binary(min_size=MIN_KEY_BYTES, max_size=64)
"""Secret keys long enough for ``swftools.anonymize``."""
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
    from swftools.nqsii_schema import form_schema

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
