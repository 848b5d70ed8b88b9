"""Placement plug-ins of the replay engine: which free nodes and GPUs a job that fits now gets.

The engine (``engine_gpu.run_gpu``) decides *when* a job starts (FCFS / EASY on the node model
of ``model.GpuState``); a placement decides *where*, among the nodes that can host the job now:

* single-node jobs may go on any managed node with at least ``per_node`` free GPUs, and take
  ``per_node`` of its free GPUs;
* multi-node jobs take ``nodes`` whole free managed nodes (all their GPUs).

A placement is an object with ``choose(state, j, nodes, per_node) -> (node_set, gpus)``: the
node set (bit ``k`` = node ``k``) and the GPU set used on each of those nodes (bit ``i`` = GPU
``i``; whole nodes for multi-node jobs); it must not change ``state``. ``start(state,
runtime_factor)`` is called once before the replay.

Inputs come as plain arrays (``PlacementInputs``; the replay package does not know the what-if
model files): per node a rack id and a GPU model index, per node and GPU a speed score (1.0
nominal) and a performance class (0 fastest), per GPU model a relative speed, per job a gain.
Absent inputs mean a homogeneous machine: one rack, one model, scores 1.0, class 0, gains 1.0.
In flat mode (a pool of processors) a "node" is one processor with one "GPU".

Policies (``PLACEMENTS``):

``packed``
    today's first-fit: lowest-numbered node with enough free GPUs, lowest-numbered free GPUs;
    multi-node jobs the lowest-numbered whole free nodes (``GpuState.place`` + ``take``).
``best-fit``
    today's best-fit: the node with the fewest free GPUs that still fit, lowest number on ties.
``random``
    a uniformly random node among those that fit (random whole nodes for multi-node jobs) and
    random free GPUs on it; ``random.Random(seed)``, so the same seed gives the same replay.
``even``
    spreads every GPU model evenly, whatever the job: the job goes to the GPU model with the
    largest share of free GPUs (free GPUs of the model / its GPUs; ties: lower model index) among
    the models that can host it, first-fit inside the model; multi-node jobs take their nodes one
    at a time the same way (share of whole free nodes).
``priority``
    fastest GPUs to the jobs that gain most. Nodes are ranked by (GPU model speed, best
    performance class of the node) from fastest to slowest. A job whose gain is *above the
    median gain of the replayed workload* (all jobs, fixed before the replay, so a job's side does
    not depend on the queue at the instant it starts) takes the fastest nodes that fit and the
    fastest free GPUs on them; the others take the slowest nodes and slowest GPUs, leaving the
    fast ones for the jobs that gain. With equal gains every job is on the slow side.
``variability-first``
    best performance class first: nodes ranked by the class of their slowest GPU (0 first),
    lowest number on ties; on a node the best-class (then highest-score) free GPUs.
``locality-first``
    fewest nodes, then fewest racks: single-node jobs best-fit (keeps whole nodes free for
    multi-node jobs); a multi-node job goes into the rack with the fewest whole free nodes that
    still holds it all, else takes racks by most whole free nodes first.
``lxv``
    the locality x variability trade-off: for each class threshold ``c`` (only GPUs of class
    ``<= c``) the fewest-racks placement (``locality-first`` on those GPUs: a single-node job on
    the node with the fewest such free GPUs that fit, then the fewest free GPUs, then the lowest
    number; its best-class GPUs) is one candidate, i.e. one cell of the L x V matrix; the
    engine's ``runtime_factor`` estimates each candidate's run time and the smallest wins (ties:
    fewer racks, then lower threshold). Without a ``runtime_factor`` every factor is 1 and the
    fewest-racks, best-class candidate wins.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from swftools.errors import UsageError
from swftools.replay.model import GpuState, bits, lowest_bits

PLACEMENTS = ("packed", "best-fit", "random", "even", "priority", "variability-first",
              "locality-first", "lxv")

RuntimeFactor = Callable[[int, list[int], list[list[int]]], float]


@dataclass
class PlacementInputs:
    """What placements know about the machine and the jobs (any field may be None).

    ``rack``, ``gpu_model``: one entry per node; ``score``, ``gpu_class``: one row per node, one
    entry per GPU of the node; ``model_speed``: per GPU model index, higher is faster; ``gain``:
    one entry per job (``run_gpu``: queue order; ``replay()``: rows of the input table).
    """

    rack: Sequence[int] | None = None
    gpu_model: Sequence[int] | None = None
    score: Sequence[Sequence[float]] | None = None
    gpu_class: Sequence[Sequence[int]] | None = None
    model_speed: Sequence[float] | None = None
    gain: Sequence[float] | None = None

    def resolved(self, n_nodes: int, g: int) -> "Machine":
        """The inputs completed with the homogeneous defaults and checked against the machine."""
        def per_node(values, name, default):
            if values is None:
                return [default] * n_nodes
            values = [int(v) for v in values]
            if len(values) < n_nodes:
                raise UsageError(f"placement input {name}: {len(values)} entries for "
                                 f"{n_nodes} nodes")
            return values[:n_nodes]

        def per_gpu(values, name, default, kind):
            if values is None:
                return [[default] * g for _ in range(n_nodes)]
            rows = [[kind(v) for v in row] for row in values]
            if len(rows) < n_nodes or any(len(row) < g for row in rows[:n_nodes]):
                raise UsageError(f"placement input {name}: needs {n_nodes} nodes x {g} GPUs")
            return [row[:g] for row in rows[:n_nodes]]

        rack = per_node(self.rack, "rack", 0)
        model = per_node(self.gpu_model, "gpu_model", 0)
        score = per_gpu(self.score, "score", 1.0, float)
        cls = per_gpu(self.gpu_class, "gpu_class", 0, int)
        speed = [float(s) for s in self.model_speed] if self.model_speed is not None else []
        if len(speed) <= max(model, default=0):
            speed += [1.0] * (max(model, default=0) + 1 - len(speed))
        return Machine(n_nodes, g, rack, model, score, cls, speed)


@dataclass
class Machine:
    """Resolved placement inputs (homogeneous defaults filled in)."""

    n_nodes: int
    g: int
    rack: list[int]
    model: list[int]
    score: list[list[float]]
    cls: list[list[int]]
    model_speed: list[float]

    def group_masks(self, key: Callable[[int], object]) -> list[int]:
        """Node bit sets grouped by ``key(node)``, in ascending key order."""
        groups: dict[object, int] = {}
        for k in range(self.n_nodes):
            kk = key(k)
            groups[kk] = groups.get(kk, 0) | (1 << k)
        return [groups[kk] for kk in sorted(groups)]

    def gpu_order(self, fastest: bool) -> list[list[int]]:
        """Per node, its GPUs from best (class, then score) to worst, or the reverse."""
        out = []
        for k in range(self.n_nodes):
            order = sorted(range(self.g), key=lambda i: (self.cls[k][i], -self.score[k][i], i))
            out.append(order if fastest else order[::-1])
        return out


def node_candidates(state: GpuState, nodes: int, per_node: int) -> int:
    """Managed nodes that could host the job now (whole free nodes for multi-node jobs)."""
    exact = state.exact
    if nodes > 1:
        return exact[state.g]
    mask = 0
    for f in range(per_node, state.g + 1):
        mask |= exact[f]
    return mask


def pick_gpus(free: int, order: list[int], count: int) -> int:
    """The first ``count`` free GPUs in ``order``."""
    chosen = 0
    for i in order:
        if free >> i & 1:
            chosen |= 1 << i
            count -= 1
            if not count:
                break
    return chosen


def take_tiers(cands: int, tiers: list[int], count: int) -> int:
    """``count`` nodes of ``cands``, from the first tier on, lowest numbers first in a tier."""
    chosen = 0
    for tier in tiers:
        c = cands & tier
        while c and count:
            low = c & -c
            chosen |= low
            c ^= low
            count -= 1
        if not count:
            break
    return chosen


class Placement:
    """Base placement: ``packed`` (first-fit)."""

    name = "packed"

    def __init__(self, machine: Machine | None = None, gains: Sequence[float] | None = None,
                 seed: int = 0) -> None:
        self.machine = machine
        self.gains = gains
        self.seed = seed
        self.runtime_factor: RuntimeFactor | None = None
        # (j, node_set, gpus, factor) of the last factor a placement computed itself (lxv), so
        # the engine does not call ``runtime_factor`` again for the placement it chose
        self.memo: tuple[int, int, int, float] | None = None

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        """Called once before the replay with the engine's state and run-time factor."""
        self.state = state
        self.runtime_factor = runtime_factor
        if self.machine is None:
            self.machine = PlacementInputs().resolved(state.n_nodes, state.g)

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        exact = state.exact
        if nodes > 1:
            return lowest_bits(exact[state.g], nodes), state.full_gpus
        cands = 0
        for f in range(per_node, state.g + 1):
            cands |= exact[f]
        node = cands & -cands
        k = node.bit_length() - 1
        return node, lowest_bits(state.gpu_free[k], per_node)


class BestFit(Placement):
    name = "best-fit"

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        exact = state.exact
        if nodes > 1:
            return lowest_bits(exact[state.g], nodes), state.full_gpus
        for f in range(per_node, state.g + 1):
            if exact[f]:
                node = exact[f] & -exact[f]
                return node, lowest_bits(state.gpu_free[node.bit_length() - 1], per_node)
        raise AssertionError("choose() called for a job that does not fit")


class Random(Placement):
    name = "random"

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        self.rng = random.Random(self.seed)

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        cands = bits(node_candidates(state, nodes, per_node))
        if nodes > 1:
            return sum(1 << k for k in self.rng.sample(cands, nodes)), state.full_gpus
        k = self.rng.choice(cands)
        gpus = self.rng.sample(bits(state.gpu_free[k]), per_node)
        return 1 << k, sum(1 << i for i in gpus)


class Tiered(Placement):
    """Nodes taken from ranked tiers (lowest number within a tier), GPUs in a ranked order."""

    def tiers(self, j: int) -> tuple[list[int], list[list[int]] | None]:
        raise NotImplementedError

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        tiers, order = self.tiers(j)
        cands = node_candidates(state, nodes, per_node)
        chosen = take_tiers(cands, tiers, nodes)
        if nodes > 1:
            return chosen, state.full_gpus
        k = chosen.bit_length() - 1
        free = state.gpu_free[k]
        return chosen, lowest_bits(free, per_node) if order is None else pick_gpus(
            free, order[k], per_node)


class Priority(Tiered):
    name = "priority"

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        m = self.machine
        fast = m.group_masks(lambda k: (-m.model_speed[m.model[k]], min(m.cls[k])))
        self.fast = (fast, m.gpu_order(True))
        self.slow = (fast[::-1], m.gpu_order(False))
        gains = self.gains
        self.high = None
        if gains is not None and len(gains):
            median = float(np.median(np.asarray(gains, dtype=float)))
            self.high = [float(x) > median for x in gains]

    def tiers(self, j: int) -> tuple[list[int], list[list[int]] | None]:
        return self.fast if self.high is not None and self.high[j] else self.slow


class VariabilityFirst(Tiered):
    name = "variability-first"

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        m = self.machine
        self.ranked = (m.group_masks(lambda k: max(m.cls[k])), m.gpu_order(True))

    def tiers(self, j: int) -> tuple[list[int], list[list[int]] | None]:
        return self.ranked


class Even(Placement):
    name = "even"

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        m = self.machine
        self.models = m.group_masks(lambda k: m.model[k])

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        if len(self.models) == 1:
            return Placement.choose(self, state, j, nodes, per_node)
        cands = node_candidates(state, nodes, per_node)
        exact = state.exact
        g = state.g
        if nodes == 1:
            best, best_share = 0, -1.0
            for mask in self.models:
                c = cands & mask
                if not c:
                    continue
                # free GPUs of the model's managed nodes over their GPUs (candidates are managed)
                free_gpus = sum(f * (exact[f] & mask).bit_count() for f in range(1, g + 1))
                share = free_gpus / ((mask & state.managed).bit_count() * g)
                if share > best_share:
                    best, best_share = c & -c, share
            k = best.bit_length() - 1
            return best, lowest_bits(state.gpu_free[k], per_node)
        chosen = 0
        left = [cands & mask for mask in self.models]
        sizes = [max(1, (mask & state.managed).bit_count()) for mask in self.models]
        for _ in range(nodes):
            i = max(range(len(left)), key=lambda i: (left[i].bit_count() / sizes[i], -i))
            low = left[i] & -left[i]
            chosen |= low
            left[i] ^= low
        return chosen, state.full_gpus


def fewest_racks(whole: int, racks: list[int], nodes: int) -> int:
    """``nodes`` nodes of ``whole`` in as few racks as possible (see ``locality-first``)."""
    counts = [(whole & r).bit_count() for r in racks]
    fitting = [(c, i) for i, c in enumerate(counts) if c >= nodes]
    if fitting:
        return lowest_bits(whole & racks[min(fitting)[1]], nodes)
    chosen = 0
    for c, i in sorted(((-c, i) for i, c in enumerate(counts))):
        take = min(-c, nodes - chosen.bit_count())
        chosen |= lowest_bits(whole & racks[i], take)
        if chosen.bit_count() == nodes:
            break
    return chosen


class LocalityFirst(BestFit):
    name = "locality-first"

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        m = self.machine
        self.racks = m.group_masks(lambda k: m.rack[k])

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        if nodes > 1:
            return fewest_racks(state.exact[state.g], self.racks, nodes), state.full_gpus
        return BestFit.choose(self, state, j, nodes, per_node)


class Lxv(LocalityFirst):
    name = "lxv"

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        m = self.machine
        self.classes = sorted({c for row in m.cls for c in row})
        # per threshold: per node, the GPUs of class <= c; nodes all of whose GPUs are <= c
        self.gpu_ok = [[sum(1 << i for i in range(m.g) if m.cls[k][i] <= c)
                        for k in range(m.n_nodes)] for c in self.classes]
        self.node_ok = [sum(1 << k for k in range(m.n_nodes) if max(m.cls[k]) <= c)
                        for c in self.classes]
        self.order = m.gpu_order(True)

    def candidate(self, state: GpuState, t: int, nodes: int, per_node: int) -> tuple[int, int]:
        if nodes > 1:
            whole = state.exact[state.g] & self.node_ok[t]
            if whole.bit_count() < nodes:
                return 0, 0
            return fewest_racks(whole, self.racks, nodes), state.full_gpus
        ok = self.gpu_ok[t]
        gpu_free = state.gpu_free
        # best fit: fewest usable GPUs (class <= threshold), then fewest free, then lowest node
        best = None
        for f in range(per_node, state.g + 1):
            c = state.exact[f]
            while c:
                low = c & -c
                c ^= low
                k = low.bit_length() - 1
                usable = (gpu_free[k] & ok[k]).bit_count()
                if usable >= per_node and (best is None or (usable, f, k) < best):
                    best = (usable, f, k)
            if best is not None and best[0] == per_node:
                break  # nothing fits tighter on nodes with more free GPUs
        if best is None:
            return 0, 0
        k = best[2]
        return 1 << k, pick_gpus(gpu_free[k] & ok[k], self.order[k], per_node)

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        factor = self.runtime_factor
        rack = self.machine.rack
        best = None
        seen = set()
        for t in range(len(self.classes)):
            node_set, gpus = self.candidate(state, t, nodes, per_node)
            if not node_set or (node_set, gpus) in seen:
                continue
            seen.add((node_set, gpus))
            ks = bits(node_set)
            f = factor(j, ks, [bits(gpus)] * len(ks)) if factor is not None else 1.0
            key = (f, len({rack[k] for k in ks}), t)
            if best is None or key < best[0]:
                best = (key, node_set, gpus)
        if best is None:  # unreachable: the last threshold admits every GPU
            return BestFit.choose(self, state, j, nodes, per_node)
        if factor is not None:
            self.memo = (j, best[1], best[2], best[0][0])
        return best[1], best[2]


POLICY_CLASSES: dict[str, type[Placement]] = {
    "packed": Placement, "best-fit": BestFit, "random": Random, "even": Even,
    "priority": Priority, "variability-first": VariabilityFirst,
    "locality-first": LocalityFirst, "lxv": Lxv,
}


def make_placement(name: str, machine: Machine | None = None,
                   gains: Sequence[float] | None = None, seed: int = 0) -> Placement:
    """The placement called ``name`` (one of ``PLACEMENTS``)."""
    cls = POLICY_CLASSES.get(name)
    if cls is None:
        raise UsageError(f"unknown placement {name!r} (choose from {', '.join(PLACEMENTS)})")
    return cls(machine, gains, seed)
