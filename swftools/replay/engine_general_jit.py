"""``engine_gpu.run_gpu``'s general path compiled with numba: placements and keyed factors.

The pure-Python general path stays the reference (``run_gpu(..., compiled=False)``); this is its
twin (``engine_general`` decides when it applies) for the built-in placements (``placement.jit``;
``random`` through ``placement.mtrand``, CPython's Mersenne Twister) with no run-time factor or
a keyed one given in compiled form (``factors.FactorKernel``, called through a function pointer
of one signature, ``factors_jit``: one cached engine for every kernel). The node state is
``engine_gpu_jit``'s (32-node words: any width, flat pools of 93,312 one-GPU nodes too); the
queue, heap, reservation and search are its helpers. Step for step as ``run_gpu``: the queue's
segment tree holds ``round(estimate x min_factor)``; a started job runs ``round(runtime x f)``
and EASY estimates it at ``round(estimate x f)`` (``np.rint`` of the same float product:
Python's ``round``, half to even); the backfill admits shapes by ``Reservation.may_allow``,
checks the chosen placement with its real factor against the reservation, and skips a refused
(size, choice group, factor bound) combination as Python does (its bits share the int64 with the
size bits, 62 in all: the most frequent combinations get one, the rest keep their size's bit,
which changes no start); it also keeps each combination's last choice and factor while the
state is unchanged (what Python's placement caches do); ``random`` draws once per shape while
the state is unchanged (``gen`` grows at each capacity change, start and end, as
``model.TrackedGpuState.gen``), so its stream of draws is Python's.

Speed: the per-job helpers are inlined (numba IR) and take the placement's tables as one array,
because each array a compiled call binds costs two atomic reference-count operations.

A function of a function-typed argument cannot be exported ahead of time
(``kernels.AOT_EXPORTS``): this path runs on numba's JIT only (``cache=True``). Its first use
(per version of these sources; every factor kernel shares it) compiles for about a minute;
later processes load it from numba's cache in well under a second.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swftools.replay.engine_flat_jit import (_bit_length, _heap_pop, _record_start,
                                             _sorted_remove)
from swftools.replay.engine_gpu_jit import (INFINITY, WORD, _allows, _ctz, _dequeue, _enqueue,
                                            _fit_bound, _job_arrays, _reserve, _search,
                                            _timeline)
from swftools.replay.placement.jit import (RANDOM, cands_word, choose, factor, give_back,
                                           set_capacity, take)
from swftools.replay.placement.mtrand import GPU_OUT, draw_random

OK, BAD_FACTOR, OVERFLOW = 0, 1, 2  # status of a run
SATURATE = float(1 << 61)  # scaled times at least this: beyond any key (the run is redone)
MEMO_MAX_NODES = 256  # combinations of wider jobs keep no memo of their choice


@njit(cache=True, inline="always")
def _scaled(t, f):  # pragma: no cover - compiled
    """``round(t * f) if f != 1.0 else t`` (half to even), saturated at ``SATURATE``."""
    if f == 1.0:
        return t
    x = np.rint(t * f)
    if x >= SATURATE:
        return np.int64(1 << 61)
    return np.int64(x)


@njit(cache=True)
def _may_allow(exact, cnt, g, nodes, per_node, head_nodes, head_per_node, spare, spare0,
               flagged, flag_hi, flagw, projected):  # pragma: no cover - compiled
    """``Reservation.may_allow``; ``flagw``: its node set (``whole`` or ``fitting``) as words,
    ``spare`` the current spare count, ``spare0`` the single-node head's spare as computed
    (``commit`` keeps it), ``flag_hi`` the highest node of ``fitting`` when it was made."""
    words = exact.shape[1]
    if head_nodes > 1:
        if nodes > 1:
            return nodes <= spare
        if spare >= 1:
            return True
        for w in range(words):
            if cands_word(exact, w, per_node, g) & ~flagw[w]:
                return True
        return False
    if not flagged:
        return False
    if nodes > 1:
        for w in range(words):
            if flagw[w] & ~exact[g, w]:
                return True
        return cnt[g] > nodes
    if spare0 >= 1:
        return True
    inside = False
    for w in range(words):
        c = cands_word(exact, w, per_node, g)
        if c & ~flagw[w]:
            return True
        if c & flagw[w]:
            inside = True
    return inside and projected[flag_hi] - per_node >= head_per_node


@njit(cache=True, inline="always")
def _choose(pol, j, s, g, exact, cnt, gpu_free, aux, score, nodes, per_node, has_factor, kernel,
            params, keys, out, gen, mt, scratch, drawn_gen, drawn_gpus, drawn_nodes,
            drawn_off):  # pragma: no cover - compiled
    """The placement of job ``j`` (shape index ``s``) into ``out[:nodes]``; returns its GPUs.
    ``random``: one draw per shape and ``gen`` (``Random.choose``'s cache)."""
    if pol != RANDOM:
        return choose(pol, j, g, exact, cnt, gpu_free, aux, score, nodes, per_node, has_factor,
                      kernel, params, keys, out)
    lo = drawn_off[s]
    if drawn_gen[s] != gen:
        _, drawn_gpus[s] = draw_random(mt, exact, cnt, gpu_free, g, nodes, per_node,
                                       drawn_nodes[lo:lo + nodes], scratch)
        drawn_gen[s] = gen
    out[:nodes] = drawn_nodes[lo:lo + nodes]
    return drawn_gpus[s]


@njit(cache=True, inline="always")
def _start(j, now, f, gpus, pol, g, exact, cnt, free, gpu_free, aux, chosen, nodes_of, per_node,
           runtime, estimate, run_actual, est_actual, start, node_off, node_list, gpu_set, ends,
           n_ends, running, n_running, est_key, shift,
           key_limit):  # pragma: no cover - compiled
    """``start_chosen``: start ``j`` now on ``chosen[:nodes_of[j]]`` x ``gpus`` with factor
    ``f``; returns (status, heap size, running size)."""
    r = _scaled(runtime[j], f)
    e = _scaled(estimate[j], f)
    if now + r >= key_limit or now + e >= key_limit:
        return OVERFLOW, n_ends, n_running
    count = nodes_of[j]
    take(pol, g, exact, cnt, free, gpu_free, aux, chosen, count, per_node[j], gpus)
    gpu_set[j] = gpus
    node_list[node_off[j]:node_off[j + 1]] = chosen[:count]
    run_actual[j] = r
    est_actual[j] = e
    n_ends, n_running = _record_start(j, now, run_actual, est_actual, start, ends, n_ends,
                                      running, n_running, est_key, shift)
    return OK, n_ends, n_running


@njit(cache=True)
def run_general_compiled(submit, runtime, size, estimate, tree_est, nodes_of, per_node, bit,
                         bit_shape, bit_combo, bit_lower, shape_index, distinct, fit_masks,
                         shape_nodes, shape_per_node, g, n_nodes, easy, cap_t, cap_n, nodes_t0,
                         pol, aux, score, has_factor, kernel, params, keys,
                         mt):  # pragma: no cover - compiled
    """``engine_gpu.run_gpu``'s general path; int64 arrays in queue order (see the module
    docstring). ``tree_est``: the estimates' lower bounds the queue holds; ``bit``: each job's
    queue bit (its size's, or its combination's); per bit index ``bit_shape`` (its size index),
    ``bit_combo`` (a combination) and ``bit_lower`` (its factor bound); ``shape_index``: each
    job's size index; ``pol``, ``aux``, ``score``: the placement and its tables
    (``placement.jit``); the factor when ``has_factor``: ``kernel``'s (a C callback of
    ``factors_jit.SIGNATURE``) of ``keys[j]``, the signature and ``params``; ``mt``: ``random``'s
    generator state (``placement.mtrand``). Returns (status,
    start, node_off, node_list, gpu_set, runtime, estimate, dropped job, dropped reach,
    dropped instant, bad job, bad factor); status ``BAD_FACTOR``: job ``bad job``'s factor is
    not positive and finite; ``OVERFLOW``: a scaled time left the int64 keys.
    """
    n = len(submit)
    words = (n_nodes + WORD - 1) // WORD
    exact = np.zeros((g + 1, words), np.int64)
    cnt = np.zeros(g + 1, np.int64)
    free = np.full(n_nodes, g, np.int64)
    gpu_free = np.full(n_nodes, (1 << g) - 1, np.int64)
    managed = set_capacity(pol, g, exact, cnt, free, gpu_free, aux, 0, nodes_t0)
    gen = 0

    change_at, change_nodes, future_max, n_changes, reach = _timeline(cap_t, cap_n, submit[0],
                                                                      managed)
    i_change = 0
    (start, node_off, node_list, gpu_set, dropped_j, dropped_reach, dropped_at, shift, low_mask,
     ends, running, est_key, leaves, keys_tree, min_est, job_at) = _job_arrays(nodes_of)
    run_actual = np.zeros(n, np.int64)
    est_actual = np.zeros(n, np.int64)
    n_dropped = 0
    key_limit = np.int64(1) << (63 - shift)
    n_ends = 0
    n_running = 0
    next_pos = 0
    head = 0
    waiting = 0
    res_head = -1
    has_res = False
    shadow = 0
    spare = 0
    spare0 = 0
    flagged = 0
    flag_hi = 0
    head_nodes = 0
    head_per_node = 0
    projected = np.zeros(n_nodes, np.int64)
    flag = np.zeros(n_nodes, np.bool_)
    flagw = np.zeros(words, np.int64)
    chosen = np.zeros(max(n_nodes, 1), np.int64)
    n_shapes = len(distinct)
    verdict = np.zeros(n_shapes, np.int64)
    refused_f = np.zeros(64, np.float64)
    # random's draws: per shape the state generation drawn at, the GPUs and the nodes
    drawn_gen = np.full(n_shapes, -1, np.int64)
    drawn_gpus = np.zeros(n_shapes, np.int64)
    drawn_off = np.zeros(n_shapes + 1, np.int64)
    if pol == RANDOM:
        for s in range(n_shapes):
            drawn_off[s + 1] = drawn_off[s] + shape_nodes[s]
    drawn_nodes = np.zeros(drawn_off[n_shapes], np.int64)
    scratch = np.zeros(max(n_nodes, 2 * GPU_OUT) if pol == RANDOM else 0, np.int64)  # zeros
    # per combination bit (the jobs of one shape and choice group: the same choice and factor
    # from one state, ``Placement.choice_group``), its last choice and the state it was made in
    memo_gen = np.full(64, -1, np.int64)
    memo_gpus = np.zeros(64, np.int64)
    memo_f = np.zeros(64, np.float64)
    memo_off = np.zeros(65, np.int64)
    for b in range(64):
        width = shape_nodes[bit_shape[b]] if bit_combo[b] else 0
        memo_off[b + 1] = memo_off[b] + (width if width <= MEMO_MAX_NODES else 0)
    memo_nodes = np.zeros(memo_off[64], np.int64)
    empty = np.zeros(0, np.int64)
    no_f = np.zeros(0, np.float64)

    # deliberate twin of engine_gpu_jit.run_gpu_compiled's set-up and event loop: that one is
    # exported ahead of time (no function argument) and keeps no placement upkeep; this one
    # threads the policy's tables (``aux``), the state generation and the scaled times through
    i_sub = 0
    while i_sub < n or n_ends or waiting:
        now = submit[i_sub] if i_sub < n else INFINITY
        if n_ends and ends[0] >> shift < now:
            now = ends[0] >> shift
        if waiting and change_at[i_change] < now:
            now = change_at[i_change]
        while change_at[i_change] <= now:
            managed = set_capacity(pol, g, exact, cnt, free, gpu_free, aux, managed,
                                   change_nodes[i_change])
            gen += 1
            i_change += 1
            reach = future_max[i_change] if i_change < n_changes else managed
            if managed > reach:
                reach = managed
            res_head = -1
        while n_ends and ends[0] >> shift == now:
            key, n_ends = _heap_pop(ends, n_ends)
            j = key & low_mask
            give_back(pol, g, exact, cnt, free, gpu_free, aux, managed, node_list, node_off[j],
                      node_off[j + 1], per_node[j], gpu_set[j])
            gen += 1
            n_running = _sorted_remove(running, n_running, est_key[j])
            res_head = -1
        first_arrival = i_sub
        while i_sub < n and submit[i_sub] == now:
            i_sub += 1
        if not waiting and first_arrival == i_sub:
            continue

        # 1. start from the head while it fits, dropping a head that can never fit again; then,
        # the queue empty, the arrivals likewise; the first one that waits blocks the rest
        bound = _fit_bound(cnt, g)
        q = first_arrival
        while waiting or q < i_sub:
            queued = waiting > 0
            if queued:
                while not keys_tree[head + leaves]:
                    head += 1
                j = job_at[head]
            else:
                j = q
                q += 1
            if size[j] <= bound:
                if queued:
                    _dequeue(head, leaves, keys_tree, min_est)
                    waiting -= 1
                count = nodes_of[j]
                gpus = _choose(pol, j, shape_index[j], g, exact, cnt, gpu_free, aux, score, count,
                               per_node[j], has_factor, kernel, params, keys, chosen, gen, mt,
                               scratch, drawn_gen, drawn_gpus, drawn_nodes, drawn_off)
                f = factor(j, chosen, count, gpus, aux, score, has_factor, kernel, params, keys)
                status = BAD_FACTOR
                if f > 0 and f != np.inf:
                    status, n_ends, n_running = _start(
                        j, now, f, gpus, pol, g, exact, cnt, free, gpu_free, aux, chosen,
                        nodes_of, per_node, runtime, estimate, run_actual, est_actual, start,
                        node_off, node_list, gpu_set, ends, n_ends, running, n_running, est_key,
                        shift, key_limit)
                if status != OK:
                    return (status, start, node_off, node_list, gpu_set, run_actual,
                            est_actual, empty, empty, empty, j, f)
                gen += 1
                bound = _fit_bound(cnt, g)
            elif nodes_of[j] > reach:
                if queued:
                    _dequeue(head, leaves, keys_tree, min_est)
                    waiting -= 1
                dropped_j[n_dropped] = j
                dropped_reach[n_dropped] = reach
                dropped_at[n_dropped] = now
                n_dropped += 1
            elif queued:
                break
            else:  # it waits (and is the queue's head next time round)
                _enqueue(next_pos, j, leaves, keys_tree, min_est, job_at, bit[j], tree_est[j])
                next_pos += 1
                waiting += 1
        while q < i_sub:
            _enqueue(next_pos, q, leaves, keys_tree, min_est, job_at, bit[q], tree_est[q])
            next_pos += 1
            waiting += 1
            q += 1
        if not (easy and waiting) or not bound:
            continue
        fit = fit_masks[np.searchsorted(distinct, bound, side="right")]
        if not keys_tree[1] & fit:
            continue

        # 2. EASY backfilling behind the blocked head
        while not keys_tree[head + leaves]:
            head += 1
        hj = job_at[head]
        if res_head != hj or not has_res or shadow < now:
            head_nodes = nodes_of[hj]
            head_per_node = per_node[hj]
            has_res, shadow, flagged = _reserve(
                free, cnt, g, managed, now, head_nodes, head_per_node, running, n_running,
                shift, low_mask, node_off, node_list, per_node, cap_t, cap_n, projected, flag)
            spare = flagged - head_nodes if head_nodes > 1 else flagged - 1
            spare0 = spare
            flagw[:] = 0
            for k in range(n_nodes):
                if flag[k]:
                    flagw[k // WORD] |= np.int64(1) << (k % WORD)
                    flag_hi = k
            res_head = hj
        if not has_res:
            continue
        top = (head + leaves) >> _bit_length(head ^ (next_pos - 1))
        pos = head
        stale = True
        allowed = 0
        refused = 0
        while True:
            if stale:
                # shapes some placement may start past the shadow time (recomputed after a start)
                present = keys_tree[1] & fit
                allowed = 0
                verdict[:] = -1
                while present:
                    b = present & -present
                    present ^= b
                    s = bit_shape[_ctz(b)]
                    if verdict[s] < 0:
                        verdict[s] = 1 if _may_allow(exact, cnt, g, shape_nodes[s],
                                                shape_per_node[s], head_nodes, head_per_node,
                                                spare, spare0, flagged, flag_hi, flagw,
                                                projected) else 0
                    if verdict[s]:
                        allowed |= b
                stale = False
                refused = 0  # combination bits whose choice the reservation refused
            pos = _search(pos + leaves, fit, allowed, shadow - now, top, leaves, keys_tree,
                          min_est)
            if pos < 0:
                break
            j = job_at[pos]
            bj = bit[j]
            if refused & bj and now + _scaled(estimate[j], refused_f[_ctz(bj)]) > shadow:
                continue  # its combination's choice, refused: the same verdict
            count = nodes_of[j]
            p = per_node[j]
            bi = _ctz(bj)
            lo = memo_off[bi]
            if memo_gen[bi] == gen:  # its combination's choice and factor in this state
                chosen[:count] = memo_nodes[lo:lo + count]
                gpus = memo_gpus[bi]
                f = memo_f[bi]
            else:
                gpus = _choose(pol, j, shape_index[j], g, exact, cnt, gpu_free, aux, score,
                               count, p, has_factor, kernel, params, keys, chosen, gen, mt,
                               scratch, drawn_gen, drawn_gpus, drawn_nodes, drawn_off)
                f = factor(j, chosen, count, gpus, aux, score, has_factor, kernel, params, keys)
                if not (f > 0 and f != np.inf):
                    return (BAD_FACTOR, start, node_off, node_list, gpu_set, run_actual,
                            est_actual, empty, empty, empty, j, f)
                if memo_off[bi + 1] - lo == count:  # a combination's bit (not too wide)
                    memo_gen[bi] = gen
                    memo_nodes[lo:lo + count] = chosen[:count]
                    memo_gpus[bi] = gpus
                    memo_f[bi] = f
            e = _scaled(estimate[j], f)
            if now + e > shadow:
                if not _allows(head_nodes, head_per_node, spare, flagged, projected, flag,
                               chosen, count, p):
                    if bit_combo[bi]:
                        if f >= bit_lower[bi]:
                            allowed &= ~bj
                        else:
                            refused |= bj
                            refused_f[bi] = f
                    continue
                # ``Reservation.commit``
                for qq in range(count):
                    k = chosen[qq]
                    b = np.int64(1) << (k % WORD)
                    if head_nodes > 1:
                        if flag[k]:
                            flag[k] = False
                            flagw[k // WORD] &= ~b
                            spare -= 1
                    else:
                        projected[k] -= p
                        if projected[k] < head_per_node and flag[k]:
                            flag[k] = False
                            flagw[k // WORD] &= ~b
                            flagged -= 1
            _dequeue(pos, leaves, keys_tree, min_est)
            waiting -= 1
            status, n_ends, n_running = _start(
                j, now, f, gpus, pol, g, exact, cnt, free, gpu_free, aux, chosen, nodes_of,
                per_node, runtime, estimate, run_actual, est_actual, start, node_off, node_list,
                gpu_set, ends, n_ends, running, n_running, est_key, shift, key_limit)
            if status != OK:
                return (status, start, node_off, node_list, gpu_set, run_actual, est_actual,
                        empty, empty, empty, j, f)
            gen += 1
            bound = _fit_bound(cnt, g)
            if not bound:
                break
            fit = fit_masks[np.searchsorted(distinct, bound, side="right")]
            stale = True
    return (OK, start, node_off, node_list, gpu_set, run_actual, est_actual,
            dropped_j[:n_dropped], dropped_reach[:n_dropped], dropped_at[:n_dropped], -1,
            no_f.sum())
