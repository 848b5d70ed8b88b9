"""The job_telemetry schema file, its Arrow form, and the resource description."""

from __future__ import annotations

import pytest

from swftools.telemetry.output import arrow_schema, describe, finalize_sql, table_schema


def test_columns_are_exactly_the_issue_list_plus_key_and_reason():
    names = [f["name"] for f in table_schema()["fields"]]
    assert names == [
        "job_id", "gpus_allocated", "gpus_with_telemetry", "gpu_samples_expected",
        "gpu_samples_observed", "telemetry_coverage", "gpu_util_mean_pct", "gpu_util_max_pct",
        "gpu_idle_fraction", "gpu_sm_active_mean_pct", "gpu_mem_used_mean_mib",
        "gpu_mem_used_max_mib", "gpu_power_mean_w", "gpu_power_max_w", "gpu_energy_j",
        "node_shared", "node_cpu_util_mean_pct", "node_mem_used_max_gib", "node_power_mean_w",
        "telemetry_null_reason"]
    assert arrow_schema().names == names
    assert str(arrow_schema().field("node_shared").type) == "bool"
    assert table_schema()["foreignKeys"][0]["reference"] == {"resource": "jobs", "fields": ["job_id"]}


def test_percentages_are_bounded_0_100_and_fractions_0_1():
    for f in table_schema()["fields"]:
        c = f.get("constraints", {})
        if f["name"].endswith("_pct"):
            assert (c["minimum"], c["maximum"]) == (0, 100), f["name"]
        if f["name"].endswith(("_fraction", "_coverage")):
            assert (c["minimum"], c["maximum"]) == (0, 1), f["name"]


def test_description_states_interval_sources_and_units():
    text = describe(60, [{"file": "a.json", "format": "prometheus-json", "sampling": "resampled"}],
                    ["gpu_util_pct"], ["dcgm"])
    for needle in ("interval 60 s", "a.json (prometheus-json, resampled)", "dcgm", "MiB", "W",
                   "energy J", "UTC epoch seconds"):
        assert needle in text


def test_expected_samples_use_integer_grid_arithmetic():
    sql = finalize_sql(60, True, False)
    assert "(ji.finish_time + 59) // 60 - (ji.start_time + 59) // 60" in sql
    assert "'no_node_samples'" not in sql


def test_description_lists_every_source_sampling_map_and_metric():
    sources = [{"file": "a.json", "format": "prometheus-json", "sampling": "resampled"},
               {"file": "b.prom", "format": "exposition", "sampling": "raw"},
               {"file": "c.prom", "format": "exposition", "sampling": "raw"}]
    text = describe(30, sources, ["gpu_util_pct", "gpu_power_w"], ["dcgm", "node"])
    assert "samples were raw and resampled (resampled = " in text
    assert ("Sources: a.json (prometheus-json, resampled), b.prom (exposition, raw), "
            "c.prom (exposition, raw). Metric maps: dcgm, node. Canonical metrics present: "
            "gpu_util_pct, gpu_power_w. Units") in text
    assert "Canonical metrics present: none. Units" in describe(30, sources[:1], [], ["dcgm"])


def test_the_table_schema_is_a_fresh_copy_each_time():
    first = table_schema()
    first["fields"][0]["constraints"] = {"changed": True}
    first["fields"].pop()
    again = table_schema()
    assert "changed" not in str(again) and again["fields"][-1]["name"] == "telemetry_null_reason"


def _attach(tmp_path, samples):
    """``telemetry.attach`` of two one-GPU jobs on node n0 (GPU 0 and GPU 1, 10 minutes each)
    to ``samples``: (metric, gpu index or None, value) every minute of the first job."""
    from swftools import table as jt
    from swftools.telemetry import attach

    from .strategies import TELEMETRY_T0 as t0
    from .test_telemetry_engine import _alloc_table, _write_samples

    jobs = jt.from_columns({"job_id": [1, 2], "nodes": [1, 1], "gpus_per_node": [1, 1],
                            "gpus": [1, 1], "start_time": [t0, t0 + 3600],
                            "finish_time": [t0 + 600, t0 + 4200]})
    rows = [(float(t0 + 60 * k), "n0", gpu, metric, value)
            for k in range(10) for metric, gpu, value in samples]
    cols = dict(zip(("ts", "node", "gpu_index", "metric", "value"),
                    (list(c) for c in zip(*rows))))
    path = _write_samples(cols, tmp_path / "s.parquet")
    return attach(jobs, [path], metric_map=None, allocations=_alloc_table(
        [(1, "n0", 0), (2, "n0", 1)]), gpus_per_node=2, work_dir=tmp_path).to_pylist()


def test_null_reasons_name_only_the_levels_the_sources_have(tmp_path):
    """Without any GPU metric a job's missing GPU figures are not "no_samples" (nothing could
    have been sampled); without any node metric, no "no_node_samples"."""
    node_only = _attach(tmp_path, [("node_power_w", None, 500.0)])
    assert [r["telemetry_null_reason"] for r in node_only] == [None, "no_node_samples"]
    assert node_only[0]["node_power_mean_w"] == 500.0 and node_only[0]["gpu_util_mean_pct"] is None
    gpu_only = _attach(tmp_path, [("gpu_util_pct", 0, 40.0)])
    assert [r["telemetry_null_reason"] for r in gpu_only] == [None, "no_samples"]
    both = _attach(tmp_path, [("gpu_util_pct", 0, 40.0), ("node_power_w", None, 500.0)])
    assert [r["telemetry_null_reason"] for r in both] == [None, "no_samples;no_node_samples"]


@pytest.mark.parametrize(("samples", "metric", "value"), [
    ([("gpu_util_pct", 0, 100.5)], "gpu_util_pct", 100.5),
    ([("gpu_power_w", 0, -3.0), ("gpu_util_pct", 0, 140.0)], "gpu_power_w", -3.0),
    ([("node_cpu_util_pct", None, 250.0), ("gpu_util_pct", 0, 101.0)], "gpu_util_pct", 101.0),
])
def test_values_out_of_range_are_named(tmp_path, samples, metric, value):
    """A negative value, or a percentage above 100, is refused naming the metric (the first by
    name) and the value (the lowest if negative, else the highest)."""
    from swftools.errors import InputError

    with pytest.raises(InputError) as err:
        _attach(tmp_path, samples)
    assert (err.value.field, err.value.value) == (metric, repr(value))
    assert err.value.message.startswith(f"{metric} reaches {value!r}: negative or a percentage")


def test_a_percentage_of_exactly_100_and_large_gauges_pass(tmp_path):
    rows = _attach(tmp_path, [("gpu_util_pct", 0, 100.0), ("gpu_mem_used_mib", 0, 16000.0)])
    assert rows[0]["gpu_util_max_pct"] == 100.0 and rows[0]["gpu_mem_used_max_mib"] == 16000.0
