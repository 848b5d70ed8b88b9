"""Variability profiles (``swftools.whatif.profile``): deterministic scores, k-means classes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import InputError, UsageError
from swftools.site import load_site, site_from_settings
from swftools.whatif.profile import (MAX_SPREAD, cluster_scores, generate_profile, read_profile,
                                     write_profile)
from tests.strategies import whatif_settings, whatif_sites


def _big_site(nodes=500):
    return site_from_settings(whatif_settings(nodes, 8))


def _assert_classes_ordered(profile):
    """Classes 0..k-1 all used, contiguous score intervals, class 0 the fastest."""
    k = profile.n_classes
    assert sorted(np.unique(profile.classes)) == list(range(k))
    for c in range(k - 1):
        assert profile.scores[profile.classes == c].min() >= profile.scores[profile.classes == c + 1].max()


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    site = load_site("aaic")
    a = generate_profile(site, spread=0.05, seed=1)
    b = generate_profile(site, spread=0.05, seed=1)
    c = generate_profile(site, spread=0.05, seed=2)
    assert a.to_csv() == b.to_csv() != c.to_csv()
    write_profile(a, tmp_path / "a.csv")
    write_profile(b, tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    text = (tmp_path / "a.csv").read_text()
    assert text.startswith("node,gpu_index,score,class\n0,0,") and text.count("\n") == 321


def test_classes_are_ordered_by_score():
    profile = generate_profile(load_site("aaic"), spread=0.08, seed=3, classes=4)
    assert profile.n_classes == 4
    _assert_classes_ordered(profile)
    stats = profile.class_stats()
    assert [s["class"] for s in stats] == [0, 1, 2, 3]
    assert all(stats[i]["mean"] > stats[i + 1]["mean"] for i in range(3))


@pytest.mark.parametrize("distribution", ["normal", "uniform"])
@pytest.mark.parametrize("spread", [0.02, 0.1])
def test_spread_is_respected(distribution, spread):
    profile = generate_profile(_big_site(), spread=spread, seed=7, distribution=distribution)
    s = profile.scores.ravel()
    assert s.size == 4000
    assert abs(s.mean() - 1.0) < 0.1 * spread
    # truncation at 3 sigma makes the normal's standard deviation about 1.3 % smaller
    assert 0.9 * spread < s.std() < 1.05 * spread
    bound = 3 * spread if distribution == "normal" else 3 ** 0.5 * spread
    assert s.min() >= 1 - bound - 1e-6 and s.max() <= 1 + bound + 1e-6


def test_zero_spread_is_one_nominal_class():
    profile = generate_profile(load_site("aaic"), spread=0.0, seed=0)
    assert (profile.scores == 1.0).all() and (profile.classes == 0).all()


@pytest.mark.parametrize("kwargs", [{"spread": -0.01}, {"spread": MAX_SPREAD + 0.01},
                                    {"spread": float("nan")}, {"spread": 0.05, "classes": 0},
                                    {"spread": 0.05, "distribution": "lognormal"},
                                    {"spread": 0.05, "seed": -1}])
def test_bad_settings_are_usage_errors(kwargs):
    kwargs = {"seed": 0, **kwargs}
    with pytest.raises(UsageError):
        generate_profile(load_site("aaic"), **kwargs)


def test_write_read_round_trip_and_force(tmp_path):
    site = load_site("aaic-v100-half")
    profile = generate_profile(site, spread=0.05, seed=11, classes=3)
    path = write_profile(profile, tmp_path / "p.csv")
    back = read_profile(path, site)
    assert np.array_equal(back.scores, profile.scores)
    assert np.array_equal(back.classes, profile.classes)
    with pytest.raises(UsageError, match="already exists"):
        write_profile(profile, path)
    other = generate_profile(site, spread=0.05, seed=12, classes=3)
    write_profile(other, path, force=True)
    assert path.read_bytes() == other.to_csv()


def test_a_profile_is_a_site_score_file(tmp_path):
    import json

    write_profile(generate_profile(load_site("aaic"), spread=0.05, seed=1), tmp_path / "p.csv")
    settings = dict(load_site("aaic").settings, gpu_scores="p.csv")
    (tmp_path / "site.json").write_text(json.dumps(settings))
    site = load_site(tmp_path / "site.json")
    assert site.gpu_score == tuple(tuple(r) for r in read_profile(tmp_path / "p.csv", site).scores.tolist())
    assert not site.is_homogeneous


def test_a_plain_score_file_is_clustered(tmp_path):
    site = site_from_settings(whatif_settings(2, 2))
    (tmp_path / "s.csv").write_text("node,gpu_index,score\n0,0,1.2\n0,1,1.19\n1,0,0.8\n1,1,0.81\n")
    profile = read_profile(tmp_path / "s.csv", site, classes=2)
    assert profile.classes.tolist() == [[0, 0], [1, 1]]


@pytest.mark.parametrize("rows, line, value", [
    ("0,0,1.2,1\n0,1,1.1,0\n1,0,0.8,1\n1,1,0.9,1\n", 2, "1"),  # class 1 holds a faster GPU
    ("0,0,1.2,0\n0,1,1.1,0\n1,0,0.8,2\n1,1,0.9,2\n", None, "1"),  # class 1 is empty
])
def test_badly_ordered_classes_are_located(tmp_path, rows, line, value):
    site = site_from_settings(whatif_settings(2, 2))
    (tmp_path / "p.csv").write_text("node,gpu_index,score,class\n" + rows)
    with pytest.raises(InputError) as info:
        read_profile(tmp_path / "p.csv", site)
    assert (info.value.line, info.value.field, info.value.value) == (line, "class", value)


def test_cluster_scores_on_few_distinct_values():
    assert cluster_scores(np.array([1.0, 1.0, 1.0]), 4, 0).tolist() == [0, 0, 0]
    assert cluster_scores(np.array([0.9, 1.1, 0.9]), 4, 0).tolist() == [1, 0, 1]


@settings(max_examples=40, deadline=None)
@given(site=whatif_sites(), spread=st.floats(0, MAX_SPREAD), seed=st.integers(0, 2**32),
       classes=st.integers(1, 6), distribution=st.sampled_from(["normal", "uniform"]))
def test_any_profile_is_positive_bounded_and_ordered(site, spread, seed, classes, distribution):
    profile = generate_profile(site, spread=spread, seed=seed, classes=classes,
                               distribution=distribution)
    s = profile.scores
    assert s.shape == (len(site.gpu_model_of_node), site.gpus_per_node)
    assert (s > 0).all() and np.isfinite(s).all()
    assert (np.abs(s - 1) <= 3 * spread + 1e-6).all()
    assert 1 <= profile.n_classes <= classes
    _assert_classes_ordered(profile)
    again = generate_profile(site, spread=spread, seed=seed, classes=classes,
                             distribution=distribution)
    assert again.to_csv() == profile.to_csv()


def test_seeds_beyond_32_bits_are_accepted():
    """Found by hypothesis: scipy's k-means seeds a 32-bit RandomState."""
    from swftools.site import load_site

    site = load_site("aaic")
    big = generate_profile(site, spread=0.05, seed=2**32, classes=4)
    assert big.to_csv() == generate_profile(site, spread=0.05, seed=2**32, classes=4).to_csv()
    assert 1 <= big.n_classes <= 4
