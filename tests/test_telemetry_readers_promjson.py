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


# --- every refusal located, word for word; sampling detection at its edges ----------------

def _refusal(tmp_path, doc):
    path = _pretty(tmp_path, doc)
    with pytest.raises(InputError) as info:
        _read(path)
    err = info.value
    assert err.path == str(path)
    line = path.read_text().splitlines()[err.line - 1].strip() if err.line else None
    return err.message, err.field, err.value, err.expected, line


@pytest.mark.parametrize("doc,want", [
    ({"status": "error", "errorType": "bad_data", "error": "parse error"},
     ("the query failed: bad_data: parse error", "status", "error", '"success"',
      '"status": "error",')),
    ({"status": "fail"}, ("the query failed: ?: ?", "status", "fail", '"success"',
                          '"status": "fail"')),
    ({"data": {}}, ("not a Prometheus API response", "status", None,
                    'an object with "status" and "data"', "{")),
    ({"status": "success", "data": 3},
     ("unsupported result", "data.resultType", "int",
      '"matrix" (query_range or a range selector) or "vector"', '"data": 3')),
    (_doc([], "scalar"), ("unsupported result", "data.resultType", "scalar",
                          '"matrix" (query_range or a range selector) or "vector"', '"data": {')),
    (_doc(7), ("data.result is not a list", "data.result", None, None, '"result": 7')),
    (_doc([5]), ("series without a 'metric' object", "data.result[0]", None, None, "5")),
    (_doc([{"metric": {"gpu": "0"}, "values": []}]),
     ("series has no __name__ label (an expression result?); export the raw metric or rename it",
      "__name__", None, "a metric name", '"metric": {')),
    (_doc([{"metric": _labels()}]), ("series without 'values'", "data.result[0]", None, None, "{")),
    (_doc([{"metric": _labels(), "values": [[T, "1"]]}], "vector"),
     ("series without 'value'", "data.result[0]", None, None, "{")),
    (_doc([{"metric": _labels(), "values": [[T, "1"], [T]]}]),
     ('sample is not a [timestamp, "value"] pair', "data.result[0].values[1]", f"[{T}]", None,
      "[")),
    (_doc([{"metric": _labels(), "values": [[True, "1"]]}]),
     ("timestamp is not a number", "data.result[0].values[0]", "True", "float UTC epoch seconds",
      "[")),
    (_doc([{"metric": _labels(), "values": [[str(T), "1"]]}]),
     ("timestamp is not a number", "data.result[0].values[0]", repr(str(T)),
      "float UTC epoch seconds", "[")),
    (_doc([{"metric": _labels(), "values": [[T, 1]]}]),
     ("value is not a JSON string", "data.result[0].values[0]", "1",
      'a quoted number such as "42" or "NaN"', "[")),
    (_doc([{"metric": _labels(), "value": [T, "abc"]}], "vector"),
     ("value 'abc' is not a number", "data.result[0].value", "abc",
      'a number, "NaN", "+Inf" or "-Inf"', '"value": [')),
])
def test_each_refusal_names_its_json_path_and_line(tmp_path, doc, want):
    assert _refusal(tmp_path, doc) == want


def test_a_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "l.json"
    path.write_bytes(b'{"status": "succ\xe8s"}')
    with pytest.raises(InputError) as info:
        _read(path)
    assert (info.value.path, info.value.message) == (str(path), "not UTF-8 text (invalid "
                                                                "continuation byte)")


@pytest.mark.parametrize("series,sampling", [
    ([], "raw"),
    ([[T]], "raw"),                                         # no step to judge by
    ([[T, T]], "raw"),                                      # a repeated instant
    ([[T, T + 60, T + 120], [T + 60.0009, T + 180]], "resampled"),  # within 1 ms of the grid
    ([[T, T + 60, T + 120], [T + 60.0011, T + 180]], "raw"),
    ([[T + 59.9991, T + 120], [T, T + 60]], "resampled"),   # 0.9 ms early is on the grid too
    ([[T + 120], [T + 60, T + 120]], "resampled"),          # a lone sample on the grid
    ([[T + 30], [T + 60, T + 120]], "raw"),                 # the grid starts at the earliest
    ([[T, T + 60], [T + 30, T + 90]], "raw"),
])
def test_sampling_is_resampled_only_on_one_shared_grid(series, sampling):
    import numpy as np

    from swftools.telemetry.readers_promjson import _detect_sampling

    assert _detect_sampling([np.array(t, dtype=float) for t in series]) == sampling


def test_sampling_on_a_sub_second_grid_and_at_exactly_one_millisecond():
    import numpy as np

    from swftools.telemetry.readers_promjson import _detect_sampling

    assert _detect_sampling([np.array([T, T + 0.5, T + 1.0])]) == "resampled"
    # phase 0.001 of a 0.5 s grid, exactly representable here: on the grid (the bound is strict)
    assert _detect_sampling([np.array([0.0, 0.5]), np.array([0.001])]) == "resampled"
    assert _detect_sampling([np.array([0.0, 0.5]), np.array([0.0011])]) == "raw"


def test_a_long_bad_sample_is_shown_cut_to_sixty_characters(tmp_path):
    sample = [T, "1", "x" * 80]
    message, field, value, _, _ = _refusal(tmp_path, _doc([{"metric": _labels(),
                                                            "values": [sample]}]))
    assert (message, field) == ('sample is not a [timestamp, "value"] pair',
                                "data.result[0].values[0]")
    assert value == json.dumps(sample)[:60] and len(value) == 60


@pytest.mark.parametrize("value", ["1_000", "\u0661\u0662", "0x10", ""])
def test_a_value_is_a_number_as_prometheus_writes_it(tmp_path, value):
    message, field, got, expected, _ = _refusal(tmp_path, _doc([{"metric": _labels(), "values": [
        [T, "1"], [T + 60, value]]}]))
    assert (message, field, got, expected) == (f"value {value!r} is not a number",
                                               "data.result[0].values[1]", value,
                                               'a number, "NaN", "+Inf" or "-Inf"')


def test_stats_name_the_file_and_its_format(tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps(_doc([{"metric": _labels(), "values": [[T, "1"]]}])))
    _, stats = _read(path)
    assert stats.as_dict() == {"file": str(path), "format": "prometheus-json", "samples_read": 1,
                               "rows_mapped": 1, "non_finite_dropped": 0, "sampling": "raw",
                               "warnings": []}


def test_sample_checks_point_at_the_sample_line(tmp_path):
    matrix = _pretty(tmp_path, _doc([{"metric": _labels(), "values": [[T, "1"], [T + 60, "400"]]}]))
    with pytest.raises(InputError) as info:
        _read(matrix)
    lines = matrix.read_text().splitlines()
    assert info.value.path == str(matrix) and "exceeds 100 %" in info.value.message
    assert lines[info.value.line - 1].strip() == "[" and '"400"' in lines[info.value.line + 1]
    vector = tmp_path / "v.json"
    vector.write_text('{"status": "success", "data": {"resultType": "vector", "result": [\n'
                      + json.dumps({"metric": _labels(), "value": [T, "400"]}) + "\n]}}")
    with pytest.raises(InputError) as info:
        _read(vector)
    assert info.value.line == 2


def test_unreadable_and_invalid_files_are_named(tmp_path):
    folder = tmp_path / "f.json"
    folder.mkdir()
    with pytest.raises(InputError) as info:
        _read(folder)
    assert info.value.path == str(folder)
    assert info.value.message.startswith("cannot read gzip/JSON file: ")
    bad = tmp_path / "b.json"
    bad.write_text("{\n")
    with pytest.raises(InputError) as info:
        _read(bad)
    assert (info.value.path, info.value.line) == (str(bad), 2)


def test_a_response_is_utf8_whatever_the_locale(tmp_path):
    from .conftest import text_under_c_locale

    path = tmp_path / "u.json"
    path.write_text(json.dumps(_doc([{"metric": _labels(host="nœud-1"), "values": [[T, "1"]]}]),
                               ensure_ascii=False), encoding="utf-8")
    code = ("import sys; from swftools.telemetry.buffer import SampleBuffer; "
            "from swftools.telemetry.metric_map import load_metric_map; "
            "from swftools.telemetry.readers_promjson import read_promjson; "
            "b = SampleBuffer(load_metric_map('dcgm')); read_promjson(sys.argv[1], b, 0); "
            "print(b.to_table().column('node')[0].as_py().encode().hex())")
    assert text_under_c_locale(code, str(path)) == "nœud-1"
    assert _read(path)[0][0]["node"] == "nœud-1"


def test_a_huge_integer_timestamp_is_refused_not_a_crash(tmp_path):
    path = tmp_path / "h.json"
    path.write_text('{"status": "success", "data": {"resultType": "matrix", "result": [\n'
                    + json.dumps({"metric": _labels(), "values": [[T, "1"]]})[:-3]
                    + '], [' + "9" * 400 + ', "1"]]}\n]}}')
    with pytest.raises(InputError) as info:
        _read(path)
    err = info.value
    assert (err.path, err.message, err.field, err.value, err.line, err.expected) == (
        str(path), "timestamp is out of range", "data.result[0].values[1]", "9" * 60, 2,
        "float UTC epoch seconds")


def test_a_vector_sample_error_points_at_its_value(tmp_path):
    path = _pretty(tmp_path, _doc([{"metric": _labels(), "value": [T, "400"]}], "vector"))
    with pytest.raises(InputError) as info:
        _read(path)
    assert path.read_text().splitlines()[info.value.line - 1].strip() == '"value": ['
