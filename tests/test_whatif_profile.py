"""Variability profiles (``swftools.whatif.profile``): deterministic scores, k-means classes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import InputError, UsageError
from swftools.site import load_site, site_from_settings
from swftools.whatif.profile import (
    MAX_SPREAD,
    cluster_scores,
    generate_profile,
    read_profile,
    site_profile,
    write_profile,
)
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


# -- the documented recipe, recomputed independently (module docstring of whatif.profile) --

def _recipe_scores(n, spread, seed, distribution, app_classes=()):
    """The scores and per-class grids (flat) as the module docstring describes their draws."""
    rng = np.random.default_rng(seed)

    def draw(k):
        if spread == 0:
            return np.ones(k)
        if distribution == "uniform":
            half = 3 ** 0.5 * spread
            return rng.uniform(1 - half, 1 + half, k)
        x = rng.normal(1, spread, k)
        while True:  # values outside 1 +- 3 spread are drawn again, in order
            out = np.flatnonzero(np.abs(x - 1) > 3 * spread)
            if not out.size:
                return x
            x[out] = rng.normal(1, spread, out.size)

    def six(v):
        return np.array([float(f"{x:.6f}") for x in v])

    s = six(draw(n))
    grids = []
    for _ in app_classes:
        m = rng.uniform(0.5, 1.5)
        if spread:
            m = min(m, MAX_SPREAD / spread)
        d = draw(n)
        grids.append(six(1 + m * (0.5 * (s - 1) + 0.5 * (d - 1))))
    return s, grids


def _recipe_classes(flat, k, seed):
    """k-means (kmeans2, k-means++ start seeded by seed mod 2**32, 50 iterations), each score in
    its nearest centroid's class, classes numbered by mean score, fastest first."""
    import warnings

    from scipy.cluster.vq import kmeans2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        centroids, _ = kmeans2(flat.reshape(-1, 1), k, iter=50, minit="++", seed=seed % 2**32)
    labels = np.abs(flat[:, None] - centroids.ravel()[None, :]).argmin(axis=1)
    used = sorted(set(labels.tolist()), key=lambda c: -flat[labels == c].mean())
    return np.array([used.index(c) for c in labels])


@pytest.mark.parametrize("distribution", ["normal", "uniform"])
def test_scores_follow_the_documented_draws(distribution):
    """Seed 26 on 4,000 GPUs: 13 normal draws fall outside 1 +- 3 spread and one of their
    redraws falls outside again; every one is drawn again until it is inside."""
    site = _big_site()
    profile = generate_profile(site, spread=0.05, seed=26, distribution=distribution)
    expected, _ = _recipe_scores(4000, 0.05, 26, distribution)
    assert np.array_equal(profile.scores.ravel(), expected)
    assert (np.abs(profile.scores - 1) <= 3 * 0.05 + 1e-9).all()


@pytest.mark.parametrize("distribution", ["normal", "uniform"])
@pytest.mark.parametrize("spread", [0.05, 0.25])
def test_per_class_scores_follow_the_documented_draws(distribution, spread):
    """At spread 0.25 a class's multiplier is capped at MAX_SPREAD / spread = 1.2."""
    site = site_from_settings(whatif_settings(6, 4))
    names = ("a", "b", "c", "d", "e")
    profile = generate_profile(site, spread=spread, seed=5, distribution=distribution,
                               app_classes=names)
    s, grids = _recipe_scores(24, spread, 5, distribution, names)
    assert np.array_equal(profile.scores.ravel(), s)
    assert [n for n, _ in profile.app_scores] == list(names)
    for (_, grid), want in zip(profile.app_scores, grids):
        assert np.array_equal(grid.ravel(), want)


def test_per_class_scores_at_zero_spread_are_nominal():
    profile = generate_profile(site_from_settings(whatif_settings(2, 2)), spread=0.0, seed=3,
                               app_classes=("IC", "OD"))
    assert [n for n, _ in profile.app_scores] == ["IC", "OD"]
    assert all((grid == 1.0).all() for _, grid in profile.app_scores)


@pytest.mark.parametrize("seed", [4, 10, 2**32 + 4])
def test_classes_follow_the_documented_k_means(seed):
    """Seeds 4 and 10: other k-means++ starts or fewer iterations end in other partitions."""
    profile = generate_profile(load_site("aaic"), spread=0.05, seed=seed)
    assert profile.n_classes == 4  # the default: at most 4 classes
    assert profile.classes.ravel().tolist() == \
        _recipe_classes(profile.scores.ravel(), 4, seed).tolist()


@pytest.mark.parametrize("seed", range(1, 13))
def test_classes_are_a_k_means_fixed_point(seed):
    """Every GPU is in the class whose mean score is nearest to its own (k-means converged)."""
    profile = generate_profile(load_site("aaic"), spread=0.05, seed=seed)
    flat, labels = profile.scores.ravel(), profile.classes.ravel()
    means = np.array([flat[labels == c].mean() for c in range(profile.n_classes)])
    assert (np.abs(flat[:, None] - means[None, :]).argmin(axis=1) == labels).all()


def test_integer_scores_are_clustered():
    assert cluster_scores(np.array([[1, 1], [2, 2]]), 2, 0).tolist() == [[1, 1], [0, 0]]


def test_classes_are_integers(tmp_path):
    """Also one class (every score equal): the classes print as integers."""
    import json

    site = site_from_settings(whatif_settings(2, 1))
    for text in ("0,0,1.0\n1,0,1.0\n", "0,0,1.2\n1,0,0.8\n"):
        (tmp_path / "s.csv").write_text("node,gpu_index,score\n" + text)
        classes = read_profile(tmp_path / "s.csv", site).classes
        assert json.dumps(classes.tolist()) in ("[[0], [0]]", "[[0], [1]]")


EIGHT = [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65]  # k-means seeds 0 and 1 part them apart


def test_a_plain_score_file_is_clustered_with_the_defaults(tmp_path):
    """Without a class column: at most 4 classes, k-means seeded 0, as ``read_profile`` says."""
    import json

    rows = "".join(f"{i},0,{s}\n" for i, s in enumerate(EIGHT))
    (tmp_path / "s.csv").write_text("node,gpu_index,score\n" + rows)
    flat = np.array(EIGHT)
    assert _recipe_classes(flat, 4, 0).tolist() != _recipe_classes(flat, 4, 1).tolist()
    want = [[c] for c in _recipe_classes(flat, 4, 0).tolist()]
    assert read_profile(tmp_path / "s.csv", site_from_settings(whatif_settings(8, 1))) \
        .classes.tolist() == want
    (tmp_path / "site.json").write_text(json.dumps(whatif_settings(8, 1, gpu_scores="s.csv")))
    assert site_profile(load_site(tmp_path / "site.json")).classes.tolist() == want


def test_a_site_keeps_classes_that_clustering_would_split(tmp_path):
    """Three distinct scores in two classes: the file's classes, not three clustered ones."""
    import json

    (tmp_path / "s.csv").write_text("node,gpu_index,score,class\n0,0,1.0,0\n1,0,0.99,0\n"
                                    "2,0,0.5,1\n")
    (tmp_path / "site.json").write_text(json.dumps(whatif_settings(3, 1, gpu_scores="s.csv")))
    assert site_profile(load_site(tmp_path / "site.json")).classes.tolist() == [[0], [0], [1]]


def test_a_profile_naming_another_gpu_model_is_refused(tmp_path):
    site = site_from_settings(whatif_settings(2, 1))  # AAIC's P100 nodes
    (tmp_path / "p.csv").write_text("node,gpu_index,score,gpu_model\n0,0,1.0,P100\n"
                                    "1,0,1.0,V100\n")
    with pytest.raises(InputError) as info:
        read_profile(tmp_path / "p.csv", site)
    assert (info.value.line, info.value.field, info.value.value) == (3, "gpu_model", "V100")


@pytest.mark.parametrize("kwargs, message", [
    ({"distribution": "lognormal"},
     "unknown distribution 'lognormal' (choose from normal, uniform)"),
    ({"spread": 0.31}, ("spread 0.31 is out of range (expected 0 <= spread <= 0.3: the standard "
                        "deviation of the scores, e.g. 0.05 for 5 %)")),
    ({"classes": 0}, "classes 0: expected at least 1"),
    ({"seed": -2}, "seed -2: expected a non-negative integer"),
])
def test_bad_settings_say_what_was_expected(kwargs, message):
    with pytest.raises(UsageError) as info:
        generate_profile(load_site("aaic"), **{"spread": 0.05, "seed": 0, **kwargs})
    assert str(info.value) == message


@pytest.mark.parametrize("names", [["IC", "a,b"], [""], [" IC"], ["IC", "IC"]])
def test_bad_application_class_names_are_refused(names):
    with pytest.raises(UsageError) as info:
        generate_profile(load_site("aaic"), spread=0.05, seed=0, app_classes=names)
    assert str(info.value) == (f"application classes {','.join(names)!r}: expected distinct "
                               "names without commas or surrounding spaces")


def test_summary_and_class_stats_by_hand():
    """3 nodes x 2 GPUs: scores sum to 5.63 (mean 0.938333 to 6 decimals); class 1 holds 1.0,
    1.0 and 0.95 (mean 0.983333); a per-class grid of mean 5.5 / 6; the
    population standard deviation of the scores 0.185779 to 6 decimals."""
    from swftools.whatif.profile import Profile

    scores = np.array([[1.25, 1.0], [1.0, 0.95], [0.75, 0.68]])
    grid = np.array([[1.1, 1.0], [0.9, 0.9], [0.8, 0.8]])
    profile = Profile(scores, np.array([[0, 1], [1, 1], [2, 2]]), app_scores=(("IC", grid),))
    stats = [{"class": 0, "gpus": 1, "min": 1.25, "max": 1.25, "mean": 1.25},
             {"class": 1, "gpus": 3, "min": 0.95, "max": 1.0, "mean": 0.983333},
             {"class": 2, "gpus": 2, "min": 0.68, "max": 0.75, "mean": 0.715}]
    assert profile.class_stats() == stats
    assert profile.summary() == {
        "gpus": 6, "nodes": 3, "spread": None, "seed": None, "distribution": None,
        "score_mean": 0.938333, "score_std": 0.185779,
        "score_min": 0.68, "score_max": 1.25, "classes": stats,
        "app_classes": [{"name": "IC", "min": 0.8, "max": 1.1, "mean": 0.916667}]}
    assert "app_classes" not in Profile(scores, profile.classes).summary()


def test_a_generated_profile_summary_names_its_settings():
    summary = generate_profile(load_site("aaic"), spread=0.05, seed=7,
                               distribution="uniform").summary()
    assert (summary["spread"], summary["seed"], summary["distribution"]) == (0.05, 7, "uniform")
    assert summary["gpus"] == 320 and summary["nodes"] == 40
