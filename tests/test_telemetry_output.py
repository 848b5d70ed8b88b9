"""The job_telemetry schema file, its Arrow form, and the resource description."""

from __future__ import annotations

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
