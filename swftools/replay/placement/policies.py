"""Placements that rank nodes and GPUs: ``random``, ``priority``, ``priority-wc``,
``variability-first``, ``even`` (see ``swftools.replay.placement``)."""

from __future__ import annotations

import random
from typing import Callable

import numpy as np

from swftools.replay.model import GpuState, bits, lowest_bits
from swftools.replay.placement.base import (Placement, RuntimeFactor, node_candidates,
                                            pick_gpus, take_tiers)


class Random(Placement):
    name = "random"

    def choice_group(self) -> Callable[[int], object] | None:
        if type(self) is not Random:
            return None
        return self._factor_group(None)  # one draw per shape and state (see ``choose``)

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        self.rng = random.Random(self.seed)
        self._bits: dict[int, list[int]] = {}  # bit set -> its indices (sets repeat a lot)
        self._gen = -1
        self._drawn: dict[tuple[int, int], tuple[int, int]] = {}

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        gen = getattr(state, "gen", None)
        if gen is None or state is not self.state:
            return self.draw(state, nodes, per_node)
        if gen != self._gen:
            self._gen = gen
            self._drawn.clear()
        hit = self._drawn.get((nodes, per_node))
        if hit is None:
            hit = self._drawn[(nodes, per_node)] = self.draw(state, nodes, per_node)
        return hit

    def draw(self, state: GpuState, nodes: int, per_node: int) -> tuple[int, int]:
        """A fresh uniformly random placement of the shape on ``state``."""
        memo = self._bits
        exact = state.exact
        if nodes > 1:
            mask = exact[state.g]
        else:
            mask = 0
            for f in range(per_node, state.g + 1):
                mask |= exact[f]
        cands = memo.get(mask)
        if cands is None:
            if len(memo) > 4096:
                memo.clear()
            cands = bits(mask)
            if not mask >> 64:  # wide pools: sets rarely repeat, lists are long
                memo[mask] = cands
        rng = self.rng
        if nodes > 1:
            return sum(1 << k for k in rng.sample(cands, nodes)), state.full_gpus
        k = rng.choice(cands)
        free = state.gpu_free[k]
        held = memo.get(free)
        if held is None:
            held = memo[free] = bits(free)
        if per_node == 1:  # sample(held, 1) draws exactly as choice(held): one _randbelow(len)
            return 1 << k, 1 << rng.choice(held)
        chosen = 0
        for i in rng.sample(held, per_node):
            chosen |= 1 << i
        return 1 << k, chosen


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
    """``priority``: the seed's strict median split (jobs above the median gain on the fastest
    GPUs, the others on the slowest, even while faster ones idle)."""

    name = "priority"

    def choice_group(self) -> Callable[[int], object] | None:
        if type(self) is not Priority:
            return None
        return self._factor_group(self.high)

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


class PriorityWc(Priority):
    """``priority-wc``: work-conserving priority (see ``swftools.replay.placement``).

    Needs the waiting queue: the engine (and any caller of ``choose``) keeps ``waiting``, the
    queue indices of the jobs submitted and not started, through ``queue_add`` and
    ``queue_remove`` (or ``set_waiting``), and gives each job's shape through ``shapes``
    ((nodes per job, GPUs per node per job), queue order) before the replay."""

    name = "priority-wc"
    watches_queue = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.waiting: set[int] = set()
        self.shapes: tuple[list[int], list[int]] | None = None
        self._version = 0
        self._memo: dict[tuple, tuple[int, int]] = {}
        self._memo_at = (-1, -1)

    def choice_group(self) -> Callable[[int], object] | None:
        return None  # the choice depends on the waiting queue, not only on the state

    def queue_add(self, jobs) -> None:
        self.waiting.update(jobs)
        self._version += 1

    def queue_remove(self, j: int) -> None:
        self.waiting.discard(j)
        self._version += 1

    def set_waiting(self, jobs) -> None:
        self.waiting = set(jobs)
        self._version += 1

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        self.order = [k for tier in self.fast[0] for k in bits(tier)]  # fastest node first
        self._memo.clear()
        self._memo_at = (-1, -1)

    def gain(self, j: int) -> float:
        return 1.0 if self.gains is None or not len(self.gains) else float(self.gains[j])

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        gen = getattr(state, "gen", None)
        if gen is None or state is not self.state:
            return self.scan(state, j, nodes, per_node)
        if self._memo_at != (gen, self._version):
            self._memo_at = (gen, self._version)
            self._memo.clear()
        key = (self.gain(j), nodes, per_node)  # j enters only through its gain
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self.scan(state, j, nodes, per_node)
        return hit

    def claimed(self, state: GpuState, j: int) -> list[int]:
        """Free GPUs per node left once every waiting job of higher gain than ``j`` that fits
        took, highest gain first (then queue order), the fastest nodes that fit it."""
        free = [state.free[k] if state.managed >> k & 1 else 0 for k in range(state.n_nodes)]
        mine = self.gain(j)
        higher = sorted((w for w in self.waiting if w != j and self.gain(w) > mine),
                        key=lambda w: (-self.gain(w), w))
        if higher and self.shapes is None:
            raise AssertionError("priority-wc needs the job shapes (shapes) of the queue")
        g = state.g
        for w in higher:
            if not any(free):
                break
            n_w, p_w = self.shapes[0][w], self.shapes[1][w]
            need = g if n_w > 1 else p_w
            fits = [k for k in self.order if free[k] >= need][:n_w]
            if len(fits) == n_w:
                for k in fits:
                    free[k] -= need
        return free

    def scan(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        """The choice from the state and the waiting queue (``choose`` caches it)."""
        cands = node_candidates(state, nodes, per_node)
        left = self.claimed(state, j)
        need = state.g if nodes > 1 else per_node
        room = 0
        for k in bits(cands):
            if left[k] >= need:
                room |= 1 << k
        if room.bit_count() >= nodes:  # unclaimed room: the fastest of it
            tiers, order = self.fast
            chosen = take_tiers(room, tiers, nodes)
        else:  # everything it fits on is wanted by higher gains: it still starts, on the slowest
            tiers, order = self.slow
            chosen = take_tiers(cands, tiers, nodes)
        if nodes > 1:
            return chosen, state.full_gpus
        k = chosen.bit_length() - 1
        return chosen, pick_gpus(state.gpu_free[k], order[k], per_node)


class VariabilityFirst(Tiered):
    state_only = True  # the choice depends on the state and the job's shape only
    name = "variability-first"

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        m = self.machine
        self.ranked = (m.group_masks(lambda k: max(m.cls[k])), m.gpu_order(True))

    def tiers(self, j: int) -> tuple[list[int], list[list[int]] | None]:
        return self.ranked


class Even(Placement):
    state_only = True  # the choice depends on the state and the job's shape only
    name = "even"

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        super().start(state, runtime_factor)
        # choices by shape while the state is unchanged (the choice does not depend on the job)
        self._gen = -1
        self._chosen: dict[tuple[int, int], tuple[int, int]] = {}

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        gen = getattr(state, "gen", None)
        if gen is None or state is not self.state:
            return self.scan(state, j, nodes, per_node)
        if gen != self._gen:
            self._gen = gen
            self._chosen.clear()
        hit = self._chosen.get((nodes, per_node))
        if hit is None:
            hit = self._chosen[(nodes, per_node)] = self.scan(state, j, nodes, per_node)
        return hit

    def scan(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        """The choice computed from the state (``choose`` caches it while the state is
        unchanged)."""
        if len(self.model_masks) == 1:
            return Placement.choose(self, state, j, nodes, per_node)
        cands = node_candidates(state, nodes, per_node)
        exact = state.exact
        g = state.g
        if nodes == 1:
            best, best_share = 0, -1.0
            for mask in self.model_masks:
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
        left = [cands & mask for mask in self.model_masks]
        sizes = [max(1, (mask & state.managed).bit_count()) for mask in self.model_masks]
        for _ in range(nodes):
            i = max(range(len(left)), key=lambda i: (left[i].bit_count() / sizes[i], -i))
            low = left[i] & -left[i]
            chosen |= low
            left[i] ^= low
        return chosen, state.full_gpus
