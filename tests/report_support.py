"""Small hand-made job tables for the ``swftools report`` tests (one place, reused by each file)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from swftools import table as jt

T0 = 1_500_000_000  # 2017-07-14 02:40 UTC = 11:40 Asia/Tokyo, a Friday


def aaic_table(rows: list[dict[str, Any]], **meta: Any) -> pa.Table:
    """An AAIC-style table from partial rows; defaults fill the rest (site aaic, Asia/Tokyo)."""
    full = []
    for i, row in enumerate(rows):
        nodes = row.get("nodes", 1)
        per_node = row.get("gpus_per_node", 1)
        submit = row.get("submit_time", T0 + 60 * i)
        wait = row.get("wait_s", 0)
        run = row.get("walltime_s", 3600)
        full.append({
            "job_id": i + 1, "user": row.get("user", "u1"), "group": row.get("group", "g1"),
            "queue": row.get("queue", "Normal"), "nodes": nodes, "gpus_per_node": per_node,
            "gpus": nodes * per_node,
            "requested_walltime_s": row.get("requested_walltime_s", 36_000),
            "termcode": row.get("termcode", 0), "submit_time": submit,
            "start_time": submit + wait, "finish_time": submit + wait + run,
            "wait_s": wait, "walltime_s": run})
    columns = {k: [r[k] for r in full] for k in (full[0] if full else {})}
    return jt.from_columns(columns, {"site": "aaic", "time_zone": "Asia/Tokyo",
                                     "source_format": "nqsii", **meta})


def swf_table(columns: dict[str, list[Any]], origin: int | None = T0, **meta: Any) -> pa.Table:
    """A table as read from SWF (processors as PEs); ``origin`` None = no UnixStartTime."""
    metadata = {"source_format": "swf", "swf_time_origin": origin,
                "swf_header": [["Version", "2.2"]], **meta}
    return jt.from_columns(columns, metadata)
