"""Per-application-class scores (PAL's variability per GPU per application class): a profile's
``score:<class>`` columns reach ``pal`` and ``pm-first`` (``PlacementInputs.class_score`` and
``job_class``) and the run times; a profile with one score per GPU says so (issue 25)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from swftools import table as jt
from swftools.errors import InputError
from swftools.site import load_site, read_score_csv
from swftools.whatif.profile import read_profile, site_profile
from swftools.whatif.run import whatif
from tests.strategies import score_csv_with_app_columns, whatif_settings

# one node, four GPUs of one model and score 1.0 (one performance class); IC jobs run faster on
# GPUs 0-1 (1.25 vs 0.8), OD jobs on GPUs 2-3: the two classes rank the GPUs oppositely. (Four
# GPUs, not two: PAL's silhouette needs more values than clusters, so two GPUs form one class.)
PER_CLASS = ("node,gpu_index,score,class,score:IC,score:OD\n"
             "0,0,1.0,0,1.25,0.8\n0,1,1.0,0,1.25,0.8\n"
             "0,2,1.0,0,0.8,1.25\n0,3,1.0,0,0.8,1.25\n")
ONE_SCORE = "node,gpu_index,score,class\n" + "".join(f"0,{i},1.0,0\n" for i in range(4))


def _site(tmp_path, **extra):
    path = tmp_path / "site.json"
    path.write_text(json.dumps(whatif_settings(1, 4, **extra)))
    return load_site(path)


def _jobs():
    """An OD job at t0 (1000 s), then an IC job after it ended: each has both GPUs free."""
    import pyarrow as pa

    t0 = 1_500_000_000
    table = jt.from_columns({"job_id": [1, 2], "submit_time": [t0, t0 + 5000],
                             "walltime_s": [1000, 1000], "gpus": [1, 1], "nodes": [1, 1],
                             "gpus_per_node": [1, 1], "requested_walltime_s": [2000, 2000]})
    return table.append_column("app_class", pa.array(["OD", "IC"]))


def _gpus(out, policy):
    jobs = out.results[policy].jobs
    return jobs.column("gpu_ids").to_pylist(), jobs.column("run_s").to_pylist()


@pytest.mark.parametrize("policy", ["pal", "pm-first"])
def test_two_classes_that_rank_gpus_differently_get_different_gpus(tmp_path, policy):
    """By hand: the OD job's variability is 1/0.8 = 1.25 on GPUs 0-1 and 1/1.25 = 0.8 on GPUs
    2-3 (pal: two classes, values 0.8 / 1.025 and 1.25 / 1.025), so it takes GPU 2 (ties: lower
    GPU) and runs 1000 / 1.25 = 800 s; the IC job the reverse: GPU 0, 800 s. With one score per
    GPU (every GPU 1.0) both take GPU 0 and run 1000 s."""
    (tmp_path / "p.csv").write_text(PER_CLASS)
    out = whatif(_jobs(), _site(tmp_path), policies=["packed", policy],
                 profile=tmp_path / "p.csv")
    assert _gpus(out, policy) == (["2", "0"], [800, 800])
    assert policy not in out.no_op
    assert out.profile == str(tmp_path / "p.csv")  # what the comparison records
    # packed ignores the classes' ranking (GPU 0 for both) but each job runs at its class's score
    assert _gpus(out, "packed") == (["0", "0"], [1250, 800])
    (tmp_path / "one.csv").write_text(ONE_SCORE)
    one = whatif(_jobs(), _site(tmp_path), policies=["packed", policy],
                 profile=tmp_path / "one.csv")
    assert _gpus(one, policy) == (["0", "0"], [1000, 1000])
    assert "one score per GPU" in one.no_op[policy]
    assert "every application class sees the same scores" in one.no_op[policy]


def test_the_site_file_carries_the_class_columns_too(tmp_path):
    (tmp_path / "p.csv").write_text(PER_CLASS)
    site = _site(tmp_path, gpu_scores="p.csv")
    assert dict(site.gpu_app_score) == {"IC": ((1.25, 1.25, 0.8, 0.8),),
                                        "OD": ((0.8, 0.8, 1.25, 1.25),)}
    prof = site_profile(site)
    assert [n for n, _ in prof.app_scores] == ["IC", "OD"]
    out = whatif(_jobs(), site, policies=["packed", "pal"])
    assert _gpus(out, "pal") == (["2", "0"], [800, 800])


def test_a_column_naming_no_class_is_an_input_error(tmp_path):
    (tmp_path / "p.csv").write_text(PER_CLASS.replace("score:OD", "score:XX"))
    with pytest.raises(InputError) as err:
        whatif(_jobs(), _site(tmp_path), policies=["packed", "pal"], profile=tmp_path / "p.csv")
    text = str(err.value)
    assert "p.csv" in text and "score:XX" in text and "IC" in text
    e = err.value
    assert (e.path, e.line, e.field, e.value) == (str(tmp_path / "p.csv"), 1, "score:XX", "XX")
    assert e.message == ("column score:XX names no application class of sensitivity model "
                         "mlperf-p100-v100")
    assert e.expected == "one of IC, SSD, OD, RM, SA, RT, TL, SR, RF"


@pytest.mark.parametrize("text,field,what", [
    ("node,gpu_index,score,score:IC\n0,0,1.0,fast\n0,1,1.0,1\n", "score:IC", "not a number"),
    ("node,gpu_index,score,score:IC\n0,0,1.0,1\n0,1,1.0,0\n", "score:IC", "not a positive"),
    ("node,gpu_index,score,score:\n0,0,1.0,1\n0,1,1.0,1\n", "score:", "names no application"),
    ("node,gpu_index,score,score:IC,score:IC\n0,0,1,1,1\n0,1,1,1,1\n", "score:IC", "twice"),
])
def test_bad_class_score_cells(tmp_path, text, field, what):
    (tmp_path / "s.csv").write_text(text)
    with pytest.raises(InputError) as err:
        read_score_csv(tmp_path / "s.csv", 1, 2)
    msg = str(err.value)
    assert what in msg and field in msg and "s.csv" in msg


@given(score_csv_with_app_columns())
@settings(max_examples=60, deadline=None)
def test_class_score_columns_round_trip(case):
    """A profile's per-class columns read back as written (``Profile.to_csv`` and
    ``read_score_csv``), and the ``score`` column and classes are unchanged by them."""
    import tempfile
    from pathlib import Path

    text, nodes, gpus, expected = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.csv"
        path.write_text(text)
        read = read_score_csv(path, nodes, gpus)
        assert {n: [list(r) for r in grid] for n, grid in read.app_scores} == expected
        site = load_site_for(nodes, gpus, Path(tmp))
        prof = read_profile(path, site)
        again = Path(tmp) / "again.csv"
        again.write_bytes(prof.to_csv())
        back = read_score_csv(again, nodes, gpus)
        assert back.app_scores == read.app_scores and back.scores == read.scores


def load_site_for(nodes, gpus, where):
    path = where / "site.json"
    path.write_text(json.dumps(whatif_settings(nodes, gpus)))
    return load_site(path)
