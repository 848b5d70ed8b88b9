"""Moldable replay (issue 28): the hand-worked case, shapes within queue limits, the memory
floor, and the policies on the bundled sample and a real SWF trace."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
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

from .strategies import dl_model_mappings, examples, moldable_shape_cases

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


# --- mutation tests (issue 30): each against a hand-worked case or a rule recomputed here ---

def _site(gpus_per_node=4, nodes=(1,), queues=None):
    """A Site built in memory: ``nodes`` its capacity timeline's node counts."""
    from swftools.site import Queue, Site

    if queues is None:
        queues = (Queue("q", 1, 1, max(nodes), 1, gpus_per_node, 3600, 86400),)
    return Site("tiny", "UTC", gpus_per_node, tuple(range(len(nodes))), tuple(nodes),
                tuple(queues))


def _toy_time(k, n=8, latency=1 / 16):
    """The toy model's epoch time on k GPUs, from training's docstring formula worked here:
    ceil(n/k) samples of 1 s, plus ceil(n/k) iterations of a ring all-reduce of 0 bytes,
    2 (k - 1) latency."""
    steps = -(-n // k)
    return steps * 1.0 + steps * 2 * (k - 1) * latency


def _toy(n=8, latency=1 / 16, **kw):
    from swftools.whatif.training import Level, Platform, TrainingModel

    platform = Platform("toy", "toy", 16e9, 1e12, 4, (Level("all", None, 1e9, latency),))
    model = TrainingModel("toy-net", "toy", n, 1.0, 1e12, 0,
                          **{"activations_per_sample": 1, "micro_batch": 1, **kw})
    return platform, model


def _table(**cols):
    n = len(cols["gpus"])
    base = {"job_id": list(range(1, n + 1)), "queue": ["q"] * n,
            "submit_time": list(range(0, 10 * n, 10)), "walltime_s": [1600] * n,
            "requested_walltime_s": [1600] * n, "requested_procs": cols["gpus"]}
    return jt.from_columns({**base, **cols}, {"site": "tiny", "time_zone": "UTC"})


def _splitmix64(x):
    """splitmix64's finalizer, written out on Python ints (mod 2**64)."""
    mask = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def test_hash_is_the_default_rule_equal_weights():
    """No column and no rule: splitmix64(job id) >> 11 as u in [0, 1) cut into equal thirds."""
    ids = list(range(1, 25))
    table = _table(gpus=[1] * len(ids))
    classes, how = assign_dl_classes(table, ["a", "b", "c"])
    expected = [int((_splitmix64(i) >> 11) / 2.0**53 * 3) for i in ids]
    assert classes.tolist() == expected and set(expected) == {0, 1, 2}
    assert how == "hash: splitmix64(job_id) into a, b, c (equal weights)"


def test_class_errors_and_a_null_or_empty_column():
    import pyarrow as pa

    with pytest.raises(UsageError, match="^the hash rule needs a job_id column$"):
        assign_dl_classes(pa.table({"x": [1]}), ["a"])
    with pytest.raises(UsageError,
                       match="^the trace has no column 'grp' to take job classes from$"):
        assign_dl_classes(pa.table({"x": [1]}), ["a"], column="grp")
    # a null is no class, even next to a label spelled "None"; other values by their text
    table = pa.table({"grp": pa.array([None, 7, 3], pa.int64())})
    classes, how = assign_dl_classes(table, ["None", "7"], column="grp")
    assert classes.tolist() == [-1, 1, -1] and "(2 rows name no class: rigid)" in how
    # no rows: still indices (an integer array indexes the labels)
    empty, _ = assign_dl_classes(pa.table({"grp": pa.array([], pa.string())}), ["a"],
                                 column="grp")
    assert np.array(["a"])[empty].tolist() == []


def _brute_shapes(site, queue, rec):
    """Every (nodes, per node) the rule allows, by trying every pair."""
    g, most = site.gpus_per_node, site.max_nodes
    out = []
    for n in range(1, most + 1):
        for p in range(1, g + 1):
            k = n * p
            if n > 1 and p != g:
                continue
            if k != rec and k & (k - 1):
                continue
            if queue is not None and not (queue.nodes_min <= n <= queue.nodes_max
                                          and queue.gpus_per_node_min <= p
                                          <= queue.gpus_per_node_max):
                continue
            out.append((k, n, p))
    return [(n, p) for _, n, p in sorted(out)]


def test_allowed_shapes_a_recorded_size_off_the_node_grid():
    """4 GPUs a node, 3 nodes, recorded 6 GPUs: 6 is not whole nodes, so it is left out, and
    the larger 8 (2 nodes) still comes."""
    assert allowed_shapes(_site(4, (3,)), None, 6) == [(1, 1), (1, 2), (1, 4), (2, 4)]


@settings(max_examples=examples(40))
@given(moldable_shape_cases())
def test_allowed_shapes_match_brute_force(case):
    site, queue, rec = case
    assert allowed_shapes(site, queue, rec) == _brute_shapes(site, queue, rec)


def test_fastest_breaks_ties_by_fewer_gpus():
    """One sample, no latency: every k takes the same 1 s, so every ratio is 1 and the fewest
    GPUs win."""
    from swftools.whatif.moldable import MoldableModel

    platform, model = _toy(n=1, latency=0.0)
    mm = MoldableModel(_table(gpus=[2]), _site(4, (2,)), platform, {"toy": model},
                       np.array([0]))
    assert [s.ratio for s in mm.shapes[0]] == [1.0] * 4
    assert mm.fastest(0, 8) == (1, 1, 1.0)


def test_efficient_table_across_nodes_keeps_nulls_and_types():
    """Two nodes of 4: at threshold 0.5, k* = 8 (E(8) = 8 / (8 x 1.875) = 0.533; the toy model,
    T(8) = 1 + 14/16): 2 nodes x 4, times x T(8)/T(k_rec): 1.875/8 for the job recorded on 1
    GPU, 1.875/4.5 for the one on 2. Unknown times stay unknown, and int32 columns int32."""
    import pyarrow as pa

    from swftools.whatif.moldable import MoldableModel

    platform, model = _toy()
    assert _toy_time(8) == 1.875
    table = _table(gpus=[1, 2], requested_walltime_s=[None, 3200])
    mm = MoldableModel(table, _site(4, (2,)), platform, {"toy": model}, np.array([0, 0]), 0.5)
    out = mm.efficient_table(table)
    assert out.column("nodes").to_pylist() == [2, 2]
    assert out.column("gpus_per_node").to_pylist() == [4, 4]
    assert out.column("gpus").to_pylist() == [8, 8]
    assert out.column("walltime_s").to_pylist() == [375, round(1600 * 1.875 / 4.5)]
    assert out.column("requested_walltime_s").to_pylist() == [None, round(3200 * 1.875 / 4.5)]
    narrow = table.cast(pa.schema([f.with_type(pa.int32()) if f.name == "gpus" else f
                                   for f in table.schema]))
    out = mm.efficient_table(narrow)
    assert out.schema.field("gpus").type == pa.int32() and out.column("gpus").to_pylist() == [8, 8]


def test_parse_models_skips_empty_parts_and_splits_at_the_first_equals():
    assert parse_models(" a = x ,, b=dir/k=1.json,") == {"a": "x", "b": "dir/k=1.json"}
    for bad in ("a=", "=x", "a"):
        with pytest.raises(UsageError, match="is not LABEL=MODEL"):
            parse_models(bad)
    for empty in ("", " , ,"):
        with pytest.raises(UsageError, match="^--dl-models: give at least one LABEL=MODEL$"):
            parse_models(empty)


def test_single_rule_takes_the_whole_label_and_names_the_classes():
    table = _table(gpus=[1, 1])
    classes, how = assign_dl_classes(table, ["b", "a:b"], rule="single:a:b")
    assert classes.tolist() == [1, 1] and how == "single: every job a:b"
    with pytest.raises(UsageError, match=r"^unknown class 'z' \(classes: b, a:b\)$"):
        assign_dl_classes(table, ["b", "a:b"], rule="single:z")
    with pytest.raises(UsageError,
                       match=r"^unknown class rule 'rr' \(choose hash or single:<class>\)$"):
        assign_dl_classes(table, ["b"], rule="rr")


def test_a_queue_name_ending_in_a_dash_is_no_number():
    from swftools.whatif.moldable import _queue_of

    assert _queue_of(load_site("aaic"), "3-") is None


def _shape_table(mm, row):
    return [(s.gpus, s.nodes, s.per_node, s.ratio, s.efficiency) for s in mm.shapes[row]]


def _expected_shapes(shapes, k_rec, time):
    """(gpus, nodes, per node, T(k)/T(k_rec), T(1)/(k T(k))) of each (nodes, per node)."""
    return [(n * p, n, p, pytest.approx(time(n * p) / time(k_rec)),
             pytest.approx(time(1) / (n * p * time(n * p)))) for n, p in shapes]


def test_shapes_per_label_and_queue():
    """Two DL classes of different data sets (8 and 16 samples) on the same recorded size,
    after a rigid class; the job in queue "small" (one node, at most 2 GPUs a node) gets only
    its shapes, the one in "big" also whole nodes."""
    from swftools.site import Queue
    from swftools.whatif.moldable import MoldableModel

    platform, small_set = _toy(n=8)
    _, big_set = _toy(n=16)
    site = _site(4, (2,), (Queue("small", 1, 1, 1, 1, 2, 1, 1), Queue("big", 2, 1, 2, 1, 4, 1, 1)))
    table = _table(gpus=[2, 2, 2], queue=["small", "big", "big"])
    mm = MoldableModel(table, site, platform, {"cpu": None, "a": small_set, "b": big_set},
                       np.array([1, 1, 2]))
    assert mm.labels == ["cpu", "a", "b"]
    assert _shape_table(mm, 0) == _expected_shapes([(1, 1), (1, 2)], 2, _toy_time)
    everything = [(1, 1), (1, 2), (1, 4), (2, 4)]
    assert _shape_table(mm, 1) == _expected_shapes(everything, 2, _toy_time)
    assert _shape_table(mm, 2) == _expected_shapes(everything, 2,
                                                   lambda k: _toy_time(k, n=16))


def test_shapes_without_a_queue_column():
    """No queue column: the site's only queue bounds the shapes. Two nodes of 4 GPUs, but the
    queue takes one node: a job of 3 GPUs may take 1, 2, 3 or 4, not 8."""
    import pyarrow as pa

    from swftools.site import Queue
    from swftools.whatif.moldable import MoldableModel

    platform, model = _toy()
    site = _site(4, (2,), (Queue("only", 1, 1, 1, 1, 4, 1, 1),))
    mm = MoldableModel(pa.table({"requested_procs": [3], "gpus": [3]}), site, platform,
                       {"toy": model}, np.array([0]))
    assert [(s.nodes, s.per_node) for s in mm.shapes[0]] == [(1, 1), (1, 2), (1, 3), (1, 4)]


def test_the_largest_micro_batch_when_the_model_names_none():
    """No micro-batch: the largest power of two that fits, 2**30 here (16e9 bytes / (2 x 4)
    per sample = 2e9 samples), so one iteration an epoch: T(k) = ceil(8/k) + 2 (k-1)/16."""
    from swftools.whatif.moldable import MoldableModel

    platform, model = _toy(micro_batch=None)
    mm = MoldableModel(_table(gpus=[2]), _site(4, (1,)), platform, {"toy": model},
                       np.array([0]))
    time = lambda k: -(-8 // k) + 2 * (k - 1) / 16  # noqa: E731
    assert _shape_table(mm, 0) == _expected_shapes([(1, 1), (1, 2), (1, 4)], 2, time)


def test_memory_floor_at_and_over_the_gpu_memory():
    """Memory 2 (b A + W) x 4 bytes: A = 2e9 items fills the 16e9 bytes exactly (fits: a DL
    job); one more item does not, nor a model with no micro-batch whose one sample is too big
    (rigid, counted)."""
    from swftools.whatif.moldable import MoldableModel

    platform, exact = _toy(activations_per_sample=2 * 10**9)
    _, over = _toy(activations_per_sample=2 * 10**9 + 1)
    _, none_fits = _toy(activations_per_sample=2 * 10**9 + 1, micro_batch=None)
    mm = MoldableModel(_table(gpus=[1, 1, 1, 1]), _site(), platform,
                       {"exact": exact, "over": over, "auto": none_fits}, np.array([0, 1, 2, 1]))
    assert [s is not None for s in mm.shapes] == [True, False, False, False]
    assert mm.no_memory == {"over": 2, "auto": 1}


POLICY_NAMES = ("rigid", "moldable-fastest", "moldable-efficient")


def test_moldable_whatif_names_its_context(tmp_path):
    """The comparison's context: site, classes, the model line (platform, models as given, DL
    job count, threshold) under the heading "model", the trace's job count; every replay on
    the packed placement. The mapping may be a dict."""
    site, platform, model = _files(tmp_path)
    calls = []
    result = moldable_whatif(_jobs(), load_site(site), platform=platform,
                             dl_models={"toy": model}, class_rule="single:toy",
                             on_policy=lambda *a: calls.append(a))
    assert calls == [("rigid", 0, 3), ("moldable-fastest", 1, 3), ("moldable-efficient", 2, 3)]
    assert result.site == "tiny" and result.classes == "single: every job toy"
    assert result.sensitivity == f"platform toy, training models toy={model}, 3 DL jobs, " \
                                 "threshold 0.8"
    assert result.context_lines()[2].startswith("model        platform toy,")
    assert result.trace["jobs"] == 3 and result.scheduler == "easy"
    for name in POLICY_NAMES:
        assert result.results[name].summary["model"].endswith(", placement packed")
    assert _schedule(result, "moldable-fastest")[0] == (0, 275, 4)  # as the hand-worked case


def test_moldable_whatif_counts_rigid_jobs_per_label(tmp_path):
    """Jobs of two classes whose micro-batch is over the GPU memory: each class's count, in
    the mapping's order; no DL job."""
    site, platform, model = _files(tmp_path, {**MODEL, "activations_per_sample": 10**9,
                                              "micro_batch": 4})
    table = _jobs()
    table = table.set_column(table.column_names.index("group"), "group",
                             jt.strings(["a", "b", "a"]))
    result = moldable_whatif(table, load_site(site), platform=platform,
                             policies=["moldable-efficient"], dl_models=f"a={model},b={model}",
                             class_column="group")
    assert result.sensitivity == (
        f"platform toy, training models a={model}, b={model}, 0 DL jobs, threshold 0.8; "
        "2 a jobs rigid (micro-batch over the GPU memory); "
        "1 b jobs rigid (micro-batch over the GPU memory)")


def test_moldable_whatif_passes_the_scheduler_and_class_rule(tmp_path):
    """Every job of the rigid class "cpu" (the rule picks it): each policy replays the recorded
    shapes, under FCFS. One node of 4 GPUs: A (3 GPUs, t=0, 100 s) [0, 100); B (2 GPUs, t=1,
    100 s) waits for A: [100, 200); C (1 GPU, t=2, 50 s) fits now, but FCFS keeps it behind B:
    [100, 150) (EASY would backfill it at 2)."""
    site, platform, model = _files(tmp_path)
    table = jt.from_columns({
        "job_id": [1, 2, 3], "queue": ["q"] * 3, "submit_time": [0, 1, 2],
        "walltime_s": [100, 100, 50], "requested_walltime_s": [100, 100, 50],
        "gpus": [3, 2, 1], "requested_procs": [3, 2, 1]}, {"site": "tiny", "time_zone": "UTC"})
    result = moldable_whatif(table, load_site(site), platform=platform, scheduler="fcfs",
                             dl_models=f"toy={model},cpu=none", class_rule="single:cpu")
    for name in POLICY_NAMES:
        assert _schedule(result, name) == [(0, 100, 3), (100, 200, 2), (100, 150, 1)], name
    assert result.scheduler == "fcfs" and ", 0 DL jobs," in result.sensitivity


def test_moldable_whatif_flat_pool_and_site_from_the_trace(tmp_path):
    """``procs`` replays a flat pool of that many processors even when the trace names a
    site; without it, the site the trace names, or with no site the flat pool its SWF header
    declares (MaxProcs)."""
    _, platform, model = _files(tmp_path)
    jobs = _jobs()
    table = jt.from_columns({c: jobs.column(c).to_pylist() for c in
                             ("job_id", "queue", "submit_time", "walltime_s",
                              "requested_walltime_s", "gpus", "requested_procs")},
                            {"site": "aaic", "time_zone": "UTC"})
    flat = moldable_whatif(table, None, procs=8, platform=platform, policies=["rigid"],
                           dl_models=f"toy={model}", class_rule="single:toy")
    assert flat.site == "flat-8" and flat.results["rigid"].capacity == [(0, 8)]
    named = moldable_whatif(table, None, platform=platform, policies=["rigid"],
                            dl_models=f"toy={model}", class_rule="single:toy")
    assert named.site == "aaic"
    swf = jt.with_metadata(table, {"time_zone": "UTC", "swf_header": [["MaxProcs", "16"]]})
    declared = moldable_whatif(swf, None, platform=platform, policies=["rigid"],
                               dl_models=f"toy={model}", class_rule="single:toy")
    assert declared.site == "flat-16"
    with pytest.raises(UsageError, match="^a flat pool has no training platform preset: "
                                         "give --platform$"):
        moldable_whatif(table, None, procs=8, dl_models=f"toy={model}")


def test_moldable_whatif_usage_messages(tmp_path):
    site, platform, model = _files(tmp_path)
    with pytest.raises(UsageError, match=r"^unknown moldable policy 'packed' \(choose from "
                                         r"rigid, moldable-fastest, moldable-efficient\)$"):
        moldable_whatif(_jobs(), load_site(site), platform=platform, policies=["packed"])
    for policies in (["rigid", "rigid"], []):
        with pytest.raises(UsageError, match="^give each moldable policy once$"):
            moldable_whatif(_jobs(), load_site(site), platform=platform, policies=policies)
    with pytest.raises(UsageError, match=r"^no training platform preset for site tiny: give "
                                         r"--platform \(presets: aaic, abci, or a file\)$"):
        moldable_whatif(_jobs(), load_site(site), dl_models=f"toy={model}")
