"""Placement by GPU count (``shape="gpus"``, ``engine_count``): any ``count`` free GPUs of the
managed nodes, partial nodes allowed, as PAL places jobs.

``pm-first`` and ``pal`` apply their published rule to the count (``pal.pm_first_gpus``,
``pal.pal_gpus`` with cross-node cells, where ``--locality-penalty`` acts). Every other policy
keeps its own rule for the shapes it knows, on the fewest nodes: a job whose count fits one node
that has that many free GPUs gets the policy's one-node choice; a multiple of the node width
with enough whole free nodes gets its whole-node choice; otherwise the job spreads over the
fewest nodes (most free GPUs first, lower node on ties; their lowest-numbered free GPUs).
"""

from __future__ import annotations

from swftools.replay.model import GpuState, bits
from swftools.replay.placement.base import Placement, node_candidates
from swftools.replay.placement.pal import Pal, PmFirst, pal_gpus, pm_first_gpus

Cells = list[tuple[int, int]]  # (node, GPU bit set on it), ascending node


def free_count(state: GpuState) -> int:
    """Free GPUs on the managed nodes."""
    return sum(f * state.exact[f].bit_count() for f in range(1, state.g + 1))


def _grouped(pairs: list[tuple[int, int]]) -> Cells:
    out: dict[int, int] = {}
    for k, i in pairs:
        out[k] = out.get(k, 0) | 1 << i
    return sorted(out.items())


def spread(state: GpuState, count: int) -> Cells:
    """``count`` free GPUs over the fewest managed nodes: most free GPUs first, lower node on
    ties, lowest-numbered GPUs of each."""
    nodes = sorted(bits(state.managed), key=lambda k: (-state.free[k], k))
    out = []
    for k in nodes:
        if not count:
            break
        mask, take = state.gpu_free[k], min(count, state.free[k])
        chosen = 0
        while take:
            low = mask & -mask
            chosen |= low
            mask ^= low
            take -= 1
        if chosen:
            out.append((k, chosen))
            count -= chosen.bit_count()
    if count:
        raise AssertionError("spread() called for a job that does not fit")
    return sorted(out)


def choose_by_count(placement: Placement, state: GpuState, j: int, count: int) -> Cells:
    """Where job ``j`` of ``count`` GPUs goes now (it fits: ``count <= free_count(state)``);
    see the module docstring."""
    g = state.g
    if isinstance(placement, PmFirst):
        c = placement.app_class(j)
        value = placement.values[c]
        if isinstance(placement, Pal):
            chosen = pal_gpus(state.gpu_free, value, count, state.managed, g, placement.cells[c])
        else:
            chosen = pm_first_gpus(state.gpu_free, value, count, state.managed, g)
        if chosen is None:
            raise AssertionError("choose_by_count() called for a job that does not fit")
        return _grouped(chosen)
    if count <= g and node_candidates(state, 1, count):
        node_set, gpus = placement.choose(state, j, 1, count)
        return [(node_set.bit_length() - 1, gpus)]
    if count % g == 0 and state.exact[g].bit_count() >= count // g:
        node_set, gpus = placement.choose(state, j, count // g, g)
        return [(k, gpus) for k in bits(node_set)]
    return spread(state, count)
