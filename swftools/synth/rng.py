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

    def choose(self, stream: Stream, weight: float = 1.0, among: range | None = None) -> int:
        """Draw a category (from ``among``, default all) counting ``weight`` units; count it."""
        among = among or range(len(self.shares))
        future = self.total + weight
        weights = [max(0.0, self.shares[i] * (self.horizon + future) - self.counts[i])
                   for i in among]
        if not any(weights):  # every allowed category is ahead of its share: plain draw
            weights = [self.shares[i] for i in among]
        index = among[stream.pick(cumulative(weights))]
        self.count(index, weight)
        return index

    def count(self, index: int, weight: float = 1.0) -> None:
        """Count ``weight`` units in category ``index`` (a choice made elsewhere)."""
        self.counts[index] += weight
        self.total += weight


class StratifiedUniform:
    """Uniform draws on (0, 1) kept balanced over ``bins`` equal bins ("power of d choices").

    Each draw looks at ``choices`` random bins (within a window, for clustered draws) plus, for
    global draws, the next bin in turn, and takes the one furthest behind; the counts stay
    within a few units of each other, so the empirical distribution follows the target closely
    even when draws carry weights (a sweep of similar jobs). O(choices) per draw.
    """

    def __init__(self, bins: int, choices: int = 3) -> None:
        self.bins = bins
        self.choices = choices
        self.counts = [0.0] * bins
        self._turn = 0

    def _lagging(self, stream: Stream, low: int, high: int) -> int:
        counts, best = self.counts, -1
        if high - low == self.bins:  # global draw: every bin is looked at once per round
            best = self._turn
            self._turn = (self._turn + 1) % self.bins
        for _ in range(self.choices):
            b = low + min(int(stream.u() * (high - low)), high - low - 1)
            if best < 0 or counts[b] < counts[best]:
                best = b
        return best

    def draw(self, stream: Stream, weight: float = 1.0) -> float:
        """A uniform draw counting ``weight`` units in its bin."""
        b = self._lagging(stream, 0, self.bins)
        self.counts[b] += weight
        return (b + stream.u()) / self.bins

    def peek(self, stream: Stream) -> float:
        """A draw favouring lagging bins, not counted (the centre of a cluster of draws)."""
        return (self._lagging(stream, 0, self.bins) + stream.u()) / self.bins

    def draw_near(self, stream: Stream, u: float, radius_bins: int) -> float:
        """A counted draw within ``radius_bins`` bins of ``u``."""
        center = min(int(u * self.bins), self.bins - 1)
        b = self._lagging(stream, max(0, center - radius_bins),
                          min(self.bins, center + radius_bins + 1))
        self.counts[b] += 1.0
        return (b + stream.u()) / self.bins


class DyadicSequence:
    """Randomly shifted van der Corput sequence: every prefix is spread evenly over (0, 1).

    The k-th value is the base-2 digit reversal of k, XOR-ed with a random shift: among the first
    n values every dyadic interval of length 2^-m holds floor or ceil of n 2^-m of them, so the
    median and other quantiles of a small class land within one draw of their targets.
    """

    _BITS = 32

    def __init__(self, stream: Stream) -> None:
        self.shift = int(stream.u() * (1 << self._BITS))
        self.jitter = stream
        self.index = 0

    def draw(self) -> float:
        """The next value, jittered uniformly inside its finest cell."""
        reversed_bits = int(f"{self.index:0{self._BITS}b}"[::-1], 2) ^ self.shift
        self.index += 1
        return (reversed_bits + self.jitter.u()) / (1 << self._BITS)
