"""Random building blocks of the synthetic generator: streams, soft quotas, stratified draws."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from swftools.synth.rng import DyadicSequence, SoftQuota, Stream, StratifiedUniform


@given(st.integers(0, 2**32), st.integers(0, 100), st.integers(1, 9000))
def test_stream_draws_do_not_depend_on_how_many_are_taken(seed, key, n):
    first, second = Stream(seed, key), Stream(seed, key)
    short = [first.u() for _ in range(n)]
    long = [second.u() for _ in range(n + 10)]
    assert short == long[:n]
    assert all(0.0 < u < 1.0 for u in long)


def test_streams_with_other_keys_differ():
    assert [Stream(1, 1).u() for _ in range(5)] != [Stream(1, 2).u() for _ in range(5)]


@given(st.integers(0, 1000), st.lists(st.integers(1, 150), min_size=1, max_size=300))
def test_soft_quota_keeps_weighted_counts_near_their_shares(seed, weights):
    stream = Stream(seed, 7)
    shares = [0.6, 0.3, 0.1]
    quota = SoftQuota(shares, horizon=400)
    for w in weights:
        quota.choose(stream, w)
    total = sum(weights)
    for share, count in zip(shares, quota.counts, strict=True):
        # never further ahead than its slack plus one draw
        assert count - share * total <= share * 400 + max(weights) + 1e-9


@given(st.integers(0, 1000), st.integers(1, 3000))
def test_stratified_uniform_bins_stay_balanced(seed, n):
    stream = Stream(seed, 8)
    strat = StratifiedUniform(20)
    values = [strat.draw(stream) for _ in range(n)]
    assert all(0.0 < v < 1.0 for v in values)
    assert max(strat.counts) - min(strat.counts) <= 2


@given(st.integers(0, 1000), st.integers(1, 5000))
def test_dyadic_sequence_prefixes_fill_every_dyadic_interval_evenly(seed, n):
    seq = DyadicSequence(Stream(seed, 9))
    values = [seq.draw() for _ in range(n)]
    for level in (1, 2, 3, 4):
        cells = 2 ** level
        counts = [0] * cells
        for v in values:
            counts[int(v * cells)] += 1
        assert max(counts) - min(counts) <= 1
