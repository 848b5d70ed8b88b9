"""swftools.report.correlation: Spearman and log-log Pearson, balanced sample and all jobs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.report import correlation
from swftools.report.frame import is_skipped, prepare
from swftools.site import load_site
from tests.report_support import aaic_table

AAIC = load_site("aaic")


@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.integers(0, 300))
def test_balanced_sample_takes_up_to_n_of_each_class(seed, singles, multis):
    pes = np.array([1] * singles + [4] * multis)
    picks = correlation.balanced_sample(pes, seed, per_class=100)
    assert len(np.unique(picks)) == len(picks)
    assert (pes[picks] == 1).sum() == min(singles, 100)
    assert (pes[picks] > 1).sum() == min(multis, 100)
    assert np.array_equal(picks, correlation.balanced_sample(pes, seed, per_class=100))


def test_seed_changes_the_sample():
    pes = np.array([1] * 5000 + [2] * 5000)
    assert not np.array_equal(correlation.balanced_sample(pes, 0),
                              correlation.balanced_sample(pes, 1))


def test_coefficients_match_an_independent_computation():
    rng = np.random.default_rng(7)
    pes = rng.choice([1, 2, 4, 8], 500).astype(float)
    walltime = np.exp(rng.normal(7, 1, 500)) * pes ** 0.3 + 60
    result = correlation.coefficients(pes, walltime)
    ranks = pd.DataFrame({"p": pes, "w": walltime}).rank(method="average")
    assert result["spearman"] == pytest.approx(np.corrcoef(ranks.p, ranks.w)[0, 1])
    assert result["pearson_log"] == pytest.approx(np.corrcoef(np.log(pes), np.log(walltime))[0, 1])
    assert 0 <= result["spearman_p_value"] <= 1


def test_perfectly_monotone_data_gives_one():
    pes = np.array([1.0, 2.0, 4.0, 8.0])
    result = correlation.coefficients(pes, pes * 100)
    assert result["spearman"] == pytest.approx(1.0)
    assert result["pearson_log"] == pytest.approx(1.0)


def test_analysis_on_a_table():
    rows = [{"gpus_per_node": 1, "walltime_s": 600 + 10 * i} for i in range(50)]
    rows += [{"gpus_per_node": 8, "walltime_s": 6000 + 10 * i} for i in range(20)]
    result = correlation.analyze(prepare(aaic_table(rows), AAIC), seed=3)
    sample = result["balanced_sample"]
    assert (sample["single_pe_jobs"], sample["multi_pe_jobs"]) == (50, 20)
    assert result["all_jobs"]["jobs"] == 70
    # Every multi-GPU job runs longer than every single-GPU job: the rank correlation is the
    # point-biserial correlation of the class with the walltime ranks.
    ranks = np.arange(70)
    assert sample["spearman"] == pytest.approx(np.corrcoef(ranks >= 50, ranks)[0, 1])
    assert [b["bin"] for b in result["walltime_h_by_pe_bin"]] == ["1", "5-8"]
    assert result["walltime_h_by_pe_bin"][0]["median"] == pytest.approx((600 + 10 * 24.5) / 3600)


def test_all_single_pe_jobs_skip_with_reason():
    result = correlation.analyze(prepare(aaic_table([{"walltime_s": 100}] * 5), AAIC))
    assert is_skipped(result) and "does not vary" in result["reason"]
