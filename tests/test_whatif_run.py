"""``swftools whatif TRACE``: placement policies compared on one trace (library and CLI)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swftools import formats
from swftools.cli import app
from swftools.errors import UsageError
from swftools.replay import replay
from swftools.whatif.run import whatif

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "aaic-sample.csv.gz"
runner = CliRunner()


@pytest.fixture(scope="module")
def sample():
    return formats.read(SAMPLE)


def test_factors_of_one_reproduce_the_homogeneous_replay(sample):
    """On the homogeneous P100 site every factor is 1.0: packed = today's replay, job for job."""
    result = whatif(sample, "aaic", policies="packed").results["packed"]
    plain = replay(sample, "aaic")
    for name in ("job_id", "start_time", "end_time", "run_s", "node_ids", "gpu_ids"):
        assert result.jobs.column(name).to_pylist() == plain.jobs.column(name).to_pylist(), name


def test_the_seeds_question_priority_beats_even_on_half_v100(sample):
    """The MLPerf example: half P100 / half V100, new GPUs to the jobs that gain most."""
    out = whatif(sample, "aaic-v100-half", policies="even,priority")
    even, priority = (r.figures for r in out.rows)
    assert even["jobs"] == priority["jobs"] == sample.num_rows
    reduction = 1 - priority["total_run_s"] / even["total_run_s"]
    assert 0.0 < reduction < 0.25
    assert out.rows[1].relative["total_run_s"] == pytest.approx(1 - reduction)
    assert out.classes.startswith("hash: splitmix64(job_id)")


def test_every_policy_runs_and_keeps_every_job(sample):
    out = whatif(sample, "aaic-v100-half",
                 policies="packed,best-fit,random,even,priority,variability-first,"
                          "locality-first,lxv")
    for row in out.rows:
        assert row.figures["jobs"] == sample.num_rows, row.policy
        assert 0 < row.figures["utilization"] <= 1


def test_usage_errors(sample):
    with pytest.raises(UsageError, match="unknown placement policy 'fastest'"):
        whatif(sample, "aaic", policies="packed,fastest")
    with pytest.raises(UsageError, match="named twice"):
        whatif(sample, "aaic", policies="packed,packed")


def test_cli_table_json_and_out(tmp_path):
    base = ["whatif", str(SAMPLE), "--site", "aaic", "--v100-nodes", "20",
            "--policies", "even,priority"]
    result = runner.invoke(app, base)
    assert result.exit_code == 0, result.output
    assert "priority" in result.stdout and "total run (h)" in result.stdout
    assert "  ratio to even" in result.stdout and "GPU-hours" in result.stdout
    shown = result.stdout
    result = runner.invoke(app, [*base, "--json"])
    doc = json.loads(result.stdout)
    assert [p["policy"] for p in doc["policies"]] == ["even", "priority"]
    assert doc["site"] == "aaic-v100-20"
    # what the comparison was made from: trace fingerprint, site, sensitivity, seed, policies
    from swftools.fingerprint import table_fingerprint

    assert doc["trace"] == {"fingerprint": table_fingerprint(formats.read(SAMPLE)),
                            "source_file": "aaic-sample.csv.gz", "jobs": 5000,
                            "processor_unit": "gpu"}
    assert (doc["sensitivity"], doc["seed"], doc["baseline"]) == ("mlperf-p100-v100", 0, "even")
    out = tmp_path / "cmp"
    assert runner.invoke(app, [*base, "--out", str(out)]).exit_code == 0
    # comparison.txt is byte for byte what the terminal showed, context lines included
    assert (out / "comparison.txt").read_text(encoding="utf-8") == shown
    assert shown.startswith("trace        aaic-sample.csv.gz (sha256:")
    assert "site         aaic-v100-20; profile none" in shown
    assert sorted(p.name for p in out.iterdir()) == [".swftools-output",
        "comparison.json", "comparison.txt", "even.parquet", "jct-cdf.png", "priority.parquet"]
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert runner.invoke(app, [*base, "--out", str(out)]).exit_code == 2  # never overwritten
    assert runner.invoke(app, [*base, "--out", str(out), "--force"]).exit_code == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first  # deterministic
    assert runner.invoke(app, ["whatif", "run", str(SAMPLE), "--site", "aaic",
                               "--policies", "nope"]).exit_code == 2


def test_the_variability_example_on_the_sample(sample):
    """packed vs random vs lxv on a 5 % variability profile (seed 1, 4 classes): lxv picks the
    faster GPUs and cuts total run time; packed ignores the scores."""
    from swftools.site import load_site
    from swftools.whatif.profile import generate_profile

    site = load_site("aaic")
    profile = generate_profile(site, spread=0.05, seed=1, classes=4)
    out = whatif(sample, site, policies="packed,random,lxv", profile=profile)
    packed, random_, lxv = (r.figures for r in out.rows)
    assert lxv["total_run_s"] < packed["total_run_s"]
    assert lxv["total_run_s"] < random_["total_run_s"]
    # every job runs at the speed of the slowest GPU it holds: never faster than the best score
    best = float(profile.scores.max())
    recorded = sum(sample.column("walltime_s").to_pylist())
    assert lxv["total_run_s"] >= recorded / best - sample.num_rows  # rounding to whole seconds


def test_flat_mode_on_a_real_swf_trace(tmp_path):
    """A CPU trace in flat mode: per-processor scores, the compute-only model (the first 5,000
    of the trace's 18,239 jobs keep it quick)."""
    from .conftest import trace_path

    path = trace_path("NASA-iPSC-1993-3.1-cln.swf.gz")
    table = formats.read(path).slice(0, 5000)
    profile = tmp_path / "p.csv"
    result = runner.invoke(app, ["whatif", "profile", "--procs", "128", "--spread", "0.05",
                                 "--seed", "1", "-o", str(profile)])
    assert result.exit_code == 0, result.output
    out = whatif(table, None, policies="packed,lxv", profile=profile)
    assert out.site == "flat-128" and out.sensitivity == "compute-only"
    packed, lxv = (r.figures for r in out.rows)
    assert packed["jobs"] == lxv["jobs"] == table.num_rows
    assert lxv["total_run_s"] < packed["total_run_s"]


def test_the_backfill_bound_is_below_every_realized_factor(sample):
    """The lower bound given to the engine never exceeds the factor a job really got."""
    import numpy as np

    from swftools.site import load_site
    from swftools.whatif.run import _factor_lower_bounds
    from swftools.whatif.sensitivity import assign_classes, factor_model, load_sensitivity

    site = load_site("aaic-v100-half")
    sens = load_sensitivity("mlperf-p100-v100")
    classes, _ = assign_classes(sample, sens)
    fm = factor_model(site, sens)
    speeds = np.array([[sens.speed(c, m) for m in site.gpu_models] for c in range(len(sens.classes))])
    bounds = _factor_lower_bounds(sample, fm, speeds, classes)
    out = whatif(sample, site, policies="priority,lxv,random")
    row_of = {j: r for r, j in enumerate(sample.column("job_id").to_pylist())}
    for name in out.policies:
        jobs = out.results[name].jobs
        for job, run, recorded in zip(jobs.column("job_id").to_pylist(),
                                      jobs.column("run_s").to_pylist(),
                                      jobs.column("recorded_run_s").to_pylist()):
            assert bounds[row_of[job]] * recorded <= run + 0.5, (name, job)


@pytest.mark.parametrize("scores", ["site", "profile", "class scores"])
def test_the_backfill_bounds_are_the_per_row_formula(sample, scores):
    """``_factor_lower_bounds`` (one value per distinct class and GPU count) gives each row
    exactly the scalar formula of its own class and largest GPU count; the best score is the
    site's (all 1), a profile's, or the best of the per-class grids. A row whose GPU count is
    unknown counts its nodes' size."""
    import numpy as np
    import pyarrow as pa

    from swftools.replay.workload import int_column, job_size
    from swftools.site import load_site
    from swftools.whatif.cluster import with_scores
    from swftools.whatif.profile import generate_profile
    from swftools.whatif.run import _factor_lower_bounds
    from swftools.whatif.sensitivity import assign_classes, factor_model, load_sensitivity

    site = load_site("aaic-v100-half")
    if scores != "site":
        profile = generate_profile(site, spread=0.05, seed=1, classes=4)
        site = with_scores(site, profile.scores.tolist(), profile.classes.tolist())
    gpus_column = sample.column("gpus").to_pylist()
    sample = sample.set_column(sample.column_names.index("gpus"), "gpus", pa.array(
        [None if k % 7 == 0 else g for k, g in enumerate(gpus_column)], pa.int64()))
    sens = load_sensitivity("mlperf-p100-v100")
    classes, _ = assign_classes(sample, sens)
    fm = factor_model(site, sens)
    best = float(np.max(fm.score))
    if scores == "class scores":
        grids = [fm.score * (1 + c / 10) for c in range(len(sens.classes))]
        fm = fm.with_class_scores(grids)
        best = max(float(np.max(grid)) for grid in grids)
    assert best != 1.0 or scores == "site"
    speeds = fm.speed[:, np.unique(fm.node_model)]
    bounds = _factor_lower_bounds(sample, fm, speeds, classes)
    r_min = np.array([fm.trace_speed[c] / speeds[c].max() for c in range(len(speeds))])
    r_min = r_min / best
    size, _ = job_size(sample)
    gpus, known = int_column(sample, "gpus")
    p_max = np.maximum(np.maximum(size, np.where(known, gpus, 1)), 1)
    for row, (c, p) in enumerate(zip(classes.tolist(), p_max.tolist())):
        i = float(fm.iter_s[c])
        assert bounds[row] == float(i * r_min[c] / (i + fm.comm_s(c, fm.recorded_level(p), p)))


def test_cli_shape_gpus_places_jobs_by_gpu_count(tmp_path):
    """``--shape gpus``: the table says so, comparison.json records it, and every job holds its
    recorded GPU count (nodes x GPUs per node) rather than whole nodes; a bad shape is exit 2."""
    base = ["whatif", str(SAMPLE), "--site", "aaic-v100-half", "--policies", "packed,pal"]
    out = tmp_path / "cmp"
    result = runner.invoke(app, [*base, "--shape", "gpus", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "seed 0, jobs placed by GPU count; ratios against packed" in result.stdout
    doc = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    assert doc["shape"] == "gpus"
    import pyarrow.parquet as pq

    table = formats.read(SAMPLE)
    count = {j: n * g for j, n, g in zip(table.column("job_id").to_pylist(),
                                          table.column("nodes").to_pylist(),
                                          table.column("gpus_per_node").to_pylist())}
    for name in ("packed", "pal"):
        jobs = pq.read_table(out / f"{name}.parquet")
        assert {j: s for j, s in zip(jobs.column("job_id").to_pylist(),
                                     jobs.column("size").to_pylist())} == count
    recorded = json.loads(runner.invoke(app, [*base, "--json"]).stdout)
    assert recorded["shape"] == "recorded"
    bad = runner.invoke(app, [*base, "--shape", "nodes"])
    assert bad.exit_code == 2 and "unknown job shape 'nodes' (choose from recorded, gpus)" in bad.output


# --- what a comparison says of itself, read off a small run ------------------------------------

@pytest.fixture(scope="module")
def small(sample):
    """Two policies on the sample's first 60 jobs (seconds, not minutes)."""
    return whatif(sample.slice(0, 60), "aaic-v100-half", policies="packed,lxv", seed=3)


def test_the_context_lines_word_for_word(small):
    fingerprint = "sha256:" + "0123456789abcdef" + "f" * 48
    trace = {"fingerprint": fingerprint, "source_file": "t.swf", "jobs": 60, "processor_unit": "gpu"}
    out = replace(small, trace=trace, profile=None, classes="hash: x", sensitivity="sens")
    assert out.context_lines() == [
        "trace        t.swf (sha256:0123456789abcdef...)",
        "site         aaic-v100-half; profile none",
        "sensitivity  sens; classes by hash: x",
        "replay       scheduler easy, seed 3; ratios against packed",
        ""]
    lines = replace(out, profile="p.csv", shape="gpus", model_heading="model").context_lines()
    assert lines[1] == "site         aaic-v100-half; profile p.csv"
    assert lines[2] == "model        sens; classes by hash: x"
    assert lines[3] == "replay       scheduler easy, seed 3, jobs placed by GPU count; ratios against packed"
    # a generated profile (its summary, not a file name) and a trace that names no file
    lines = replace(out, profile={"spread": 0.05}, trace={}).context_lines()
    assert lines[:2] == ["trace        <table> (...)", "site         aaic-v100-half; profile generated"]


def test_the_table_names_the_traces_unit(small):
    gpu = small.table_text()
    assert "GPU-hours" in gpu and "processor-hours" not in gpu
    assert gpu.startswith("".join(f"{line}\n" for line in small.context_lines()))
    cpu = replace(small, trace={**small.trace, "processor_unit": "processor"}).table_text()
    assert "processor-hours" in cpu and "GPU-hours" not in cpu
    unnamed = {k: v for k, v in small.trace.items() if k != "processor_unit"}
    assert replace(small, trace=unnamed).table_text() == gpu  # no unit recorded: GPUs


def test_written_comparison_files(small, tmp_path):
    out = small.write(tmp_path / "cmp")
    text = (out / "comparison.json").read_text(encoding="utf-8")
    assert json.loads(text) == json.loads(json.dumps(small.to_json()))
    lines = text.splitlines()
    assert text.endswith("}\n") and lines[1].startswith('  "') and not lines[1].startswith("   ")
    top = [line.split('"')[1] for line in lines if line.startswith('  "')]
    assert top == sorted(top) and top[0] == "baseline"
    assert (out / "comparison.txt").read_text(encoding="utf-8") == small.table_text()
    import pyarrow.parquet as pq

    for name in small.policies:
        assert pq.read_table(out / f"{name}.parquet").equals(small.results[name].jobs)
    with pytest.raises(UsageError):
        small.write(out)


def test_procs_replays_on_a_flat_pool_whatever_the_site():
    """``procs`` wins over a site; the scheduler asked for is the one run and recorded. By hand
    on 4 processors: job 3 (1 processor, 50 s) backfills beside job 1 under EASY, waits for
    job 2 under FCFS."""
    from .test_replay_reference import flat_table, starts

    table = flat_table([(1, 0, 100, 3, 100), (2, 1, 100, 4, 100), (3, 2, 50, 1, 50)])
    for site in (None, "aaic"):
        for scheduler, third in (("easy", 2), ("fcfs", 200)):
            out = whatif(table, site, procs=4, policies="packed", scheduler=scheduler)
            assert (out.site, out.sensitivity, out.scheduler) == ("flat-4", "compute-only", scheduler)
            assert out.to_json()["scheduler"] == scheduler
            assert starts(out.results["packed"]) == {1: 0, 2: 100, 3: third}
    with pytest.raises(UsageError):  # no site, no procs and no header MaxProcs
        whatif(table, None, policies="packed")


def test_seed_site_classes_sensitivity_and_progress_reach_the_replays(sample):
    import pyarrow as pa

    from swftools.whatif.sensitivity import load_sensitivity

    t = sample.slice(0, 60)
    gpus = {s: whatif(t, "aaic-v100-half", policies="random", seed=s) for s in (0, 1)}
    default = whatif(t, None, policies="random")  # the site the trace's metadata names
    assert (default.site, default.seed, gpus[1].seed) == ("aaic", 0, 1)
    ids = {s: o.results["random"].jobs.column("gpu_ids").to_pylist() for s, o in gpus.items()}
    assert ids[0] != ids[1]
    assert whatif(t, "aaic-v100-half", policies="random").results["random"].jobs.column(
        "gpu_ids").to_pylist() == ids[0]
    assert whatif(t, "aaic", policies="packed", class_rule="single:IC").classes == \
        "single: every job IC"
    named = t.append_column("cls", pa.array(["RM"] * t.num_rows))
    assert whatif(named, "aaic", policies="packed", class_column="cls").classes == "column cls"
    sens = load_sensitivity("mlperf-p100-v100")
    assert whatif(t, "aaic", policies="packed", sensitivity=sens).sensitivity == sens.name
    calls = []
    whatif(t, "aaic", policies="packed,lxv", on_policy=lambda *a: calls.append(a))
    assert calls == [("packed", 0, 2), ("lxv", 1, 2)]


def test_to_json_keys_and_what_each_holds(small):
    doc = small.to_json()
    assert sorted(doc) == ["baseline", "classes", "no_op", "policies", "profile", "scheduler",
                           "seed", "sensitivity", "shape", "site", "skipped", "trace"]
    assert (doc["classes"], doc["profile"], doc["scheduler"]) == (small.classes, None, "easy")
    assert doc["skipped"] == {"packed": 0, "lxv": 0}
    assert [p["policy"] for p in doc["policies"]] == ["packed", "lxv"]


@pytest.mark.parametrize("policies,message", [
    (" , ", "give at least one placement policy"),
    ("packed,fastest", "unknown placement policy 'fastest' (choose from packed, best-fit, random, "
                       "even, priority, priority-wc, variability-first, locality-first, lxv, "
                       "pm-first, pal)"),
    (["lxv", " packed", "lxv"], "a placement policy is named twice in lxv,packed,lxv"),
])
def test_parse_policies_word_for_word(policies, message):
    from swftools.whatif.run import parse_policies

    with pytest.raises(UsageError) as exc:
        parse_policies(policies)
    assert str(exc.value) == message
    assert parse_policies(" lxv, packed ,") == ["lxv", "packed"]


def test_a_trace_of_no_jobs_compares_policies_of_no_jobs(sample):
    out = whatif(sample.slice(0, 0), "aaic", policies="packed,lxv")
    assert [(r.policy, r.figures["jobs"]) for r in out.rows] == [("packed", 0), ("lxv", 0)]
    assert "  ratio to packed   n/a" in out.table_text()


@pytest.mark.parametrize("scores", ["site", "profile", "class scores", "all V100"])
def test_what_each_replay_is_given(sample, scores, monkeypatch):
    """The placement inputs, factors and backfill bound each replay gets, read off the site, the
    profile and the sensitivity model directly: racks and GPU models per node, the scores and
    performance classes (the profile's when given), each job's class and gain (its class's
    speed on the site's fastest model over its slowest one: 1 on a site of V100 nodes only),
    the models' mean speeds, keyed factors only without per-class scores, and PAL's defaults.
    Every job requested one GPU, so the bound counts the GPUs it was given (``gpus``)."""
    import numpy as np
    import pyarrow as pa

    import swftools.whatif.run as run
    from swftools.replay.workload import int_column, job_size
    from swftools.site import load_site
    from swftools.whatif.profile import generate_profile
    from swftools.whatif.sensitivity import assign_classes, factor_model, load_sensitivity

    gpus_column = sample.column("gpus").to_pylist()
    table = sample.take(sorted([r for r, g in enumerate(gpus_column) if g == 1][:8]
                               + [r for r, g in enumerate(gpus_column) if g > 1][:4]))
    if "requested_procs" in table.column_names:
        table = table.drop_columns(["requested_procs"])
    table = table.append_column("requested_procs", pa.array([1] * table.num_rows, pa.int64()))
    assert max(table.column("gpus").to_pylist()) > 1
    site = load_site("aaic-v100-half")
    if scores == "all V100":
        from swftools.whatif.cluster import upgraded

        plain = load_site("aaic")
        site = upgraded(plain, len(plain.gpu_model_of_node))
    sens = load_sensitivity("mlperf-p100-v100")
    prof = None
    if scores not in ("site", "all V100"):
        prof = generate_profile(site, spread=0.05, seed=1, classes=3,
                                app_classes=("IC",) if scores == "class scores" else ())
    calls = []
    real = run.replay

    def spy(table_, site_, **kwargs):
        calls.append((site_, kwargs))
        return real(table_, site_, **kwargs)

    monkeypatch.setattr(run, "replay", spy)
    pal = {"locality_penalty": 2.5, "pal_k2": True} if scores == "all V100" else {}
    run.whatif(table, site, policies="pal", profile=prof, sensitivity=sens, **pal)
    ((site_obj, kwargs),) = calls
    inputs = kwargs["placement_inputs"]
    classes = assign_classes(table, sens)[0].tolist()
    models = list(sens.gpu_models)
    on_site = [i for i, m in enumerate(models) if m in site.gpu_model_of_node]
    assert [models[i] for i in on_site] == (["V100"] if scores == "all V100" else ["P100", "V100"])
    assert inputs.rack == list(site.rack_of_node)
    assert inputs.gpu_model == [models.index(m) for m in site.gpu_model_of_node]
    expected_scores = [list(r) for r in site.gpu_score] if prof is None else prof.scores.tolist()
    assert inputs.score == expected_scores
    assert [list(r) for r in site_obj.gpu_score] == expected_scores
    assert inputs.gpu_class == (None if prof is None else prof.classes.tolist())
    if prof is not None:
        assert [list(r) for r in site_obj.gpu_class] == prof.classes.tolist()
    assert inputs.job_class == classes
    speed = [[c.speed[m] for m in models] for c in sens.classes]
    site_speed = [[s[i] for i in on_site] for s in speed]
    assert inputs.gain == pytest.approx([max(site_speed[c]) / min(site_speed[c]) for c in classes],
                                        rel=1e-12)
    if scores == "all V100":
        assert inputs.gain == [1.0] * len(classes)  # the module docstring: homogeneous site
        assert len(set(s[on_site[0]] for s in speed)) > 1  # while the classes' V100 speeds differ
    assert inputs.model_speed == pytest.approx(
        [sum(s[i] for s in speed) / len(speed) for i in range(len(models))], rel=1e-12)
    assert (inputs.pal_penalty, inputs.pal_k2) == ((2.5, True) if pal else (1.7, False))
    assert inputs.factor_kernel is not None
    if scores == "class scores":
        ic = dict(prof.app_scores)["IC"].tolist()
        assert inputs.class_score == [ic if n == "IC" else prof.scores.tolist() for n in sens.names]
        assert inputs.factor_by_key is False
    else:
        assert inputs.class_score is None and inputs.factor_by_key is True
    # the backfill bound: the module docstring's per-row formula, one value per row
    fm = factor_model(site_obj, sens)
    if inputs.class_score is not None:
        fm = fm.with_class_scores(inputs.class_score)
    grids = np.asarray(inputs.score if inputs.class_score is None else inputs.class_score)
    size, _ = job_size(table)
    gpus, known = int_column(table, "gpus")
    bound = []
    for row, c in enumerate(classes):
        p = max(int(size[row]), int(gpus[row]) if known[row] else 1, 1)
        i = float(fm.iter_s[c])
        r_min = sens.classes[c].speed[fm.trace_model] / max(site_speed[c]) / float(grids.max())
        bound.append(i * r_min / (i + fm.comm_s(c, fm.recorded_level(p), p)))
    assert kwargs["min_factor"].tolist() == pytest.approx(bound, rel=1e-12)
    factor = kwargs["runtime_factor"]
    assert [factor(r, None, None) for r in range(len(classes))] == classes
    assert factor(0, [0, 1], [[0], [1]]) == fm.factor(classes[0], [0, 1], [[0], [1]])


def test_a_generated_profile_naming_no_class_is_reported_as_the_profile(sample):
    """A generated profile has no file: the error names it "profile", then the column."""
    from swftools.errors import InputError
    from swftools.site import load_site
    from swftools.whatif.profile import generate_profile

    site = load_site("aaic-v100-half")
    prof = generate_profile(site, spread=0.05, seed=1, classes=2, app_classes=("ZZ",))
    assert prof.path is None
    with pytest.raises(InputError) as info:
        whatif(sample.slice(0, 3), site, policies="packed", profile=prof)
    assert info.value.path == "profile"
    assert str(info.value).startswith("profile:1: score:ZZ: column score:ZZ names no application "
                                      "class of sensitivity model mlperf-p100-v100")


def test_comparison_text_is_utf8_whatever_the_locale(small, tmp_path):
    """``comparison.txt`` is UTF-8 under an ASCII (C) locale too: a trace named with accents and
    CJK characters appears in its first line as written (the figure left out: not text)."""
    import os
    import pickle
    import subprocess
    import sys

    named = replace(small, trace={**small.trace, "source_file": "données-東京.swf"})
    (tmp_path / "w.pickle").write_bytes(pickle.dumps(named))
    code = ("import pickle, sys\n"
            "import swftools.whatif.run as run\n"
            "run.jct_cdf_figure = lambda *args: None\n"
            "with open(sys.argv[1], 'rb') as f:\n"
            "    pickle.load(f).write(sys.argv[2])\n")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0",
           "PYTHONCOERCECLOCALE": "0", "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path / "w.pickle"),
                          str(tmp_path / "cmp")], env=env, capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stderr
    first = (tmp_path / "cmp" / "comparison.txt").read_bytes().decode("utf-8").splitlines()[0]
    assert first == "trace        données-東京.swf (" + small.trace["fingerprint"][:23] + "...)"
