"""Per-GPU variability profiles: scores drawn from a documented distribution, deterministic by
seed, clustered into performance classes with k-means (issue 14).

Model. GPUs of one model run the same kernel at different speeds (power and thermal binning,
manufacturing variation): studies of large GPU clusters report a spread of a few per cent up to
about 10 % between GPUs of one model under the same load. A profile gives each GPU a score, its
speed relative to nominal (1.0 = nominal; a job's compute runs at the score of the slowest GPU it
holds, see ``swftools.whatif.sensitivity``). ``generate_profile`` draws the scores independently:

- ``normal`` (default): mean 1, standard deviation ``spread``, truncated to
  ``[1 - 3 spread, 1 + 3 spread]`` (values outside are drawn again), so no GPU is absurdly fast
  or slow and every score is positive (``spread`` is at most ``MAX_SPREAD`` = 0.3);
- ``uniform``: uniform on ``[1 - sqrt(3) spread, 1 + sqrt(3) spread]`` (standard deviation
  ``spread``).

Draws use ``numpy.random.default_rng(seed)``, GPUs in order node 0 GPU 0, node 0 GPU 1, ...;
scores are rounded to 6 decimals (what the CSV holds, so a profile read back is the same).

Per application class (``app_classes``, e.g. a sensitivity model's class names; PAL's variability
per GPU per application class): after the GPU scores ``s_i``, the same generator draws, per class
``a`` in the order given, a multiplier ``m_a`` uniform on ``[0.5, 1.5]`` (how strongly the class
feels variability: its spread is ``m_a x spread``, capped at ``MAX_SPREAD``), then a fresh score
``d_ia`` per GPU from the distribution above (same ``spread``); the class's score is
``1 + m_a (RHO (s_i - 1) + (1 - RHO) (d_ia - 1))`` with ``RHO`` = 0.5: a GPU slow for one class
tends to be slow for the others, not equally (correlation with ``s_i`` about 0.71). Scores stay
within ``1 +- 3 MAX_SPREAD``, so positive. The GPU scores ``s_i`` and classes are the same with
or without per-class columns.
Classes: k-means (``scipy.cluster.vq.kmeans2``, k-means++ start, ``seed=seed``) on the scores,
``classes`` clusters at most (fewer when there are fewer distinct scores or a cluster ends
empty), numbered by mean score, **class 0 = fastest**. On one-dimensional data k-means classes are
contiguous score intervals: every score of class c is >= every score of class c + 1.

File: CSV ``node,gpu_index,score,class``, one row per GPU in node then GPU order, scores with 6
decimals, ``\\n`` line ends; a profile with per-application-class scores (PAL's variability per
GPU per application class) adds one column ``score:<class>`` per class (e.g. ``score:IC``), read
by ``swftools.site.read_score_csv`` like ``score``. ``score`` and ``class`` stay what every
placement ranks by; ``pal`` and ``pm-first`` rank a job's GPUs by its class's column, and a job
of that class runs at that column's score (``swftools.whatif.run``). The file is written
atomically and never over an existing file without ``force``. The same file can be a site's ``gpu_scores`` (``swftools.site.read_score_csv`` reads
both, with the same checks).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from swftools.atomic import atomic_file
from swftools.errors import UsageError
from swftools.site import Site, read_score_csv

DISTRIBUTIONS = ("normal", "uniform")
MAX_SPREAD = 0.3
RHO = 0.5  # weight of the GPU's own score in a per-application-class score
HEADER = "node,gpu_index,score,class"


@dataclass(frozen=True, eq=False)
class Profile:
    """Per-GPU scores and performance classes of one site (arrays shaped ``[node, gpu]``)."""

    scores: np.ndarray  # float64, 1.0 = nominal
    classes: np.ndarray  # int64, 0 = fastest
    spread: float | None = None  # generation settings (None when read from a file)
    seed: int | None = None
    distribution: str | None = None
    path: str | None = None
    # per application class: (its name, float64 scores [node, gpu]); empty: one score per GPU
    app_scores: tuple[tuple[str, np.ndarray], ...] = ()

    @property
    def n_classes(self) -> int:
        return int(self.classes.max()) + 1 if self.classes.size else 0

    def class_stats(self) -> list[dict[str, Any]]:
        """Per class: GPU count, min, max and mean score."""
        out = []
        for c in range(self.n_classes):
            s = self.scores[self.classes == c]
            if s.size:
                out.append({"class": c, "gpus": int(s.size), "min": float(s.min()),
                            "max": float(s.max()), "mean": round(float(s.mean()), 6)})
        return out

    def to_csv(self) -> bytes:
        """The profile file's bytes (deterministic)."""
        lines = [HEADER + "".join(f",score:{name}" for name, _ in self.app_scores)]
        nodes, gpus = self.scores.shape
        for n in range(nodes):
            for g in range(gpus):
                lines.append(f"{n},{g},{self.scores[n, g]:.6f},{int(self.classes[n, g])}"
                             + "".join(f",{grid[n, g]:.6f}" for _, grid in self.app_scores))
        return ("\n".join(lines) + "\n").encode("ascii")

    def summary(self) -> dict[str, Any]:
        """What the CLI prints with ``--json``."""
        flat = self.scores.ravel()
        extra = {"app_classes": [{"name": name, "min": float(g.min()), "max": float(g.max()),
                                  "mean": round(float(g.mean()), 6)}
                                 for name, g in self.app_scores]} if self.app_scores else {}
        return {"gpus": int(flat.size), "nodes": int(self.scores.shape[0]),
                "spread": self.spread, "seed": self.seed, "distribution": self.distribution,
                "score_mean": round(float(flat.mean()), 6), "score_std": round(float(flat.std()), 6),
                "score_min": float(flat.min()), "score_max": float(flat.max()),
                "classes": self.class_stats(), **extra}


def _draw(rng: np.random.Generator, n: int, spread: float, distribution: str) -> np.ndarray:
    if spread == 0:
        return np.ones(n)
    if distribution == "uniform":
        half = math.sqrt(3.0) * spread
        return rng.uniform(1.0 - half, 1.0 + half, n)
    lo, hi = 1.0 - 3.0 * spread, 1.0 + 3.0 * spread
    x = rng.normal(1.0, spread, n)
    bad = (x < lo) | (x > hi)
    while bad.any():  # truncation by rejection: redraw the values outside the bounds
        x[bad] = rng.normal(1.0, spread, int(bad.sum()))
        bad = (x < lo) | (x > hi)
    return x


def cluster_scores(scores: np.ndarray, classes: int, seed: int) -> np.ndarray:
    """k-means classes of ``scores`` (any shape), numbered by mean score, 0 = fastest."""
    flat = np.asarray(scores, dtype=np.float64).ravel()
    k = min(classes, int(np.unique(flat).size))
    if k <= 1:
        return np.zeros(scores.shape, dtype=np.int64)
    from scipy.cluster.vq import kmeans2, vq  # keeps start-up lean

    data = flat.reshape(-1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "One of the clusters is empty": handled below
        # scipy seeds a legacy RandomState, which takes 32-bit seeds only; any seed >= 0 is valid
        centroids, _ = kmeans2(data, k, iter=50, minit="++", seed=seed % 2**32)
    labels, _ = vq(data, centroids)  # the final assignment: nearest centroid
    used = np.unique(labels)
    means = np.array([flat[labels == c].mean() for c in used])
    order = used[np.argsort(-means, kind="stable")]  # fastest first
    rank = np.empty(int(labels.max()) + 1, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank[labels].reshape(np.shape(scores))


def generate_profile(site: Site, *, spread: float, seed: int, classes: int = 4,
                     distribution: str = "normal",
                     app_classes: tuple[str, ...] | list[str] = ()) -> Profile:
    """Draw a score per GPU of ``site`` (see the module docstring for the distributions) and
    cluster them into at most ``classes`` performance classes; with ``app_classes``, a
    ``score:<class>`` grid per application class too. Deterministic by ``seed``."""
    if distribution not in DISTRIBUTIONS:
        raise UsageError(f"unknown distribution {distribution!r} (choose from "
                         f"{', '.join(DISTRIBUTIONS)})")
    if not (0.0 <= spread <= MAX_SPREAD) or math.isnan(spread):
        raise UsageError(f"spread {spread} is out of range (expected 0 <= spread <= {MAX_SPREAD}: "
                         "the standard deviation of the scores, e.g. 0.05 for 5 %)")
    if classes < 1:
        raise UsageError(f"classes {classes}: expected at least 1")
    if seed < 0:
        raise UsageError(f"seed {seed}: expected a non-negative integer")
    nodes, gpus = len(site.gpu_model_of_node), site.gpus_per_node
    rng = np.random.default_rng(seed)
    raw = _draw(rng, nodes * gpus, float(spread), distribution)
    scores = np.array([float(f"{v:.6f}") for v in raw]).reshape(nodes, gpus)
    labels = cluster_scores(scores, classes, seed)
    app = _app_scores(rng, scores, list(app_classes), float(spread), distribution)
    return Profile(scores, labels, float(spread), seed, distribution, app_scores=app)


def _app_scores(rng: np.random.Generator, scores: np.ndarray, names: list[str], spread: float,
                distribution: str) -> tuple[tuple[str, np.ndarray], ...]:
    """Per application class its score grid (see the module docstring)."""
    bad = [n for n in names if not n or "," in n or n != n.strip()]
    if bad or len(set(names)) != len(names):
        raise UsageError(f"application classes {','.join(names)!r}: expected distinct names "
                         "without commas or surrounding spaces")
    out = []
    for name in names:
        m = float(rng.uniform(0.5, 1.5))
        if spread > 0:
            m = min(m, MAX_SPREAD / spread)
        d = _draw(rng, scores.size, spread, distribution).reshape(scores.shape)
        raw = 1.0 + m * (RHO * (scores - 1.0) + (1.0 - RHO) * (d - 1.0))
        out.append((name, np.array([float(f"{v:.6f}") for v in raw.ravel()]).reshape(scores.shape)))
    return tuple(out)


def write_profile(profile: Profile, path: str | Path, *, force: bool = False) -> Path:
    """Write ``profile`` as CSV ``node,gpu_index,score,class`` (atomic; refuses an existing file
    without ``force``)."""
    data = profile.to_csv()
    with atomic_file(path, force) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def read_profile(path: str | Path, site: Site, *, classes: int = 4, seed: int = 0) -> Profile:
    """Read a profile (or a plain score file ``node,gpu_index,score``) for ``site``.

    One row per GPU of the site, checked by ``swftools.site.read_score_csv`` (InputError naming
    file, line, field, value and what was expected; classes, when given, ordered by score).
    Without a ``class`` column the scores are clustered as ``generate_profile`` does
    (``classes``, ``seed``)."""
    nodes, gpus = len(site.gpu_model_of_node), site.gpus_per_node
    read = read_score_csv(path, nodes, gpus, site.gpu_model_of_node)
    return _as_profile(read.scores, read.classes, str(path), classes, seed, read.app_scores)


def site_profile(site: Site, *, classes: int = 4, seed: int = 0) -> Profile | None:
    """The profile a site carries in its ``gpu_scores`` file: its scores and, from the file's
    ``class`` column, its classes (without one, clustered as ``read_profile`` does). None when
    the site has no variability to profile: every score equal and no classes given.

    The same profile as ``read_profile`` of that file: ``whatif --profile F`` and a site whose
    ``gpu_scores`` is ``F`` place alike."""
    flat = {s for row in site.gpu_score for s in row}
    if site.gpu_class is None and len(flat) <= 1 and not site.gpu_app_score:
        return None
    return _as_profile(site.gpu_score, site.gpu_class, site.gpu_scores_file, classes, seed,
                       site.gpu_app_score)


def _as_profile(scores: Any, labels: Any, path: str | None, classes: int, seed: int,
                app_scores: Any = ()) -> Profile:
    """The one way scores (and classes, when given: already checked by ``read_score_csv``;
    per-application-class scores, when given) become a ``Profile``."""
    values = np.array(scores, dtype=np.float64)
    if labels is None:
        klass = cluster_scores(values, classes, seed)
    else:
        klass = np.array(labels, dtype=np.int64).reshape(values.shape)
    app = tuple((str(name), np.array(grid, dtype=np.float64).reshape(values.shape))
                for name, grid in app_scores)
    return Profile(values, klass, path=path, app_scores=app)
