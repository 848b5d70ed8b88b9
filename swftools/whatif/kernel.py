"""The sensitivity model's run-time factor compiled with numba (``sensitivity.FactorModel``'s
formula, operation for operation, so that both give the same floats): the ``FactorKernel`` the
compiled replay engine evaluates per placement signature."""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def _recorded_level(gpus_per_node, max_rack_nodes, p):  # pragma: no cover - compiled
    """``sensitivity.recorded_level``."""
    if p <= 1:
        return 0
    nodes = -(-p // gpus_per_node)
    if nodes == 1:
        return 1
    return 2 if nodes <= max_rack_nodes else 3


@njit(cache=True)
def _comm_s(grad_bytes, bw, lat, level, p):  # pragma: no cover - compiled
    """``FactorModel.comm_s``: 2(p-1)/p G / B + 2(p-1) L (0 for one GPU or level 0)."""
    if p <= 1 or level == 0:
        return 0.0
    return 2.0 * (p - 1) / p * grad_bytes / bw[level] + 2.0 * (p - 1) * lat[level]


@njit(cache=True)
def sensitivity_factor(key, models, s_min, nodes, racks, per_node,
                       params):  # pragma: no cover - compiled
    """``FactorModel.factor_of`` from a placement signature (``replay.factors``); ``params``:
    (trace_speed, min_speed, iter_s, grad_bytes, bw, lat, gpus_per_node, max_rack_nodes)."""
    trace_speed, min_speed, iter_s, grad_bytes, bw, lat, gpus_per_node, max_rack_nodes = params
    p = nodes * per_node
    if p <= 1:
        level = 0
    elif nodes == 1:
        level = 1
    elif racks == 1:
        level = 2
    else:
        level = 3
    r = trace_speed[key] / min_speed[key, models] / s_min
    rec = _recorded_level(gpus_per_node, max_rack_nodes, p)
    if r == 1.0 and level == rec:
        return 1.0
    i = iter_s[key]
    g = grad_bytes[key]
    return (i * r + _comm_s(g, bw, lat, level, p)) / (i + _comm_s(g, bw, lat, rec, p))
