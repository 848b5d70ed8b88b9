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


def held_at(start, end, size, t):
    """Units the jobs ``[start, end)`` hold at second ``t``."""
    return int(size[(start <= t) & (t < end)].sum())


def capacity_at(timeline, t):
    """The capacity in force at ``t`` of sorted (since, units) entries (the first entry also
    covers earlier times)."""
    return ([n for s, n in timeline if s <= t] or [timeline[0][1]])[-1]


def _scanned(start, end, size, capacity, t0, t1):
    """Utilization summed second by second over [t0, t1): busy units over the capacity in
    force, or the busy units when more; None when nothing."""
    busy = avail = 0
    for t in range(t0, t1):
        held = held_at(start, end, size, t)
        busy += held
        avail += max(capacity_at(capacity, t), held)
    return busy / avail if avail else None


@settings(max_examples=100, deadline=None)
@given(jobs, st.lists(st.tuples(st.integers(-5, 60), st.integers(1, 12)), min_size=1,
                      max_size=4, unique_by=lambda c: c[0]))
def test_utilization_in_chunks_matches_a_scan_of_every_second(case, capacity):
    """Busy over available unit-seconds, summed second by second; chunks of 3 grid segments."""
    import swftools.replay.result as result

    start, end, size = arrays(case)
    capacity = sorted(capacity)
    t0, t1 = int(start.min()), int(end.max())
    expected = _scanned(start, end, size, capacity, t0, t1)
    old = result.UTILIZATION_CHUNK
    try:
        result.UTILIZATION_CHUNK = 3
        assert utilization(start, end, size, capacity, t0, t1) == expected
    finally:
        result.UTILIZATION_CHUNK = old
    assert utilization(start, end, size, capacity, t0, t1) == expected


@settings(max_examples=200, deadline=None)
@given(st.one_of(
    st.lists(st.integers(-2**40, 2**40), max_size=40).map(lambda v: np.array(v, np.int64)),
    st.lists(st.integers(-50, 50), max_size=40).map(lambda v: np.array(v, np.int32)),
    st.lists(st.floats(-1e3, 1e3, allow_nan=False), max_size=40).map(np.array),
    st.lists(st.integers(0, 2**40), max_size=40).map(lambda v: np.array(v, np.uint64))))
def test_sorted_distinct_is_numpy_unique(values):
    """Counting (narrow signed integers), sorting (the rest, wide spans, negatives, floats,
    empty arrays): the values of ``np.unique``, in the input's dtype."""
    from swftools.replay.result import sorted_distinct

    got = sorted_distinct(values)
    assert got.dtype == values.dtype and got.tolist() == np.unique(values).tolist()


def test_sorted_distinct_spans_wider_than_the_count_are_not_counted():
    """A span of 2**41 over two values is sorted, not counted (a bincount of 2**41 slots)."""
    from swftools.replay.result import sorted_distinct

    values = np.array([-2**41, 0, -2**41], np.int64)
    assert sorted_distinct(values).tolist() == [-2**41, 0]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 20), st.integers(1, 5)),
                max_size=12),
       st.lists(st.tuples(st.integers(-5, 60), st.integers(0, 12)), min_size=1, max_size=4,
                unique_by=lambda c: c[0]),
       st.integers(-10, 80), st.integers(-10, 80))
def test_utilization_over_any_window_matches_a_scan(case, capacity, t0, t1):
    """Any window (before, across or after the jobs; empty or reversed: None), no jobs, zero
    capacity: busy over available unit-seconds summed second by second."""
    start, end, size = arrays(case) if case else (np.zeros(0, np.int64),) * 3
    capacity = sorted(capacity)
    assert utilization(start, end, size, capacity, t0, t1) == _scanned(start, end, size,
                                                                      capacity, t0, t1)


def test_no_jobs_hold_nothing():
    empty = np.zeros(0, np.int64)
    assert peak_busy(empty, empty, empty) == 0
    assert utilization(empty, empty, empty, [(0, 4)], 0, 10) == 0.0
    assert utilization(empty, empty, empty, [(0, 0)], 0, 10) is None  # nothing available


def test_capacity_steps_takes_the_entry_in_force_and_the_first_before_it():
    from swftools.replay.result import capacity_steps

    capacity = [(10, 4), (20, 8), (30, 2)]
    times = np.array([0, 9, 10, 19, 20, 29, 30, 10**9], np.int64)
    assert capacity_steps(capacity, times).tolist() == [4, 4, 4, 4, 8, 8, 2, 2]


def _jobs(submit, start, run, size):
    import pyarrow as pa

    from swftools.replay.result import JOBS_SCHEMA

    n = len(submit)
    cols = {"job_id": list(range(1, n + 1)), "queue": [None] * n, "submit_time": submit,
            "start_time": start, "end_time": [s + r for s, r in zip(start, run)],
            "wait_s": [s - q for s, q in zip(start, submit)], "run_s": run, "estimate_s": run,
            "size": size, "nodes": [None] * n, "node_ids": [None] * n, "gpus_ids": [None] * n}
    cols["gpu_ids"] = cols.pop("gpus_ids")
    return pa.table(cols, schema=JOBS_SCHEMA)


def _skipped(reasons):
    import pyarrow as pa

    from swftools.replay.result import SKIPPED_SCHEMA

    return pa.table({"job_id": list(range(100, 100 + len(reasons))), "reason": reasons},
                    schema=SKIPPED_SCHEMA)


def test_a_summary_worked_by_hand():
    """Three jobs, [0, 2) x 2, [1, 11) x 1, [3, 6) x 1, on 4 units then 3 from t=5: waits
    0, 1, 1 (mean 0.667 to 3 places), bounded slowdowns 1, 11/10, 1 (mean 1.033333 to 6),
    busy 4 + 10 + 3 = 17 of 4 x 5 + 3 x 6 unit-seconds, peak 3 in [1, 2), two skips counted
    by the reason before its colon."""
    from swftools.replay.result import summarize

    jobs = _jobs(submit=[0, 0, 2], start=[0, 1, 3], run=[2, 10, 3], size=[2, 1, 1])
    skipped = _skipped(["too large: 9 > 4", "too large: 7 > 4", "no estimate"])
    summary = summarize(jobs, skipped, model="flat", policy="easy", allocation=None,
                        kill_at_request=False, unit="gpu", capacity=[(0, 4), (5, 3)])
    assert summary == {
        "model": "flat", "policy": "easy", "allocation": None, "kill_at_request": False,
        "unit": "gpu", "capacity": 4, "jobs": 3, "skipped": 3,
        "skipped_by_reason": {"no estimate": 1, "too large": 2},
        "first_submit_time": 0, "last_end_time": 11, "makespan_s": 11,
        "mean_wait_s": 0.667, "median_wait_s": 1.0, "bounded_slowdown_tau_s": 10,
        "mean_bounded_slowdown": 1.033333, "utilization": round(17 / (4 * 5 + 3 * 6), 6),
        "peak_busy": 3}


def test_summaries_of_no_jobs_and_of_one_instant():
    from swftools.replay.result import summarize

    kwargs = dict(model="flat", policy="fcfs", allocation=None, kill_at_request=True,
                  unit="gpu")
    empty = summarize(_jobs([], [], [], []), _skipped([]), capacity=[], **kwargs)
    assert (empty["capacity"], empty["peak_busy"], empty["makespan_s"], empty["utilization"],
            empty["skipped_by_reason"]) == (0, 0, 0, None, {})
    # two zero-length jobs at one instant: no window to use, so no utilization
    instant = summarize(_jobs([5, 5], [5, 5], [0, 0], [1, 2]), _skipped([]),
                        capacity=[(0, 4)], **kwargs)
    assert (instant["makespan_s"], instant["utilization"], instant["peak_busy"],
            instant["mean_bounded_slowdown"]) == (0, None, 0, 1.0)


def test_summary_json_is_sorted_indented_utf8_text():
    from swftools.replay.result import summary_json

    text = summary_json({"policy": "easy", "by": {"b": 1, "a": "ü"}, "n": None})
    assert text == ('{\n  "by": {\n    "a": "ü",\n    "b": 1\n  },\n  "n": null,\n'
                    '  "policy": "easy"\n}\n')


def test_write_reads_back_and_writes_utf8_whatever_the_locale(tmp_path):
    """The four files and the extra ones, returned in order; the jobs read back from Parquet
    (zstd) and CSV; summary.json and extra text UTF-8 under the C locale too."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from .conftest import text_under_c_locale

    jobs = _jobs(submit=[0, 2], start=[1, 3], run=[5, 6], size=[2, 1])
    code = ("import sys, pyarrow as pa\n"
            "from swftools.replay.result import ReplayResult, JOBS_SCHEMA, SKIPPED_SCHEMA\n"
            "from pathlib import Path\n"
            "jobs = pa.ipc.open_file(sys.argv[2]).read_all()\n"
            "skipped = pa.table({'job_id': [9], 'reason': ['trop grand: \\u00e9']},\n"
            "                   schema=SKIPPED_SCHEMA)\n"
            "paths = ReplayResult(jobs, skipped, {'policy': '\\u00fc'}).write(\n"
            "    sys.argv[1], extra={'notes.md': 'na\\u00efve'})\n"
            "print(' '.join(p.name for p in paths).encode().hex())\n")
    with pa_file(tmp_path / "jobs.arrow", jobs) as arrow:
        names = text_under_c_locale(code, str(tmp_path / "out"), arrow)
    out = tmp_path / "out"
    assert names == "jobs.parquet jobs.csv skipped.csv summary.json notes.md"
    assert sorted(p.name for p in out.iterdir() if p.name[0] != ".") == sorted(names.split())
    assert pq.read_table(out / "jobs.parquet").equals(jobs)
    assert pq.ParquetFile(out / "jobs.parquet").metadata.row_group(0).column(0).compression \
        == "ZSTD"
    assert pacsv.read_csv(out / "jobs.csv").column("end_time").to_pylist() == [6, 9]
    assert (out / "skipped.csv").read_text(encoding="utf-8").splitlines()[1] == \
        '9,"trop grand: é"'
    assert (out / "summary.json").read_text(encoding="utf-8") == '{\n  "policy": "ü"\n}\n'
    assert (out / "notes.md").read_text(encoding="utf-8") == "naïve"


class pa_file:
    """An Arrow IPC file of ``table`` for a subprocess (a context manager naming it)."""

    def __init__(self, path, table):
        import pyarrow as pa

        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
        self.path = str(path)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        return False
