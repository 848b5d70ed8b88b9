"""The Dask engine against the DuckDB engine: same bytes, same errors, through the API and the CLI.

One LocalCluster (2 worker processes, 1 thread each, 127.0.0.1, no dashboard) serves the module.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from swftools import table as jt
from swftools.cli import app
from swftools.errors import InputError, UsageError
from swftools.formats import datapackage
from swftools.telemetry import attach, dask_engine, write_table

from .strategies import TELEMETRY_T0, telemetry_dask_cases

GPN = 2
DAY = 86_400
runner = CliRunner()


@pytest.fixture(scope="module")
def cluster():
    """The scheduler address of a 2-worker local cluster, started once for the module."""
    with dask_engine.local_cluster(2, threads_per_worker=1) as c:
        yield c.scheduler_address


def _table(cols: dict) -> pa.Table:
    return pa.table({"ts": pa.array(cols["ts"], pa.float64()), "node": cols["node"],
                     "gpu_index": pa.array(cols["gpu_index"], pa.int32()),
                     "metric": cols["metric"], "value": pa.array(cols["value"], pa.float64())})


def write_split(cols: dict, folder: Path, split: str) -> list[Path]:
    """The samples as Parquet: one file, one per UTC day, or per day plus the previous day's
    last hour with other values (``overlap``)."""
    folder.mkdir(parents=True, exist_ok=True)
    table = _table(cols)
    if split == "one":
        pq.write_table(table, folder / "s.parquet", row_group_size=500)
        return [folder / "s.parquet"]
    ts = np.asarray(cols["ts"])
    day = (ts // DAY).astype(np.int64)
    paths = []
    for d in np.unique(day):
        part = table.filter(pa.array(day == d))
        if split == "overlap":
            prev = table.filter(pa.array((ts >= d * DAY - 3600) & (ts < d * DAY)))
            util = pc.equal(prev.column("metric"), "gpu_util_pct")
            other = pc.if_else(util, pc.subtract(100.0, prev.column("value")), prev.column("value"))
            prev = prev.set_column(4, "value", other)
            part = pa.concat_tables([prev, part])
        path = folder / f"s-{int(d)}.parquet"
        pq.write_table(part, path, row_group_size=500)
        paths.append(path)
    return paths


def _alloc(rows) -> pa.Table:
    return pa.table({"job_id": pa.array([r[0] for r in rows], pa.int64()),
                     "node": [r[1] for r in rows],
                     "gpu_index": pa.array([r[2] for r in rows], pa.int32())})


def _bytes(table: pa.Table, folder: Path, name: str) -> list[bytes]:
    out = []
    for suffix in (".csv", ".parquet"):  # Parquet also carries the table metadata
        path = folder / f"{name}{suffix}"
        write_table(table, path)
        out.append(path.read_bytes())
    return out


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=telemetry_dask_cases())
def test_dask_engine_gives_the_duckdb_bytes(cluster, case):
    jobs, alloc, cols, split = case
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_split(cols, Path(tmp) / "samples", split)
        common = dict(metric_map=None, allocations=_alloc(alloc), gpus_per_node=GPN, work_dir=tmp)
        # partition none: one query over samples staged whole, the reference of the day paths
        want = attach(jobs, paths, partition="none", **common)
        got = attach(jobs, paths, engine="dask", scheduler=cluster, **common)
        want_bytes = _bytes(want, Path(tmp), "duckdb")
        assert _bytes(got, Path(tmp), "dask") == want_bytes
        # the DuckDB engine's own day tasks (Parquet long tables, partition day), in process
        days = attach(jobs, paths, **common)
        assert _bytes(days, Path(tmp), "days") == want_bytes
        meta = jt.get_metadata(got)["telemetry"]
        assert {"node_cpu_util_pct", "gpu_energy_j"} <= set(meta["metrics"])


def test_counter_lag_crosses_days_without_samples(cluster, tmp_path):
    """A job spanning three days whose GPU reports only on the first and the last: the energy
    increment of the last day's first sample reaches back over the empty day."""
    t0 = TELEMETRY_T0
    jobs = jt.from_columns({"job_id": [1], "nodes": [1], "gpus_per_node": [1], "gpus": [1],
                            "start_time": [t0], "finish_time": [t0 + 3 * DAY]})
    ts = [t0 + 60.0, t0 + 120.0, t0 + 2 * DAY + 60, t0 + 2 * DAY + 120]
    cols = {"ts": ts, "node": ["n0"] * 4, "gpu_index": [0] * 4, "metric": ["gpu_energy_j"] * 4,
            "value": [10.0, 20.0, 50.0, 45.0]}  # +10, +30 across the gap, reset: +45
    paths = write_split(cols, tmp_path / "s", "day")
    assert len(paths) == 2
    common = dict(metric_map=None, allocations=_alloc([(1, "n0", 0)]), gpus_per_node=1)
    row = attach(jobs, paths, engine="dask", scheduler=cluster, **common).to_pylist()[0]
    assert row["gpu_energy_j"] == pytest.approx(10 + 30 + 45)
    assert _bytes(attach(jobs, paths, engine="dask", scheduler=cluster, **common), tmp_path, "a") \
        == _bytes(attach(jobs, paths, partition="none", **common), tmp_path, "b") \
        == _bytes(attach(jobs, paths, **common), tmp_path, "c")


def test_local_cluster_by_default(tmp_path):
    """Without --dask-scheduler the engine starts (and stops) its own local cluster."""
    t0 = TELEMETRY_T0
    jobs = jt.from_columns({"job_id": [1], "nodes": [1], "gpus_per_node": [1], "gpus": [1],
                            "start_time": [t0], "finish_time": [t0 + DAY + 600]})
    cols = {"ts": [t0 + 60.0 * k for k in range(0, 1500, 7)], "node": ["n0"] * 215,
            "gpu_index": [0] * 215, "metric": ["gpu_util_pct"] * 215,
            "value": [float(k % 101) for k in range(215)]}
    paths = write_split(cols, tmp_path / "s", "day")
    common = dict(metric_map=None, allocations=_alloc([(1, "n0", 0)]), gpus_per_node=1)
    got = attach(jobs, paths, engine="dask", workers=1, **common)
    assert _bytes(got, tmp_path, "a") == _bytes(attach(jobs, paths, **common), tmp_path, "b")


def _errors(fn):
    try:
        fn()
    except (InputError, UsageError) as exc:
        return type(exc), str(exc)
    raise AssertionError("no error")


def test_bad_input_errors_like_the_duckdb_engine(cluster, tmp_path):
    t0 = TELEMETRY_T0
    jobs = jt.from_columns({"job_id": [1, 2], "nodes": [1, 1], "gpus_per_node": [1, 1],
                            "gpus": [1, 1], "start_time": [t0, t0 + 600],
                            "finish_time": [t0 + 600, t0 + 1200]})
    alloc = _alloc([(1, "n0", 0), (2, "n0", 0)])
    good = {"ts": [t0 + 60.0 * k for k in range(20)], "node": ["n0"] * 20, "gpu_index": [0] * 20,
            "metric": ["gpu_util_pct"] * 20, "value": [50.0] * 20}
    cases = {
        "above_100": dict(good, value=[50.0] * 19 + [150.0]),
        "milliseconds": dict(good, ts=[t * 1000 for t in good["ts"]]),
        "unknown_metric": dict(good, metric=["gpu_fun"] * 20),
        "orphan_job": good,
    }
    for name, cols in cases.items():
        path = tmp_path / f"{name}.parquet"
        pq.write_table(_table(cols), path)
        al = _alloc([(1, "n0", 0), (9, "n0", 0)]) if name == "orphan_job" else alloc
        common = dict(metric_map=None, allocations=al, gpus_per_node=1)
        want = _errors(lambda: attach(jobs, [path], **common))
        got = _errors(lambda: attach(jobs, [path], engine="dask", scheduler=cluster, **common))
        assert got == want and want[0] is InputError, name


def test_engine_options_are_checked_before_any_work(tmp_path):
    jobs = jt.from_columns({"job_id": [1], "nodes": [1], "gpus_per_node": [1], "gpus": [1],
                            "start_time": [TELEMETRY_T0], "finish_time": [TELEMETRY_T0 + 60]})
    csv = tmp_path / "s.csv"
    csv.write_text("ts,node,gpu_index,metric,value\n")
    with pytest.raises(UsageError, match="Parquet long tables only"):
        attach(jobs, [csv], metric_map=None, gpus_per_node=1, engine="dask")
    with pytest.raises(UsageError, match="need --engine dask"):
        attach(jobs, [csv], metric_map=None, gpus_per_node=1, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(UsageError, match="unknown engine"):
        attach(jobs, [csv], metric_map=None, gpus_per_node=1, engine="spark")
    with pytest.raises(UsageError, match="day partitions"):
        attach(jobs, [csv], metric_map=None, gpus_per_node=1, engine="dask", partition="none")
    with pytest.raises(UsageError, match="cannot go with --dask-scheduler"):
        attach(jobs, [csv], metric_map=None, gpus_per_node=1, engine="dask", workers=2,
               scheduler="tcp://127.0.0.1:1")
    with pytest.raises(UsageError, match="workers must be >= 1"):
        attach(jobs, [csv], metric_map=None, gpus_per_node=1, engine="dask", workers=0)


def test_unreachable_scheduler_is_a_usage_error(monkeypatch):
    monkeypatch.setattr(dask_engine, "CONNECT_TIMEOUT_S", 1)
    with pytest.raises(UsageError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        with dask_engine.dask_client("tcp://127.0.0.1:9"):
            pass


@pytest.fixture(scope="module")
def synth_package(tmp_path_factory):
    """A two-day AAIC-like package, its synthetic long-table telemetry split by day, allocations."""
    from swftools.synth.telemetry import generate_telemetry

    rng = np.random.default_rng(7)
    n = 40
    start = TELEMETRY_T0 + np.sort(rng.integers(0, 2 * DAY - 7200, n))
    per_node = rng.choice([1, 2, 8], n)
    jobs = jt.from_columns({"job_id": list(range(1, n + 1)), "nodes": [1] * n,
                            "gpus_per_node": per_node.tolist(), "gpus": per_node.tolist(),
                            "start_time": start.tolist(),
                            "finish_time": (start + rng.integers(60, 30000, n)).tolist()},
                           {"site": "aaic", "time_zone": "Asia/Tokyo"})
    tmp_path = tmp_path_factory.mktemp("synth")
    root = tmp_path / "pkg"
    datapackage.write(jobs, root)
    fx = tmp_path / "fx"
    generate_telemetry(jobs, fx, formats=("long-parquet",), nodes=3, gpus_per_node=8, days=2)
    table = pq.read_table(fx / "telemetry-long.parquet")
    cols = {c: table.column(c).to_pylist() for c in table.column_names}
    paths = write_split(cols, tmp_path / "days", "day")
    return root, paths, fx / "allocations.csv"


def test_cli_scheduler_option_gives_the_duckdb_bytes(cluster, synth_package, tmp_path):
    root, paths, alloc = synth_package
    outs = []
    for name, extra in (("duckdb.csv", []), ("dask.csv", ["--engine", "dask", "--dask-scheduler", cluster])):
        result = runner.invoke(app, ["telemetry", "attach", str(root), str(paths[0].parent),
                                     "--canonical", "--allocations", str(alloc),
                                     "--out", str(tmp_path / name), *extra])
        assert result.exit_code == 0, result.output
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]
    assert len(outs[0].splitlines()) == 41  # header + 40 jobs


def test_cli_errors_match(cluster, synth_package, tmp_path):
    root, paths, alloc = synth_package
    bad = alloc.read_text().splitlines()
    bad[3] = bad[3].replace(bad[3].split(",")[0], "999", 1)
    bad_alloc = tmp_path / "bad.csv"
    bad_alloc.write_text("\n".join(bad) + "\n")
    outputs = []
    for extra in ([], ["--engine", "dask", "--dask-scheduler", cluster]):
        result = runner.invoke(app, ["telemetry", "attach", str(root), *map(str, paths),
                                     "--canonical", "--allocations", str(bad_alloc),
                                     "--out", str(tmp_path / "x.csv"), *extra])
        assert result.exit_code == 1
        outputs.append(result.output)
    assert outputs[0] == outputs[1] and f"{bad_alloc}:4: job_id" in outputs[0]
    assert not (tmp_path / "x.csv").exists()
    result = runner.invoke(app, ["telemetry", "attach", str(root), *map(str, paths), "--canonical",
                                 "--out", str(tmp_path / "y.csv"), "--dask-scheduler", cluster])
    assert result.exit_code == 2 and "--engine dask" in result.output
