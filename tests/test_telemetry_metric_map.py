"""Metric maps: presets, unit conversion, validation by the JSON Schema."""

from __future__ import annotations

import json

import numpy as np
import pytest

from swftools.errors import InputError
from swftools.resources import load_json, schemas_dir
from swftools.telemetry.buffer import FileStats, SampleBuffer
from swftools.telemetry.metric_map import (PRESETS, canonical_metrics, identity_map,
                                           load_metric_map)

T = 1_700_000_000.0


def _convert(preset: str, name: str, labels: dict, value: float) -> dict:
    buf = SampleBuffer(load_metric_map(preset))
    buf.add_series("x", 0, name, labels, np.array([T]), np.array([value]), FileStats("x", "t"),
                   lambda i: 1)
    rows = buf.to_table().to_pylist()
    assert len(rows) == 1
    return rows[0]


@pytest.mark.parametrize("preset", PRESETS)
def test_presets_validate_and_agree_with_the_canonical_kinds(preset):
    mm = load_metric_map(preset)
    assert mm.entries and mm.names == [preset]
    for e in mm.entries:
        assert e.kind == canonical_metrics()[e.canonical].kind


@pytest.mark.parametrize("preset,name,labels,value,canonical,expected", [
    ("dcgm", "DCGM_FI_DEV_GPU_UTIL", {"gpu": "3", "Hostname": "g1"}, 87, "gpu_util_pct", 87.0),
    ("dcgm", "DCGM_FI_PROF_SM_ACTIVE", {"gpu": "0", "Hostname": "g1"}, 0.25, "gpu_sm_active_pct", 25.0),
    ("dcgm", "DCGM_FI_DEV_FB_USED", {"gpu": "0", "Hostname": "g1"}, 4096, "gpu_mem_used_mib", 4096.0),
    ("dcgm", "DCGM_FI_DEV_POWER_USAGE", {"gpu": "0", "Hostname": "g1"}, 251.5, "gpu_power_w", 251.5),
    ("dcgm", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", {"gpu": "0", "Hostname": "g1"}, 123456,
     "gpu_energy_j", 123.456),
    ("nvidia_gpu_exporter", "nvidia_gpu_duty_cycle", {"minor_number": "1", "instance": "g1:9445"},
     40, "gpu_util_pct", 40.0),
    ("nvidia_gpu_exporter", "nvidia_gpu_memory_used_bytes",
     {"minor_number": "1", "instance": "g1:9445"}, 3 * 2**20, "gpu_mem_used_mib", 3.0),
    ("nvidia_gpu_exporter", "nvidia_gpu_power_usage_milliwatts",
     {"minor_number": "1", "instance": "g1:9445"}, 215000, "gpu_power_w", 215.0),
    ("node_exporter", "node_memory_MemTotal_bytes", {"instance": "g1:9100"}, 256 * 2**30,
     "node_mem_total_gib", 256.0),
    ("ipmi_exporter", "ipmi_dcmi_power_consumption_watts", {"instance": "g1:9290"}, 1800,
     "node_power_w", 1800.0),
])
def test_unit_conversion_presets(preset, name, labels, value, canonical, expected):
    row = _convert(preset, name, labels, value)
    assert row["metric"] == canonical
    assert row["value"] == pytest.approx(expected, rel=1e-12)
    assert row["node"] == "g1"  # Hostname as is, or instance minus the port
    assert row["gpu_index"] == (int(labels.get("gpu", labels.get("minor_number", -1)))
                                if canonical.startswith("gpu_") else None)


def test_node_exporter_cpu_counter_feeds_idle_and_total():
    mm = load_metric_map("node_exporter")
    idle = [e.canonical for e in mm.lookup("node_cpu_seconds_total") if e.matches({"mode": "idle"})]
    user = [e.canonical for e in mm.lookup("node_cpu_seconds_total") if e.matches({"mode": "user"})]
    assert sorted(idle) == ["node_cpu_idle_s", "node_cpu_total_s"] and user == ["node_cpu_total_s"]


def test_counter_total_suffix_and_ignore_list():
    mm = load_metric_map(["dcgm", "nvidia_gpu_exporter"])
    assert mm.lookup("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total")[0].canonical == "gpu_energy_j"
    assert mm.lookup("DCGM_FI_DEV_GPU_UTIL_total") is None  # a gauge has no _total form
    assert mm.lookup("nvidia_gpu_jobId") == []
    assert mm.lookup("DCGM_FI_DEV_GPU_TEMP") is None


def test_instance_port_and_ipv6_are_stripped():
    assert _convert("ipmi_exporter", "ipmi_dcmi_power_consumption_watts",
                    {"instance": "[fe80::1]:9290"}, 1)["node"] == "fe80::1"


def test_yaml_map_is_loaded_and_validated(tmp_path):
    path = tmp_path / "site.yaml"
    path.write_text("name: site\nnode_label: host\ngpu_label: idx\nmetrics:\n"
                    "  - {source: util_ratio, canonical: gpu_util_pct, type: gauge, unit: ratio, scale: 100}\n")
    row = SampleBuffer(load_metric_map(path))
    row.add_series("f", 0, "util_ratio", {"host": "a", "idx": "2"}, np.array([T]),
                   np.array([0.5]), FileStats("f", "t"), lambda i: 1)
    assert row.to_table().to_pylist()[0] == {"ts": T, "node": "a", "gpu_index": 2,
                                             "metric": "gpu_util_pct", "value": 50.0,
                                             "series": 'util_ratio{host="a",idx="2"}', "src": 0}


@pytest.mark.parametrize("doc,message", [
    ({"metrics": [{"source": "x", "canonical": "gpu_util", "type": "gauge", "unit": "%", "scale": 1}]},
     "not a canonical metric"),
    ({"metrics": [{"source": "x", "canonical": "gpu_energy_j", "type": "gauge", "unit": "mJ",
                   "scale": 0.001}]}, "declared gauge but gpu_energy_j is a counter"),
    ({"metrics": [{"source": "x", "canonical": "gpu_power_w", "type": "gauge", "unit": "W",
                   "scale": 0}]}, "less than or equal to the minimum"),
    ({"metrics": []}, "should be non-empty"),
])
def test_bad_maps_are_input_errors(tmp_path, doc, message):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=message) as info:
        load_metric_map(path)
    assert info.value.path == str(path)


def test_bad_yaml_names_the_line(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("metrics:\n  - source: x\n   canonical: [\n")
    with pytest.raises(InputError) as info:
        load_metric_map(path)
    assert info.value.line is not None and "YAML" in str(info.value)


def test_unknown_preset_or_file():
    with pytest.raises(InputError, match="no such metric-map file or preset"):
        load_metric_map("prometheus")


def test_presets_are_files_in_schemas_and_canonical_metrics_come_from_the_schema():
    assert sorted(p.stem for p in (schemas_dir() / "metric-maps").glob("*.json")) == sorted(PRESETS)
    consts = [d["const"] for d in load_json("metric-map.schema.json")["$defs"]["canonical_metric"]["oneOf"]]
    assert list(canonical_metrics()) == consts
    assert {e.canonical for e in identity_map().entries} == set(consts)
    # Every non-input canonical metric feeds an output column of job_telemetry.
    fields = {f["name"] for f in load_json("job_telemetry.schema.json")["fields"]}
    for name, m in canonical_metrics().items():
        if not m.derives:
            stem = name.rsplit("_", 1)[0]
            assert any(f.startswith(stem) for f in fields), name
