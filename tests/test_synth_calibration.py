"""The paper's figures as measured by ``swftools.synth.calibration``: filters and formulas."""

from __future__ import annotations

import numpy as np
import pytest

from swftools import table as jt
from swftools.synth.calibration import TARGETS, balanced_sample, compare, measure


def _table(rows):
    keys = ("user", "queue", "nodes", "gpus_per_node", "requested_walltime_s", "termcode",
            "walltime_s")
    cols = {k: [r[i] for r in rows] for i, k in enumerate(keys)}
    cols["gpus"] = [n * g for n, g in zip(cols["nodes"], cols["gpus_per_node"], strict=True)]
    cols["job_id"] = list(range(1, len(rows) + 1))
    cols["submit_time"] = [1_500_000_000 + 10 * i for i in range(len(rows))]
    return jt.from_columns(cols)


ROWS = [
    # user, queue, nodes, per node, requested, termcode, walltime
    ("a", "Normal", 1, 1, 259200, 0, 3600),   # at the Normal maximum, WRA 1/72
    ("a", "Short", 1, 1, 10800, 0, 1080),     # at the Short maximum, WRA 0.1
    ("b", "Normal", 1, 4, 36000, 0, 18000),   # single-node multi-GPU, WRA 0.5
    ("b", "Normal", 2, 8, 7200, 0, 720),      # multi-node, WRA 0.1
    ("c", "Normal", 1, 1, 3600, 1, 1800),     # failed: not in WRA or walltime figures
    ("c", "Normal", 1, 8, 3600, 0, 30),       # shorter than 60 s: left out everywhere but success
]


def test_filters_and_figures():
    f = measure(_table(ROWS))
    assert f["jobs"] == 6 and f["jobs_min_60s"] == 5 and f["jobs_successful_min_60s"] == 4
    assert f["success_share"] == pytest.approx(5 / 6)
    assert f["single_gpu_share"] == pytest.approx(3 / 5)
    assert f["single_node_share"] == pytest.approx(4 / 5)
    assert f["wra_mean"] == pytest.approx((1 / 72 + 0.1 + 0.5 + 0.1) / 4)
    assert f["wra_median"] == pytest.approx(0.1)
    assert f["max_request_share"] == pytest.approx(2 / 4)
    assert f["median_walltime_h_single_gpu"] == pytest.approx((1 + 0.3) / 2)
    assert f["median_walltime_h_single_node_multi_gpu"] == pytest.approx(5.0)
    assert f["median_walltime_h_multi_node"] == pytest.approx(0.2)
    assert f["users"] == 3


def test_correlations_are_rank_and_log_based():
    rows = [("u", "Normal", 1, g, 10**6, 0, w) for g, w in
            [(1, 100), (1, 200), (2, 400), (4, 800), (8, 1600)]]
    f = measure(_table(rows))
    # tied GPU counts get their average rank
    ranks = np.corrcoef([1.5, 1.5, 3, 4, 5], [1, 2, 3, 4, 5])[0, 1]
    assert f["spearman_balanced"] == pytest.approx(ranks)
    assert f["pearson_log_balanced"] == pytest.approx(np.corrcoef(
        np.log([1, 1, 2, 4, 8]), np.log([100, 200, 400, 800, 1600]))[0, 1])


def test_balanced_sample_takes_each_class_up_to_its_quota():
    gpus = np.array([1] * 50 + [2] * 7 + [16] * 3)
    picked = balanced_sample(gpus, sample_seed=1, per_class=20)
    assert (gpus[picked] == 1).sum() == 20 and (gpus[picked] > 1).sum() == 10
    assert np.array_equal(picked, balanced_sample(gpus, sample_seed=1, per_class=20))


def test_compare_reports_every_target():
    figures = {name: target for name, (target, _, _) in TARGETS.items()}
    rows = compare(figures)
    assert [r[0] for r in rows] == list(TARGETS) and all(r[5] for r in rows)
    figures["wra_median"] = 0.040 * 1.11
    assert not dict((r[0], r[5]) for r in compare(figures))["wra_median"]


def test_one_table_of_published_values():
    """Calibration targets and the report's paper column come from schemas/aaic-paper.json."""
    from swftools.report.summary import PAPER
    from swftools.synth.calibration import published

    figures = published()["figures"]
    assert all({"key", "value", "unit", "source"} <= set(f) for f in figures)
    by_measure = {f["calibration"]["measure"]: f for f in figures if "calibration" in f}
    assert list(by_measure) == list(TARGETS)
    for measure, (value, _, _) in TARGETS.items():
        assert PAPER[by_measure[measure]["key"]] == value
    assert PAPER == {f["key"]: f["value"] for f in figures}
