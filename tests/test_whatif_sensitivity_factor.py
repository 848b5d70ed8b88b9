"""The sensitivity model's run-time factor (``swftools.whatif.sensitivity.FactorModel``) against
the module docstring's formula worked independently (``_oracle_factor``), on drawn sites of up to
three GPU models with racks, links in any order and per-GPU scores; the placement key, the
kernel's form, and the shared models of ``factor_model``."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.site import load_site
from swftools.whatif.kernel import sensitivity_factor
from swftools.whatif.sensitivity import (FactorModel, factor_model, link_kind, load_sensitivity,
                                         recorded_link_kind, runtime_factor)
from tests.strategies import (SENSITIVITY_MODELS, examples, sensitivity_factor_cases,
                              whatif_placements)


@pytest.fixture(scope="module")
def sens():
    return load_sensitivity("mlperf-p100-v100")


def test_a_placement_must_hold_gpus_on_each_of_its_nodes(sens):
    fm = FactorModel(load_site("aaic"), sens)
    with pytest.raises(ValueError) as info:
        fm.key(0, [0, 1], [[0]])
    assert str(info.value) == "nodes and gpus must have one entry per node"
    with pytest.raises(ValueError) as info:
        fm.factor(0, [0, 1], [[], []])
    assert str(info.value) == "a placement holds at least one GPU"


def test_the_kernel_keys_rows_by_int64_class(sens):
    """``FactorKernel.keys`` is int64 (the compiled engine reads it so) whatever ``classes``
    came as."""
    fm = FactorModel(load_site("aaic"), sens)
    for classes in ([3, 1], np.array([3, 1], dtype=np.int32), np.array([3, 1], dtype=np.uint8)):
        kernel = fm.kernel(classes)
        assert kernel.keys.dtype == np.int64 and kernel.keys.tolist() == [3, 1]
        assert kernel.score_grids is None


def test_factor_model_keeps_the_last_four(sens):
    """``factor_model`` hands back the model it built for the same site and sensitivity objects
    (and trace GPU model), for the last four such inputs; older ones are built anew."""
    site = load_site("aaic")
    copies = [dataclasses.replace(site) for _ in range(5)]
    first = [factor_model(s, sens) for s in copies[:4]]
    assert [factor_model(s, sens) for s in copies[:4]] == first  # all four kept
    assert all(factor_model(s, sens) is fm for s, fm in zip(copies, first))
    fifth = factor_model(copies[4], sens)
    assert all(factor_model(s, sens) is fm for s, fm in zip(copies[1:], first[1:] + [fifth]))
    again = factor_model(copies[0], sens)  # the oldest was dropped: a new model
    assert again is not first[0] and again.trace_model == "P100"
    other = factor_model(copies[0], sens, "V100")
    assert other is not again and other.trace_model == "V100"


# --- the factor against the module docstring's formula, worked independently ---------------

def _oracle_level(site, nodes, p):
    """The docstring's locality level: 0 one GPU, 1 one node, 2 one rack, 3 several racks."""
    if p == 1:
        return 0
    if len(set(nodes)) == 1:
        return 1
    return 2 if len({site.rack_of_node[n] for n in nodes}) == 1 else 3


def _oracle_recorded_level(site, p):
    """The recorded placement's level: ceil(p / gpus_per_node) nodes packed, one rack if the
    largest rack holds that many nodes."""
    if p == 1:
        return 0
    need = math.ceil(p / site.gpus_per_node)
    largest = max(list(site.rack_of_node).count(r) for r in set(site.rack_of_node))
    return 1 if need == 1 else 2 if need <= largest else 3


def _oracle_factor(site, sens, links, cls, nodes, gpus, scores, trace):
    """The module docstring's factor, read literally: ``links`` kind -> (GB/s, us) as drawn."""
    c = sens.classes[cls]
    p = sum(len(g) for g in gpus)
    slowest = min(c.speed[site.gpu_model_of_node[n]] for n in nodes)
    s_min = min(scores[n][g] for n, gs in zip(nodes, gpus) for g in gs)
    r = c.speed[trace] / slowest / s_min
    level, rec = _oracle_level(site, nodes, p), _oracle_recorded_level(site, p)
    kinds = [links[k] for k in ("intra_node", "inter_node", "inter_rack")]

    def comm(k):
        if p == 1:
            return 0.0
        bandwidth = min(b for b, _ in kinds[:k]) * 1e9  # the slowest link of the ring
        latency = max(lat for _, lat in kinds[:k]) * 1e-6
        return 2 * (p - 1) / p * c.gradient_mb * 1e6 / bandwidth + 2 * (p - 1) * latency

    if r == 1.0 and level == rec:
        return 1.0, (level, rec)
    i = c.iteration_ms * 1e-3
    return (i * r + comm(level)) / (i + comm(rec)), (level, rec)


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data(), case=sensitivity_factor_cases())
def test_factor_follows_the_docstring_formula(data, case):
    """Any placement (distinct nodes, GPU lists of their own) on a site of up to three GPU
    models, racks and links in any order: ``factor``, ``runtime_factor`` and the vectorized
    ``factors`` give the docstring's factor; ``link_kind`` and ``recorded_link_kind`` its levels."""
    site, sens, links, scores = case
    nodes, gpus = data.draw(whatif_placements(site, max_nodes=9))
    cls = data.draw(st.integers(0, len(sens.classes) - 1))
    want, (level, rec) = _oracle_factor(site, sens, links, cls, nodes, gpus, scores,
                                        site.gpu_model)
    fm = FactorModel(site, sens)
    got = fm.factor(cls, nodes, gpus)
    assert type(got) is float
    assert got == pytest.approx(want, rel=1e-12)
    if want == 1.0:
        assert got == 1.0
    assert fm.factor(cls, nodes, gpus) == got  # again, from the cache
    assert runtime_factor(site, sens, cls, nodes, gpus) == got
    p = sum(len(g) for g in gpus)
    assert link_kind(site, nodes, p) == ("none", "intra_node", "inter_node", "inter_rack")[level]
    assert recorded_link_kind(site, p) == ("none", "intra_node", "inter_node", "inter_rack")[rec]
    key = fm.key(cls, nodes, gpus)
    assert (key[0], key[3], key[4]) == (cls, level, p)  # (class, models, s_min, level, p)
    vec = fm.factors(*(np.array([k]) for k in key))
    assert vec.shape == (1,) and vec[0] == pytest.approx(want, rel=1e-12)


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data(), case=sensitivity_factor_cases())
def test_engine_placements_and_the_kernel_follow_the_formula(data, case):
    """The engine's form (one GPU list shared by all its nodes, the numpy path from five nodes
    on), the compiled kernel and its Python reference, against the docstring's factor."""
    site, sens, links, scores = case
    n, g = len(site.gpu_model_of_node), site.gpus_per_node
    nodes = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    held = sorted(data.draw(st.lists(st.integers(0, g - 1), min_size=1, max_size=g, unique=True)))
    cls = data.draw(st.integers(0, len(sens.classes) - 1))
    gpus = [held] * len(nodes)
    want, _ = _oracle_factor(site, sens, links, cls, nodes, gpus, scores, site.gpu_model)
    fm = FactorModel(site, sens)
    assert fm.factor(cls, nodes, gpus) == pytest.approx(want, rel=1e-12)
    # the same placement with lists of its own (the loop path) has the same key
    assert fm.key(cls, nodes, gpus) == fm.key(cls, nodes, [list(held) for _ in nodes])
    kernel = fm.kernel(np.array([cls], dtype=np.int64))
    models = 0
    for k in nodes:
        models |= 1 << SENSITIVITY_MODELS.index(site.gpu_model_of_node[k])
    s_min = min(scores[k][i] for k in nodes for i in held)
    args = (models, s_min, len(nodes), len({site.rack_of_node[k] for k in nodes}), len(held))
    assert kernel.factor(0, *args) == pytest.approx(want, rel=1e-12)
    assert sensitivity_factor(cls, *args, kernel.params) == pytest.approx(want, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), case=sensitivity_factor_cases())
def test_the_trace_model_may_be_named(data, case):
    """A trace GPU model given to ``FactorModel`` (long or short name) replaces the site's."""
    site, sens, links, scores = case
    trace = data.draw(st.sampled_from(SENSITIVITY_MODELS))
    nodes, gpus = data.draw(whatif_placements(site))
    want, _ = _oracle_factor(site, sens, links, 0, nodes, gpus, scores, trace)
    fm = FactorModel(site, sens, f"NVIDIA Tesla {trace}")
    assert fm.factor(0, nodes, gpus) == pytest.approx(want, rel=1e-12)
    assert runtime_factor(site, sens, 0, nodes, gpus, trace.lower()) == pytest.approx(want,
                                                                                        rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), case=sensitivity_factor_cases())
def test_class_scores_replace_the_sites_per_class(data, case):
    """``with_class_scores``: class ``c`` runs at the grid ``grids[c]``, in ``factor`` and in
    the kernel (which reads the class's grid); the site's scores no longer count."""
    site, sens, links, scores = case
    n, g = len(site.gpu_model_of_node), site.gpus_per_node
    grid = st.lists(st.lists(st.sampled_from([0.5, 1, 2]), min_size=g, max_size=g),
                    min_size=n, max_size=n)  # integers too: JSON gives 1, not 1.0
    grids = [data.draw(grid) for _ in sens.classes]
    nodes = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    held = sorted(data.draw(st.lists(st.integers(0, g - 1), min_size=1, max_size=g, unique=True)))
    trace = data.draw(st.sampled_from(SENSITIVITY_MODELS))
    fm = FactorModel(site, sens, trace).with_class_scores(grids)
    assert fm.trace_model == trace
    for cls in range(len(sens.classes)):
        want, _ = _oracle_factor(site, sens, links, cls, nodes, [held] * len(nodes), grids[cls],
                                 trace)
        assert fm.factor(cls, nodes, [held] * len(nodes)) == pytest.approx(want, rel=1e-12)
        assert fm.factor(cls, nodes, [list(held) for _ in nodes]) == pytest.approx(want,
                                                                                  rel=1e-12)
        kernel = fm.kernel(np.arange(len(sens.classes), dtype=np.int64))
        assert kernel.score_grids.shape == (len(grids), n, g)
        assert kernel.score_grids.dtype == np.float64  # as FactorKernel takes them
        assert kernel.score_grids[cls].tolist() == grids[cls]


def test_class_scores_of_the_wrong_shape(sens):
    fm = FactorModel(load_site("aaic"), sens)
    with pytest.raises(ValueError, match=r"shape \(8, 40, 8\): expected one \(40, 8\) grid"):
        fm.with_class_scores([[[1.0] * 8] * 40] * 8)
    scored = fm.with_class_scores([[[1] * 8] * 40] * 9)  # integer scores, as JSON gives them
    assert scored.class_score.shape == (9, 40, 8)
    assert scored.kernel(np.arange(9)).score_grids.dtype == np.float64
    assert fm.class_score is None


@settings(max_examples=40, deadline=None)
@given(data=st.data(), case=sensitivity_factor_cases())
def test_factors_of_many_keys_at_once(data, case):
    """``factors`` over the keys of several placements, stacked as one float array (one row a
    key, so every column is float) with GPU counts in any order: each the docstring's factor."""
    site, sens, links, scores = case
    fm = FactorModel(site, sens)
    placements = data.draw(st.lists(whatif_placements(site), min_size=1, max_size=6))
    classes = [data.draw(st.integers(0, len(sens.classes) - 1)) for _ in placements]
    keys = np.array([fm.key(c, nodes, gpus) for c, (nodes, gpus) in zip(classes, placements)])
    got = fm.factors(*keys.T)
    want = [_oracle_factor(site, sens, links, c, nodes, gpus, scores, site.gpu_model)[0]
            for c, (nodes, gpus) in zip(classes, placements)]
    assert got.dtype == np.float64 and got.shape == (len(want),)
    assert got.tolist() == pytest.approx(want, rel=1e-12)
    assert [g for g, w in zip(got, want) if w == 1.0] == [1.0 for w in want if w == 1.0]


def test_a_site_without_nodes_still_gets_a_model(sens):
    """A ``Site`` built without a capacity timeline has no node and no rack: its model builds,
    and a recorded placement of more than one node is ``inter_rack`` (no rack holds two nodes)."""
    site = dataclasses.replace(load_site("aaic"), capacity_since=(), capacity_nodes=(),
                               node_groups=(), gpu_model_of_node=(), rack_of_node=(),
                               gpu_score=())
    assert site.rack_of_node == ()
    fm = FactorModel(site, sens)
    assert [fm.recorded_level(p) for p in (1, 8, 9, 16, 17)] == [0, 1, 3, 3, 3]


def test_engine_placements_within_one_rack_and_across_racks(sens):
    """The engine's many-node placements (one GPU list for five nodes or more): in one rack the
    ring spans ``inter_node`` links, across racks ``inter_rack`` (the site's default links)."""
    site = load_site("aaic-v100-half")  # racks of ten nodes; nodes 20-39 hold V100s
    links = {"intra_node": (80.0, 2.0), "inter_node": (12.5, 5.0), "inter_rack": (6.25, 10.0)}
    fm = FactorModel(site, sens, "P100")
    held = [0, 1]
    for nodes, level in ((range(0, 6), 2), (range(5, 11), 3), (range(20, 25), 2),
                         (range(27, 35), 3)):
        nodes = list(nodes)
        gpus = [held] * len(nodes)
        assert fm.key(6, nodes, gpus)[3] == level
        want, _ = _oracle_factor(site, sens, links, 6, nodes, gpus, site.gpu_score, "P100")
        assert fm.factor(6, nodes, gpus) == pytest.approx(want, rel=1e-12)
    # 12 GPUs on six P100 nodes of one rack: as recorded (two nodes of one rack), exactly 1
    assert fm.factor(6, list(range(6)), [held] * 6) == 1.0
