"""Shared sample checks: timestamp units by range, node label, series identity."""

from __future__ import annotations

from hypothesis import given, strategies as st

from swftools.telemetry.buffer import (TS_MAX_S, TS_MIN_S, node_name, series_key,
                                       timestamp_problem, value_problem)
from swftools.telemetry.metric_map import MapEntry


@given(st.floats(min_value=TS_MIN_S, max_value=TS_MAX_S - 1))
def test_plausible_seconds_pass_and_the_same_in_ms_or_s_over_1000_fail(ts):
    assert timestamp_problem(ts) is None
    assert "milliseconds" in timestamp_problem(ts * 1000)
    assert "seconds where milliseconds were expected" in timestamp_problem(ts / 1000)


def test_other_timestamps():
    assert "not finite" in timestamp_problem(float("nan"))
    assert "outside 2000..2100" in timestamp_problem(5.0)


def test_value_ranges():
    assert value_problem("gpu_util_pct", 100.0) is None
    assert "exceeds 100 %" in value_problem("gpu_util_pct", 101.0)
    assert "negative" in value_problem("gpu_power_w", -1.0)


def test_node_label_and_port():
    e = MapEntry("x", "node_power_w", "gauge", "W", 1.0, node_label="instance", strip_port=True)
    assert node_name(e, {"instance": "host-1:9100"}) == "host-1"
    assert node_name(e, {"instance": "host-1"}) == "host-1"
    assert node_name(e, {"instance": ""}) is None
    keep = MapEntry("x", "node_power_w", "gauge", "W", 1.0, node_label="instance")
    assert node_name(keep, {"instance": "h:1"}) == "h:1"


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.text(max_size=5), max_size=5))
def test_series_key_ignores_label_order(labels):
    assert series_key("m", labels) == series_key("m", dict(reversed(list(labels.items()))))


# --- every check word for word, and the rows a series becomes ---------------------------------

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from swftools.errors import InputError  # noqa: E402
from swftools.telemetry.buffer import SAMPLE_SCHEMA, FileStats, SampleBuffer  # noqa: E402
from swftools.telemetry.metric_map import MetricMap  # noqa: E402

T0 = 1_700_000_000.0


def test_timestamp_messages_at_each_range_edge():
    assert timestamp_problem(float(TS_MIN_S)) is None
    assert timestamp_problem(TS_MAX_S - 0.5) is None
    for ts in (TS_MIN_S - 1.0, float(TS_MAX_S)):
        assert timestamp_problem(ts) == f"timestamp {ts!r} is outside 2000..2100 in UTC epoch seconds"
    ms = TS_MIN_S * 1000.0
    assert timestamp_problem(ms) == (f"timestamp {ms!r} looks like milliseconds; expected UTC "
                                     "epoch seconds (this format writes seconds)")
    assert timestamp_problem(ms, "ms").endswith("(check the format)")
    assert timestamp_problem(TS_MAX_S * 1000.0).startswith("timestamp 4102444800000.0 is outside")
    assert timestamp_problem(TS_MIN_S / 1000) == (
        "timestamp 946684.8 s is in 1970; the file probably wrote seconds where milliseconds "
        "were expected")
    assert timestamp_problem(TS_MAX_S / 1000).endswith("is outside 2000..2100 in UTC epoch seconds")
    assert timestamp_problem(TS_MIN_S / 1000 - 1).endswith("is outside 2000..2100 in UTC epoch seconds")
    assert "is in 1970" in timestamp_problem(TS_MAX_S / 1000 - 1)
    assert timestamp_problem(float("-inf")) == "timestamp -inf is not finite"


def test_value_messages_and_the_percent_tolerance():
    assert value_problem("gpu_util_pct", -0.5) == "gpu_util_pct = -0.5 is negative"
    assert value_problem("gpu_energy_j", -2.0) == "gpu_energy_j = -2.0 is negative"  # a counter
    assert value_problem("gpu_util_pct", 100.0 + 1e-9) is None
    assert value_problem("gpu_util_pct", 100.000001) == (
        "gpu_util_pct = 100.000001 exceeds 100 % (is the scale right? ratio vs percent)")
    assert value_problem("gpu_power_w", 400.0) is None and value_problem("gpu_power_w", 0.0) is None


def test_node_names_with_ports_brackets_and_other_labels():
    e = MapEntry("x", "node_power_w", "gauge", "W", 1.0, node_label="host", strip_port=True)
    assert node_name(e, {"host": "[fe80::1]:9100"}) == "fe80::1"
    assert node_name(e, {"host": "[fe80::1]"}) == "[fe80::1]"        # no port: kept whole
    assert node_name(e, {"host": "h:x9"}) == "h:x9"                  # not a port
    assert node_name(e, {"host": "[a:1"}) == "[a"                    # an unclosed bracket stays
    assert node_name(e, {"instance": "h"}) is None


def test_series_key_and_file_stats_word_for_word():
    assert series_key("m", {"b": "2", "__name__": "m", "a": "1"}) == 'm{a="1",b="2"}'
    assert series_key("m", {}) == "m{}"
    stats = FileStats("f.prom", "exposition", 3, 2, 1, "1m", ["w"])
    assert stats.as_dict() == {"file": "f.prom", "format": "exposition", "samples_read": 3,
                               "rows_mapped": 2, "non_finite_dropped": 1, "sampling": "1m",
                               "warnings": ["w"]}
    assert FileStats("g", "long").as_dict()["sampling"] == "raw"


UTIL = MapEntry("util", "gpu_util_pct", "gauge", "ratio", 100.0, node_label="host",
                gpu_label="idx")
POWER = MapEntry("power", "node_power_w", "gauge", "mW", 0.001, match=(("kind", "dc"),),
                 node_label="host")
ENERGY = MapEntry("energy", "gpu_energy_j", "counter", "J", 1.0, node_label="host",
                  gpu_label="idx")


def _add(name, labels, ts, values, src=3):
    buf = SampleBuffer(MetricMap([UTIL, POWER, ENERGY], {"noise"}, ["site"]))
    stats = FileStats("f", "t")
    buf.add_series("f", src, name, labels, np.array(ts, float), np.array(values, float), stats,
                   lambda i: 10 + i)
    return buf.to_table(), stats


def test_a_series_becomes_canonical_rows():
    table, stats = _add("util", {"host": "n1", "idx": "07"}, [T0, T0 + 60], [0.5, 1.0])
    assert table.schema == SAMPLE_SCHEMA
    assert table.to_pylist() == [
        {"ts": T0 + k * 60, "node": "n1", "gpu_index": 7, "metric": "gpu_util_pct", "value": v,
         "series": 'util{host="n1",idx="07"}', "src": 3} for k, v in ((0, 50.0), (1, 100.0))]
    assert (stats.samples_read, stats.rows_mapped, stats.non_finite_dropped) == (2, 2, 0)
    table, _ = _add("power", {"host": "n1", "kind": "dc"}, [T0], [250_000.0])
    assert table.to_pylist()[0]["gpu_index"] is None and table.column("value")[0].as_py() == 250.0


def test_ignored_and_unmatched_series_count_their_samples_only():
    for name, labels in (("noise", {}), ("power", {"host": "n1", "kind": "ac"})):
        table, stats = _add(name, labels, [T0, T0 + 1], [1.0, 2.0])
        assert table.num_rows == 0 and table.schema == SAMPLE_SCHEMA
        assert (stats.samples_read, stats.rows_mapped) == (2, 0)
    table, stats = _add("util", {"host": "n1", "idx": "0"}, [], [])
    assert table.num_rows == 0 and stats.samples_read == 0


def test_non_finite_values_are_dropped_and_later_lines_stay_right():
    table, stats = _add("util", {"host": "n1", "idx": "0"}, [T0, T0 + 1, T0 + 2],
                        [float("nan"), 0.25, float("inf")])
    assert table.column("value").to_pylist() == [25.0] and table.column("ts").to_pylist() == [T0 + 1]
    assert (stats.samples_read, stats.rows_mapped, stats.non_finite_dropped) == (3, 1, 2)
    with pytest.raises(InputError) as info:
        _add("util", {"host": "n1", "idx": "0"}, [T0, T0 + 1, T0 + 2], [float("nan"), 0.5, 2.0])
    err = info.value
    assert (err.message, err.line, err.field, err.value) == (
        "gpu_util_pct = 200.0 exceeds 100 % (is the scale right? ratio vs percent)", 12, "value",
        "2.0")
    with pytest.raises(InputError) as info:
        _add("energy", {"host": "n1", "idx": "1"}, [T0, T0 + 1], [5.0, -1.0])
    assert (info.value.message, info.value.line) == ("gpu_energy_j = -1.0 is negative", 11)


def _error(name, labels, ts=(T0,), values=(1.0,)):
    with pytest.raises(InputError) as info:
        _add(name, labels, list(ts), list(values))
    err = info.value
    return err.path, err.message, err.line, err.field, err.value, err.expected


def test_each_refused_series_names_file_line_field_and_value():
    assert _error("temp", {}) == ("f", "metric 'temp' has no entry in the metric map (site)", 10,
                                  "metric", "temp", "a mapped metric, or its name under 'ignore'")
    assert _error("temp", {}, (), ())[2] is None
    assert _error("util", {"host": "n1", "idx": "0"}, (T0, 5.0)) [1:5] == (
        "timestamp 5.0 is outside 2000..2100 in UTC epoch seconds", 11, "timestamp", "5.0")
    assert _error("util", {"idx": "0"}) == (
        "f", "util: label 'host' (the node) is missing", 10, "host", 'util{idx="0"}',
        "a host label as the metric map says")
    missing = _error("util", {"host": "n1"})
    assert missing == ("f", "util: label 'idx' is missing", 10, "idx", 'util{host="n1"}',
                       "a non-negative integer GPU index label")
    for bad in ("-1", "x", "\u0661\u0662", "1234567890"):
        assert _error("util", {"host": "n1", "idx": bad})[1] == (
            f"util: label 'idx' = {bad!r} is not a GPU index")
    assert _add("util", {"host": "n1", "idx": "123456789"}, [T0], [0.1])[0].num_rows == 1


def test_an_empty_buffer_is_an_empty_table_of_the_sample_schema():
    table = SampleBuffer(MetricMap([UTIL])).to_table()
    assert table.num_rows == 0 and table.schema == SAMPLE_SCHEMA


def test_the_counts_of_a_file_add_up_over_its_series():
    buf = SampleBuffer(MetricMap([UTIL], set(), ["site", "dcgm"]))
    stats = FileStats("f", "t")
    for values in ([0.5, float("nan")], [float("nan"), 0.25, 0.0]):
        buf.add_series("f", 0, "util", {"host": "n1", "idx": "0"},
                       T0 + np.arange(len(values), dtype=float), np.array(values), stats,
                       lambda i: i + 1)
    assert (stats.samples_read, stats.rows_mapped, stats.non_finite_dropped) == (5, 3, 2)
    with pytest.raises(InputError) as info:
        buf.add_series("f", 0, "temp", {}, np.array([T0]), np.array([1.0]), stats, lambda i: 9)
    assert info.value.message == "metric 'temp' has no entry in the metric map (site, dcgm)"


def test_a_series_no_entry_takes_or_with_no_sample_is_not_checked():
    # an unmatched series with a bad timestamp; an empty one without its node label
    assert _add("power", {"host": "n1", "kind": "ac"}, [5.0], [1.0])[0].num_rows == 0
    assert _add("power", {"kind": "dc"}, [], [])[0].num_rows == 0


def test_range_edges_of_timestamps_and_values_in_a_series():
    table, _ = _add("util", {"host": "n1", "idx": "0"}, [float(TS_MIN_S), T0, T0 + 1],
                    [0.0, 0.005, 1.0 + 1e-11])
    assert table.column("value").to_pylist() == [0.0, 0.5, 100.0 + 1e-9]
    assert _add("power", {"host": "n1", "kind": "dc"}, [T0], [0.0])[0].num_rows == 1
    path, message, line, field, value, _ = _error("util", {"host": "n1", "idx": "0"},
                                                  (T0, float(TS_MAX_S)), (0.5, 0.5))
    assert (path, line, field, value) == ("f", 11, "timestamp", "4102444800.0")
    for values, bad in (([0.5, -0.001], "gpu_util_pct = -0.1 is negative"),
                        ([0.5, 1.005], "gpu_util_pct = 100.49999999999999 exceeds 100 % (is the "
                                       "scale right? ratio vs percent)")):
        path, message, line, field, value, _ = _error("util", {"host": "n1", "idx": "0"},
                                                      (T0, T0 + 1), values)
        assert (path, message, line, field, value) == ("f", bad, 11, "value", repr(values[1]))


def test_number_text_is_what_exporters_write():
    from swftools.telemetry.buffer import number_text

    for text in ("42", "-1.5e3", "NaN", "+Inf", "-Inf"):
        assert number_text(text), text
    for text in ("1_000", "\u0661\u0662", "0x10", "", "n/a"):
        assert not number_text(text), text
