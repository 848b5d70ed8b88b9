"""PAL's placements as published: ``pm-first`` and ``pal`` (see ``swftools.replay.placement``).

PAL ("PAL: A Variability-Aware Policy for Scheduling ML Workloads in GPU Clusters", SC'24).
Each job has an application class; each GPU a score per application class (1.0 nominal, higher
faster; without per-class scores every class uses the machine's scores). A GPU's variability
for a class is ``1 / score``.

``pm-first``: GPUs ranked by the job's-class variability (lowest first; ties: lower node, then
lower GPU). A job takes the first free GPUs in that ranking that its shape allows: a one-node
job the node whose ``p``-th best free GPU ranks first, and those ``p`` GPUs; a multi-node job
(whole nodes) the whole free nodes whose worst GPUs rank first.

``pal``: class values per application class (``pal_classes.form_classes``), cells in PAL's
order (``pal_classes.cell_order``, ``penalty`` on cross-node cells), first fit wins:

* a within-node cell of value ``c``: nodes with at least ``p`` free GPUs of class value
  ``<= c``; the node with the most such GPUs (lower node on ties) and its ``p`` lowest-valued
  ones (lower GPU on ties);
* a cross-node cell of value ``c``: if at least ``p`` free GPUs have class value ``<= c``,
  PM-First among them;
* 1-GPU jobs and jobs wider than a node: PM-First on all free GPUs.

PM-First inside ``pal`` ranks by class value, then best-match locality (``|free GPUs of the node
with the same class value - p|``, smaller first: PAL's artifact's tie-break), then node, GPU.

With recorded node shapes (the default) a one-node job never spans nodes, so ``pal``'s
cross-node cells are skipped for it, and a multi-node job takes whole nodes (PM-First ranks
whole free nodes by their worst class value, then node). ``pm_first_gpus`` and ``pal_gpus`` are
the rules on a GPU count (any GPUs, partial nodes allowed), as PAL places jobs: the replay's
``shape="gpus"`` uses them (``counts.choose_by_count``, ``engine_count``). With recorded
shapes the engine's compiled general path runs both (``_pal.pyx``, its tables from
``class_grids``, ``_rank`` and ``cell_order``: ``tables.pal_tables``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from swftools.replay.model import GpuState
from swftools.replay.placement.base import Placement, RuntimeFactor, node_candidates
from swftools.replay.placement.pal_classes import cell_order, form_classes

DEFAULT_PENALTY = 1.7


def _best_match(free: Sequence[int], value: Sequence[Sequence[float]], count: int,
                cells: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """Best-match locality of each (node, GPU) of ``cells``: |GPUs of ``cells`` on the node
    with the same class value - count|."""
    same: dict[tuple[int, float], int] = {}
    for k, i in cells:
        key = (k, value[k][i])
        same[key] = same.get(key, 0) + 1
    return {(k, i): abs(same[(k, value[k][i])] - count) for k, i in cells}


def pm_first_gpus(free: Sequence[int], value: Sequence[Sequence[float]], count: int,
                  nodes: int, g: int, locality: bool = False) -> list[tuple[int, int]] | None:
    """PM-First on a GPU-count shape: the ``count`` first free GPUs of ``nodes`` (bit set) ranked
    by (value, best-match locality if ``locality``, node, GPU); None when too few are free."""
    cells = [(k, i) for k in range(len(free)) if nodes >> k & 1
             for i in range(g) if free[k] >> i & 1]
    if len(cells) < count:
        return None
    match = _best_match(free, value, count, cells) if locality else None
    cells.sort(key=lambda c: (value[c[0]][c[1]], match[c] if match else 0, c[0], c[1]))
    return sorted(cells[:count])


def pal_gpus(free: Sequence[int], value: Sequence[Sequence[float]], count: int, nodes: int,
             g: int, cells: list[tuple[float, bool]],
             spanning: bool = True) -> list[tuple[int, int]] | None:
    """PAL's choice of ``count`` GPUs among the free GPUs of ``nodes`` (bit set): see the module
    docstring. ``spanning=False`` (a recorded one-node shape) skips cross-node cells."""
    if count == 1 or count > g:
        if count > g and not spanning:
            return None
        return pm_first_gpus(free, value, count, nodes, g, locality=True)
    live = [k for k in range(len(free)) if nodes >> k & 1]
    for c, within in cells:
        if within:
            best = None
            for k in live:
                ok = [i for i in range(g) if free[k] >> i & 1 and value[k][i] <= c]
                if len(ok) >= count and (best is None or len(ok) > len(best[1])):
                    best = (k, ok)
            if best is not None:
                k, ok = best
                ok.sort(key=lambda i: (value[k][i], i))
                return sorted((k, i) for i in ok[:count])
        elif spanning:
            masks = [0] * len(free)
            for k in live:
                for i in range(g):
                    if free[k] >> i & 1 and value[k][i] <= c:
                        masks[k] |= 1 << i
            chosen = pm_first_gpus(masks, value, count, nodes, g, locality=True)
            if chosen is not None:
                return chosen
    return None


def _as_grid(rows: Sequence[Sequence[float]]) -> list[list[float]]:
    return [[float(v) for v in row] for row in rows]


class PmFirst(Placement):
    """``pm-first`` (see the module docstring)."""

    name = "pm-first"

    def choice_group(self) -> Callable[[int], object] | None:
        if type(self) not in (PmFirst, Pal):
            return None
        return self._factor_group(self.job_class if len(self.values) > 1 and self.job_class
                                  else None)

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        m = self.machine
        self.values = self.class_grids()
        self.job_class = list(m.job_class) if m.job_class is not None else None
        if len(self.values) > 1 and self.job_class is None:
            self.job_class = []
        self.rank = [self._rank(v) for v in self.values]

    def class_grids(self) -> list[list[list[float]]]:
        """Per application class the value grid GPUs are ranked by (``class_values`` of the
        class's scores, or of the machine's scores without per-class scores)."""
        m = self.machine
        grids = m.class_score if m.class_score else [m.score]
        return [self.class_values(np.array(grid, dtype=np.float64)) for grid in grids]

    def class_values(self, score: np.ndarray) -> list[list[float]]:
        """Per node and GPU the value ranked by (lower first): variability ``1 / score``."""
        return _as_grid(1.0 / score)

    def _rank(self, value: list[list[float]]) -> list[list[int]]:
        """Per node, its GPUs from best to worst (value, then GPU)."""
        return [sorted(range(len(row)), key=lambda i: (row[i], i)) for row in value]

    def app_class(self, j: int) -> int:
        jc = self.job_class
        return jc[j] if jc and len(self.values) > 1 else 0

    def whole_nodes(self, state: GpuState, value: list[list[float]], nodes: int) -> int:
        """The ``nodes`` whole free nodes whose worst GPUs rank first (then lower node)."""
        whole = state.exact[state.g]
        ks = []
        w = whole
        while w:
            low = w & -w
            w ^= low
            ks.append(low.bit_length() - 1)
        ks.sort(key=lambda k: (max(value[k]), k))
        return sum(1 << k for k in ks[:nodes])

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        c = self.app_class(j)
        value = self.values[c]
        if nodes > 1:
            return self.whole_nodes(state, value, nodes), state.full_gpus
        return self.one_node(state, c, value, per_node)

    def one_node(self, state: GpuState, c: int, value: list[list[float]],
                 per_node: int) -> tuple[int, int]:
        cands = node_candidates(state, 1, per_node)
        rank = self.rank[c]
        best = None
        while cands:
            low = cands & -cands
            cands ^= low
            k = low.bit_length() - 1
            free = state.gpu_free[k]
            picked = [i for i in rank[k] if free >> i & 1][:per_node]
            key = (value[k][picked[-1]], k)
            if best is None or key < best[0]:
                best = (key, k, picked)
        _, k, picked = best
        return 1 << k, sum(1 << i for i in picked)


class Pal(PmFirst):
    """``pal`` (see the module docstring); ``penalty`` and ``artifact_k2`` from the machine."""

    name = "pal"

    def class_values(self, score: np.ndarray) -> list[list[float]]:
        m = self.machine
        return _as_grid(form_classes(1.0 / score, artifact_k2=m.pal_k2))

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        penalty = self.machine.pal_penalty
        self.cells = [cell_order(np.array(v), penalty) for v in self.values]

    def one_node(self, state: GpuState, c: int, value: list[list[float]],
                 per_node: int) -> tuple[int, int]:
        cands = node_candidates(state, 1, per_node)
        chosen = pal_gpus(state.gpu_free, value, per_node, cands, state.g, self.cells[c],
                          spanning=False)
        if chosen is None:
            raise AssertionError("choose() called for a job that does not fit")
        if per_node == 1:  # PM-First may use any node with a free GPU: one node here
            k, i = chosen[0]
            return 1 << k, 1 << i
        k = chosen[0][0]
        return 1 << k, sum(1 << i for _, i in chosen)
