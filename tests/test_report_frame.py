"""swftools.report.frame: how a job table becomes the frame the analyses use."""

from __future__ import annotations

import numpy as np

from swftools.report.frame import (MULTI, MULTI_NODE, SINGLE, SINGLE_NODE_MULTI, describe,
                                   prepare, quarters, size_classes, successful_long)
from swftools.site import load_site
from tests.report_support import T0, aaic_table, swf_table

AAIC = load_site("aaic")


def test_aaic_table_uses_termcode_gpus_and_metadata_time_zone():
    frame = prepare(aaic_table([{"termcode": 0}, {"termcode": 2}]), AAIC)
    assert frame.success_rule == "termcode == 0"
    assert frame.pe == "GPU"
    assert frame.nodes_source == "recorded"
    assert (frame.time_zone, frame.time_zone_source) == ("Asia/Tokyo", "table metadata")
    assert frame.absolute_times
    assert list(frame.jobs["success"]) == [1.0, 0.0]


def test_swf_without_site_counts_processors_and_uses_status():
    table = swf_table({"job_id": [1, 2, 3], "gpus": [1, 4, None], "swf_status": [1, 0, None],
                       "walltime_s": [100, 100, 100], "submit_time": [T0, T0, T0]})
    frame = prepare(table, None)
    assert frame.pe == "processor"
    assert frame.nodes_source is None
    assert frame.success_rule == "swf_status == 1"
    assert np.isnan(frame.jobs["success"].iloc[2])
    assert (frame.time_zone, frame.time_zone_source) == ("UTC", "default (UTC)")


def test_site_time_zone_when_the_table_has_none():
    table = swf_table({"job_id": [1], "gpus": [8], "walltime_s": [100], "submit_time": [T0]})
    assert prepare(table, AAIC).time_zone_source == "site settings"


def test_swf_of_a_gpu_site_derives_nodes_from_whole_nodes():
    table = swf_table({"job_id": [1, 2, 3], "gpus": [1, 8, 24], "walltime_s": [100] * 3,
                       "submit_time": [T0] * 3})
    frame = prepare(table, AAIC)
    assert frame.pe == "GPU"
    assert list(frame.jobs["nodes"]) == [1, 1, 3]
    assert frame.nodes_source.startswith("derived")
    assert list(size_classes(frame, frame.jobs)) == [SINGLE, SINGLE_NODE_MULTI, MULTI_NODE]


def test_without_nodes_classes_are_single_and_multi():
    table = swf_table({"job_id": [1, 2, 3], "gpus": [1, 64, 0], "walltime_s": [100] * 3})
    frame = prepare(table, None)
    classes = size_classes(frame, frame.jobs)
    assert list(classes[:2]) == [SINGLE, MULTI]
    assert classes.isna()[2]  # zero processors: unknown size


def test_swf_without_unix_start_time_has_no_absolute_times():
    table = swf_table({"job_id": [1], "gpus": [1], "walltime_s": [100], "submit_time": [5]},
                      origin=None)
    frame = prepare(table, None)
    assert not frame.absolute_times
    assert "UnixStartTime" in frame.absolute_times_reason


def test_quarters_are_calendar_quarters_in_local_time():
    # 2017-09-30 20:00 UTC is 2017-10-01 05:00 in Tokyo: the fourth quarter there.
    late_sept_utc = 1_506_801_600
    table = aaic_table([{"submit_time": T0}, {"submit_time": late_sept_utc}])
    frame = prepare(table, AAIC)
    assert list(quarters(frame, frame.jobs)) == ["2017Q3", "2017Q4"]


def test_successful_long_falls_back_when_no_outcome_is_recorded():
    table = swf_table({"job_id": [1, 2], "gpus": [1, 1], "walltime_s": [30, 100]})
    jobs, description = successful_long(prepare(table, None))
    assert list(jobs["walltime_s"]) == [100]
    assert "records no outcome" in description


def test_describe_matches_numpy():
    values = np.array([1.0, 2.0, 4.0, 10.0])
    stats = describe(values)
    assert stats == {"count": 4, "mean": 4.25, "std": float(np.std(values, ddof=1)),
                     "median": 3.0, "min": 1.0, "max": 10.0}
    assert describe(np.array([]))["mean"] is None
    assert describe(np.array([5.0]))["std"] is None
