"""Every tolerance and threshold of the validation rules on both sides of its edge (issue 30:
boundary constants hit on both sides). Each case is a value exactly at the limit (allowed) and
the nearest value past it (flagged), so an off-by-one or a ``<`` for ``<=`` fails."""

from __future__ import annotations

import pytest

from swftools.validate.rules_swf import CPU_TOLERANCE_S
from swftools.validate.rules_time import SENTINEL_S

from .validate_support import (T0, aaic_table, assert_fires, assert_silent, run, swf_line,
                               write_swf)

GRACE_S = 300  # the AAIC preset's walltime grace


def _fires(report, rule) -> bool:
    return any(f.rule == rule for f in report.findings)


@pytest.mark.parametrize("cpu,flagged", [(100 + CPU_TOLERANCE_S, False),
                                         (100 + CPU_TOLERANCE_S + 0.01, True), (99, False)])
def test_swf_cpu_time_tolerance(tmp_path, cpu, flagged):
    path = write_swf(tmp_path / "c.swf", [swf_line(1, run=100, cpu=cpu)])
    assert _fires(run(path, "swf-cpu-time"), "swf-cpu-time") is flagged


@pytest.mark.parametrize("walltime,flagged", [(3600 + GRACE_S, False), (3600 + GRACE_S + 1, True),
                                              (3600 - GRACE_S, False), (3600 - GRACE_S - 1, True)])
def test_termcode_walltime_grace_on_both_sides(walltime, flagged):
    table = aaic_table([{"termcode": 2, "walltime_s": walltime}])
    assert _fires(run(table, "termcode-walltime"), "termcode-walltime") is flagged


@pytest.mark.parametrize("past,flagged", [(0, False), (1, True)])
@pytest.mark.parametrize("grace", [None, 0, 60])
def test_walltime_overrun_grace_edge(past, flagged, grace):
    """A 3,600 s request run to exactly request + grace (the preset's, or the option's) passes;
    one second more is an overrun."""
    kwargs = {} if grace is None else {"walltime_grace_s": grace}
    table = aaic_table([{"walltime_s": 3600 + (GRACE_S if grace is None else grace) + past}])
    assert _fires(run(table, "walltime-overrun", **kwargs), "walltime-overrun") is flagged


@pytest.mark.parametrize("start,flagged", [(SENTINEL_S - 1, True), (SENTINEL_S, False)])
def test_sentinel_timestamp_edge(start, flagged):
    table = aaic_table([{"submit_time": start, "start_time": start, "wait_s": 0,
                         "finish_time": start + 600, "walltime_s": 600}])
    found = [f for f in run(table, "sentinel-timestamp").findings
             if f.rule == "sentinel-timestamp" and f.field == "start_time"]
    assert bool(found) is flagged


def _burst(n: int, spacing_s: int, background: int = 0):
    jobs = [{"user": "alice", "submit_time": T0 + spacing_s * k} for k in range(n)]
    jobs += [{"user": f"u{i}", "submit_time": T0 + i} for i in range(background)]
    jobs.sort(key=lambda j: j["submit_time"])
    return aaic_table(jobs)


def test_flurry_job_count_edge():
    """Exactly --flurry-jobs jobs in the window is a flurry; one fewer is not."""
    opts = dict(flurry_min_jobs=20, flurry_window_s=1000, flurry_min_share=0.5)
    assert_fires(run(_burst(20, 10), "flurry", **opts), "flurry", 1)
    assert_silent(run(_burst(19, 10), "flurry", **opts), "flurry")


def test_flurry_window_edge():
    """20 jobs 50 s apart span 950 s: inside a 951 s window, not inside a 950 s one (the window
    is half-open, [t, t + window))."""
    base = dict(flurry_min_jobs=20, flurry_min_share=0.5)
    assert_fires(run(_burst(20, 50), "flurry", flurry_window_s=951, **base), "flurry", 1)
    assert_silent(run(_burst(20, 50), "flurry", flurry_window_s=950, **base), "flurry")


def test_flurry_share_edge():
    """20 of alice's jobs among 20 others in the same period: a share of exactly 0.5 is a
    flurry at --flurry-share 0.5, not at 0.51."""
    table = _burst(20, 10, background=20)
    base = dict(flurry_min_jobs=20, flurry_window_s=1000)
    assert_fires(run(table, "flurry", flurry_min_share=0.5, **base), "flurry", 1)
    assert_silent(run(table, "flurry", flurry_min_share=0.51, **base), "flurry")
