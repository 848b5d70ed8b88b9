"""The sensitivity model's run-time factor as a factor kernel (``replay.factors.FactorKernel``):
``sensitivity.FactorModel``'s formula, operation for operation, so that both give the same
floats. ``FactorModel.kernel`` packs the model's tables into the kernel's one float64 array:

    [classes, masks, gpus_per_node, max_rack_nodes, trace_speed (classes),
     min_speed (classes x masks, row-major), iter_s (classes), grad_bytes (classes),
     bw (4 levels), lat (4 levels)]

``sensitivity_factor`` is the Python reference; its compiled twin (``_kernel.pyx``,
``SensitivityFactor``, the same operations in C doubles) is its ``compiled`` attribute when the
extension is built, and what the compiled engine calls.
"""

from __future__ import annotations

import numpy as np

from swftools.whatif.comm import level_allreduce_s
from swftools.whatif.sensitivity import recorded_level

HEADER = 4  # classes, masks, gpus_per_node, max_rack_nodes (_kernel.pyx reads the same layout)


def pack(trace_speed: np.ndarray, min_speed: np.ndarray, iter_s: np.ndarray,
         grad_bytes: np.ndarray, bw: np.ndarray, lat: np.ndarray, gpus_per_node: int,
         max_rack_nodes: int) -> np.ndarray:
    """The kernel's ``params`` array (the layout of the module docstring)."""
    n_cls, n_masks = min_speed.shape
    head = np.array([n_cls, n_masks, gpus_per_node, max_rack_nodes], dtype=np.float64)
    return np.ascontiguousarray(np.concatenate(
        [head, trace_speed, min_speed.reshape(-1), iter_s, grad_bytes, bw, lat]
    ).astype(np.float64))


def sensitivity_factor(key: int, models: int, s_min: float, nodes: int, racks: int,
                       per_node: int, params: np.ndarray) -> float:
    """``FactorModel.factor_of`` from a placement signature (``replay.factors``); ``params``:
    ``pack``'s array."""
    n_cls = int(params[0])
    n_masks = int(params[1])
    ts = HEADER
    ms = ts + n_cls
    it = ms + n_cls * n_masks
    gb = it + n_cls
    bw = gb + n_cls
    lat = bw + 4
    p = nodes * per_node
    if p <= 1:
        level = 0
    elif nodes == 1:
        level = 1
    elif racks == 1:
        level = 2
    else:
        level = 3
    r = float(params[ts + key]) / float(params[ms + key * n_masks + models]) / s_min
    rec = recorded_level(int(params[2]), int(params[3]), p)
    if r == 1.0 and level == rec:
        return 1.0
    i = float(params[it + key])
    g = float(params[gb + key])
    return ((i * r + level_allreduce_s(level, p, g, float(params[bw + level]),
                                       float(params[lat + level])))
            / (i + level_allreduce_s(rec, p, g, float(params[bw + rec]), float(params[lat + rec]))))


def _attach_compiled() -> None:
    from swftools import extensions

    module = extensions.load("swftools.whatif._kernel", "the what-if factor kernel")
    if module is not None:
        sensitivity_factor.compiled = module.SensitivityFactor  # type: ignore[attr-defined]


_attach_compiled()
