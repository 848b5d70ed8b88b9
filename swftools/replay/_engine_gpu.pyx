"""``engine_gpu.run_gpu``'s fast path compiled: the same event loop on GPU nodes.

The pure-Python ``run_gpu`` stays the reference (and the path for small workloads and for the
general path with placement plug-ins); this is the compiled twin of its fast path (the model's
first-fit / best-fit, recorded run times) for large workloads. Python's unbounded bit sets
become arrays: ``GpuState.exact[f]`` (the managed nodes with exactly ``f`` free GPUs) is a row
of 32-bit words per ``f`` (``exact[f * words + w]``) with a count per row, so a site of any
width (ABCI's 1,088 nodes) fits; a job's node set is a slice of one flat node list
(``node_off``); the reservation's node sets are flags per node. The GPUs of a node stay a bit
set in an int64 (up to 62 GPUs per node); the waiting queue's shape sets are bits of an int64
(up to 62 distinct job sizes; the caller checks, ``engine_gpu.compiled_fits``).
``tests/test_replay_engine_gpu_jit.py`` checks that both give the same start times, node sets,
GPU sets and dropped jobs, job for job.
"""

import numpy as np

from libc.stdint cimport int64_t

from swftools.replay._bits cimport bit_length, ctz, lowest_bits
from swftools.replay._loop cimport (INFINITY, allows, fit_bound, heap_pop, record_start, reserve,
                                    search_right, sorted_remove)

cdef enum:
    WORD = 32  # nodes per word of a node bit set (positive int64 words: x & -x stays exact)


cdef inline void _move(int64_t* exact, int64_t words, int64_t* cnt, int64_t k, int64_t f_from,
                       int64_t f_to) noexcept nogil:
    """Node ``k`` (managed) goes from ``exact[f_from]`` to ``exact[f_to]``."""
    cdef int64_t w = k // WORD
    cdef int64_t b = (<int64_t>1) << (k % WORD)
    exact[f_from * words + w] ^= b
    cnt[f_from] -= 1
    exact[f_to * words + w] |= b
    cnt[f_to] += 1


cdef inline int64_t _set_capacity(int64_t* exact, int64_t words, int64_t* cnt,
                                  const int64_t* free, int64_t managed,
                                  int64_t nodes) noexcept nogil:
    """``GpuState.set_capacity``: manage nodes ``0 .. nodes - 1``; returns the new count."""
    cdef int64_t k, f
    for k in range(nodes, managed):
        f = free[k]
        exact[f * words + k // WORD] &= ~((<int64_t>1) << (k % WORD))
        cnt[f] -= 1
    for k in range(managed, nodes):
        f = free[k]
        exact[f * words + k // WORD] |= (<int64_t>1) << (k % WORD)
        cnt[f] += 1
    return nodes


cdef inline void _place(const int64_t* exact, int64_t words, const int64_t* cnt, int64_t g,
                        bint best_fit, int64_t nodes, int64_t per_node,
                        int64_t* out) noexcept nogil:
    """``GpuState.place``: writes the chosen nodes (ascending) into ``out``."""
    cdef int64_t c, w, m, low, f
    if nodes > 1:
        c = 0
        for w in range(words):
            m = exact[g * words + w]
            while m and c < nodes:
                low = m & -m
                m ^= low
                out[c] = w * WORD + ctz(low)
                c += 1
            if c == nodes:
                break
        return
    if best_fit:
        for f in range(per_node, g + 1):
            if cnt[f]:
                for w in range(words):
                    m = exact[f * words + w]
                    if m:
                        out[0] = w * WORD + ctz(m & -m)
                        return
    for w in range(words):
        m = 0
        for f in range(per_node, g + 1):
            m |= exact[f * words + w]
        if m:
            out[0] = w * WORD + ctz(m & -m)
            return


cdef inline void _dequeue(int64_t pos, int64_t leaves, int64_t* keys,
                          int64_t* min_est) noexcept nogil:
    cdef int64_t i = pos + leaves, left, k, a, b, e
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


cdef inline void _enqueue(int64_t pos, int64_t j, int64_t leaves, int64_t* keys,
                          int64_t* min_est, int64_t* job_at, int64_t b,
                          int64_t e) noexcept nogil:
    """Job ``j`` (shape bit ``b``, estimate ``e``) joins the queue at position ``pos``."""
    cdef int64_t t = pos + leaves
    cdef bint changed
    job_at[pos] = j
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


cdef struct Loop:
    # the state the helpers below share: the node state and the per-job outputs
    int64_t* exact
    int64_t words
    int64_t* cnt
    int64_t* free
    int64_t* gpu_free
    int64_t g
    bint best_fit
    const int64_t* nodes_of
    const int64_t* per_node
    const int64_t* runtime
    const int64_t* estimate
    int64_t* chosen
    const int64_t* node_off
    int64_t* node_list
    int64_t* gpu_set
    int64_t* start
    int64_t* ends
    int64_t n_ends
    int64_t* running
    int64_t n_running
    int64_t* est_key
    int64_t shift


cdef inline void _start_on(Loop* s, int64_t j, int64_t now, int64_t count) noexcept nogil:
    """Start ``j`` now on the nodes ``chosen[:count]`` (``GpuState.take``: the GPU set is the
    last node's)."""
    cdef int64_t gpus = 0, q, k, f, p = s.per_node[j]
    for q in range(count):
        k = s.chosen[q]
        f = s.free[k]
        _move(s.exact, s.words, s.cnt, k, f, f - p)
        s.free[k] = f - p
        gpus = lowest_bits(s.gpu_free[k], p)
        s.gpu_free[k] ^= gpus
    s.gpu_set[j] = gpus
    for q in range(count):
        s.node_list[s.node_off[j] + q] = s.chosen[q]
    record_start(j, now, s.runtime, s.estimate, s.start, s.ends, &s.n_ends, s.running,
                 &s.n_running, s.est_key, s.shift)


cdef inline void _launch(Loop* s, int64_t j, int64_t now) noexcept nogil:
    """``run_gpu``'s ``launch``: place ``j`` by the model's rule and start it now."""
    cdef int64_t count = s.nodes_of[j]
    _place(s.exact, s.words, s.cnt, s.g, s.best_fit, count, s.per_node[j], s.chosen)
    _start_on(s, j, now, count)


cdef inline int64_t _search(int64_t i, int64_t fit, int64_t allowed, int64_t window,
                            int64_t top, int64_t leaves, const int64_t* keys,
                            const int64_t* min_est) noexcept nogil:
    """``run_gpu``'s ``search`` (always resuming after node ``i``'s subtree)."""
    cdef bint resume = True
    cdef int64_t k
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


def run_gpu_compiled(const int64_t[::1] submit, const int64_t[::1] runtime,
                     const int64_t[::1] size, const int64_t[::1] estimate,
                     const int64_t[::1] nodes_of, const int64_t[::1] per_node,
                     const int64_t[::1] bit, const int64_t[::1] distinct,
                     const int64_t[::1] fit_masks, const int64_t[::1] shape_nodes,
                     const int64_t[::1] shape_per_node, int64_t g, int64_t n_nodes,
                     bint best_fit, bint easy, const int64_t[::1] cap_t,
                     const int64_t[::1] cap_n, int64_t nodes_t0):
    """``engine_gpu.run_gpu``'s fast path; int64 arrays in, in queue order.

    ``bit``: each job's shape bit (``1 << index`` of its size in ``distinct``, the sorted
    distinct sizes); ``fit_masks[i]``: the bits of the ``i`` smallest sizes; ``shape_nodes``,
    ``shape_per_node``: the node shape of each distinct size; ``cap_t``, ``cap_n``: the capacity
    timeline; ``nodes_t0``: nodes managed at the first submission. Returns (start, node_off,
    node_list, gpu_set, dropped job, dropped reach, dropped instant); a job's nodes are
    ``node_list[node_off[j]:node_off[j + 1]]`` (ascending).
    """
    cdef int64_t n = submit.shape[0], j, k, q
    cdef int64_t words = (n_nodes + WORD - 1) // WORD
    # arrays with a spare element: a pointer to element 0 of an empty one stays valid
    exact_a = np.zeros((g + 1) * words + 1, np.int64)
    cnt_a = np.zeros(g + 2, np.int64)
    free_a = np.full(n_nodes + 1, g, np.int64)
    gpu_free_a = np.full(n_nodes + 1, ((<int64_t>1) << g) - 1, np.int64)
    start_a = np.zeros(n, np.int64)
    node_off_a = np.zeros(n + 1, np.int64)
    for j in range(n):
        node_off_a[j + 1] = node_off_a[j] + nodes_of[j]
    node_list_a = np.zeros(node_off_a[n] + 1, np.int64)
    gpu_set_a = np.zeros(n + 1, np.int64)
    dropped_a = np.empty((3, n + 1), np.int64)  # job, reach, instant
    cdef int64_t shift = max(1, bit_length(n))
    cdef int64_t low_mask = ((<int64_t>1) << shift) - 1
    cdef int64_t leaves = (<int64_t>1) << max(1, bit_length(n - 1))
    ends_a = np.empty(n + 1, np.int64)
    running_a = np.empty(n + 1, np.int64)
    est_key_a = np.empty(n + 1, np.int64)
    keys_a = np.zeros(2 * leaves, np.int64)
    min_est_a = np.full(2 * leaves, INFINITY, np.int64)
    job_at_a = np.empty(n + 1, np.int64)
    projected_a = np.zeros(n_nodes + 1, np.int64)
    flag_a = np.zeros(n_nodes + 1, np.int8)
    chosen_a = np.zeros(max(n_nodes, 1), np.int64)

    cdef int64_t[::1] exact_v = exact_a, cnt_v = cnt_a, free_v = free_a
    cdef int64_t[::1] gpu_free_v = gpu_free_a, start_v = start_a, node_off_v = node_off_a
    cdef int64_t[::1] node_list_v = node_list_a, gpu_set_v = gpu_set_a
    cdef int64_t[:, ::1] dropped = dropped_a
    cdef int64_t[::1] ends_v = ends_a, running_v = running_a, est_key_v = est_key_a
    cdef int64_t[::1] keys_v = keys_a, min_est_v = min_est_a, job_at_v = job_at_a
    cdef int64_t[::1] projected_v = projected_a, chosen_v = chosen_a
    cdef signed char[::1] flag_v = flag_a
    cdef Loop s
    s.exact = &exact_v[0]
    s.words = words
    s.cnt = &cnt_v[0]
    s.free = &free_v[0]
    s.gpu_free = &gpu_free_v[0]
    s.g = g
    s.best_fit = best_fit
    s.nodes_of = &nodes_of[0] if n else NULL
    s.per_node = &per_node[0] if n else NULL
    s.runtime = &runtime[0] if n else NULL
    s.estimate = &estimate[0] if n else NULL
    s.chosen = &chosen_v[0]
    s.node_off = &node_off_v[0]
    s.node_list = &node_list_v[0]
    s.gpu_set = &gpu_set_v[0]
    s.start = &start_v[0] if n else NULL
    s.ends = &ends_v[0]
    s.n_ends = 0
    s.running = &running_v[0]
    s.n_running = 0
    s.est_key = &est_key_v[0]
    s.shift = shift
    cdef int64_t* keys = &keys_v[0]
    cdef int64_t* min_est = &min_est_v[0]
    cdef int64_t* job_at = &job_at_v[0]
    cdef int64_t* projected = &projected_v[0]
    cdef char* flag = <char*>&flag_v[0]
    cdef int64_t n_cap = cap_t.shape[0]
    cdef const int64_t* cap_t_p = &cap_t[0] if n_cap else NULL
    cdef const int64_t* cap_n_p = &cap_n[0] if n_cap else NULL
    cdef int64_t n_distinct = distinct.shape[0]
    if n == 0:
        return (start_a, node_off_a, node_list_a[:0], gpu_set_a[:0], dropped_a[0, :0].copy(),
                dropped_a[1, :0].copy(), dropped_a[2, :0].copy())
    cdef int64_t managed = _set_capacity(s.exact, words, s.cnt, s.free, 0, nodes_t0)

    # the capacity changes after the first submission, INFINITY appended; their node counts;
    # the largest count from each on; the largest count ever reachable
    cdef int64_t first = search_right(cap_t_p, n_cap, submit[0])
    cdef int64_t n_changes = n_cap - first
    change_at_a = np.empty(n_changes + 1, np.int64)
    change_at_a[:n_changes] = cap_t[first:]
    change_at_a[n_changes] = INFINITY
    change_nodes_a = np.empty(n_changes + 1, np.int64)
    change_nodes_a[:n_changes] = cap_n[first:]
    future_max_a = change_nodes_a.copy()
    cdef int64_t[::1] change_at = change_at_a, change_nodes = change_nodes_a
    cdef int64_t[::1] future_max = future_max_a
    for k in range(n_changes - 2, -1, -1):
        if future_max[k + 1] > future_max[k]:
            future_max[k] = future_max[k + 1]
    cdef int64_t reach = managed
    if n_changes and future_max[0] > reach:
        reach = future_max[0]

    cdef int64_t i_change = 0, n_dropped = 0, next_pos = 0, head = 0, waiting = 0
    cdef int64_t res_head = -1, shadow = 0, spare = 0, flagged = 0
    cdef int64_t head_nodes = 0, head_per_node = 0
    cdef bint has_res = False
    cdef int64_t i_sub = 0, now, key, p, gpus, f, first_arrival, bound, fit, hj, top, pos
    cdef int64_t present, allowed, b, sh, count
    with nogil:
        while i_sub < n or s.n_ends or waiting:
            now = submit[i_sub] if i_sub < n else INFINITY
            if s.n_ends and s.ends[0] >> shift < now:
                now = s.ends[0] >> shift
            if waiting and change_at[i_change] < now:
                now = change_at[i_change]
            while change_at[i_change] <= now:
                managed = _set_capacity(s.exact, words, s.cnt, s.free, managed,
                                        change_nodes[i_change])
                i_change += 1
                reach = future_max[i_change] if i_change < n_changes else managed
                if managed > reach:
                    reach = managed
                res_head = -1
            while s.n_ends and s.ends[0] >> shift == now:
                key = heap_pop(s.ends, &s.n_ends)
                j = key & low_mask
                p = s.per_node[j]
                gpus = s.gpu_set[j]
                for q in range(s.node_off[j], s.node_off[j + 1]):
                    k = s.node_list[q]
                    f = s.free[k]
                    s.free[k] = f + p
                    s.gpu_free[k] |= gpus
                    if k < managed:
                        _move(s.exact, words, s.cnt, k, f, f + p)
                s.n_running = sorted_remove(s.running, s.n_running, s.est_key[j])
                res_head = -1
            first_arrival = i_sub
            while i_sub < n and submit[i_sub] == now:
                i_sub += 1
            if not waiting and first_arrival == i_sub:
                continue

            # 1. start from the head while it fits; drop a head that can never fit again
            bound = fit_bound(s.cnt, g)
            while waiting:
                while not keys[head + leaves]:
                    head += 1
                j = job_at[head]
                if size[j] <= bound:
                    _dequeue(head, leaves, keys, min_est)
                    waiting -= 1
                    _launch(&s, j, now)
                    bound = fit_bound(s.cnt, g)
                elif s.nodes_of[j] > reach:
                    _dequeue(head, leaves, keys, min_est)
                    waiting -= 1
                    dropped[0, n_dropped] = j
                    dropped[1, n_dropped] = reach
                    dropped[2, n_dropped] = now
                    n_dropped += 1
                else:
                    break
            for j in range(first_arrival, i_sub):
                if not waiting:
                    if size[j] <= bound:
                        _launch(&s, j, now)
                        bound = fit_bound(s.cnt, g)
                        continue
                    if s.nodes_of[j] > reach:
                        dropped[0, n_dropped] = j
                        dropped[1, n_dropped] = reach
                        dropped[2, n_dropped] = now
                        n_dropped += 1
                        continue
                _enqueue(next_pos, j, leaves, keys, min_est, job_at, bit[j], s.estimate[j])
                next_pos += 1
                waiting += 1
            if not (easy and waiting) or not bound:
                continue
            fit = fit_masks[search_right(&distinct[0], n_distinct, bound)]
            if not keys[1] & fit:
                continue

            # 2. EASY backfilling behind the blocked head
            while not keys[head + leaves]:
                head += 1
            hj = job_at[head]
            if res_head != hj or not has_res or shadow < now:
                head_nodes = s.nodes_of[hj]
                head_per_node = s.per_node[hj]
                has_res = reserve(s.free, s.cnt, g, managed, now, head_nodes, head_per_node,
                                  s.running, s.n_running, shift, low_mask, s.node_off,
                                  s.node_list, s.per_node, cap_t_p, cap_n_p, n_cap, n_nodes,
                                  projected, flag, &shadow, &flagged)
                spare = flagged - head_nodes if head_nodes > 1 else flagged - 1
                res_head = hj
            if not has_res:
                continue
            top = (head + leaves) >> bit_length(head ^ (next_pos - 1))
            pos = head
            while True:
                present = keys[1] & fit
                allowed = 0
                while present:
                    b = present & -present
                    present ^= b
                    sh = ctz(b)
                    count = shape_nodes[sh]
                    _place(s.exact, words, s.cnt, g, best_fit, count, shape_per_node[sh],
                           s.chosen)
                    if allows(head_nodes, head_per_node, spare, flagged, projected, flag,
                               s.chosen, count, shape_per_node[sh]):
                        allowed |= b
                pos = _search(pos + leaves, fit, allowed, shadow - now, top, leaves, keys,
                              min_est)
                if pos < 0:
                    break
                j = job_at[pos]
                count = s.nodes_of[j]
                p = s.per_node[j]
                _place(s.exact, words, s.cnt, g, best_fit, count, p, s.chosen)
                if now + s.estimate[j] > shadow:  # ``Reservation.commit``
                    if head_nodes > 1:
                        for q in range(count):
                            k = s.chosen[q]
                            if flag[k]:
                                flag[k] = False
                                spare -= 1
                    else:
                        for q in range(count):
                            k = s.chosen[q]
                            projected[k] -= p
                            if projected[k] < head_per_node and flag[k]:
                                flag[k] = False
                                flagged -= 1
                _dequeue(pos, leaves, keys, min_est)
                waiting -= 1
                _start_on(&s, j, now, count)
                bound = fit_bound(s.cnt, g)
                if not bound:
                    break
                fit = fit_masks[search_right(&distinct[0], n_distinct, bound)]
    return (start_a, node_off_a, node_list_a[:node_off_a[n]], gpu_set_a[:n],
            dropped_a[0, :n_dropped].copy(), dropped_a[1, :n_dropped].copy(),
            dropped_a[2, :n_dropped].copy())
