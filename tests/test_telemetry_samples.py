"""Staging: several files, overlapping chunks de-duplicated (first file wins), derived metrics."""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from swftools import table as jt
from swftools.errors import InputError
from swftools.telemetry import attach
from swftools.telemetry.metric_map import MetricMap, load_metric_map
from swftools.telemetry.samples import (
    boundary_samples,
    expand_paths,
    input_format,
    lag_boundaries,
    long_body,
    metric_roles,
    read_samples,
    stage,
    stage_partition,
)

T0 = 1_700_006_400


def _jobs():
    return jt.from_columns({"job_id": [1], "nodes": [1], "gpus_per_node": [1], "gpus": [1],
                            "start_time": [T0], "finish_time": [T0 + 600]})


def _alloc():
    return pa.table({"job_id": [1], "node": ["g1"], "gpu_index": pa.array([0], pa.int32())})


def _chunk(path, minutes, value=lambda m: m):
    values = [[T0 + 60 * m, str(value(m))] for m in minutes]
    doc = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "Hostname": "g1"},
         "values": values}]}}
    path.write_text(json.dumps(doc))
    return path


def test_overlapping_json_chunks_are_counted_once_and_the_first_file_wins(tmp_path):
    a = _chunk(tmp_path / "a.json", range(0, 6))
    b = _chunk(tmp_path / "b.json", range(5, 10), value=lambda m: 50 + m)
    row = attach(_jobs(), [a, b], metric_map="dcgm", allocations=_alloc(), gpus_per_node=1
                 ).to_pylist()[0]
    assert row["gpu_samples_observed"] == 10 and row["telemetry_coverage"] == 1.0
    assert row["gpu_util_max_pct"] == 59.0
    assert row["gpu_util_mean_pct"] == pytest.approx((sum(range(6)) + sum(50 + m for m in range(6, 10))) / 10)
    swapped = attach(_jobs(), [b, a], metric_map="dcgm", allocations=_alloc(), gpus_per_node=1
                     ).to_pylist()[0]
    assert swapped["gpu_util_mean_pct"] == pytest.approx((sum(range(5)) + sum(50 + m for m in range(5, 10))) / 10)


def _long(path, minutes, value):
    n = len(minutes)
    pq.write_table(pa.table({"ts": pa.array([T0 + 60.0 * m for m in minutes]), "node": ["g1"] * n,
                             "gpu_index": pa.array([0] * n, pa.int32()),
                             "metric": ["gpu_util_pct"] * n, "value": [float(value)] * n}), path)
    return path


def test_overlapping_long_tables_and_mixed_inputs_are_deduplicated(tmp_path):
    a = _long(tmp_path / "a.parquet", range(0, 7), 10)
    b = _long(tmp_path / "b.parquet", range(3, 10), 30)
    c = _chunk(tmp_path / "c.json", range(8, 10), value=lambda m: 90)
    row = attach(_jobs(), [a, b, c], metric_map=["dcgm"], allocations=_alloc(), gpus_per_node=1
                 ).to_pylist()[0]
    assert row["gpu_samples_observed"] == 10
    assert row["gpu_util_mean_pct"] == pytest.approx((7 * 10 + 3 * 30) / 10)


def test_derived_node_metrics_from_node_exporter_counters(tmp_path):
    def series(labels, values, name):
        return {"metric": {"__name__": name, "instance": "g1:9100", **labels},
                "values": [[T0 + 60 * i, str(v)] for i, v in enumerate(values)]}
    result = [
        series({"cpu": "0", "mode": "idle"}, [100, 130, 145], "node_cpu_seconds_total"),
        series({"cpu": "0", "mode": "user"}, [10, 40, 85], "node_cpu_seconds_total"),
        series({}, [64 * 2**30] * 3, "node_memory_MemTotal_bytes"),
        series({}, [60 * 2**30, 50 * 2**30, 54 * 2**30], "node_memory_MemAvailable_bytes"),
    ]
    path = tmp_path / "node.json"
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    alloc = pa.table({"job_id": [1], "node": ["g1"], "gpu_index": pa.array([None], pa.int32())})
    row = attach(_jobs(), [path], metric_map="node_exporter", allocations=alloc, gpus_per_node=1
                 ).to_pylist()[0]
    # Increments: idle 30 of 60 s, then 15 of 60 s -> 50 % and 75 % busy.
    assert row["node_cpu_util_mean_pct"] == pytest.approx(62.5)
    assert row["node_mem_used_max_gib"] == pytest.approx(14.0)
    assert row["node_shared"] is False


def test_input_formats_and_paths(tmp_path):
    assert input_format(tmp_path / "x.json.gz") == "prometheus-json"
    assert input_format(tmp_path / "x.parquet") == "long"
    assert input_format(tmp_path / "x.om") == "text"
    assert input_format(tmp_path / "X.CSV.GZ") == input_format(tmp_path / "x.csv") == "long"
    assert input_format(tmp_path / "x.JSON") == "prometheus-json"
    (tmp_path / "d").mkdir()
    for name in ("b.json", "a.json", ".hidden"):
        (tmp_path / "d" / name).write_text("{}")
    assert [p.name for p in expand_paths([tmp_path / "d"])] == ["a.json", "b.json"]
    with pytest.raises(InputError, match="no such sample file or directory$") as info:
        expand_paths([tmp_path / "d", tmp_path / "nope"])
    assert info.value.path == str(tmp_path / "nope")
    (tmp_path / "e").mkdir()
    (tmp_path / "f").mkdir()
    with pytest.raises(InputError, match="no sample files given$") as info:
        expand_paths([tmp_path / "e", tmp_path / "f"])
    assert info.value.path == f"{tmp_path / 'e'}, {tmp_path / 'f'}"
    with pytest.raises(InputError, match="no sample files given$") as info:
        expand_paths([])
    assert info.value.path == "<samples>"


# --- issue 30: the staged ``samples`` view itself, for each input kind and derivation -----------

def _matrix(path, result):
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    return path


def _series(name, labels, values, start=0):
    """One exported series, a sample a minute from ``T0 + 60 * start`` (None: no sample)."""
    return {"metric": {"__name__": name, **labels},
            "values": [[T0 + 60 * (start + i), str(v)] for i, v in enumerate(values) if v is not None]}


def _staged(paths, maps, **options):
    """``(sample set, samples rows)``: rows as (metric, node, gpu, minute, value, prev minute, src)."""
    con = duckdb.connect()
    sample_set = read_samples(paths, maps if isinstance(maps, MetricMap) else load_metric_map(maps),
                              con, **options)
    stage(con, sample_set)
    rows = con.execute(
        "SELECT metric, node, gpu_index, (ts - $t) / 60, value, (prev_ts - $t) / 60, src "
        "FROM samples ORDER BY ALL", {"t": T0}).fetchall()
    return sample_set, rows


def test_node_exporter_counters_are_summed_over_cpus_and_memory_used_never_negative(tmp_path):
    node = {"instance": "g1:9100"}
    path = _matrix(tmp_path / "node.json", [
        _series("node_cpu_seconds_total", {**node, "cpu": "0", "mode": "idle"}, [100, 130, 145, 150]),
        _series("node_cpu_seconds_total", {**node, "cpu": "1", "mode": "idle"}, [100, 100, 100, 100]),
        _series("node_cpu_seconds_total", {**node, "cpu": "0", "mode": "user"}, [10, 40, 85, 80]),
        _series("node_memory_MemTotal_bytes", node, [64 * 2**30] * 3),
        _series("node_memory_MemAvailable_bytes", node, [60 * 2**30, 70 * 2**30, 54 * 2**30]),
    ])
    sample_set, rows = _staged([path], "node_exporter")
    # all CPUs: idle 200, 230, 245, 250 of totals 210, 270, 330, 330: shares 50 %, 75 %; the
    # last minute has no CPU time (d_total 0) and gives no share
    assert rows == [("node_cpu_util_pct", "g1", None, 1.0, 50.0, None, 0),
                    ("node_cpu_util_pct", "g1", None, 2.0, 75.0, None, 0),
                    ("node_mem_used_gib", "g1", None, 0.0, 4.0, None, 0),
                    ("node_mem_used_gib", "g1", None, 1.0, 0.0, None, 0),
                    ("node_mem_used_gib", "g1", None, 2.0, 10.0, None, 0)]
    assert sample_set.metrics == {"node_cpu_util_pct", "node_mem_used_gib"}
    assert not sample_set.overlapping


def test_cpu_share_needs_both_counters_and_a_sane_increment(tmp_path):
    node = {"instance": "g1:9100"}
    path = _matrix(tmp_path / "node.json", [
        # idle missing at minute 1, idle ahead of the total at minute 3, idle falling at 4
        _series("node_cpu_seconds_total", {**node, "cpu": "0", "mode": "idle"}, [0, None, 30, 200, 100, 130]),
        _series("node_cpu_seconds_total", {**node, "cpu": "0", "mode": "user"}, [0, 10, 30, 0, 230, 260]),
    ])
    _, rows = _staged([path], "node_exporter")
    # totals 0, (10), 60, 200, 330, 390; idle 0, -, 30, 200, 100, 130: increments (30, 60),
    # (170, 140), (-100, 130), (30, 60)
    assert rows == [("node_cpu_util_pct", "g1", None, 2.0, 50.0, None, 0),
                    ("node_cpu_util_pct", "g1", None, 5.0, 50.0, None, 0)]


def test_energy_counter_increments_carry_the_previous_sample_time(tmp_path):
    gpu = {"Hostname": "g1"}
    path = _matrix(tmp_path / "dcgm.json", [
        # mJ: 60 J a minute, a reset to 5 J after the third sample, a sample missing at minute 6
        _series("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", {**gpu, "gpu": "0"},
                [1000, 61000, 121000, 5000, 65000, None, 185000]),
        _series("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", {**gpu, "gpu": "1"}, [7000, 7000], start=2),
    ])
    sample_set, rows = _staged([path], "dcgm")
    assert rows == [("gpu_energy_j", "g1", 0, 1.0, 60.0, 0.0, 0),
                    ("gpu_energy_j", "g1", 0, 2.0, 60.0, 1.0, 0),
                    ("gpu_energy_j", "g1", 0, 3.0, 5.0, 2.0, 0),
                    ("gpu_energy_j", "g1", 0, 4.0, 60.0, 3.0, 0),
                    ("gpu_energy_j", "g1", 0, 6.0, 120.0, 4.0, 0),
                    ("gpu_energy_j", "g1", 1, 3.0, 0.0, 2.0, 0)]
    assert sample_set.metrics == {"gpu_energy_j"}


def test_text_gauges_keep_the_first_series_in_label_order_then_the_first_file(tmp_path):
    def util(pod, values, start=0):
        return _series("DCGM_FI_DEV_GPU_UTIL", {"Hostname": "g1", "gpu": "0", "pod": pod}, values, start)
    a = _matrix(tmp_path / "a.json", [util("b", [20, 21, 22]), util("a", [10, 11])])
    b = _matrix(tmp_path / "b.json", [util("0", [90]), util("c", [30, 31, 32, 33])])
    sample_set, rows = _staged([b, a], "dcgm")
    # minute 0: pod "0" (file 0) sorts first; minute 1: pod "a" (file 1) before "b" and "c";
    # minute 2: "b" (file 1) before "c" (file 0); minute 3: "c" alone
    assert rows == [("gpu_util_pct", "g1", 0, 0.0, 90.0, None, 0),
                    ("gpu_util_pct", "g1", 0, 1.0, 11.0, None, 0),
                    ("gpu_util_pct", "g1", 0, 2.0, 22.0, None, 0),
                    ("gpu_util_pct", "g1", 0, 3.0, 33.0, None, 0)]
    assert sample_set.metrics == {"gpu_util_pct"} and not sample_set.overlapping


SITE_MAP = {"name": "site", "node_label": "host", "ignore": ["fan_rpm", "gpu_sm_active_pct"], "metrics": [
    {"source": "gpu_mem_used_mib", "match": {"slot": "a"}, "canonical": "gpu_mem_used_mib",
     "type": "gauge", "unit": "MiB", "scale": 1},
    {"source": "POWER_MW", "canonical": "gpu_power_w", "type": "gauge", "unit": "mW", "scale": 0.001},
    {"source": "PSU_W", "canonical": "node_power_w", "type": "gauge", "unit": "W", "scale": 1,
     "combine": "sum"},
    {"source": "ENERGY_KJ", "canonical": "gpu_energy_j", "type": "counter", "unit": "kJ", "scale": 1000},
    {"source": "CPU_S", "match": {"mode": "idle"}, "canonical": "node_cpu_idle_s", "type": "counter",
     "unit": "s", "scale": 1}]}


def _site_map(tmp_path):
    path = tmp_path / "site.json"
    path.write_text(json.dumps(SITE_MAP))
    return load_metric_map(path)


def _long_rows(path, rows):
    """A long table (``.csv`` or ``.parquet``) of (minute, node, gpu, metric, value) rows."""
    cols = {"ts": pa.array([T0 + 60.0 * r[0] for r in rows]), "node": [r[1] for r in rows],
            "gpu_index": pa.array([r[2] for r in rows], pa.int32()),
            "metric": [r[3] for r in rows], "value": pa.array([float(r[4]) for r in rows])}
    if path.suffix == ".parquet":
        pq.write_table(pa.table(cols), path, row_group_size=2)
    else:
        import pyarrow.csv as pacsv

        pacsv.write_csv(pa.table(cols), path)
    return path


def test_long_tables_are_mapped_scaled_and_ignored_names_dropped(tmp_path):
    mm = _site_map(tmp_path)
    # row groups of two, out of ts order: staged through a sorted copy
    a = _long_rows(tmp_path / "a.parquet", [
        (3, "g1", 0, "POWER_MW", 250_000), (2, "g1", 0, "POWER_MW", 200_000),
        (1, "g1", 0, "gpu_util_pct", 40), (0, "g1", 0, "fan_rpm", 900),
        (0, "g1", 0, "ENERGY_KJ", 1.5), (2, "g1", 0, "ENERGY_KJ", 1.75),
        # canonical names the map ignores, or knows only with labels a long table cannot carry
        (1, "g1", 0, "gpu_sm_active_pct", 99), (1, "g1", 0, "gpu_mem_used_mib", 5)])
    b = _long_rows(tmp_path / "b.csv", [(1, "g1", None, "PSU_W", 600), (1, "g1", None, "node_power_w", 5)])
    sample_set, rows = _staged([a, b], mm)
    assert rows == [("gpu_energy_j", "g1", 0, 2.0, 250.0, 0.0, 0),
                    ("gpu_power_w", "g1", 0, 2.0, 200.0, None, 0),
                    ("gpu_power_w", "g1", 0, 3.0, 250.0, None, 0),
                    ("gpu_util_pct", "g1", 0, 1.0, 40.0, None, 0),
                    # a long table is one series: its node power is the first of the instant's
                    # values in file order, not a sum (summing is across exported series)
                    ("node_power_w", "g1", None, 1.0, 5.0, None, 0)]
    assert sample_set.metrics == {"gpu_energy_j", "gpu_power_w", "gpu_util_pct", "node_power_w"}
    assert sample_set.overlapping  # two sources: the engine resolves duplicates per partition
    assert [(s["file"], s["format"]) for s in sample_set.describe_sources()] == [
        ("a.parquet", "long-parquet"), ("b.csv", "long-csv")]


def test_text_and_long_inputs_together(tmp_path):
    mm = _site_map(tmp_path)
    text = _matrix(tmp_path / "psu.json", [
        _series("PSU_W", {"host": "g1", "psu": "1"}, [300, 310]),
        _series("PSU_W", {"host": "g1", "psu": "2"}, [200, 220]),
        _series("CPU_S", {"host": "g1", "mode": "idle"}, [5, 6]),
        _series("fan_rpm", {"host": "g1"}, [900]),
        _series("POWER_MW", {"host": "g1", "gpu": "0"}, [100_000])])
    long = _long_rows(tmp_path / "l.csv", [(0, "g1", 1, "gpu_util_pct", 7), (0, "g2", 1, "gpu_util_pct", 8)])
    sample_set, rows = _staged([text, long], mm)
    # the two supplies' series are summed (combine: sum); idle CPU time alone derives nothing
    assert rows == [("gpu_power_w", "g1", 0, 0.0, 100.0, None, 0),
                    ("gpu_util_pct", "g1", 1, 0.0, 7.0, None, 1),
                    ("gpu_util_pct", "g2", 1, 0.0, 8.0, None, 1),
                    ("node_power_w", "g1", None, 0.0, 500.0, None, 0),
                    ("node_power_w", "g1", None, 1.0, 530.0, None, 0)]
    assert sample_set.metrics == {"gpu_power_w", "gpu_util_pct", "node_power_w"}
    assert sample_set.overlapping
    alone, _ = _staged([long, long], mm)
    assert alone.metrics == {"gpu_util_pct"} and alone.overlapping
    assert not _staged([long], mm)[0].overlapping
    one = _matrix(tmp_path / "one.json", [_series("POWER_MW", {"host": "g1", "gpu": "0"}, [1000])])
    assert _staged([one, long], mm)[0].overlapping  # one text sample and a long table


def test_metric_roles():
    staged, direct, combine_sum = metric_roles(load_metric_map(["node_exporter", "dcgm"]))
    assert staged == ["gpu_energy_j", "node_cpu_idle_s", "node_cpu_total_s", "node_mem_available_gib",
                      "node_mem_total_gib"]
    assert direct == ["gpu_mem_used_mib", "gpu_power_w", "gpu_sm_active_pct", "gpu_util_pct",
                      "node_cpu_util_pct", "node_mem_used_gib", "node_power_w"]
    assert combine_sum == ["node_cpu_idle_s", "node_cpu_total_s"]


def test_read_samples_options(tmp_path):
    path = _matrix(tmp_path / "export.txt", [_series("DCGM_FI_DEV_GPU_UTIL", {"Hostname": "g1", "gpu": "0"}, [5])])
    mm = load_metric_map("dcgm")
    with pytest.raises(InputError, match="unknown input format 'csv'") as info:
        read_samples([path], mm, duckdb.connect(), fmt="csv")
    assert (info.value.path, info.value.expected) == (
        "<samples>", "auto, prometheus-json, prometheus-text, openmetrics, long")
    with pytest.raises(InputError, match="unknown sampling 'hourly'") as info:
        read_samples([path], mm, duckdb.connect(), sampling="hourly")
    assert (info.value.path, info.value.expected) == ("<samples>", "auto, raw, resampled")
    # a name that says text, a format that says JSON: the format wins
    for sampling in ("raw", "resampled"):
        sample_set = read_samples([path], mm, duckdb.connect(), fmt="prometheus-json", sampling=sampling)
        assert sample_set.buffer_rows.num_rows == 1
        assert [s["sampling"] for s in sample_set.describe_sources()] == [sampling]
    expo = tmp_path / "metrics.json"  # exposition text under a JSON name, read as told
    expo.write_text(f'DCGM_FI_DEV_GPU_UTIL{{Hostname="g1",gpu="0"}} 5 {T0 * 1000}\n')
    for sampling in ("auto", "resampled"):
        sample_set = read_samples([expo], mm, duckdb.connect(), fmt="prometheus-text",
                                  sampling=sampling)
        assert sample_set.buffer_rows.column("value").to_pylist() == [5.0]
        assert [s["sampling"] for s in sample_set.describe_sources()] == [
            "raw" if sampling == "auto" else sampling]
        assert sample_set.describe_sources()[0]["format"] == "prometheus-text"
    prom = tmp_path / "metrics.prom"  # a text name: the exposition format is told by content
    prom.write_text(expo.read_text())
    sample_set = read_samples([prom], mm, duckdb.connect())
    assert sample_set.buffer_rows.column("value").to_pylist() == [5.0]
    assert sample_set.describe_sources()[0]["format"] == "prometheus-text"
    # told OpenMetrics, the same text is refused (no '# EOF', milliseconds)
    with pytest.raises(InputError, match="looks like milliseconds; expected UTC epoch seconds"):
        read_samples([expo], mm, duckdb.connect(), fmt="openmetrics")


def _view(con, name="samples"):
    return sorted(con.execute(f"SELECT metric, node, gpu_index, ts, value, prev_ts FROM {name}").fetchall(),
                  key=repr)


def test_day_staging_plus_boundaries_equals_staging_the_whole_range(tmp_path):
    """What the Dask engine does: each UTC day staged alone, the lags that cross midnight
    derived afterwards from the days' first and last samples; together, the whole-range view."""
    day = 1440  # minutes
    d0 = (T0 // 86_400 + 1) * 86_400  # a midnight, T0 + 600 minutes
    m0 = (d0 - T0) // 60
    rows = []
    for k, minute in enumerate((m0 - 2, m0 - 1, m0 + 1, m0 + 3)):  # energy across midnight
        rows.append((minute, "g1", 0, "gpu_energy_j", [100, 160, 30, 90][k]))
    for minute, value in ((m0 - 5, 10), (m0 + day + 7, 70)):  # a day without samples between
        rows.append((minute, "g1", 1, "gpu_energy_j", value))
    # CPU counters: the last instant of day 0 with both is m0 - 1 (idle alone at m0 - 0.5 h)
    for minute, idle, total in ((m0 - 3, 0, 0), (m0 - 1, 30, 60), (m0 + 2, 60, 120), (m0 + 4, 60, 180)):
        rows += [(minute, "g1", None, "node_cpu_idle_s", idle), (minute, "g1", None, "node_cpu_total_s", total)]
    rows += [(m0 - 30, "g1", None, "node_cpu_idle_s", 1), (m0 + day + 1, "g1", None, "node_cpu_total_s", 999)]
    rows += [(m0 - 1, "g2", None, "node_mem_total_gib", 8), (m0 - 1, "g2", None, "node_mem_available_gib", 2),
             (m0 + 1, "g2", None, "node_mem_total_gib", 8), (m0 + 1, "g2", None, "node_mem_available_gib", 3),
             (m0 + 1, "g1", 0, "gpu_util_pct", 50)]
    gpu = _long_rows(tmp_path / "gpu.parquet", [r for r in rows if r[2] is not None])
    node = _long_rows(tmp_path / "node.parquet", [r for r in rows if r[2] is None])
    mm = load_metric_map(["dcgm", "node_exporter"])
    con = duckdb.connect()
    sample_set = read_samples([gpu, node], mm, con)
    stage(con, sample_set)
    whole = _view(con)
    bodies = [long_body(table, mm) for table in sample_set.long_tables]
    _, _, combine_sum = metric_roles(mm)
    parts, boundaries = [], []
    for lo in range(d0 - 86_400, d0 + 2 * 86_400, 86_400):
        day_con = duckdb.connect()
        stage_partition(day_con, bodies, mm, lo, lo + 86_400)
        parts += _view(day_con)
        boundaries.append(lag_boundaries(day_con))
    con = duckdb.connect()
    con.register("b", pa.concat_tables(boundaries))
    con.execute("CREATE TABLE lag_boundary AS SELECT * FROM b")
    boundary_samples(con, "lag_boundary", combine_sum)
    heads = _view(con)
    t = lambda minute: float(T0 + 60 * minute)
    # the rows no single day can derive: each series' first lag of a day
    assert heads == sorted([("gpu_energy_j", "g1", 0, t(m0 + 1), 30.0, t(m0 - 1)),
                            ("gpu_energy_j", "g1", 1, t(m0 + day + 7), 60.0, t(m0 - 5)),
                            ("node_cpu_util_pct", "g1", None, t(m0 + 2), 50.0, None)], key=repr)
    assert sorted(parts + heads, key=repr) == whole
    assert ("node_mem_used_gib", "g2", None, t(m0 + 1), 5.0, None) in whole
    # a day without inputs stages empty views
    con = duckdb.connect()
    stage_partition(con, [], mm, d0, d0 + 86_400)
    assert _view(con) == [] and _view(con, "derived") == []
