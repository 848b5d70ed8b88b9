"""``swftools.telemetry.dask_engine`` piece by piece, without a cluster, worked by hand.

The option checks, the UTC days a file's span meets, a task's DuckDB settings on a worker (a
stand-in worker), the local cluster's options and a lost worker (a stand-in ``distributed``
module), and ``run_partitions`` on a synchronous stand-in client that runs each task in another
folder, counts the tasks in flight and keeps what it was given. The partials are worked by hand:
job 1 holds GPU g1/0 from T0 - 180 to T0 + 120 (T0 a UTC midnight); the samples come in two
files, one per UTC day, the second repeating midnight's samples with other values (the first
file wins). ``tests/test_telemetry_dask.py`` runs the real clusters.
"""

from __future__ import annotations

import logging
import sys
import types
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pytest

from swftools import table as jt
from swftools.errors import UsageError
from swftools.telemetry import dask_engine, engine
from swftools.telemetry.allocations import load_allocations, prepare_allocations
from swftools.telemetry.metric_map import identity_map
from swftools.telemetry.readers_long import LongTable
from swftools.telemetry.samples import read_samples

from .telemetry_support import DAY, T0, sample_rows, two_day_samples, write_long

D0 = T0 // DAY  # T0's day number
MIB = 2**20


# --- the option checks ------------------------------------------------------------------------

def test_check_inputs_takes_parquet_long_tables_only(tmp_path):
    for name in ("a.parquet", "B.PARQUET", "c.csv", "d.json", "e.prom"):
        (tmp_path / name).write_bytes(b"")
    dask_engine.check_inputs([tmp_path / "a.parquet", tmp_path / "B.PARQUET"])  # auto, by name
    dask_engine.check_inputs([tmp_path / "a.parquet"], "long")
    for fmt in ("csv", "prometheus-json", "text"):
        with pytest.raises(UsageError) as err:
            dask_engine.check_inputs([tmp_path / "a.parquet"], fmt)
        assert str(err.value) == f"the dask engine reads Parquet long tables, not --from {fmt}"
    for name in ("c.csv", "d.json", "e.prom"):
        with pytest.raises(UsageError) as err:
            dask_engine.check_inputs([tmp_path / "a.parquet", tmp_path / name])
        assert str(err.value) == (f"{tmp_path / name}: the dask engine reads Parquet long tables "
                                  "only (ts, node, gpu_index, metric, value); use --engine duckdb "
                                  "for other inputs")


def test_check_cluster_options():
    for scheduler, workers in ((None, None), (None, 1), (None, 5), ("tcp://head:8786", None)):
        dask_engine.check_cluster_options(scheduler, workers)
    with pytest.raises(UsageError) as err:
        dask_engine.check_cluster_options(None, 0)
    assert str(err.value) == "workers must be >= 1, not 0"
    with pytest.raises(UsageError) as err:
        dask_engine.check_cluster_options("tcp://head:8786", 2)
    assert str(err.value) == ("--workers starts a local cluster; it cannot go with "
                              "--dask-scheduler")


def _span(ts_min, ts_max) -> LongTable:
    return LongTable(Path("x.parquet"), "parquet", (), True, None, 0, ts_min, ts_max)


def test_sample_days_are_the_utc_days_each_file_meets():
    files = [_span(T0 + 5.5, T0 + DAY + 3.0),       # days D0, D0 + 1
             _span(None, None),                     # no rows: no day
             _span(T0 + DAY, T0 + DAY),             # exactly midnight: day D0 + 1 only
             _span(T0 + 3 * DAY - 0.5, T0 + 3 * DAY - 0.25)]  # the last instants of D0 + 2
    assert dask_engine.sample_days(files) == [(T0, T0 + DAY, (0,)),
                                              (T0 + DAY, T0 + 2 * DAY, (0, 2)),
                                              (T0 + 2 * DAY, T0 + 3 * DAY, (3,))]
    assert dask_engine.sample_days([files[1]]) == []


# --- a stand-in ``distributed`` module ----------------------------------------------------------

class _KilledWorker(Exception):
    pass


@pytest.fixture
def fake_distributed(monkeypatch):
    """A ``distributed`` module whose names the test sets (none at first)."""
    module = types.ModuleType("distributed")
    monkeypatch.setitem(sys.modules, "distributed", module)
    return module


def _worker(limit="none", nthreads="none", folder="/scratch/worker-1"):
    """A stand-in worker: ``"none"`` leaves the attribute out."""
    worker = types.SimpleNamespace(local_directory=folder)
    if limit != "none":
        worker.memory_manager = types.SimpleNamespace(**({} if limit == "missing" else
                                                         {"memory_limit": limit}))
    if nthreads != "none":
        worker.state = types.SimpleNamespace(**({} if nthreads == "missing" else
                                                {"nthreads": nthreads}))
    return worker


def _task(**options) -> dask_engine.DayTask:
    return dask_engine.DayTask(T0, T0 + DAY, (), identity_map(), **options)


def test_task_settings_outside_a_worker(monkeypatch, fake_distributed):
    """The task's own settings (threads default 1): no worker, or no ``distributed`` at all."""
    def no_worker():
        raise ValueError("No worker found")

    fake_distributed.get_worker = no_worker
    task = _task(memory_limit="300MB", threads=3, work_dir="/tmp/w")
    assert dask_engine._task_settings(task) == ("/tmp/w", "300MB", 3)
    assert dask_engine._task_settings(_task()) == (None, None, 1)
    del fake_distributed.get_worker  # an import error
    assert dask_engine._task_settings(task) == ("/tmp/w", "300MB", 3)
    monkeypatch.delitem(sys.modules, "distributed")
    assert dask_engine._task_settings(task) == ("/tmp/w", "300MB", 3)
    assert dask_engine._task_settings(_task()) == (None, None, 1)


@pytest.mark.parametrize("worker, memory", [
    # 60 % of the worker's limit shared by its threads, in whole MiB: 8 GiB * 0.6 / 2 = 2457.6
    (_worker(8 * 1024 * MIB, 2), "2457MB"),
    (_worker(1024 * MIB, 1), "614MB"),  # 614.4
    (_worker(1024 * MIB, 0), "614MB"),  # no thread count: one
    (_worker(1024 * MIB, "missing"), "614MB"),
    (_worker(1024 * MIB), "614MB"),
    (_worker(256 * MIB, 1), "256MB"),  # 153.6: at least 256MB
    (_worker(None, 2), None),  # no limit: DuckDB's default
    (_worker(0, 2), None),
    (_worker("missing", 2), None),
    (_worker(), None),
])
def test_task_settings_on_a_worker(fake_distributed, worker, memory):
    """On a worker a task spills into the worker's folder; its memory is the worker's share."""
    fake_distributed.get_worker = lambda: worker
    assert dask_engine._task_settings(_task(work_dir="/tmp/w")) == ("/scratch/worker-1", memory, 1)
    # a memory limit given is kept; threads are the task's
    assert dask_engine._task_settings(_task(memory_limit="300MB", threads=4)) == (
        "/scratch/worker-1", "300MB", 4)


def test_a_lost_worker_is_a_usage_error(fake_distributed):
    fake_distributed.KilledWorker = _KilledWorker

    class Future:
        def __init__(self, exc=None):
            self.exc = exc

        def result(self):
            if self.exc:
                raise self.exc
            return "rows"

    assert dask_engine._result(Future()) == "rows"
    with pytest.raises(UsageError) as err:
        dask_engine._result(Future(_KilledWorker("worker tcp://127.0.0.1:1 died")))
    assert str(err.value) == ("a Dask worker died running a day of telemetry (worker "
                              "tcp://127.0.0.1:1 died); is its memory limit too small for one "
                              "day? (see --memory-limit)")
    with pytest.raises(KeyError):  # anything else is not a lost worker
        dask_engine._result(Future(KeyError("x")))


def test_local_cluster_options(fake_distributed):
    """Worker processes, one thread each, on 127.0.0.1 only, no dashboard (its HTTP endpoint on
    a free loopback port), quiet logs; the caller's options last."""
    fake_distributed.LocalCluster = lambda **options: options
    expected = {"n_workers": 3, "threads_per_worker": 1, "processes": True, "host": "127.0.0.1",
                "dashboard_address": None, "silence_logs": logging.ERROR,
                "scheduler_kwargs": {"dashboard": False, "dashboard_address": "127.0.0.1:0"}}
    assert dask_engine.local_cluster(3) == expected
    assert dask_engine.local_cluster(None, processes=False) == {**expected, "n_workers": None,
                                                               "processes": False}


# --- run_partitions on a stand-in client ------------------------------------------------------

@contextmanager
def _coordinator(paths, gpus_per_node=2):
    """The coordinator's connection as ``attach`` prepares it: job 1 on g1/0 and job 2 on g1/1
    (the node is shared: no exclusive-node interval), both from T0 - 180 to T0 + 120."""
    jobs = jt.from_columns({"job_id": [1, 2], "nodes": [1, 1], "gpus_per_node": [1, 1],
                            "gpus": [1, 1], "start_time": [T0 - 180] * 2,
                            "finish_time": [T0 + 120] * 2})
    alloc = pa.table({"job_id": pa.array([1, 2], pa.int64()), "node": ["g1", "g1"],
                      "gpu_index": pa.array([0, 1], pa.int32())})
    with engine.connection(None, memory_limit="256MB", threads=1, in_memory=True) as con:
        sample_set = read_samples(paths, identity_map(), con)
        engine.register_jobs(con, jobs)
        prepare_allocations(con, load_allocations(con, alloc), gpus_per_node)
        yield con, sample_set


def _partials(con) -> dict:
    """Per metric of job 1's GPU: n, n_low, sum (micro-units), min, max over every partition."""
    rows = con.execute("SELECT metric, sum(n), sum(n_low), sum(sum_micro), min(vmin), max(vmax) "
                       "FROM partials JOIN gpu_alloc USING (alloc_id) WHERE job_id = 1 "
                       "GROUP BY metric ORDER BY metric").fetchall()
    return {r[0]: tuple(int(x) if i < 3 else x for i, x in enumerate(r[1:])) for r in rows}


class _Future:
    def __init__(self, client, fn, args):
        self.client, self.fn, self.args = client, fn, args

    def result(self):
        self.client.in_flight -= 1
        self.client.collected.append(self.args[0].lo)
        return self.fn(*self.args)


class _Client:
    """A stand-in client: a task runs when its result is asked for, from another folder (a
    worker does not share the coordinator's working directory)."""

    def __init__(self, nthreads, elsewhere: Path):
        self._nthreads, self.elsewhere = nthreads, elsewhere
        self.submitted, self.collected, self.in_flight, self.most_in_flight = [], [], 0, 0

    def nthreads(self):
        return self._nthreads

    def submit(self, fn, *args, **options):
        self.submitted.append((args[0], options))
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        return _Future(self, self._in_elsewhere(fn), args)

    def _in_elsewhere(self, fn):
        def run(*args):
            with pytest.MonkeyPatch.context() as mp:
                mp.chdir(self.elsewhere)
                return fn(*args)
        return run


@pytest.fixture
def clients(monkeypatch, tmp_path, fake_distributed):
    """``(scheduler, workers)`` of every client asked for, and the clients (one worker thread
    unless ``clients.nthreads`` says otherwise)."""
    fake_distributed.KilledWorker = _KilledWorker
    asked = types.SimpleNamespace(options=[], made=[], nthreads={"tcp://w1:1": 1})
    (tmp_path / "elsewhere").mkdir()

    @contextmanager
    def fake(scheduler=None, workers=None):
        asked.options.append((scheduler, workers))
        client = _Client(asked.nthreads, tmp_path / "elsewhere")
        asked.made.append(client)
        yield client

    monkeypatch.setattr(dask_engine, "dask_client", fake)
    return asked


def test_run_partitions_on_a_cluster(tmp_path, monkeypatch, clients):
    """Each UTC day a file meets is a task on the cluster; the options reach the tasks; the
    partials are the hand-worked ones, midnight's energy increment derived from the boundaries."""
    monkeypatch.chdir(tmp_path)  # relative paths, which a worker elsewhere must still read
    paths = [p.name for p in two_day_samples(tmp_path)]
    calls = []
    with _coordinator(paths) as (con, sample_set):
        assert dask_engine.run_partitions(
            con, sample_set, progress=lambda *a: calls.append(a), scheduler="tcp://head:8786",
            workers=3, memory_limit="300MB", work_dir=tmp_path) == 2
        # util: 4 samples (midnight's from the first file), none at or below the 0 % default
        # energy: +60 at -1 min, +90 at midnight (from the day before), +40 after the reset
        assert _partials(con) == {"gpu_energy_j": (3, 0, 190_000_000, 40.0, 90.0),
                                  "gpu_util_pct": (4, 0, 150_500_000, 0.5, 70.0)}
    assert sample_set.metrics == {"gpu_util_pct", "gpu_energy_j"}
    assert sample_set.overlapping is True
    assert calls == [(1, 2), (2, 2)]
    assert clients.options == [("tcp://head:8786", 3)]
    (client,) = clients.made
    # the tasks read files, not only their arguments: never cached by their arguments
    assert [options for _, options in client.submitted] == [{"pure": False}] * 2
    tasks = [task for task, _ in client.submitted]
    assert [(t.lo, t.hi, len(t.bodies)) for t in tasks] == [(T0 - DAY, T0, 1), (T0, T0 + DAY, 2)]
    # on a worker, DuckDB's threads default to 1 and it spills into the worker's own folder
    assert {(t.idle_threshold_pct, t.dedupe, t.memory_limit, t.threads, t.work_dir)
            for t in tasks} == {(0.0, True, "300MB", None, None)}


def test_run_partitions_in_process(tmp_path, monkeypatch, clients):
    """``in_process``: no cluster; the tasks spill into ``work_dir`` and take every CPU."""
    monkeypatch.setattr("os.cpu_count", lambda: 7)
    paths = [str(p) for p in two_day_samples(tmp_path)]
    tasks = []
    real = dask_engine.day_partials

    def spy(task, *args):
        tasks.append(task)
        assert dask_engine._task_settings(task) == (str(tmp_path), "300MB", 7)
        return real(task, *args)

    monkeypatch.setattr(dask_engine, "day_partials", spy)
    with _coordinator(paths) as (con, sample_set):
        assert dask_engine.run_partitions(con, sample_set, 30, in_process=True,
                                          memory_limit="300MB", work_dir=tmp_path) == 2
        # at or below 30 %: 0.5 and 30
        assert _partials(con) == {"gpu_energy_j": (3, 0, 190_000_000, 40.0, 90.0),
                                  "gpu_util_pct": (4, 2, 150_500_000, 0.5, 70.0)}
    assert clients.options == []
    assert [(t.lo, t.idle_threshold_pct, t.threads) for t in tasks] == [(T0 - DAY, 30.0, 7),
                                                                        (T0, 30.0, 7)]


def test_run_partitions_of_one_file_takes_its_rows_as_they_are(tmp_path, monkeypatch, clients):
    """One file (no overlapping sources): a repeated row counts twice, as in the DuckDB engine;
    an energy series within one day is still a metric present."""
    path = write_long(tmp_path / "one.parquet",
                      sample_rows("gpu_util_pct", [40.0, 40.0, 60.0], (0, 0, 1))
                      + sample_rows("gpu_energy_j", [10.0, 25.0], (0, 1)))
    tasks = []
    real = dask_engine.day_partials

    def spy(task, *args):
        tasks.append(task)
        assert dask_engine._task_settings(task) == (None, None, 3)
        return real(task, *args)

    monkeypatch.setattr(dask_engine, "day_partials", spy)
    with _coordinator([path]) as (con, sample_set):
        assert dask_engine.run_partitions(con, sample_set, threads=3, in_process=True) == 1
        assert _partials(con) == {"gpu_energy_j": (1, 0, 15_000_000, 15.0, 15.0),
                                  "gpu_util_pct": (3, 0, 140_000_000, 40.0, 60.0)}
    assert sample_set.metrics == {"gpu_util_pct", "gpu_energy_j"}
    assert sample_set.overlapping is False
    assert [(t.dedupe, t.threads, t.work_dir) for t in tasks] == [(False, 3, None)]


def test_tasks_in_flight_are_two_per_worker_thread(tmp_path, monkeypatch, clients):
    """At most ``IN_FLIGHT_PER_THREAD`` (2) day tasks per worker thread wait for their result
    (at least one thread counted); they are collected in day order."""
    path = write_long(tmp_path / "week.parquet",
                      [(T0 + 60.0, "g1", 0, "gpu_util_pct", 50.0),
                       (T0 + 7 * DAY - 60, "g1", 0, "gpu_util_pct", 50.0)])

    def quick(task, gpu_alloc, node_excl):  # no DuckDB: an empty day
        return (_empty(("alloc_id", pa.int64()), ("metric", pa.string()), ("n", pa.int64()),
                       ("n_low", pa.int64()), ("sum_micro", pa.int64()), ("vmin", pa.float64()),
                       ("vmax", pa.float64())), [],
                _empty(("ts", pa.float64()), ("node", pa.string()), ("gpu_index", pa.int32()),
                       ("metric", pa.string()), ("value", pa.float64()), ("head", pa.bool_())))

    monkeypatch.setattr(dask_engine, "day_partials", quick)
    with _coordinator([path]) as (con, sample_set):
        for nthreads, window in (({"tcp://w1:1": 1}, 2), ({"tcp://w1:1": 1, "tcp://w2:1": 2}, 6),
                                 ({}, 2)):
            clients.nthreads = nthreads
            assert dask_engine.run_partitions(con, sample_set) == 7
            assert clients.made[-1].most_in_flight == window, nthreads
            assert clients.made[-1].collected == [T0 + d * DAY for d in range(7)]


def _empty(*fields) -> pa.Table:
    return pa.schema(list(fields)).empty_table()
