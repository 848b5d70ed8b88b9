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


# --- entries field by field, merged maps, located errors -------------------------------------

def _entry(**kw):
    from swftools.telemetry.metric_map import MapEntry

    return MapEntry(**kw)


SITE_MAP = {"name": "site", "node_label": "host", "strip_port": True, "gpu_label": "idx",
            "ignore": ["noise", "chatter"],
            "metrics": [
                {"source": "util_ratio", "canonical": "gpu_util_pct", "type": "gauge",
                 "unit": "ratio", "scale": 100},
                {"source": "cpu_seconds", "canonical": "node_cpu_total_s", "type": "counter",
                 "unit": "s", "scale": 1, "match": {"mode": "user", "cpu": "0"},
                 "combine": "sum", "node_label": "Hostname", "strip_port": False,
                 "gpu_label": "minor"}]}


def test_entries_take_the_map_defaults_unless_they_give_their_own(tmp_path):
    path = tmp_path / "site.json"
    path.write_text(json.dumps(SITE_MAP))
    mm = load_metric_map(path)
    assert mm.entries == [
        _entry(source="util_ratio", canonical="gpu_util_pct", kind="gauge", unit="ratio",
               scale=100.0, node_label="host", strip_port=True, gpu_label="idx", origin="site"),
        _entry(source="cpu_seconds", canonical="node_cpu_total_s", kind="counter", unit="s",
               scale=1.0, match=(("cpu", "0"), ("mode", "user")), combine="sum",
               node_label="Hostname", strip_port=False, gpu_label="minor", origin="site")]
    assert mm.ignore == {"noise", "chatter"} and mm.names == ["site"]
    assert mm.describe() == [
        {"source": "util_ratio", "match": {}, "canonical": "gpu_util_pct", "source_unit": "ratio",
         "scale": 100.0, "type": "gauge", "map": "site"},
        {"source": "cpu_seconds", "match": {"cpu": "0", "mode": "user"},
         "canonical": "node_cpu_total_s", "source_unit": "s", "scale": 1.0, "type": "counter",
         "map": "site"}]


def test_a_map_without_defaults_or_name_uses_the_schema_defaults_and_its_file_name(tmp_path):
    bare = {"metrics": [SITE_MAP["metrics"][0]]}
    path = tmp_path / "bare.YML"
    path.write_text(json.dumps(bare))  # JSON is YAML: read by the YAML loader
    mm = load_metric_map(path)
    assert mm.entries == [_entry(source="util_ratio", canonical="gpu_util_pct", kind="gauge",
                                 unit="ratio", scale=100.0, origin="bare")]
    assert (mm.entries[0].combine, mm.entries[0].node_label, mm.entries[0].strip_port,
            mm.entries[0].gpu_label) == ("first", "instance", False, "gpu")
    assert mm.ignore == set() and mm.names == ["bare"]


def test_merged_maps_keep_every_entry_ignore_and_name_in_order(tmp_path):
    path = tmp_path / "site.json"
    path.write_text(json.dumps(SITE_MAP))
    mm = load_metric_map([path, "nvidia_gpu_exporter"])
    assert mm.names == ["site", "nvidia_gpu_exporter"]
    assert {"noise", "chatter", "nvidia_gpu_jobId"} <= mm.ignore
    assert [e.source for e in mm.entries[:2]] == ["util_ratio", "cpu_seconds"]
    assert load_metric_map(mm) is mm
    with pytest.raises(InputError) as info:
        load_metric_map([])
    err = info.value
    assert (err.path, err.message, err.expected) == ("<metric map>", "no metric map given",
                                                     "a preset or a map file")


def test_lookup_of_total_suffixes_and_ignored_counters():
    from swftools.telemetry.metric_map import MetricMap

    gauge = _entry(source="temp", canonical="gpu_util_pct", kind="gauge", unit="%", scale=1.0)
    counter = _entry(source="energy", canonical="gpu_energy_j", kind="counter", unit="J",
                     scale=1.0)
    mm = MetricMap([gauge, counter], {"skip", "idle"})
    assert mm.lookup("energy_total") == [counter]
    assert mm.lookup("temp_total") is None and mm.lookup("other_total") is None
    assert mm.lookup("skip") == [] and mm.lookup("skip_total") == [] and mm.lookup("idle_total") == []
    assert mm.lookup("skipX_total") is None and mm.lookup("_total") is None
    assert mm.lookup("temp") == [gauge] and mm.lookup("total") is None
    # an entry named with the suffix is found as named, before the counter without it
    suffixed = _entry(source="energy_total", canonical="gpu_energy_j", kind="counter", unit="mJ",
                      scale=0.001)
    assert MetricMap([counter, suffixed]).lookup("energy_total") == [suffixed]


def test_identity_map_maps_each_canonical_metric_to_itself():
    mm = identity_map()
    assert mm.entries == [_entry(source=m.name, canonical=m.name, kind=m.kind, unit=m.unit,
                                 scale=1.0, origin="canonical")
                          for m in canonical_metrics().values()]
    assert mm.ignore == set() and mm.names == ["canonical"]


def test_schema_errors_name_the_first_place_in_path_order(tmp_path):
    path = tmp_path / "m.json"
    doc = {"metrics": [dict(SITE_MAP["metrics"][0]),
                       dict(SITE_MAP["metrics"][0], canonical="gpu_util", scale=0)],
           "bogus": 1}
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        load_metric_map(path)
    assert info.value.field == "(top level)" and "bogus" in info.value.message
    del doc["bogus"]
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        load_metric_map(path)
    assert info.value.field == "metrics/1/canonical"
    assert info.value.message == ("'gpu_util' is not a canonical metric (expected one of "
                                  + ", ".join(canonical_metrics()) + ")")
    doc["metrics"][1]["canonical"] = "gpu_energy_j"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        load_metric_map(path)
    assert info.value.field == "metrics/1/scale"
    doc["node_label"] = ""  # a shorter path, later in name order: metrics/... comes first
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        load_metric_map(path)
    assert info.value.field == "metrics/1/scale"


def test_a_kind_that_disagrees_is_located(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"metrics": [SITE_MAP["metrics"][0],
                                            dict(SITE_MAP["metrics"][0], canonical="gpu_energy_j")]}))
    with pytest.raises(InputError) as info:
        load_metric_map(path)
    err = info.value
    assert (err.path, err.message, err.field, err.value, err.expected) == (
        str(path), "util_ratio is declared gauge but gpu_energy_j is a counter",
        "metrics/1/type", "gauge", "counter")


def test_entries_of_a_document_without_a_file_are_located_in_the_map():
    from swftools.telemetry.metric_map import entries_from_document

    doc = {"metrics": [dict(SITE_MAP["metrics"][0], type="counter")]}
    with pytest.raises(InputError) as info:
        entries_from_document(doc, "inline")
    assert (info.value.path, info.value.field) == ("<metric map>", "metrics/0/type")
    entries, ignore = entries_from_document({"metrics": SITE_MAP["metrics"][:1]}, "inline")
    assert [e.origin for e in entries] == ["inline"] and ignore == set()


def test_unreadable_documents_name_file_and_line(tmp_path):
    bad_json = tmp_path / "m.json"
    bad_json.write_text('{"metrics": [\n  1,\n  ]\n}')
    with pytest.raises(InputError) as info:
        load_metric_map(bad_json)
    assert (info.value.path, info.value.message, info.value.line) == (
        str(bad_json), "not valid JSON: Expecting value", 3)
    bad_yaml = tmp_path / "m.yaml"
    bad_yaml.write_text("metrics:\n  - source: x\n   canonical: [\n")
    with pytest.raises(InputError) as info:
        load_metric_map(bad_yaml)
    assert (info.value.path, info.value.line) == (str(bad_yaml), 3)
    assert info.value.message == "not valid YAML: expected <block end>, but found '<block mapping start>'"
    unmarked = tmp_path / "u.yml"
    unmarked.write_bytes(b"metrics: \x07\n")  # a reader error: no problem_mark
    with pytest.raises(InputError) as info:
        load_metric_map(unmarked)
    assert info.value.path == str(unmarked) and info.value.line is None
    assert info.value.message.startswith("not valid YAML: unacceptable character #x0007")


def test_a_map_file_is_utf8_whatever_the_locale(tmp_path):
    from .conftest import text_under_c_locale

    path = tmp_path / "m.json"
    path.write_text(json.dumps(dict(SITE_MAP, name="sité"), ensure_ascii=False), encoding="utf-8")
    assert text_under_c_locale(
        "import sys; from swftools.telemetry.metric_map import load_metric_map; "
        "print(load_metric_map(sys.argv[1]).names[0].encode().hex())", str(path)) == "sité"
    assert load_metric_map(path).names == ["sité"]


def test_an_unknown_map_lists_the_presets():
    with pytest.raises(InputError) as info:
        load_metric_map("prometheus")
    assert (info.value.path, info.value.message) == (
        "prometheus", "no such metric-map file or preset (presets: dcgm, nvidia_gpu_exporter, "
        "node_exporter, ipmi_exporter)")
