"""The general path of ``engine_gpu.run_gpu`` on its compiled twin (the Cython extension
``_engine_general.pyx``): when it applies, and its inputs as arrays.

It applies to the built-in placements (``type(placement)`` one of ``POLICY_CLASSES``, not a
subclass) with no run-time factor, or with a keyed one (``Machine.factor_by_key``, or a kernel
with per-key score grids, ``FactorKernel.score_grids``) given in compiled form
(``factors.FactorKernel``, its keys in queue order), on workloads that fit the
twin's int64 words (``engine_gpu.compiled_fits``), finite factor bounds and GPU model indices
below 63, when the extension is built (else a one-line notice, once). Otherwise ``run_gpu`` runs
its Python general path, the reference (the same schedule job for job:
``tests/test_replay_engine_general_jit.py``).

The queue bit of a waiting job: its (size, group, factor bound) combination's (the engine's
``choice_group`` logic) for the most frequent combinations, as many as the int64 holds beside
the size bits (62 in all); the others keep their size's bit. Which combinations get a bit
changes how many candidates are looked at, never a start. A placement that watches the queue
(``priority-wc``) has no choice group (``PriorityWc.choice_group``): its jobs keep their size's
bit, and its own arrays (``tables.waiting_tables``) go with its tables.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from swftools.errors import UsageError
from swftools.replay.factors import FactorKernel
from swftools.replay.model import FlatNodes, GpuNodes
from swftools.replay.placement import (POLICY_CLASSES, BestFit, Placement, PlacementInputs,
                                       RuntimeFactor)
from swftools.replay.result import sorted_distinct
from swftools.replay.workload import Workload

COMPILED_MAX_BITS = 62  # queue bits: sizes first, then combinations
EXACT_FLOAT = float(1 << 53)  # estimate x bound below this: numpy's product is Python's


def _bound_arrays(work: Workload, min_factor, has_factor: bool):
    """(per job lower bound of the factor, the queue's ``round(estimate x bound)``), as
    ``run_gpu`` computes them; None when a bound is not finite or the products not exact."""
    n = len(work)
    if min_factor is None:
        min_factor = 0.0 if has_factor else 1.0
    if isinstance(min_factor, (int, float)):
        lower = np.full(n, float(min_factor))
    else:
        lower = np.asarray(min_factor, dtype=np.float64)
        if lower.shape != (n,):
            return None
    if not np.isfinite(lower).all():
        return None
    product = work.estimate.astype(np.float64) * lower
    if not (np.abs(product) < EXACT_FLOAT).all():
        return None
    return lower + 0.0, np.rint(product).astype(np.int64)  # (+ 0.0: -0.0 is 0.0, as a key)


def _encode(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Each value's index among the distinct values in order of first occurrence, and their
    count (numpy's sort: pyarrow.compute's hash table costs ~40 ms to import)."""
    distinct, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(len(distinct), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(distinct), dtype=np.int64)
    return rank[inverse.reshape(-1)], len(distinct)


def _queue_bits(size_index: np.ndarray, n_sizes: int, side: np.ndarray, key: np.ndarray,
                lower: np.ndarray, grouped: bool = True):
    """Each job's queue bit (of its (size, ``side``, ``key``, ``lower``) combination, or of its
    size; only its size's when not ``grouped``) and per bit index its size index, whether it is
    a combination's and its factor bound; the fit masks (``fit_masks[i]``: the bits of the
    ``i`` smallest sizes)."""
    n = len(size_index)
    bit_shape = np.arange(64, dtype=np.int64)  # (per bit index of an int64)
    bit_combo = np.zeros(64, dtype=np.bool_)
    bit_lower = np.zeros(64, dtype=np.float64)
    index = size_index
    used = n_sizes
    room = COMPILED_MAX_BITS - n_sizes if grouped else 0
    if room > 0 and n:
        # one int64 code per combination, numbered in order of first occurrence (each step's
        # codes stay below n^2)
        side_index, n_sides = _encode(np.asarray(side, dtype=np.int64))
        key_index, n_keys = _encode(key)
        bound_index, n_bounds = _encode(lower)
        code = size_index * n_sides + side_index
        code, _ = _encode(code)
        code, _ = _encode(code * n_keys + key_index)
        inverse, n_combos = _encode(code * n_bounds + bound_index)
        counts = np.bincount(inverse, minlength=n_combos)
        # (ids come in order of first occurrence: where the running maximum grows)
        first = np.flatnonzero(np.diff(np.maximum.accumulate(inverse), prepend=-1) > 0)
        combos = np.arange(n_combos)
        order = np.lexsort((combos, -counts))  # the most frequent first
        chosen = order[counts[order] > 1][:room]
        slot = np.full(len(combos), -1, dtype=np.int64)
        slot[chosen] = n_sizes + np.arange(len(chosen), dtype=np.int64)
        bit_shape[slot[chosen]] = size_index[first[chosen]]
        bit_combo[slot[chosen]] = True
        bit_lower[slot[chosen]] = lower[first[chosen]]
        mine = slot[inverse]
        index = np.where(mine >= 0, mine, size_index)
        used += len(chosen)
    bit = np.left_shift(np.int64(1), index.astype(np.int64))
    fit_masks = np.zeros(n_sizes + 1, dtype=np.int64)
    for b in range(used):
        fit_masks[bit_shape[b] + 1:] |= np.int64(1) << b
    return bit, bit_shape, bit_combo, bit_lower, fit_masks


def run_general_compiled(work: Workload, model: GpuNodes | FlatNodes, policy: str,
                         placement: Placement | None, runtime_factor: RuntimeFactor | None,
                         factor_kernel: FactorKernel | None,
                         min_factor: float | Sequence[float] | None):
    """``run_gpu``'s general path on the compiled twin, or None when it does not apply (see
    the module docstring). ``factor_kernel``'s keys are in queue order."""
    from swftools.replay.engine_gpu import compiled_fits, never_fits_again
    from swftools.replay.gpurun import GpuRun

    n = len(work)
    if placement is None:
        placement = BestFit() if model.allocation == "best-fit" else Placement()
    names = {cls: name for name, cls in POLICY_CLASSES.items()}
    name = names.get(type(placement))
    if name is None or not n:
        return None
    g, n_nodes = model.gpus_per_node, model.max_nodes
    machine = placement.machine or PlacementInputs().resolved(n_nodes, g)
    has_factor = runtime_factor is not None
    grids = None if not has_factor or factor_kernel is None else factor_kernel.score_grids
    if has_factor and (factor_kernel is None or len(factor_kernel.keys) != n
                       or not (machine.factor_by_key or grids is not None)):
        return None
    distinct = sorted_distinct(work.size)
    if not compiled_fits(work, model, distinct):
        return None
    bounds = _bound_arrays(work, min_factor, has_factor)
    if bounds is None:
        return None
    lower, tree_est = bounds
    from swftools.replay.placement.tables import PAL_HEADER, pal_tables, placement_tables

    tables = placement_tables(name, machine, n_nodes, g, placement.gains, n)
    if tables is None:
        return None
    aux, score, side = tables
    paux, pval = np.zeros(PAL_HEADER, dtype=np.int64), np.zeros(1)
    if name in ("pm-first", "pal"):
        pal = pal_tables(name, machine, n_nodes, g, n)
        if pal is None:
            return None
        paux, pval, side = pal
    waiting = {}
    if name == "priority-wc":
        from swftools.replay.placement.tables import waiting_tables

        arrays = waiting_tables(machine, n_nodes, placement.gains, n)
        if arrays is None:
            return None
        waiting = dict(zip(("gain_rank", "node_order"), arrays))

    from swftools import extensions

    engine = extensions.load("swftools.replay._engine_general", "the general replay engine")
    if engine is None:
        return None
    from swftools.replay.placement._choose import POLICY_IDS
    from swftools.replay.placement.mtrand import mt_state

    def as64(a) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=np.int64)

    size = as64(work.size)
    size_index = np.searchsorted(distinct, size).astype(np.int64)
    first = np.full(len(distinct), n, dtype=np.int64)
    np.minimum.at(first, size_index, np.arange(n, dtype=np.int64))
    keys = (as64(factor_kernel.keys) if has_factor else np.zeros(n, dtype=np.int64))
    if grids is not None:  # the factor's lowest score from its key's grid
        grids = np.asarray(grids, dtype=np.float64)
        if (grids.ndim != 3 or grids.shape[1:] != (n_nodes, g) or keys.min() < 0
                or keys.max() >= grids.shape[0]):
            return None
        score = grids.reshape(-1, g)
    # a job's choice group (``Placement.choice_group``): its priority side or application
    # class, its factor key; a placement that watches the queue (``priority-wc``) has none: its
    # choice follows the queue
    bit, bit_shape, bit_combo, bit_lower, fit_masks = _queue_bits(
        size_index, len(distinct), side, keys, lower,
        grouped=not getattr(placement, "watches_queue", False))
    nodes, per_node = as64(work.nodes), as64(work.gpus_per_node)
    changes = model.capacity_changes()
    submit = as64(work.submit)
    mt = mt_state(placement.seed) if name == "random" else np.zeros(625, dtype=np.uint32)
    out = engine.run_general(
        submit, as64(work.runtime), size, as64(work.estimate), tree_est, nodes, per_node,
        bit, bit_shape, bit_combo.view(np.uint8), bit_lower, size_index, as64(distinct),
        fit_masks, nodes[first], per_node[first], g, n_nodes, policy == "easy",
        as64([t for t, _ in changes]), as64([c for _, c in changes]),
        model.nodes_at(int(submit[0])), POLICY_IDS[name], aux,
        np.ascontiguousarray(score, dtype=np.float64).reshape(-1, g),
        factor_kernel.callback() if has_factor else None, keys, mt, paux, pval, **waiting)
    (status, start, node_off, node_list, gpu_mask, runtime, estimate, dropped_j, dropped_reach,
     dropped_at, bad_j, bad_f) = out
    if status == engine.STATUS_BAD_FACTOR:
        raise UsageError(f"run-time factor of job {int(work.job_id[bad_j])} must be positive "
                         f"and finite, not {float(bad_f)!r}")
    if status == engine.STATUS_OVERFLOW:
        return None
    for j in dropped_j.tolist():  # never started: no nodes
        node_list[node_off[j]:node_off[j + 1]] = -1
    dropped = [(j, never_fits_again(r, t)) for j, r, t in
               zip(dropped_j.tolist(), dropped_reach.tolist(), dropped_at.tolist())]
    return GpuRun(start, None, None, dropped, runtime, estimate, node_off=node_off,
                  node_list=node_list, gpu_mask=gpu_mask)
