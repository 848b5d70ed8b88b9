"""Prometheus HTTP API JSON: ``query_range`` matrices and raw range-selector responses.

Envelope ``{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {...},
"values": [[<float seconds>, "<value>"], ...]}]}, "warnings": [...]}``; values are strings so
``NaN``/``+Inf``/``-Inf`` can travel. ``.json`` or ``.json.gz``. Whether a file holds raw scraped
samples or a resampled ``query_range`` grid is detected (override with ``sampling=``) and recorded.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from swftools.errors import InputError, json_line
from swftools.formats.inputs import read_text
from swftools.telemetry.buffer import FileStats, SampleBuffer, number_text

SAMPLINGS = ("auto", "raw", "resampled")


def _read_text(path: Path) -> str:
    try:
        return read_text(path, encoding="utf-8")  # gzip by content
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(str(path), f"cannot read gzip/JSON file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), f"not UTF-8 text ({exc.reason})") from None


def _fail(path: Path, text: str, where: list[str | int], message: str, **kw: Any) -> InputError:
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where).lstrip(".")
    kw.setdefault("field", field or None)
    return InputError(str(path), message, line=json_line(text, where), **kw)


def _detect_sampling(all_ts: list[np.ndarray]) -> str:
    """'resampled' when every series sits on one shared step grid (query_range), else 'raw'."""
    series = [t for t in all_ts if len(t) >= 2]
    if not series:
        return "raw"
    step = min(float(np.min(np.diff(t))) for t in series)
    if step <= 0:
        return "raw"
    origin = min(float(t[0]) for t in all_ts if len(t))
    for t in (t for t in all_ts if len(t)):
        phase = np.mod(t - origin, step)
        off = np.minimum(phase, step - phase)
        if off.max() > 1e-3:  # 1 ms: Prometheus timestamps have ms precision
            return "raw"
    return "resampled"


def read_promjson(path: str | Path, buffer: SampleBuffer, src: int,
                  sampling: str = "auto") -> FileStats:
    """Map every sample of one Prometheus API JSON file into ``buffer``."""
    path = Path(path)
    text = _read_text(path)
    stats = FileStats(str(path), "prometheus-json")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    if not isinstance(doc, dict) or "status" not in doc:
        raise InputError(str(path), "not a Prometheus API response", line=1, field="status",
                         expected='an object with "status" and "data"')
    if doc["status"] != "success":
        raise _fail(path, text, ["status"], f"the query failed: {doc.get('errorType', '?')}: "
                    f"{doc.get('error', '?')}", value=str(doc["status"]), expected='"success"')
    stats.warnings = [str(w) for w in doc.get("warnings", []) or []]
    data = doc.get("data")
    if not isinstance(data, dict) or data.get("resultType") not in ("matrix", "vector"):
        got = data.get("resultType") if isinstance(data, dict) else type(data).__name__
        raise _fail(path, text, ["data"], "unsupported result", field="data.resultType",
                    value=str(got), expected='"matrix" (query_range or a range selector) or "vector"')
    vector = data["resultType"] == "vector"
    result = data.get("result")
    if not isinstance(result, list):
        raise _fail(path, text, ["data", "result"], "data.result is not a list")
    all_ts = []
    for i, series in enumerate(result):
        labels = series.get("metric") if isinstance(series, dict) else None
        if not isinstance(labels, dict):
            raise _fail(path, text, ["data", "result", i], "series without a 'metric' object")
        name = labels.get("__name__")
        if not name:
            raise _fail(path, text, ["data", "result", i, "metric"],
                        "series has no __name__ label (an expression result?); export the raw "
                        "metric or rename it", field="__name__", expected="a metric name")
        key = "value" if vector else "values"
        pairs = series.get(key)
        if vector and key in series:
            pairs = [pairs]
        if not isinstance(pairs, list):
            raise _fail(path, text, ["data", "result", i], f"series without {key!r}")
        ts, values = _parse_pairs(path, text, i, key, pairs, vector)
        all_ts.append(ts)

        def where(j: int, i: int = i) -> int:
            return json_line(text, ["data", "result", i, key] + ([] if vector else [j]))

        buffer.add_series(str(path), src, name, {k: str(v) for k, v in labels.items()}, ts,
                          values, stats, where)
    stats.sampling = _detect_sampling(all_ts) if sampling == "auto" else sampling
    return stats


def _parse_pairs(path: Path, text: str, i: int, key: str, pairs: list, vector: bool
                 ) -> tuple[np.ndarray, np.ndarray]:
    try:  # the checks of the loop below, at once
        if any(len(p) != 2 or not isinstance(p[1], str) or not number_text(p[1])
               or isinstance(p[0], bool) or not isinstance(p[0], (int, float)) for p in pairs):
            raise ValueError
        ts = np.array([p[0] for p in pairs], dtype=np.float64)
        values = np.array([p[1] for p in pairs], dtype=str).astype(np.float64)
        return ts, values
    except (ValueError, TypeError, IndexError, KeyError, OverflowError):
        pass
    for j, p in enumerate(pairs):  # locate the culprit
        where = ["data", "result", i, key] + ([] if vector else [j])
        if not isinstance(p, list) or len(p) != 2:
            raise _fail(path, text, where, "sample is not a [timestamp, \"value\"] pair",
                        value=json.dumps(p)[:60])
        t, v = p
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise _fail(path, text, where, "timestamp is not a number", value=repr(t),
                        expected="float UTC epoch seconds")
        try:
            float(t)
        except OverflowError:  # an integer of hundreds of digits
            raise _fail(path, text, where, "timestamp is out of range", value=repr(t)[:60],
                        expected="float UTC epoch seconds") from None
        if not isinstance(v, str):
            raise _fail(path, text, where, "value is not a JSON string", value=repr(v),
                        expected='a quoted number such as "42" or "NaN"')
        if not number_text(v):
            raise _fail(path, text, where, f"value {v!r} is not a number", value=v,
                        expected='a number, "NaN", "+Inf" or "-Inf"')
    raise _fail(path, text, ["data", "result", i], "unreadable samples")  # pragma: no cover
