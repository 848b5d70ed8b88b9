"""``engine_gpu.run_gpu``'s fast path compiled with numba: the same event loop on GPU nodes.

The pure-Python ``run_gpu`` stays the reference (and the path for small workloads and for the
general path with placement plug-ins); this module is the compiled twin of its fast path (the
model's first-fit / best-fit, recorded run times) for large workloads. Python's unbounded bit
sets become arrays: ``GpuState.exact[f]`` (the managed nodes with exactly ``f`` free GPUs) is a
row of 32-bit words per ``f`` with a count per row, so a site of any width (ABCI's 1,088 nodes)
fits; a job's node set is a slice of one flat node list (``node_off``); the reservation's node
sets are flags per node. The GPUs of a node stay a bit set in an int64 (up to 62 GPUs per node);
the waiting queue's shape sets are bits of an int64 (up to 62 distinct job sizes; the caller
checks, ``engine_gpu.compiled_fits``). ``tests/test_replay_engine_gpu_jit.py`` checks that both
give the same start times, node sets, GPU sets and dropped jobs, job for job.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swftools.replay.engine_flat_jit import (_bit_length, _heap_pop, _record_start,
                                             _sorted_remove)

INFINITY = 1 << 62
WORD = 32  # nodes per word of a node bit set (positive int64 words: x & -x stays exact)
WORD_MASK = (1 << WORD) - 1


@njit(cache=True)
def _ctz(x):  # pragma: no cover - compiled
    """Index of the lowest set bit of ``x`` (> 0)."""
    n = 0
    if not x & 0xFFFFFFFF:
        n += 32
        x >>= 32
    if not x & 0xFFFF:
        n += 16
        x >>= 16
    if not x & 0xFF:
        n += 8
        x >>= 8
    if not x & 0xF:
        n += 4
        x >>= 4
    if not x & 0x3:
        n += 2
        x >>= 2
    if not x & 0x1:
        n += 1
    return n


@njit(cache=True)
def _popcount(x):  # pragma: no cover - compiled
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@njit(cache=True)
def _lowest_bits(mask, count):  # pragma: no cover - compiled
    """``model.lowest_bits``: the ``count`` lowest set bits of ``mask``."""
    chosen = 0
    for _ in range(count):
        low = mask & -mask
        chosen |= low
        mask ^= low
    return chosen


@njit(cache=True)
def _move(exact, cnt, k, f_from, f_to):  # pragma: no cover - compiled
    """Node ``k`` (managed) goes from ``exact[f_from]`` to ``exact[f_to]``."""
    w = k // WORD
    b = 1 << (k % WORD)
    exact[f_from, w] ^= b
    cnt[f_from] -= 1
    exact[f_to, w] |= b
    cnt[f_to] += 1


@njit(cache=True)
def _set_capacity(exact, cnt, free, managed, nodes):  # pragma: no cover - compiled
    """``GpuState.set_capacity``: manage nodes ``0 .. nodes - 1``; returns the new count."""
    for k in range(nodes, managed):
        f = free[k]
        exact[f, k // WORD] &= ~(1 << (k % WORD))
        cnt[f] -= 1
    for k in range(managed, nodes):
        f = free[k]
        exact[f, k // WORD] |= 1 << (k % WORD)
        cnt[f] += 1
    return nodes


@njit(cache=True)
def _fit_bound(cnt, g):  # pragma: no cover - compiled
    """``GpuState.fit_bound``."""
    if cnt[g]:
        return cnt[g] * g
    for f in range(g - 1, 0, -1):
        if cnt[f]:
            return f
    return 0


@njit(cache=True)
def _place(exact, cnt, g, best_fit, nodes, per_node, out):  # pragma: no cover - compiled
    """``GpuState.place``: writes the chosen nodes (ascending) into ``out``."""
    words = exact.shape[1]
    if nodes > 1:
        c = 0
        for w in range(words):
            m = exact[g, w]
            while m and c < nodes:
                low = m & -m
                m ^= low
                out[c] = w * WORD + _ctz(low)
                c += 1
            if c == nodes:
                break
        return
    if best_fit:
        for f in range(per_node, g + 1):
            if cnt[f]:
                for w in range(words):
                    m = exact[f, w]
                    if m:
                        out[0] = w * WORD + _ctz(m & -m)
                        return
    for w in range(words):
        m = 0
        for f in range(per_node, g + 1):
            m |= exact[f, w]
        if m:
            out[0] = w * WORD + _ctz(m & -m)
            return


@njit(cache=True)
def _reserve(free, cnt, g, managed, now, head_nodes, head_per_node, running, n_running,
             shift, low_mask, node_off, node_list, per_node, cap_t, cap_n,
             projected, flag):  # pragma: no cover - compiled
    """``model.gpu_reservation``: fills ``projected`` (free GPUs per node at the shadow time) and
    ``flag`` (the nodes the head can use then); returns (found, shadow, flagged count)."""
    n_nodes = free.shape[0]
    for k in range(n_nodes):
        projected[k] = free[k]
    c = np.searchsorted(cap_t, now, side="right")
    n_changes = cap_t.shape[0]
    threshold = g if head_nodes > 1 else head_per_node
    counted = 0
    for f in range(threshold, g + 1):
        counted += cnt[f]
    i = 0
    t = now
    while True:
        while i < n_running:
            key = running[i]
            if key >> shift > t:
                break
            j = key & low_mask
            p = per_node[j]
            for q in range(node_off[j], node_off[j + 1]):
                k = node_list[q]
                before = projected[k]
                projected[k] = before + p
                if before < threshold and threshold <= before + p and k < managed:
                    counted += 1
            i += 1
        if c < n_changes and cap_t[c] <= t:
            while c < n_changes and cap_t[c] <= t:
                managed = cap_n[c]
                c += 1
            counted = 0
            for k in range(managed):
                if projected[k] >= threshold:
                    counted += 1
        if counted >= head_nodes:
            flagged = 0
            for k in range(n_nodes):
                ok = k < managed and projected[k] >= threshold
                flag[k] = ok
                if ok:
                    flagged += 1
            return True, t, flagged
        t_next = INFINITY
        if i < n_running:
            t_next = running[i] >> shift
        if c < n_changes and cap_t[c] < t_next:
            t_next = cap_t[c]
        if t_next == INFINITY:
            return False, t, 0
        t = t_next


@njit(cache=True)
def _allows(head_nodes, head_per_node, spare, flagged, projected, flag, chosen, count,
            per_node):  # pragma: no cover - compiled
    """``Reservation.allows`` for the nodes ``chosen[:count]``."""
    if head_nodes > 1:
        taken = 0
        for q in range(count):
            if flag[chosen[q]]:
                taken += 1
        return taken <= spare
    left = flagged
    for q in range(count):
        k = chosen[q]
        if flag[k] and projected[k] - per_node < head_per_node:
            left -= 1
    return left > 0


# deliberate twins of engine_flat_jit's _search and _dequeue (shape bit masks here, min sizes
# there), as in the Python engines
@njit(cache=True)
def _search(i, fit, allowed, window, top, leaves, keys, min_est):  # pragma: no cover
    """``run_gpu``'s ``search``, compiled (always resuming after node ``i``'s subtree)."""
    resume = True
    while True:
        if resume:
            while True:
                if i <= top:
                    return -1
                if i & 1:
                    i >>= 1
                    continue
                i += 1
                k = keys[i]
                if k & allowed or (k & fit and min_est[i] <= window):
                    break
        if i >= leaves:
            return i - leaves
        i <<= 1
        k = keys[i]
        if k & allowed or (k & fit and min_est[i] <= window):
            resume = False
            continue
        i += 1
        k = keys[i]
        resume = not (k & allowed or (k & fit and min_est[i] <= window))


@njit(cache=True)
def _dequeue(pos, leaves, keys, min_est):  # pragma: no cover - compiled
    i = pos + leaves
    keys[i] = 0
    min_est[i] = INFINITY
    i >>= 1
    while i:
        left = i << 1
        k = keys[left] | keys[left + 1]
        a = min_est[left]
        b = min_est[left + 1]
        e = a if a < b else b
        if keys[i] == k and min_est[i] == e:
            break
        keys[i] = k
        min_est[i] = e
        i >>= 1


@njit(cache=True)
def _take(exact, cnt, free, gpu_free, chosen, count, per_node):  # pragma: no cover - compiled
    """``GpuState.take``: allocate on ``chosen[:count]``; returns the GPU set (of the last)."""
    gpus = 0
    for q in range(count):
        k = chosen[q]
        f = free[k]
        _move(exact, cnt, k, f, f - per_node)
        free[k] = f - per_node
        gpus = _lowest_bits(gpu_free[k], per_node)
        gpu_free[k] ^= gpus
    return gpus


@njit(cache=True)
def _enqueue(pos, j, leaves, keys, min_est, job_at, b, e):  # pragma: no cover - compiled
    """Job ``j`` (shape bit ``b``, estimate ``e``) joins the queue at position ``pos``."""
    job_at[pos] = j
    t = pos + leaves
    keys[t] = b
    min_est[t] = e
    t >>= 1
    while t:
        changed = False
        if not keys[t] & b:
            keys[t] |= b
            changed = True
        if min_est[t] > e:
            min_est[t] = e
            changed = True
        if not changed:
            break
        t >>= 1


@njit(cache=True)
def _start_on(j, now, count, exact, cnt, free, gpu_free, per_node, runtime, estimate, chosen,
              node_off, node_list, gpu_set, start, ends, n_ends, running, n_running, est_key,
              shift):  # pragma: no cover - compiled
    """Start ``j`` now on the nodes ``chosen[:count]``; returns the new heap and list sizes."""
    gpu_set[j] = _take(exact, cnt, free, gpu_free, chosen, count, per_node[j])
    node_list[node_off[j]:node_off[j + 1]] = chosen[:count]
    return _record_start(j, now, runtime, estimate, start, ends, n_ends, running, n_running,
                         est_key, shift)


@njit(cache=True)
def _launch(j, now, exact, cnt, g, best_fit, free, gpu_free, nodes_of, per_node, runtime,
            estimate, chosen, node_off, node_list, gpu_set, start, ends, n_ends, running,
            n_running, est_key, shift):  # pragma: no cover - compiled
    """``run_gpu``'s ``launch``: place ``j`` by the model's rule and start it now."""
    count = nodes_of[j]
    _place(exact, cnt, g, best_fit, count, per_node[j], chosen)
    return _start_on(j, now, count, exact, cnt, free, gpu_free, per_node, runtime, estimate,
                     chosen, node_off, node_list, gpu_set, start, ends, n_ends, running,
                     n_running, est_key, shift)


@njit(cache=True)
def _timeline(cap_t, cap_n, t0, managed):  # pragma: no cover - compiled
    """The capacity changes after ``t0``: (their instants with ``INFINITY`` appended, their node
    counts, the largest count from each on, their number, the largest count ever reachable)."""
    first = np.searchsorted(cap_t, t0, side="right")
    n_changes = len(cap_t) - first
    change_at = np.empty(n_changes + 1, np.int64)
    change_at[:n_changes] = cap_t[first:]
    change_at[n_changes] = INFINITY
    change_nodes = cap_n[first:]
    future_max = change_nodes.copy()
    for k in range(n_changes - 2, -1, -1):
        if future_max[k + 1] > future_max[k]:
            future_max[k] = future_max[k + 1]
    reach = managed
    if n_changes and future_max[0] > reach:
        reach = future_max[0]
    return change_at, change_nodes, future_max, n_changes, reach


@njit(cache=True)
def _job_arrays(nodes_of):  # pragma: no cover - compiled
    """Per-job outputs and the loop's structures for ``len(nodes_of)`` jobs: (start, node_off,
    node_list, gpu_set, dropped job / reach / instant, key shift, its mask, end heap, running
    list, estimate keys, segment tree leaves, its shape keys and minimum estimates, job_at).
    (np.empty: written before read; untouched pages cost no memory.)"""
    n = len(nodes_of)
    start = np.zeros(n, np.int64)
    node_off = np.zeros(n + 1, np.int64)
    for j in range(n):
        node_off[j + 1] = node_off[j] + nodes_of[j]
    node_list = np.zeros(node_off[n], np.int64)
    gpu_set = np.zeros(n, np.int64)
    dropped_j = np.empty(n, np.int64)
    dropped_reach = np.empty(n, np.int64)
    dropped_at = np.empty(n, np.int64)
    shift = max(1, _bit_length(n))
    low_mask = (1 << shift) - 1
    ends = np.empty(n, np.int64)
    running = np.empty(n, np.int64)
    est_key = np.empty(n, np.int64)
    leaves = 1 << max(1, _bit_length(n - 1))
    keys = np.zeros(2 * leaves, np.int64)
    min_est = np.full(2 * leaves, INFINITY, np.int64)
    job_at = np.empty(n, np.int64)
    return (start, node_off, node_list, gpu_set, dropped_j, dropped_reach, dropped_at, shift,
            low_mask, ends, running, est_key, leaves, keys, min_est, job_at)


@njit(cache=True)
def run_gpu_compiled(submit, runtime, size, estimate, nodes_of, per_node, bit, distinct,
                     fit_masks, shape_nodes, shape_per_node, g, n_nodes, best_fit, easy,
                     cap_t, cap_n, nodes_t0):  # pragma: no cover - compiled
    """``engine_gpu.run_gpu``'s fast path; int64 arrays in, in queue order.

    ``bit``: each job's shape bit (``1 << index`` of its size in ``distinct``, the sorted
    distinct sizes); ``fit_masks[i]``: the bits of the ``i`` smallest sizes; ``shape_nodes``,
    ``shape_per_node``: the node shape of each distinct size; ``cap_t``, ``cap_n``: the capacity
    timeline; ``nodes_t0``: nodes managed at the first submission. Returns (start, node_off,
    node_list, gpu_set, dropped job, dropped reach, dropped instant); a job's nodes are
    ``node_list[node_off[j]:node_off[j + 1]]`` (ascending).
    """
    n = len(submit)
    words = (n_nodes + WORD - 1) // WORD
    exact = np.zeros((g + 1, words), np.int64)
    cnt = np.zeros(g + 1, np.int64)
    free = np.full(n_nodes, g, np.int64)
    gpu_free = np.full(n_nodes, (1 << g) - 1, np.int64)
    managed = _set_capacity(exact, cnt, free, 0, nodes_t0)

    change_at, change_nodes, future_max, n_changes, reach = _timeline(cap_t, cap_n, submit[0],
                                                                      managed)
    i_change = 0
    (start, node_off, node_list, gpu_set, dropped_j, dropped_reach, dropped_at, shift, low_mask,
     ends, running, est_key, leaves, keys, min_est, job_at) = _job_arrays(nodes_of)
    n_dropped = 0
    n_ends = 0
    n_running = 0
    next_pos = 0
    head = 0
    waiting = 0
    res_head = -1
    has_res = False
    shadow = 0
    spare = 0
    flagged = 0
    head_nodes = 0
    head_per_node = 0
    projected = np.zeros(n_nodes, np.int64)
    flag = np.zeros(n_nodes, np.bool_)
    chosen = np.zeros(max(n_nodes, 1), np.int64)

    i_sub = 0
    while i_sub < n or n_ends or waiting:
        now = submit[i_sub] if i_sub < n else INFINITY
        if n_ends and ends[0] >> shift < now:
            now = ends[0] >> shift
        if waiting and change_at[i_change] < now:
            now = change_at[i_change]
        while change_at[i_change] <= now:
            managed = _set_capacity(exact, cnt, free, managed, change_nodes[i_change])
            i_change += 1
            reach = future_max[i_change] if i_change < n_changes else managed
            if managed > reach:
                reach = managed
            res_head = -1
        while n_ends and ends[0] >> shift == now:
            key, n_ends = _heap_pop(ends, n_ends)
            j = key & low_mask
            p = per_node[j]
            gpus = gpu_set[j]
            for q in range(node_off[j], node_off[j + 1]):
                k = node_list[q]
                f = free[k]
                free[k] = f + p
                gpu_free[k] |= gpus
                if k < managed:
                    _move(exact, cnt, k, f, f + p)
            n_running = _sorted_remove(running, n_running, est_key[j])
            res_head = -1
        first_arrival = i_sub
        while i_sub < n and submit[i_sub] == now:
            i_sub += 1
        if not waiting and first_arrival == i_sub:
            continue

        # 1. start from the head while it fits; drop a head that can never fit again
        bound = _fit_bound(cnt, g)
        while waiting:
            while not keys[head + leaves]:
                head += 1
            j = job_at[head]
            if size[j] <= bound:
                _dequeue(head, leaves, keys, min_est)
                waiting -= 1
                n_ends, n_running = _launch(j, now, exact, cnt, g, best_fit, free, gpu_free,
                                            nodes_of, per_node, runtime, estimate, chosen,
                                            node_off, node_list, gpu_set, start, ends, n_ends,
                                            running, n_running, est_key, shift)
                bound = _fit_bound(cnt, g)
            elif nodes_of[j] > reach:
                _dequeue(head, leaves, keys, min_est)
                waiting -= 1
                dropped_j[n_dropped] = j
                dropped_reach[n_dropped] = reach
                dropped_at[n_dropped] = now
                n_dropped += 1
            else:
                break
        for j in range(first_arrival, i_sub):
            if not waiting:
                if size[j] <= bound:
                    n_ends, n_running = _launch(j, now, exact, cnt, g, best_fit, free, gpu_free,
                                                nodes_of, per_node, runtime, estimate, chosen,
                                                node_off, node_list, gpu_set, start, ends,
                                                n_ends, running, n_running, est_key, shift)
                    bound = _fit_bound(cnt, g)
                    continue
                if nodes_of[j] > reach:
                    dropped_j[n_dropped] = j
                    dropped_reach[n_dropped] = reach
                    dropped_at[n_dropped] = now
                    n_dropped += 1
                    continue
            _enqueue(next_pos, j, leaves, keys, min_est, job_at, bit[j], estimate[j])
            next_pos += 1
            waiting += 1
        if not (easy and waiting) or not bound:
            continue
        fit = fit_masks[np.searchsorted(distinct, bound, side="right")]
        if not keys[1] & fit:
            continue

        # 2. EASY backfilling behind the blocked head
        while not keys[head + leaves]:
            head += 1
        hj = job_at[head]
        if res_head != hj or not has_res or shadow < now:
            head_nodes = nodes_of[hj]
            head_per_node = per_node[hj]
            has_res, shadow, flagged = _reserve(
                free, cnt, g, managed, now, head_nodes, head_per_node, running, n_running,
                shift, low_mask, node_off, node_list, per_node, cap_t, cap_n, projected, flag)
            spare = flagged - head_nodes if head_nodes > 1 else flagged - 1
            res_head = hj
        if not has_res:
            continue
        top = (head + leaves) >> _bit_length(head ^ (next_pos - 1))
        pos = head
        while True:
            present = keys[1] & fit
            allowed = 0
            while present:
                b = present & -present
                present ^= b
                s = _ctz(b)
                count = shape_nodes[s]
                _place(exact, cnt, g, best_fit, count, shape_per_node[s], chosen)
                if _allows(head_nodes, head_per_node, spare, flagged, projected, flag, chosen,
                           count, shape_per_node[s]):
                    allowed |= b
            pos = _search(pos + leaves, fit, allowed, shadow - now, top, leaves, keys, min_est)
            if pos < 0:
                break
            j = job_at[pos]
            count = nodes_of[j]
            p = per_node[j]
            _place(exact, cnt, g, best_fit, count, p, chosen)
            if now + estimate[j] > shadow:  # ``Reservation.commit``
                if head_nodes > 1:
                    for q in range(count):
                        k = chosen[q]
                        if flag[k]:
                            flag[k] = False
                            spare -= 1
                else:
                    for q in range(count):
                        k = chosen[q]
                        projected[k] -= p
                        if projected[k] < head_per_node and flag[k]:
                            flag[k] = False
                            flagged -= 1
            _dequeue(pos, leaves, keys, min_est)
            waiting -= 1
            n_ends, n_running = _start_on(j, now, count, exact, cnt, free, gpu_free, per_node,
                                          runtime, estimate, chosen, node_off, node_list,
                                          gpu_set, start, ends, n_ends, running, n_running,
                                          est_key, shift)
            bound = _fit_bound(cnt, g)
            if not bound:
                break
            fit = fit_masks[np.searchsorted(distinct, bound, side="right")]
    return (start, node_off, node_list, gpu_set, dropped_j[:n_dropped],
            dropped_reach[:n_dropped], dropped_at[:n_dropped])
