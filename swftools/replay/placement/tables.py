"""The arrays the compiled placements read (``placement/_choose.pyx``), built from a placement's
``Machine`` the way each Python policy's ``start`` builds its masks and orders."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from swftools.replay.placement.base import Machine
from swftools.replay.result import sorted_distinct

WORD = 32  # nodes per word (engine_gpu_jit.WORD)
HEADER = 25  # _choose.pxd's HEADER: the sizes and block offsets at the start of ``aux``
MAX_WORDS = 1 << 23  # group and threshold word masks beyond this (64 MiB): the Python path
# the policies with a compiled ``choose`` (``_choose.POLICY_IDS``): every built-in one
COMPILED_POLICIES = ("packed", "best-fit", "random", "even", "priority", "variability-first",
                     "locality-first", "lxv", "pm-first", "pal", "priority-wc")
PAL_HEADER = 9  # _pal.pxd's P_HEADER: the sizes and block offsets at the start of ``paux``


def _ranks(keys: list) -> np.ndarray:
    """Each key's rank among the distinct keys sorted (``Machine.group_masks``' order)."""
    rank = {key: i for i, key in enumerate(sorted(set(keys)))}
    return np.fromiter((rank[key] for key in keys), dtype=np.int64, count=len(keys))


def _speed_tiers(m: Machine, n_nodes: int) -> np.ndarray:
    """Each node's tier of ``priority`` and ``priority-wc`` (0 fastest): by (GPU model speed,
    best performance class of the node), as ``Priority.start`` ranks them."""
    return _ranks([(-m.model_speed[m.model[k]], min(m.cls[k])) for k in range(n_nodes)])


def _group_words(grp: np.ndarray, n_groups: int, words: int) -> np.ndarray:
    """Word masks (``n_groups`` x ``words``, 32 nodes a word) of the nodes of each group."""
    out = np.zeros((n_groups, words), dtype=np.int64)
    k = np.arange(len(grp), dtype=np.int64)
    np.bitwise_or.at(out, (grp, k // WORD), np.left_shift(np.int64(1), k % WORD))
    return out


def _as_grid(rows: Sequence[Sequence], n: int, g: int, dtype) -> np.ndarray | None:
    if len(rows) != n or any(len(row) != g for row in rows):
        return None
    return np.array(rows, dtype=dtype).reshape(n, g)


def placement_tables(name: str, machine: Machine, n_nodes: int, g: int,
                     gains: Sequence[float] | None, n_jobs: int) -> tuple | None:
    """``_choose.pyx``'s tables for policy ``name`` on ``n_nodes`` x ``g`` GPUs: (``aux``,
    ``score``, each job's ``priority`` side), or None when the compiled placements cannot hold
    the machine (GPU model indices past 62, inputs not of the machine's size, too many node
    groups, nodes without GPUs, ``lxv`` on no node, a policy without a compiled twin)."""
    m = machine
    if name not in COMPILED_POLICIES:
        return None
    if m.n_nodes != n_nodes or m.g != g or g < 1:
        return None
    model_of = np.asarray(m.model, dtype=np.int64)
    score = _as_grid(m.score, n_nodes, g, np.float64)
    cls = _as_grid(m.cls, n_nodes, g, np.int64)
    if (len(model_of) != n_nodes or len(m.rack) != n_nodes or score is None or cls is None
            or (n_nodes and (model_of.min() < 0 or model_of.max() > 62))):
        return None
    words = (n_nodes + WORD - 1) // WORD
    _, rack_of = np.unique(np.asarray(m.rack, dtype=np.int64), return_inverse=True)
    rack_of = rack_of.astype(np.int64).reshape(-1)
    n_racks = int(rack_of.max()) + 1 if n_nodes else 1
    order = np.array(m.gpu_order(True), dtype=np.int64).reshape(n_nodes, g)
    high = np.zeros(n_jobs, dtype=np.bool_)
    grp = np.zeros(n_nodes, dtype=np.int64)
    n_groups = 1
    masks = False
    if name == "even":
        grp = _ranks(m.model)
        masks = True
    elif name in ("priority", "priority-wc"):
        grp = _speed_tiers(m, n_nodes)
        masks = True
        if name == "priority" and gains is not None and len(gains):
            if len(gains) != n_jobs:
                return None
            values = np.asarray(gains, dtype=float)
            high = values > float(np.median(values))
    elif name == "variability-first":
        grp = _ranks([max(row) for row in m.cls])
        masks = True
    elif name in ("locality-first", "lxv"):
        grp = rack_of
    if n_nodes:
        n_groups = int(grp.max()) + 1
    if masks and n_groups * words > MAX_WORDS:
        return None
    gw = _group_words(grp, n_groups, words) if masks else np.zeros((0, words), np.int64)

    # lxv: per class threshold (the distinct classes ascending) the qualifying GPUs and nodes
    classes = sorted_distinct(cls.ravel()) if name == "lxv" else np.zeros(1, dtype=np.int64)
    n_t = len(classes)
    if not n_t or n_t * words * (g + 2) > MAX_WORDS:  # lxv on no node: no threshold
        return None
    ok_gpu = np.zeros((n_t, n_nodes), dtype=np.int64)
    ok_node = np.ones((n_t, n_nodes), dtype=np.bool_)
    if name == "lxv":
        bit = np.left_shift(np.int64(1), np.arange(g, dtype=np.int64))
        for t, c in enumerate(classes.tolist()):
            ok = cls <= c
            ok_gpu[t] = (ok * bit).sum(axis=1)
            ok_node[t] = ok.all(axis=1)
    okw = np.zeros((n_t, words), dtype=np.int64)
    for t in range(n_t):
        k = np.flatnonzero(ok_node[t]).astype(np.int64)
        np.bitwise_or.at(okw[t], k // WORD, np.left_shift(np.int64(1), k % WORD))
    blocks = {  # _choose.pxd's O_* order
        "grp": grp, "rack": rack_of, "model": model_of, "order": order.reshape(-1),
        "gc": np.zeros(n_groups * (g + 1)), "gw": gw.reshape(-1), "curw": n_groups,
        "curm": n_groups, "left": n_groups, "take": n_racks, "mark": n_racks, "stamp": 1,
        "cand": max(n_nodes, 1), "okw": okw.reshape(-1), "oknode": ok_node.reshape(-1),
        "okgpu": ok_gpu.reshape(-1), "twr": n_t * n_racks, "tw": n_t,
        "byu": (n_t - 1) * (g + 1) * words, "byucnt": (n_t - 1) * (g + 1), "high": high}
    header = [n_nodes, n_groups, n_t, n_racks]
    parts = []
    at = HEADER
    for block in blocks.values():
        values = (np.zeros(block, dtype=np.int64) if isinstance(block, int)
                  else np.asarray(block).astype(np.int64).reshape(-1))
        header.append(at)
        parts.append(values)
        at += len(values)
    assert len(header) == HEADER
    aux = np.concatenate([np.array(header, dtype=np.int64)] + parts)
    return aux, score, high


def pal_tables(name: str, machine: Machine, n_nodes: int, g: int,
               n_jobs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``_pal.pyx``'s tables for ``pm-first`` or ``pal`` (see its docstring): (``paux``,
    ``pval``, each job's application class), from the Python policy's own value grids, GPU
    ranks and cells; None when a value is NaN (no order to follow) or the job classes are not
    one per job."""
    from swftools.replay.placement.pal import Pal, PmFirst
    from swftools.replay.placement.pal_classes import cell_order

    policy = Pal(machine) if name == "pal" else PmFirst(machine)
    grids = policy.class_grids()
    value = np.array(grids, dtype=np.float64).reshape(len(grids), n_nodes, g)
    if np.isnan(value).any():
        return None
    n_c = len(grids)
    job_class = np.zeros(n_jobs, dtype=np.int64)
    if n_c > 1 and machine.job_class:
        if len(machine.job_class) != n_jobs:
            return None
        job_class = np.asarray(machine.job_class, dtype=np.int64)
    rank = np.array([policy._rank(grid) for grid in grids], dtype=np.int64).reshape(-1)
    worst = np.array([sorted(range(n_nodes), key=lambda k: (max(grid[k]), k)) for grid in grids],
                     dtype=np.int64).reshape(n_c, n_nodes)
    pos = np.zeros_like(worst)
    for c in range(n_c):
        pos[c, worst[c]] = np.arange(n_nodes, dtype=np.int64)
    penalty = machine.pal_penalty
    cells = [[v for v, within in cell_order(value[c], penalty) if within] for c in range(n_c)]
    cell_start = np.cumsum([value.size] + [len(row) for row in cells]).astype(np.int64)
    blocks = [rank, worst.reshape(-1), pos.reshape(-1), cell_start, job_class]  # _pal.pxd's order
    header = [n_nodes, n_c, int(name == "pal"), n_jobs]
    at = PAL_HEADER
    for block in blocks:
        header.append(at)
        at += len(block)
    assert len(header) == PAL_HEADER
    paux = np.concatenate([np.array(header, dtype=np.int64)] + blocks)
    pval = np.concatenate([value.reshape(-1)] + [np.array(row, dtype=np.float64)
                                                  for row in cells])
    return paux, pval, job_class


def waiting_tables(machine: Machine, n_nodes: int, gains: Sequence[float] | None,
                   n_jobs: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``priority-wc``'s arrays beside its tables: each job's gain rank (0: the highest gain;
    ``PriorityWc.gain``, 1.0 for every job without gains) and the nodes fastest first
    (``PriorityWc.order``); None when a gain is NaN (Python's order of it is the reference's
    own) or the gains are not one per job."""
    rank = np.zeros(n_jobs, dtype=np.int64)
    if gains is not None and len(gains):
        values = np.asarray(gains, dtype=np.float64)
        if values.shape != (n_jobs,) or np.isnan(values).any():
            return None
        rank = np.unique(-values, return_inverse=True)[1].astype(np.int64).reshape(-1)
    order = np.argsort(_speed_tiers(machine, n_nodes), kind="stable").astype(np.int64)
    return rank, order
