"""The calibrated synthetic AAIC-like generator (``swftools.synth.jobs``) and ``swftools synth``."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from swftools.formats import nqsii
from swftools import table as jt
from swftools.cli import app
from swftools.site import load_site
from swftools.synth.jobs import generate
from swftools.synth.calibration import TARGETS, compare, measure

CALIBRATION_JOBS = 40_000
SITE = load_site("aaic")
QUEUES = {q.name: q for q in SITE.queues}


@pytest.fixture(scope="module")
def trace() -> pa.Table:
    return generate(CALIBRATION_JOBS, seed=0)


@pytest.fixture(scope="module")
def frame(trace):
    return trace.to_pandas()


def _without_metadata(table: pa.Table) -> pa.Table:
    return table.replace_schema_metadata(None)


# --- determinism and prefix stability ------------------------------------------------------

def test_same_seed_same_table():
    assert generate(3000, seed=5).equals(generate(3000, seed=5), check_metadata=True)


def test_other_seed_other_table():
    one, two = generate(500, seed=1), generate(500, seed=2)
    assert not _without_metadata(one).equals(_without_metadata(two))


@settings(max_examples=25)
@given(st.integers(0, 400), st.integers(1, 400), st.integers(0, 3))
def test_prefix_stable(n, m, seed):
    short, long = generate(n, seed), generate(n + m, seed)
    assert _without_metadata(short).equals(_without_metadata(long.slice(0, n)))


def test_prefix_stable_across_sweeps_and_blocks():
    # long enough to cross several 4096-draw refills and many sweeps
    long = generate(12_000, seed=9)
    short = generate(9_999, seed=9)
    assert _without_metadata(short).equals(_without_metadata(long.slice(0, 9_999)))


def test_zero_jobs():
    table = generate(0)
    assert table.num_rows == 0 and table.schema.equals(jt.arrow_schema())


@pytest.mark.parametrize("kwargs", [{"n_jobs": -1}, {"n_jobs": 10, "seed": -3},
                                    {"n_jobs": 10, "nodes": 0}, {"n_jobs": 10, "users": 0},
                                    {"n_jobs": 10, "start": "2017-07-14T00:00:00"},
                                    {"n_jobs": 10, "start": "yesterday"}])
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        generate(**kwargs)


# --- the table -----------------------------------------------------------------------------

def test_metadata_and_schema():
    table = generate(10, seed=4, nodes=20)
    assert table.schema.equals(jt.arrow_schema())
    meta = jt.get_metadata(table)
    assert meta["site"] == "aaic" and meta["time_zone"] == "Asia/Tokyo"
    assert meta["source_format"] == "synth"
    assert (meta["synth"]["seed"], meta["synth"]["n_jobs"], meta["synth"]["nodes"]) == (4, 10, 20)


def test_columns_are_consistent(frame):
    assert frame["job_id"].tolist() == list(range(1, len(frame) + 1))
    assert (np.diff(frame["submit_time"]) >= 0).all()
    assert (frame["wait_s"] == frame["start_time"] - frame["submit_time"]).all()
    assert (frame["walltime_s"] == frame["finish_time"] - frame["start_time"]).all()
    assert (frame["wait_s"] >= 0).all() and (frame["walltime_s"] >= 0).all()
    assert (frame["gpus"] == frame["nodes"] * frame["gpus_per_node"]).all()
    swf_only = ["avg_cpu_time_s", "used_memory_kb", "requested_procs", "requested_memory_kb",
                "swf_status", "executable", "partition", "preceding_job_id", "think_time_s"]
    assert frame[swf_only].isna().all().all()
    start = datetime.fromisoformat("2017-07-14T00:00:00+09:00").timestamp()
    assert frame["submit_time"].min() >= start


def test_users_and_groups(frame):
    assert frame["user"].str.fullmatch(r"user\d{4}").all()
    assert frame["group"].str.fullmatch(r"grp\d{2}").all()
    assert frame["user"].nunique() <= 106
    assert (frame.groupby("user")["group"].nunique() == 1).all()  # one group per user
    assert 10 <= frame["group"].nunique() <= 20
    jobs_per_user = frame["user"].value_counts()
    assert jobs_per_user.iloc[0] > 10 * jobs_per_user.median()  # heavy-tailed activity


def test_queue_limits_and_outcomes(frame):
    grace = SITE.walltime_grace_s
    assert set(frame["queue"]) <= set(QUEUES)
    assert frame["queue"].value_counts(normalize=True).idxmax() == "Normal"
    assert frame["queue"].value_counts(normalize=True)["Normal"] > 0.75
    for name, jobs in frame.groupby("queue"):
        q = QUEUES[name]
        assert jobs["nodes"].between(q.nodes_min, q.nodes_max).all(), name
        assert jobs["gpus_per_node"].between(q.gpus_per_node_min, q.gpus_per_node_max).all(), name
        assert (jobs["requested_walltime_s"] <= q.walltime_max_s).all(), name
    assert (frame.loc[frame["nodes"] > 1, "gpus_per_node"] == 8).all()
    ok = frame[frame["termcode"] == 0]
    assert (ok["walltime_s"] <= ok["requested_walltime_s"]).all()
    over = frame[frame["termcode"] == 2]
    assert len(over) > 0
    assert over["walltime_s"].between(over["requested_walltime_s"],
                                      over["requested_walltime_s"] + grace).all()
    others = frame[frame["termcode"] != 2]
    assert (others["walltime_s"] <= others["requested_walltime_s"]).all()
    never_ran = frame[(frame["termcode"] == 3) & (frame["walltime_s"] == 0)]
    assert (never_ran["start_time"] == never_ran["finish_time"]).all()
    assert set(frame["termcode"]) == {0, 1, 2, 3, 4}


def _assert_feasible(frame, nodes: int, gpus_per_node: int = 8) -> None:
    ran = frame[frame["walltime_s"] > 0]
    times = np.concatenate([ran["start_time"], ran["finish_time"]])
    deltas = np.concatenate([ran["gpus"], -ran["gpus"]])
    order = np.lexsort((deltas, times))  # at equal instants, releases before starts
    busy = np.cumsum(deltas[order])
    assert busy.max() <= nodes * gpus_per_node
    whole = np.concatenate([ran["nodes"].where(ran["nodes"] > 1, 0),
                            -ran["nodes"].where(ran["nodes"] > 1, 0)])
    assert np.cumsum(whole[order]).max() <= nodes  # multi-node jobs: whole nodes


def test_schedule_never_uses_more_gpus_than_exist(frame):
    _assert_feasible(frame, 38)
    assert frame["wait_s"].median() < 3600  # a usable cluster, not a saturated one


def test_small_cluster_schedule_is_feasible():
    table = generate(5000, seed=3, nodes=3)
    frame = table.to_pandas()
    assert frame["nodes"].max() <= 3
    _assert_feasible(frame, 3)


def test_node_level_packing_holds():
    # placements come from the scheduler itself; re-check them GPU by GPU
    from swftools.synth import jobs as synth_module
    from swftools.synth.schedule import schedule

    columns = synth_module._draw_jobs(3000, 11, 1_500_000_000, 4, 8, 106,
                                      synth_module.ShapeModel(), "Asia/Tokyo")
    placements: list = []
    start, finish = schedule(columns["submit_time"], columns["nodes"], columns["gpus_per_node"],
                             columns["run_s"], columns["cancel_at_s"], 4, 8, placements)
    held: dict = {}
    for i, gpus in enumerate(placements):
        assert len(gpus) == columns["nodes"][i] * columns["gpus_per_node"][i] or not gpus
        assert len({n for n, _ in gpus}) in (0, columns["nodes"][i])
        for gpu in gpus:
            held.setdefault(gpu, []).append((start[i], finish[i]))
    for intervals in held.values():
        intervals.sort()
        assert all(b >= e for (_, e), (b, _) in zip(intervals, intervals[1:]))


# --- distributions -------------------------------------------------------------------------

def test_arrivals_peak_in_weekday_business_hours(frame):
    local = [datetime.fromtimestamp(t, ZoneInfo("Asia/Tokyo"))
             for t in frame["submit_time"].to_numpy()[::7]]
    weekday = np.array([d.weekday() < 5 for d in local])
    business = np.array([9 <= d.hour < 19 for d in local])
    assert (weekday & business).mean() > 0.5  # 50 of 168 weekly hours hold most submissions
    weekday_rate, weekend_rate = weekday.mean() / 5, (~weekday).mean() / 2
    assert weekend_rate < 0.6 * weekday_rate


def test_sweeps_are_bursts_of_similar_jobs(frame):
    # tens to hundreds of jobs from one user within a few minutes, same shape and request
    windows = frame.assign(window=frame["submit_time"] // 600)
    bursts = windows.groupby(["user", "window"]).agg(
        jobs=("job_id", "size"), shapes=("gpus", "nunique"),
        requests=("requested_walltime_s", "nunique"))
    big = bursts[bursts["jobs"] >= 30]
    assert len(big) >= 20
    assert bursts["jobs"].max() >= 100
    assert (big["shapes"] == 1).mean() > 0.8 and (big["requests"] <= 2).mean() > 0.8


def test_multi_gpu_counts_prefer_powers_of_two(frame):
    single_node = frame[(frame["nodes"] == 1) & (frame["gpus"] > 1)]["gpus"]
    assert single_node.isin([2, 4, 8]).mean() > 0.85
    multi_node = frame[frame["nodes"] > 1]["nodes"]
    assert multi_node.isin([2, 4, 8, 16]).mean() > 0.85


@pytest.mark.parametrize("seed", [0, 2019])
def test_calibration_figures_within_tolerance(seed, trace):
    table = trace if seed == 0 else generate(CALIBRATION_JOBS, seed=seed)
    figures = measure(table)
    misses = [f"{name}: {value:.4f} vs {target} (±{tol} {kind})"
              for name, value, target, tol, kind, ok in compare(figures) if not ok]
    assert not misses, misses
    assert set(TARGETS) <= set(figures)
    assert figures["single_node_share"] == pytest.approx(0.99, abs=0.01)
    assert figures["users"] > 50


# --- command line --------------------------------------------------------------------------

runner = CliRunner()


def test_cli_writes_a_raw_log_that_reads_back(tmp_path):
    out = tmp_path / "synth.csv.gz"
    result = runner.invoke(app, ["synth", "--jobs", "800", "--seed", "7", "--out", str(out)])
    assert result.exit_code == 0, result.output
    back = nqsii.read(out)
    expected = generate(800, seed=7)
    cols = ["job_id", "user", "group", "queue", "nodes", "gpus_per_node", "gpus",
            "requested_walltime_s", "termcode", "submit_time", "start_time", "finish_time",
            "wait_s", "walltime_s"]
    assert back.select(cols).equals(expected.select(cols))


def test_cli_published_form(tmp_path):
    out = tmp_path / "synth.csv"
    result = runner.invoke(app, ["synth", "--jobs", "300", "--seed", "1", "--form", "published",
                                 "--nodes", "10", "--out", str(out)])
    assert result.exit_code == 0, result.output
    header, first = out.read_text().splitlines()[:2]
    assert header.startswith("job_id, user, group, queue")
    assert re.fullmatch(r"1, \d+, \d+, [1-4], .*", first)
    back = nqsii.read(out)
    expected = generate(300, seed=1, nodes=10)
    for col in ("nodes", "gpus", "requested_walltime_s", "termcode", "submit_time", "walltime_s"):
        assert back.column(col).equals(expected.column(col))


def test_cli_output_is_deterministic_and_never_clobbered(tmp_path):
    a, b = tmp_path / "a.csv.gz", tmp_path / "b.csv.gz"
    for out in (a, b):
        result = runner.invoke(app, ["synth", "--jobs", "500", "--seed", "3", "--out", str(out)])
        assert result.exit_code == 0
    assert a.read_bytes() == b.read_bytes()
    before = a.read_bytes()
    result = runner.invoke(app, ["synth", "--jobs", "50", "--seed", "3", "--out", str(a)])
    assert result.exit_code == 2 and "already exists" in result.output
    assert a.read_bytes() == before
    result = runner.invoke(app, ["synth", "--jobs", "50", "--seed", "3", "--force", "--out", str(a)])
    assert result.exit_code == 0 and a.read_bytes() != before


@pytest.mark.parametrize("args", [["--jobs", "0"], ["--jobs", "5", "--form", "swf"],
                                  ["--jobs", "5", "--nodes", "0"], ["--seed", "1"]])
def test_cli_usage_errors(tmp_path, args):
    out = tmp_path / "x.csv"
    result = runner.invoke(app, ["synth", *args, "--out", str(out)])
    assert result.exit_code == 2
    assert not out.exists()
