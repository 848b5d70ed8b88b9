"""No silent no-op (issue 25, item 5): a policy that cannot differ from the baseline is said on
stderr (``swftools: warning: ...``) and in ``comparison.json`` (``no_op``), with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from swftools import table as jt
from swftools.cli import app
from swftools.site import load_site
from swftools.whatif.profile import Profile
from swftools.whatif.run import whatif

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "aaic-sample.csv.gz"


def _jobs(n: int = 12) -> jt.pa.Table:
    """``n`` one- to eight-GPU jobs arriving together: they queue, so placement matters."""
    return jt.from_columns({"job_id": list(range(1, n + 1)),
                            "submit_time": [1_500_000_000] * n,
                            "walltime_s": [600 + 60 * k for k in range(n)],
                            "gpus": [1 + (k % 8) for k in range(n)],
                            "requested_walltime_s": [3600] * n})


def test_homogeneous_site_without_profile_says_no_variability():
    out = whatif(_jobs(), "aaic", policies="packed,priority,variability-first,even,lxv,best-fit",
                 class_rule="single:IC")
    for name in ("priority", "variability-first", "even", "lxv"):
        assert out.no_op[name].startswith("no variability: site aaic has one GPU model (P100)")
    assert "places as locality-first does" in out.no_op["lxv"]
    assert "places as packed does" in out.no_op["variability-first"]
    assert "identical to packed's" in out.no_op["even"]  # and the replay confirms it
    assert out.to_json()["no_op"] == out.no_op


def test_priority_wc_without_variability_is_packed():
    out = whatif(_jobs(), "aaic", policies="packed,priority-wc", class_rule="single:IC")
    assert out.no_op["priority-wc"].startswith("no variability: site aaic has one GPU model")
    assert "priority-wc, which ranks GPUs by model, score or class, places as packed does" \
        in out.no_op["priority-wc"]
    assert "identical to packed's" in out.no_op["priority-wc"]  # the replay confirms it


def test_pal_with_one_score_per_gpu_says_every_class_sees_the_same_scores():
    site = load_site("aaic")
    scores = np.ones((40, 8))
    scores[0] = 0.8
    out = whatif(_jobs(), site, policies="packed,pal,pm-first",
                 profile=Profile(scores, (scores < 1).astype(np.int64)))
    for name in ("pal", "pm-first"):
        assert out.no_op[name].startswith("one score per GPU: the profile has no score:<class> "
                                          "columns, so every application class sees the same "
                                          f"scores and {name} ranks the GPUs alike")
    app_scores = (("IC", scores), ("OD", scores[::-1].copy()))
    per_class = whatif(_jobs(), site, policies="packed,pal",
                       profile=Profile(scores, (scores < 1).astype(np.int64),
                                       app_scores=app_scores))
    assert "pal" not in per_class.no_op


def test_one_gpu_model_with_a_profile():
    """Scores vary, so variability-first and lxv have something to act on; even has not."""
    site = load_site("aaic")
    scores = np.ones((40, 8))
    scores[0] = 0.8
    classes = (scores < 1).astype(np.int64)
    out = whatif(_jobs(), site, policies="packed,even,variability-first",
                 profile=Profile(scores, classes), class_rule="single:IC")
    assert out.no_op["even"].startswith("one GPU model: site aaic has only P100 GPUs, so even "
                                        "places as packed does")
    assert "variability-first" not in out.no_op  # node 0 is slow: it avoids it, packed not


def test_two_models_but_one_class_lxv_is_locality_first():
    """aaic-v100-half without a profile: models differ, classes do not."""
    out = whatif(_jobs(), "aaic-v100-half", policies="packed,lxv,variability-first,even",
                 class_rule="single:IC")
    assert out.no_op["lxv"].startswith("one performance class: every GPU of site "
                                       "aaic-v100-half is in class 0")
    assert "so lxv places as locality-first does" in out.no_op["lxv"]
    assert "places as packed does" in out.no_op["variability-first"]
    assert "even" not in out.no_op  # it spreads over P100 and V100


def test_an_identical_schedule_is_reported():
    one = _jobs(1)
    out = whatif(one, "aaic-v100-half", policies="packed,best-fit", class_rule="single:IC")
    assert out.no_op == {"best-fit": "its schedule is identical to packed's (every job starts "
                                     "and ends at the same second)"}


def test_cli_warns_on_stderr_and_records_it(tmp_path):
    out = tmp_path / "w"
    result = CliRunner().invoke(app, ["whatif", str(SAMPLE), "--site", "aaic", "--policies",
                                      "packed,variability-first", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "swftools: warning: policy variability-first: no variability: site aaic" \
        in result.stderr
    assert "warning" not in result.stdout
    doc = json.loads((out / "comparison.json").read_text())
    assert set(doc["no_op"]) == {"variability-first"}
    quiet = CliRunner().invoke(app, ["whatif", str(SAMPLE), "--site", "aaic-v100-half",
                                     "--policies", "even,priority"])
    assert quiet.exit_code == 0 and "warning" not in quiet.stderr


def test_same_schedule_compares_by_job_whatever_the_row_order():
    import pyarrow as pa

    from swftools.whatif.noop import same_schedule

    def jobs(ids, start, end):
        return pa.table({name: pa.array(values, pa.int64()) for name, values in
                         (("job_id", ids), ("start_time", start), ("end_time", end))})

    base = jobs([1, 2, 3], [0, 5, 9], [4, 8, 12])
    assert same_schedule(base, jobs([3, 1, 2], [9, 0, 5], [12, 4, 8]))
    assert not same_schedule(base, jobs([3, 1, 2], [9, 0, 5], [12, 4, 9]))  # one end differs
    assert not same_schedule(base, jobs([1, 2, 4], [0, 5, 9], [4, 8, 12]))  # another job
    assert not same_schedule(base, jobs([1, 2], [0, 5], [4, 8]))


# --- the reasons, word for word (fast: no replay) ---------------------------------------------

NO_VAR = ("no variability: site aaic has one GPU model (P100) and every GPU scores the same "
          "({source}), so {name}, which ranks GPUs by model, score or class, places as {as_} does")
PER_CLASS_NOTE = ("one score per GPU: the {source} has no score:<class> columns, so every "
                  "application class sees the same scores and {name} ranks the GPUs alike for "
                  "every job (PAL's per-class variability is not modelled)")


def test_static_reasons_of_a_homogeneous_site_word_for_word():
    from swftools.whatif.noop import static_reasons

    site = load_site("aaic")
    names = ["packed", "priority", "lxv", "best-fit", "pal"]
    assert static_reasons(site, None, names, False) == {
        "priority": NO_VAR.format(source="no --profile and no gpu_scores in the site file",
                                  name="priority", as_="packed"),
        "lxv": NO_VAR.format(source="no --profile and no gpu_scores in the site file",
                             name="lxv", as_="locality-first"),
        "pal": PER_CLASS_NOTE.format(source="site", name="pal")}
    same = "the profile gives every GPU the same score"
    assert static_reasons(site, np.zeros((40, 8), np.int64), names, True) == {
        "priority": NO_VAR.format(source=same, name="priority", as_="packed"),
        "lxv": NO_VAR.format(source=same, name="lxv", as_="locality-first"),
        "pal": PER_CLASS_NOTE.format(source="profile", name="pal")}
    # per-class scores given: no note for pal; an empty class array is one class too
    assert static_reasons(site, np.zeros(0, np.int64), ["packed", "pal", "even"], True,
                          class_scores=True) == {
        "even": NO_VAR.format(source=same, name="even", as_="packed")}


def test_two_scores_on_one_model_leave_only_the_one_model_and_one_class_reasons():
    from swftools.whatif.cluster import with_scores
    from swftools.whatif.noop import static_reasons

    scores = np.ones((40, 8))
    scores[3, 2] = 0.5
    site = with_scores(load_site("aaic"), scores)
    names = ["packed", "even", "variability-first", "priority"]
    one_class = ("one performance class: every GPU of site aaic is in class 0 ({source}), so "
                 "variability-first places as packed does")
    even = "one GPU model: site aaic has only P100 GPUs, so even places as packed does"
    assert static_reasons(site, None, names, False) == {
        "even": even, "variability-first": one_class.format(
            source="no --profile and no class column in the site's gpu_scores")}
    assert static_reasons(site, np.zeros((40, 8), np.int64), names, True) == {
        "even": even, "variability-first": one_class.format(source="the profile has one class")}
    classes = np.zeros((40, 8), np.int64)
    classes[3, 2] = 1
    assert static_reasons(site, classes, names, True) == {"even": even}


def test_one_gpu_of_class_one_is_two_classes():
    from swftools.whatif.cluster import flat_site
    from swftools.whatif.noop import static_reasons

    site = flat_site(1)
    assert static_reasons(site, np.array([[1]]), ["packed", "variability-first"], True) == {}
    assert "variability-first" in static_reasons(site, np.array([[0]]),
                                                 ["packed", "variability-first"], True)


def test_no_ops_joins_a_static_reason_and_an_identical_schedule():
    import pyarrow as pa

    from swftools.whatif.noop import no_ops

    jobs = pa.table({"job_id": [1, 2], "start_time": [0, 5], "end_time": [4, 8]})
    later = pa.table({"job_id": [1, 2], "start_time": [0, 6], "end_time": [4, 9]})
    assert no_ops({"even": "one GPU model"}, {"packed": jobs, "even": jobs, "lxv": later},
                  ["packed", "even", "lxv"]) == {
        "even": "one GPU model; its schedule is identical to packed's (every job starts and "
                "ends at the same second)"}
