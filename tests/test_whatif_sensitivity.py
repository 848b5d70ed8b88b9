"""The job sensitivity model (``swftools.whatif.sensitivity``): the MLPerf preset, job classes,
the run-time factor."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import InputError, UsageError
from swftools.resources import load_json
from swftools.site import load_site
from swftools.whatif.cluster import upgraded, with_scores
from swftools.whatif.kernel import sensitivity_factor
from swftools.whatif.sensitivity import (FactorModel, assign_classes, factor_model,
                                         hash_classes, link_kind, load_sensitivity,
                                         recorded_link_kind, runtime_factor, splitmix64)
from tests.strategies import whatif_placements, whatif_sites

MLPERF = {  # class: (P100, V100) whole-run times, H:MM:SS, as the issue quotes them
    "IC": ("4:33:04", "3:01:13"), "SSD": ("3:12:18", "3:09:12"), "OD": ("2:57:51", "2:23:26"),
    "RM": ("1:09:07", "1:09:34"), "SA": ("1:48:14", "1:22:50"), "RT": ("4:05:28", "2:48:18"),
    "TL": ("4:29:21", "2:59:55"), "SR": ("15:07:34", "10:53:32"), "RF": ("6:08:37", "5:46:00"),
}


def _s(hms: str) -> int:
    h, m, s = map(int, hms.split(":"))
    return 3600 * h + 60 * m + s


@pytest.fixture(scope="module")
def sens():
    return load_sensitivity("mlperf-p100-v100")


def test_mlperf_preset_values(sens):
    assert sens.gpu_models == ("P100", "V100") and not sens.mix_given
    assert sens.names == tuple(MLPERF)
    assert sens.mix == pytest.approx((1 / 9,) * 9)
    for i, (name, (p100, v100)) in enumerate(MLPERF.items()):
        assert sens.classes[i].run_time_s == {"P100": _s(p100), "V100": _s(v100)}
        assert sens.speed(i, "P100") == 1.0
        assert sens.speed(i, "V100") == pytest.approx(_s(p100) / _s(v100))
        assert sens.classes[i].gradient_mb > 0 and sens.classes[i].iteration_ms > 0
    assert sens.speed(0, "V100") == pytest.approx(16384 / 10873) == pytest.approx(1.50685, abs=1e-5)
    assert sens.speed(3, "V100") < 1  # RM: the V100 run was slower
    assert "measured" in sens.source.lower()


def _write(tmp_path, doc) -> str:
    path = tmp_path / "sens.json"
    path.write_text(json.dumps(doc, indent=1))
    return str(path)


def _doc(**changes):
    doc = json.loads(json.dumps(load_json("whatif/mlperf-p100-v100.json")))
    doc.update(changes)
    return doc


def test_speeds_may_be_given_instead_of_times(tmp_path):
    doc = _doc(classes=[{"name": "A", "speed": {"P100": 2.0, "V100": 5.0}, "gradient_mb": 1,
                         "iteration_ms": 1}], mix={"A": 3})
    sens = load_sensitivity(_write(tmp_path, doc))
    assert sens.speed(0, "V100") == 2.5 and sens.mix == (1.0,) and sens.mix_given


@pytest.mark.parametrize("change, field, value, marker", [
    (lambda d: d["classes"][1]["run_time"].update(A100="1:00:00"), "classes/1/run_time", "A100",
     '"A100": "1:00:00"'),
    (lambda d: d["classes"][2]["run_time"].pop("V100"), "classes/2/run_time", "V100",
     '"run_time": {'),
    (lambda d: d.update(mix={"IC": 1, "XX": 2}), "mix", "XX", '"XX": 2'),
    (lambda d: d.update(mix={"IC": 0}), "mix", "0", '"mix": {'),
    (lambda d: d["classes"].append(dict(d["classes"][0])), "classes/9/name", "IC",
     '"name": "IC"'),
    (lambda d: d["classes"][0]["run_time"].update(V100="3:61:00"), "classes/0/run_time/V100",
     "3:61:00", '"V100": "3:61:00"'),
    (lambda d: d["classes"][0].update(gradient_mb=-1), "classes/0/gradient_mb", "-1",
     '"gradient_mb": -1'),
])
def test_bad_sensitivity_files_are_located(tmp_path, change, field, value, marker):
    """The error's line is the located element's own: the ``marker`` on it, and for a path
    into the classes, the line of that class (not the first one with the same text)."""
    doc = _doc()
    change(doc)
    path = _write(tmp_path, doc)
    with pytest.raises(InputError) as info:
        load_sensitivity(path)
    err = info.value
    assert (err.path, err.field, err.value) == (path, field, value)
    assert err.expected
    lines = open(path).read().splitlines()
    assert marker in lines[err.line - 1]
    if field.startswith("classes/"):
        index = int(field.split("/")[1])
        starts = [n for n, line in enumerate(lines, 1) if line == '  {']  # each class opens
        assert starts[index] < err.line < (starts[index + 1] if index + 1 < len(starts)
                                           else len(lines) + 1)


def test_unknown_sensitivity_preset_or_file():
    with pytest.raises(InputError, match="no such sensitivity file or preset"):
        load_sensitivity("no-such")


# --- classes ---------------------------------------------------------------------------------

def test_splitmix64_matches_the_reference():
    assert int(splitmix64(np.array([0], dtype=np.uint64))[0]) == 0xE220A8397B1DCDAF


def test_hash_rule_is_pinned_and_follows_the_mix(sens):
    ids = pa.table({"job_id": pa.array(range(1, 11), pa.int64())})
    classes, how = assign_classes(ids, sens)
    assert classes.tolist() == [5, 5, 1, 3, 3, 6, 3, 5, 6, 0]  # never changes: documented rule
    assert how.startswith("hash: splitmix64(job_id)")
    many = hash_classes(np.arange(90_000), sens.mix)
    assert np.allclose(np.bincount(many, minlength=9) / 90_000, 1 / 9, atol=0.01)
    skewed = hash_classes(np.arange(10_000), [0.0, 3.0, 1.0])
    counts = np.bincount(skewed, minlength=3)
    assert counts[0] == 0 and abs(counts[1] / 10_000 - 0.75) < 0.02


def test_single_rule_and_column(sens):
    table = pa.table({"job_id": [1, 2, 3], "app": ["TL", "IC", "TL"]})
    assert assign_classes(table, sens, rule="single:SR")[0].tolist() == [7, 7, 7]
    classes, how = assign_classes(table, sens, column="app")
    assert classes.tolist() == [6, 0, 6] and how == "column app"
    auto = table.append_column("app_class", pa.array(["RF", "RF", "SA"]))
    assert assign_classes(auto, sens)[0].tolist() == [8, 8, 4]
    with pytest.raises(UsageError, match="unknown class"):
        assign_classes(table, sens, rule="single:XX")
    with pytest.raises(UsageError, match="unknown class rule"):
        assign_classes(table, sens, rule="round-robin")
    with pytest.raises(UsageError, match="no column"):
        assign_classes(table, sens, column="nope")


def test_unknown_class_in_the_column_names_the_row(sens):
    table = pa.table({"job_id": [10, 11, 12], "app": ["TL", "GAN", "IC"]})
    with pytest.raises(InputError) as info:
        assign_classes(table, sens, column="app")
    err = info.value
    assert (err.field, err.value) == ("app", "GAN")
    assert "row 1 (job 11)" in err.message and "IC" in err.expected


# --- the run-time factor ---------------------------------------------------------------------

def _packed(site, p):
    """The recorded placement of a p-GPU job: packed from node 0."""
    g = site.gpus_per_node
    nodes = list(range(-(-p // g)))
    return nodes, [list(range(min(g, p - i * g))) for i in range(len(nodes))]


@pytest.mark.parametrize("site_name", ["aaic", "aaic-v100-half"])
def test_factor_is_one_on_the_recorded_placement(sens, site_name):
    site = load_site(site_name)
    for cls in range(9):
        for p in (1, 2, 5, 8, 16, 24, 80):
            nodes, gpus = _packed(site, p)
            assert runtime_factor(site, sens, cls, nodes, gpus, "P100") == 1.0


def test_one_gpu_job_runs_at_the_speed_ratio(sens):
    site = load_site("aaic-v100-half")
    for cls, (p100, v100) in enumerate(MLPERF.values()):
        assert runtime_factor(site, sens, cls, [30], [[3]]) == pytest.approx(_s(v100) / _s(p100))
    # a mixed placement runs at its slowest model
    mixed = upgraded(load_site("aaic"), 4)  # one rack: nodes 0-35 P100, 36-39 V100
    f = runtime_factor(mixed, sens, 0, [35, 36], [list(range(8))] * 2)
    assert f == 1.0 and type(f) is float
    assert runtime_factor(site, sens, 0, [19, 20], [list(range(8))] * 2) > 1.0  # two racks


def test_locality_costs_more_across_racks(sens):
    site = load_site("aaic-v100-half")
    tl = sens.names.index("TL")
    full = [list(range(8))] * 2
    same_rack = runtime_factor(site, sens, tl, [0, 1], full)
    other_rack = runtime_factor(site, sens, tl, [0, 10], full)
    assert same_rack == 1.0 < other_rack
    split = runtime_factor(site, sens, tl, [0, 1], [[0, 1], [0, 1]])  # 4 GPUs over two nodes
    assert split > runtime_factor(site, sens, tl, [0], [[0, 1, 2, 3]]) == 1.0
    assert link_kind(site, [0, 10], 16) == "inter_rack" and recorded_link_kind(site, 16) == "inter_node"
    assert recorded_link_kind(site, 8 * 11) == "inter_rack"  # 11 nodes: more than one rack


def test_factor_is_monotone_in_the_slowest_score(sens):
    site = load_site("aaic")
    factors = []
    for score in (1.2, 1.0, 0.95, 0.9, 0.7):
        scored = with_scores(site, [[1.1] * 8 for _ in range(40)])
        rows = [list(r) for r in scored.gpu_score]
        rows[1][3] = score
        scored = with_scores(site, rows)
        factors.append(runtime_factor(scored, sens, 6, [0, 1], [list(range(8))] * 2))
    assert all(a < b for a, b in zip(factors, factors[1:]))


def test_a_site_model_the_sensitivity_does_not_know(sens):
    site = upgraded(load_site("aaic"), 4, gpu_model="A100")
    with pytest.raises(InputError) as info:
        FactorModel(site, sens)
    assert (info.value.field, info.value.value) == ("gpu_models", "A100")
    with pytest.raises(InputError, match="the trace's GPU model"):
        FactorModel(load_site("aaic"), sens, "K80")


def test_factor_model_is_shared(sens):
    site = load_site("aaic")
    assert factor_model(site, sens) is factor_model(site, sens, "NVIDIA Tesla P100")


@settings(max_examples=60, deadline=None)
@given(data=st.data(), site=whatif_sites(), cls=st.integers(0, 8),
       scores=st.lists(st.floats(0.5, 1.5), min_size=1, max_size=5))
def test_any_factor_is_positive_finite_and_vectorizes(sens, data, site, cls, scores):
    grid = [[scores[(n + g) % len(scores)] for g in range(site.gpus_per_node)]
            for n in range(len(site.gpu_model_of_node))]
    site = with_scores(site, grid)
    nodes, gpus = data.draw(whatif_placements(site))
    fm = FactorModel(site, sens, "P100")
    f = fm.factor(cls, nodes, gpus)
    assert f > 0 and math.isfinite(f)
    assert f == runtime_factor(site, sens, cls, nodes, gpus, "P100")
    key = fm.key(cls, nodes, gpus)
    vec = fm.factors(*(np.array([k]) for k in key))
    assert vec[0] == pytest.approx(f, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(site=whatif_sites(), cls=st.integers(0, 8), p=st.integers(1, 40))
def test_recorded_kind_of_placement_on_the_trace_model_is_exactly_one(sens, site, cls, p):
    p100 = [n for n, m in enumerate(site.gpu_model_of_node) if m == "P100"]
    g = site.gpus_per_node
    need = -(-p // g)
    if len(p100) < need:
        return
    # as many nodes as the packed placement, in one rack when it fits in one
    by_rack: dict[int, list[int]] = {}
    for n in p100:
        by_rack.setdefault(site.rack_of_node[n], []).append(n)
    fit = [ns for ns in by_rack.values() if len(ns) >= need]
    nodes = fit[0][:need] if fit else p100[:need]
    gpus = [list(range(min(g, p - i * g))) for i in range(need)]
    expect = recorded_link_kind(site, p)
    if link_kind(site, nodes, p) != expect:
        return
    assert runtime_factor(site, sens, cls, nodes, gpus, "P100") == 1.0


@settings(max_examples=80, deadline=None)
@given(data=st.data(), site=whatif_sites(max_gpus=8), cls=st.integers(0, 8),
       scores=st.lists(st.floats(0.5, 1.5), min_size=1, max_size=5))
def test_the_compiled_kernel_gives_the_same_factor(sens, data, site, cls, scores):
    """``FactorModel.kernel`` (the compiled engine's form) returns exactly ``factor``'s float for
    an engine placement (the same GPUs on each of its nodes), from the placement's signature."""
    grid = [[scores[(n + g) % len(scores)] for g in range(site.gpus_per_node)]
            for n in range(len(site.gpu_model_of_node))]
    site = with_scores(site, grid)
    nodes, gpus = data.draw(whatif_placements(site))
    held = gpus[0]
    fm = FactorModel(site, sens, "P100")
    kernel = fm.kernel(np.array([cls], dtype=np.int64))
    models = 0
    for k in nodes:
        models |= 1 << int(fm.node_model[k])
    s_min = min(float(fm.score[k][i]) for k in nodes for i in held)
    racks = len({int(fm.rack[k]) for k in nodes})
    f = kernel.factor(0, models, s_min, len(nodes), racks, len(held))
    assert f == fm.factor(cls, nodes, [held] * len(nodes))
    # the compiled callback (``_kernel.pyx``) and the Python reference, each on its own
    assert type(kernel.callback()).__name__ == "SensitivityFactor"
    args = (cls, models, s_min, len(nodes), racks, len(held))
    assert kernel.callback().factor(*args) == f
    assert sensitivity_factor(*args, kernel.params) == f
