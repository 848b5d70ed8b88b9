"""Placements that trade locality: ``locality-first`` and ``lxv`` (the L x V matrix; see
``swftools.replay.placement``)."""

from __future__ import annotations

from typing import Callable

from swftools.replay.model import GpuState, bits, lowest_bits
from swftools.replay.placement.base import _MISSING, BestFit, RuntimeFactor, pick_gpus


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
    state_only = True  # the choice depends on the state and the job's shape only
    name = "locality-first"

    def choose(self, state: GpuState, j: int, nodes: int, per_node: int) -> tuple[int, int]:
        if nodes > 1:
            return fewest_racks(state.exact[state.g], self.rack_masks, nodes), state.full_gpus
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
            rack_masks = self.rack_masks
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
            return fewest_racks(whole, self.rack_masks, nodes), state.full_gpus
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
