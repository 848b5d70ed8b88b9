"""``replay.result``'s step functions against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.replay.result import busy_steps, peak_busy, utilization

jobs = st.lists(st.tuples(st.integers(0, 50), st.integers(0, 20), st.integers(1, 5)),
                min_size=1, max_size=30)


def arrays(case):
    start = np.array([s for s, _, _ in case], dtype=np.int64)
    end = start + np.array([d for _, d, _ in case], dtype=np.int64)
    size = np.array([u for _, _, u in case], dtype=np.int64)
    return start, end, size


@settings(max_examples=200, deadline=None)
@given(jobs)
def test_busy_steps_and_peak_match_a_scan_of_every_instant(case):
    start, end, size = arrays(case)
    times, level = busy_steps(start, end, size)
    instants = sorted(set(start.tolist()) | set(end.tolist()))
    assert times.tolist() == instants
    held = [int(size[(start <= t) & (t < end)].sum()) for t in instants]
    assert level.tolist() == held
    assert peak_busy(start, end, size) == max([0] + held)
    # the steps passed in give the same figures as computed inside
    assert peak_busy(start, end, size, (times, level)) == peak_busy(start, end, size)
    t0, t1 = int(start.min()), int(end.max())
    assert utilization(start, end, size, [(0, 10)], t0, t1, (times, level)) == \
        utilization(start, end, size, [(0, 10)], t0, t1)


@settings(max_examples=100, deadline=None)
@given(jobs, st.lists(st.tuples(st.integers(-5, 60), st.integers(1, 12)), min_size=1,
                      max_size=4, unique_by=lambda c: c[0]))
def test_utilization_in_chunks_matches_a_scan_of_every_second(case, capacity):
    """Busy over available unit-seconds, summed second by second; chunks of 3 grid segments."""
    import swftools.replay.result as result

    start, end, size = arrays(case)
    capacity = sorted(capacity)
    t0, t1 = int(start.min()), int(end.max())
    busy = avail = 0
    for t in range(t0, t1):
        held = int(size[(start <= t) & (t < end)].sum())
        cap = [u for since, u in capacity if since <= t]
        busy += held
        avail += max(cap[-1] if cap else capacity[0][1], held)
    expected = busy / avail if avail else None
    old = result.UTILIZATION_CHUNK
    try:
        result.UTILIZATION_CHUNK = 3
        assert utilization(start, end, size, capacity, t0, t1) == expected
    finally:
        result.UTILIZATION_CHUNK = old
    assert utilization(start, end, size, capacity, t0, t1) == expected
