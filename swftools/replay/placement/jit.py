"""The built-in placements compiled with numba, for the engine's compiled general path
(``engine_general_jit``): each policy's ``choose`` on the compiled node state, the incremental
counts it reads, and the placement signature a keyed factor kernel takes.

The state is ``engine_gpu_jit``'s: ``exact[f, w]`` (word ``w``, 32 nodes, of the managed nodes
with exactly ``f`` free GPUs), ``cnt[f]``, ``free[k]``, ``gpu_free[k]`` (a node's free GPUs as
bits); managed nodes are ``0 .. managed - 1``. Every change of a managed node goes through
``index_node`` (out with the old values, in with the new), which also keeps the policy's own
counts: per node group (GPU model, tier or rack) the managed nodes by free GPUs (``even``,
``priority``, ``variability-first``, ``locality-first``), and for ``lxv`` per class threshold the
nodes by usable free GPUs and the whole free nodes per rack -- what the Python policies scan
from bit sets or keep in ``Lxv.refresh``. A ``choose`` writes the chosen nodes ascending into
``out[:nodes]`` and returns the GPU set (the same on each node); it gives the Python policy's
choice from the same state (``tests/test_replay_engine_general_jit.py``). ``random`` is in
``engine_general_jit`` (its draw cache and the Mersenne Twister of ``placement.mtrand``).

The placement's tables (built by ``placement.tables``) are one int64 array ``aux`` and the
float scores ``score[k, i]``: one array, because every array a numba function binds costs two
atomic reference-count operations per call (a tuple of twenty arrays passed through the per-node
helpers doubled the engine's time). ``aux[H_*]`` hold sizes, ``aux[O_*]`` the offsets of the
blocks (N nodes, G node groups, T class thresholds, R racks, W words): ``GRP`` (N) a node's
group rank, ``RACK`` (N) its rack rank, ``MODEL`` (N) its GPU model index, ``ORDER`` (N x g)
its GPUs best first (``Machine.gpu_order(True)``), ``GC`` (G x (g + 1)) managed nodes per group
and free count, ``GW`` (G x W) group word masks, ``CURW``, ``CURM``, ``LEFT`` (G), ``TAKE``,
``MARK`` (R), ``STAMP`` (1), ``CAND`` (N) scratch, ``OKW`` (T x W) per threshold the nodes all
of whose GPUs qualify, ``OKNODE`` (T x N) the same as 0/1, ``OKGPU`` (T x N) the qualifying
GPUs of each node, ``TWR`` (T x R) and ``TW`` (T) whole free qualifying managed nodes per rack
and in all, ``BYU`` ((T - 1) x (g + 1) x W) and ``BYUCNT`` the managed nodes by usable free
GPUs, ``HIGH`` (jobs) the ``priority`` side of each job.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swftools.replay.engine_gpu_jit import WORD, _ctz, _lowest_bits, _place, _popcount

PACKED, BEST_FIT, RANDOM, EVEN, PRIORITY, VARIABILITY_FIRST, LOCALITY_FIRST, LXV = range(8)
POLICY_IDS = {"packed": PACKED, "best-fit": BEST_FIT, "random": RANDOM, "even": EVEN,
              "priority": PRIORITY, "variability-first": VARIABILITY_FIRST,
              "locality-first": LOCALITY_FIRST, "lxv": LXV}
(H_N, H_GROUPS, H_T, H_R, O_GRP, O_RACK, O_MODEL, O_ORDER, O_GC, O_GW, O_CURW, O_CURM, O_LEFT,
 O_TAKE, O_MARK, O_STAMP, O_CAND, O_OKW, O_OKNODE, O_OKGPU, O_TWR, O_TW, O_BYU, O_BYUCNT,
 O_HIGH, HEADER) = range(26)


@njit(cache=True, inline="always")
def _flip(words, i, b, sign):  # pragma: no cover - compiled
    if sign > 0:
        words[i] |= b
    else:
        words[i] &= ~b


@njit(cache=True)
def _lxv_index(k, sign, f, held, g, w, b, aux):  # pragma: no cover - compiled
    """``lxv``'s counts of node ``k`` (``f`` free GPUs ``held``, bit ``b`` of word ``w``)."""
    n, n_t, n_r = aux[H_N], aux[H_T], aux[H_R]
    words = (n + WORD - 1) // WORD
    if f == g:
        r = aux[aux[O_RACK] + k]
        for t in range(n_t):
            if aux[aux[O_OKNODE] + t * n + k]:
                aux[aux[O_TWR] + t * n_r + r] += sign
                aux[aux[O_TW] + t] += sign
    for t in range(n_t - 1):
        u = _popcount(held & aux[aux[O_OKGPU] + t * n + k])
        _flip(aux, aux[O_BYU] + (t * (g + 1) + u) * words + w, b, sign)
        aux[aux[O_BYUCNT] + t * (g + 1) + u] += sign


@njit(cache=True, inline="always")
def index_node(k, sign, pol, g, exact, cnt, free, gpu_free, aux):  # pragma: no cover
    """Managed node ``k`` enters (``sign`` 1) or leaves (-1) the state's sets and the policy's
    counts, with its current ``free`` and ``gpu_free``."""
    f = free[k]
    w = k // WORD
    b = np.int64(1) << (k % WORD)
    if sign > 0:
        exact[f, w] |= b
    else:
        exact[f, w] &= ~b
    cnt[f] += sign
    if pol == EVEN or pol == PRIORITY or pol == VARIABILITY_FIRST or pol == LOCALITY_FIRST:
        aux[aux[O_GC] + aux[aux[O_GRP] + k] * (g + 1) + f] += sign
    elif pol == LXV:
        _lxv_index(k, sign, f, gpu_free[k], g, w, b, aux)


@njit(cache=True)
def set_capacity(pol, g, exact, cnt, free, gpu_free, aux, managed,
                 nodes):  # pragma: no cover - compiled
    """``GpuState.set_capacity``: manage nodes ``0 .. nodes - 1``; returns the new count."""
    for k in range(nodes, managed):
        index_node(k, -1, pol, g, exact, cnt, free, gpu_free, aux)
    for k in range(managed, nodes):
        index_node(k, 1, pol, g, exact, cnt, free, gpu_free, aux)
    return nodes


@njit(cache=True, inline="always")
def take(pol, g, exact, cnt, free, gpu_free, aux, chosen, count, per_node,
         gpus):  # pragma: no cover - compiled
    """``GpuState.take_set``: ``gpus`` (``per_node`` of them) on each of ``chosen[:count]``."""
    for q in range(count):
        k = chosen[q]
        index_node(k, -1, pol, g, exact, cnt, free, gpu_free, aux)
        free[k] -= per_node
        gpu_free[k] ^= gpus
        index_node(k, 1, pol, g, exact, cnt, free, gpu_free, aux)


@njit(cache=True, inline="always")
def give_back(pol, g, exact, cnt, free, gpu_free, aux, managed, node_list, lo, hi, per_node,
              gpus):  # pragma: no cover - compiled
    """``GpuState.give_back`` of the job on ``node_list[lo:hi]``."""
    for q in range(lo, hi):
        k = node_list[q]
        if k < managed:
            index_node(k, -1, pol, g, exact, cnt, free, gpu_free, aux)
        free[k] += per_node
        gpu_free[k] |= gpus
        if k < managed:
            index_node(k, 1, pol, g, exact, cnt, free, gpu_free, aux)


@njit(cache=True, inline="always")
def cands_word(exact, w, per_node, g):  # pragma: no cover - compiled
    """Word ``w`` of the nodes with at least ``per_node`` free GPUs (``node_candidates``)."""
    m = np.int64(0)
    for f in range(per_node, g + 1):
        m |= exact[f, w]
    return m


@njit(cache=True)
def pick_gpus(free, aux, k, g, count, reverse):  # pragma: no cover - compiled
    """``placement.pick_gpus``: the first ``count`` free GPUs of node ``k`` in its order (best
    first, or the reverse)."""
    chosen = np.int64(0)
    base = aux[O_ORDER] + k * g
    for q in range(g):
        i = aux[base + g - 1 - q] if reverse else aux[base + q]
        if free >> i & 1:
            chosen |= np.int64(1) << i
            count -= 1
            if not count:
                break
    return chosen


@njit(cache=True)
def _lowest_of(exact, g, per_node, aux, base):  # pragma: no cover - compiled
    """The lowest node with at least ``per_node`` free GPUs in the word mask at ``aux[base:]``."""
    for w in range(exact.shape[1]):
        m = cands_word(exact, w, per_node, g) & aux[base + w]
        if m:
            return w * WORD + _ctz(m)
    return -1


@njit(cache=True)
def _take_whole(exact, g, aux, base, count, out, c):  # pragma: no cover - compiled
    """The ``count`` lowest whole free nodes of the word mask at ``aux[base:]`` into
    ``out[c:]``; returns the new ``c``."""
    for w in range(exact.shape[1]):
        m = exact[g, w] & aux[base + w]
        while m and count:
            low = m & -m
            m ^= low
            out[c] = w * WORD + _ctz(low)
            c += 1
            count -= 1
        if not count:
            break
    return c


@njit(cache=True)
def _sort_prefix(out, count):  # pragma: no cover - compiled
    out[:count] = np.sort(out[:count])


@njit(cache=True, inline="always")
def _has(aux, row, per_node, g):  # pragma: no cover - compiled
    """Whether the count row at ``aux[row:]`` has a node with at least ``per_node`` free."""
    for f in range(per_node, g + 1):
        if aux[row + f]:
            return True
    return False


@njit(cache=True)
def choose_even(g, exact, cnt, gpu_free, aux, nodes, per_node, out):  # pragma: no cover
    """``Even.scan``: the GPU model with the largest share of free GPUs, first-fit in it;
    multi-node jobs node by node by share of whole free nodes (one model: ``packed``)."""
    n_groups = aux[H_GROUPS]
    words = exact.shape[1]
    gc, gw = aux[O_GC], aux[O_GW]
    if n_groups == 1:
        _place(exact, cnt, g, False, nodes, per_node, out)
        if nodes > 1:
            return (np.int64(1) << g) - 1
        return _lowest_bits(gpu_free[out[0]], per_node)
    if nodes == 1:
        best = -1
        best_share = -1.0
        for m in range(n_groups):
            row = gc + m * (g + 1)
            if not _has(aux, row, per_node, g):
                continue
            free_gpus = 0
            managed = aux[row]
            for f in range(1, g + 1):
                free_gpus += f * aux[row + f]
                managed += aux[row + f]
            share = free_gpus / (managed * g)
            if share > best_share:
                best = m
                best_share = share
        k = _lowest_of(exact, g, per_node, aux, gw + best * words)
        out[0] = k
        return _lowest_bits(gpu_free[k], per_node)
    cur_w, cur_m, left = aux[O_CURW], aux[O_CURM], aux[O_LEFT]
    for m in range(n_groups):
        aux[cur_w + m] = 0
        aux[cur_m + m] = exact[g, 0] & aux[gw + m * words]
        aux[left + m] = aux[gc + m * (g + 1) + g]
    for q in range(nodes):
        best = 0
        best_share = -1.0
        for m in range(n_groups):
            size = 0
            for f in range(g + 1):
                size += aux[gc + m * (g + 1) + f]
            share = aux[left + m] / max(1, size)
            if share > best_share:
                best = m
                best_share = share
        while not aux[cur_m + best]:
            aux[cur_w + best] += 1
            w = aux[cur_w + best]
            aux[cur_m + best] = exact[g, w] & aux[gw + best * words + w]
        m = aux[cur_m + best]
        low = m & -m
        aux[cur_m + best] = m ^ low
        out[q] = aux[cur_w + best] * WORD + _ctz(low)
        aux[left + best] -= 1
    _sort_prefix(out, nodes)
    return (np.int64(1) << g) - 1


@njit(cache=True)
def choose_tiered(g, exact, gpu_free, aux, nodes, per_node, reverse,
                  out):  # pragma: no cover - compiled
    """``Tiered.choose`` (``priority``, ``variability-first``): nodes from the first tier on
    (the last first when ``reverse``), lowest numbers first in a tier; GPUs in ``order``."""
    n_tiers = aux[H_GROUPS]
    words = exact.shape[1]
    gc, gw = aux[O_GC], aux[O_GW]
    if nodes == 1:
        for q in range(n_tiers):
            tier = n_tiers - 1 - q if reverse else q
            if _has(aux, gc + tier * (g + 1), per_node, g):
                k = _lowest_of(exact, g, per_node, aux, gw + tier * words)
                out[0] = k
                return pick_gpus(gpu_free[k], aux, k, g, per_node, reverse)
        return np.int64(0)  # unreachable: the job fits
    c = 0
    tiers_used = 0
    for q in range(n_tiers):
        tier = n_tiers - 1 - q if reverse else q
        avail = aux[gc + tier * (g + 1) + g]
        if not avail:
            continue
        c = _take_whole(exact, g, aux, gw + tier * words, min(avail, nodes - c), out, c)
        tiers_used += 1
        if c == nodes:
            break
    if tiers_used > 1:
        _sort_prefix(out, nodes)
    return (np.int64(1) << g) - 1


@njit(cache=True)
def fewest_racks(exact, g, aux, counts, stride, t, nodes, out):  # pragma: no cover - compiled
    """``locality.fewest_racks`` on the whole free nodes (qualifying for threshold ``t`` when
    ``t >= 0``), ``aux[counts + r * stride]`` of them in rack ``r``: nodes into ``out``
    ascending; returns the racks spanned."""
    n_racks = aux[H_R]
    take, rack = aux[O_TAKE], aux[O_RACK]
    best = -1
    for r in range(n_racks):
        aux[take + r] = 0
        c = aux[counts + r * stride]
        if c >= nodes and (best < 0 or c < aux[counts + best * stride]):
            best = r
    spanned = 0
    if best >= 0:
        aux[take + best] = nodes
        spanned = 1
    else:
        most = np.empty(n_racks, np.int64)
        for r in range(n_racks):
            most[r] = -aux[counts + r * stride]
        ranked = np.argsort(most, kind="mergesort")  # most first, lower rack on ties
        rest = nodes
        for i in range(n_racks):
            r = ranked[i]
            q = min(aux[counts + r * stride], rest)
            if q > 0:
                aux[take + r] = q
                rest -= q
                spanned += 1
            if rest == 0:
                break
    c = 0
    okw = aux[O_OKW] + t * exact.shape[1]
    for w in range(exact.shape[1]):
        m = exact[g, w]
        if t >= 0:
            m &= aux[okw + w]
        while m:
            low = m & -m
            m ^= low
            k = w * WORD + _ctz(low)
            r = aux[rack + k]
            if aux[take + r] > 0:
                aux[take + r] -= 1
                out[c] = k
                c += 1
                if c == nodes:
                    return spanned
    return spanned


@njit(cache=True, inline="always")
def signature(chosen, count, gpus, aux, score):  # pragma: no cover - compiled
    """``Placement.signature`` of ``gpus`` on each of ``chosen[:count]``: (models held, lowest
    score held, racks spanned, GPUs per node); the node count is ``count``."""
    model, rack, mark = aux[O_MODEL], aux[O_RACK], aux[O_MARK]
    aux[aux[O_STAMP]] += 1
    s = aux[aux[O_STAMP]]
    models = np.int64(0)
    s_min = np.inf
    racks = 0
    for q in range(count):
        k = chosen[q]
        models |= np.int64(1) << aux[model + k]
        x = gpus
        while x:
            low = x & -x
            x ^= low
            v = score[k, _ctz(low)]
            if v < s_min:
                s_min = v
        r = aux[rack + k]
        if aux[mark + r] != s:
            aux[mark + r] = s
            racks += 1
    return models, s_min, racks, _popcount(gpus)


@njit(cache=True, inline="always")
def factor(j, chosen, count, gpus, aux, score, has_factor, kernel, params,
           keys):  # pragma: no cover - compiled
    """The run-time factor of job ``j`` on the placement (1.0 without a factor; ``kernel``: a
    factor kernel as ``factors_jit.compiled`` makes it, ``params`` its float64 constants)."""
    if not has_factor:
        return 1.0
    models, s_min, racks, per_node = signature(chosen, count, gpus, aux, score)
    return kernel(keys[j], models, s_min, count, racks, per_node, params)


@njit(cache=True)
def _lxv_single(t, g, exact, cnt, aux, per_node):  # pragma: no cover - compiled
    """Threshold ``t``'s single-node candidate: the managed node with the fewest usable free
    GPUs (class <= threshold; at least ``per_node``), then the fewest free, then the lowest."""
    words = exact.shape[1]
    counts = aux[O_BYUCNT] + t * (g + 1)
    for u in range(per_node, g + 1):
        if not aux[counts + u]:
            continue
        base = aux[O_BYU] + (t * (g + 1) + u) * words
        for f in range(u, g + 1):
            if not cnt[f]:
                continue
            for w in range(words):
                m = aux[base + w] & exact[f, w]
                if m:
                    return w * WORD + _ctz(m)
    return -1


@njit(cache=True, inline="always")
def _better(f, racks, t, best_f, best_racks, best_t):  # pragma: no cover - compiled
    """``(f, racks, t) < (best_f, best_racks, best_t)`` as Python compares tuples."""
    if f != best_f:
        return f < best_f
    if racks != best_racks:
        return racks < best_racks
    return t < best_t


@njit(cache=True)
def choose_lxv(j, g, exact, cnt, gpu_free, aux, score, nodes, per_node, has_factor, kernel,
               params, keys, out):  # pragma: no cover - compiled
    """``Lxv.choose``: per class threshold the fewest-racks candidate; the smallest (factor,
    racks, threshold) wins (duplicate candidates, skipped in Python, never win a tie)."""
    full = (np.int64(1) << g) - 1
    n, n_t, n_r = aux[H_N], aux[H_T], aux[H_R]
    cand = aux[aux[O_CAND]:aux[O_CAND] + max(n, 1)]
    found = False
    best_f = 0.0
    best_racks = 0
    best_t = 0
    best_gpus = np.int64(0)
    if nodes > 1:
        for t in range(n_t):
            if aux[aux[O_TW] + t] < nodes:
                continue
            racks = fewest_racks(exact, g, aux, aux[O_TWR] + t * n_r, 1, t, nodes, cand)
            f = factor(j, cand, nodes, full, aux, score, has_factor, kernel, params, keys)
            if not found or _better(f, racks, t, best_f, best_racks, best_t):
                found = True
                best_f, best_racks, best_t = f, racks, t
                out[:nodes] = cand[:nodes]
        return full
    for t in range(n_t):
        if t < n_t - 1:
            k = _lxv_single(t, g, exact, cnt, aux, per_node)
            if k < 0:
                continue
            usable = gpu_free[k] & aux[aux[O_OKGPU] + t * n + k]
        else:  # the last threshold admits every GPU: best fit on the free GPUs
            k = -1
            for f in range(per_node, g + 1):
                if cnt[f]:
                    for w in range(exact.shape[1]):
                        if exact[f, w]:
                            k = w * WORD + _ctz(exact[f, w])
                            break
                    break
            usable = gpu_free[k]
        gpus = pick_gpus(usable, aux, k, g, per_node, False)
        cand[0] = k
        f = factor(j, cand, 1, gpus, aux, score, has_factor, kernel, params, keys)
        if not found or _better(f, 1, t, best_f, best_racks, best_t):
            found = True
            best_f, best_racks, best_t = f, 1, t
            best_gpus = gpus
            out[0] = k
    return best_gpus


@njit(cache=True, inline="always")
def choose(pol, j, g, exact, cnt, gpu_free, aux, score, nodes, per_node, has_factor, kernel,
           params, keys, out):  # pragma: no cover - compiled
    """The placement ``pol`` (not ``random``) of job ``j`` (``nodes`` x ``per_node``, fits now):
    nodes into ``out[:nodes]`` ascending; returns the GPU set."""
    if pol == PACKED or pol == BEST_FIT or (pol == LOCALITY_FIRST and nodes == 1):
        _place(exact, cnt, g, pol != PACKED, nodes, per_node, out)
        if nodes > 1:
            return (np.int64(1) << g) - 1
        return _lowest_bits(gpu_free[out[0]], per_node)
    if pol == EVEN:
        return choose_even(g, exact, cnt, gpu_free, aux, nodes, per_node, out)
    if pol == PRIORITY:
        return choose_tiered(g, exact, gpu_free, aux, nodes, per_node,
                             not aux[aux[O_HIGH] + j], out)
    if pol == VARIABILITY_FIRST:
        return choose_tiered(g, exact, gpu_free, aux, nodes, per_node, False, out)
    if pol == LOCALITY_FIRST:
        fewest_racks(exact, g, aux, aux[O_GC] + g, g + 1, -1, nodes, out)
        return (np.int64(1) << g) - 1
    return choose_lxv(j, g, exact, cnt, gpu_free, aux, score, nodes, per_node, has_factor,
                      kernel, params, keys, out)
