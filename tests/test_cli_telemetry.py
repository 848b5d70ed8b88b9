"""``swftools telemetry attach|synth``: exit codes, messages, package resource, atomic output."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from swftools.formats import datapackage
from swftools import table as jt
from swftools.cli import app

T0 = 1_700_006_400
runner = CliRunner()


@pytest.fixture
def package(tmp_path):
    jobs = jt.from_columns({"job_id": [1, 2, 3], "nodes": [1, 1, 1], "gpus_per_node": [8, 1, 1],
                            "gpus": [8, 1, 1], "start_time": [T0, T0 + 100, T0 + 200],
                            "finish_time": [T0 + 3600, T0 + 1900, T0 + 400]},
                           {"site": "aaic", "time_zone": "Asia/Tokyo"})
    root = tmp_path / "pkg"
    datapackage.write(jobs, root)
    long = tmp_path / "samples.csv"
    rows = ["ts,node,gpu_index,metric,value"]
    for t in range(T0, T0 + 3600, 60):
        rows += [f"{t},a,{g},gpu_util_pct,{10 * g}" for g in range(8)]
        rows += [f"{t},b,0,gpu_util_pct,75", f"{t},a,,node_power_w,900"]
    long.write_text("\n".join(rows) + "\n")
    alloc = tmp_path / "alloc.csv"
    alloc.write_text("job_id,node,gpu_index\n1,a,\n2,b,0\n3,b,\n")
    return root, long, alloc


def test_attach_adds_a_valid_resource(package):
    root, long, alloc = package
    result = runner.invoke(app, ["telemetry", "attach", str(root), str(long), "--canonical",
                                 "--allocations", str(alloc)])
    assert result.exit_code == 0, result.output
    desc = json.loads((root / "datapackage.json").read_text())
    res = {r["name"]: r for r in desc["resources"]}["job_telemetry"]
    assert "interval 60 s" in res["description"] and "samples.csv" in res["description"]
    schema = json.loads((root / res["schema"]).read_text())
    assert schema["foreignKeys"] == [{"fields": ["job_id"],
                                      "reference": {"resource": "jobs", "fields": ["job_id"]}}]
    rows = datapackage.read(root, resource="job_telemetry").to_pylist()
    assert rows[0]["gpu_util_mean_pct"] == 35.0 and rows[0]["node_power_mean_w"] == 900.0
    assert rows[1]["gpu_util_mean_pct"] == 75.0 and rows[1]["node_shared"] is True
    assert rows[2]["telemetry_null_reason"] == "gpu_indices_unknown;node_shared"
    assert not [p for p in root.parent.iterdir() if p.name.startswith(".")]  # no work folder left
    again = runner.invoke(app, ["telemetry", "attach", str(root), str(long), "--canonical",
                                "--allocations", str(alloc)])
    assert again.exit_code == 2 and "already exists" in again.output


def test_out_file_is_deterministic_and_never_overwritten(package, tmp_path):
    root, long, alloc = package
    outs = []
    for name in ("a.csv", "b.csv"):
        out = tmp_path / name
        result = runner.invoke(app, ["telemetry", "attach", str(root), str(long), "--canonical",
                                     "--allocations", str(alloc), "--out", str(out),
                                     "--partition", "none" if name == "b.csv" else "day"])
        assert result.exit_code == 0, result.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    result = runner.invoke(app, ["telemetry", "attach", str(root), str(long), "--canonical",
                                 "--out", str(tmp_path / "a.csv")])
    assert result.exit_code == 2 and "--force" in result.output


def test_bad_input_exits_1_with_file_and_line(package, tmp_path):
    root, long, alloc = package
    text = long.read_text().splitlines()
    text[9] = text[9].replace(",75", ",7five")
    long.write_text("\n".join(text) + "\n")
    before = (root / "datapackage.json").read_bytes()
    result = runner.invoke(app, ["telemetry", "attach", str(root), str(long), "--canonical",
                                 "--allocations", str(alloc)])
    assert result.exit_code == 1
    assert f"{long}:10: value: value '7five' is not a number" in result.output
    assert (root / "datapackage.json").read_bytes() == before


def test_usage_errors_exit_2(package, tmp_path):
    root, long, _ = package
    result = runner.invoke(app, ["telemetry", "attach", str(root), str(long), "--canonical",
                                 "--map", "dcgm"])
    assert result.exit_code == 2 and "exclude each other" in result.output
    result = runner.invoke(app, ["telemetry", "attach", str(root), str(long), "--canonical",
                                 "--partition", "hour"])
    assert result.exit_code == 2 and "partitioning" in result.output


def test_synth_then_attach_with_presets(package, tmp_path):
    root, _, _ = package
    out = tmp_path / "fx"
    result = runner.invoke(app, ["telemetry", "synth", str(root), "--out", str(out), "--nodes", "2",
                                 "--days", "0.1", "--to", "prometheus-json-raw"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["telemetry", "attach", str(root), str(out / "prometheus-json-raw"),
                                 "--allocations", str(out / "allocations.csv"),
                                 "--out", str(tmp_path / "t.parquet")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["telemetry", "attach", str(root), str(out / "prometheus-json-raw"),
                                 "--map", "nvidia_gpu_exporter", "--out", str(tmp_path / "u.csv")])
    assert result.exit_code == 1 and "has no entry in the metric map" in result.output
