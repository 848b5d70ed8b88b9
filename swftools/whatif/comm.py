"""The one communication model of the what-ifs: ring all-reduce under the alpha-beta model.

A ring all-reduce of ``m`` bytes over ``p`` GPUs takes ``2 (p - 1)`` steps, each sending
``m / p`` bytes and paying the latency ``alpha`` once (ParaDL's data-parallel term, Kahira et
al., HPDC 2021; Thakur, Rabenseifner and Gropp, 2005):

    t = 2 (p - 1) (alpha + m beta / p) = 2 (p - 1) / p * m / B + 2 (p - 1) * alpha

(``beta = 1 / B``; 0 when ``p <= 1``), with ``alpha`` and ``B`` those of the slowest level the
ring spans. The training-time model (``training``), the sensitivity model's locality term
(``sensitivity.FactorModel``) and its compiled twin (``kernel``, which compiles
``ring_allreduce_s`` itself) all use it, so placement and moldable what-ifs agree on what
communication costs. The second form is the one computed (the operation order fixes the floats
the Python and compiled engines must share).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def ring_allreduce_s(p, message_bytes, bandwidth_bytes_per_s, latency_s):
    """Seconds of one ring all-reduce of ``message_bytes`` over ``p`` GPUs (0 when ``p <= 1``).
    Plain arithmetic on scalars: ``kernel`` calls it; its C twin is ``_kernel.pyx``'s, tested equal."""
    if p <= 1:
        return 0.0
    return (2.0 * (p - 1) / p * message_bytes / bandwidth_bytes_per_s
            + 2.0 * (p - 1) * latency_s)


def level_allreduce_s(level, p, message_bytes, bandwidth_bytes_per_s, latency_s):
    """``ring_allreduce_s`` over a ring spanning link ``level`` (``site.LINK_KINDS``: 0 = no
    link, one GPU), with that level's bandwidth and latency: the locality term of the
    sensitivity model (``sensitivity.FactorModel.comm_s``, ``kernel.sensitivity_factor``)."""
    if level == 0:
        return 0.0
    return ring_allreduce_s(p, message_bytes, bandwidth_bytes_per_s, latency_s)


def ring_allreduce_array_s(p: Any, message_bytes: Any, bandwidth_bytes_per_s: Any,
                           latency_s: Any) -> np.ndarray:
    """``ring_allreduce_s`` over numpy arrays (broadcast), the same operations in order."""
    pf = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (2.0 * (pf - 1) / pf * np.asarray(message_bytes, dtype=np.float64)
             / np.asarray(bandwidth_bytes_per_s, dtype=np.float64)
             + 2.0 * (pf - 1) * np.asarray(latency_s, dtype=np.float64))
    return np.where(pf <= 1, 0.0, t)
