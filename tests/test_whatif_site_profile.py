"""A site's ``gpu_scores`` file as the what-if profile (issue 25, item 4): its class column is
kept, and the site's file and ``--profile`` take one code path (``whatif.profile``)."""

from __future__ import annotations

import json

import pytest

from swftools import table as jt
from swftools.errors import InputError
from swftools.site import load_site
from swftools.whatif.profile import read_profile, site_profile
from swftools.whatif.run import whatif
from tests.strategies import whatif_settings

# node 0: a slow GPU (0.8, class 1); node 1: a fast one (1.0, class 0)
SCORES = "node,gpu_index,score,class\n0,0,0.8,1\n1,0,1.0,0\n"


def _site(tmp_path, scores: str = SCORES):
    (tmp_path / "scores.csv").write_text(scores)
    path = tmp_path / "site.json"
    path.write_text(json.dumps(whatif_settings(2, 1, gpu_scores="scores.csv")))
    return load_site(path)


def _one_job():
    return jt.from_columns({"job_id": [1], "submit_time": [1_500_000_000], "walltime_s": [1000],
                            "gpus": [1], "nodes": [1], "gpus_per_node": [1],
                            "requested_walltime_s": [2000]})


def test_the_site_keeps_the_class_column(tmp_path):
    site = _site(tmp_path)
    assert site.gpu_score == ((0.8,), (1.0,)) and site.gpu_class == ((1,), (0,))
    profile = site_profile(site)
    assert profile.classes.tolist() == [[1], [0]] and profile.path == site.gpu_scores_file


@pytest.mark.parametrize("policy", ["variability-first", "lxv"])
def test_a_free_fast_gpu_is_taken_with_the_sites_classes(tmp_path, policy):
    """By hand: one 1-GPU IC job, both GPUs free. Class 0 is node 1 (score 1.0): the job runs
    there in 1000 s. Before, the site's classes were dropped (every GPU class 0), both policies
    fell back to the lowest node, the slow GPU: 1000 / 0.8 = 1250 s."""
    out = whatif(_one_job(), _site(tmp_path), policies=policy, class_rule="single:IC")
    jobs = out.results[policy].jobs
    assert jobs.column("node_ids").to_pylist() == ["1"]
    assert jobs.column("run_s").to_pylist() == [1000]


def test_profile_option_and_site_file_are_one_path(tmp_path):
    """The same file as --profile on a plain site and as the site's gpu_scores: same schedules."""
    site = _site(tmp_path)
    plain = load_site(tmp_path / "site.json")
    plain_settings = dict(plain.settings)
    del plain_settings["gpu_scores"]
    (tmp_path / "plain.json").write_text(json.dumps(plain_settings))
    plain = load_site(tmp_path / "plain.json")
    assert site_profile(plain) is None  # no scores, no classes: no profile
    names = "packed,variability-first,lxv,priority"
    a = whatif(_one_job(), site, policies=names, class_rule="single:IC")
    b = whatif(_one_job(), plain, policies=names, class_rule="single:IC",
               profile=tmp_path / "scores.csv")
    for name in names.split(","):
        assert a.results[name].jobs.equals(b.results[name].jobs), name
    assert a.profile == b.profile == str(tmp_path / "scores.csv")


def test_a_site_file_without_classes_is_clustered_like_a_profile(tmp_path):
    site = _site(tmp_path, "node,gpu_index,score\n0,0,0.8\n1,0,1.0\n")
    assert site.gpu_class is None
    assert site_profile(site).classes.tolist() == \
        read_profile(tmp_path / "scores.csv", site).classes.tolist() == [[1], [0]]


def test_badly_ordered_site_classes_fail_at_load(tmp_path):
    with pytest.raises(InputError) as info:
        _site(tmp_path, "node,gpu_index,score,class\n0,0,0.8,0\n1,0,1.0,1\n")
    assert (info.value.line, info.value.field, info.value.value) == (3, "class", "1")
