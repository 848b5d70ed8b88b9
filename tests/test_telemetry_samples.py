"""Staging: several files, overlapping chunks de-duplicated (first file wins), derived metrics."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from swftools import table as jt
from swftools.errors import InputError
from swftools.telemetry import attach
from swftools.telemetry.samples import expand_paths, input_format

T0 = 1_700_006_400


def _jobs():
    return jt.from_columns({"job_id": [1], "nodes": [1], "gpus_per_node": [1], "gpus": [1],
                            "start_time": [T0], "finish_time": [T0 + 600]})


def _alloc():
    return pa.table({"job_id": [1], "node": ["g1"], "gpu_index": pa.array([0], pa.int32())})


def _chunk(path, minutes, value=lambda m: m):
    values = [[T0 + 60 * m, str(value(m))] for m in minutes]
    doc = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "Hostname": "g1"},
         "values": values}]}}
    path.write_text(json.dumps(doc))
    return path


def test_overlapping_json_chunks_are_counted_once_and_the_first_file_wins(tmp_path):
    a = _chunk(tmp_path / "a.json", range(0, 6))
    b = _chunk(tmp_path / "b.json", range(5, 10), value=lambda m: 50 + m)
    row = attach(_jobs(), [a, b], metric_map="dcgm", allocations=_alloc(), gpus_per_node=1
                 ).to_pylist()[0]
    assert row["gpu_samples_observed"] == 10 and row["telemetry_coverage"] == 1.0
    assert row["gpu_util_max_pct"] == 59.0
    assert row["gpu_util_mean_pct"] == pytest.approx((sum(range(6)) + sum(50 + m for m in range(6, 10))) / 10)
    swapped = attach(_jobs(), [b, a], metric_map="dcgm", allocations=_alloc(), gpus_per_node=1
                     ).to_pylist()[0]
    assert swapped["gpu_util_mean_pct"] == pytest.approx((sum(range(5)) + sum(50 + m for m in range(5, 10))) / 10)


def _long(path, minutes, value):
    n = len(minutes)
    pq.write_table(pa.table({"ts": pa.array([T0 + 60.0 * m for m in minutes]), "node": ["g1"] * n,
                             "gpu_index": pa.array([0] * n, pa.int32()),
                             "metric": ["gpu_util_pct"] * n, "value": [float(value)] * n}), path)
    return path


def test_overlapping_long_tables_and_mixed_inputs_are_deduplicated(tmp_path):
    a = _long(tmp_path / "a.parquet", range(0, 7), 10)
    b = _long(tmp_path / "b.parquet", range(3, 10), 30)
    c = _chunk(tmp_path / "c.json", range(8, 10), value=lambda m: 90)
    row = attach(_jobs(), [a, b, c], metric_map=["dcgm"], allocations=_alloc(), gpus_per_node=1
                 ).to_pylist()[0]
    assert row["gpu_samples_observed"] == 10
    assert row["gpu_util_mean_pct"] == pytest.approx((7 * 10 + 3 * 30) / 10)


def test_derived_node_metrics_from_node_exporter_counters(tmp_path):
    def series(labels, values, name):
        return {"metric": {"__name__": name, "instance": "g1:9100", **labels},
                "values": [[T0 + 60 * i, str(v)] for i, v in enumerate(values)]}
    result = [
        series({"cpu": "0", "mode": "idle"}, [100, 130, 145], "node_cpu_seconds_total"),
        series({"cpu": "0", "mode": "user"}, [10, 40, 85], "node_cpu_seconds_total"),
        series({}, [64 * 2**30] * 3, "node_memory_MemTotal_bytes"),
        series({}, [60 * 2**30, 50 * 2**30, 54 * 2**30], "node_memory_MemAvailable_bytes"),
    ]
    path = tmp_path / "node.json"
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    alloc = pa.table({"job_id": [1], "node": ["g1"], "gpu_index": pa.array([None], pa.int32())})
    row = attach(_jobs(), [path], metric_map="node_exporter", allocations=alloc, gpus_per_node=1
                 ).to_pylist()[0]
    # Increments: idle 30 of 60 s, then 15 of 60 s -> 50 % and 75 % busy.
    assert row["node_cpu_util_mean_pct"] == pytest.approx(62.5)
    assert row["node_mem_used_max_gib"] == pytest.approx(14.0)
    assert row["node_shared"] is False


def test_input_formats_and_paths(tmp_path):
    assert input_format(tmp_path / "x.json.gz") == "prometheus-json"
    assert input_format(tmp_path / "x.parquet") == "long"
    assert input_format(tmp_path / "x.om") == "text"
    (tmp_path / "d").mkdir()
    for name in ("b.json", "a.json", ".hidden"):
        (tmp_path / "d" / name).write_text("{}")
    assert [p.name for p in expand_paths([tmp_path / "d"])] == ["a.json", "b.json"]
    with pytest.raises(InputError, match="no such sample file"):
        expand_paths([tmp_path / "nope"])
    (tmp_path / "e").mkdir()
    with pytest.raises(InputError, match="no sample files"):
        expand_paths([tmp_path / "e"])
