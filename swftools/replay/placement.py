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
    On the engine's state one draw is made per job shape and state: jobs of the same shape asked
    about before the state changes (backfill candidates the reservation refuses) get the same
    draw, and the next start or end draws afresh. Every job that starts still gets a uniformly
    random placement among those that fit at its start; only refused candidates share draws,
    which lets the engine skip the rest of a refused shape as it does for the other policies.
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

Keyed run-time factors. With ``PlacementInputs.factor_by_key`` the factor callback promises that
``runtime_factor(j, None, None)`` (the key query) returns a hashable key of job ``j``, and that a
job's factor depends on the job only through that key and on the placement only through its
signature (``Placement.signature``: the GPU models held, the lowest score held, the nodes and
racks spanned, the GPUs per node; from these placement inputs). Placements then evaluate the
callback once per (key, signature) and cache it (``Placement.factor``, which the engine uses
too); ``lxv`` caches its candidates per shape and its choices per (key, shape) while the
engine's state is unchanged (``model.TrackedGpuState``; on any other state it scans, as the
reference tests do), and keeps per-threshold usable-GPU counts up to date instead of scanning
nodes. ``swftools.whatif`` answers the key query with the job's class. Without the flag every
candidate is evaluated through the callback, as before; the schedules are the same either way.
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
_MISSING = object()
CACHE_LIMIT = 1 << 17  # entries of a per-placement memo before it starts over


@dataclass
class PlacementInputs:
    """What placements know about the machine and the jobs (any field may be None).

    ``rack``, ``gpu_model``: one entry per node; ``score``, ``gpu_class``: one row per node, one
    entry per GPU of the node; ``model_speed``: per GPU model index, higher is faster; ``gain``:
    one entry per job (``run_gpu``: queue order; ``replay()``: rows of the input table).

    ``factor_by_key``: the run-time factor callback promises (see "Keyed run-time factors" in the
    module docstring) that ``runtime_factor(j, None, None)`` returns a hashable key of job ``j``
    and that the factor depends on the job only through that key and on the placement only
    through its signature (``Placement.signature``), so placements may cache factors by both.
    """

    rack: Sequence[int] | None = None
    gpu_model: Sequence[int] | None = None
    score: Sequence[Sequence[float]] | None = None
    gpu_class: Sequence[Sequence[int]] | None = None
    model_speed: Sequence[float] | None = None
    gain: Sequence[float] | None = None
    factor_by_key: bool = False

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
        return Machine(n_nodes, g, rack, model, score, cls, speed, bool(self.factor_by_key))


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
    factor_by_key: bool = False

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
        self.keyed = False

    def start(self, state: GpuState, runtime_factor: RuntimeFactor | None) -> None:
        """Called once before the replay with the engine's state and run-time factor."""
        self.state = state
        self.runtime_factor = runtime_factor
        if self.machine is None:
            self.machine = PlacementInputs().resolved(state.n_nodes, state.g)
        m = self.machine
        self.keyed = runtime_factor is not None and m.factor_by_key
        self._job_key: dict[int, object] = {}
        self._factors: dict[object, dict[int, float]] = {}  # job key -> signature id -> factor
        self._sids: dict[tuple, int] = {}  # signature -> its id (a small int hashes fast)
        self._sid1: dict[tuple[int, int], int] = {}  # single-node (node, gpus) -> signature id
        self._by_set: dict[tuple, float] = {}  # (job key, node, gpus) -> factor (one node)
        self._sig1: dict[tuple[int, int], tuple] = {}  # single-node (node, gpus) -> signature
        by_model = m.group_masks(lambda k: m.model[k])
        self._model_masks = [(1 << m.model[mask.bit_length() - 1], mask) for mask in by_model]
        self._rack_masks = m.group_masks(lambda k: m.rack[k])
        self._node_min = [min(row) if row else 1.0 for row in m.score]

    def choice_group(self) -> Callable[[int], object] | None:
        """A function giving each job a group such that two jobs of one shape and one group get
        the same choice and the same run-time factor on it from the same state, or None. The
        engine uses it to skip, until the next start, the jobs of a (shape, group) whose choice
        the EASY reservation refused (see ``engine_gpu``). Only the built-in placements declare
        groups (a subclass gets None unless it declares its own); none has groups with a factor
        callback that is not keyed."""
        if type(self) not in _STATE_ONLY:
            return None
        return self._factor_group(None)

    def _factor_group(self, choice: Sequence[object] | None) -> Callable[[int], object] | None:
        """Groups from the placement's own per-job choice groups (None: one) and the factor."""
        if self.runtime_factor is None:
            return _one_group if choice is None else choice.__getitem__
        if not self.keyed:
            return None
        if choice is None:
            return self.job_key
        job_key = self.job_key
        return lambda j: (choice[j], job_key(j))

    def job_key(self, j: int) -> object:
        """The factor key of job ``j`` (keyed factors: ``runtime_factor(j, None, None)``)."""
        keys = self._job_key
        if j in keys:
            return keys[j]
        key = keys[j] = self.runtime_factor(j, None, None)
        return key

    def signature(self, node_set: int, gpus: int) -> tuple:
        """What a keyed factor may depend on of a placement (``gpus`` on every node of
        ``node_set``): (bit set of the GPU models held, lowest score held, nodes, racks spanned,
        GPUs per node)."""
        if not node_set & (node_set - 1):  # one node
            sig = self._sig1.get((node_set, gpus))
            if sig is None:
                m = self.machine
                k = node_set.bit_length() - 1
                row = m.score[k]
                sig = (1 << m.model[k], min(row[i] for i in bits(gpus)), 1, 1, gpus.bit_count())
                if len(self._sig1) > CACHE_LIMIT:
                    self._sig1.clear()
                self._sig1[(node_set, gpus)] = sig
            return sig
        models = 0
        for b, mask in self._model_masks:
            if node_set & mask:
                models |= b
        racks = 0
        for mask in self._rack_masks:
            if node_set & mask:
                racks += 1
        ks = bits(node_set)
        m = self.machine
        if gpus == (1 << m.g) - 1:
            node_min = self._node_min
            low = min(node_min[k] for k in ks)
        else:
            held = bits(gpus)
            low = min(m.score[k][i] for k in ks for i in held)
        return (models, low, len(ks), racks, gpus.bit_count())

    def signature_id(self, node_set: int, gpus: int) -> int:
        """A small int per distinct ``signature`` (single-node placements memoized)."""
        one = not node_set & (node_set - 1)
        if one:
            sid = self._sid1.get((node_set, gpus))
            if sid is not None:
                return sid
        sig = self.signature(node_set, gpus)
        sid = self._sids.get(sig)
        if sid is None:
            sid = self._sids[sig] = len(self._sids)
        if one:
            if len(self._sid1) > CACHE_LIMIT:
                self._sid1.clear()
            self._sid1[(node_set, gpus)] = sid
        return sid

    def factor(self, j: int, node_set: int, gpus: int) -> float:
        """The run-time factor of job ``j`` on ``gpus`` of every node of ``node_set`` (1.0
        without a callback; cached by (job key, signature) for keyed factors)."""
        rf = self.runtime_factor
        if rf is None:
            return 1.0
        memo = self.memo
        if memo is not None and memo[0] == j and memo[1] == node_set and memo[2] == gpus:
            return memo[3]
        if self.keyed:
            jk = self._job_key.get(j, _MISSING)
            if jk is _MISSING:
                jk = self.job_key(j)
            direct = (jk, node_set, gpus)
            f = self._by_set.get(direct)
            if f is not None:
                return f
            by_sig = self._factors.get(jk)
            if by_sig is None:
                by_sig = self._factors[jk] = {}
            sid = self.signature_id(node_set, gpus)
            f = by_sig.get(sid)
            if f is None:
                ks = bits(node_set)
                f = by_sig[sid] = rf(j, ks, [bits(gpus)] * len(ks))
            if not node_set & (node_set - 1):  # single-node placements repeat a lot
                if len(self._by_set) > CACHE_LIMIT:
                    self._by_set.clear()
                self._by_set[direct] = f
            return f
        ks = bits(node_set)
        return rf(j, ks, [bits(gpus)] * len(ks))

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

    def choice_group(self) -> Callable[[int], object] | None:
        if type(self) is not Lxv:
            return None
        return self._factor_group(None)  # keyed factors: the choice follows the factor key

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
        # On the engine's state (``TrackedGpuState``) the candidates are kept up to date instead
        # of scanned: per threshold t below the last, ``usable[t][k]`` = free GPUs of class <= c
        # on node k, ``by_usable[t][u]`` the nodes with ``u`` of them and bit u of
        # ``nonempty[t]`` set when there is one (the last threshold admits every GPU: the
        # state's ``exact``); candidates per shape and choices per (job key, shape) are cached
        # while the state's ``gen`` is unchanged.
        self.tracked = state if hasattr(state, "gen") else None
        self._gen = -1
        self._cands: dict[tuple[int, int], list[tuple]] = {}
        self._choice: dict[tuple, tuple[int, int, float]] = {}
        self._picks: dict[tuple[int, int, int], int] = {}
        if self.tracked is not None:
            g = state.g
            partial = range(len(self.classes) - 1)
            self.usable = [[0] * m.n_nodes for _ in partial]
            self.by_usable = [[0] * (g + 1) for _ in partial]
            self.nonempty = [0 for _ in partial]
            for t in partial:
                ok, usable, by = self.gpu_ok[t], self.usable[t], self.by_usable[t]
                for k in range(m.n_nodes):
                    u = (state.gpu_free[k] & ok[k]).bit_count()
                    usable[k] = u
                    by[u] |= 1 << k
                    self.nonempty[t] |= 1 << u
            self._per_t = [(t, self.gpu_ok[t], self.usable[t], self.by_usable[t])
                           for t in partial]
            state.dirty = 0

    def refresh(self, state: GpuState) -> None:
        """Bring ``usable`` / ``by_usable`` up to date with the nodes changed since last time."""
        dirty = state.dirty
        if not dirty:
            return
        state.dirty = 0
        gpu_free = state.gpu_free
        nonempty = self.nonempty
        for k in bits(dirty) if dirty & (dirty - 1) else (dirty.bit_length() - 1,):
            free = gpu_free[k]
            low = 1 << k
            for t, ok, usable, by in self._per_t:
                u = (free & ok[k]).bit_count()
                old = usable[k]
                if u != old:
                    usable[k] = u
                    rest = by[old] ^ low
                    by[old] = rest
                    if not rest:
                        nonempty[t] ^= 1 << old
                    if not by[u]:
                        nonempty[t] |= 1 << u
                    by[u] |= low

    def candidates(self, state: GpuState, nodes: int, per_node: int) -> list[tuple]:
        """The distinct candidates (t, node set, GPU set, racks spanned, signature) of a shape,
        thresholds ascending, from the kept-up-to-date structures (same as ``candidate``)."""
        out: list[tuple] = []
        exact = state.exact
        g = state.g
        keyed = self.keyed
        if nodes > 1:
            seen = set()
            whole_all = exact[g]
            rack_masks = self.racks
            for t in range(len(self.classes)):
                whole = whole_all & self.node_ok[t]
                if whole.bit_count() < nodes:
                    continue
                node_set = fewest_racks(whole, rack_masks, nodes)
                if node_set in seen:
                    continue
                seen.add(node_set)
                racks = 0
                for mask in rack_masks:
                    if node_set & mask:
                        racks += 1
                gpus = state.full_gpus
                out.append((t, node_set, gpus, racks,
                            self.signature_id(node_set, gpus) if keyed else None))
            return out
        managed = state.managed
        gpu_free = state.gpu_free
        picks = self._picks
        sid1 = self._sid1
        order = self.order
        nonempty = self.nonempty
        seen = []
        for t, ok, usable_t, by in self._per_t:
            # fewest usable GPUs (>= per_node), then fewest free, then lowest node
            avail = nonempty[t] >> per_node
            while avail:
                lowest = avail & -avail
                u = per_node + lowest.bit_length() - 1
                c = by[u] & managed
                if c:
                    break
                avail ^= lowest
            else:
                continue
            cc = c & exact[u]  # usually all its free GPUs are usable
            if not cc:
                for f in range(u + 1, g + 1):
                    cc = c & exact[f]
                    if cc:
                        break
            low = cc & -cc
            k = low.bit_length() - 1
            usable = gpu_free[k] & ok[k]
            pk = (k, usable, per_node)
            gpus = picks.get(pk)
            if gpus is None:
                gpus = picks[pk] = pick_gpus(usable, order[k], per_node)
            if (low, gpus) in seen:
                continue
            seen.append((low, gpus))
            sid = None
            if keyed:
                sid = sid1.get((low, gpus))
                if sid is None:
                    sid = self.signature_id(low, gpus)
            out.append((t, low, gpus, 1, sid))
        # the last threshold admits every GPU: best fit on the free GPUs
        for f in range(per_node, g + 1):
            c = exact[f]
            if c:
                low = c & -c
                k = low.bit_length() - 1
                usable = gpu_free[k]
                pk = (k, usable, per_node)
                gpus = picks.get(pk)
                if gpus is None:
                    gpus = picks[pk] = pick_gpus(usable, order[k], per_node)
                if (low, gpus) not in seen:
                    sid = None
                    if keyed:
                        sid = sid1.get((low, gpus))
                        if sid is None:
                            sid = self.signature_id(low, gpus)
                    out.append((len(self.classes) - 1, low, gpus, 1, sid))
                break
        return out

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
        if state is not self.tracked:
            return self.scan(state, j, nodes, per_node)
        if state.gen != self._gen:
            self._gen = state.gen
            self.refresh(state)
            self._cands.clear()
            self._choice.clear()
        factor = self.runtime_factor
        if self.keyed:
            jk = self._job_key.get(j, _MISSING)
            if jk is _MISSING:
                jk = self.job_key(j)
            ck = (jk, nodes, per_node)
        elif factor is None:
            ck = (nodes, per_node)
        else:
            ck = None  # a factor callback without keys: every job is evaluated
        if ck is not None:
            hit = self._choice.get(ck)
            if hit is not None:
                if factor is not None:
                    self.memo = (j, hit[0], hit[1], hit[2])
                return hit[0], hit[1]
        cands = self._cands.get((nodes, per_node))
        if cands is None:
            cands = self._cands[(nodes, per_node)] = self.candidates(state, nodes, per_node)
        best = None
        if factor is None:
            for t, node_set, gpus, racks, sig in cands:
                key = (1.0, racks, t)
                if best is None or key < best[0]:
                    best = (key, node_set, gpus)
        elif ck is not None:
            by_sig = self._factors.get(jk)
            if by_sig is None:
                by_sig = self._factors[jk] = {}
            for t, node_set, gpus, racks, sig in cands:
                f = by_sig.get(sig)
                if f is None:
                    ks = bits(node_set)
                    f = by_sig[sig] = factor(j, ks, [bits(gpus)] * len(ks))
                key = (f, racks, t)
                if best is None or key < best[0]:
                    best = (key, node_set, gpus)
        else:
            for t, node_set, gpus, racks, sig in cands:
                ks = bits(node_set)
                key = (factor(j, ks, [bits(gpus)] * len(ks)), racks, t)
                if best is None or key < best[0]:
                    best = (key, node_set, gpus)
        if best is None:  # unreachable: the last threshold admits every GPU
            return BestFit.choose(self, state, j, nodes, per_node)
        if ck is not None:
            self._choice[ck] = (best[1], best[2], best[0][0])
        if factor is not None:
            self.memo = (j, best[1], best[2], best[0][0])
        return best[1], best[2]

    def scan(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        """``choose`` on any state: every threshold's candidate scanned from the state."""
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


def _one_group(j: int) -> int:
    return 0


# placements whose choice depends on the state and the job's shape only
_STATE_ONLY = (Placement, BestFit, Even, VariabilityFirst, LocalityFirst)

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
