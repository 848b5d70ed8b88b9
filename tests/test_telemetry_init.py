"""``swftools.telemetry.attach``'s wiring of the engines, worked by hand and fast.

Which engine runs (``duckdb``, its in-process day tasks for Parquet long tables, or ``dask``),
what each DuckDB connection is given (``work_dir``, ``memory_limit``, ``threads``; a spy on
``engine.connection``), the progress callback, and the figures of a small job spanning a UTC
midnight, worked by hand. The Dask path runs on a synchronous stand-in client that records the
cluster options it is asked for; ``tests/test_telemetry_dask.py`` runs the real clusters.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

import pyarrow as pa
import pytest

from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.formats import datapackage
from swftools.telemetry import attach, attach_to_package, dask_engine, engine

from .telemetry_support import T0, UTIL, sample_rows, two_day_samples, write_long

def _jobs() -> pa.Table:
    return jt.from_columns({"job_id": [1], "nodes": [1], "gpus_per_node": [1], "gpus": [1],
                            "start_time": [T0 - 180], "finish_time": [T0 + 120]})


def _alloc() -> pa.Table:
    return pa.table({"job_id": pa.array([1], pa.int64()), "node": ["g1"],
                     "gpu_index": pa.array([0], pa.int32())})


def _check_figures(table: pa.Table, idle: float = 0.0) -> None:
    """The job's figures, by hand: 4 samples of the 5 a 300 s job at 60 s should have."""
    row = table.to_pylist()[0]
    assert row["gpu_idle_fraction"] == idle
    assert row["gpu_samples_expected"] == 5 and row["gpu_samples_observed"] == 4
    assert row["gpu_util_mean_pct"] == pytest.approx(sum(UTIL) / 4)
    assert row["gpu_util_max_pct"] == 70.0
    assert row["gpu_energy_j"] == pytest.approx(60 + 90 + 40)
    assert row["telemetry_null_reason"] is None


@pytest.fixture
def connections(monkeypatch):
    """Every DuckDB connection opened in this process: its options, in order."""
    seen = []
    real = engine.connection

    def spy(work_dir=None, **options):
        seen.append({"work_dir": work_dir, "in_memory": False, **options})
        return real(work_dir, **options)

    monkeypatch.setattr(engine, "connection", spy)
    return seen


class _Future:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class _Client:
    """A synchronous stand-in for a dask.distributed client: each task runs when submitted."""

    def nthreads(self):
        return {"tcp://127.0.0.1:1": 1}

    def submit(self, fn, *args, pure=True):
        return _Future(fn(*args))


@pytest.fixture
def clusters(monkeypatch):
    """The ``(scheduler, workers)`` of every Dask client asked for (run on ``_Client``)."""
    asked = []

    @contextmanager
    def fake(scheduler=None, workers=None):
        asked.append((scheduler, workers))
        yield _Client()

    monkeypatch.setattr(dask_engine, "dask_client", fake)
    return asked


def test_parquet_day_partitions_run_as_day_tasks_in_this_process(tmp_path, connections, clusters):
    paths = two_day_samples(tmp_path)
    calls = []
    table = attach(_jobs(), paths, metric_map=None, allocations=_alloc(), gpus_per_node=1,
                   memory_limit="300MB", threads=1, work_dir=tmp_path, idle_threshold_pct=30,
                   progress=lambda done, total: calls.append((done, total)))
    _check_figures(table, idle=0.5)
    assert clusters == []  # no Dask cluster for the DuckDB engine
    coordinator, *tasks = connections
    # the coordinator keeps DuckDB's default threads; --threads goes to each day task
    assert coordinator == {"work_dir": tmp_path, "in_memory": False, "memory_limit": "300MB",
                           "threads": None}
    assert tasks == [{"work_dir": str(tmp_path), "in_memory": True, "memory_limit": "300MB",
                      "threads": 1}] * 2
    assert calls == [(1, 2), (2, 2)]
    meta = jt.get_metadata(table)["telemetry"]
    assert meta["metrics"] == ["gpu_energy_j", "gpu_util_pct"]
    assert [s["file"] for s in meta["sources"]] == ["day0.parquet", "day1.parquet"]


@pytest.mark.parametrize("suffix, options", [(".parquet", {"partition": "none"}), (".csv", {})])
def test_other_inputs_and_partition_none_stage_whole_in_one_connection(tmp_path, connections,
                                                                       clusters, suffix, options):
    """CSV long tables, or any input with partition 'none': one connection, the options as given."""
    paths = two_day_samples(tmp_path, suffix)
    calls = []
    table = attach(_jobs(), paths, metric_map=None, allocations=_alloc(), gpus_per_node=1,
                   memory_limit="300MB", threads=1, work_dir=tmp_path,
                   progress=lambda done, total: calls.append((done, total)), **options)
    _check_figures(table)
    assert clusters == []
    assert connections == [{"work_dir": tmp_path, "in_memory": False, "memory_limit": "300MB",
                            "threads": 1}]
    # the DuckDB engine's days are those of the allocations (T0 - 180 to T0 + 120: two)
    assert calls == ([] if options else [(1, 2), (2, 2)])
    meta = jt.get_metadata(table)["telemetry"]
    assert meta["idle_threshold_pct"] == 0.0  # the CLI's --idle-threshold default
    # the energy rule the hand-worked figure follows (a drop is a reset: +40, not -210)
    assert meta["energy"] == ("sum of gpu_energy_j counter increments between consecutive samples "
                              "inside the job; a drop is a counter reset (the new value is the "
                              "increment)")


@pytest.mark.parametrize("cluster", [{"scheduler": "tcp://head:8786"}, {"workers": 3}])
def test_dask_engine_hands_its_options_to_the_cluster_and_the_day_tasks(tmp_path, connections,
                                                                       clusters, cluster):
    paths = two_day_samples(tmp_path)
    calls = []
    table = attach(_jobs(), paths, metric_map=None, allocations=_alloc(), gpus_per_node=1,
                   engine="dask", memory_limit="300MB", threads=2, work_dir=tmp_path,
                   idle_threshold_pct=30,
                   progress=lambda done, total: calls.append((done, total)), **cluster)
    _check_figures(table, idle=0.5)
    assert clusters == [(cluster.get("scheduler"), cluster.get("workers"))]
    coordinator, *tasks = connections
    assert coordinator == {"work_dir": tmp_path, "in_memory": False, "memory_limit": "300MB",
                           "threads": None}
    # a worker's task spills into the worker's own folder, not the coordinator's work_dir
    assert tasks == [{"work_dir": None, "in_memory": True, "memory_limit": "300MB",
                      "threads": 2}] * 2
    assert calls == [(1, 2), (2, 2)]  # the Dask engine's days are those the files meet


def test_dask_engine_checks_its_options_before_any_work(tmp_path, clusters):
    csv = two_day_samples(tmp_path, ".csv")
    common = {"metric_map": None, "gpus_per_node": 1, "engine": "dask"}
    with pytest.raises(UsageError, match="^--workers starts a local cluster; it cannot go with "
                                         "--dask-scheduler$"):
        attach(_jobs(), csv, scheduler="tcp://head:8786", workers=2, **common)
    with pytest.raises(UsageError, match="^workers must be >= 1, not 0$"):
        attach(_jobs(), csv, workers=0, **common)
    with pytest.raises(UsageError, match="day0.csv: the dask engine reads Parquet long tables "
                                         "only"):
        attach(_jobs(), csv, **common)
    with pytest.raises(UsageError, match="^the dask engine reads Parquet long tables, not "
                                         "--from prometheus-json$"):
        attach(_jobs(), two_day_samples(tmp_path), input_format="prometheus-json", **common)
    assert clusters == []


def test_duckdb_options_reach_duckdb(tmp_path):
    paths = two_day_samples(tmp_path)
    common = {"metric_map": None, "allocations": _alloc(), "gpus_per_node": 1}
    with pytest.raises(UsageError, match="missing: work directory does not exist$"):
        attach(_jobs(), paths, work_dir=tmp_path / "missing", **common)
    with pytest.raises(UsageError, match="^DuckDB failed"):
        attach(_jobs(), paths, memory_limit="lots", **common)


def test_messages_and_metadata_in_full(tmp_path):
    paths = two_day_samples(tmp_path, ".csv")
    common = {"metric_map": None, "allocations": _alloc()}
    with pytest.raises(UsageError, match=r"^the GPUs per node are unknown: give gpus_per_node or "
                                         r"a site$"):
        attach(_jobs(), paths, **common)
    stranger = pa.table({"job_id": pa.array([7], pa.int64()), "node": ["g1"],
                         "gpu_index": pa.array([0], pa.int32())})
    with pytest.raises(InputError) as info:
        attach(_jobs(), paths, metric_map=None, allocations=stranger, gpus_per_node=1)
    assert (info.value.path, info.value.message) == ("<allocations>",
                                                     "job 7 is not in the job table")
    high = write_long(tmp_path / "high.csv", sample_rows("gpu_util_pct", [101.0], [0]))
    with pytest.raises(InputError) as info:
        attach(_jobs(), [high], gpus_per_node=1, **common)
    assert info.value.message == ("gpu_util_pct reaches 101.0: negative or a percentage above 100 "
                                  "(wrong scale in the metric map or the long table?)")


def test_a_package_spills_beside_itself(tmp_path, connections):
    root = tmp_path / "out" / "pkg"
    root.parent.mkdir()
    datapackage.write(_jobs(), root)
    attach_to_package(root, two_day_samples(tmp_path, ".csv"), metric_map=None,
                      allocations=_alloc(), gpus_per_node=1, interval_s=1)
    assert [c["work_dir"] for c in connections] == [tmp_path / "out"]
    rows = datapackage.read(root, resource="job_telemetry").to_pylist()
    # 1 s is a positive whole number of seconds: 300 samples expected of a 300 s job
    assert [(r["gpu_samples_expected"], r["gpu_samples_observed"]) for r in rows] == [(300, 4)]


def test_input_format_and_sampling_are_the_callers(tmp_path):
    """A Prometheus matrix on whole minutes reads as 'resampled' unless the caller says 'raw';
    ``input_format`` overrides what the file's name says (and so which engine can read it)."""
    series = {"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "Hostname": "g1"},
              "values": [[T0 + 60 * m, str(v)] for m, v in zip([-2, -1, 0, 1], UTIL)]}
    path = tmp_path / "q.json"
    path.write_text(json.dumps({"status": "success",
                                "data": {"resultType": "matrix", "result": [series]}}))
    common = {"metric_map": "dcgm", "allocations": _alloc(), "gpus_per_node": 1}
    table = attach(_jobs(), [path], sampling="raw", **common)
    assert jt.get_metadata(table)["telemetry"]["sampling"] == ["raw"]
    assert table.column("gpu_util_mean_pct").to_pylist() == [pytest.approx(sum(UTIL) / 4)]
    # the same matrix under a long table's name, read as what the caller says it is
    named_long = tmp_path / "q.parquet"
    named_long.write_bytes(path.read_bytes())
    assert attach(_jobs(), [named_long], input_format="prometheus-json", sampling="raw",
                  **common).to_pylist() == table.to_pylist()
    with pytest.raises(InputError, match="day0.csv"):
        attach(_jobs(), two_day_samples(tmp_path, ".csv"), input_format="prometheus-json", **common)


def test_one_long_table_is_taken_as_it_is_by_every_partitioning(tmp_path):
    """One canonical long table is not de-duplicated (``samples``' docstring): a repeated row
    counts twice, whether staged whole or by day tasks (every partitioning: the same bytes)."""
    path = write_long(tmp_path / "one.parquet",
                      sample_rows("gpu_util_pct", [0.5, 30.0, 30.0], [-2, -1, -1]))
    common = {"metric_map": None, "allocations": _alloc(), "gpus_per_node": 1}
    whole = attach(_jobs(), [path], partition="none", **common)
    days = attach(_jobs(), [path], **common)
    assert whole.to_pylist() == days.to_pylist()
    row = whole.to_pylist()[0]
    assert row["gpu_samples_observed"] == 3
    assert row["gpu_util_mean_pct"] == pytest.approx((0.5 + 30 + 30) / 3)
