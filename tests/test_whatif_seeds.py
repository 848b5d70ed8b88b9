"""The seeds' figures (issue 25): seed 001's static estimate by hand, PAL-style change words, and
the what-if page's generated seeds section (``docs/guide/whatif.md``) equal to a fresh run of
``benchmarks/seeds.py``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pyarrow as pa
import pytest

from swftools.errors import UsageError
from swftools.whatif.seeds import (
    change_text,
    changes,
    model_utilization,
    pal_metrics,
    sensitivity_jobs,
    static_estimate,
)
from swftools.whatif.sensitivity import load_sensitivity

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("seeds_script", ROOT / "benchmarks" / "seeds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_static_estimate_odd_count_by_hand():
    """Gains 2.0, 1.5, 1.0: median 1.5; only A is above it (B, at the median, stays slow).
    even = 75 + 75 + 40 = 190, priority = 50 + 90 + 40 = 180."""
    est = static_estimate([("A", 100, 50), ("B", 90, 60), ("C", 40, 40)])
    assert est.median_gain == 1.5
    assert [(name, on_fast) for name, *_, on_fast in est.jobs] == [
        ("A", True), ("B", False), ("C", False)]
    assert (est.even_s, est.priority_s) == (190.0, 180.0)
    assert est.reduction == pytest.approx(1 - 180 / 190)


def test_static_estimate_even_count_by_hand():
    """Gains 2.0, 1.5, 1.0, 1.25: median (1.25 + 1.5) / 2 = 1.375, so A and B go fast.
    even = 75 + 75 + 40 + 90 = 280, priority = 50 + 60 + 40 + 100 = 250."""
    est = static_estimate([("A", 100, 50), ("B", 90, 60), ("C", 40, 40), ("D", 100, 80)])
    assert est.median_gain == 1.375
    assert [on_fast for *_, on_fast in est.jobs] == [True, True, False, False]
    assert (est.even_s, est.priority_s) == (280.0, 250.0)


def test_static_estimate_of_the_mlperf_table_is_9_24_not_8_24():
    """Seed 001's method on its own MLPerf times: 9.24 % (issue 25), SA and OD on P100s."""
    sens = load_sensitivity("mlperf-p100-v100")
    est = static_estimate(sensitivity_jobs(sens))
    assert round(est.reduction * 100, 2) == 9.24
    fast = {name for name, *_, on_fast in est.jobs if on_fast}
    assert fast == {"IC", "TL", "RT", "SR"}
    assert est.median_gain == pytest.approx((1 * 3600 + 48 * 60 + 14) / (1 * 3600 + 22 * 60 + 50))


def test_static_estimate_bad_input():
    with pytest.raises(UsageError, match="at least one job"):
        static_estimate([])
    with pytest.raises(UsageError, match="job 'X': run times must be positive"):
        static_estimate([("X", 10, 0)])


@pytest.mark.parametrize(("value", "base", "direction", "text"), [
    (103.7, 100, "lower", "+3.7 % worse"),
    (97.3, 100, "lower", "-2.7 % better"),
    (97.3, 100, "higher", "-2.7 % worse"),
    (560, 100, "lower", "x5.60 worse"),
    (0, 100, "lower", "-100.0 % better"),
    (100.04, 100, "lower", "same"),
    (0, 0, "lower", "same"),
    (5, 0, "lower", "n/a (baseline 0)"),
])
def test_change_text(value, base, direction, text):
    assert change_text(value, base, direction) == text


def _jobs(rows):
    cols = ("submit_time", "start_time", "end_time", "wait_s", "run_s", "size", "nodes")
    table = {c: pa.array([r[i] for r in rows], pa.int64()) for i, c in enumerate(cols)}
    table["node_ids"] = pa.array([r[-1] for r in rows], pa.string())
    return pa.table(table)


def test_metrics_model_utilization_and_changes_by_hand():
    """Two 2-GPU nodes, P100 then V100. Job 1: 2 GPUs on node 0 for 100 s; job 2: 2 GPUs over
    both nodes (1 GPU each) for 50 s after a 100 s wait. Span 0..200 s: P100 busy 200 + 50 of
    400 GPU-s, V100 50 of 400."""
    jobs = _jobs([(0, 0, 100, 0, 100, 2, 1, "0"), (50, 150, 200, 100, 50, 2, 2, "0,1")])
    util = model_utilization(jobs, ["P100", "V100"], 2)
    assert util == {"P100": 250 / 400, "V100": 50 / 400}
    m = pal_metrics(jobs, [(0, 4)])
    assert m["p95_wait_s"] == pytest.approx(95.0)  # numpy's linear interpolation of 0 and 100
    assert m["mean_wait_s"] == 50.0 and m["total_run_s"] == 150.0
    base = dict(m, mean_wait_s=25.0, utilization=m["utilization"] * 2)
    assert changes(m, base) == {"better": [], "worse": ["mean wait x2.00", "utilization -50.0 %"]}


def test_docs_static_and_sample_blocks_equal_a_fresh_run():
    """The what-if page's seeds section is generated: its static and sample blocks are what
    ``python benchmarks/seeds.py`` prints now (rerun it with --write-docs when this fails)."""
    seeds = _script()
    page = seeds.PAGE.read_text(encoding="utf-8")
    for name, body in (("static", seeds.static_block()), ("sample", seeds.sample_block())):
        assert not seeds.block_diff(page, name, body), (
            f"docs/guide/whatif.md's seeds:{name} block differs from a fresh run (rerun "
            f"`python benchmarks/seeds.py --write-docs`):\n"
            + seeds.block_diff(page, name, body))


@pytest.mark.slow
def test_docs_trace_block_equals_a_fresh_run():
    seeds = _script()
    body = seeds.trace_block()
    if body is None:
        pytest.skip(f"real trace {seeds.TRACE} not available: {seeds.SHARED / 'traces'} is absent")
    page = seeds.PAGE.read_text(encoding="utf-8")
    assert not seeds.block_diff(page, "trace", body), seeds.block_diff(page, "trace", body)


def test_block_replacement_keeps_the_rest_and_finds_missing_markers():
    seeds = _script()
    text = f"a\n{seeds.begin('static')}\nold\n{seeds.end('static')}\nb\n"
    new = seeds.replace_block(text, "static", "new\nlines")
    assert new == f"a\n{seeds.begin('static')}\nnew\nlines\n{seeds.end('static')}\nb\n"
    assert seeds.page_block(new, "static") == "new\nlines"
    with pytest.raises(ValueError, match="no <!-- seeds:trace:begin"):
        seeds.page_block(text, "trace")


def test_no_wait_split_by_hand():
    """One P100 node, one V100 node (1 GPU each); three 1-GPU jobs of 1,000 s recorded on P100:
    IC (gain 1.507), RM (gain 1.004: a V100 is slightly slower for it), SA (1.307, the median).
    Only IC is above the median. A job's V100 time is 1,000 x its V100 / P100 MLPerf time (one
    GPU: no all-reduce term); its P100 time 1,000. RM, below the median, goes to the P100 as
    ``priority`` sends it (models ranked by mean speed), although the V100 is slower for it."""
    import numpy as np

    from swftools.site import site_from_settings
    from swftools.whatif.seeds import no_wait_split

    from .strategies import whatif_settings
    from .test_replay import gpu_table

    groups = [{"name": "old", "nodes": 1, "gpu_model": "P100", "gpus_per_node": 1},
              {"name": "new", "nodes": 1, "gpu_model": "V100", "gpus_per_node": 1}]
    site = site_from_settings(whatif_settings(2, 1, node_groups=groups))
    sens = load_sensitivity("mlperf-p100-v100")
    table = gpu_table([(1, 0, 1000, 1, 1, 1000), (2, 0, 1000, 1, 1, 1000),
                       (3, 0, 1000, 1, 1, 1000)])
    classes = np.array([sens.index("IC"), sens.index("RM"), sens.index("SA")])
    v100 = {c: 1000 * sens.classes[sens.index(c)].run_time_s["V100"]
            / sens.classes[sens.index(c)].run_time_s["P100"] for c in ("IC", "RM", "SA")}
    split = no_wait_split(table, site, sens, classes)
    assert split.even_s == pytest.approx(sum((1000 + t) / 2 for t in v100.values()))
    assert split.priority_s == pytest.approx(v100["IC"] + 1000 + 1000)
    assert split.fast_s == pytest.approx(sum(v100.values()))
    assert split.fast_share == pytest.approx(1 / 3)
    assert split.cut(split.priority_s) == pytest.approx(1 - split.priority_s / split.even_s)
    one_model = site_from_settings(whatif_settings(2, 1))
    with pytest.raises(UsageError, match="one GPU model: the median split needs two"):
        no_wait_split(table, one_model, sens, classes)
