"""swftools.report.arrivals: submissions per local hour of day and day of week."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.report import arrivals
from swftools.report.frame import is_skipped, prepare
from swftools.site import load_site
from tests.report_support import aaic_table, swf_table

AAIC = load_site("aaic")
MON_2017_07_17_JST = 1_500_217_200  # Monday 2017-07-17 00:00 in Tokyo


def _at(day: int, hour: int) -> int:
    return MON_2017_07_17_JST + day * 86400 + hour * 3600 + 5


def test_hour_of_day_mean_and_std_over_days():
    # Day 0 (Mon): 3 jobs at 10h; day 1 (Tue): 1 job at 10h, 2 at 23h; day 2 (Wed): none but
    # the span ends with one job on day 3 (Thu) at 0h.
    times = [_at(0, 10)] * 3 + [_at(1, 10)] + [_at(1, 23)] * 2 + [_at(3, 0)]
    result = arrivals.analyze(prepare(aaic_table([{"submit_time": t} for t in times]), AAIC))
    assert result["days"] == 4 and result["jobs"] == 7
    by_hour = {h["hour"]: h for h in result["by_hour"]}
    assert by_hour[10]["jobs"] == 4
    assert by_hour[10]["mean"] == 1.0
    assert by_hour[10]["std"] == pytest.approx(np.std([3, 1, 0, 0], ddof=1))
    assert by_hour[23]["mean"] == 0.5
    assert result["peak_hour"] == 10
    by_day = {d["weekday"]: d for d in result["by_weekday"]}
    assert [by_day[d]["jobs"] for d in ("Monday", "Tuesday", "Thursday")] == [3, 3, 1]
    assert by_day["Wednesday"]["weeks"] == 1 and by_day["Wednesday"]["mean"] == 0
    assert by_day["Friday"]["weeks"] == 0 and by_day["Friday"]["mean"] is None
    assert result["weekday_share"] == 1.0
    assert result["jobs_per_day"]["mean"] == pytest.approx(7 / 4)


def test_local_time_follows_the_table_time_zone():
    table = aaic_table([{"submit_time": _at(0, 10)}], time_zone="UTC")
    result = arrivals.analyze(prepare(table, AAIC))
    assert result["peak_hour"] == 1  # 10h in Tokyo is 1h UTC
    assert result["time_zone"] == "UTC" and result["time_zone_source"] == "table metadata"


def test_short_jobs_are_not_counted():
    table = aaic_table([{"submit_time": _at(0, 9)}, {"submit_time": _at(0, 9), "walltime_s": 5}])
    assert arrivals.analyze(prepare(table, AAIC))["jobs"] == 1


def test_relative_times_skip_with_the_reason():
    table = swf_table({"job_id": [1], "gpus": [1], "walltime_s": [100], "submit_time": [10]},
                      origin=None)
    result = arrivals.analyze(prepare(table, None))
    assert is_skipped(result) and "UnixStartTime" in result["reason"]


@given(st.lists(st.integers(0, 2_000_000_000), min_size=1, max_size=20),
       st.sampled_from(["UTC", "Asia/Tokyo", "US/Pacific", "Europe/Paris"]))
def test_local_day_and_hour_match_zoneinfo(epochs, zone):
    days, hours = arrivals.local_day_and_hour(np.array(epochs), zone)
    for epoch, day, hour in zip(epochs, days, hours):
        local = datetime.fromtimestamp(epoch, tz=timezone.utc).astimezone(ZoneInfo(zone))
        assert hour == local.hour
        assert day == (local.date() - datetime(1970, 1, 1).date()).days
