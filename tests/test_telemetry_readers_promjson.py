"""Prometheus HTTP API JSON reader: matrices, NaN/Inf strings, gzip, sampling, errors with lines."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given, strategies as st

from swftools.errors import InputError
from swftools.telemetry.buffer import SampleBuffer
from swftools.telemetry.metric_map import load_metric_map
from swftools.telemetry.readers_promjson import read_promjson

T = 1_700_000_000


def _labels(gpu="0", host="g1"):
    return {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": gpu, "Hostname": host,
            "instance": f"{host}:9400", "job": "dcgm"}


def _doc(result, result_type="matrix", **extra):
    return {"status": "success", "data": {"resultType": result_type, "result": result}, **extra}


def _read(path, **kw):
    buf = SampleBuffer(load_metric_map("dcgm"))
    stats = read_promjson(path, buf, 0, **kw)
    return buf.to_table().to_pylist(), stats


def test_matrix_with_nan_and_inf_strings(tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps(_doc([{"metric": _labels(), "values": [
        [T, "1"], [T + 60, "NaN"], [T + 120, "+Inf"], [T + 180, "42.5"]]}])))
    rows, stats = _read(path)
    assert [(r["ts"], r["value"]) for r in rows] == [(T, 1.0), (T + 180, 42.5)]
    assert stats.non_finite_dropped == 2 and stats.samples_read == 4
    assert rows[0]["node"] == "g1" and rows[0]["gpu_index"] == 0
    assert stats.sampling == "resampled"


def test_gzip_and_raw_timestamps_with_ms(tmp_path):
    path = tmp_path / "raw.json.gz"
    body = _doc([{"metric": _labels(gpu="1"), "values": [[T + 0.117, "3"], [T + 60.121, "4"]]},
                 {"metric": _labels(gpu="2"), "values": [[T + 0.342, "5"]]}],
                warnings=["partial result"])
    with gzip.open(path, "wt") as fh:
        json.dump(body, fh)
    rows, stats = _read(path)
    assert [r["ts"] for r in rows] == [T + 0.117, T + 60.121, T + 0.342]
    assert stats.sampling == "raw" and stats.warnings == ["partial result"]
    _, forced = _read(path, sampling="resampled")
    assert forced.sampling == "resampled"


def test_vector_result(tmp_path):
    path = tmp_path / "v.json"
    path.write_text(json.dumps(_doc([{"metric": _labels(), "value": [T, "7"]}], "vector")))
    rows, _ = _read(path)
    assert rows[0]["value"] == 7.0


def _pretty(tmp_path, doc):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc, indent=1))
    return path


def test_non_numeric_value_names_file_line_and_path(tmp_path):
    path = _pretty(tmp_path, _doc([{"metric": _labels(), "values": [[T, "1"], [T + 60, "n/a"]]}]))
    with pytest.raises(InputError) as info:
        _read(path)
    err = info.value
    lines = path.read_text().splitlines()
    assert err.line is not None and lines[err.line - 1].strip() == "["  # the pair's opening
    assert '"n/a"' in lines[err.line + 1]
    assert "'n/a' is not a number" in str(err) and str(path) in str(err)
    assert err.field == "data.result[0].values[1]"


def test_unknown_metric_and_missing_label(tmp_path):
    labels = dict(_labels(), __name__="DCGM_FI_DEV_GPU_TEMP")
    path = _pretty(tmp_path, _doc([{"metric": labels, "values": [[T, "1"]]}]))
    with pytest.raises(InputError, match="'DCGM_FI_DEV_GPU_TEMP' has no entry in the metric map"):
        _read(path)
    labels = {k: v for k, v in _labels().items() if k != "Hostname"}
    path = _pretty(tmp_path, _doc([{"metric": _labels(), "values": [[T, "1"]]},
                                   {"metric": labels, "values": [[T, "1"]]}]))
    with pytest.raises(InputError, match="label 'Hostname' \\(the node\\) is missing") as info:
        _read(path)
    assert info.value.line is not None and info.value.line > 10


def test_timestamps_in_milliseconds_are_detected(tmp_path):
    path = _pretty(tmp_path, _doc([{"metric": _labels(), "values": [[T * 1000, "1"]]}]))
    with pytest.raises(InputError, match="looks like milliseconds") as info:
        _read(path)
    assert info.value.line is not None


@pytest.mark.parametrize("doc,message", [
    ({"status": "error", "errorType": "bad_data", "error": "parse error"}, "the query failed: bad_data"),
    (_doc([], "scalar"), "unsupported result"),
    (_doc([{"metric": {"gpu": "0"}, "values": []}]), "no __name__ label"),
    (_doc([{"metric": _labels(), "values": [[T, 1]]}]), "value is not a JSON string"),
    (_doc([{"metric": _labels(), "values": [[T]]}]), "not a \\[timestamp"),
    ([1, 2], "not a Prometheus API response"),
])
def test_malformed_responses(tmp_path, doc, message):
    with pytest.raises(InputError, match=message):
        _read(_pretty(tmp_path, doc))


def test_truncated_gzip_and_invalid_json(tmp_path):
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps(_doc([])).encode())[:20])
    with pytest.raises(InputError, match="t.json.gz: truncated gzip file.* after 0 complete lines"):
        _read(path)
    path = tmp_path / "t.json"
    path.write_text('{"status": "success",\n "data": {')
    with pytest.raises(InputError, match="not valid JSON") as info:
        _read(path)
    assert info.value.line == 2


@given(st.lists(st.tuples(st.integers(0, 10**6), st.floats(allow_nan=False, allow_infinity=False,
                                                            min_value=0, max_value=100)),
                min_size=1, max_size=30, unique_by=lambda p: p[0]))
def test_round_trip_of_written_matrices(tmp_path_factory, points):
    """Property: samples written as a query_range matrix are read back exactly."""
    path = tmp_path_factory.mktemp("rt") / "m.json"
    values = [[T + t / 1000, repr(v)] for t, v in points]
    path.write_text(json.dumps(_doc([{"metric": _labels(), "values": values}])))
    rows, _ = _read(path)
    assert [(r["ts"], r["value"]) for r in rows] == [(T + t / 1000, v) for t, v in points]
