"""Telemetry fixtures: deterministic bytes, planted defects, all formats agree after attach."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from swftools import table as jt
from swftools.errors import UsageError
from swftools.telemetry import attach
from swftools.synth.telemetry import FORMATS, generate_telemetry, place_jobs

T0 = 1_700_006_400


def _jobs(n=14, seed=3, span_s=4 * 3600):
    """Jobs on 4-GPU nodes; the first holds a whole node (so node metrics are attributable)."""
    rng = np.random.default_rng(seed)
    start = T0 + np.sort(rng.integers(0, span_s, n))
    per_node = rng.choice([1, 1, 2, 4], n)
    per_node[0] = 4
    return jt.from_columns({"job_id": np.arange(1, n + 1), "nodes": np.ones(n, int),
                            "gpus_per_node": per_node, "gpus": per_node, "start_time": start,
                            "finish_time": start + rng.integers(60, 2 * 3600, n)})


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("fx") / "telemetry"
    generate_telemetry(_jobs(), out, nodes=2, gpus_per_node=4, days=0.25)
    return out


def test_same_seed_same_bytes_other_seed_other_values(fixture_dir, tmp_path):
    again = tmp_path / "again"
    generate_telemetry(_jobs(), again, nodes=2, gpus_per_node=4, days=0.25)
    assert _digest(again) == _digest(fixture_dir)
    other = tmp_path / "other"
    generate_telemetry(_jobs(), other, nodes=2, gpus_per_node=4, days=0.25, seed=1,
                       formats=("long-parquet",))
    assert _digest(other)["telemetry-long.parquet"] != _digest(fixture_dir)["telemetry-long.parquet"]


def test_every_format_is_written(fixture_dir):
    names = {p.name for p in fixture_dir.iterdir()}
    assert names == {".swftools-output", "allocations.csv", "prometheus-json", "prometheus-json-raw", "telemetry.prom",
                     "telemetry.om", "telemetry-long.csv", "telemetry-long.parquet"}
    chunks = sorted(p.name for p in (fixture_dir / "prometheus-json").iterdir())
    assert any(c.endswith(".json.gz") for c in chunks) and any(c.endswith(".json") for c in chunks)
    assert (fixture_dir / "telemetry.om").read_text().endswith("# EOF\n")


def test_defects_are_planted(fixture_dir):
    long = pq.read_table(fixture_dir / "telemetry-long.parquet").to_pandas()
    util = long[long.metric == "gpu_util_pct"]
    per_node = util.groupby("node").ts.nunique()
    minutes = 0.25 * 1440
    assert (per_node < minutes).all()  # dropped scrapes everywhere
    last = util[util.node == "node002"].ts.drop_duplicates().sort_values()
    assert (last.diff() >= 7 * 60).any()  # the exporter restart gap
    energy = long[(long.metric == "gpu_energy_j") & (long.node == "node001")].sort_values("ts")
    assert (energy.groupby("gpu_index").value.diff() < 0).any()  # the counter reset


def _load(path: Path) -> dict:
    import gzip

    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    return json.loads(data)


def _max_step(doc: dict, node: str) -> float:
    return max(b[0] - a[0] for s in doc["data"]["result"] if s["metric"]["Hostname"] == node
               for a, b in zip(s["values"], s["values"][1:]))


def test_resampled_json_fills_short_gaps_and_chunks_overlap(tmp_path):
    out = tmp_path / "fx"
    generate_telemetry(_jobs(span_s=11 * 3600), out, nodes=2, gpus_per_node=4, days=0.5,
                       formats=("prometheus-json", "prometheus-json-raw"))
    resampled = [_load(p) for p in sorted((out / "prometheus-json").glob("DCGM_FI_DEV_GPU_UTIL.*"))]
    raw = [_load(p) for p in sorted((out / "prometheus-json-raw").glob("DCGM_FI_DEV_GPU_UTIL.*"))]
    assert len(resampled) == 2
    # The 7-minute exporter restart on node002: raw shows it, query_range repeats the last
    # value for 5 minutes and leaves 2 missing.
    assert max(_max_step(d, "node002") for d in raw) >= 8 * 60 - 1
    assert max(_max_step(d, "node002") for d in resampled) == 3 * 60
    # query_range's end is inclusive: consecutive chunks share their edge instant.
    end_first = max(v[0] for s in resampled[0]["data"]["result"] for v in s["values"])
    start_second = min(v[0] for s in resampled[1]["data"]["result"] for v in s["values"])
    assert end_first == start_second


@pytest.mark.slow
def test_all_raw_formats_give_the_same_job_telemetry(fixture_dir):
    jobs = _jobs()
    alloc = fixture_dir / "allocations.csv"
    maps = ["dcgm", "node_exporter", "ipmi_exporter"]
    runs = {
        "raw-json": attach(jobs, [fixture_dir / "prometheus-json-raw"], metric_map=maps,
                           allocations=alloc, gpus_per_node=4),
        "text": attach(jobs, [fixture_dir / "telemetry.prom"], metric_map=maps, allocations=alloc,
                       gpus_per_node=4),
        "openmetrics": attach(jobs, [fixture_dir / "telemetry.om"], metric_map=maps,
                              allocations=alloc, gpus_per_node=4),
        "long-csv": attach(jobs, [fixture_dir / "telemetry-long.csv"], metric_map=None,
                           allocations=alloc, gpus_per_node=4),
        "long-parquet": attach(jobs, [fixture_dir / "telemetry-long.parquet"], metric_map=None,
                               allocations=alloc, gpus_per_node=4),
    }
    tables = {k: v.replace_schema_metadata(None) for k, v in runs.items()}
    base = tables.pop("long-parquet")
    for name, table in tables.items():
        assert table.equals(base), name
    rows = base.to_pylist()
    assert any(r["gpu_energy_j"] for r in rows) and any(r["node_cpu_util_mean_pct"] for r in rows)
    resampled = attach(jobs, [fixture_dir / "prometheus-json"], metric_map=maps,
                       allocations=alloc, gpus_per_node=4)
    assert jt.get_metadata(resampled)["telemetry"]["sampling"] == ["resampled"]
    # The query_range grid hides dropped scrapes: coverage looks better than it is.
    cover = lambda t: sum(r["gpu_samples_observed"] or 0 for r in t.to_pylist())  # noqa: E731
    assert cover(resampled) > cover(base)


def test_placement_never_double_books_a_gpu():
    jobs = _jobs(60, seed=9)
    placed = place_jobs(jobs, 2, 4)
    times = dict(zip(jobs.column("job_id").to_pylist(),
                     zip(jobs.column("start_time").to_pylist(), jobs.column("finish_time").to_pylist())))
    by_gpu: dict = {}
    for job, n, g in placed:
        by_gpu.setdefault((n, g), []).append(times[job])
    for spans in by_gpu.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_bad_options(tmp_path):
    with pytest.raises(UsageError, match="unknown fixture format"):
        generate_telemetry(_jobs(), tmp_path / "x", formats=("csv",))
    (tmp_path / "exists").mkdir()
    with pytest.raises(UsageError, match="already exists"):
        generate_telemetry(_jobs(), tmp_path / "exists")
    assert set(FORMATS) >= {"openmetrics", "prometheus-text"}
