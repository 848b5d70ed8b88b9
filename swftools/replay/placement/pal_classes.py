"""PAL's class formation and cell order (``pal`` placement; see ``swftools.replay.placement``).

Per application class, each GPU has a variability value ``v`` (its run-time multiplier on that
class: ``1 / score``, higher = slower). PAL groups the values into classes:

* outliers: values above ``mean + 3 sd`` (sample standard deviation), one class each;
* the other values: one-dimensional k-means with ``k`` in 2..10 chosen by the highest mean
  silhouette (smallest ``k`` on ties; ``k`` at most the number of distinct values, and below the
  number of values, which the silhouette needs). ``artifact_k2=True`` always uses ``k = 2``: PAL's
  artifact (``hal-uw/blox-pal``, branch ``artifact``) returns from its silhouette loop after its
  first iteration, so it never tries another ``k``.

A GPU's class value is its class's centre over the median of the centres (PAL's ``sf``: 1.0 = a
median GPU). k-means here is Lloyd's algorithm started from quantiles of the distinct values
(deterministic, no seed; PAL's artifact uses scikit-learn's k-means++ with ``random_state=1``,
which can end in another local optimum on ambiguous data).

Cells (PAL's locality x variability matrix): per distinct class value ``c`` a within-node cell
of value ``c`` and a cross-node cell of value ``c x penalty``, tried in ascending value (within
before across, then smaller ``c``, on ties).
"""

from __future__ import annotations

import numpy as np

MAX_K = 10  # PAL's silhouette search: k = 2 .. 10
OUTLIER_SD = 3.0


def kmeans_1d(values: np.ndarray, k: int, max_iter: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """(labels, centres ascending) of Lloyd's k-means on 1-D ``values`` (``k`` at most the
    number of distinct values; empty clusters are dropped, so fewer centres may come back)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    distinct = np.unique(x)
    k = max(1, min(k, distinct.size))
    pick = np.floor((np.arange(k) + 0.5) * distinct.size / k).astype(np.int64)
    centres = distinct[np.minimum(pick, distinct.size - 1)]
    for _ in range(max_iter):
        labels = _nearest(x, centres)
        counts = np.bincount(labels, minlength=centres.size)
        sums = np.bincount(labels, weights=x, minlength=centres.size)
        keep = counts > 0
        new = sums[keep] / counts[keep]
        if new.size == centres.size and np.array_equal(new, centres):
            break
        centres = new
    labels = _nearest(x, centres)
    return labels, centres


def _nearest(x: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Index of the nearest centre (centres ascending; the lower one on a tie)."""
    if centres.size == 1:
        return np.zeros(x.size, dtype=np.int64)
    mid = (centres[1:] + centres[:-1]) / 2.0
    return np.searchsorted(mid, x, side="left").astype(np.int64)


def silhouette_1d(values: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette of a 1-D clustering (a point alone in its cluster scores 0; a point whose
    two distances are both 0 scores 0, as scikit-learn does)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    labels = np.asarray(labels).ravel()
    groups = [np.sort(x[labels == c]) for c in np.unique(labels)]
    if len(groups) < 2:
        return 0.0
    mean_to = []  # per cluster: each point's mean distance to the cluster's points
    for y in groups:
        prefix = np.concatenate([[0.0], np.cumsum(y)])
        # the values below x and those above it apart, so values equal to x add exactly 0 (the
        # rounding of the prefix sums would leave a tiny distance of either sign between them)
        lt = np.searchsorted(y, x, side="left")
        le = np.searchsorted(y, x, side="right")
        total = (x * lt - prefix[lt]) + ((prefix[-1] - prefix[le]) - x * (y.size - le))
        mean_to.append((np.maximum(total, 0.0), y.size))  # a sum of distances is never < 0
    own = np.searchsorted(np.unique(labels), labels)
    a = np.zeros(x.size)
    b = np.full(x.size, np.inf)
    size_own = np.zeros(x.size)
    for c, (total, size) in enumerate(mean_to):
        mine = own == c
        size_own[mine] = size
        a[mine] = total[mine] / max(size - 1, 1)
        b[~mine] = np.minimum(b[~mine], total[~mine] / size)
    denom = np.maximum(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(denom > 0, (b - a) / np.where(denom > 0, denom, 1.0), 0.0)
    s[size_own <= 1] = 0.0
    return float(s.mean())


def outliers(values: np.ndarray) -> np.ndarray:
    """Which values lie above mean + 3 sample standard deviations."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size < 2:
        return np.zeros(x.size, dtype=bool)
    return x > x.mean() + OUTLIER_SD * x.std(ddof=1)


def silhouette_k(values: np.ndarray) -> int:
    """The k in 2..10 with the highest mean silhouette (smallest on ties); 1 when the values
    cannot be split (fewer than two distinct values, or fewer than three values)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    top = min(MAX_K, np.unique(x).size, x.size - 1)
    best_k, best_s = 1, -np.inf
    for k in range(2, top + 1):
        labels, centres = kmeans_1d(x, k)
        if centres.size != k:
            continue
        s = silhouette_1d(x, labels)
        if s > best_s:
            best_k, best_s = k, s
    return best_k


def form_classes(values: np.ndarray, artifact_k2: bool = False) -> np.ndarray:
    """PAL's class value of every GPU (same shape as ``values``, the variability values of one
    application class); see the module docstring."""
    arr = np.asarray(values, dtype=np.float64)
    x = arr.ravel()
    if x.size == 0:
        return arr.copy()
    out_mask = outliers(x)
    inner = x[~out_mask]
    k = min(2, np.unique(inner).size) if artifact_k2 else silhouette_k(inner)
    labels, centres = kmeans_1d(inner, k)
    centre_of = np.empty(x.size)
    centre_of[~out_mask] = centres[labels]
    centre_of[out_mask] = x[out_mask]  # one class per outlier: its own value
    all_centres = np.concatenate([centres, x[out_mask]])
    return (centre_of / float(np.median(all_centres))).reshape(arr.shape)


def cell_order(class_values: np.ndarray, penalty: float) -> list[tuple[float, bool]]:
    """PAL's cells (class value, within one node?) in the order they are tried."""
    cells = []
    for c in np.unique(np.asarray(class_values, dtype=np.float64)).tolist():
        cells.append((c, 0, c, True))
        cells.append((c * penalty, 1, c, False))
    cells.sort()
    return [(c, within) for _, _, c, within in cells]
