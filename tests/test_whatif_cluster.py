"""Derived sites (``swftools.whatif.cluster``): an upgraded site is the site its own settings
describe, scores and classes replace the site's, a flat pool is a site of one-processor nodes."""

from __future__ import annotations

import dataclasses

import pytest

from swftools.errors import UsageError
from swftools.site import NodeGroup, Queue, load_site, site_from_settings
from swftools.whatif.cluster import flat_site, upgraded, with_scores


def test_an_upgraded_site_is_the_site_its_settings_describe():
    half = upgraded(load_site("aaic"), 20)
    assert half == site_from_settings(half.settings)  # every field but the settings
    assert half.title == "AIST AI Cloud (AAIC) with 20 V100 nodes"
    assert half.node_groups == (NodeGroup("p100", 20, "P100", 8), NodeGroup("v100", 20, "V100", 8))


def test_a_model_in_several_runs_gets_numbered_groups():
    site = load_site("aaic-v100-half")                       # 20 P100, then 20 V100
    site = upgraded(site, 5, gpu_model="P100")                # ... 15 V100, 5 P100
    site = upgraded(site, 2, gpu_model="V100")                # ... 3 P100, 2 V100
    site = upgraded(site, 1, gpu_model="P100")                # ... 1 V100, 1 P100
    assert [(g.name, g.nodes, g.gpu_model) for g in site.node_groups] == [
        ("p100", 20, "P100"), ("v100", 15, "V100"), ("p100-2", 3, "P100"),
        ("v100-2", 1, "V100"), ("p100-3", 1, "P100")]
    assert site.name == "aaic-v100-half-p100-5-v100-2-p100-1"
    assert site == site_from_settings(site.settings)


def test_upgrading_no_node_returns_the_site():
    site = load_site("aaic")
    assert upgraded(site, 0) is site


def test_scores_replace_the_site_scores_classes_and_per_class_scores():
    site = load_site("aaic")
    scored = dataclasses.replace(site, gpu_class=((1,) * 8,) * 40,
                                 gpu_app_score=(("IC", ((1.0,) * 8,) * 40),))
    scores = [[0.5 + k / 100] * 8 for k in range(40)]
    out = with_scores(scored, scores)
    assert out.gpu_score == tuple(tuple(row) for row in scores)
    assert out.gpu_class is None and out.gpu_app_score == ()
    classes = [[k % 2] * 8 for k in range(40)]
    out = with_scores(scored, scores, classes)
    assert out.gpu_class == tuple(tuple(row) for row in classes)
    assert out.gpu_app_score == () and out.name == "aaic"


def test_scores_and_classes_that_do_not_fit_are_refused_with_their_shape():
    site = load_site("aaic")
    ones = [[1.0] * 8 for _ in range(40)]
    with pytest.raises(UsageError) as exc:
        with_scores(site, ones[:-1])
    assert str(exc.value) == "scores for 39 nodes do not fit site aaic (40 nodes of 8 GPUs)"
    with pytest.raises(UsageError) as exc:
        with_scores(site, ones[:-1] + [[1.0] * 7])
    assert str(exc.value) == "scores for 40 nodes do not fit site aaic (40 nodes of 8 GPUs)"
    for bad in (-0.5, 0.0, float("inf")):  # the rule of site.is_score: positive and finite
        with pytest.raises(UsageError) as exc:
            with_scores(site, ones[:-1] + [[1.0] * 7 + [bad]])
        assert str(exc.value) == (f"GPU scores: node 39, GPU 7: {bad} is not a positive score "
                                  "(expected a positive decimal number, 1.0 = nominal)")
    with pytest.raises(UsageError) as exc:
        with_scores(site, ones, [[0] * 8] * 39 + [[0] * 7])
    assert str(exc.value) == "classes do not fit the scores of site aaic"


def test_a_flat_pool_is_a_site_of_one_processor_nodes():
    site = flat_site(4)
    assert (site.name, site.title, site.time_zone) == ("flat-4", "flat pool of 4 processors",
                                                       "UTC")
    assert site.gpu_model == "CPU" and site.gpus_per_node == 1
    assert site.gpu_model_of_node == ("CPU",) * 4 and site.rack_of_node == (0,) * 4
    assert (site.capacity_since, site.capacity_nodes) == ((0,), (4,))
    assert site.queues == (Queue("all", 1, 1, 4, 1, 1, 1, 10**12),)
    assert flat_site(5, gpu_model="Xeon", nodes_per_rack=2).rack_of_node == (0, 0, 1, 1, 2)
    assert flat_site(1, gpu_model="Xeon").gpu_model_of_node == ("Xeon",)
    with pytest.raises(UsageError) as exc:
        flat_site(0)
    assert str(exc.value) == "a flat pool needs at least one processor, not 0"
