"""Resource models: a flat pool of processors (SWF mode) and the site's GPU nodes.

GPU model (from the site settings): ``nodes x gpus_per_node`` GPUs; the managed node count
follows the site's capacity timeline (nodes ``0 .. nodes_at(t) - 1`` take new jobs; a node
leaving the pool keeps its running jobs until they end). Single-node jobs share nodes at GPU
granularity (first-fit: lowest-numbered node with enough free GPUs; best-fit: the node with the
fewest free GPUs that still fit, lowest number on ties); multi-node jobs take whole free nodes,
lowest numbers first. Within a node a job takes the lowest-numbered free GPUs.

Nodes and GPUs are bit sets (Python ints): bit ``k`` is node ``k`` (or GPU ``k`` of a node).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from swftools.errors import UsageError, count
from swftools.site import Site

ALLOCATIONS = ("first-fit", "best-fit")


@dataclass(frozen=True)
class FlatPool:
    """A pool of ``procs`` identical processors (the archive's traditional SWF use)."""

    procs: int

    def can_ever_fit(self, submit: np.ndarray, nodes: np.ndarray, per_node: np.ndarray,
                     size: np.ndarray) -> np.ndarray:
        """Which jobs fit the machine at all."""
        return size <= self.procs

    def describe_demand(self, nodes: int, per_node: int, size: int) -> str:
        return f"needs {size} processors, the machine has {self.procs}"

    def describe(self) -> str:
        return f"flat pool of {self.procs} processors"


@dataclass(frozen=True)
class GpuNodes:
    """The site's GPU nodes with its capacity timeline and an allocation rule."""

    site: Site
    allocation: str = "first-fit"

    def __post_init__(self) -> None:
        if self.allocation not in ALLOCATIONS:
            raise UsageError(f"unknown allocation {self.allocation!r} "
                             f"(choose from {', '.join(ALLOCATIONS)})")
        if not self.site.multi_node_whole_nodes:
            raise UsageError(f"site {self.site.name}: replay models multi-node jobs on whole "
                             "nodes only (multi_node_whole_nodes must be true)")

    @property
    def gpus_per_node(self) -> int:
        return self.site.gpus_per_node

    @property
    def max_nodes(self) -> int:
        return self.site.max_nodes

    def capacity_changes(self) -> list[tuple[int, int]]:
        """(instant, managed nodes) of the timeline; the first entry also covers earlier times."""
        return list(zip(self.site.capacity_since, self.site.capacity_nodes))

    def nodes_at(self, t: int) -> int:
        return self.site.nodes_at(t)

    def max_nodes_from(self, t: np.ndarray) -> np.ndarray:
        """The largest managed node count at ``t`` or later."""
        nodes = np.asarray(self.site.capacity_nodes, dtype=np.int64)
        suffix = np.maximum.accumulate(nodes[::-1])[::-1]
        since = np.asarray(self.site.capacity_since, dtype=np.int64)
        i = np.maximum(np.searchsorted(since, np.asarray(t), side="right") - 1, 0)
        return suffix[i]

    def can_ever_fit(self, submit: np.ndarray, nodes: np.ndarray, per_node: np.ndarray,
                     size: np.ndarray) -> np.ndarray:
        """Which jobs fit a node shape the site offers at their submission or later."""
        return (per_node <= self.gpus_per_node) & (nodes <= self.max_nodes_from(submit))

    def describe_demand(self, nodes: int, per_node: int, size: int) -> str:
        return (f"needs {count(nodes, 'node')} x {per_node} GPUs, the site has at most "
                f"{self.max_nodes} nodes x {self.gpus_per_node} GPUs")

    def describe(self) -> str:
        return (f"site {self.site.name}: up to {self.max_nodes} nodes x {self.gpus_per_node} "
                f"GPUs, {self.allocation}")


@dataclass(frozen=True)
class FlatNodes:
    """A flat pool seen as ``procs`` nodes of one GPU each: the GPU engine's general path runs
    flat-mode replays with a placement or run-time factors on it (a job of size ``s`` is ``s``
    "nodes" x 1; the engine gives the same schedule as ``engine_flat`` for the same choices)."""

    procs: int
    allocation: str = "first-fit"

    @property
    def gpus_per_node(self) -> int:
        return 1

    @property
    def max_nodes(self) -> int:
        return self.procs

    def capacity_changes(self) -> list[tuple[int, int]]:
        return [(0, self.procs)]

    def nodes_at(self, t: int) -> int:
        return self.procs

    def describe(self) -> str:
        return f"flat pool of {self.procs} processors"


def lowest_bits(mask: int, count: int) -> int:
    """The ``count`` lowest set bits of ``mask``."""
    chosen = 0
    for _ in range(count):
        low = mask & -mask
        chosen |= low
        mask ^= low
    return chosen


BIG_MASK_BITS = 256  # wider bit sets (flat pools as one-GPU nodes) go through numpy


def bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending."""
    if mask >> BIG_MASK_BITS:
        raw = np.frombuffer(mask.to_bytes((mask.bit_length() + 7) // 8, "little"), np.uint8)
        return np.flatnonzero(np.unpackbits(raw, bitorder="little")).tolist()
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def nodes_with(managed: int, free: list[int], at_least: int) -> int:
    """The nodes of ``managed`` with ``free[k] >= at_least``."""
    if managed >> BIG_MASK_BITS:
        width = managed.bit_length()
        raw = np.frombuffer(managed.to_bytes((width + 7) // 8, "little"), np.uint8)
        ok = np.unpackbits(raw, bitorder="little")[:width].astype(bool)
        ok &= np.asarray(free[:width]) >= at_least
        return int.from_bytes(np.packbits(ok, bitorder="little").tobytes(), "little")
    out = 0
    for k in range(managed.bit_length()):  # managed node sets are low, mostly contiguous
        if free[k] >= at_least and managed >> k & 1:
            out |= 1 << k
    return out


class GpuState:
    """Free GPUs per node during a replay, with O(gpus_per_node) fit tests and placement.

    ``exact[f]`` is the set of managed nodes with exactly ``f`` free GPUs.
    """

    def __init__(self, model: GpuNodes, t0: int) -> None:
        self.g = model.gpus_per_node
        self.best_fit = model.allocation == "best-fit"
        self.n_nodes = model.max_nodes
        self.full_gpus = (1 << self.g) - 1
        self.free = [self.g] * self.n_nodes
        self.gpu_free = [self.full_gpus] * self.n_nodes
        self.managed = 0
        self.exact = [0] * (self.g + 1)
        self.set_capacity(model.nodes_at(t0))

    def set_capacity(self, nodes: int) -> None:
        """Manage nodes ``0 .. nodes - 1`` from now on."""
        new = (1 << nodes) - 1
        for k in bits(self.managed & ~new):
            self.exact[self.free[k]] &= ~(1 << k)
        for k in bits(new & ~self.managed):
            self.exact[self.free[k]] |= 1 << k
        self.managed = new

    def fit_bound(self) -> int:
        """Largest job size (GPUs held) that fits now: jobs fit iff their size <= this bound."""
        whole = self.exact[self.g].bit_count()
        if whole:
            return whole * self.g
        for f in range(self.g - 1, 0, -1):
            if self.exact[f]:
                return f
        return 0

    def place(self, nodes: int, per_node: int) -> int:
        """The node set the allocator would choose for a job that fits (not committed)."""
        exact = self.exact
        if nodes > 1:
            return lowest_bits(exact[self.g], nodes)
        if self.best_fit:
            for f in range(per_node, self.g + 1):
                if exact[f]:
                    return exact[f] & -exact[f]
            raise AssertionError("place() called for a job that does not fit")
        candidates = 0
        for f in range(per_node, self.g + 1):
            candidates |= exact[f]
        return candidates & -candidates

    def take(self, node_set: int, per_node: int) -> int:
        """Allocate ``per_node`` GPUs on each node of ``node_set``; returns the GPU set used."""
        exact, free, gpu_free = self.exact, self.free, self.gpu_free
        gpus = 0
        # deliberate twin of take_set's loop: the fast path's per-start walk, kept call-free
        while node_set:
            low = node_set & -node_set
            node_set ^= low
            k = low.bit_length() - 1
            f = free[k]
            exact[f] ^= low
            exact[f - per_node] |= low
            free[k] = f - per_node
            gpus = lowest_bits(gpu_free[k], per_node)
            gpu_free[k] ^= gpus
        return gpus

    def take_set(self, node_set: int, per_node: int, gpus: int) -> None:
        """Allocate the GPUs ``gpus`` (``per_node`` of them, free) on each node of ``node_set``."""
        exact, free, gpu_free = self.exact, self.free, self.gpu_free
        if per_node == self.g and node_set >> BIG_MASK_BITS:  # wide whole-node job: in bulk
            exact[per_node] ^= node_set  # all its nodes were whole and managed (candidates)
            exact[0] |= node_set
            for k in bits(node_set):
                free[k] = 0
                gpu_free[k] = 0
            return
        while node_set:
            low = node_set & -node_set
            node_set ^= low
            k = low.bit_length() - 1
            f = free[k]
            exact[f] ^= low
            exact[f - per_node] |= low
            free[k] = f - per_node
            gpu_free[k] ^= gpus

    def give_back(self, node_set: int, gpus: int, per_node: int) -> None:
        """Release a job's GPUs."""
        exact, free, gpu_free, managed = self.exact, self.free, self.gpu_free, self.managed
        if per_node == self.g and node_set >> BIG_MASK_BITS:  # wide whole-node job: in bulk
            held = node_set & managed
            exact[0] ^= held
            exact[per_node] |= held
            for k in bits(node_set):
                free[k] = per_node
                gpu_free[k] = gpus
            return
        # deliberate inline bit walk (as in take, gpu_reservation): per job end; bits() allocates
        while node_set:
            low = node_set & -node_set
            node_set ^= low
            k = low.bit_length() - 1
            f = free[k]
            free[k] = f + per_node
            gpu_free[k] |= gpus
            if managed & low:
                exact[f] ^= low
                exact[f + per_node] |= low


class TrackedGpuState(GpuState):
    """``GpuState`` that records its changes, for placements that cache (the engine's general
    path uses it; the fast path keeps the plain ``GpuState``).

    ``gen`` grows at every change of the free GPUs or of the managed nodes, so anything computed
    from the state is valid while ``gen`` is unchanged; ``dirty`` accumulates the nodes whose free
    GPUs changed (a placement that keeps per-node structures reads and resets it).
    """

    def __init__(self, model: GpuNodes, t0: int) -> None:
        self.gen = 0
        self.dirty = 0
        super().__init__(model, t0)

    def set_capacity(self, nodes: int) -> None:
        GpuState.set_capacity(self, nodes)
        self.gen += 1

    def take_set(self, node_set: int, per_node: int, gpus: int) -> None:
        GpuState.take_set(self, node_set, per_node, gpus)
        self.gen += 1
        self.dirty |= node_set

    def give_back(self, node_set: int, gpus: int, per_node: int) -> None:
        GpuState.give_back(self, node_set, gpus, per_node)
        self.gen += 1
        self.dirty |= node_set


class Reservation:
    """EASY reservation of the blocked head job in the GPU model.

    ``projected`` holds the free GPUs per node at the shadow time (running jobs released at
    their estimated end, overdue ones now). A job still running at the shadow time may start
    only if the head job still fits the projected state once that job's GPUs are taken out.
    """

    def __init__(self, shadow: int, head_nodes: int, head_per_node: int, g: int,
                 projected: list[int], managed: int) -> None:
        self.shadow = shadow
        self.head_nodes = head_nodes
        self.head_per_node = head_per_node
        self.projected = projected
        if head_nodes > 1:
            self.whole = nodes_with(managed, projected, g)
            self.spare = self.whole.bit_count() - head_nodes
        else:
            self.fitting = nodes_with(managed, projected, head_per_node)
            self.spare = self.fitting.bit_count() - 1

    def allows(self, node_set: int, per_node: int) -> bool:
        """Whether holding ``per_node`` GPUs on ``node_set`` past the shadow time leaves the head
        room to start then."""
        if self.head_nodes > 1:
            return (node_set & self.whole).bit_count() <= self.spare
        left = self.fitting
        for k in bits(node_set & left):
            if self.projected[k] - per_node < self.head_per_node:
                left &= ~(1 << k)
        return left != 0

    def may_allow(self, state: GpuState, nodes: int, per_node: int) -> bool:
        """Whether *some* placement of this job shape that fits now would be ``allows``-ed (the
        general engine path filters with this, then checks the chosen placement exactly).
        Exact until the first ``commit``; after one it may also admit a shape that ``allows``
        then refuses (``commit`` does not lower a single-node head's ``spare``; the compiled
        twin's ``spare0`` keeps it too), never the reverse."""
        whole_now = state.exact[state.g]
        if self.head_nodes > 1:
            if nodes > 1:  # whole free nodes that leave the pool by the shadow cost no spare
                return nodes <= self.spare + (whole_now & ~self.whole).bit_count()
            if self.spare >= 1:
                return True
            cands = 0
            for f in range(per_node, state.g + 1):
                cands |= state.exact[f]
            return bool(cands & ~self.whole)
        fitting = self.fitting
        if not fitting:
            return False
        if nodes > 1:
            return bool(fitting & ~whole_now) or whole_now.bit_count() > nodes
        if self.spare >= 1:
            return True
        cands = 0
        for f in range(per_node, state.g + 1):
            cands |= state.exact[f]
        if cands & ~fitting:
            return True
        k = fitting.bit_length() - 1
        return bool(cands & fitting) and self.projected[k] - per_node >= self.head_per_node

    def commit(self, node_set: int, per_node: int) -> None:
        """Record that a job holds ``node_set`` beyond the shadow time."""
        if self.head_nodes > 1:
            self.spare -= (node_set & self.whole).bit_count()
            self.whole &= ~node_set
            return
        for k in bits(node_set):
            self.projected[k] -= per_node
            if self.projected[k] < self.head_per_node:
                self.fitting &= ~(1 << k)


def gpu_reservation(state: GpuState, model: GpuNodes, now: int, head_nodes: int,
                    head_per_node: int, running: list[int], shift: int,
                    node_sets: list[int], per_nodes: list[int]) -> Reservation | None:
    """Earliest instant the head fits when running jobs end at their estimates.

    ``running`` holds ``estimated_end << shift | job`` of the running jobs, sorted; an estimated
    end before ``now`` counts as ``now``. The capacity timeline applies at each instant considered.
    None when the head can never fit again (the managed node count dropped below its need).
    """
    g = state.g
    projected = list(state.free)
    changes = [(t, n) for t, n in model.capacity_changes() if t > now]
    managed = state.managed
    mask = (1 << shift) - 1
    # A node "counts" when the head could use it: whole (multi-node head) or with enough free GPUs.
    threshold = g if head_nodes > 1 else head_per_node
    wanted = head_nodes

    def count(managed: int) -> int:
        return nodes_with(managed, projected, threshold).bit_count()

    # at ``now`` the projection is the state itself: count from its nodes by free GPUs
    counted = sum(state.exact[f].bit_count() for f in range(threshold, g + 1))
    i, c = 0, 0
    n_running = len(running)
    t = now
    while True:
        while i < n_running:
            key = running[i]
            if key >> shift > t:
                break
            j = key & mask
            per_node = per_nodes[j]
            node_set = node_sets[j]
            if per_node == g and node_set >> BIG_MASK_BITS:  # wide whole-node job: in bulk
                counted += (node_set & managed).bit_count()  # each of its nodes goes 0 -> g
                for k in bits(node_set):
                    projected[k] = g
                i += 1
                continue
            # deliberate inline bit walk (as in GpuState.give_back): per running job, per projection
            while node_set:
                low = node_set & -node_set
                node_set ^= low
                k = low.bit_length() - 1
                before = projected[k]
                projected[k] = before + per_node
                if before < threshold <= before + per_node and managed & low:
                    counted += 1
            i += 1
        if c < len(changes) and changes[c][0] <= t:
            while c < len(changes) and changes[c][0] <= t:
                managed = (1 << changes[c][1]) - 1
                c += 1
            counted = count(managed)
        if counted >= wanted:
            return Reservation(t, head_nodes, head_per_node, g, projected, managed)
        t_next = running[i] >> shift if i < n_running else None
        if c < len(changes) and (t_next is None or changes[c][0] < t_next):
            t_next = changes[c][0]
        if t_next is None:
            return None
        t = t_next
