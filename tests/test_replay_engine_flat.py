"""``engine_flat``'s Python engine against hand-worked schedules and the brute-force reference
scheduler of ``test_replay_reference`` (which rebuilds the whole state at every event), and
``run_flat``'s choice between it and the compiled twin."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from swftools.replay import engine_flat
from swftools.replay.engine_flat import COMPILED_MIN_JOBS, fits_int64_keys, run_flat
from swftools.replay.workload import Workload

from .strategies import examples, flat_queues
from .test_replay_reference import Flat, Job, simulate


def work(jobs) -> Workload:
    """A workload of (submit, run, estimate, size) jobs, in queue order (job ids 1, 2, ...)."""
    n = len(jobs)

    def col(k):
        return np.array([job[k] for job in jobs], dtype=np.int64).reshape(n)

    return Workload(row=np.arange(n, dtype=np.int64), job_id=np.arange(1, n + 1, dtype=np.int64),
                    submit=col(0), runtime=col(1), estimate=col(2), size=col(3),
                    nodes=np.ones(n, dtype=np.int64), gpus_per_node=col(3),
                    skipped_row=np.zeros(0, dtype=np.int64), skipped_reason=[])


def python_starts(jobs, procs, policy="easy") -> list[int]:
    return run_flat(work(jobs), procs, policy, compiled=False).tolist()


def reference_starts(jobs, procs, policy="easy") -> list[int]:
    done, dropped = simulate([Job(i + 1, s, run, est, 1, size)
                              for i, (s, run, est, size) in enumerate(jobs)], Flat(procs), policy)
    assert dropped == []
    return [done[i + 1].start for i in range(len(jobs))]


# --- the Python engine against the reference scheduler -------------------------------------
@settings(max_examples=examples(60), deadline=None)
@given(flat_queues())
def test_python_engine_matches_the_reference_scheduler(case):
    jobs, procs = case
    for policy in ("easy", "fcfs"):
        assert python_starts(jobs, procs, policy) == reference_starts(jobs, procs, policy), policy


@settings(max_examples=examples(60), deadline=None)
@given(flat_queues(tie_grid=10))
def test_python_engine_matches_the_reference_at_shadow_ties(case):
    """Times on a 10 s grid: ends, arrivals and estimated ends fall on the shadow time."""
    jobs, procs = case
    assert python_starts(jobs, procs) == reference_starts(jobs, procs)


@settings(max_examples=examples(20), deadline=None)
@given(flat_queues(max_jobs=70, max_procs=16))
def test_python_engine_matches_the_reference_on_deeper_queues(case):
    """Queues deep enough for a segment tree of several levels."""
    jobs, procs = case
    assert python_starts(jobs, procs) == reference_starts(jobs, procs)


# --- hand-worked schedules -------------------------------------------------------------------
def test_fcfs_starts_in_queue_order_as_processors_free():
    # 4 processors: 1 (3 procs, 0-10), 2 (2 procs) waits for 1's end at 10, 3 (1 proc) may not
    # pass 2 under FCFS even though one processor is free from 0
    jobs = [(0, 10, 10, 3), (0, 5, 5, 2), (1, 5, 5, 1)]
    assert python_starts(jobs, 4, "fcfs") == [0, 10, 10]
    # EASY: job 3 ends (by its estimate, 6) before the shadow time 10: it starts at 1
    assert python_starts(jobs, 4, "easy") == [0, 10, 1]


def test_backfill_with_extra_processors_past_the_shadow_time():
    # 4 procs. 1: 2 procs 0-10. Head 2 needs 4: shadow 10, extra 0 -> job 3 (1 proc, ends by
    # estimate at 101 > 10) may not start; with the head needing 3 (extra 1) it may.
    assert python_starts([(0, 10, 10, 2), (1, 5, 5, 4), (2, 100, 100, 1)], 4) == [0, 10, 15]
    assert python_starts([(0, 10, 10, 2), (1, 5, 5, 3), (2, 100, 100, 1)], 4) == [0, 10, 2]


def test_backfill_ending_exactly_at_the_shadow_time():
    # shadow 10; job 3 (2 procs) starts at 2 with estimate 8: ends by 10, so it may go
    assert python_starts([(0, 10, 10, 2), (1, 5, 5, 4), (2, 8, 8, 2)], 4) == [0, 10, 2]
    # estimate 9: ends at 11 > 10 and needs 2 > extra 0: it waits until the head has gone
    assert python_starts([(0, 10, 10, 2), (1, 5, 5, 4), (2, 9, 9, 2)], 4) == [0, 10, 15]


def test_early_end_moves_the_shadow_time_earlier():
    # 4 procs. 1: 2 procs estimated until 100 but runs 20; 2: 1 proc until 50 (estimate 50).
    # Head 3 needs 4 procs: shadow 100. At 20 job 1 ends early: the head now needs only job 2's
    # processor, shadow 50. Job 4 (1 proc, estimate 40) arriving at 25: ends at 65 > 50 and
    # extra is 0 at 50, so it must wait for the head (50..60), then starts at 60.
    jobs = [(0, 20, 100, 2), (0, 50, 50, 1), (1, 10, 10, 4), (25, 40, 40, 1)]
    assert python_starts(jobs, 4) == [0, 0, 50, 60]
    assert reference_starts(jobs, 4) == [0, 0, 50, 60]


def test_early_end_smaller_than_the_gap_keeps_the_shadow_and_grows_extra():
    # 6 procs. 1: 3 procs until 100; 2: 2 procs estimated until 200 but runs 10; head 3 needs
    # 4: free 1 + job 1's 3 at 100 -> shadow 100, extra 0 (job 2 still holds its 2 then).
    # Job 2 ends at 10: free 3 < 4, the shadow stays at 100 and job 2's 2 processors are now
    # spare there (extra 2): job 4 (2 procs, long) arriving at 20 may start at once; the head
    # still starts at 100 with 1 + 3 = 4 processors.
    jobs = [(0, 100, 100, 3), (0, 10, 200, 2), (1, 10, 10, 4), (20, 500, 500, 2)]
    assert python_starts(jobs, 6) == [0, 0, 100, 20] == reference_starts(jobs, 6)
    # extra grew by job 2's 2 processors, no more: a job 4 of 3 processors waits for the
    # head's end (110: at 100 the head leaves it 2)
    jobs[3] = (20, 500, 500, 3)
    assert python_starts(jobs, 6) == [0, 0, 100, 110] == reference_starts(jobs, 6)


def test_early_end_of_the_first_running_job_drops_the_reservation_of_job_1():
    # 4 procs. Job 0: 2 procs estimated until 100, runs 20. Head job 1 (4 procs): shadow 100;
    # job 2 (1 proc, 2..32) backfills. At 20 job 0 ends early: 3 free, the head's shadow is now
    # job 2's end, 32, with nothing spare. Job 3 (1 proc, 10 s) arriving at 25 would end at 35:
    # it waits for the head (32..42). With the old shadow (100) kept, it would have started at 25.
    jobs = [(0, 20, 100, 2), (1, 10, 10, 4), (2, 30, 30, 1), (25, 10, 10, 1)]
    assert python_starts(jobs, 4) == [0, 32, 2, 42] == reference_starts(jobs, 4)


def test_early_end_of_a_job_estimated_to_end_at_the_shadow_time_adds_no_extra():
    # 8 procs. Job 0 (4 procs, until 100) and job 1 (2 procs, estimated until 100, ends at 10);
    # the head, job 2, needs 5 (2 free): shadow 100, extra 4 + 2 + 2 - 5 = 3. Job 3 (1 proc,
    # 2..5) makes the pass reserve at 2. Job 1's early end leaves the shadow and extra as they
    # were (its processors were counted at 100 already): job 4 (4 procs, long) arriving at 20
    # needs more than 3 and waits for the head (100..110).
    jobs = [(0, 100, 100, 4), (0, 10, 100, 2), (1, 10, 10, 5), (2, 3, 3, 1), (20, 500, 500, 4)]
    assert python_starts(jobs, 8) == [0, 0, 100, 2, 110] == reference_starts(jobs, 8)


def test_early_ends_that_add_up_to_the_gap_move_the_shadow_time_earlier():
    # 11 procs, from 0: P (2 procs, until 50), K (3, until 100), E1 (2, estimated until 300,
    # ends at 10), E2 (1, estimated until 300, ends at 20): 3 free. The head (8) needs 5 more:
    # P's 2 and K's 3, shadow 100; 3 more free processors before 100 (the gap) let it go at P's
    # end instead. Y (3 procs, long) cannot backfill at 2 (nothing spare at 100), nor at 10
    # (only E1's 2 spare). At 20 E1 and E2 have freed the 3: the shadow is 50 with nothing spare,
    # so Y still waits and the head starts at 50 (not at 100 behind a backfilled Y).
    jobs = [(0, 50, 50, 2), (0, 100, 100, 3), (0, 10, 300, 2), (0, 20, 300, 1), (1, 10, 10, 8),
            (2, 1000, 1000, 3)]
    assert python_starts(jobs, 11) == [0, 0, 0, 0, 50, 60] == reference_starts(jobs, 11)


def test_early_end_after_the_shadow_time_adds_to_the_spare_processors():
    # 8 procs, from 0: P (2, until 50), K (3, until 100), E1 (1, estimated until 300, ends at
    # 10): 2 free. The head (6) has its shadow at 100 with 1 spare processor; Y (2 procs,
    # long) cannot backfill at 2. E1's early end adds its processor to the spare ones (now 2):
    # Y starts at 10, and the head still starts at 100.
    jobs = [(0, 50, 50, 2), (0, 100, 100, 3), (0, 10, 300, 1), (1, 10, 10, 6), (2, 1000, 1000, 2)]
    assert python_starts(jobs, 8) == [0, 0, 0, 100, 10] == reference_starts(jobs, 8)


def test_every_job_ending_by_the_shadow_time_counts_in_the_spare_processors():
    # 13 procs: P (4), A (2), B (2) all until 100, 5 free. The head (8) has its shadow at 100,
    # where 5 + 4 + 2 + 2 - 8 = 5 processors are spare: Y (4 procs, long) backfills at 2.
    jobs = [(0, 100, 100, 4), (0, 100, 100, 2), (0, 100, 100, 2), (1, 10, 10, 8),
            (2, 1000, 1000, 4)]
    assert python_starts(jobs, 13) == [0, 0, 0, 100, 2] == reference_starts(jobs, 13)


def test_a_backfill_never_takes_more_than_the_free_processors():
    # 10 procs: P (8, until 100), 2 free. The head (3) has 10 - 3 = 7 spare processors at 100,
    # but only 2 are free now: A (1) backfills, then X (2) no longer fits, Z (1) does.
    jobs = [(0, 100, 100, 8), (1, 10, 10, 3), (1, 1000, 1000, 1), (1, 1000, 1000, 2),
            (1, 1000, 1000, 1)]
    assert python_starts(jobs, 10) == [0, 100, 1, 100, 1] == reference_starts(jobs, 10)


def test_zero_length_jobs_end_at_their_start_and_free_the_pool_in_the_same_instant():
    # 1 processor: 1 runs 0 s at 5, 2 (submitted at 5 too) starts at 5 once 1's end is applied
    assert python_starts([(5, 0, 0, 1), (5, 3, 3, 1), (5, 0, 0, 1)], 1) == [5, 5, 8]


def test_negative_submit_times_and_job_order_ties():
    jobs = [(-100, 10, 10, 1), (-100, 10, 10, 1), (-95, 1, 1, 1)]
    assert python_starts(jobs, 1, "fcfs") == [-100, -90, -80]
    assert python_starts(jobs, 2, "fcfs") == [-100, -100, -90]


def test_times_from_2_62_s_on_are_replayed_by_the_python_engine():
    """Such times do not fit the compiled twin's int64 keys: the Python engine replays them
    (it once took 2**62 as "no more events": the job submitted then was never started and kept
    start 0, and a later one crashed with an IndexError)."""
    big = 1 << 62
    jobs = [(0, 1, 1, 1), (big, 1, 1, 1), (big + 5, 3, 3, 1), (big + 5, 1, 1, 1)]
    assert not fits_int64_keys(work(jobs))
    assert run_flat(work(jobs), 1, "easy").tolist() == [0, big, big + 5, big + 8]
    assert reference_starts(jobs, 1) == [0, big, big + 5, big + 8]
    # a run time past 2**62: the job behind it starts at its end
    jobs = [(0, big + 10, big + 10, 1), (1, 1, 1, 1)]
    assert run_flat(work(jobs), 1, "fcfs").tolist() == [0, big + 10] == reference_starts(jobs, 1)


def test_python_engine_returns_int64_start_times():
    out = run_flat(work([(0, 1, 1, 1), (0, 1, 1, 1)]), 1, "fcfs", compiled=False)
    assert out.dtype == np.int64 and out.tolist() == [0, 1]


# --- run_flat: empty input, compiled or Python ----------------------------------------------
def test_empty_workload_gives_an_empty_int64_array():
    for compiled in (None, True, False):
        out = run_flat(work([]), 4, "easy", compiled=compiled)
        assert out.dtype == np.int64 and out.shape == (0,)


class _Twin:
    """A stand-in for ``_engine_flat``: records its call and answers -1 for every job."""

    def __init__(self):
        self.calls = []

    def run_flat_compiled(self, submit, runtime, size, estimate, procs, easy):
        self.calls.append(([a.tolist() for a in (submit, runtime, size, estimate)],
                           [a.dtype for a in (submit, runtime, size, estimate)], procs, easy))
        return np.full(len(submit), -1, dtype=np.int64)


@pytest.fixture
def twin(monkeypatch):
    stand_in = _Twin()
    loaded = []
    monkeypatch.setattr(engine_flat, "load",
                        lambda name, what: loaded.append(name) or stand_in)
    stand_in.loaded = loaded
    return stand_in


def test_replays_of_1000_jobs_or_more_run_the_compiled_twin(twin):
    assert COMPILED_MIN_JOBS == 1_000  # the documented cross-over (CHANGELOG, DEVELOPING.md)
    small = [(i, 1, 1, 1) for i in range(999)]
    assert run_flat(work(small), 1, "easy").tolist() == list(range(999))  # Python: real starts
    assert twin.calls == []
    big = [(i, 1, 1, 1) for i in range(1000)]
    assert run_flat(work(big), 1, "easy").tolist() == [-1] * 1000
    assert twin.loaded == ["swftools.replay._engine_flat"]
    assert len(twin.calls) == 1


def test_the_twin_gets_the_columns_as_int64_and_the_policy_as_a_flag(twin):
    jobs = [(0, 5, 7, 2), (3, 4, 6, 1)]
    w = work(jobs)
    w.submit = w.submit.astype(np.int32)  # any integer dtype is handed over as int64
    assert run_flat(w, 3, "easy", compiled=True).tolist() == [-1, -1]
    assert run_flat(w, 3, "fcfs", compiled=True).tolist() == [-1, -1]
    expected = [[0, 3], [5, 4], [2, 1], [7, 6]]  # submit, run, size, estimate
    assert twin.calls == [(expected, [np.dtype(np.int64)] * 4, 3, True),
                          (expected, [np.dtype(np.int64)] * 4, 3, False)]
    assert twin.loaded == ["swftools.replay._engine_flat"] * 2


def test_compiled_false_never_loads_the_twin(twin):
    assert run_flat(work([(0, 1, 1, 1)] * 1000), 1, "fcfs", compiled=False)[-1] == 999
    assert twin.loaded == [] and twin.calls == []


def test_python_runs_when_the_twin_was_not_built(monkeypatch):
    monkeypatch.setattr(engine_flat, "load", lambda name, what: None)
    two = work([(0, 2, 2, 1), (0, 2, 2, 1)])
    assert run_flat(two, 1, "fcfs", compiled=True).tolist() == [0, 2]


def test_the_notice_names_the_flat_pool_replay_when_the_twin_was_not_built(monkeypatch, capsys):
    import sys

    from swftools import extensions

    monkeypatch.setitem(sys.modules, "swftools.replay._engine_flat", None)
    monkeypatch.setattr(extensions, "_told", set())
    two = work([(0, 2, 2, 1), (0, 2, 2, 1)])
    assert run_flat(two, 1, "fcfs", compiled=True).tolist() == [0, 2]
    assert ("swftools.replay._engine_flat is not built; the flat-pool replay runs in pure Python"
            in capsys.readouterr().err)


# --- fits_int64_keys: the largest key ``time << shift | job`` must stay below 2**62 ----------
def _largest_key_fits(submit_max, runtime_sum, estimate_max, n):
    """The rule worked from the keys: every time is at most the last submission plus all run
    times plus the largest estimate; the job index needs ``shift`` bits below it."""
    shift = max(1, n.bit_length())
    latest = submit_max + runtime_sum + estimate_max
    return ((latest << shift) | (n - 1)) < 2**62


def test_fits_int64_keys_at_the_upper_limit():
    for n in (1, 2, 3, 4, 5):
        shift = max(1, n.bit_length())
        for latest in ((1 << (62 - shift)) - 1, 1 << (62 - shift)):
            # all n jobs submitted at 0; one runs `latest - 1` s, estimates 1 s
            jobs = [(0, latest - 1 if i == 0 else 0, 1, 1) for i in range(n)]
            expected = _largest_key_fits(0, latest - 1, 1, n)
            assert fits_int64_keys(work(jobs)) is expected, (n, latest)
        assert expected is False


def test_fits_int64_keys_counts_the_submission_run_times_and_largest_estimate():
    half = 1 << 59  # n = 2: shift 2, times must stay below 2**60
    assert fits_int64_keys(work([(half, 0, 0, 1), (half, 0, half - 1, 1)]))
    assert not fits_int64_keys(work([(half, 0, 0, 1), (half, 0, half, 1)]))
    assert not fits_int64_keys(work([(0, half, 0, 1), (0, half, 0, 1)]))  # run times add up
    assert fits_int64_keys(work([(0, half - 1, 0, 1), (0, half, 0, 1)]))
    assert not fits_int64_keys(work([(1, half, 0, 1), (half - 1, 1, 0, 1)]))
    assert fits_int64_keys(work([(1, half - 2, 0, 1), (half - 1, 2, 0, 1)]))


def test_fits_int64_keys_at_the_lower_limit():
    low = 1 << 60  # n = 2: shift 2
    assert fits_int64_keys(work([(-low + 1, 0, 0, 1), (0, 0, 0, 1)]))
    assert not fits_int64_keys(work([(-low, 0, 0, 1), (0, 0, 0, 1)]))


def test_fits_int64_keys_with_a_late_capacity_change():
    half = 1 << 60  # n = 1: shift 1, times must stay below 2**61
    one = work([(0, 0, 0, 1)])
    assert fits_int64_keys(one, last_change=half - 1) and fits_int64_keys(one, last_change=0)
    assert not fits_int64_keys(one, last_change=2 * half)
    assert fits_int64_keys(one, last_change=2 * half - 1)
    # an earlier change does not lower the bound the last submission sets
    late = work([(2 * half, 0, 0, 1)])
    assert not fits_int64_keys(late, last_change=0)


def test_an_empty_workload_fits():
    assert fits_int64_keys(work([])) and fits_int64_keys(work([]), last_change=1 << 70)
