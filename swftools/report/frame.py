"""The prepared job frame every analysis of ``swftools report`` works on, and shared helpers.

A canonical job table becomes a pandas frame with the columns the analyses need plus what the
trace lets us know about itself: the processing element (GPU for GPU sites, processor for SWF
traces), whether node counts are known, how success is decided (``termcode == 0``, else SWF
``swf_status == 1``), the site (queue limits, capacity) and the local time zone used for arrivals
and calendar quarters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.site import Site

MIN_WALLTIME_S = 60
SINGLE, SINGLE_NODE_MULTI, MULTI_NODE, MULTI = "single", "single_node_multi", "multi_node", "multi"


@dataclass
class JobFrame:
    """The jobs (pandas; numbers as float64, NaN = unknown) and what is known about the trace."""

    jobs: pd.DataFrame
    site: Site | None
    processing_element: str  # "GPU" or "processor"
    nodes_source: str | None  # "recorded", "derived from GPUs (whole nodes)" or None (unknown)
    success_rule: str | None  # "termcode == 0", "swf_status == 1" or None (unknown)
    time_zone: str
    time_zone_source: str  # "table metadata", "site settings" or "default (UTC)"
    absolute_times: bool
    absolute_times_reason: str | None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def pe(self) -> str:
        """The processing element's name, for labels ("GPU" / "processor")."""
        return self.processing_element

    @property
    def has_nodes(self) -> bool:
        """Whether node counts are known (recorded or derivable)."""
        return self.nodes_source is not None

    def class_labels(self) -> dict[str, str]:
        """Human labels of the parallelism classes this trace supports."""
        pe = self.pe
        if self.has_nodes:
            return {SINGLE: f"single-{pe}", SINGLE_NODE_MULTI: f"single-node multi-{pe}",
                    MULTI_NODE: "multi-node"}
        return {SINGLE: f"single-{pe}", MULTI: f"multi-{pe}"}


def skipped(reason: str) -> dict[str, Any]:
    """The result of an analysis (or part of one) that cannot be done, with the reason."""
    return {"status": "skipped", "reason": reason}


def is_skipped(result: Any) -> bool:
    """Whether ``result`` is a :func:`skipped` marker."""
    return isinstance(result, dict) and result.get("status") == "skipped"


def describe(values: np.ndarray) -> dict[str, Any]:
    """Count, mean, standard deviation (n - 1), median, min and max of a 1-D array."""
    n = int(values.size)
    if n == 0:
        return {"count": 0, "mean": None, "std": None, "median": None, "min": None, "max": None}
    return {"count": n, "mean": float(values.mean()),
            "std": float(values.std(ddof=1)) if n > 1 else None,
            "median": float(np.median(values)), "min": float(values.min()),
            "max": float(values.max())}


def _numpy(column: pa.ChunkedArray, dtype: str) -> np.ndarray:
    """A nullable integer column as float64 (NaN = unknown), without a Python round trip."""
    return np.asarray(pc.fill_null(pc.cast(column, pa.float64()), np.nan), dtype=dtype)


def _success_rule(table: pa.Table) -> tuple[str | None, np.ndarray]:
    """How success is decided and a float array (1 success, 0 not, NaN unknown)."""
    termcode, status = table.column("termcode"), table.column("swf_status")
    if termcode.null_count < table.num_rows:
        values = _numpy(termcode, "float64")
        return "termcode == 0", np.where(np.isnan(values), np.nan, values == 0)
    if status.null_count < table.num_rows:
        values = _numpy(status, "float64")
        return "swf_status == 1", np.where(np.isnan(values), np.nan, values == 1)
    return None, np.full(table.num_rows, np.nan)


def _time_zone(meta: dict[str, Any], site: Site | None) -> tuple[str, str]:
    if meta.get("time_zone"):
        return meta["time_zone"], "table metadata"
    if site is not None:
        return site.time_zone, "site settings"
    return "UTC", "default (UTC)"


def _absolute(meta: dict[str, Any], submit: np.ndarray) -> tuple[bool, str | None]:
    if np.isnan(submit).all():
        return False, "no submit times are known"
    if meta.get("source_format") == "swf" and meta.get("swf_time_origin") is None:
        return False, ("the SWF header has no UnixStartTime, so times are offsets from an "
                       "unknown origin (no dates, no local times)")
    return True, None


def prepare(table: pa.Table, site: Site | None) -> JobFrame:
    """The :class:`JobFrame` of a canonical job table (``site`` may be None)."""
    meta = jt.get_metadata(table)
    n = table.num_rows
    data: dict[str, Any] = {}
    for name in ("nodes", "gpus", "requested_walltime_s", "termcode", "swf_status",
                 "submit_time", "start_time", "finish_time", "walltime_s"):
        data[name] = _numpy(table.column(name), "float64").copy()
    for name in ("user", "group", "queue"):
        col = table.column(name)
        data[name] = (col.to_pandas() if n else pd.Series([], dtype=object)).to_numpy()
    gpus = data["gpus"]
    gpus[gpus <= 0] = np.nan  # zero processors: not a usable size
    nodes_source: str | None = None
    if table.column("nodes").null_count < n:
        nodes_source = "recorded"
    elif site is not None and site.multi_node_whole_nodes and n and not np.isnan(gpus).all():
        data["nodes"] = np.ceil(gpus / site.gpus_per_node)
        nodes_source = (f"derived from {site.name} GPUs (multi-node jobs use whole nodes of "
                        f"{site.gpus_per_node})")
    data["nodes"][data["nodes"] <= 0] = np.nan
    rule, success = _success_rule(table)
    data["success"] = success
    is_gpu_site = site is not None or meta.get("source_format") in ("nqsii", "synth") \
        or table.column("gpus_per_node").null_count < n
    zone, zone_source = _time_zone(meta, site)
    absolute, why = _absolute(meta, data["submit_time"])
    jobs = pd.DataFrame(data)
    return JobFrame(jobs=jobs, site=site, processing_element="GPU" if is_gpu_site else "processor",
                    nodes_source=nodes_source, success_rule=rule, time_zone=zone,
                    time_zone_source=zone_source, absolute_times=absolute,
                    absolute_times_reason=why, metadata=meta)


def size_classes(frame: JobFrame, jobs: pd.DataFrame) -> pd.Series:
    """Parallelism class of every job (NaN when its size is unknown)."""
    gpus = jobs["gpus"].to_numpy()
    out = np.full(len(jobs), None, dtype=object)
    out[gpus == 1] = SINGLE
    if frame.has_nodes:
        nodes = jobs["nodes"].to_numpy()
        out[(gpus > 1) & (nodes == 1)] = SINGLE_NODE_MULTI
        out[(gpus > 1) & (nodes > 1)] = MULTI_NODE
    else:
        out[gpus > 1] = MULTI
    return pd.Series(out, index=jobs.index)


def long_enough(jobs: pd.DataFrame) -> pd.DataFrame:
    """Jobs that ran at least ``MIN_WALLTIME_S`` (the paper's filter; unknown runtimes drop out)."""
    return jobs[jobs["walltime_s"].to_numpy() >= MIN_WALLTIME_S]


def successful_long(frame: JobFrame) -> tuple[pd.DataFrame, str]:
    """Successful jobs of at least 60 s and the population's description.

    When the trace records no outcome at all, all jobs of at least 60 s are used, and the
    description says so.
    """
    jobs = long_enough(frame.jobs)
    if frame.success_rule is None:
        return jobs, (f"jobs of at least {MIN_WALLTIME_S} s (the trace records no outcome, so "
                      "successful jobs cannot be singled out)")
    ok = jobs[jobs["success"].to_numpy() == 1]
    return ok, f"successful jobs ({frame.success_rule}) of at least {MIN_WALLTIME_S} s"


def local_times(frame: JobFrame, epoch_s: pd.Series) -> pd.Series:
    """Epoch seconds as timezone-aware local date-times (site local time)."""
    utc = pd.to_datetime(epoch_s.to_numpy().astype("int64"), unit="s", utc=True)
    return pd.Series(utc.tz_convert(frame.time_zone), index=epoch_s.index)


def quarters(frame: JobFrame, jobs: pd.DataFrame) -> pd.Series:
    """Calendar quarter (``2017Q3``) of each job's submission, in site local time."""
    known = jobs["submit_time"].dropna()
    local = local_times(frame, known)
    labels = (local.dt.year.astype(str) + "Q" + local.dt.quarter.astype(str))
    return labels.reindex(jobs.index)


def quarters_skip_reason(frame: JobFrame) -> str | None:
    """Why calendar quarters cannot be computed, or None."""
    if not frame.absolute_times:
        return frame.absolute_times_reason
    return None


MIN_SERIES_POINTS = 2  # a chart over time needs at least two points (quarters, bins)


def time_series(rows: Any) -> bool:
    """Whether per-period rows (a list, or a skipped marker) make a chart over time: one bar or
    one point is no series, so a sample within one quarter draws no per-quarter chart."""
    return isinstance(rows, list) and len(rows) >= MIN_SERIES_POINTS


def shares(counts: dict[str, int]) -> dict[str, float | None]:
    """Each count's share of the total (None when the total is zero)."""
    total = sum(counts.values())
    return {k: (v / total if total else None) for k, v in counts.items()}


def _iso_local(frame: JobFrame, epoch_s: float) -> str:
    return pd.Timestamp(int(epoch_s), unit="s", tz="UTC").tz_convert(frame.time_zone).isoformat()


def describe_trace(frame: JobFrame) -> dict[str, Any]:
    """What the report knows about the trace (the ``trace`` section of report.json)."""
    jobs = frame.jobs
    submit = jobs["submit_time"].dropna()
    absolute = frame.absolute_times and not submit.empty
    meta = frame.metadata
    return {
        "source_file": meta.get("source_file"),
        "source_format": meta.get("source_format"),
        "site": frame.site.name if frame.site else None,
        "jobs": int(len(jobs)),
        "processing_element": frame.pe,
        "nodes_source": frame.nodes_source,
        "success_rule": frame.success_rule,
        "time_zone": frame.time_zone,
        "time_zone_source": frame.time_zone_source,
        "absolute_times": frame.absolute_times,
        "absolute_times_reason": frame.absolute_times_reason,
        "first_submit_local": _iso_local(frame, submit.min()) if absolute else None,
        "last_submit_local": _iso_local(frame, submit.max()) if absolute else None,
        "users": int(jobs["user"].nunique()) if jobs["user"].notna().any() else None,
        "groups": int(jobs["group"].nunique()) if jobs["group"].notna().any() else None,
        "min_walltime_s": MIN_WALLTIME_S,
    }
