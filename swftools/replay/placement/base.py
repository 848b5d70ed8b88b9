"""The placement interface and its inputs: ``PlacementInputs``, ``Machine``, the base
``Placement`` (``packed``) with the keyed run-time factor cache, and ``best-fit``; see
``swftools.replay.placement`` for the policies and the contract."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from swftools.errors import UsageError
from swftools.replay.factors import FactorKernel
from swftools.replay.model import GpuState, bits, lowest_bits
from swftools.site import bad_score_message

RuntimeFactor = Callable[[int, list[int], list[list[int]]], float]
_MISSING = object()
CACHE_LIMIT = 1 << 17  # entries of a per-placement memo before it starts over


@dataclass
class PlacementInputs:
    """What placements know about the machine and the jobs (any field may be None).

    ``rack``, ``gpu_model``: one entry per node; ``score``, ``gpu_class``: one row per node, one
    entry per GPU of the node; ``model_speed``: per GPU model index, higher is faster; ``gain``:
    one entry per job (``run_gpu``: queue order; ``replay()``: rows of the input table).

    ``pm-first`` and ``pal``: ``class_score`` holds per application class a score grid (one row
    per node, one entry per GPU; default: ``score`` for every class), ``job_class`` each job's
    application class (an index into ``class_score``; ordered like ``gain``); ``pal_penalty``
    multiplies the class value of cross-node cells, ``pal_k2`` uses PAL's artifact's k = 2.

    ``factor_by_key``: the run-time factor callback promises (see "Keyed run-time factors" in the
    module docstring) that ``runtime_factor(j, None, None)`` returns a hashable key of job ``j``
    and that the factor depends on the job only through that key and on the placement only
    through its signature (``Placement.signature``), so placements may cache factors by both.

    ``factor_kernel``: the same keyed factor compiled (``replay.factors.FactorKernel``, its keys
    one per row of the replayed table), which lets the compiled engine run the general path.
    """

    rack: Sequence[int] | None = None
    gpu_model: Sequence[int] | None = None
    score: Sequence[Sequence[float]] | None = None
    gpu_class: Sequence[Sequence[int]] | None = None
    model_speed: Sequence[float] | None = None
    gain: Sequence[float] | None = None
    factor_by_key: bool = False
    factor_kernel: FactorKernel | None = None
    class_score: Sequence[Sequence[Sequence[float]]] | None = None
    job_class: Sequence[int] | None = None
    pal_penalty: float = 1.7
    pal_k2: bool = False

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
        class_score = None
        if self.class_score is not None:
            class_score = [per_gpu(grid, "class_score", 1.0, float) for grid in self.class_score]
        grids = [("score", score)] + [(f"class_score[{c}]", grid)
                                      for c, grid in enumerate(class_score or ())]
        for what, grid in grids:  # PAL ranks GPUs by 1 / score: 0 would be infinite
            bad = bad_score_message(grid, f"placement input {what}")
            if bad:
                raise UsageError(bad)
        if not self.pal_penalty > 0 or self.pal_penalty == float("inf"):
            raise UsageError(f"locality penalty {self.pal_penalty}: expected a positive number "
                             "(PAL's default 1.7; 1 = no penalty)")
        job_class = None if self.job_class is None else [int(c) for c in self.job_class]
        if job_class and min(job_class) < 0 or (job_class and class_score is not None
                                                and max(job_class) >= len(class_score)):
            raise UsageError("placement input job_class: classes must index class_score")
        return Machine(n_nodes, g, rack, model, score, cls, speed, bool(self.factor_by_key),
                       class_score, job_class, float(self.pal_penalty), bool(self.pal_k2))


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
    class_score: list[list[list[float]]] | None = None
    job_class: list[int] | None = None
    pal_penalty: float = 1.7
    pal_k2: bool = False

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

    state_only = True  # the choice depends on the state and the job's shape only
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
        # node sets per GPU model and per rack, ascending (policies read them too)
        self.model_masks = m.group_masks(lambda k: m.model[k])
        self.rack_masks = m.group_masks(lambda k: m.rack[k])
        self._model_masks = [(1 << m.model[mask.bit_length() - 1], mask)
                             for mask in self.model_masks]
        self._node_min = [min(row) if row else 1.0 for row in m.score]

    def choice_group(self) -> Callable[[int], object] | None:
        """A function giving each job a group such that two jobs of one shape and one group get
        the same choice and the same run-time factor on it from the same state, or None. The
        engine uses it to skip, until the next start, the jobs of a (shape, group) whose choice
        the EASY reservation refused (see ``engine_gpu``). Only the built-in placements declare
        groups (a subclass gets None unless it declares its own); none has groups with a factor
        callback that is not keyed."""
        if not type(self).__dict__.get("state_only", False):
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
        for mask in self.rack_masks:
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
    state_only = True  # the choice depends on the state and the job's shape only
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


def _one_group(j: int) -> int:
    return 0
