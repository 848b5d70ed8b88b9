"""The DuckDB as-of engine against a naive pandas reference; partitions; spill settings."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings

from swftools import table as jt
from swftools.errors import UsageError
from swftools.telemetry import attach, engine, write_table

from .strategies import TELEMETRY_T0, telemetry_cases

GPN = 2


def _write_samples(cols: dict, path: Path) -> Path:
    table = pa.table({"ts": pa.array(cols["ts"], pa.float64()), "node": cols["node"],
                      "gpu_index": pa.array(cols["gpu_index"], pa.int32()),
                      "metric": cols["metric"], "value": pa.array(cols["value"], pa.float64())})
    pq.write_table(table, path, row_group_size=500)
    return path


def _alloc_table(rows) -> pa.Table:
    return pa.table({"job_id": pa.array([r[0] for r in rows], pa.int64()),
                     "node": [r[1] for r in rows],
                     "gpu_index": pa.array([r[2] for r in rows], pa.int32())})


def reference(jobs: pa.Table, alloc, cols, interval_s: int = 60) -> pd.DataFrame:
    """Per-job figures computed the slow, obvious way (loops over jobs, boolean masks; the
    columns are walked as Python lists, which is much quicker than iterating pandas' Arrow-backed
    strings element by element)."""
    s = pd.DataFrame(cols)
    s["gpu_index"] = s["gpu_index"].astype("float")
    j = jobs.to_pandas().set_index("job_id")
    rows_by_job: dict[int, list] = {}
    for job_id, node, gpu in alloc:
        rows_by_job.setdefault(job_id, []).append((node, gpu))
    # Energy increments over consecutive samples of each series.
    e = s[s.metric == "gpu_energy_j"].sort_values(["node", "gpu_index", "ts"]).copy()
    grp = e.groupby(["node", "gpu_index"])
    e["prev_v"], e["prev_ts"] = grp["value"].shift(), grp["ts"].shift()
    e = e[e.prev_v.notna()]
    e["inc"] = np.where(e.value >= e.prev_v, e.value - e.prev_v, e.value)
    # Node intervals, for sharing.
    intervals = [(job_id, node, j.loc[job_id, "start_time"], j.loc[job_id, "finish_time"])
                 for job_id, rows in rows_by_job.items() for node in {n for n, _ in rows}]
    out = []
    for job_id, job in j.iterrows():
        start, end = job.start_time, job.finish_time
        rows = rows_by_job.get(job_id, [])
        gpus = None
        if rows and all(g is not None for _, g in rows):
            gpus = sorted(set(rows))
        elif rows and job.gpus_per_node == GPN:
            gpus = sorted({(n, g) for n, _ in rows for g in range(GPN)})
        r = {"job_id": job_id, "gpus_allocated": job.gpus}
        reasons = []
        shared = any(o != job_id and on == n and os_ < end and start < oe and oe > os_
                     for n in {n for n, _ in rows} for o, on, os_, oe in intervals) \
            if end > start else False
        r["node_shared"] = shared if rows else None
        gpu_columns = ("gpus_with_telemetry", "gpu_samples_expected", "gpu_samples_observed",
                       "telemetry_coverage", "gpu_util_mean_pct", "gpu_util_max_pct",
                       "gpu_idle_fraction", "gpu_sm_active_mean_pct", "gpu_mem_used_mean_mib",
                       "gpu_mem_used_max_mib", "gpu_power_mean_w", "gpu_power_max_w",
                       "gpu_energy_j")
        r.update(dict.fromkeys(gpu_columns))
        if not rows:
            reasons.append("no_allocation")
        elif gpus is None:
            reasons.append("gpu_indices_unknown")
        else:
            inside = s[(s.ts >= start) & (s.ts < end)]
            wanted = {(a, float(b)) for a, b in gpus}
            sel = inside[np.array([(n, g) in wanted for n, g in zip(inside.node.tolist(),
                                                                   inside.gpu_index.tolist())],
                                  dtype=bool)]

            def gauge(metric):
                return sel[sel.metric == metric].value

            util, power = gauge("gpu_util_pct"), gauge("gpu_power_w")
            sm, mem = gauge("gpu_sm_active_pct"), gauge("gpu_mem_used_mib")
            observed = max(len(util), len(power), len(sm), len(mem))
            expected = len(gpus) * (math.ceil(end / interval_s) - math.ceil(start / interval_s))
            r["gpus_with_telemetry"] = sel.groupby(["node", "gpu_index"]).ngroups
            r["gpu_samples_expected"] = expected
            r["gpu_samples_observed"] = observed
            r["telemetry_coverage"] = min(1.0, observed / expected) if expected > 0 else None
            for name, values in (("gpu_util", util), ("gpu_sm_active", sm)):
                r[f"{name}_mean_pct"] = values.mean() if len(values) else None
            r["gpu_util_max_pct"] = util.max() if len(util) else None
            r["gpu_idle_fraction"] = (util <= 0).mean() if len(util) else None
            r["gpu_mem_used_mean_mib"] = mem.mean() if len(mem) else None
            r["gpu_mem_used_max_mib"] = mem.max() if len(mem) else None
            r["gpu_power_mean_w"] = power.mean() if len(power) else None
            r["gpu_power_max_w"] = power.max() if len(power) else None
            mine = np.array([(n, g) in wanted for n, g in zip(e.node.tolist(), e.gpu_index.tolist())],
                            dtype=bool)
            inc = e[(e.ts >= start) & (e.ts < end) & (e.prev_ts >= start) & mine]
            r["gpu_energy_j"] = inc.inc.sum() if len(inc) else None
            if observed == 0:
                reasons.append("no_samples")
        r.update(dict.fromkeys(("node_cpu_util_mean_pct", "node_mem_used_max_gib",
                                "node_power_mean_w")))
        if rows and shared:
            reasons.append("node_shared")
        elif rows:
            nodes = {n for n, _ in rows}
            node = s[s.gpu_index.isna() & s.node.isin(nodes) & (s.ts >= start) & (s.ts < end)]
            npw = node[node.metric == "node_power_w"].value
            cpu = node[node.metric == "node_cpu_util_pct"].value
            nmem = node[node.metric == "node_mem_used_gib"].value
            r["node_power_mean_w"] = npw.mean() if len(npw) else None
            r["node_cpu_util_mean_pct"] = cpu.mean() if len(cpu) else None
            r["node_mem_used_max_gib"] = nmem.max() if len(nmem) else None
            if not len(node):
                reasons.append("no_node_samples")
        r["telemetry_null_reason"] = ";".join(reasons) or None
        out.append(r)
    return pd.DataFrame(out).set_index("job_id")


def _plain(value):
    """None for pandas' and numpy's missing values."""
    missing = value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
    return None if missing else value


def _close(a, b, tol) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return False
    return abs(float(a) - float(b)) <= tol


@settings(max_examples=25, deadline=None)
@given(telemetry_cases())
def test_asof_join_equals_naive_reference(case):
    jobs, alloc, cols = case
    with tempfile.TemporaryDirectory() as tmp:
        path = _write_samples(cols, Path(tmp) / "s.parquet")
        got = attach(jobs, [path], metric_map=None, allocations=_alloc_table(alloc),
                     gpus_per_node=GPN, work_dir=tmp).to_pandas().set_index("job_id")
    want = reference(jobs, alloc, cols)
    tolerances = {"gpu_energy_j": 1e-3, "gpus_with_telemetry": 0, "gpu_samples_expected": 0,
                  "gpu_samples_observed": 0}
    assert sorted(want.columns) == sorted(got.columns)  # every output column is checked
    for job_id, row in want.iterrows():
        for col, value in row.items():
            g = got.loc[job_id, col]
            g = None if g is pd.NA else g
            if col in ("node_shared", "telemetry_null_reason"):
                g, value = _plain(g), _plain(value)
                assert (g if g is None or value is None else type(value)(g)) == value, \
                    (job_id, col, g, value)
                continue
            assert _close(g, value, tolerances.get(col, 2e-6)), (job_id, col, g, value)


@settings(max_examples=15, deadline=None)
@given(telemetry_cases(max_jobs=6))
def test_day_partitions_give_the_same_bytes_as_one_run(case):
    jobs, alloc, cols = case
    with tempfile.TemporaryDirectory() as tmp:
        path = _write_samples(cols, Path(tmp) / "s.parquet")
        outs = []
        for partition in ("day", "none"):
            table = attach(jobs, [path], metric_map=None, allocations=_alloc_table(alloc),
                           gpus_per_node=GPN, partition=partition, work_dir=tmp)
            for suffix in (".csv", ".parquet"):  # Parquet also carries the table metadata
                out = Path(tmp) / f"{partition}{suffix}"
                write_table(table, out)
                outs.append(out.read_bytes())
        assert outs[:2] == outs[2:]


def _tiny(tmp_path: Path):
    t0 = TELEMETRY_T0
    jobs = jt.from_columns({"job_id": [1, 2], "nodes": [1, 1], "gpus_per_node": [1, 1],
                            "gpus": [1, 1], "start_time": [t0, t0 + 600],
                            "finish_time": [t0 + 600, t0 + 1200]})
    cols = {"ts": [], "node": [], "gpu_index": [], "metric": [], "value": []}
    energy = [100.0, 160.0, 220.0, 10.0, 70.0]  # reset after the third sample
    for k, ts in enumerate(range(t0, t0 + 1200, 60)):
        for metric, value in (("gpu_util_pct", 50.0), ("gpu_energy_j", None)):
            v = value if value is not None else (energy[k] if k < len(energy) else 70.0 + 60 * (k - 4))
            cols["ts"].append(float(ts)); cols["node"].append("n0"); cols["gpu_index"].append(0)
            cols["metric"].append(metric); cols["value"].append(v)
    return jobs, _write_samples(cols, tmp_path / "s.parquet"), _alloc_table([(1, "n0", 0), (2, "n0", 0)])


def test_energy_counter_reset_counts_the_new_value(tmp_path):
    jobs, path, alloc = _tiny(tmp_path)
    out = attach(jobs, [path], metric_map=None, allocations=alloc, gpus_per_node=1).to_pylist()
    # Job 1 owns samples 0..9: increments 60, 60, reset -> 10, then 60 each for samples 4..9.
    assert out[0]["gpu_energy_j"] == pytest.approx(60 + 60 + 10 + 6 * 60)
    # Job 2's first increment straddles the boundary (previous sample in job 1): not counted.
    assert out[1]["gpu_energy_j"] == pytest.approx(9 * 60)
    assert out[0]["gpu_samples_expected"] == 10 and out[0]["gpu_samples_observed"] == 10


def test_no_samples_gives_null_not_zero(tmp_path):
    jobs, path, alloc = _tiny(tmp_path)
    i, k = jobs.schema.get_field_index("start_time"), jobs.schema.get_field_index("finish_time")
    later = jobs.set_column(i, "start_time", pa.array([TELEMETRY_T0 + 10**5, TELEMETRY_T0 + 2 * 10**5]))
    later = later.set_column(k, "finish_time", pa.array([TELEMETRY_T0 + 10**5 + 600,
                                                         TELEMETRY_T0 + 2 * 10**5 + 60]))
    row = attach(later, [path], metric_map=None, allocations=alloc, gpus_per_node=1).to_pylist()[0]
    assert row["gpu_samples_observed"] == 0 and row["gpu_samples_expected"] == 10
    assert row["telemetry_coverage"] == 0.0
    assert row["gpu_util_mean_pct"] is None and row["gpu_energy_j"] is None
    assert row["telemetry_null_reason"] == "no_samples"


def test_without_allocations_every_job_is_unattributed(tmp_path):
    jobs, path, _ = _tiny(tmp_path)
    rows = attach(jobs, [path], metric_map=None, gpus_per_node=1).to_pylist()
    assert {r["telemetry_null_reason"] for r in rows} == {"no_allocation"}
    assert all(r["gpus_with_telemetry"] is None and r["node_shared"] is None for r in rows)


def test_work_folder_is_created_in_work_dir_and_removed(tmp_path, monkeypatch):
    seen = {}
    real = engine.connection

    def spy(work_dir=None, **kw):
        ctx = real(work_dir, **kw)

        class Wrapped:
            def __enter__(self):
                con = ctx.__enter__()
                # fetchall: a result left unfinished blocks the connection's next register()
                seen["temp"] = con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0]
                seen["limit"] = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
                return con

            def __exit__(self, *exc):
                return ctx.__exit__(*exc)
        return Wrapped()

    monkeypatch.setattr(engine, "connection", spy)
    import swftools.telemetry as tel
    monkeypatch.setattr(tel.engine, "connection", spy)
    jobs, path, alloc = _tiny(tmp_path)
    work = tmp_path / "out"
    work.mkdir()
    attach(jobs, [path], metric_map=None, allocations=alloc, gpus_per_node=1, work_dir=work,
           memory_limit="300MB")
    assert Path(seen["temp"]).parent.parent == work
    assert seen["limit"].replace(" ", "") in ("286.1MiB", "300.0MB", "286MiB")
    assert list(work.iterdir()) == []


def test_default_memory_limit_is_sixty_percent_of_ram_capped(monkeypatch):
    import os

    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    expected = min(engine.DEFAULT_MEMORY_CAP_MB, 0.6 * total_mb)
    assert int(engine.default_memory_limit()[:-2]) == pytest.approx(expected, abs=1)
    assert engine.DEFAULT_MEMORY_CAP_MB == 2048  # the documented default (README, --help)
    page = os.sysconf("SC_PAGE_SIZE")
    for ram_mb, limit in ((64 * 1024, "2048MB"), (1024, "614MB"), (100, "256MB")):
        monkeypatch.setattr(engine.os, "sysconf", lambda name, r=ram_mb: {  # KeyError: a wrong name
            "SC_PAGE_SIZE": page, "SC_PHYS_PAGES": r * 2**20 // page}[name])
        assert engine.default_memory_limit() == limit, ram_mb


def test_the_default_memory_limit_reaches_duckdb(tmp_path, monkeypatch):
    import duckdb

    def duckdb_shows(limit: str) -> str:
        with duckdb.connect() as con:
            con.execute(f"SET memory_limit = '{limit}'")
            return con.execute("SELECT current_setting('memory_limit')").fetchone()[0]

    monkeypatch.setattr(engine, "DEFAULT_MEMORY_CAP_MB", 300)
    with engine.connection(tmp_path) as con:
        shown = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    assert shown == duckdb_shows("300MB") != duckdb_shows("2048MB")
    with engine.connection(tmp_path, memory_limit="500MB") as con:  # an explicit one wins
        assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == (
            duckdb_shows("500MB"))


def test_bad_options_are_usage_errors(tmp_path):
    jobs, path, alloc = _tiny(tmp_path)
    with pytest.raises(UsageError, match="partitioning"):
        attach(jobs, [path], metric_map=None, allocations=alloc, gpus_per_node=1, partition="week")
    with pytest.raises(UsageError, match="interval_s"):
        attach(jobs, [path], metric_map=None, allocations=alloc, gpus_per_node=1, interval_s=0)
    with pytest.raises(UsageError, match="GPUs per node"):
        attach(jobs.replace_schema_metadata(None), [path], metric_map=None, allocations=alloc)


def test_partition_sql_uses_asof_not_a_range_join():
    sql = engine.partition_sql(0, 86400)
    assert sql.count("ASOF JOIN") == 2 and "BETWEEN" not in sql


def test_parquet_long_tables_are_staged_one_day_at_a_time(tmp_path, monkeypatch):
    """Parquet long tables with day partitions run as the Dask engine's day tasks, here in
    process (memory bounded by a day); other inputs, or partition none, are staged whole."""
    import pyarrow.csv as pacsv

    from swftools.telemetry import dask_engine

    calls = []
    real = dask_engine.day_partials

    def spy(task, *args):
        calls.append((task.lo, task.hi, task.work_dir))
        return real(task, *args)

    monkeypatch.setattr(dask_engine, "day_partials", spy)
    jobs, path, alloc = _tiny(tmp_path)
    common = dict(metric_map=None, allocations=alloc, gpus_per_node=1, work_dir=tmp_path)
    days = attach(jobs, [path], **common)
    assert calls and all(w == str(tmp_path) for _, _, w in calls)
    assert [hi - lo for lo, hi, _ in calls] == [engine.DAY_S] * len(calls)
    calls.clear()
    whole = attach(jobs, [path], partition="none", **common)
    csv = tmp_path / "s.csv"
    pacsv.write_csv(pq.read_table(path), csv)
    from_csv = attach(jobs, [csv], **common)
    assert not calls
    assert days.equals(whole) and days.equals(from_csv)


# --- issue 30: interval bounds, the idle threshold, day partitions, the connection ------------

def _gpu_samples(tmp_path: Path, samples, name="s.csv") -> Path:
    """A long CSV of (seconds after TELEMETRY_T0, metric, value) samples of GPU n0/0."""
    import pyarrow.csv as pacsv

    n = len(samples)
    table = pa.table({"ts": pa.array([float(TELEMETRY_T0 + s[0]) for s in samples]),
                      "node": ["n0"] * n, "gpu_index": pa.array([0] * n, pa.int32()),
                      "metric": [s[1] for s in samples], "value": pa.array([float(s[2]) for s in samples])})
    path = tmp_path / name
    pacsv.write_csv(table, path)
    return path


def _one_gpu_jobs(spans):
    t0 = TELEMETRY_T0
    n = len(spans)
    return jt.from_columns({"job_id": list(range(1, n + 1)), "nodes": [1] * n, "gpus_per_node": [1] * n,
                            "gpus": [1] * n, "start_time": [t0 + a for a, _ in spans],
                            "finish_time": [t0 + b for _, b in spans]})


def test_a_sample_at_the_start_belongs_to_the_job_at_the_finish_to_the_next(tmp_path):
    jobs = _one_gpu_jobs([(0, 120), (120, 240)])
    path = _gpu_samples(tmp_path, [(0, "gpu_util_pct", 10), (60, "gpu_util_pct", 20),
                                   (120, "gpu_util_pct", 90), (180, "gpu_util_pct", 70),
                                   (240, "gpu_util_pct", 5),
                                   (0, "gpu_energy_j", 900), (60, "gpu_energy_j", 1000),
                                   (120, "gpu_energy_j", 1100),
                                   (180, "gpu_energy_j", 1300), (240, "gpu_energy_j", 1600)])
    alloc = _alloc_table([(1, "n0", 0), (2, "n0", 0)])
    for partition in ("day", "none"):
        first, second = attach(jobs, [path], metric_map=None, allocations=alloc, gpus_per_node=1,
                               partition=partition).to_pylist()
        assert (first["gpu_util_mean_pct"], first["gpu_util_max_pct"]) == (15.0, 20.0)
        assert (second["gpu_util_mean_pct"], second["gpu_util_max_pct"]) == (80.0, 90.0)
        assert first["gpu_samples_observed"] == second["gpu_samples_observed"] == 2
        # an increment counts where its previous sample is inside the job too (at its start
        # included): 1000 - 900 for job 1; for job 2 1300 - 1100, not the increment into it
        assert (first["gpu_energy_j"], second["gpu_energy_j"]) == (100.0, 200.0)


@pytest.mark.parametrize("threshold,idle", [(0.0, 0.25), (5.0, 0.5), (4.999, 0.25), (20.0, 1.0)])
def test_idle_fraction_counts_utilization_at_or_below_the_threshold(tmp_path, threshold, idle):
    jobs = _one_gpu_jobs([(0, 240)])
    path = _gpu_samples(tmp_path, [(0, "gpu_util_pct", 0), (60, "gpu_util_pct", 5),
                                   (120, "gpu_util_pct", 10), (180, "gpu_util_pct", 20),
                                   (0, "gpu_power_w", 0), (60, "gpu_power_w", 0)])
    for partition in ("day", "none"):
        row = attach(jobs, [path], metric_map=None, allocations=_alloc_table([(1, "n0", 0)]),
                     gpus_per_node=1, idle_threshold_pct=threshold, partition=partition).to_pylist()[0]
        assert row["gpu_idle_fraction"] == idle
        assert row["gpu_power_mean_w"] == 0.0  # power at 0 W is not idle utilization


def test_day_partitions_follow_the_allocations_and_report_progress(tmp_path):
    day = engine.DAY_S
    midnight = (TELEMETRY_T0 // day + 1) * day - TELEMETRY_T0
    # job 1 ends exactly at midnight, job 2 spans the next midnight, job 3 runs no time at all
    jobs = _one_gpu_jobs([(midnight - 600, midnight), (midnight + 60, midnight + day + 60),
                          (midnight + 3 * day, midnight + 3 * day)])
    path = _gpu_samples(tmp_path, [(midnight - 60, "gpu_util_pct", 40), (midnight + 120, "gpu_util_pct", 60),
                                   (midnight + day, "gpu_util_pct", 60)])
    alloc = _alloc_table([(1, "n0", 0), (2, "n0", 0), (3, "n0", 0)])
    calls = []
    rows = attach(jobs, [path], metric_map=None, allocations=alloc, gpus_per_node=1,
                  progress=lambda done, total: calls.append((done, total))).to_pylist()
    assert calls == [(1, 3), (2, 3), (3, 3)]  # the day of job 1, then the two days of job 2
    assert [r["gpu_util_mean_pct"] for r in rows] == [40.0, 60.0, None]
    # each sample counted in its own day only
    assert [r["gpu_samples_observed"] for r in rows[:2]] == [1, 2]
    for partition in ("day", "none"):  # one file given twice: its samples count once
        twice = attach(jobs, [path, path], metric_map=None, allocations=alloc, gpus_per_node=1,
                       partition=partition).to_pylist()
        assert [r["gpu_samples_observed"] for r in twice[:2]] == [1, 2]
    calls.clear()
    attach(jobs, [path], metric_map=None, allocations=alloc, gpus_per_node=1, partition="none",
           progress=lambda done, total: calls.append((done, total)))
    assert calls == []
    with engine.connection(tmp_path) as con:
        con.execute("CREATE TABLE gpu_alloc (start_s BIGINT, end_s BIGINT)")
        con.execute("CREATE TABLE node_excl (start_s BIGINT, end_s BIGINT)")
        assert engine.day_partitions(con) == []
        assert engine.run_partitions(con) == 0  # day partitions by default: none here
        con.execute(f"INSERT INTO node_excl VALUES ({day + 5}, {day + 5}), ({2 * day}, {3 * day})")
        assert engine.day_partitions(con) == [(2 * day, 3 * day)]
        con.execute(f"INSERT INTO gpu_alloc VALUES ({day - 1}, {day})")
        assert engine.day_partitions(con) == [(0, day), (day, 2 * day), (2 * day, 3 * day)]
        con.execute(f"INSERT INTO gpu_alloc VALUES ({3 * day - 5}, {3 * day + 1})")
        assert engine.day_partitions(con)[-1] == (3 * day, 4 * day)  # one second of a day counts


def test_partition_allocations_are_those_meeting_the_partition(tmp_path):
    day = engine.DAY_S
    with engine.connection(tmp_path) as con:
        for table in ("gpu_alloc", "node_excl"):
            con.execute(f"CREATE TABLE {table} (alloc_id BIGINT, start_s BIGINT, end_s BIGINT)")
        con.execute(f"""INSERT INTO gpu_alloc VALUES (1, 0, {day}), (2, {day - 1}, {day + 1}),
            (3, {2 * day}, {3 * day}), (4, {day + 5}, {day + 5}), (5, {2 * day - 1}, {2 * day})""")
        con.execute(f"INSERT INTO node_excl VALUES (6, {day}, {2 * day}), (7, 0, {day})")
        gpu, node = engine.partition_allocations(con, day, 2 * day)
        assert gpu.column("alloc_id").to_pylist() == [2, 5]
        assert node.column("alloc_id").to_pylist() == [6]


def test_unknown_partitioning_names_the_choices(tmp_path):
    with engine.connection(tmp_path) as con, pytest.raises(UsageError) as info:
        engine.run_partitions(con, "hour")
    assert str(info.value) == "unknown partitioning 'hour' (choose from day, none)"


def test_connection_folder_threads_and_errors(tmp_path):
    with pytest.raises(UsageError, match="work directory does not exist"), engine.connection(tmp_path / "missing"):
        pass
    with engine.connection(tmp_path, threads=1) as con:
        assert con.execute("SELECT current_setting('threads')").fetchone()[0] == 1
        (folder,) = tmp_path.iterdir()
        assert folder.name.startswith(".swftools-telemetry.") and folder.name.endswith(".tmp")
        assert (folder / "work.duckdb").exists()
        assert con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()[0] is False
    with engine.connection(tmp_path, in_memory=True) as con:
        (folder,) = tmp_path.iterdir()
        assert not (folder / "work.duckdb").exists()
        assert Path(con.execute("SELECT current_setting('temp_directory')").fetchone()[0]) == folder / "spill"
    with pytest.raises(UsageError, match="^DuckDB failed: .*no_such_table"), engine.connection(tmp_path) as con:
        con.execute("SELECT * FROM no_such_table")
    assert list(tmp_path.iterdir()) == []


def test_output_keeps_the_job_table_order(tmp_path):
    jobs = _one_gpu_jobs([(120, 240), (0, 120)])
    jobs = jobs.set_column(jobs.schema.get_field_index("job_id"), "job_id", pa.array([9, 4]))
    path = _gpu_samples(tmp_path, [(0, "gpu_power_w", 0.25), (60, "gpu_power_w", 0.5),
                                   (120, "gpu_power_w", 7)])
    rows = attach(jobs, [path], metric_map=None, allocations=_alloc_table([(9, "n0", 0), (4, "n0", 0)]),
                  gpus_per_node=1).to_pylist()
    assert [(r["job_id"], r["gpu_power_mean_w"]) for r in rows] == [(9, 7.0), (4, 0.375)]


def _partials_tables(con, rows):
    """``samples`` (node, gpu_index, metric, ts, value, series, src, prev_ts) of ``rows``, one
    GPU allocation (id 1: n0 GPU 0 over [0, 120)) and one exclusive node (id 2: n1 over [0, 120))."""
    con.execute("CREATE TABLE samples (node VARCHAR, gpu_index INTEGER, metric VARCHAR, ts DOUBLE, "
                "value DOUBLE, series INTEGER, src INTEGER, prev_ts DOUBLE)")
    con.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, NULL)", rows)
    con.execute("CREATE TABLE gpu_alloc AS SELECT 1::BIGINT AS alloc_id, 'n0' AS node, "
                "0::INTEGER AS gpu_index, 0.0 AS start_s, 120.0 AS end_s")
    con.execute("CREATE TABLE node_excl AS SELECT 2::BIGINT AS alloc_id, 'n1' AS node, "
                "0.0 AS start_s, 120.0 AS end_s")


# GPU 0 of n0: two series at ts 0 (series 0 reads 0.5, series 1 reads 0.0), one value 0.0 at
# ts 60; node n1 (no GPU): 3.0 at ts 30 in two files (src 0 and 1: the same sample twice).
PARTIAL_ROWS = [("n0", 0, "gpu_util_pct", 0.0, 0.5, 0, 0), ("n0", 0, "gpu_util_pct", 0.0, 0.0, 1, 0),
                ("n0", 0, "gpu_util_pct", 60.0, 0.0, 0, 0),
                ("n1", None, "node_cpu_util_pct", 30.0, 3.0, 0, 1),
                ("n1", None, "node_cpu_util_pct", 30.0, 3.0, 0, 0)]
# (alloc_id, metric, n, n_low, sum_micro, vmin, vmax), worked by hand: deduplicated, the first
# series wins at ts 0 (0.5), and only 0.0 is at or below the default idle threshold of 0
DEDUPED = [(1, "gpu_util_pct", 2, 1, 500_000, 0.0, 0.5), (2, "node_cpu_util_pct", 1, 0, 3_000_000, 3.0, 3.0)]
# every row as it is: three GPU samples (two of them 0.0), the node's sample twice
AS_IS = [(1, "gpu_util_pct", 3, 2, 500_000, 0.0, 0.5), (2, "node_cpu_util_pct", 2, 0, 6_000_000, 3.0, 3.0)]


def _partials(con):
    return [tuple(r) for r in con.execute("SELECT * FROM partials ORDER BY alloc_id").fetchall()]


def test_partial_defaults_deduplicate_and_count_only_zero_as_idle(tmp_path):
    """The defaults of the per-partition steps, read literally: idle means <= 0, and one value
    per (node, gpu, metric, ts) is kept (the first series)."""
    with engine.connection(tmp_path, in_memory=True) as con:
        _partials_tables(con, PARTIAL_ROWS)
        assert engine.run_partitions(con) == 1  # one UTC day holds both allocations
        assert _partials(con) == DEDUPED
        con.execute(engine.PARTIALS_DDL)
        engine.compute_partition(con, None, None)
        assert _partials(con) == DEDUPED
        con.execute(engine.PARTIALS_DDL)
        con.execute("INSERT INTO partials " + engine.partition_sql(None, None))
        assert _partials(con) == DEDUPED
        assert engine.run_partitions(con, "none") == 1
        assert _partials(con) == DEDUPED


@pytest.mark.parametrize("partition", ["day", "none"])
def test_without_dedupe_every_sample_row_counts(tmp_path, partition):
    """``dedupe=False`` (a long table, taken as it is): repeated rows all count."""
    with engine.connection(tmp_path, in_memory=True) as con:
        _partials_tables(con, PARTIAL_ROWS)
        assert engine.run_partitions(con, partition, dedupe=False) == 1
        assert _partials(con) == AS_IS
        con.execute(engine.PARTIALS_DDL)
        engine.compute_partition(con, 0, engine.DAY_S, 0.0, False)
        assert _partials(con) == AS_IS
        con.execute(engine.PARTIALS_DDL)
        con.execute("INSERT INTO partials " + engine.partition_sql(0, engine.DAY_S, dedupe=False))
        assert _partials(con) == AS_IS
