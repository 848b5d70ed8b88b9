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
    estimate,
    largest_micro_batch,
    load_model,
    load_platform,
    parse_gpus,
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
