"""Random building blocks of the synthetic generator: prefix-stable streams and soft quotas.

Prefix stability (``generate(N, s)`` is the first N rows of ``generate(N + M, s)``) comes from
consuming every stream strictly in job order; each stream refills from its own seeded generator
in fixed-size blocks, so the k-th draw never depends on how many jobs are asked for.
"""

from __future__ import annotations

import math

import numpy as np

_BLOCK = 4096


class Stream:
    """Sequential uniform draws in (0, 1) from a generator keyed by ``(seed, key)``."""

    def __init__(self, seed: int, key: int) -> None:
        self._rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, key])))
        self._buffer: list[float] = []
        self._next = 0

    def u(self) -> float:
        """The next uniform draw, strictly inside (0, 1)."""
        if self._next == len(self._buffer):
            block = self._rng.random(_BLOCK)
            self._buffer = np.clip(block, 1e-12, 1 - 1e-12).tolist()
            self._next = 0
        value = self._buffer[self._next]
        self._next += 1
        return value

    def logistic(self) -> float:
        """A standard logistic draw (mean 0, scale 1)."""
        u = self.u()
        return math.log(u / (1.0 - u))

    def exponential(self) -> float:
        """A unit-mean exponential draw."""
        return -math.log(self.u())

    def pick(self, cumulative: list[float]) -> int:
        """Index drawn from a cumulative weight list (last entry = total)."""
        target = self.u() * cumulative[-1]
        lo, hi = 0, len(cumulative) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cumulative[mid] > target:
                hi = mid
            else:
                lo = mid + 1
        return lo


def cumulative(weights: list[float]) -> list[float]:
    """Running sums of ``weights`` (input to ``Stream.pick``)."""
    out, total = [], 0.0
    for w in weights:
        total += w
        out.append(total)
    return out


class SoftQuota:
    """Random categorical choices whose weighted counts stay close to target shares.

    Category c is drawn with probability proportional to ``share_c * horizon + deficit_c`` (never
    negative), where ``deficit_c`` is how many units it lags its share of everything drawn so far.
    When the counts are on target this is an ordinary draw with the target shares; a category
    ahead of its share by ``share_c * horizon`` units is not drawn until the others catch up.
    This keeps a few clustered draws (a sweep of 150 similar jobs counts 150 units) from moving
    the generator's figures: the error stays bounded instead of growing with the square root of
    the number of draws (quasi-random, stratified sampling).
    """

    def __init__(self, shares: list[float], horizon: float) -> None:
        total = float(sum(shares))
        self.shares = [s / total for s in shares]
        self.counts = [0.0] * len(shares)
        self.total = 0.0
        self.horizon = horizon

    def choose(self, stream: Stream, weight: float = 1.0) -> int:
        """Draw a category for something that will count ``weight`` units, and count it."""
        future = self.total + weight
        weights = [max(0.0, s * (self.horizon + future) - c)
                   for s, c in zip(self.shares, self.counts, strict=True)]
        index = stream.pick(cumulative(weights))
        self.counts[index] += weight
        self.total += weight
        return index


class StratifiedUniform:
    """Uniform draws on (0, 1) stratified over ``bins`` equal bins by a ``SoftQuota``."""

    def __init__(self, bins: int, horizon: float) -> None:
        self.bins = bins
        self.quota = SoftQuota([1.0] * bins, horizon)

    def draw(self, stream: Stream, weight: float = 1.0) -> float:
        """A uniform draw whose bin is balanced against ``weight`` units."""
        index = self.quota.choose(stream, weight)
        return (index + stream.u()) / self.bins
