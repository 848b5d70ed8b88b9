"""The compiled ``random.Random`` (``placement/_mtrand.pyx``) draws exactly what CPython draws: the raw
calls on one generator in any order (across the 624-word twist), and ``draw_random`` against
``placement.Random.draw`` on the same free-GPU snapshots."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings

from swftools.replay.placement import Random
from swftools.replay.placement import _mtrand as cmr
from swftools.replay.placement import mtrand as mr

from .strategies import mt_call_sequences, random_placement_cases
from .test_replay_placement import as_state

WORD = 32  # nodes per word of the compiled node state


def python_setsize(k):
    """``Random.sample``'s ``setsize`` as ``random.py`` computes it."""
    return 21 + (4 ** math.ceil(math.log(k * 3, 4)) if k > 5 else 0)


def test_state_round_trip():
    rng = random.Random(42)
    rng.getrandbits(32)
    mt = mr.state_of(rng)
    assert mt.dtype == np.uint32 and mt.shape == (625,)
    assert mr.python_state(mt) == rng.getstate()
    assert mr.python_state(mr.mt_state(7)) == random.Random(7).getstate()


def test_sample_setsize_matches_cpython():
    """Every ``k`` up to 300,000 and powers of 4 and their neighbours up to 2 ** 31."""
    ks = list(range(0, 300_000))
    ks += [4 ** e // 3 + d for e in range(2, 16) for d in (-1, 0, 1, 2)]
    ks = np.array(ks, dtype=np.int64)
    assert cmr.sample_setsizes(ks).tolist() == [python_setsize(k) for k in ks.tolist()]


@settings(max_examples=250, deadline=None)
@given(mt_call_sequences())
def test_calls_match_cpython(case):
    seed, ops = case
    mt = mr.mt_state(seed)
    rng = random.Random(seed)
    for op in ops:
        kind = op[0]
        if kind == "bits":
            assert cmr.getrandbits(mt, op[1]) == rng.getrandbits(op[1]), op
        elif kind == "below":
            assert cmr.randbelow(mt, op[1]) == rng._randbelow(op[1]), op
        elif kind == "choice":
            assert cmr.choice_index(mt, op[1]) == rng.choice(range(op[1])), op
        elif kind == "sample":
            n, k = op[1], op[2]
            out = np.full(k, -1, dtype=np.int64)
            scratch = mr.new_scratch(n)
            cmr.sample_indices(mt, n, k, out, scratch)
            assert out.tolist() == rng.sample(range(n), k), op
            assert not scratch.any(), "scratch not left zeroed"
        else:
            got = [cmr.genrand_uint32(mt) for _ in range(op[1])]
            assert got == [rng.getrandbits(32) for _ in range(op[1])], op
        assert mr.python_state(mt) == rng.getstate(), op


def compiled_state(free, managed, g):
    """The same snapshot as ``engine_gpu_jit`` holds it: (exact words, cnt, gpu_free)."""
    n = len(free)
    exact = np.zeros((g + 1, (n + WORD - 1) // WORD), dtype=np.int64)
    cnt = np.zeros(g + 1, dtype=np.int64)
    gpu_free = np.array([sum(1 << i for i in range(g) if row[i]) for row in free],
                        dtype=np.int64)
    for k in range(managed):
        f = sum(free[k])
        exact[f, k // WORD] |= 1 << (k % WORD)
        cnt[f] += 1
    return exact, cnt, gpu_free


def shapes_that_fit(free, managed, g):
    """(nodes, per_node) of every job shape that fits the snapshot now."""
    counts = [sum(row) for row in free[:managed]]
    whole = counts.count(g)
    most = max(counts, default=0)
    return [(1, p) for p in range(1, most + 1)] + [(m, g) for m in range(2, whole + 1)]


def assert_same_draws(seed, g, free, managed, steps):
    placement = Random(seed=seed)
    placement.start(as_state(free, managed, g), None)
    mt = mr.mt_state(seed)
    out = np.full(len(free), -1, dtype=np.int64)
    scratch = mr.new_scratch(len(free))
    for step in steps:
        if step[0] == "free":
            free[step[1]] = [True] * g
            continue
        if step[0] == "shape":  # an explicit shape (that fits)
            nodes, per_node = step[1]
        else:
            shapes = shapes_that_fit(free, managed, g)
            if not shapes:
                continue
            nodes, per_node = shapes[step[1] % len(shapes)]
        want_set, want_gpus = placement.draw(as_state(free, managed, g), nodes, per_node)
        exact, cnt, gpu_free = compiled_state(free, managed, g)
        count, gpus = cmr.draw_random(mt, exact, cnt, gpu_free, g, nodes, per_node, out,
                                     scratch)
        chosen = out[:count].tolist()
        assert chosen == sorted(chosen) and count == nodes
        assert (sum(1 << k for k in chosen), gpus) == (want_set, want_gpus), (nodes, per_node)
        assert not scratch.any(), "scratch not left zeroed"
        assert mr.python_state(mt) == placement.rng.getstate()
        if step[2]:  # take the placement: the next draws see another state
            for k in chosen:
                for i in range(g):
                    if gpus >> i & 1:
                        free[k][i] = False


@settings(max_examples=300, deadline=None)
@given(random_placement_cases())
def test_draw_random_matches_python(case):
    assert_same_draws(*case)


@pytest.mark.parametrize("n_nodes,g", [(1088, 4), (700, 1), (160, 8)])
def test_draw_random_on_wide_sites(n_nodes, g):
    """ABCI's width and a flat-pool-like site: long candidate lists, both ``sample`` branches
    for multi-node jobs (few nodes out of many; many out of many)."""
    rnd = random.Random(n_nodes)
    free = [[rnd.random() < 0.8 for _ in range(g)] for _ in range(n_nodes)]
    steps = [("draw", rnd.randrange(10 ** 6), rnd.random() < 0.3) for _ in range(200)]
    assert_same_draws(5, g, free, n_nodes - 3, steps)


@pytest.mark.parametrize("nodes", [2, 5, 6, 16, 17, 40, 68, 69, 300, 1000, 1088])
def test_draw_random_sorts_every_way(nodes):
    """Multi-node draws of every size on 1,088 whole free nodes: ``sample``'s set and pool
    branches, and the ascending order by insertion, by marks and by ``qsort``."""
    steps = [("shape", (nodes, 1), False)] * 5 + [("shape", (1, 1), True)] * 3
    assert_same_draws(11, 1, [[True] for _ in range(1088)], 1088, steps)


def test_draw_random_without_a_fit_draws_nothing():
    g = 2
    free = [[True, False], [False, False], [True, True]]
    exact, cnt, gpu_free = compiled_state(free, 3, g)
    mt = mr.mt_state(3)
    before = mt.copy()
    out = np.zeros(3, dtype=np.int64)
    scratch = mr.new_scratch(3)
    for nodes, per_node in [(2, 2), (1, 3)]:
        assert cmr.draw_random(mt, exact, cnt, gpu_free, g, nodes, per_node, out,
                              scratch) == (0, 0)
    assert (mt == before).all()
