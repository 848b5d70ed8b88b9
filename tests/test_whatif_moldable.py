"""Moldable replay (issue 28): the hand-worked case, shapes within queue limits, the memory
floor, and the policies on the bundled sample and a real SWF trace."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools import table as jt
from swftools.errors import UsageError
from swftools.site import load_site
from swftools.whatif.moldable import (
    allowed_shapes,
    assign_dl_classes,
    moldable_whatif,
    parse_models,
)

from .strategies import dl_model_mappings

SITE = {"name": "tiny", "time_zone": "UTC", "gpus_per_node": 4,
        "capacity_timeline": [{"since": "1970-01-01T00:00:00+00:00", "nodes": 1}],
        "queues": [{"name": "q", "number": 1, "nodes_min": 1, "nodes_max": 1,
                    "gpus_per_node_min": 1, "gpus_per_node_max": 4,
                    "walltime_default_s": 3600, "walltime_max_s": 86400}]}
PLATFORM = {"name": "toy", "gpu_memory_bytes": 16e9, "gpu_flops": 1e12, "gpus_per_node": 4,
            "levels": [{"name": "all", "bandwidth_bytes_per_s": 1e9, "latency_s": 0.0625}]}
MODEL = {"name": "toy-net", "dataset_samples": 8, "sample_time_s": 1.0,
         "measured_on_flops": 1e12, "weights": 0, "activations_per_sample": 1, "micro_batch": 1}


def _files(tmp_path: Path, model: dict = MODEL) -> tuple[str, str, str]:
    paths = []
    for name, doc in (("site", SITE), ("platform", PLATFORM), ("model", model)):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(doc), encoding="utf-8")
        paths.append(str(p))
    return tuple(paths)  # type: ignore[return-value]


def _jobs():
    return jt.from_columns({
        "job_id": [1, 2, 3], "queue": ["q", "q", "q"], "submit_time": [0, 10, 20],
        "walltime_s": [800, 800, 1000], "requested_walltime_s": [800, 800, 1000],
        "gpus": [1, 1, 2], "requested_procs": [1, 1, 2], "nodes": [1, 1, 1],
        "gpus_per_node": [1, 1, 2]}, {"site": "tiny", "time_zone": "UTC"})


def _schedule(result, name):
    jobs = result.results[name].jobs.sort_by("job_id")
    return list(zip(jobs.column("start_time").to_pylist(), jobs.column("end_time").to_pylist(),
                    jobs.column("size").to_pylist()))


def test_hand_worked_moldable_case(tmp_path):
    """One node of 4 GPUs; every job of the toy class (N = 8 samples, 1 s a sample, micro-batch
    1, no weights, alpha = 1/16 s). Epoch time on k GPUs (k | 8): ceil(8/k) compute + ceil(8/k)
    iterations x 2 (k-1) alpha = (8/k)(1 + (k-1)/8) = (k + 7)/k:
    T(1) = 8, T(2) = 4.5, T(4) = 2.75; efficiency 8/(k T(k)) = 8/(k+7): 1, 0.889, 0.727.

    Jobs: 1 (t=0, 1 GPU, 800 s), 2 (t=10, 1 GPU, 800 s), 3 (t=20, 2 GPUs, 1000 s).

    rigid: 1 on [0, 800), 2 on [10, 810), 3 on [20, 1020) (4 GPUs: all fit).
    moldable-fastest: 1 arrives to an idle node: k = 4 (ratio T(4)/T(1) = 11/32), 800 x 11/32 =
    275 s, [0, 275). 2 at 10: no free GPU, waits; at 275 it is the head, 4 free: k = 4, [275,
    550). 3 waits behind it; at 550, k = 4, ratio T(4)/T(2) = 2.75/4.5, 1000 x 0.6111 = 611 s:
    [550, 1161).
    moldable-efficient (0.8): k* = 2 (E(2) = 0.889, E(4) = 0.727) for every job. 1: ratio
    T(2)/T(1) = 9/16, 450 s, [0, 450); 2: [10, 460); 3 stays on 2 GPUs (ratio 1): the node is
    full until 450, [450, 1450).
    """
    site, platform, model = _files(tmp_path)
    result = moldable_whatif(_jobs(), load_site(site), platform=platform,
                             dl_models=f"toy={model}", class_rule="single:toy")
    assert _schedule(result, "rigid") == [(0, 800, 1), (10, 810, 1), (20, 1020, 2)]
    assert _schedule(result, "moldable-fastest") == [(0, 275, 4), (275, 550, 4),
                                                     (550, 1161, 4)]
    assert _schedule(result, "moldable-efficient") == [(0, 450, 2), (10, 460, 2),
                                                       (450, 1450, 2)]
    # the comparison table: GPU-hours 800 + 800 + 2000 GPU-s rigid; 4 x (275 + 275 + 611)
    gpu_hours = {r.policy: r.figures["gpu_hours"] for r in result.rows}
    assert gpu_hours["rigid"] == pytest.approx(3600 / 3600)
    assert gpu_hours["moldable-fastest"] == pytest.approx(4 * (275 + 275 + 611) / 3600)
    assert "moldable-efficient" in result.table_text()


def test_threshold_moves_the_efficient_shape(tmp_path):
    """At threshold 0.7, k* = 4 (E(4) = 8/11 = 0.727): job 1 runs 275 s on 4 GPUs."""
    site, platform, model = _files(tmp_path)
    result = moldable_whatif(_jobs(), load_site(site), platform=platform,
                             policies=["rigid", "moldable-efficient"], threshold=0.7,
                             dl_models=f"toy={model}", class_rule="single:toy")
    assert _schedule(result, "moldable-efficient")[0] == (0, 275, 4)


def test_memory_floor_keeps_a_job_rigid(tmp_path):
    """A micro-batch whose memory exceeds the GPU's: no k fits (weak scaling), the job stays as
    recorded and the context line says so."""
    site, platform, model = _files(tmp_path, {**MODEL, "activations_per_sample": 10**9,
                                              "micro_batch": 4})
    result = moldable_whatif(_jobs(), load_site(site), platform=platform,
                             dl_models=f"toy={model}", class_rule="single:toy")
    assert _schedule(result, "moldable-fastest") == _schedule(result, "rigid")
    assert "3 toy jobs rigid (micro-batch over the GPU memory)" in result.table_text()


def test_rigid_class_and_column(tmp_path):
    """A class mapped to none, and a column value no label names, stay rigid."""
    site, platform, model = _files(tmp_path)
    table = _jobs()
    table = table.set_column(table.column_names.index("group"), "group",
                             jt.strings(["toy", "other", "cpu"]))
    classes, how = assign_dl_classes(table, ["toy", "other"], column="group")
    assert classes.tolist() == [0, 1, -1] and "1 rows name no class" in how
    result = moldable_whatif(table, load_site(site), platform=platform,
                             dl_models=f"toy={model},other=none", class_column="group")
    fastest = _schedule(result, "moldable-fastest")
    assert fastest[0] == (0, 275, 4)  # toy: molded
    assert fastest[1][2] == 1 and fastest[2][2] == 2  # other, cpu: recorded shapes


def test_allowed_shapes_follow_queue_limits():
    aaic, abci = load_site("aaic"), load_site("abci")
    assert allowed_shapes(aaic, aaic.queue("Short"), 1) == [(1, 1)]
    assert allowed_shapes(aaic, aaic.queue("Middle"), 3) == [(1, 1), (1, 2), (1, 3), (1, 4),
                                                             (1, 8)]
    normal = allowed_shapes(aaic, aaic.queue("Normal"), 1)
    assert (32, 8) in normal and (38, 8) not in normal and max(n for n, _ in normal) <= 38
    assert all(p == 4 for _, p in allowed_shapes(abci, abci.queue("rt_F"), 8))
    assert allowed_shapes(abci, abci.queue("rt_F"), 8)[-1] == (512, 4)


def test_usage_errors(tmp_path):
    site, platform, model = _files(tmp_path)
    with pytest.raises(UsageError, match="LABEL=MODEL"):
        parse_models("resnet50")
    with pytest.raises(UsageError, match="mapped twice"):
        parse_models("a=resnet50,a=vgg16")
    with pytest.raises(UsageError, match="unknown moldable policy"):
        moldable_whatif(_jobs(), load_site(site), platform=platform, policies=["packed"])
    with pytest.raises(UsageError, match="threshold"):
        moldable_whatif(_jobs(), load_site(site), platform=platform, threshold=1.5,
                        dl_models=f"toy={model}")
    with pytest.raises(UsageError, match="give --platform"):
        moldable_whatif(_jobs(), load_site(site), dl_models=f"toy={model}")


def test_sample_runs_every_policy():
    from swftools import formats

    table = formats.read("samples/aaic-sample.csv.gz")
    result = moldable_whatif(table, "aaic")
    assert [r.policy for r in result.rows] == ["rigid", "moldable-fastest", "moldable-efficient"]
    assert all(r.figures["jobs"] == table.num_rows for r in result.rows)
    # molding changes the schedule: DL jobs run on other GPU counts
    assert result.rows[1].figures["total_run_s"] < result.rows[0].figures["total_run_s"]


@pytest.mark.slow
def test_real_swf_trace_runs_every_policy():
    """The first 5,000 of the trace's 18,239 jobs keep it quick (every policy still places them
    all, and molding still changes the total run time)."""
    from swftools import formats

    from .conftest import trace_path

    table = formats.read(trace_path("NASA-iPSC-1993-3.1-cln.swf.gz")).slice(0, 5000)
    result = moldable_whatif(table, None, procs=128, platform="abci")
    assert all(r.figures["jobs"] == result.rows[0].figures["jobs"] for r in result.rows)
    assert result.rows[1].figures["total_run_s"] != result.rows[0].figures["total_run_s"]


def test_cli_spells_the_library_names():
    from swftools.cli import whatif as cli
    from swftools.whatif import moldable

    assert cli.MOLDABLE_POLICIES == moldable.POLICIES
    assert cli.MOLDABLE_MODELS == moldable.DEFAULT_MODELS


def test_cli_moldable_run(tmp_path):
    from typer.testing import CliRunner

    from swftools import formats
    from swftools.cli import app

    site, platform, model = _files(tmp_path)
    formats.write(_jobs(), tmp_path / "pkg", "package")
    runner = CliRunner()
    base = ["whatif", str(tmp_path / "pkg"), "--site", site, "--platform", platform,
            "--dl-models", f"toy={model}", "--class-rule", "single:toy"]
    res = runner.invoke(app, base + ["--policies", "rigid,moldable-fastest", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [p["policy"] for p in data["policies"]] == ["rigid", "moldable-fastest"]
    res = runner.invoke(app, base + ["--policies", "rigid,packed"])
    assert res.exit_code == 2 and "run apart from placement policies" in res.output
    res = runner.invoke(app, base + ["--policies", "rigid", "--sensitivity", "compute-only"])
    assert res.exit_code == 2 and "--sensitivity does not apply" in res.output


@given(dl_model_mappings(), st.lists(st.integers(1, 4096), min_size=1, max_size=6))
def test_option_parsers_round_trip(mapping, counts):
    from swftools.whatif.training import parse_gpus

    text = ", ".join(f"{k}={v}" for k, v in mapping.items())
    assert parse_models(text) == mapping
    assert parse_gpus(",".join(map(str, counts))) == counts


def test_a_jobs_queue_by_name_number_or_the_only_one(tmp_path):
    """The queue whose limits a job's shapes keep: by name, else by number (SWF queues are
    numbers), else the site's only queue; on a site of several queues an unknown or missing
    queue is none (the whole machine)."""
    from swftools.whatif.moldable import _queue_of

    aaic = load_site("aaic")
    assert _queue_of(aaic, "Short").name == "Short"
    assert _queue_of(aaic, "3").name == "Middle" and _queue_of(aaic, 4).name == "Long"
    assert _queue_of(aaic, "nope") is None and _queue_of(aaic, None) is None
    assert _queue_of(aaic, "-1") is None and _queue_of(aaic, "9") is None
    assert _queue_of(aaic, " 3") is None and _queue_of(aaic, "X3") is None  # names, no numbers
    tiny = load_site(_files(tmp_path)[0])
    assert [_queue_of(tiny, name).name for name in ("q", "1", None, "nope", "7")] == ["q"] * 5


def _model(tmp_path, threshold):
    from swftools.whatif.moldable import MoldableModel
    from swftools.whatif.training import load_model, load_platform

    site, platform, model = _files(tmp_path)
    return MoldableModel(_jobs(), load_site(site), load_platform(platform),
                         {"toy": load_model(model)}, np.array([-1, 0, 0]), threshold)


def test_efficient_table_reshapes_dl_jobs_only(tmp_path):
    """Job 1 is no DL job; jobs 2 and 3 take k* = 2 (E(2) = 8/9 >= 0.8): 2 GPUs on one node,
    run and requested times x T(2)/T(1) = 9/16 (job 2) and x 1 (job 3, recorded on 2 GPUs)."""
    out = _model(tmp_path, 0.8).efficient_table(_jobs())
    cols = {name: out.column(name).to_pylist() for name in
            ("nodes", "gpus_per_node", "gpus", "requested_procs", "walltime_s",
             "requested_walltime_s")}
    assert cols == {"nodes": [1, 1, 1], "gpus_per_node": [1, 2, 2], "gpus": [1, 2, 2],
                    "requested_procs": [1, 2, 2], "walltime_s": [800, 450, 1000],
                    "requested_walltime_s": [800, 450, 1000]}


def test_threshold_bounds_and_an_efficiency_equal_to_it(tmp_path):
    """E(2) = 8/9 exactly: a threshold of 8/9 keeps k = 2; a threshold of 1 keeps k = 1
    (E(1) = 1); 0 is no threshold."""
    assert _model(tmp_path, 8 / 9).efficient(1).gpus == 2
    assert _model(tmp_path, 1.0).efficient(1).gpus == 1
    with pytest.raises(UsageError, match="threshold must be in"):
        _model(tmp_path, 0.0)
