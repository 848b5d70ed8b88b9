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
