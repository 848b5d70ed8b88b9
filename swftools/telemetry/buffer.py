"""Collect mapped samples from the text readers into Arrow columns, with the shared checks.

Every reader turns one exported sample (metric name, labels, timestamp, value) into zero or more
canonical rows ``(ts, node, gpu_index, metric, value, series, src)`` through the metric map; the
checks (label present, GPU index an integer, timestamp in epoch seconds, value in range) raise
``InputError`` naming the file and line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from swftools.errors import InputError
from swftools.telemetry.metric_map import MapEntry, MetricMap, canonical_metrics

# Plausible UTC epoch seconds: 2000-01-01 .. 2100-01-01. Outside, the unit is wrong.
TS_MIN_S = 946_684_800
TS_MAX_S = 4_102_444_800

SAMPLE_SCHEMA = pa.schema([
    pa.field("ts", pa.float64(), nullable=False),
    pa.field("node", pa.string(), nullable=False),
    pa.field("gpu_index", pa.int32()),
    pa.field("metric", pa.string(), nullable=False),
    pa.field("value", pa.float64(), nullable=False),
    pa.field("series", pa.string(), nullable=False),
    pa.field("src", pa.int32(), nullable=False),
])


def timestamp_problem(ts: float, expected_unit: str = "s") -> str | None:
    """Why ``ts`` (already converted to seconds) cannot be a UTC epoch instant, or None."""
    if not math.isfinite(ts):
        return f"timestamp {ts!r} is not finite"
    if TS_MIN_S <= ts < TS_MAX_S:
        return None
    if TS_MIN_S * 1000 <= ts < TS_MAX_S * 1000:
        return (f"timestamp {ts!r} looks like milliseconds; expected UTC epoch seconds "
                f"({'this format writes seconds' if expected_unit == 's' else 'check the format'})")
    if TS_MIN_S / 1000 <= ts < TS_MAX_S / 1000:
        return (f"timestamp {ts!r} s is in 1970; the file probably wrote seconds where "
                f"milliseconds were expected")
    return f"timestamp {ts!r} is outside 2000..2100 in UTC epoch seconds"


def number_text(text: str) -> bool:
    """A value or timestamp as exporters write it: Python's ``float()`` also takes '1_000' and
    other scripts' digits ('١٢' as 12), which no exporter writes."""
    if not text.isascii() or "_" in text:
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def value_problem(canonical: str, value: float) -> str | None:
    """Why a canonical value is implausible (wrong scale), or None: no canonical metric, gauge
    or counter, is negative; a percentage is at most 100."""
    spec = canonical_metrics()[canonical]
    if value < 0:
        return f"{canonical} = {value!r} is negative"
    if spec.unit == "%" and value > 100.0 + 1e-9:
        return f"{canonical} = {value!r} exceeds 100 % (is the scale right? ratio vs percent)"
    return None


def node_name(entry: MapEntry, labels: Mapping[str, str]) -> str | None:
    """The node label's value (port stripped if the map says so), or None if absent."""
    raw = labels.get(entry.node_label)
    if raw is None or raw == "":
        return None
    if entry.strip_port:
        host, sep, port = raw.rpartition(":")
        if sep and port.isdigit():
            raw = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return raw


def series_key(name: str, labels: Mapping[str, str]) -> str:
    """A stable identity for one exported series (name plus sorted labels)."""
    inner = ",".join(f'{k}="{labels[k]}"' for k in sorted(labels) if k != "__name__")
    return f"{name}{{{inner}}}"


@dataclass
class FileStats:
    """What one input file held (goes to the package metadata)."""

    path: str
    format: str
    samples_read: int = 0
    rows_mapped: int = 0
    non_finite_dropped: int = 0
    sampling: str = "raw"
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.path, "format": self.format, "samples_read": self.samples_read,
                "rows_mapped": self.rows_mapped, "non_finite_dropped": self.non_finite_dropped,
                "sampling": self.sampling, "warnings": self.warnings}


class SampleBuffer:
    """Accumulates canonical rows; ``to_table()`` returns them as an Arrow table."""

    def __init__(self, metric_map: MetricMap) -> None:
        self.metric_map = metric_map
        self._chunks: list[pa.Table] = []

    def add_series(self, path: str, src: int, name: str, labels: Mapping[str, str],
                   ts: np.ndarray, values: np.ndarray, stats: FileStats,
                   where: Callable[[int], int | None]) -> None:
        """Map one series (arrays of seconds and values); ``where(i)`` gives sample i's line."""
        entries = self.metric_map.lookup(name)
        if entries is None:
            raise InputError(path, f"metric {name!r} has no entry in the metric map "
                             f"({', '.join(self.metric_map.names)})", line=where(0) if len(ts) else None,
                             field="metric", value=name,
                             expected="a mapped metric, or its name under 'ignore'")
        stats.samples_read += len(ts)
        entries = [e for e in entries if e.matches(labels)]
        if not entries or not len(ts):
            return
        bad_ts = ~((ts >= TS_MIN_S) & (ts < TS_MAX_S))
        if bad_ts.any():
            i = int(np.argmax(bad_ts))
            raise InputError(path, timestamp_problem(float(ts[i])),
                             line=where(i), field="timestamp", value=repr(float(ts[i])))
        finite = np.isfinite(values)
        dropped = int((~finite).sum())
        if dropped:
            stats.non_finite_dropped += dropped
            ts, values = ts[finite], values[finite]
            idx = np.flatnonzero(finite)
        else:
            idx = None
        key = series_key(name, labels)
        for entry in entries:
            node = node_name(entry, labels)
            if node is None:
                raise InputError(path, f"{name}: label {entry.node_label!r} (the node) is missing",
                                 line=where(0), field=entry.node_label, value=key,
                                 expected=f"a {entry.node_label} label as the metric map says")
            gpu = None
            if entry.level == "gpu":
                raw_gpu = labels.get(entry.gpu_label)
                if raw_gpu is None or not (raw_gpu.isascii() and raw_gpu.isdigit()) \
                        or len(raw_gpu) > 9:  # int('١٢') is 12 in Python: ASCII digits only
                    what = "is missing" if raw_gpu is None else f"= {raw_gpu!r} is not a GPU index"
                    raise InputError(path, f"{name}: label {entry.gpu_label!r} {what}",
                                     line=where(0), field=entry.gpu_label, value=key,
                                     expected="a non-negative integer GPU index label")
                gpu = int(raw_gpu)
            scaled = values * entry.scale
            check = self._first_bad_value(entry.canonical, scaled)
            if check is not None:
                i, why = check
                line = where(int(idx[i]) if idx is not None else i)
                raise InputError(path, why, line=line, field="value", value=repr(float(values[i])))
            n = len(ts)
            self._chunks.append(pa.Table.from_arrays([
                pa.array(ts, pa.float64()),
                pa.array(np.full(n, node, dtype=object), pa.string()),
                pa.nulls(n, pa.int32()) if gpu is None else pa.array(np.full(n, gpu, np.int32)),
                pa.array(np.full(n, entry.canonical, dtype=object), pa.string()),
                pa.array(scaled, pa.float64()),
                pa.array(np.full(n, key, dtype=object), pa.string()),
                pa.array(np.full(n, src, np.int32)),
            ], schema=SAMPLE_SCHEMA))
            stats.rows_mapped += n

    @staticmethod
    def _first_bad_value(canonical: str, scaled: np.ndarray) -> tuple[int, str] | None:
        """``value_problem`` over an array: the first bad value's index and why."""
        bad = scaled < 0
        if canonical_metrics()[canonical].unit == "%":
            bad |= scaled > 100.0 + 1e-9
        if not bad.any():
            return None
        i = int(np.argmax(bad))
        return i, value_problem(canonical, float(scaled[i]))

    def to_table(self) -> pa.Table:
        if not self._chunks:
            return SAMPLE_SCHEMA.empty_table()
        return pa.concat_tables(self._chunks).combine_chunks()
