"""``swftools.telemetry``: attach's options and metadata, the package resource, the table file."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.formats import datapackage
from swftools.telemetry import (
    attach,
    attach_to_package,
    generate_telemetry,
    write_table,
)

T0 = 1_700_006_400
HEADER = "ts,node,gpu_index,metric,value\n"


def _jobs(meta=None):
    return jt.from_columns({"job_id": [1, 2], "nodes": [1, 1], "gpus_per_node": [1, 1], "gpus": [1, 1],
                            "start_time": [T0, T0 + 120], "finish_time": [T0 + 120, T0 + 240]}, meta)


def _alloc(tmp_path):
    path = tmp_path / "alloc.csv"
    path.write_text("job_id,node,gpu_index\n1,g1,0\n2,g1,0\n")
    return path


def _samples(tmp_path, rows, name="s.csv"):
    path = tmp_path / name
    path.write_text(HEADER + "".join(f"{T0 + m * 60},{node},{'' if gpu is None else gpu},{metric},{v}\n"
                                     for m, node, gpu, metric, v in rows))
    return path


GPU_ROWS = [(0, "g1", 0, "gpu_util_pct", 10), (1, "g1", 0, "gpu_util_pct", 30), (2, "g1", 0, "gpu_util_pct", 50)]


@pytest.mark.parametrize("interval", [0, -60, 1.5, True, "60"])
def test_interval_must_be_a_positive_whole_number(tmp_path, interval):
    with pytest.raises(UsageError, match=f"interval_s must be a positive whole number of seconds, not {interval!r}$"):
        attach(_jobs(), [_samples(tmp_path, GPU_ROWS)], metric_map=None, gpus_per_node=1, interval_s=interval)


def test_metadata_records_how_the_table_was_made(tmp_path):
    path = _samples(tmp_path, GPU_ROWS)
    table = attach(_jobs(), [path], metric_map=None, allocations=_alloc(tmp_path), gpus_per_node=1,
                   interval_s=120.0, idle_threshold_pct=10)
    meta = jt.get_metadata(table)["telemetry"]
    assert meta["interval_s"] == 120 and type(meta["interval_s"]) is int
    assert meta["idle_threshold_pct"] == 10.0 and type(meta["idle_threshold_pct"]) is float
    assert meta["gpus_per_node"] == 1 and meta["allocations"] == "alloc.csv"
    assert meta["metrics"] == ["gpu_util_pct"] and meta["metric_maps"] == ["canonical"]
    assert meta["sampling"] == ["raw"]
    assert meta["sources"] == [{"file": "s.csv", "format": "long-csv", "samples_read": 3,
                                **{k: v for k, v in meta["sources"][0].items()
                                   if k not in ("file", "format", "samples_read")}}]
    assert {e["canonical"] for e in meta["metric_map"]} >= {"gpu_util_pct", "gpu_energy_j"}
    assert meta["energy"].startswith("sum of gpu_energy_j counter increments")
    assert "interval 120 s" in meta["description"] and "s.csv (long-csv, raw)" in meta["description"]
    first = table.to_pylist()[0]
    assert first["gpu_samples_expected"] == 1 and first["gpu_idle_fraction"] == 0.5
    alloc = pa.table({"job_id": [1], "node": ["g1"], "gpu_index": pa.array([0], pa.int32())})
    table = attach(_jobs(), [path], metric_map=["dcgm"], allocations=alloc, gpus_per_node=1)
    meta = jt.get_metadata(table)["telemetry"]
    assert meta["allocations"] == "<allocations>" and meta["metric_maps"] == ["dcgm"]
    none = attach(_jobs(), [path], metric_map=None, gpus_per_node=1)
    assert jt.get_metadata(none)["telemetry"]["allocations"] == "<no allocation table>"


def test_the_job_table_needs_its_columns_and_the_gpus_per_node(tmp_path):
    path = _samples(tmp_path, GPU_ROWS)
    jobs = _jobs()
    with pytest.raises(UsageError, match="the job table lacks columns gpus, start_time$"):
        attach(jobs.drop_columns(["gpus", "start_time"]), [path], metric_map=None, gpus_per_node=1)
    with pytest.raises(UsageError, match="the job table lacks column finish_time$"):
        attach(jobs.drop_columns(["finish_time"]), [path], metric_map=None, gpus_per_node=1)
    with pytest.raises(UsageError, match="gpus_per_node must be >= 1, not 0"):
        attach(jobs, [path], metric_map=None, gpus_per_node=0)
    with pytest.raises(UsageError, match="the GPUs per node are unknown"):
        attach(jobs, [path], metric_map=None)
    # the site named in the table's metadata, or given, tells the GPUs per node
    for table, site in ((_jobs({"site": "aaic"}), None), (jobs, "aaic")):
        got = attach(table, [path], metric_map=None, site=site)
        assert jt.get_metadata(got)["telemetry"]["gpus_per_node"] == 8
    assert jt.get_metadata(attach(jobs, [path], metric_map=None, gpus_per_node=1, site="aaic")
                           )["telemetry"]["gpus_per_node"] == 1


def test_engine_options_are_checked(tmp_path):
    path = _samples(tmp_path, GPU_ROWS)
    common = {"metric_map": None, "gpus_per_node": 1}
    with pytest.raises(UsageError, match=r"^unknown engine 'spark' \(choose from duckdb, dask\)$"):
        attach(_jobs(), [path], engine="spark", **common)
    for extra in ({"scheduler": "tcp://x:8786"}, {"workers": 2}):
        with pytest.raises(UsageError, match="^--dask-scheduler and --workers need --engine dask$"):
            attach(_jobs(), [path], **extra, **common)
    with pytest.raises(UsageError, match="^the dask engine runs day partitions, not partition 'none'$"):
        attach(_jobs(), [path], engine="dask", partition="none", **common)


def test_values_out_of_range_name_the_sources(tmp_path):
    a = _samples(tmp_path, GPU_ROWS, "a.csv")
    b = _samples(tmp_path, [(3, "g1", 0, "gpu_util_pct", 150)], "b.csv")
    with pytest.raises(InputError) as info:
        attach(_jobs(), [a, b], metric_map=None, allocations=_alloc(tmp_path), gpus_per_node=1)
    assert info.value.path == "a.csv, b.csv"
    assert "gpu_util_pct reaches 150.0: negative or a percentage above 100" in str(info.value)
    assert (info.value.field, info.value.value) == ("gpu_util_pct", "150.0")
    c = _samples(tmp_path, [(0, "g1", None, "node_power_w", -1)], "c.csv")
    with pytest.raises(InputError, match="node_power_w reaches -1.0"):
        attach(_jobs(), [c], metric_map=None, allocations=_alloc(tmp_path), gpus_per_node=1)


def test_null_reasons_follow_the_levels_present(tmp_path):
    later = [(10, "g1", 0, "gpu_util_pct", 5)]  # after both jobs: no job has a GPU sample
    node = [(10, "g1", None, "node_power_w", 5)]
    reasons = {}
    for name, rows in (("gpu", later), ("node", node), ("both", later + node)):
        table = attach(_jobs(), [_samples(tmp_path, rows, f"{name}.csv")], metric_map=None,
                       allocations=_alloc(tmp_path), gpus_per_node=1)
        reasons[name] = table.column("telemetry_null_reason").to_pylist()
    assert reasons == {"gpu": ["no_samples"] * 2, "node": ["no_node_samples"] * 2,
                       "both": ["no_samples;no_node_samples"] * 2}


def test_attach_to_package_adds_the_resource_with_the_description(tmp_path):
    root = tmp_path / "pkg"
    datapackage.write(_jobs({"site": "aaic"}), root)
    path = _samples(tmp_path, GPU_ROWS)
    written = attach_to_package(root, [path], metric_map=None, allocations=_alloc(tmp_path),
                                gpus_per_node=1)
    assert written == []  # nothing lost in the CSV
    desc = json.loads((root / "datapackage.json").read_text())
    res = {r["name"]: r for r in desc["resources"]}["job_telemetry"]
    assert res["title"] == "Job telemetry" and res["description"].startswith("Per-job GPU and node")
    rows = datapackage.read(root, resource="job_telemetry").to_pylist()
    assert [r["gpu_util_mean_pct"] for r in rows] == [20.0, 50.0]
    with pytest.raises(UsageError, match="already exists"):
        attach_to_package(root, [path], metric_map=None, gpus_per_node=1)
    attach_to_package(root, [path], metric_map=None, gpus_per_node=1, force=True)
    rows = datapackage.read(root, resource="job_telemetry").to_pylist()
    assert [r["telemetry_null_reason"] for r in rows] == ["no_allocation"] * 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no work folder left


def test_write_table_by_suffix(tmp_path):
    table = attach(_jobs(), [_samples(tmp_path, GPU_ROWS)], metric_map=None,
                   allocations=_alloc(tmp_path), gpus_per_node=1)
    plain, packed, parquet = tmp_path / "t.CSV", tmp_path / "t.csv.gz", tmp_path / "t.parquet"
    for path in (plain, packed, parquet):
        write_table(table, path)
    text = plain.read_text()
    assert text.splitlines()[0].startswith('"job_id","gpus_allocated"') and len(text.splitlines()) == 3
    assert gzip.decompress(packed.read_bytes()).decode().splitlines()[0] == text.splitlines()[0]
    back = pq.read_table(parquet)
    assert back.column("job_id").to_pylist() == [1, 2]
    assert jt.get_metadata(back)["telemetry"]["interval_s"] == 60
    with pytest.raises(UsageError, match=r"t.json: choose a .csv, .csv.gz or .parquet output$"):
        write_table(table, tmp_path / "t.json")
    with pytest.raises(UsageError, match="already exists"):
        write_table(table, parquet)
    write_table(table.slice(0, 1), parquet, force=True)
    assert pq.read_table(parquet).num_rows == 1


def test_generate_telemetry_is_the_synth_generator(tmp_path):
    from swftools.synth.telemetry import generate_telemetry as synth

    jobs = _jobs()
    generate_telemetry(jobs, tmp_path / "a", nodes=1, gpus_per_node=1, days=0.1)
    synth(jobs, tmp_path / "b", nodes=1, gpus_per_node=1, days=0.1)
    names = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert names and names == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*")
                                     if p.is_file())
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
