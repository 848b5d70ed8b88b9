"""PAL's class formation (``replay/placement/pal_classes.py``) against its docstrings: Lloyd's
k-means from quantile starts worked by hand, the mean silhouette against the definition
recomputed point by point (exact fractions), the outlier bound worked in exact arithmetic, the
choice of k (its limits and smallest k on a tie) and the cells' order on ties."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
from hypothesis import given, settings

from swftools.replay.placement.pal_classes import (
    MAX_K,
    cell_order,
    form_classes,
    kmeans_1d,
    outliers,
    silhouette_1d,
    silhouette_k,
)

from .strategies import examples, silhouette_cases

EPS = float(np.spacing(1.0))


# --- k-means -----------------------------------------------------------------------------------

def test_kmeans_starts_from_quantiles_of_the_distinct_values():
    # no iteration: the starts are the distinct values at floor((i + 0.5) * n / k)
    ten = np.repeat(np.arange(10.0), 2)  # repeats do not move the quantiles of distinct values
    assert kmeans_1d(ten, 2, max_iter=0)[1].tolist() == [2.0, 7.0]  # 2.5, 7.5
    assert kmeans_1d(ten, 3, max_iter=0)[1].tolist() == [1.0, 5.0, 8.0]  # 1.67, 5, 8.33
    # k = n: every distinct value is a start, the last one too
    labels, centres = kmeans_1d(np.array([0.0, 1.0, 2.0]), 3, max_iter=0)
    assert centres.tolist() == [0.0, 1.0, 2.0] and labels.tolist() == [0, 1, 2]


def test_kmeans_point_halfway_goes_to_the_lower_centre():
    # starts 0 and 2 (n = 3, k = 2): 1 is halfway
    labels, _ = kmeans_1d(np.array([0.0, 1.0, 2.0]), 2, max_iter=0)
    assert labels.tolist() == [0, 0, 1]


def test_kmeans_iterates_to_the_means():
    # starts 1 and 10 (distinct values 0 1 2 3 10 11: indices 1 and 4); {0..3} and {10, 11}
    labels, centres = kmeans_1d(np.array([0.0, 1.0, 2.0, 3.0, 10.0, 11.0]), 2)
    assert centres.tolist() == [1.5, 10.5] and labels.tolist() == [0, 0, 0, 0, 1, 1]


def test_kmeans_keeps_a_one_point_cluster():
    # starts 0 and 10; {0, 1} and {10} (a cluster of one point is no empty cluster)
    labels, centres = kmeans_1d(np.array([0.0, 1.0, 10.0]), 2)
    assert centres.tolist() == [0.5, 10.0] and labels.tolist() == [0, 0, 1]


def test_kmeans_three_clusters_use_both_neighbours_for_each_midpoint():
    # starts 1, 11, 21: pairs {0, 1}, {10, 11}, {20, 21}; the midpoints 5.5 and 15.5 (a midpoint
    # taken against the first centre for every cluster would be 10.5 and move 11 up)
    x = np.array([0.0, 1.0, 10.0, 11.0, 20.0, 21.0])
    labels, centres = kmeans_1d(x, 3)
    assert centres.tolist() == [0.5, 10.5, 20.5] and labels.tolist() == [0, 0, 1, 1, 2, 2]


def test_kmeans_k_one_is_the_mean():
    labels, centres = kmeans_1d(np.array([1.0, 2.0, 6.0]), 1)
    assert centres.tolist() == [3.0] and labels.tolist() == [0, 0, 0]


def test_kmeans_drops_an_empty_cluster():
    # two neighbouring doubles 1 + eps and 1 + 2 eps: their midpoint rounds (to even) onto
    # 1 + 2 eps, which then goes to the lower start: the upper cluster is empty, one centre back
    x = np.array([1.0 + EPS, 1.0 + 2 * EPS])
    labels, centres = kmeans_1d(x, 2)
    assert labels.tolist() == [0, 0]
    assert centres.size == 1 and x[0] <= centres[0] <= x[1]


def _slow_crawl(n: int = 700, m: int = 2000, far: float = 1000.0) -> np.ndarray:
    """Values on which Lloyd's k = 2 moves one point per iteration: m values about 0, m about
    ``far`` and n points between, the (j + 1)-th placed halfway between the boundaries
    b(j - 1) and b(j) of the states with j - 1 and j of them on the left (b(j) the midpoint of
    the two means; solved as a fixed point)."""
    low, high = np.linspace(-1, 1, m), np.linspace(far - 1, far + 1, m)
    q = np.linspace(far * 0.48, far * 0.56, n)
    j = np.arange(n + 1)
    for _ in range(60):
        s = np.concatenate([[0.0], np.cumsum(q)])
        b = ((low.sum() + s) / (m + j) + (high.sum() + s[-1] - s) / (m + n - j)) / 2
        q = np.concatenate([[b[0] - (b[1] - b[0]) / 2], (b[:-2] + b[1:-1]) / 2])
    return np.concatenate([low, q, high])


def test_kmeans_stops_after_300_iterations_by_default():
    # scikit-learn's max_iter (PAL's artifact): on values that take about 350 iterations the
    # default stops at the 300th, where one more iteration would still move a point
    x = _slow_crawl()
    labels, centres = kmeans_1d(x, 2, max_iter=300)
    default = kmeans_1d(x, 2)
    assert default[0].tolist() == labels.tolist() and default[1].tolist() == centres.tolist()
    # the 301st iteration by hand: the means of the two clusters, their midpoint, the points
    # at or below it on the left: one more than now
    mid = (x[labels == 0].mean() + x[labels == 1].mean()) / 2
    assert int((x <= mid).sum()) == int((labels == 0).sum()) + 1


def test_kmeans_centres_are_floats_for_integer_values():
    # starts 0 and 10 are already the means: the centres are still float means, not the ints
    labels, centres = kmeans_1d(np.array([0, 10]), 2)
    assert centres.dtype == np.float64 and centres.tolist() == [0.0, 10.0]


# --- silhouette --------------------------------------------------------------------------------

def _silhouette_by_definition(values, labels) -> Fraction:
    """Mean over points of (b - a) / max(a, b): a the mean distance to the other points of its
    cluster, b the smallest mean distance to another cluster; 0 alone in its cluster or with
    a = b = 0."""
    xs = [Fraction(v) for v in values]
    total = Fraction(0)
    for i, (x, c) in enumerate(zip(xs, labels)):
        own = [y for j, (y, d) in enumerate(zip(xs, labels)) if d == c and j != i]
        if not own:
            continue
        a = sum(abs(x - y) for y in own) / len(own)
        b = min(sum(abs(x - y) for y, d in zip(xs, labels) if d == e)
                / sum(1 for d in labels if d == e) for e in set(labels) - {c})
        if max(a, b) > 0:
            total += (b - a) / max(a, b)
    return total / len(xs)


@settings(max_examples=examples(10))
@given(silhouette_cases())
def test_silhouette_matches_the_definition(case):
    values, labels = case
    got = silhouette_1d(np.array(values), np.array(labels))
    assert np.isclose(got, float(_silhouette_by_definition(values, labels)), rtol=0, atol=1e-12)


def test_silhouette_by_hand_with_a_cluster_of_three():
    # {0, 1, 3} and {5}: a(0) = 2, b(0) = 5 -> 3/5; a(1) = 3/2, b = 4 -> 5/8; a(3) = 5/2,
    # b = 2 -> -1/5; 5 alone -> 0
    s = silhouette_1d(np.array([0.0, 1.0, 3.0, 5.0]), np.array([0, 0, 0, 1]))
    assert np.isclose(s, (3 / 5 + 5 / 8 - 1 / 5 + 0) / 4)


def test_silhouette_with_both_distances_zero_scores_zero():
    # the same value in two clusters: a = b = 0 for every point
    assert silhouette_1d(np.array([1.0, 1.0, 1.0, 1.0]), np.array([0, 0, 1, 1])) == 0.0


def test_silhouette_of_equal_values_scores_zero_whatever_the_rounding():
    # twelve copies of one value, six in each cluster: every distance is 0, so every point
    # scores 0. The cumulative sum of six copies of 0.1 rounds one ulp below 6 * 0.1 (of 0.3:
    # one ulp above), so a distance taken as count * x minus the prefix sum, ties counted below
    # x (or above it for 0.3), is a tiny t > 0 for every point: a = t / 5 and b = t / 6, a score
    # of (1/6 - 1/5) / (1/5) = -1/6 instead of 0
    for v in (0.1, 0.3):
        assert silhouette_1d(np.full(12, v), np.repeat([0, 1], 6)) == 0.0


def test_silhouette_stays_within_minus_one_and_one_when_distances_round():
    # 3, 3 | 3 + 3u, 3 + 3u, 3 + 4u (u = one ulp of 3): by definition 1, 1, 5/6, 5/6, 3/4, a
    # mean of 53/60. The prefix sums of values near 3 lose the ulps (a distance of 3 + 3u to its
    # own cluster comes out below 0), and a negative a gives (b - a) / b > 1; a sum of distances
    # is never below 0, so every point's score stays in [-1, 1] and so does their mean
    u = float(np.spacing(3.0))
    x = np.array([3.0, 3.0, 3.0 + 3 * u, 3.0 + 3 * u, 3.0 + 4 * u])
    labels = np.array([0, 0, 1, 1, 1])
    assert _silhouette_by_definition(x.tolist(), labels.tolist()) == Fraction(53, 60)
    assert -1.0 <= silhouette_1d(x, labels) <= 1.0
    # 1e16 + 2, 4 | 6, 6, 6, 2, 6, 6 (one ulp is 2): by definition 199/480; a distance taken
    # with the ties on one side of the split came out below 0 here too (a mean of 1.195)
    x = 1e16 + np.array([2.0, 4.0, 6.0, 6.0, 6.0, 2.0, 6.0, 6.0])
    labels = np.array([0, 0, 1, 1, 1, 1, 1, 1])
    assert _silhouette_by_definition(x.tolist(), labels.tolist()) == Fraction(199, 480)
    assert -1.0 <= silhouette_1d(x, labels) <= 1.0


def test_silhouette_of_overflowing_distances_warns_of_the_overflow_only():
    # 1e308 - (-1e308) overflows: numpy warns of it, and every a and b is inf; the score's own
    # inf - inf (a nan) is taken under errstate, without a second warning ("invalid value")
    x = np.array([1e308, -1e308, 1e308, -1e308])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        silhouette_1d(x, np.array([0, 0, 1, 1]))
    assert caught and {str(w.message) for w in caught} == {"overflow encountered in subtract"}


def test_silhouette_of_one_cluster_is_zero():
    # no other cluster to compare with: no split, the score silhouette_k's k = 1 stands for
    assert silhouette_1d(np.array([1.0, 2.0, 4.0]), np.array([0, 0, 0])) == 0.0


# --- outliers ----------------------------------------------------------------------------------

def test_outlier_bound_uses_the_sample_standard_deviation():
    # n - 1 zeros and a one: mean 1/n, sample variance 1/n, so 1 > 1/n + 3/sqrt(n) iff
    # ((n - 1)/n)**2 > 9/n: n = 10: 81/100 < 90/100 (no outlier); n = 11: 100/121 > 99/121
    assert not outliers(np.r_[np.zeros(9), 1.0]).any()
    assert outliers(np.r_[np.zeros(10), 1.0]).tolist() == [False] * 10 + [True]
    # with ddof = 2 (variance 10/99 for n = 11) the bound would be 1/11 + 3 * 0.318 > 1


def test_outliers_of_one_value():
    out = outliers(np.array([5.0]))
    assert out.dtype == bool and out.tolist() == [False]


# --- choice of k -------------------------------------------------------------------------------

def test_silhouette_k_needs_three_values_and_two_distinct():
    assert silhouette_k(np.array([1.0, 2.0])) == 1  # two values: no k with a silhouette
    assert silhouette_k(np.ones(5)) == 1  # one distinct value
    assert silhouette_k(np.array([0.0, 1.0, 10.0])) == 2  # three values: k = 2 only


def test_silhouette_k_smallest_k_on_a_tie():
    # k = 4 from starts 1 5 8 10: {1} {5 5} {7 8 8} {10}: 0 + 1 + 1 + 1/2 + 3/4 + 3/4 + 0 = 4/7;
    # k = 5 (every distinct value): {1} {5 5} {7} {8 8} {10}: 1 + 1 + 1 + 1 = 4/7 too;
    # k = 2 ({1 5 5} {7 8 8 10}) and k = 3 ({1} {5 5 7 8 8} {10}) score less
    x = np.array([1.0, 5.0, 5.0, 7.0, 8.0, 8.0, 10.0])
    assert np.isclose(silhouette_1d(x, np.array([0, 1, 1, 2, 2, 2, 3])), 4 / 7)
    assert silhouette_k(x) == 4


def test_silhouette_k_splits_three_values_even_when_the_split_scores_below_zero():
    # three distinct values: k = 2 is the only k, whatever it scores. 1, 1 + 2 eps, 1 + 3 eps:
    # from the starts 1 and 1 + 3 eps the midpoint 1 + 1.5 eps rounds (to even) onto 1 + 2 eps,
    # which goes to the lower start; the means 1 + eps and 1 + 3 eps then have it halfway (the
    # lower again): {1, 1 + 2 eps} {1 + 3 eps}. By definition 1 scores (3 - 2) / 3 = 1/3,
    # 1 + 2 eps (1 - 2) / 2 = -1/2, the last one alone 0: a mean of -1/18, below the 0 of k = 1
    x = np.array([1.0, 1.0 + 2 * EPS, 1.0 + 3 * EPS])
    labels, centres = kmeans_1d(x, 2)
    assert labels.tolist() == [0, 0, 1] and centres.size == 2
    assert _silhouette_by_definition(x.tolist(), labels.tolist()) == Fraction(-1, 18)
    assert silhouette_k(x) == 2


def test_silhouette_k_goes_on_after_a_k_whose_k_means_drops_a_cluster():
    # 8 distinct values. k = 3: starts 20, 480, 506 (distinct indices 1, 4, 6), midpoints 250 and
    # 493: {0 20 230} {254 480 480 490} {506 510}; means 250/3, 426, 508, midpoints 254.67 and
    # 467: 254 goes to the first cluster, 480 and 490 to the last, the middle one is empty and
    # dropped. k = 2: starts 230 and 506 (indices 2, 6), midpoint 368: {0 20 230 254}
    # {480 480 490 506 510}, means 126 and 493.2, midpoint 309.6: stable. k = 4: starts 20, 254,
    # 490, 510 (indices 1, 3, 5, 7), midpoints 137, 372, 500: {0 20} {230 254} {480 480 490}
    # {506 510}, means 10, 242, 483.33, 508, midpoints 126, 362.67, 495.67: stable
    x = [0.0, 20.0, 230.0, 254.0, 480.0, 480.0, 490.0, 506.0, 510.0]
    assert kmeans_1d(np.array(x), 3)[1].size == 2
    two = [0, 0, 0, 0, 1, 1, 1, 1, 1]
    four = [0, 0, 1, 1, 2, 2, 2, 3, 3]
    assert kmeans_1d(np.array(x), 2)[0].tolist() == two
    assert kmeans_1d(np.array(x), 4)[0].tolist() == four
    best = _silhouette_by_definition(x, four)  # about 0.819; k = 2: about 0.755
    assert best > _silhouette_by_definition(x, two)
    for k in range(5, 9):  # up to the 8 distinct values: all score less than k = 4
        labels, centres = kmeans_1d(np.array(x), k)
        assert centres.size == k and _silhouette_by_definition(x, labels.tolist()) < best
    assert silhouette_k(np.array(x)) == 4


def test_silhouette_k_at_most_ten():
    # eleven tight pairs far apart: k = 11 would score best; the search stops at MAX_K = 10
    eleven = np.concatenate([[g, g + 0.01] for g in range(0, 110, 10)])
    assert MAX_K == 10 and silhouette_k(eleven) == 10
    ten = eleven[:-2]
    assert silhouette_k(ten) == 10


def test_silhouette_k_two_groups():
    assert silhouette_k(np.array([1.0, 1.1, 1.0, 1.1, 3.0, 3.1, 3.0])) == 2


# --- class values ------------------------------------------------------------------------------

def test_one_gpu_is_a_median_gpu():
    assert form_classes(np.array([2.0])).tolist() == [1.0]


def test_two_gpus_form_one_class():
    # two values: too few for a silhouette (k = 1): one class, centre 1.5 over median 1.5
    assert form_classes(np.array([1.0, 2.0])).tolist() == [1.0, 1.0]


def test_class_values_keep_the_grid_shape():
    # nodes x GPUs: two classes, centres 1 and 2 over their median 1.5
    grid = np.array([[1.0, 1.0, 2.0, 2.0], [1.0, 2.0, 2.0, 2.0]])
    got = form_classes(grid)
    assert got.shape == (2, 4)
    assert np.allclose(got, grid / 1.5)


def test_class_values_are_floats_for_integer_values():
    assert form_classes(np.zeros((0, 4), dtype=np.int64)).dtype == np.float64
    assert form_classes(np.array([3, 3])).dtype == np.float64


# --- cells -------------------------------------------------------------------------------------

def test_cells_within_before_across_on_a_tie():
    # penalty 1: within 1.0 and across 1.0 tie: within first
    assert cell_order(np.array([1.0]), 1.0) == [(1.0, True), (1.0, False)]
    # penalty 2: across 1.0 (value 2) ties within 2.0: within first
    assert cell_order(np.array([2.0, 1.0]), 2.0) == [(1.0, True), (2.0, True), (1.0, False),
                                                     (2.0, False)]


def test_cells_for_integer_class_values_are_floats():
    cells = cell_order(np.array([1, 2]), 1.5)
    assert cells == [(1.0, True), (1.0, False), (2.0, True), (2.0, False)]
    assert all(type(c) is float for c, _ in cells)
