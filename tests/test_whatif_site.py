"""The heterogeneous resource model of the site settings (issue 14): node groups, racks, links,
the per-GPU score file, the presets and ``swftools.whatif.cluster.upgraded``."""

from __future__ import annotations

import dataclasses
import json

import pytest

from swftools.errors import InputError, UsageError
from swftools.site import (DEFAULT_LINKS, Link, NodeGroup, load_site, read_score_csv,
                           short_gpu_model, site_from_settings)
from swftools.whatif.cluster import upgraded, with_scores
from tests.strategies import whatif_settings


def test_aaic_preset_stays_homogeneous_p100():
    site = load_site("aaic")
    assert not {"node_groups", "racks", "links", "gpu_scores"} & set(site.settings)
    assert site.gpu_model == "P100" and site.gpu_model_text == "NVIDIA Tesla P100"
    assert site.node_groups == (NodeGroup("p100", 40, "P100", 8),)
    assert site.gpu_model_of_node == ("P100",) * 40 and site.rack_of_node == (0,) * 40
    assert site.gpu_score == ((1.0,) * 8,) * 40 and site.links == DEFAULT_LINKS
    assert site.is_homogeneous and site.gpu_scores_file is None
    # the fields that existed before are what the file says
    assert (site.name, site.gpus_per_node, site.max_nodes, len(site.queues)) == ("aaic", 8, 40, 4)
    assert site.walltime_grace_s == 300 and site.termcode_to_swf_status[3] == 5


def test_site_stays_frozen_and_its_new_fields_hashable():
    site = load_site("aaic-v100-half")
    with pytest.raises(dataclasses.FrozenInstanceError):
        site.gpu_model = "V100"  # type: ignore[misc]
    for value in (site.node_groups, site.gpu_model_of_node, site.rack_of_node, site.gpu_score,
                  site.links):
        hash(value)


def test_half_v100_preset():
    site = load_site("aaic-v100-half")
    assert site.gpu_model == "P100"  # the trace ran on P100
    assert site.gpu_model_of_node == ("P100",) * 20 + ("V100",) * 20
    assert site.rack_of_node == tuple(i // 10 for i in range(40))
    assert site.gpu_models == ("P100", "V100") and not site.is_homogeneous
    assert [g.nodes for g in site.node_groups] == [20, 20]


def test_round_trip_of_every_key(tmp_path):
    (tmp_path / "scores.csv").write_text(
        "node,gpu_index,score\n" + "".join(f"{n},{g},{1 + n / 10 + g / 100}\n"
                                           for n in range(3) for g in range(2)))
    settings = whatif_settings(
        3, 2, gpu_model="Tesla V100-SXM2-16GB",
        node_groups=[{"name": "a", "nodes": 1, "gpu_model": "NVIDIA Tesla P100", "gpus_per_node": 2},
                     {"name": "b", "nodes": 2, "gpu_model": "V100", "gpus_per_node": 2}],
        racks=[4, 4, 7],
        links={"inter_node": {"bandwidth_gbytes_per_s": 25, "latency_us": 1.5}},
        gpu_scores="scores.csv")
    path = tmp_path / "site.json"
    path.write_text(json.dumps(settings))
    site = load_site(path)
    assert site.gpu_model == "V100" and site.gpu_model_text == "Tesla V100-SXM2-16GB"
    assert site.gpu_model_of_node == ("P100", "V100", "V100")
    assert site.rack_of_node == (4, 4, 7)
    assert site.links.inter_node == Link(25.0, 1.5)
    assert site.links.intra_node == DEFAULT_LINKS.intra_node  # defaults for the levels not given
    assert site.gpu_score == ((1.0, 1.01), (1.1, 1.11), (1.2, 1.21))
    assert site.gpu_scores_file == str(tmp_path / "scores.csv")
    assert load_site(path) == site


@pytest.mark.parametrize("text, short", [("NVIDIA Tesla P100", "P100"), ("v100", "V100"),
                                         ("Tesla V100-SXM2-16GB", "V100"), ("A100 80GB", "A100"),
                                         ("K80", "K80"), ("", ""), ("AMD Instinct MI250X", "MI250X")])
def test_short_gpu_model(text, short):
    assert short_gpu_model(text) == short


# --- bad input -------------------------------------------------------------------------------

def _error(settings) -> InputError:
    with pytest.raises(InputError) as info:
        site_from_settings(settings, "site.json")
    return info.value


def test_node_groups_must_cover_the_capacity():
    err = _error(whatif_settings(4, 2, node_groups=[
        {"name": "a", "nodes": 3, "gpu_model": "P100", "gpus_per_node": 2}]))
    assert (err.path, err.field, err.value) == ("site.json", "node_groups", "3")
    assert "adding up to 4" in err.expected


def test_node_groups_with_another_gpu_count_are_refused():
    err = _error(whatif_settings(4, 2, node_groups=[
        {"name": "a", "nodes": 2, "gpu_model": "P100", "gpus_per_node": 2},
        {"name": "b", "nodes": 2, "gpu_model": "V100", "gpus_per_node": 4}]))
    assert err.field == "node_groups/1/gpus_per_node" and err.value == "4"
    assert "not supported in this version" in str(err) and "2, the site's gpus_per_node" in str(err)


def test_duplicate_group_names_are_refused():
    err = _error(whatif_settings(2, 1, node_groups=[
        {"name": "a", "nodes": 1, "gpu_model": "P100", "gpus_per_node": 1},
        {"name": "a", "nodes": 1, "gpu_model": "V100", "gpus_per_node": 1}]))
    assert err.field == "node_groups/1/name"


def test_rack_id_for_a_node_that_does_not_exist():
    err = _error(whatif_settings(3, 1, racks=[0, 0, 1, 1]))
    assert (err.field, err.value) == ("racks/3", "1")
    assert "node 3, which does not exist" in err.message and "3 entries" in err.expected
    err = _error(whatif_settings(3, 1, racks=[0, 0]))
    assert err.field == "racks" and "no rack id for node 2" in err.message


def test_links_are_checked_by_the_schema():
    err = _error(whatif_settings(2, 1, links={"intra_node": {"bandwidth_gbytes_per_s": 0,
                                                             "latency_us": 1}}))
    assert "links/intra_node/bandwidth_gbytes_per_s" in str(err)


SCORES_OK = "node,gpu_index,score\n0,0,1.0\n0,1,0.9\n1,0,1.1\n1,1,1\n"


@pytest.mark.parametrize("text, line, field, value, expected", [
    ("node,gpu_index,score\n0,0,1.0\n0,1,0.9\n1,0,1.1\n", 4, "score", "node 1, gpu_index 1",
     "one row per GPU"),
    ("node,gpu_index,score\n0,0,1.0\n0,1,fast\n1,0,1.1\n1,1,1\n", 3, "score", "fast",
     "positive decimal"),
    ("node,gpu_index,score\n0,0,1.0\n0,1,0\n1,0,1.1\n1,1,1\n", 3, "score", "0", "positive"),
    ("node,gpu_index,score\n0,0,1.0\n0,1,-0.5\n1,0,1.1\n1,1,1\n", 3, "score", "-0.5", "positive"),
    ("node,gpu_index,score\n0,0,nan\n", 2, "score", "nan", "positive"),
    ("node,gpu_index,score\n0,0,inf\n", 2, "score", "inf", "positive"),
    ("node,gpu_index,score\n0,0,1.0\n2,1,0.9\n", 3, "node", "2", "0..1"),
    ("node,gpu_index,score\n0,0,1.0\n0,2,0.9\n", 3, "gpu_index", "2", "0..1"),
    ("node,gpu_index,score\n0,0,1.0\n-1,0,0.9\n", 3, "node", "-1", "0..1"),
    ("node,gpu_index,score\n0,0,1.0\n0,1,0.9\n0,0,1.1\n", 4, "gpu_index", "0", "one row per GPU"),
    ("node,gpu_index\n0,0\n", 1, "score", "node,gpu_index", "node,gpu_index,score"),
    ("node,gpu_index,score\n0,0\n", 2, None, "0,0", "3 comma-separated"),
    ("node,gpu_index,score,gpu_model\n0,0,1.0,P100\n0,1,1.0,A100\n", 3, "gpu_model", "A100",
     "P100"),
    ("node,gpu_index,score,class\n0,0,1.0,x\n", 2, "class", "x", "integer"),
    ("", 1, None, None, "header"),
])
def test_bad_score_files_are_located(tmp_path, text, line, field, value, expected):
    path = tmp_path / "scores.csv"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_score_csv(path, 2, 2, ("P100", "P100"))
    err = info.value
    assert (err.path, err.line, err.field, err.value) == (str(path), line, field, value)
    assert expected in err.expected


def test_score_file_named_in_a_site_file(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES_OK.replace("1,1,1\n", "1,1,x\n"))
    path = tmp_path / "site.json"
    path.write_text(json.dumps(whatif_settings(2, 2, gpu_scores="s.csv")))
    with pytest.raises(InputError) as info:
        load_site(path)
    assert info.value.path == str(tmp_path / "s.csv") and info.value.line == 5
    (tmp_path / "s.csv").unlink()
    with pytest.raises(InputError, match="no such GPU score file"):
        load_site(path)


def test_a_good_score_file_reads_in_any_row_order(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("score,gpu_index,node\n1,1,1\n1.1,0,1\n0.9,1,0\n1.0,0,0\n\n")
    read = read_score_csv(path, 2, 2)
    assert read.scores == ((1.0, 0.9), (1.1, 1.0)) and read.classes is None
    assert read.lines == ((5, 4), (3, 2))


# --- derived sites ---------------------------------------------------------------------------

@pytest.mark.parametrize("k", [0, 1, 12, 20, 40])
def test_upgraded_counts(k):
    site = upgraded(load_site("aaic"), k)
    assert site.gpu_model_of_node == ("P100",) * (40 - k) + ("V100",) * k
    assert sum(g.nodes for g in site.node_groups) == 40
    assert site.gpu_model == "P100" and site.gpus_per_node == 8
    assert site.gpu_score == load_site("aaic").gpu_score


def test_upgraded_half_is_the_preset_and_its_settings_load():
    half = upgraded(load_site("aaic"), 20)
    assert half.gpu_model_of_node == load_site("aaic-v100-half").gpu_model_of_node
    assert half.name == "aaic-v100-20"
    again = site_from_settings(half.settings)  # the settings stay a valid site file
    assert again.gpu_model_of_node == half.gpu_model_of_node and again.name == half.name


@pytest.mark.parametrize("k", [-1, 41])
def test_upgraded_refuses_impossible_counts(k):
    with pytest.raises(UsageError, match="choose 0..40"):
        upgraded(load_site("aaic"), k)


def test_with_scores():
    site = load_site("aaic")
    scores = [[0.9] * 8 for _ in range(40)]
    assert with_scores(site, scores).gpu_score[39][7] == 0.9
    with pytest.raises(UsageError):
        with_scores(site, scores[:-1])
    with pytest.raises(UsageError):
        with_scores(site, [[0.0] * 8 for _ in range(40)])
