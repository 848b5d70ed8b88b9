"""The ParaDL-style training-time model (issue 28): ParaDL's own data-parallel projections
reproduced, model and platform files, the one communication model, ``whatif estimate``."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from typer.testing import CliRunner

from swftools.cli import app
from swftools.errors import InputError, UsageError
from swftools.whatif.comm import ring_allreduce_array_s, ring_allreduce_s
from swftools.whatif.training import (
    Estimate,
    Level,
    Platform,
    TrainingModel,
    estimate,
    largest_micro_batch,
    load_model,
    load_platform,
    memory_bytes,
    parse_gpus,
    sample_time_s,
    scaling_figure,
    table_text,
)

from .strategies import training_model_docs, training_platform_docs

# ParaDL's data-parallel projections on ABCI: the SUMMARY blocks of log/data_alexnet_scaling_
# proj.log, log/data_resnet_scaling_proj.log and log/data_vgg_scaling_proj.log in
# github.com/TruongThaoNguyen/paraDL-analysis at commit
# ce36803bf90f61b0e5c8669536d6b2440bbe5efc (script/data_para_projection.sh: --cBon 512, 64, 32).
# (model, mini-batch B, GPUs p, memory bytes, Tcomp s, Tcomm s, Time s) per epoch.
PARADL = (
    ("alexnet", 512.0, 1, 7507837184.0, 782.00064, 0, 782.00064),
    ("alexnet", 1024.0, 2, 7507837184.0, 391.00032, 6.2592776, 397.2595976),
    ("alexnet", 2048.0, 4, 7507837184.0, 195.50016, 4.7113332, 200.2114932),
    ("alexnet", 4096.0, 8, 7507837184.0, 97.75008, 11.0646421973, 108.814722197),
    ("alexnet", 8192.0, 16, 7507837184.0, 48.87504, 6.0178045992, 54.8928445992),
    ("alexnet", 16384.0, 32, 7507837184.0, 24.43752, 3.20323204848, 27.6407520485),
    ("alexnet", 32768.0, 64, 7507837184.0, 12.21876, 1.7244303552, 13.9431903552),
    ("alexnet", 65536.0, 128, 7507837184.0, 6.10938, 0.9469599552, 7.0563399552),
    ("alexnet", 131072.0, 256, 7507837184.0, 3.05469, 0.555592572, 3.610282572),
    ("alexnet", 262144.0, 512, 7507837184.0, 1.527345, 0.3574948846, 1.8848398846),
    ("alexnet", 524288.0, 1024, 7507837184.0, 0.7636725, 0.30978443034, 1.07345693034),
    ("alexnet", 1048576.0, 2048, 7507837184.0, 0.38183625, 0.33345601342, 0.71529226342),
    ("resnet50", 64.0, 1, 15434845696.0, 3992.96256, 0, 3992.96256),
    ("resnet50", 128.0, 2, 15434845696.0, 1996.48128, 18.3672128, 2014.8484928),
    ("resnet50", 256.0, 4, 15434845696.0, 998.24064, 13.9104096, 1012.1510496),
    ("resnet50", 512.0, 8, 15434845696.0, 499.12032, 32.8884724, 532.0087924),
    ("resnet50", 1024.0, 16, 15434845696.0, 249.56016, 18.187137, 267.747297),
    ("resnet50", 2048.0, 32, 15434845696.0, 124.78008, 9.9839437, 134.7640237),
    ("resnet50", 4096.0, 64, 15434845696.0, 62.39004, 5.67828639504, 68.068326395),
    ("resnet50", 8192.0, 128, 15434845696.0, 31.19502, 3.48234794512, 34.6773679451),
    ("resnet50", 16384.0, 256, 15434845696.0, 15.59751, 2.3931260808, 17.9906360808),
    ("resnet50", 32768.0, 512, 15434845696.0, 7.798755, 1.8473165088, 9.6460715088),
    ("resnet50", 65536.0, 1024, 15434845696.0, 3.8993775, 1.5584128296, 5.4577903296),
    ("resnet50", 131072.0, 2048, 15434845696.0, 1.94968875, 1.4137478586, 3.3634366086),
    ("vgg16", 32.0, 1, 9360484864.0, 10554.35392, 0, 10554.35392),
    ("vgg16", 64.0, 2, 9360484864.0, 5277.17696, 272.0422528, 5549.2192128),
    ("vgg16", 128.0, 4, 9360484864.0, 2638.58848, 204.3016896, 2842.8901696),
    ("vgg16", 256.0, 8, 9360484864.0, 1319.29424, 477.5656424, 1796.8598824),
    ("vgg16", 512.0, 16, 9360484864.0, 659.64712, 256.975362, 916.622482),
    ("vgg16", 1024.0, 32, 9360484864.0, 329.82356, 133.9451162, 463.7686762),
    ("vgg16", 2048.0, 64, 9360484864.0, 164.91178, 69.2462169, 234.1579969),
    ("vgg16", 4096.0, 128, 9360484864.0, 82.45589, 36.172894827, 118.628784827),
    ("vgg16", 8192.0, 256, 9360484864.0, 41.227945, 19.4755670232, 60.7035120232),
    ("vgg16", 16384.0, 512, 9360484864.0, 20.6139725, 11.0696545394, 31.6836270394),
    ("vgg16", 32768.0, 1024, 9360484864.0, 10.30698625, 6.8780742096, 17.1850604596),
    ("vgg16", 65536.0, 2048, 9360484864.0, 5.153493125, 4.7090391636, 9.8625322886),
)
# ParaDL's model/ALEXNET_ImageNet_profall.net_sc (same commit): NAME|x|w|y per layer
ALEXNET_LAYERS = """CONV1|3x226x226|3x96x11x11|96x54x54
RELU|96x54x54|96x96x0x0|96x54x54
MPOOL|96x54x54|0x0x3x3|96x27x27
CONV2|96x27x27|96x256x5x5|256x27x27
RELU|256x27x27|256x256x0x0|256x27x27
MPOOL|256x27x27|0x0x3x3|256x13x13
CONV3|256x13x13|256x384x3x3|384x13x13
RELU|384x13x13|384x384x0x0|384x13x13
CONV4|384x13x13|384x384x3x3|384x13x13
RELU|384x13x13|384x384x0x0|384x13x13
CONV5|384x13x13|384x256x3x3|256x13x13
RELU|256x13x13|256x256x0x0|256x13x13
MPOOL|256x13x13|0x0x3x3|256x6x6
FC6|256x6x6|256x4096x6x6|4096x1x1
RELU|4096x1x1|4096x4096x0x0|4096x1x1
DROPOUT|4096x1x1|4096x4096x0x0|4096x1x1
FC7|4096x1x1|4096x4096x1x1|4096x1x1
RELU|4096x1x1|4096x4096x0x0|4096x1x1
DROPOUT|4096x1x1|4096x4096x0x0|4096x1x1
FC8|4096x1x1|4096x1000x1x1|1000x1x1"""


@pytest.mark.parametrize("name", ["alexnet", "resnet50", "vgg16"])
def test_reproduces_paradl_data_parallel_projections(name):
    """Every row of ParaDL's published data-parallel projection (ABCI, its micro-batch) within
    1 % (in fact to 1e-9: the same formulas and figures; the ABCI preset's 15 us PLX latency is
    the one the logs were computed with, see schemas/whatif/platforms/abci.json)."""
    rows = [r for r in PARADL if r[0] == name]
    got = estimate(load_model(name), load_platform("abci"), [r[2] for r in rows])
    for (_, mini, p, mem, comp, comm, total), e in zip(rows, got):
        assert e.gpus == p and e.mini_batch == mini
        assert e.memory_bytes == pytest.approx(mem, rel=1e-9)
        assert e.compute_s == pytest.approx(comp, rel=1e-9)
        assert e.comm_s == pytest.approx(comm, rel=1e-9, abs=1e-12)
        assert e.total_s == pytest.approx(total, rel=0.01)
        assert e.total_s == pytest.approx(total, rel=1e-9)


def test_abci_levels_are_the_logs_alphas():
    """ParaDL's logs print alpha per GPU count: 9e-06 (2, 4), 3.031e-05 (8..64), 3.049e-05
    (128), 3.098e-05 (256..2048); beta 1 / 50e9 within a node and 1 / 12.5e9 beyond."""
    plat = load_platform("abci")
    want = {2: 9e-6, 4: 9e-6, 8: 3.031e-5, 64: 3.031e-5, 128: 3.049e-5, 256: 3.098e-5,
            2048: 3.098e-5}
    for p, alpha in want.items():
        assert plat.level(p).latency_s == pytest.approx(alpha)
        assert plat.level(p).bandwidth_bytes_per_s == (50e9 if p <= 4 else 12.5e9)


def test_default_micro_batch_is_paradls_rule():
    """maxSamplePerNode of the logs: 1132.35 (AlexNet), 66.37 (ResNet-50), 58.55 (VGG16): the
    largest power of two below is the default micro-batch on ABCI."""
    plat = load_platform("abci")
    assert [largest_micro_batch(load_model(m), plat) for m in ("alexnet", "resnet50", "vgg16")] \
        == [1024, 64, 32]


def test_layer_table_gives_paradls_totals(tmp_path):
    """The layer-table form sums AlexNet's layers as ParaDL does (RELU, BNORM in place): its log
    prints |x| 931692, |y| 779464, |w| 62367776."""
    layers = []
    for line in ALEXNET_LAYERS.splitlines():
        name, x, w, y = line.split("|")
        layers.append({"name": name, **{k: [int(v) for v in s.split("x")]
                                        for k, s in (("x", x), ("w", w), ("y", y))}})
    path = tmp_path / "alexnet.json"
    path.write_text(json.dumps({"name": "alexnet-layers", "dataset_samples": 1280000,
                                "sample_time_s": 0.000610938, "measured_on_flops": 7.8e12,
                                "layers": layers}), encoding="utf-8")
    model = load_model(path)
    assert model.weights == 62367776
    assert model.activations_per_sample == 931692 + 779464
    assert estimate(model, load_platform("abci"), [8], 512)[0].total_s == \
        pytest.approx(108.814722197, rel=1e-9)


def test_platform_rescales_the_sample_time():
    """On AAIC's P100 (5.3 TFLOPS) a sample takes 7.8 / 5.3 of its V100 time."""
    one = estimate(load_model("resnet50"), load_platform("aaic"), [1])[0]
    assert one.compute_s == pytest.approx(1280000 * 0.003119502 * 7.8 / 5.3)
    assert load_platform("aaic").level(8).name == "intra_node"
    assert load_platform("aaic").level(9).name == "inter_node"


def test_one_communication_model():
    """The ring all-reduce, ParaDL's form 2 (p-1)(alpha + m beta / p); the sensitivity model's
    locality term is the same function."""
    from swftools.site import load_site
    from swftools.whatif.sensitivity import factor_model, load_sensitivity

    assert ring_allreduce_s(1, 1e9, 1e9, 1e-5) == 0.0
    assert ring_allreduce_s(8, 1e8, 12.5e9, 3e-5) == pytest.approx(
        2 * 7 * (3e-5 + 1e8 / 12.5e9 / 8), rel=1e-15)
    arr = ring_allreduce_array_s([1, 2, 8], 1e8, 12.5e9, 3e-5)
    assert arr.tolist() == [0.0, ring_allreduce_s(2, 1e8, 12.5e9, 3e-5),
                            ring_allreduce_s(8, 1e8, 12.5e9, 3e-5)]
    fm = factor_model(load_site("aaic"), load_sensitivity("mlperf-p100-v100"))
    for level, p in ((1, 4), (2, 16), (3, 64)):
        assert fm.comm_s(0, level, p) == ring_allreduce_s(p, fm.grad_bytes[0], fm.bw[level],
                                                          fm.lat[level])


def test_bad_files_are_located(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text('{"name": "m", "dataset_samples": 10,\n "sample_time_s": -1,\n'
                   ' "measured_on_flops": 1e12, "weights": 1, "activations_per_sample": 1}',
                   encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_model(bad)
    assert err.value.line == 2 and err.value.field == "sample_time_s" and err.value.value == "-1"
    both = tmp_path / "b.json"
    both.write_text(json.dumps({"name": "b", "dataset_samples": 1, "sample_time_s": 1,
                                "measured_on_flops": 1, "weights": 1,
                                "activations_per_sample": 1, "layers": []}), encoding="utf-8")
    with pytest.raises(InputError):
        load_model(both)
    plat = tmp_path / "p.json"
    plat.write_text(json.dumps({"name": "p", "gpu_memory_bytes": 1e9, "gpu_flops": 1e12,
                                "gpus_per_node": 4, "levels": [
                                    {"name": "a", "max_gpus": 8, "bandwidth_bytes_per_s": 1,
                                     "latency_s": 0},
                                    {"name": "b", "max_gpus": 4, "bandwidth_bytes_per_s": 1,
                                     "latency_s": 0},
                                    {"name": "c", "bandwidth_bytes_per_s": 1,
                                     "latency_s": 0}]}, indent=1), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_platform(plat)
    assert err.value.field == "levels/1/max_gpus" and err.value.value == "4"
    assert plat.read_text(encoding="utf-8").splitlines()[err.value.line - 1].strip() == \
        '"max_gpus": 4,'
    with pytest.raises(InputError, match="no such training model"):
        load_model(tmp_path / "absent.json")


def test_parse_gpus():
    assert parse_gpus("1..16") == [1, 2, 4, 8, 16]
    assert parse_gpus("3, 6,12") == [3, 6, 12]
    for bad in ("", "0", "4..2", "a", "1..x"):
        with pytest.raises(UsageError):
            parse_gpus(bad)


@settings(max_examples=60, deadline=None)
@given(training_model_docs())
def test_model_files_round_trip(tmp_path_factory, case):
    doc, weights, acts = case
    path = tmp_path_factory.mktemp("m") / "model.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    model = load_model(path)
    assert (model.weights, model.activations_per_sample) == (weights, acts)
    assert (model.dataset_samples, model.sample_time_s, model.micro_batch) == \
        (doc["dataset_samples"], doc["sample_time_s"], doc.get("micro_batch"))


@settings(max_examples=60, deadline=None)
@given(training_platform_docs(), training_model_docs())
def test_estimates_hold_their_invariants(tmp_path_factory, plat_doc, case):
    """Any platform and model: the platform file reads back; no communication on one GPU;
    computation never grows with p; total = computation + communication; E(1) = 1."""
    folder = tmp_path_factory.mktemp("p")
    (folder / "p.json").write_text(json.dumps(plat_doc), encoding="utf-8")
    (folder / "m.json").write_text(json.dumps(case[0]), encoding="utf-8")
    plat = load_platform(folder / "p.json")
    assert [lv.max_gpus for lv in plat.levels] == \
        [lv.get("max_gpus") for lv in plat_doc["levels"]]
    rows = estimate(load_model(folder / "m.json"), plat, [1, 2, 3, 8, 64], micro_batch=2)
    assert rows[0].comm_s == 0 and rows[0].efficiency == pytest.approx(1.0)
    for a, b in zip(rows, rows[1:]):
        assert b.compute_s <= a.compute_s
    for r in rows:
        assert r.total_s == r.compute_s + r.comm_s and r.comm_s >= 0
        assert r.iterations == math.ceil(case[0]["dataset_samples"] / (2 * r.gpus))


def test_cli_estimate(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["whatif", "estimate", "--model", "vgg16", "--platform", "abci",
                              "--gpus", "1,8,2048", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [e["gpus"] for e in data["estimates"]] == [1, 8, 2048]
    assert data["estimates"][2]["total_s"] == pytest.approx(9.8625322886, rel=1e-9)
    res = runner.invoke(app, ["whatif", "estimate", "--model", "resnet50", "--platform", "abci",
                              "--gpus", "1..8"])
    assert res.exit_code == 0 and "leaf_switch" in res.stdout and "93.8%" in res.stdout
    png = tmp_path / "s.png"
    args = ["whatif", "estimate", "--model", "alexnet", "--platform", "aaic", "-o", str(png)]
    assert runner.invoke(app, args).exit_code == 0 and png.stat().st_size > 0
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "already exists" in again.output
    res = runner.invoke(app, ["whatif", "estimate", "--model", "nope", "--platform", "abci"])
    assert res.exit_code == 1 and "no such training model" in res.output
    res = runner.invoke(app, ["whatif", "estimate", "--model", "vgg16", "--platform", "abci",
                              "--gpus", "8192"])
    assert res.exit_code == 2 and "has 4096" in res.output


# --- hand-worked cases (issue 30): each expected value below is worked out from the module
# docstring's formulas by hand, not read from the code.

def _model(**kw):
    base = {"name": "m", "path": "", "dataset_samples": 10, "sample_time_s": 1.0,
            "measured_on_flops": 1e12, "weights": 100, "activations_per_sample": 5,
            "bytes_per_item": 1.0, "micro_batch": None}
    base.update(kw)
    return TrainingModel(**base)


def _platform(**kw):
    base = {"name": "p", "path": "", "gpu_memory_bytes": 220.0, "gpu_flops": 1e12,
            "gpus_per_node": 2, "levels": (Level("near", 2, 100.0, 0.5),
                                           Level("far", None, 50.0, 1.0)),
            "max_gpus": 4}
    base.update(kw)
    return Platform(**base)


def test_level_is_the_first_whose_bound_holds_the_ring():
    plat = _platform(levels=(Level("a", 2, 1.0, 0.0), Level("b", 8, 1.0, 0.0),
                             Level("c", None, 1.0, 0.0)))
    assert [plat.level(p).name for p in (1, 2, 3, 8, 9, 10**6)] == ["a", "a", "b", "b", "c", "c"]
    # a platform built in code with every level bounded: a bigger ring takes the outermost
    bounded = _platform(levels=(Level("a", 2, 1.0, 0.0), Level("b", 4, 1.0, 0.0),
                                Level("c", 8, 1.0, 0.0)))
    assert bounded.level(8).name == "c" and bounded.level(9).name == "c"


def test_hand_worked_estimates():
    """N = 10 samples of 1 s, W = 100 one-byte items, A = 5, b = 2; a 2-GPU level of 100 B/s and
    0.5 s, then 50 B/s and 1 s. Ring all-reduce 2 (p - 1) / p * m / B + 2 (p - 1) alpha:
    p = 2: 1 + 1 = 2 s; p = 3: 8/3 + 4 = 20/3 s; p = 4: 3 + 6 = 9 s."""
    rows = estimate(_model(), _platform(), [4, 1, 3, 2], micro_batch=2)
    want = [  # p, mini-batch, I = ceil(10 / 2p), T_comp = ceil(10 / p), T_comm, level
        (4, 8, 2, 3.0, 18.0, "far"),
        (1, 2, 5, 10.0, 0.0, "none"),
        (3, 6, 2, 4.0, 40 / 3, "far"),
        (2, 4, 3, 5.0, 6.0, "near"),
    ]
    assert len(rows) == len(want)
    for r, (p, mini, its, comp, comm, level) in zip(rows, want):
        assert (r.gpus, r.micro_batch, r.mini_batch, r.iterations, r.level) == \
            (p, 2, mini, its, level)
        assert r.compute_s == pytest.approx(comp, rel=1e-12)
        assert r.comm_s == pytest.approx(comm, rel=1e-12)
        assert r.total_s == pytest.approx(comp + comm, rel=1e-12)
        assert r.efficiency == pytest.approx(10.0 / (p * (comp + comm)), rel=1e-12)
        assert r.memory_bytes == 2 * (2 * 5 + 100) * 1  # 220: exactly the GPU's memory
        assert r.fits is True
    assert [r.fits for r in estimate(_model(), _platform(gpu_memory_bytes=219.0), [1, 2], 2)] \
        == [False, False]
    assert estimate(_model(), _platform(), [2], 1)[0].mini_batch == 2


def test_estimate_micro_batch_precedence_and_refusals():
    plat = _platform(gpu_memory_bytes=1000.0)  # (1000 / 2 - 100) / 5 = 80 samples: 64
    assert estimate(_model(), plat, [1])[0].micro_batch == 64
    assert estimate(_model(micro_batch=4), plat, [1])[0].micro_batch == 4
    assert estimate(_model(micro_batch=4), plat, [1], micro_batch=2)[0].micro_batch == 2
    for bad in (-1, 0):  # 0 was taken for "not given": the model's default, silently
        with pytest.raises(UsageError, match=f"micro-batch must be at least 1, not {bad}$"):
            estimate(_model(micro_batch=4), plat, [1], micro_batch=bad)
    with pytest.raises(UsageError, match="GPU count must be at least 1, not 0"):
        estimate(_model(), plat, [2, 0])
    assert estimate(_model(), plat, [4])[0].gpus == 4  # max_gpus itself is allowed
    with pytest.raises(UsageError, match="5 GPUs: platform p has 4"):
        estimate(_model(), plat, [1, 5])
    assert estimate(_model(), _platform(max_gpus=None), [1000], 2)[0].level == "far"


def test_sample_time_on_the_measuring_gpu_is_the_measured_one():
    """Measured on the platform's own speed: exactly the measured time (0.1 x 3 / 3 is not 0.1
    in floating point); on a GPU twice as fast, half of it."""
    assert sample_time_s(_model(sample_time_s=0.1, measured_on_flops=3.0),
                         _platform(gpu_flops=3.0)) == 0.1
    assert estimate(_model(sample_time_s=0.1, measured_on_flops=3.0, dataset_samples=1),
                    _platform(gpu_flops=3.0), [1], 1)[0].compute_s == 0.1
    assert sample_time_s(_model(sample_time_s=0.5, measured_on_flops=1e12),
                         _platform(gpu_flops=2e12)) == 0.25


def test_memory_bytes_is_twice_activations_and_weights():
    assert memory_bytes(_model(weights=5, activations_per_sample=10, bytes_per_item=2.0), 3) \
        == 2 * (3 * 10 + 5) * 2


def test_largest_micro_batch_against_brute_force():
    """The largest power of two b with 2 (b A + W) bytes_per_item <= the GPU's memory, searched
    by brute force; UsageError when b = 1 does not fit."""
    for w in (0, 1, 7, 30):
        for a in (1, 2, 3, 13):
            for bpi in (1.0, 2.0, 4.0):
                model = _model(weights=w, activations_per_sample=a, bytes_per_item=bpi)
                for mem in range(1, 400, 3):
                    plat = _platform(gpu_memory_bytes=float(mem))
                    fits = [b for b in (2 ** k for k in range(12))
                            if 2 * (b * a + w) * bpi <= mem]
                    if not fits:
                        with pytest.raises(UsageError):
                            largest_micro_batch(model, plat)
                    else:
                        assert largest_micro_batch(model, plat) == max(fits), (w, a, bpi, mem)


def test_largest_micro_batch_edges():
    # exactly one sample fits: 2 (5 + 3) 2 = 32 bytes
    model = _model(name="tiny", weights=3, activations_per_sample=5, bytes_per_item=2.0)
    assert largest_micro_batch(model, _platform(gpu_memory_bytes=32.0)) == 1
    with pytest.raises(UsageError) as err:
        largest_micro_batch(model, _platform(name="small", gpu_memory_bytes=31.0))
    assert str(err.value) == ("model tiny does not fit one GPU of small even with one sample "
                              "(32 bytes needed, 31 available)")
    # no activations: any micro-batch fits, the rule still gives a power of two
    flat = _model(weights=3, activations_per_sample=0, bytes_per_item=1.0)
    assert largest_micro_batch(flat, _platform(gpu_memory_bytes=16.0)) == 4  # 16 / 2 - 3 = 5


def test_estimate_to_json_has_every_field():
    e = Estimate(8, 2, 16, 3, 1.5, 0.5, 2.0, 100.0, True, 0.25, "near")
    assert e.to_json() == {"gpus": 8, "micro_batch": 2, "mini_batch": 16, "iterations": 3,
                           "compute_s": 1.5, "comm_s": 0.5, "total_s": 2.0,
                           "memory_bytes": 100.0, "fits": True, "efficiency": 0.25,
                           "level": "near"}


def test_parse_gpus_edges():
    assert parse_gpus("1,,2") == [1, 2]
    assert parse_gpus(" 8 ") == [8]
    assert parse_gpus("4..4") == [4]
    assert parse_gpus("1..1") == [1]
    assert parse_gpus("3..20") == [3, 6, 12]
    assert parse_gpus("2, 1..2") == [2, 1, 2]
    with pytest.raises(UsageError, match=r"^--gpus: '0\.\.4' is not a GPU count or a range "
                                         r"LOW\.\.HIGH \(doubling\), e\.g\. 1,2,4 or 1\.\.1024$"):
        parse_gpus("0..4")
    with pytest.raises(UsageError, match=r"^--gpus: '5\.\.4' is not"):
        parse_gpus("1,5..4")
    with pytest.raises(UsageError, match=r"^--gpus: give GPU counts of at least 1, not '2,-1'$"):
        parse_gpus("2,-1")
    with pytest.raises(UsageError, match=r"^--gpus: give GPU counts of at least 1, not ' , '$"):
        parse_gpus(" , ")


def test_model_file_defaults_and_in_place_layers(tmp_path):
    """Without bytes_per_item, micro_batch, title, source: 4 bytes (the schema's default), no
    micro-batch, empty texts. RELU and BNORM layers hold weights but no activations."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"name": "m", "dataset_samples": 10, "sample_time_s": 0.5,
                                "measured_on_flops": 2e12, "weights": 7,
                                "activations_per_sample": 3}), encoding="utf-8")
    m = load_model(path)
    assert (m.name, m.path, m.dataset_samples, m.sample_time_s, m.measured_on_flops) == \
        ("m", str(path), 10, 0.5, 2e12)
    assert (m.weights, m.activations_per_sample, m.bytes_per_item, m.micro_batch, m.title,
            m.source) == (7, 3, 4.0, None, "", "")
    layers = [{"name": "CONV", "x": [2, 3], "w": [4, 5], "y": [6]},
              {"name": "BNORM", "x": [7], "w": [2], "y": [7]},
              {"name": "RELU", "x": [100], "w": [3, 1], "y": [100]}]
    path.write_text(json.dumps({"name": "l", "title": "T", "source": "S", "bytes_per_item": 2,
                                "micro_batch": 8, "dataset_samples": 10, "sample_time_s": 0.5,
                                "measured_on_flops": 2e12, "layers": layers}), encoding="utf-8")
    m = load_model(path)
    assert (m.weights, m.activations_per_sample) == (20 + 2 + 3, 6 + 6)
    assert (m.bytes_per_item, m.micro_batch, m.title, m.source) == (2.0, 8, "T", "S")


PLATFORM_HEAD = ('{"name": "q", "gpu_memory_bytes": 1e9, "gpu_flops": 1e12, "gpus_per_node": 4,\n'
                 ' "levels": [\n')


def test_platform_file_defaults(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(PLATFORM_HEAD + '  {"name": "a", "max_gpus": 4, "bandwidth_bytes_per_s": 5,'
                    ' "latency_s": 0.5},\n  {"name": "b", "bandwidth_bytes_per_s": 2,'
                    ' "latency_s": 1}\n]}', encoding="utf-8")
    p = load_platform(path)
    assert (p.name, p.path, p.gpu_memory_bytes, p.gpu_flops, p.gpus_per_node) == \
        ("q", str(path), 1e9, 1e12, 4)
    assert (p.max_gpus, p.gpu_model, p.title, p.source) == (None, "", "", "")
    assert p.levels == (Level("a", 4, 5.0, 0.5), Level("b", None, 2.0, 1.0))
    aaic = load_platform("aaic")
    assert (aaic.max_gpus, aaic.gpu_model) == (320, "P100")
    assert aaic.title.startswith("AIST AI Cloud") and aaic.source.startswith("GPU: NVIDIA")


def test_platform_level_errors_are_located(tmp_path):
    path = tmp_path / "p.json"
    with pytest.raises(InputError, match=r"no such training platform file or preset "
                                         r"\(presets: aaic, abci\)$"):
        load_platform(path)
    # an inner level without max_gpus: the error points at that level
    path.write_text(PLATFORM_HEAD + '  {"name": "a",\n   "bandwidth_bytes_per_s": 1,'
                    ' "latency_s": 0},\n  {"name": "b", "bandwidth_bytes_per_s": 1,'
                    ' "latency_s": 0}\n]}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_platform(path)
    e = err.value
    assert (e.path, e.line, e.field, e.value) == (str(path), 3, "levels/0/max_gpus", "None")
    assert e.message == "level 'a' must have a max_gpus above the previous level's"
    assert e.expected == ("levels innermost first, max_gpus increasing; only the last level "
                          "without max_gpus")
    # two levels with the same bound
    path.write_text(PLATFORM_HEAD + '  {"name": "a", "max_gpus": 4, "bandwidth_bytes_per_s": 1,'
                    ' "latency_s": 0},\n  {"name": "b",\n   "max_gpus": 4,'
                    ' "bandwidth_bytes_per_s": 1, "latency_s": 0},\n  {"name": "c",'
                    ' "bandwidth_bytes_per_s": 1, "latency_s": 0}\n]}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_platform(path)
    assert (err.value.line, err.value.field, err.value.value) == (5, "levels/1/max_gpus", "4")
    assert err.value.message.startswith("level 'b' must")
    # increasing bounds are fine whatever the first bound
    path.write_text(PLATFORM_HEAD + '  {"name": "a", "max_gpus": 2, "bandwidth_bytes_per_s": 1,'
                    ' "latency_s": 0},\n  {"name": "b", "max_gpus": 16,'
                    ' "bandwidth_bytes_per_s": 1, "latency_s": 0},\n  {"name": "c",'
                    ' "bandwidth_bytes_per_s": 1, "latency_s": 0}\n]}', encoding="utf-8")
    assert [lv.max_gpus for lv in load_platform(path).levels] == [2, 16, None]
    # the first problem is the one reported: levels/1 (not above levels/0), not levels/2
    path.write_text(PLATFORM_HEAD + '  {"name": "a", "max_gpus": 4, "bandwidth_bytes_per_s": 1,'
                    ' "latency_s": 0},\n  {"name": "b", "max_gpus": 4,'
                    ' "bandwidth_bytes_per_s": 1, "latency_s": 0},\n  {"name": "c",'
                    ' "bandwidth_bytes_per_s": 1, "latency_s": 0},\n  {"name": "d",'
                    ' "bandwidth_bytes_per_s": 1, "latency_s": 0}\n]}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_platform(path)
    assert (err.value.line, err.value.field, err.value.value) == (4, "levels/1/max_gpus", "4")
    # a bounded last level
    path.write_text(PLATFORM_HEAD + '  {"name": "a", "max_gpus": 4, "bandwidth_bytes_per_s": 1,'
                    ' "latency_s": 0},\n  {"name": "b", "max_gpus": 8, "bandwidth_bytes_per_s": 1,'
                    ' "latency_s": 0},\n  {"name": "c", "bandwidth_bytes_per_s": 1,\n'
                    '   "max_gpus": 16,\n   "latency_s": 0}\n]}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_platform(path)
    e = err.value
    assert (e.path, e.line, e.field, e.value) == (str(path), 6, "levels/2/max_gpus", "16")
    assert e.message == "the last level must have no max_gpus (it takes every larger ring)"
    assert e.expected == "no max_gpus on the outermost level"


def test_table_text_by_hand():
    model, plat = _model(dataset_samples=1280000), _platform()
    # 1,235,000,001 bytes: 1.235000001 GB, 1.24 to two decimals
    rows = [Estimate(1, 32, 32, 40000, 12.5, 0.0, 12.5, 1235000001.0, True, 1.0, "none"),
            Estimate(2048, 32, 65536, 20, 0.25, 0.125, 0.375, 17.5e9, False, 0.25, "leaf")]
    head = "model m, platform p: one epoch of 1,280,000 samples, data parallel, micro-batch "
    columns = ("  GPUs mini-batch    compute s       comm s      total s  memory GB efficiency"
               "  level")
    assert table_text(model, plat, rows) == (
        head + "32\n\n" + columns + "\n"
        "     1         32      12.5000       0.0000      12.5000       1.24     100.0%  none\n"
        "  2048     65,536       0.2500       0.1250       0.3750     17.50!      25.0%  leaf\n"
        "! the micro-batch does not fit the GPU's memory\n")
    assert table_text(model, plat, rows[:1]).endswith("  none\n")
    assert table_text(model, plat, []) == head + "-\n\n" + columns + "\n"


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_scaling_figure_content(tmp_path, monkeypatch):
    """What the figure shows: total, computation and communication seconds (communication
    floored at 1e-9 s for the log axis) against GPUs on log axes, efficiency on a 0..1.05 axis;
    a 640 x 400 PNG without a Software stamp, whatever the user's matplotlibrc says; no
    overwrite without force."""
    import matplotlib
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    monkeypatch.setitem(matplotlib.rcParams, "figure.dpi", 50)  # a user's matplotlibrc
    rows = [Estimate(1, 2, 2, 5, 10.0, 0.0, 10.0, 1.0, True, 1.0, "none"),
            Estimate(2, 2, 4, 3, 5.0, 6.0, 11.0, 1.0, True, 10 / 22, "near"),
            Estimate(4, 2, 8, 2, 3.0, 18.0, 21.0, 1.0, True, 10 / 84, "far")]
    out = tmp_path / "s.png"
    assert scaling_figure(_model(name="net"), _platform(name="sys"), rows, str(out)) == out
    try:
        (fig,) = figures
        assert _png_size(out) == (640, 400)
        assert b"Software" not in out.read_bytes()
        ax, ax2 = fig.axes
        lines = ax.get_lines()
        assert [ln.get_label() for ln in lines] == ["total", "computation", "communication"]
        assert [list(ln.get_xdata()) for ln in lines] == [[1, 2, 4]] * 3
        assert [list(ln.get_ydata()) for ln in lines] == [[10.0, 11.0, 21.0], [10.0, 5.0, 3.0],
                                                          [1e-9, 6.0, 18.0]]
        assert [(ln.get_marker(), ln.get_linestyle()) for ln in lines] == \
            [("o", "-"), ("s", "--"), ("^", ":")]
        assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
        assert ax.xaxis.get_transform().base == 2
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("GPUs", "seconds per epoch")
        assert ax.get_title() == "net on sys (data parallel, ParaDL model)"
        legend = ax.get_legend()
        assert [t.get_text() for t in legend.get_texts()] == \
            ["total", "computation", "communication"]
        assert legend.get_texts()[0].get_fontsize() == 8
        assert legend._loc == 3  # lower left
        (eff,) = ax2.get_lines()
        assert list(eff.get_xdata()) == [1, 2, 4]
        assert list(eff.get_ydata()) == [1.0, 10 / 22, 10 / 84]
        assert (eff.get_label(), eff.get_color(), eff.get_alpha(), eff.get_linestyle()) == \
            ("efficiency", "k", 0.4, "-")
        assert ax2.get_ylim() == (0, 1.05)
        assert ax2.get_ylabel() == "parallel efficiency"
        # laid out: the right axis's label is inside the figure
        renderer = fig.canvas.get_renderer()
        assert ax2.yaxis.label.get_window_extent(renderer).x1 <= fig.bbox.x1
    finally:
        monkeypatch.undo()
        for f in figures:
            plt.close(f)
    with pytest.raises(Exception, match="already exists"):
        scaling_figure(_model(), _platform(), rows, out)
    out.write_bytes(b"old")
    scaling_figure(_model(), _platform(), rows, out, force=True)
    assert _png_size(out) == (640, 400)
