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


def test_sensitivity_jobs_take_the_first_and_the_last_gpu_model():
    from swftools.whatif.sensitivity import JobClass, Sensitivity

    def cls(name, times):
        return JobClass(name, {"K80": 1.0, "P100": 2.0, "V100": 3.0}, 1.0, 1.0,
                        run_time_s=times)

    sens = Sensitivity("three", "three.json", ("K80", "P100", "V100"),
                       (cls("A", {"K80": 90.0, "P100": 50.0, "V100": 30.0}),
                        cls("B", {"K80": 80.0, "P100": 40.0, "V100": 20.0}),
                        cls("C", None)), (0.5, 0.3, 0.2), True)
    assert sensitivity_jobs(sens, [1, 0]) == [("B", 80.0, 20.0), ("A", 90.0, 30.0)]
    with pytest.raises(UsageError) as exc:
        sensitivity_jobs(sens)
    assert str(exc.value) == ("class C of three gives speeds, not measured run times: the "
                              "static estimate needs run times")


def test_static_estimate_bad_input():
    with pytest.raises(UsageError) as exc:
        static_estimate([])
    assert str(exc.value) == "the static estimate needs at least one job"
    for slow, fast in ((0, 10), (10, 0), (-1, 10)):
        with pytest.raises(UsageError, match="run times must be positive"):
            static_estimate([("X", slow, fast)])
    est = static_estimate([("X", 0.5, 0.25), ("Y", 0.75, 0.5)])  # below one second is fine
    assert est.even_s == pytest.approx(1.0) and est.priority_s == pytest.approx(1.0)
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


def test_metrics_of_an_empty_schedule_are_zero_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = pal_metrics(_jobs([]), [(0, 4)])
        assert model_utilization(_jobs([]), ["P100", "V100", "P100"], 2) == {"P100": 0.0,
                                                                            "V100": 0.0}
    assert m["p95_wait_s"] == 0.0 and m["mean_wait_s"] == 0.0


def test_model_utilization_of_one_job_and_of_a_job_on_no_node():
    """One 2-GPU job on node 1 (V100) for 100 s of a 0..200 s span; a job that held no node
    (no node ids) counts for no model: V100 busy 200 of 400 GPU-s."""
    one = _jobs([(0, 100, 200, 100, 100, 2, 1, "1")])
    assert model_utilization(one, ["P100", "V100"], 2) == {"P100": 0.0, "V100": 0.5}
    none = _jobs([(0, 100, 200, 100, 100, 2, 1, "1"), (0, 0, 0, 0, 0, 0, 0, "")])
    assert model_utilization(none, ["P100", "V100"], 2) == {"P100": 0.0, "V100": 0.5}


def test_model_utilization_over_a_span_of_one_second_and_of_none():
    one_s = _jobs([(0, 0, 1, 0, 1, 2, 1, "1")])
    assert model_utilization(one_s, ["P100", "V100"], 2) == {"P100": 0.0, "V100": 1.0}
    instant = _jobs([(5, 5, 5, 0, 0, 2, 1, "1")])
    assert model_utilization(instant, ["P100", "V100"], 2) == {"P100": 0.0, "V100": 0.0}


def _two_node_site():
    from swftools.site import site_from_settings

    from .strategies import whatif_settings

    groups = [{"name": "old", "nodes": 1, "gpu_model": "P100", "gpus_per_node": 1},
              {"name": "new", "nodes": 1, "gpu_model": "V100", "gpus_per_node": 1}]
    return site_from_settings(whatif_settings(2, 1, node_groups=groups))


def test_no_wait_split_ranks_jobs_by_their_gain_not_by_a_speed():
    """Classes A, B, C run 1.5x, 0.5x and 1.2x as fast on a V100 as on a P100: their gains
    are 1.5, 2.0 (the V100 is the slow side for B) and 1.2, so B alone is above the median
    and is sent to the V100 (the faster model on the mean), where it takes 2,000 s."""
    from swftools.whatif.seeds import no_wait_split
    from swftools.whatif.sensitivity import JobClass, Sensitivity

    from .test_replay import gpu_table

    speeds = {"A": 1.5, "B": 0.5, "C": 1.2}
    sens = Sensitivity("abc", "abc.json", ("P100", "V100"),
                       tuple(JobClass(c, {"P100": 1.0, "V100": v}, 1.0, 1.0)
                             for c, v in speeds.items()), (0.4, 0.3, 0.3), True)
    table = gpu_table([(k, 0, 1000, 1, 1, 1000) for k in (1, 2, 3)])
    split = no_wait_split(table, _two_node_site(), sens, [0, 1, 2])
    v100 = {c: 1000 / v for c, v in speeds.items()}
    assert split.even_s == pytest.approx(sum((1000 + t) / 2 for t in v100.values()))
    assert split.priority_s == pytest.approx(1000 + 2000 + 1000)
    assert split.fast_s == pytest.approx(sum(v100.values()))
    assert split.fast_share == pytest.approx(1 / 3)


def test_no_wait_split_takes_the_slowest_and_the_fastest_of_three_models():
    """K80, P100 and V100 nodes; jobs recorded on the P100 (the trace's model), 1,000 s. A runs
    1:2:3 on them, B 1:2:2.5: on the K80 both take 2,000 s, on the V100 667 and 800 s. Gains
    3.0 and 2.5: A is above the median."""
    from swftools.site import site_from_settings
    from swftools.whatif.seeds import no_wait_split
    from swftools.whatif.sensitivity import JobClass, Sensitivity

    from .strategies import whatif_settings
    from .test_replay import gpu_table

    groups = [{"name": m.lower(), "nodes": 1, "gpu_model": m, "gpus_per_node": 1}
              for m in ("K80", "P100", "V100")]
    site = site_from_settings(whatif_settings(3, 1, node_groups=groups, gpu_model="P100"))
    sens = Sensitivity("kpv", "kpv.json", ("K80", "P100", "V100"),
                       (JobClass("A", {"K80": 1.0, "P100": 2.0, "V100": 3.0}, 1.0, 1.0),
                        JobClass("B", {"K80": 1.0, "P100": 2.0, "V100": 2.5}, 1.0, 1.0)),
                       (0.5, 0.5), True)
    table = gpu_table([(1, 0, 1000, 1, 1, 1000), (2, 0, 1000, 1, 1, 1000)])
    split = no_wait_split(table, site, sens, [0, 1])
    assert split.even_s == pytest.approx((2000 + 2000 / 3) / 2 + (2000 + 800) / 2)
    assert split.priority_s == pytest.approx(2000 / 3 + 2000)
    assert split.fast_s == pytest.approx(2000 / 3 + 800)
    assert split.fast_share == 0.5


def test_no_wait_split_breaks_ties_of_mean_speed_by_the_file_order():
    """Four models, two classes: P100 and V100 tie at the top mean speed (2.0), K80 and M60 at
    the bottom (1.0). The slowest is the first of the tied bottom (K80), the fastest the last
    of the tied top (V100), in the sensitivity file's order; jobs recorded on the P100."""
    from swftools.site import site_from_settings
    from swftools.whatif.seeds import no_wait_split
    from swftools.whatif.sensitivity import JobClass, Sensitivity

    from .strategies import whatif_settings
    from .test_replay import gpu_table

    models = ("P100", "V100", "K80", "M60")
    groups = [{"name": m.lower(), "nodes": 1, "gpu_model": m, "gpus_per_node": 1}
              for m in models]
    site = site_from_settings(whatif_settings(4, 1, node_groups=groups, gpu_model="P100"))
    a = dict(zip(models, (2.0, 3.0, 1.0, 0.5)))
    b = dict(zip(models, (2.0, 1.0, 1.0, 1.5)))
    sens = Sensitivity("ties", "ties.json", models,
                       (JobClass("A", a, 1.0, 1.0), JobClass("B", b, 1.0, 1.0)), (0.5, 0.5), True)
    table = gpu_table([(1, 0, 1000, 1, 1, 1000), (2, 0, 1000, 1, 1, 1000)])
    split = no_wait_split(table, site, sens, [0, 1])
    # A: K80 2,000 s, V100 667 s (gain 6 over all four models); B: K80 2,000 s, V100 2,000 s
    assert split.even_s == pytest.approx((2000 + 2000 / 3) / 2 + 2000)
    assert split.priority_s == pytest.approx(2000 / 3 + 2000)
    assert split.fast_s == pytest.approx(2000 / 3 + 2000)


def test_no_wait_split_of_no_job_is_zero_without_a_warning():
    import warnings

    from swftools.whatif.seeds import NoWaitSplit, no_wait_split

    from .test_replay import gpu_table

    sens = load_sensitivity("mlperf-p100-v100")
    empty = gpu_table([(1, 0, 1000, 1, 1, 1000)]).slice(0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        split = no_wait_split(empty, _two_node_site(), sens, [])
    assert split == NoWaitSplit(0.0, 0.0, 0.0, 0.0)


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
