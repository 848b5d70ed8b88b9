r"""A ParaDL-style training-time model of data-parallel DL training (issue 28).

ParaDL (Kahira, Nguyen et al., "An Oracle for Guiding Large-Scale Model/Hybrid Parallel Training
of Convolutional Neural Networks", HPDC 2021; github.com/TruongThaoNguyen/paraDL-analysis)
estimates one epoch of training on ``p`` GPUs. Its data-parallel model, computed here:

    micro-batch  b   samples per GPU per iteration (weak scaling: fixed as p grows)
    mini-batch   B = b p;  iterations  I = ceil(N / B)           (N: samples in the data set)
    computation  T_comp = ceil(N / p) * t                         (t: one sample, fwd + bwd)
    communication T_comm = I * ring_allreduce(p, W bytes)         (``comm``; alpha, beta of the
                                                                   level p GPUs span)
    total        T = T_comp + T_comm                              (no overlap)
    memory       M = 2 (b A + W_items) bytes_per_item             (weights, activations, x2
                                                                   for their gradients)
    efficiency   E(p) = T(1) / (p T(p))

``t`` is the model's measured sample time rescaled to the platform: ``sample_time_s x
measured_on_flops / gpu_flops``. Model files (``schemas/training-model.schema.json``, presets
in ``schemas/whatif/models/``) and platform files (``schemas/training-platform.schema.json``,
presets in ``schemas/whatif/platforms/``) hold every number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swftools.errors import InputError, UsageError, json_line
from swftools.whatif.comm import ring_allreduce_s
from swftools.whatif.jsonfile import load_checked

MODEL_PRESETS = ("alexnet", "resnet50", "vgg16")
PLATFORM_PRESETS = ("aaic", "abci")
IN_PLACE_LAYERS = ("RELU", "BNORM")  # ParaDL does not count their x, y as activations


@dataclass(frozen=True)
class TrainingModel:
    """A DL training workload (see ``schemas/training-model.schema.json``)."""

    name: str
    path: str
    dataset_samples: int
    sample_time_s: float
    measured_on_flops: float
    weights: int  # items
    activations_per_sample: int  # items
    bytes_per_item: float = 4.0
    micro_batch: int | None = None
    title: str = ""
    source: str = ""


@dataclass(frozen=True)
class Level:
    """One network level of a platform: rings of up to ``max_gpus`` GPUs (None: any)."""

    name: str
    max_gpus: int | None
    bandwidth_bytes_per_s: float
    latency_s: float


@dataclass(frozen=True)
class Platform:
    """A GPU system (see ``schemas/training-platform.schema.json``)."""

    name: str
    path: str
    gpu_memory_bytes: float
    gpu_flops: float
    gpus_per_node: int
    levels: tuple[Level, ...]
    max_gpus: int | None = None
    gpu_model: str = ""
    title: str = ""
    source: str = ""

    def level(self, p: int) -> Level:
        """The level a ring of ``p`` GPUs uses: the first whose ``max_gpus`` >= p."""
        for lv in self.levels:
            if lv.max_gpus is None or p <= lv.max_gpus:
                return lv
        return self.levels[-1]


@dataclass(frozen=True)
class Estimate:
    """One epoch of data-parallel training on ``gpus`` GPUs."""

    gpus: int
    micro_batch: int
    mini_batch: int
    iterations: int
    compute_s: float
    comm_s: float
    total_s: float
    memory_bytes: float
    fits: bool  # memory_bytes <= the GPU's memory
    efficiency: float  # T(1) / (p T(p))
    level: str

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _product(dims: Sequence[int]) -> int:
    out = 1
    for d in dims:
        out *= int(d)
    return out


def load_model(name_or_path: str | Path) -> TrainingModel:
    """A training model by preset name (``resnet50``) or JSON file; InputError naming the file,
    line, field and value when it does not follow its schema."""
    raw, name, _ = load_checked("training model", name_or_path, MODEL_PRESETS, "models",
                      "training-model.schema.json")
    if "layers" in raw:
        weights = sum(_product(layer["w"]) for layer in raw["layers"])
        acts = sum(_product(layer["x"]) + _product(layer["y"]) for layer in raw["layers"]
                   if not any(k in layer["name"] for k in IN_PLACE_LAYERS))
    else:
        weights, acts = int(raw["weights"]), int(raw["activations_per_sample"])
    return TrainingModel(raw["name"], name, int(raw["dataset_samples"]),
                         float(raw["sample_time_s"]), float(raw["measured_on_flops"]), weights,
                         acts, float(raw.get("bytes_per_item", 4.0)), raw.get("micro_batch"),
                         raw.get("title", ""), raw.get("source", ""))


def load_platform(name_or_path: str | Path) -> Platform:
    """A training platform by preset name (``abci``, ``aaic``) or JSON file; InputError as
    ``load_model``, also for levels out of order or a bounded last level."""
    raw, name, text = load_checked("training platform", name_or_path, PLATFORM_PRESETS, "platforms",
                      "training-platform.schema.json")
    levels = tuple(Level(lv["name"], lv.get("max_gpus"), float(lv["bandwidth_bytes_per_s"]),
                         float(lv["latency_s"])) for lv in raw["levels"])
    bounds = [lv.max_gpus for lv in levels[:-1]]
    for i, b in enumerate(bounds):
        if b is None or (i and bounds[i - 1] is not None and b <= bounds[i - 1]):
            raise InputError(name, f"level {levels[i].name!r} must have a max_gpus above the "
                             "previous level's", field=f"levels/{i}/max_gpus", value=str(b),
                             line=json_line(text, ["levels", i, "max_gpus"] if b is not None
                                            else ["levels", i]),
                             expected="levels innermost first, max_gpus increasing; only the "
                                      "last level without max_gpus")
    if levels[-1].max_gpus is not None:
        raise InputError(name, "the last level must have no max_gpus (it takes every larger "
                         "ring)", field=f"levels/{len(levels) - 1}/max_gpus",
                         value=str(levels[-1].max_gpus),
                         line=json_line(text, ["levels", len(levels) - 1, "max_gpus"]),
                         expected="no max_gpus on the outermost level")
    return Platform(raw["name"], name, float(raw["gpu_memory_bytes"]), float(raw["gpu_flops"]),
                    int(raw["gpus_per_node"]), levels, raw.get("max_gpus"),
                    raw.get("gpu_model", ""), raw.get("title", ""), raw.get("source", ""))


def sample_time_s(model: TrainingModel, platform: Platform) -> float:
    """Seconds of one sample (forward and backward) on one GPU of ``platform``."""
    if platform.gpu_flops == model.measured_on_flops:
        return model.sample_time_s
    return model.sample_time_s * model.measured_on_flops / platform.gpu_flops


def memory_bytes(model: TrainingModel, micro_batch: int) -> float:
    """Memory per GPU: ``2 (b A + W) bytes_per_item`` (data parallelism: every GPU holds the
    whole model and its micro-batch's activations, and the gradients of both)."""
    return 2.0 * (micro_batch * model.activations_per_sample + model.weights) * model.bytes_per_item


def largest_micro_batch(model: TrainingModel, platform: Platform) -> int:
    """ParaDL's default micro-batch: the largest power of two whose memory fits the GPU
    (UsageError when not even one sample fits)."""
    items = platform.gpu_memory_bytes / model.bytes_per_item
    most = (items / 2 - model.weights) / max(model.activations_per_sample, 1)
    if most < 1:
        raise UsageError(f"model {model.name} does not fit one GPU of {platform.name} even with "
                         f"one sample ({memory_bytes(model, 1):.4g} bytes needed, "
                         f"{platform.gpu_memory_bytes:.4g} available)")
    return 1 << math.floor(math.log2(most))


def epoch_time_s(model: TrainingModel, platform: Platform, p: int,
                 micro_batch: int) -> tuple[float, float]:
    """(computation, communication) seconds of one epoch on ``p`` GPUs."""
    n = model.dataset_samples
    compute = math.ceil(n / p) * sample_time_s(model, platform)
    iterations = math.ceil(n / (micro_batch * p))
    lv = platform.level(p)
    comm = iterations * ring_allreduce_s(p, model.weights * model.bytes_per_item,
                                         lv.bandwidth_bytes_per_s, lv.latency_s)
    return compute, comm


def estimate(model: TrainingModel, platform: Platform, gpus: Sequence[int],
             micro_batch: int | None = None) -> list[Estimate]:
    """One ``Estimate`` per GPU count of ``gpus`` (the module docstring gives the model);
    ``micro_batch``: samples per GPU (default the model's, else ``largest_micro_batch``)."""
    b = micro_batch if micro_batch is not None else (
        model.micro_batch or largest_micro_batch(model, platform))
    if b < 1:
        raise UsageError(f"the micro-batch must be at least 1, not {b}")
    for p in gpus:
        if p < 1:
            raise UsageError(f"a GPU count must be at least 1, not {p}")
        if platform.max_gpus is not None and p > platform.max_gpus:
            raise UsageError(f"{p} GPUs: platform {platform.name} has {platform.max_gpus}")
    c1, m1 = epoch_time_s(model, platform, 1, b)
    one = c1 + m1
    mem = memory_bytes(model, b)
    out = []
    for p in gpus:
        c, m = epoch_time_s(model, platform, p, b)
        out.append(Estimate(p, b, b * p, math.ceil(model.dataset_samples / (b * p)), c, m, c + m,
                            mem, mem <= platform.gpu_memory_bytes, one / (p * (c + m)),
                            platform.level(p).name if p > 1 else "none"))
    return out


def parse_gpus(text: str) -> list[int]:
    """GPU counts from ``1,2,4`` or a doubling range ``1..1024`` (UsageError otherwise)."""
    out: list[int] = []
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        try:
            if ".." in part:
                lo, hi = (int(x) for x in part.split(".."))
                if lo < 1 or hi < lo:
                    raise ValueError
                k = lo
                while k <= hi:
                    out.append(k)
                    k *= 2
            else:
                out.append(int(part))
        except ValueError:
            raise UsageError(f"--gpus: {part!r} is not a GPU count or a range LOW..HIGH "
                             "(doubling), e.g. 1,2,4 or 1..1024") from None
    if not out or min(out) < 1:
        raise UsageError(f"--gpus: give GPU counts of at least 1, not {text!r}")
    return out


def table_text(model: TrainingModel, platform: Platform, rows: Sequence[Estimate]) -> str:
    """The estimates as a text table (times per epoch)."""
    head = (f"model {model.name}, platform {platform.name}: one epoch of {model.dataset_samples:,} "
            f"samples, data parallel, micro-batch {rows[0].micro_batch if rows else '-'}\n")
    lines = [head, f"{'GPUs':>6} {'mini-batch':>10} {'compute s':>12} {'comm s':>12} "
                   f"{'total s':>12} {'memory GB':>10} {'efficiency':>10}  level"]
    for r in rows:
        mem = f"{r.memory_bytes / 1e9:.2f}" + ("" if r.fits else "!")
        lines.append(f"{r.gpus:>6} {r.mini_batch:>10,} {r.compute_s:>12.4f} {r.comm_s:>12.4f} "
                     f"{r.total_s:>12.4f} {mem:>10} {r.efficiency:>10.1%}  {r.level}")
    if any(not r.fits for r in rows):
        lines.append("! the micro-batch does not fit the GPU's memory")
    return "\n".join(lines) + "\n"


def scaling_figure(model: TrainingModel, platform: Platform, rows: Sequence[Estimate],
                   path: str | Path, *, force: bool = False) -> Path:
    """The scaling curve (epoch time, stacked computation and communication, and efficiency
    against the GPU count) as a PNG, written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from swftools.atomic import atomic_file

    p = [r.gpus for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    ax.plot(p, [r.total_s for r in rows], "o-", label="total")
    ax.plot(p, [r.compute_s for r in rows], "s--", label="computation")
    ax.plot(p, [max(r.comm_s, 1e-9) for r in rows], "^:", label="communication")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("GPUs")
    ax.set_ylabel("seconds per epoch")
    ax.set_title(f"{model.name} on {platform.name} (data parallel, ParaDL model)")
    ax2 = ax.twinx()
    ax2.plot(p, [r.efficiency for r in rows], "k-", alpha=0.4, label="efficiency")
    ax2.set_ylim(0, 1.05)
    ax2.set_ylabel("parallel efficiency")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    with atomic_file(path, force=force) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    plt.close(fig)
    return Path(path)
