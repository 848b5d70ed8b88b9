"""The job sensitivity model (``swftools.whatif.sensitivity``): the MLPerf preset, job classes,
the run-time factor (worked independently in ``test_whatif_sensitivity_factor.py``)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import InputError, UsageError
from swftools.metadata import METADATA_KEY
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
    err = info.value
    assert (err.path, err.field, err.value) == (sens.path, "gpu_models", "A100")
    assert err.message == "no speed for GPU model 'A100' (a GPU model of the site, site aaic-a100-4)"
    assert err.expected == ("one of P100, V100; the site's node groups and gpu_model must name "
                            "models the sensitivity file knows")
    with pytest.raises(InputError) as info:
        FactorModel(load_site("aaic"), sens, "K80")
    assert info.value.message == "no speed for GPU model 'K80' (the trace's GPU model, site aaic)"
    # a site that names no trace GPU model, and none given
    with pytest.raises(InputError) as info:
        FactorModel(dataclasses.replace(load_site("aaic"), gpu_model=""), sens)
    assert (info.value.value, info.value.message) == (
        "(none)", "no speed for GPU model '' (the trace's GPU model, site aaic)")


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


# --- loading: forms of the file, and what the errors say ---------------------------------------

def test_run_times_in_seconds_long_model_names_titles_and_a_partial_mix(tmp_path):
    """Run times as H:MM:SS or seconds, GPU models by long names, speeds relative to the first
    model; a class title or none; a mix that leaves a class out (weight 0) and adds up to less
    than 1 (normalized)."""
    doc = {"name": "forms", "title": "Forms", "source": "by hand",
           "gpu_models": ["NVIDIA Tesla P100", "Tesla V100-SXM2", "K80"],
           "classes": [
               {"name": "A", "run_time": {"P100": "10:05:07", "NVIDIA V100": 1800, "k80": 72614},
                "gradient_mb": 2, "iteration_ms": 40},
               {"name": "B", "title": "Class B", "speed": {"p100": 4, "V100": 2, "K80": 8.0},
                "gradient_mb": 0, "iteration_ms": 7}],
           "mix": {"B": 0.25, "A": 0.5}}
    path = _write(tmp_path, doc)
    sens = load_sensitivity(path)
    assert (sens.name, sens.path, sens.title, sens.source) == ("forms", path, "Forms", "by hand")
    assert sens.gpu_models == ("P100", "V100", "K80") and sens.names == ("A", "B")
    a, b = sens.classes
    t = 10 * 3600 + 5 * 60 + 7  # 36307 s
    assert a.run_time_s == {"P100": t, "V100": 1800.0, "K80": 72614.0}
    assert all(type(v) is float for v in a.run_time_s.values())
    assert a.speed == {"P100": 1.0, "V100": t / 1800, "K80": t / 72614}
    assert (a.title, a.gradient_mb, a.iteration_ms) == ("", 2.0, 40.0)
    assert b.run_time_s is None and b.title == "Class B"
    assert b.speed == {"P100": 1.0, "V100": 0.5, "K80": 2.0}
    assert sens.mix == pytest.approx((2 / 3, 1 / 3)) and sens.mix_given
    only_b = load_sensitivity(_write(tmp_path, {**doc, "mix": {"B": 0.5}}))
    assert only_b.mix == (0.0, 1.0)
    bare = load_sensitivity(_write(tmp_path, {k: v for k, v in doc.items()
                                              if k not in ("mix", "title", "source")}))
    assert (bare.mix, bare.mix_given, bare.title, bare.source) == ((0.5, 0.5), False, "", "")


@pytest.mark.parametrize("change, message, expected", [
    (lambda d: d["classes"][1]["run_time"].update(A100="1:00:00"),
     "unknown GPU model 'A100' in class SSD", "one of gpu_models (P100, V100)"),
    (lambda d: d["classes"][2]["run_time"].pop("V100"),
     "class OD gives no run time for GPU model V100",
     "a value for every one of gpu_models (P100, V100)"),
    (lambda d: d["classes"].__setitem__(2, {"name": "OD", "speed": {"P100": 1}, "gradient_mb": 1,
                                            "iteration_ms": 1}),
     "class OD gives no speed for GPU model V100", "a value for every one of gpu_models"),
    (lambda d: d["classes"].append(dict(d["classes"][0])), "duplicate class 'IC'",
     "one entry per class"),
    (lambda d: d.update(mix={"IC": 1, "XX": 2}), "unknown class 'XX' in the mix",
     "one of the classes (IC, SSD, OD, RM, SA, RT, TL, SR, RF)"),
    (lambda d: d.update(mix={"IC": 0, "SSD": 0}), "the mix weights add up to 0",
     "a positive weight for some class"),
])
def test_what_a_bad_sensitivity_file_is_told(tmp_path, change, message, expected):
    doc = _doc()
    change(doc)
    with pytest.raises(InputError) as info:
        load_sensitivity(_write(tmp_path, doc))
    assert info.value.message == message
    assert info.value.expected.startswith(expected)


def test_an_unknown_class_name_lists_the_classes(sens):
    with pytest.raises(UsageError) as info:
        sens.index("GAN")
    assert str(info.value).endswith(
        "unknown class 'GAN' (classes of mlperf-p100-v100: IC, SSD, OD, RM, SA, RT, TL, SR, RF)")
    assert sens.index("RF") == 8


# --- classes: the hash rule read literally, columns, traces' names ---------------------------

def _splitmix64_reference(x: int) -> int:
    """splitmix64's finalizer in Python integers (Steele, Lea and Flood 2014)."""
    m = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


@settings(max_examples=80, deadline=None)
@given(ids=st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=20),
       mix=st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.5]), min_size=1, max_size=6).filter(
           lambda w: sum(w) > 0))
def test_hash_classes_follow_the_documented_rule(ids, mix):
    """The class of a job id is the one whose interval of the cumulative normalized mix holds
    ``u``, the top 53 bits of splitmix64(id) (id modulo 2^64) as a fraction of 2^53."""
    total = sum(mix)
    bounds = list(itertools.accumulate(w / total for w in mix))
    want = []
    for job in ids:
        u = (_splitmix64_reference(job % 2**64) >> 11) / 2**53
        want.append(next((i for i, b in enumerate(bounds) if u < b), len(mix) - 1))
    assert hash_classes(np.array(ids, dtype=np.int64), mix).tolist() == want
    assert [int(v) for v in splitmix64(np.array([j % 2**64 for j in ids], dtype=np.uint64))] \
        == [_splitmix64_reference(j % 2**64) for j in ids]


def test_splitmix64_of_one_value_wraps_silently():
    """Arithmetic modulo 2^64 is the rule, not an overflow: a single value (a numpy scalar,
    where numpy warns of overflow by default) gives the reference with no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x in (2**64 - 1, 2**63, 12345):
            assert int(splitmix64(np.uint64(x))) == _splitmix64_reference(x)
        assert int(hash_classes(np.int64(-5), [1.0, 2.0])) == (
            0 if (_splitmix64_reference(2**64 - 5) >> 11) / 2**53 < 1 / 3 else 1)


def test_the_hash_rule_reads_ids_of_any_integer_column(sens):
    """Job ids as int32, with a null-free chunked column, or as text digits: the same classes as
    the same ids in int64; the description names the mix."""
    want = hash_classes(np.array([3, 17, 2**31 - 1], dtype=np.int64), sens.mix).tolist()
    for column in (pa.array([3, 17, 2**31 - 1], pa.int32()),
                   pa.chunked_array([[3], [17, 2**31 - 1]], pa.int64()),
                   pa.array(["3", "17", str(2**31 - 1)])):
        got, how = assign_classes(pa.table({"job_id": column}), sens)
        assert got.tolist() == want
    assert how == ("hash: splitmix64(job_id) into the mix of mlperf-p100-v100 ("
                   + ", ".join(f"{n}=0.1111" for n in sens.names) + ")")
    with pytest.raises(UsageError) as info:
        assign_classes(pa.table({"user": ["a"]}), sens)
    assert str(info.value) == "the hash rule needs a job_id column"


def test_a_job_without_an_integer_id_is_refused_by_the_hash_rule(sens):
    """A null or non-numeric job id has nothing to hash: the error names the row, the field and
    the value (it was hashed as NaN cast to int64, or failed with numpy's ValueError)."""
    from swftools.whatif.moldable import assign_dl_classes

    for column, row, value in ((pa.array([3, None, 5], pa.int64()), 1, "None"),
                               (pa.array(["3", "17", "x9"]), 2, "x9"),
                               (pa.array([None, "4"]), 0, "None")):
        table = pa.table({"job_id": column})
        for assign in (lambda t: assign_classes(t, sens),
                       lambda t: assign_dl_classes(t, ["a", "b"])):
            with pytest.raises(InputError) as info:
                assign(table)
            assert (info.value.field, info.value.value) == ("job_id", value)
            assert info.value.message.startswith(f"row {row}: job id ")


def test_integer_ids_are_hashed_without_pandas():
    """The docstring's promise: integer job ids without nulls are read through their buffers,
    not pyarrow's ``to_numpy`` (which imports pandas, ~0.25 s)."""
    # the column from raw buffers: pa.array itself imports pandas
    code = ("import sys, numpy as np, pyarrow as pa\n"
            "from swftools.whatif.sensitivity import assign_classes, load_sensitivity\n"
            "ids = np.array([5, 6, 7], dtype=np.int64)\n"
            "column = pa.Array.from_buffers(pa.int64(), 3, [None, pa.py_buffer(ids.tobytes())])\n"
            "t = pa.Table.from_arrays([column], names=['job_id'])\n"
            "assert 'pandas' not in sys.modules\n"
            "print(assign_classes(t, load_sensitivity('mlperf-p100-v100'))[0].tolist(),"
            " 'pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    sens = load_sensitivity("mlperf-p100-v100")
    assert out == f"{hash_classes(np.array([5, 6, 7]), sens.mix).tolist()} False\n"


def test_a_job_on_a_boundary_of_the_mix_takes_the_class_above():
    """Intervals are half-open, [lo, hi): a job whose u is exactly a cumulative weight belongs to
    the next class of positive weight, never to one of weight 0 (an empty interval)."""
    u = (_splitmix64_reference(1) >> 11) / 2**53  # job 1's u, k / 2^53: exact weights below
    assert hash_classes(np.array([1]), [u, 0.0, 1.0 - u]).tolist() == [2]
    assert hash_classes(np.array([1]), [u + 2**-53, 0.0, 1.0 - u - 2**-53]).tolist() == [0]
    # weights as integers, not normalized: 1:3 puts u below 1/4 in class 0, above in class 1
    ids = np.arange(200)
    us = [(_splitmix64_reference(i) >> 11) / 2**53 for i in range(200)]
    assert hash_classes(ids, [1, 3]).tolist() == [0 if x < 0.25 else 1 for x in us]
    assert hash_classes(ids.astype(np.int32), [1, 3]).tolist() == [0 if x < 0.25 else 1
                                                                   for x in us]


def test_a_single_rule_takes_one_class_name(sens):
    """Class names hold no ``:``, so ``single:TL:IC`` names no class (not IC)."""
    with pytest.raises(UsageError, match="unknown class 'TL:IC'"):
        assign_classes(pa.table({"job_id": [1]}), sens, rule="single:TL:IC")


@pytest.mark.parametrize("metadata, path", [
    ({METADATA_KEY: json.dumps({"source_file": "jobs.swf"}).encode()}, "jobs.swf"),
    ({METADATA_KEY: json.dumps({"site": "aaic"}).encode()}, "<trace>"),
    ({METADATA_KEY: b"{not json"}, "<trace>"),
    ({b"other": b"{}"}, "<trace>"),
    (None, "<trace>"),
])
def test_an_unknown_class_names_the_traces_file(sens, metadata, path):
    table = pa.table({"app_class": ["IC", None]}).replace_schema_metadata(metadata)
    with pytest.raises(InputError) as info:
        assign_classes(table, sens)
    err = info.value
    assert err.path == path
    assert (err.field, err.value, err.message) == ("app_class", "None",
                                                    "row 1: unknown class None")
    assert err.expected == ("a class of mlperf-p100-v100 (IC, SSD, OD, RM, SA, RT, TL, SR, "
                            "RF)")


def test_a_named_column_wins_over_app_class_and_single_names_its_class(sens):
    table = pa.table({"job_id": [1, 2], "app_class": ["IC", "IC"], "app": ["SR", "RM"]})
    classes, how = assign_classes(table, sens, column="app")
    assert classes.tolist() == [7, 3] and classes.dtype == np.int64 and how == "column app"
    # app_class, when the trace has it, wins over the rule
    assert assign_classes(table, sens, rule="single:TL")[0].tolist() == [0, 0]
    single, how = assign_classes(table.drop(["app_class"]), sens, rule="single:TL")
    assert single.tolist() == [6, 6] and single.dtype == np.int64
    assert how == "single: every job TL"
