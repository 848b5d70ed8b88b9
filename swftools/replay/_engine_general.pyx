"""``engine_gpu.run_gpu``'s general path compiled: placements and keyed factors.

The pure-Python general path stays the reference (``run_gpu(..., compiled=False)``); this is its
twin (``engine_general`` decides when it applies) for the built-in placements
(``placement/_choose.pyx``; ``random`` through ``placement/_mtrand.pyx``, CPython's Mersenne
Twister) with no run-time factor or a keyed one (``replay/_factors.pyx``: a C-level method, the
what-if model's compiled, any other through Python). The node state is 32-node words (any
width, flat pools of 93,312 one-GPU nodes too). Step for step as ``run_gpu``: the queue's
segment tree holds ``round(estimate x min_factor)``; a started job runs ``round(runtime x f)``
and EASY estimates it at ``round(estimate x f)`` (``rint`` of the same float product: Python's
``round``, half to even); the backfill admits shapes by ``Reservation.may_allow``, checks the
chosen placement with its real factor against the reservation, and skips a refused (size,
choice group, factor bound) combination as Python does (its bits share the int64 with the size
bits, 62 in all: the most frequent combinations get one, the rest keep their size's bit, which
changes no start); it also keeps each combination's last choice and factor while the state is
unchanged (what Python's placement caches do); ``random`` draws once per shape while the state
is unchanged (``gen`` grows at each capacity change, start and end, as
``model.TrackedGpuState.gen``), so its stream of draws is Python's. For ``priority-wc`` it
keeps the waiting jobs by gain (``placement/_waiting.pxd``): every arrival from its instant
on, before any job of that instant is placed, until it starts or is dropped, as ``run_gpu``
tells ``PriorityWc``; its choice follows the queue, so it has no combination bits (its jobs
keep their size's bit: ``engine_general._queue_bits``).

The queue (a segment tree of shape bits and minimum estimates), the heap of ends, the sorted
list of estimated ends and the reservation are the structures of the fast path's twin, on
plain C arrays.
"""

from libc.math cimport INFINITY as F_INFINITY, rint
from libc.stdint cimport int64_t, uint32_t

from swftools.replay._bits cimport bit_length, ctz, popcount
from swftools.replay._loop cimport (INFINITY, allows, fit_bound, heap_pop, heap_push, reserve,
                                    search_right as upper, sorted_insert, sorted_remove)
from swftools.replay._loop_general cimport Tree, dequeue, enqueue, search
from swftools.replay._factors cimport FactorCallback
from swftools.replay.placement._choose cimport (HEADER, PAL, PM_FIRST, PRIORITY_WC, RANDOM, WORD,
                                                State, cands_word, choose, factor, give_back,
                                                set_capacity, take)
from swftools.replay.placement._pal cimport P_HEADER
from swftools.replay.placement._pal import check_tables
from swftools.replay.placement._waiting cimport RANK_WORD, Waiting, wc_add, wc_remove
from swftools.replay.placement._mtrand cimport GPU_OUT, mt_draw

import numpy as np

cdef enum:
    OK = 0  # status of a run
    BAD_FACTOR = 1
    OVERFLOW = 2
    MEMO_MAX_NODES = 256  # combinations of wider jobs keep no memo of their choice
STATUS_OK, STATUS_BAD_FACTOR, STATUS_OVERFLOW = OK, BAD_FACTOR, OVERFLOW
cdef double SATURATE = <double>((<int64_t>1) << 61)  # scaled times this big: beyond any key


cdef inline int64_t _scaled(int64_t t, double f) noexcept nogil:
    """``round(t * f) if f != 1.0 else t`` (half to even), saturated at ``SATURATE``."""
    cdef double x
    if f == 1.0:
        return t
    x = rint(<double>t * f)
    if x >= SATURATE:
        return (<int64_t>1) << 61
    return <int64_t>x


def scaled(int64_t t, double f) -> int:
    """``_scaled`` from Python (tests)."""
    return _scaled(t, f)


cdef bint _may_allow(const State* s, int64_t nodes, int64_t per_node, int64_t head_nodes,
                     int64_t head_per_node, int64_t spare, int64_t spare0, int64_t flagged,
                     int64_t flag_hi, const int64_t* flagw,
                     const int64_t* projected) noexcept nogil:
    """``Reservation.may_allow``; ``flagw``: its node set (``whole`` or ``fitting``) as words,
    ``spare`` the current spare count, ``spare0`` the single-node head's spare as computed
    (``commit`` keeps it), ``flag_hi`` the highest node of ``fitting`` when it was made."""
    cdef int64_t words = s.words, w, c
    cdef bint inside = False
    if head_nodes > 1:
        if nodes > 1:  # whole free nodes that leave the pool by the shadow cost no spare
            c = 0
            for w in range(words):
                c += popcount(s.exact[s.g * words + w] & ~flagw[w])
            return nodes <= spare + c
        if spare >= 1:
            return True
        for w in range(words):
            if cands_word(s, w, per_node) & ~flagw[w]:
                return True
        return False
    if not flagged:
        return False
    if nodes > 1:
        for w in range(words):
            if flagw[w] & ~s.exact[s.g * words + w]:
                return True
        return s.cnt[s.g] > nodes
    if spare0 >= 1:
        return True
    for w in range(words):
        c = cands_word(s, w, per_node)
        if c & ~flagw[w]:
            return True
        if c & flagw[w]:
            inside = True
    return inside and projected[flag_hi] - per_node >= head_per_node


cdef _waiting(Waiting* w, int64_t n, int64_t n_nodes, int64_t g, int64_t words,
              const int64_t[::1] nodes_of, const int64_t[::1] per_node,
              const int64_t[::1] gain_rank, const int64_t[::1] node_order):
    """Point ``w`` at ``priority-wc``'s arrays (returned: the caller keeps them alive), after
    checking ``gain_rank`` and ``node_order`` (the loop reads them without bounds checks)."""
    if (gain_rank is None or node_order is None or gain_rank.shape[0] != n
            or node_order.shape[0] != n_nodes
            or not np.array_equal(np.sort(node_order), np.arange(n_nodes))
            or np.min(gain_rank) < 0 or np.max(gain_rank) >= n):
        raise ValueError("run_general: inconsistent input arrays")
    n_ranks = int(np.max(gain_rank)) + 1
    first, last = np.full(n_ranks, -1, dtype=np.int64), np.full(n_ranks, -1, dtype=np.int64)
    nxt, prev = np.full(n, -1, dtype=np.int64), np.full(n, -2, dtype=np.int64)
    left, cnt, ptr, mask = _i64(n_nodes), _i64(g + 1), _i64(g + 1), _i64(words)
    ranks_on = _i64((n_ranks + RANK_WORD - 1) // RANK_WORD)
    cdef int64_t[::1] first_v = first, last_v = last, next_v = nxt, prev_v = prev
    cdef int64_t[::1] left_v = left, cnt_v = cnt, ptr_v = ptr, mask_v = mask
    cdef int64_t[::1] ranks_on_v = ranks_on
    w.rank = &gain_rank[0]
    w.nodes_of = &nodes_of[0]
    w.per_node = &per_node[0]
    w.order = &node_order[0]
    w.first = &first_v[0]
    w.last = &last_v[0]
    w.next = &next_v[0]
    w.prev = &prev_v[0]
    w.left = &left_v[0]
    w.cnt = &cnt_v[0]
    w.ptr = &ptr_v[0]
    w.mask = &mask_v[0]
    w.ranks_on = &ranks_on_v[0]
    return first, last, nxt, prev, left, cnt, ptr, mask, ranks_on


def _i64(n):
    return np.zeros(max(n, 1), dtype=np.int64)


def _result(out, n, status, n_dropped, bad_j, bad_f):
    """``run_general``'s tuple from its arrays (allocated at least one long)."""
    start, node_off, node_list, gpu_set, run_actual, est_actual, d_j, d_reach, d_at = out
    return (status, start[:n], node_off, node_list[:node_off[n]], gpu_set[:n], run_actual[:n],
            est_actual[:n], d_j[:n_dropped], d_reach[:n_dropped], d_at[:n_dropped], bad_j,
            bad_f)


def run_general(const int64_t[::1] submit, const int64_t[::1] runtime, const int64_t[::1] size,
                const int64_t[::1] estimate, const int64_t[::1] tree_est,
                const int64_t[::1] nodes_of, const int64_t[::1] per_node,
                const int64_t[::1] bit, const int64_t[::1] bit_shape,
                const unsigned char[::1] bit_combo, const double[::1] bit_lower,
                const int64_t[::1] shape_index, const int64_t[::1] distinct,
                const int64_t[::1] fit_masks, const int64_t[::1] shape_nodes,
                const int64_t[::1] shape_per_node, int64_t g, int64_t n_nodes, bint easy,
                const int64_t[::1] cap_t, const int64_t[::1] cap_n, int64_t nodes_t0,
                int64_t pol, int64_t[::1] aux, const double[:, ::1] score,
                FactorCallback kernel, const int64_t[::1] keys, uint32_t[::1] mt,
                paux=None, pval=None, const int64_t[::1] gain_rank=None,
                const int64_t[::1] node_order=None):
    """``engine_gpu.run_gpu``'s general path; int64 arrays in queue order (see the module
    docstring). ``tree_est``: the estimates' lower bounds the queue holds; ``bit``: each job's
    queue bit (its size's, or its combination's); per bit index ``bit_shape`` (its size index),
    ``bit_combo`` (a combination) and ``bit_lower`` (its factor bound); ``shape_index``: each
    job's size index; ``pol``, ``aux``, ``score``: the placement and its tables
    (``placement/_choose.pyx``; ``score``: ``n_nodes`` rows, or ``K x n_nodes`` rows, one
    grid per factor key, when the factor's lowest score is read from its key's grid); the
    factor (None: none) ``kernel``'s of ``keys[j]`` and the signature; ``mt``: ``random``'s generator state (``placement.mtrand``); ``paux``, ``pval``:
    ``pm-first``'s and ``pal``'s tables (``placement/_pal.pyx``). Returns (status,
    start, node_off, node_list, gpu_set, runtime, estimate, dropped job, dropped reach,
    dropped instant, bad job, bad factor); ``priority-wc`` also takes each job's
    ``gain_rank`` (0: the highest gain) and the ``node_order`` (fastest first); status
    ``BAD_FACTOR``: job ``bad job``'s factor is
    not positive and finite; ``OVERFLOW``: a scaled time left the int64 keys."""
    cdef int64_t n = submit.shape[0]
    cdef int64_t words = (n_nodes + WORD - 1) // WORD
    cdef int64_t n_shapes = distinct.shape[0], n_cap = cap_t.shape[0]
    cdef int64_t i, j, k, b, s_i, q, qq, lo, count, p, bi, bj, key, hj, top, pos, w
    cdef int64_t status, gpus, e, r, bound, fit, present, allowed, refused
    cdef double f
    cdef bint queued, stale
    # the loop reads without bounds checks: refuse inconsistent inputs here
    per_job = [runtime.shape[0], size.shape[0], estimate.shape[0], tree_est.shape[0],
               nodes_of.shape[0], per_node.shape[0], bit.shape[0], shape_index.shape[0],
               keys.shape[0]]
    per_bit = [bit_shape.shape[0], bit_combo.shape[0], bit_lower.shape[0]]
    if (n < 1 or any(m != n for m in per_job) or any(m < 64 for m in per_bit)
            or n_shapes < 1 or fit_masks.shape[0] != n_shapes + 1
            or shape_nodes.shape[0] != n_shapes or shape_per_node.shape[0] != n_shapes
            or cap_n.shape[0] != n_cap or not 1 <= g <= 62 or n_nodes < 1
            or not 0 <= nodes_t0 <= n_nodes or aux.shape[0] < HEADER
            or score.shape[0] < n_nodes or score.shape[0] % n_nodes or score.shape[1] != g
            or mt.shape[0] != 625):
        raise ValueError("run_general: inconsistent input arrays")
    cdef int64_t grids = score.shape[0] // n_nodes
    if grids > 1:
        for j in range(n):
            if not 0 <= keys[j] < grids:
                raise ValueError("run_general: a factor key has no score grid")
    if paux is None:
        paux, pval = np.zeros(P_HEADER, dtype=np.int64), np.zeros(1)
    cdef const int64_t[::1] paux_v = paux
    cdef const double[::1] pval_v = pval
    if (pol == PM_FIRST or pol == PAL) and not check_tables(paux_v, pval_v, n_nodes, g, n):
        raise ValueError("run_general: inconsistent input arrays")

    exact_a, cnt_a = _i64((g + 1) * words), _i64(g + 1)
    free_a = np.full(max(n_nodes, 1), g, dtype=np.int64)
    gpu_free_a = np.full(max(n_nodes, 1), ((<int64_t>1) << g) - 1, dtype=np.int64)
    cdef int64_t[::1] exact_v = exact_a, cnt_v = cnt_a, free_v = free_a, gpu_free_v = gpu_free_a
    cdef State st
    st.exact = &exact_v[0]
    st.words = words
    st.cnt = &cnt_v[0]
    st.free = &free_v[0]
    st.gpu_free = &gpu_free_v[0]
    st.g = g
    st.pol = pol
    st.aux = &aux[0]
    st.score = &score[0, 0] if score.shape[0] and score.shape[1] else NULL
    st.score_by_key = grids > 1
    st.paux = &paux_v[0] if paux_v.shape[0] else NULL
    st.pval = &pval_v[0] if pval_v.shape[0] else NULL
    st.wc = NULL
    cdef Waiting wc
    if pol == PRIORITY_WC:
        wc_arrays = _waiting(&wc, n, n_nodes, g, words, nodes_of, per_node, gain_rank,
                             node_order)
        st.wc = &wc
    cdef State* s = &st
    cdef int64_t managed = set_capacity(s, 0, nodes_t0)
    cdef int64_t gen = 0

    # the capacity changes after the first submission, INFINITY appended; the largest count
    # reachable from each on
    cdef int64_t first_change = upper(&cap_t[0] if n_cap else NULL, n_cap, submit[0])
    cdef int64_t n_changes = n_cap - first_change
    change_at_a, change_nodes_a, future_max_a = _i64(n_changes + 1), _i64(n_changes), \
        _i64(n_changes)
    cdef int64_t[::1] change_at = change_at_a, change_nodes = change_nodes_a
    cdef int64_t[::1] future_max = future_max_a
    for i in range(n_changes):
        change_at[i] = cap_t[first_change + i]
        change_nodes[i] = cap_n[first_change + i]
        future_max[i] = cap_n[first_change + i]
    change_at[n_changes] = INFINITY
    for i in range(n_changes - 2, -1, -1):
        if future_max[i + 1] > future_max[i]:
            future_max[i] = future_max[i + 1]
    cdef int64_t reach = managed
    if n_changes and future_max[0] > reach:
        reach = future_max[0]
    cdef int64_t i_change = 0

    # per-job outputs and the loop's structures
    start_a, node_off_a, gpu_set_a = _i64(n), _i64(n + 1), _i64(n)
    cdef int64_t[::1] start = start_a, node_off = node_off_a, gpu_set = gpu_set_a
    for j in range(n):
        node_off[j + 1] = node_off[j] + nodes_of[j]
    node_list_a = _i64(node_off[n])
    cdef int64_t[::1] node_list = node_list_a
    dropped_j_a, dropped_reach_a, dropped_at_a = _i64(n), _i64(n), _i64(n)
    cdef int64_t[::1] dropped_j = dropped_j_a, dropped_reach = dropped_reach_a
    cdef int64_t[::1] dropped_at = dropped_at_a
    cdef int64_t shift = max(1, bit_length(n))
    cdef int64_t low_mask = ((<int64_t>1) << shift) - 1
    ends_a, running_a, est_key_a = _i64(n), _i64(n), _i64(n)
    cdef int64_t[::1] ends = ends_a, running = running_a, est_key = est_key_a
    cdef int64_t leaves = (<int64_t>1) << max(1, bit_length(n - 1))
    keys_tree_a = _i64(2 * leaves)
    min_est_a = np.full(2 * leaves, INFINITY, dtype=np.int64)
    job_at_a = _i64(n)
    cdef int64_t[::1] keys_tree = keys_tree_a, min_est = min_est_a, job_at = job_at_a
    cdef Tree tree
    tree.leaves = leaves
    tree.keys = &keys_tree[0]
    tree.min_est = &min_est[0]
    tree.job_at = &job_at[0]
    run_actual_a, est_actual_a = _i64(n), _i64(n)
    cdef int64_t[::1] run_actual = run_actual_a, est_actual = est_actual_a
    cdef int64_t n_dropped = 0, n_ends = 0, n_running = 0, next_pos = 0, head = 0, waiting = 0
    cdef int64_t key_limit = (<int64_t>1) << (63 - shift)
    cdef int64_t res_head = -1, shadow = 0, spare = 0, spare0 = 0, flagged = 0, flag_hi = 0
    cdef int64_t head_nodes = 0, head_per_node = 0
    cdef bint has_res = False
    projected_a, flag_a, flagw_a = _i64(n_nodes), np.zeros(max(n_nodes, 1), dtype=np.int8), \
        _i64(words)
    cdef int64_t[::1] projected = projected_a, flagw = flagw_a
    cdef signed char[::1] flag_v = flag_a
    cdef char* flag = <char*>&flag_v[0]
    chosen_a = _i64(n_nodes)
    cdef int64_t[::1] chosen = chosen_a
    verdict_a = _i64(n_shapes)
    cdef int64_t[::1] verdict = verdict_a
    refused_f_a = np.zeros(64, dtype=np.float64)
    cdef double[::1] refused_f = refused_f_a
    # random's draws: per shape the state generation drawn at, the GPUs and the nodes
    drawn_gen_a, drawn_gpus_a, drawn_off_a = (np.full(max(n_shapes, 1), -1, dtype=np.int64),
                                              _i64(n_shapes), _i64(n_shapes + 1))
    cdef int64_t[::1] drawn_gen = drawn_gen_a, drawn_gpus = drawn_gpus_a
    cdef int64_t[::1] drawn_off = drawn_off_a
    if pol == RANDOM:
        for s_i in range(n_shapes):
            drawn_off[s_i + 1] = drawn_off[s_i] + shape_nodes[s_i]
    drawn_nodes_a = _i64(drawn_off[n_shapes])
    cdef int64_t[::1] drawn_nodes = drawn_nodes_a
    scratch_a = _i64(max(n_nodes, 2 * GPU_OUT) if pol == RANDOM else 0)  # zeros
    cdef int64_t[::1] scratch = scratch_a
    # per combination bit (the jobs of one shape and choice group: the same choice and factor
    # from one state, ``Placement.choice_group``), its last choice and the state it was made in
    memo_gen_a, memo_gpus_a, memo_off_a = np.full(64, -1, dtype=np.int64), _i64(64), _i64(65)
    memo_f_a = np.zeros(64, dtype=np.float64)
    cdef int64_t[::1] memo_gen = memo_gen_a, memo_gpus = memo_gpus_a, memo_off = memo_off_a
    cdef double[::1] memo_f = memo_f_a
    cdef int64_t width
    for b in range(64):
        width = shape_nodes[bit_shape[b]] if bit_combo[b] else 0
        memo_off[b + 1] = memo_off[b] + (width if width <= MEMO_MAX_NODES else 0)
    memo_nodes_a = _i64(memo_off[64])
    cdef int64_t[::1] memo_nodes = memo_nodes_a
    cdef const int64_t* keys_p = &keys[0] if keys.shape[0] else NULL
    cdef uint32_t* mt_p = &mt[0]
    cdef int64_t* ch = &chosen[0]
    cdef int64_t now, first_arrival, i_sub = 0

    out = (start_a, node_off_a, node_list_a, gpu_set_a, run_actual_a, est_actual_a,
           dropped_j_a, dropped_reach_a, dropped_at_a)

    while i_sub < n or n_ends or waiting:
        now = submit[i_sub] if i_sub < n else INFINITY
        if n_ends and ends[0] >> shift < now:
            now = ends[0] >> shift
        if waiting and change_at[i_change] < now:
            now = change_at[i_change]
        while change_at[i_change] <= now:
            managed = set_capacity(s, managed, change_nodes[i_change])
            gen += 1
            i_change += 1
            reach = future_max[i_change] if i_change < n_changes else managed
            if managed > reach:
                reach = managed
            res_head = -1
        while n_ends and ends[0] >> shift == now:
            key = heap_pop(&ends[0], &n_ends)
            j = key & low_mask
            give_back(s, managed, &node_list[0], node_off[j], node_off[j + 1], per_node[j],
                      gpu_set[j])
            gen += 1
            n_running = sorted_remove(&running[0], n_running, est_key[j])
            res_head = -1
        first_arrival = i_sub
        while i_sub < n and submit[i_sub] == now:
            i_sub += 1
        if st.wc != NULL:  # priority-wc sees every arrival as waiting from now on
            for q in range(first_arrival, i_sub):
                wc_add(st.wc, q)
        if not waiting and first_arrival == i_sub:
            continue

        # 1. start from the head while it fits, dropping a head that can never fit again; then,
        # the queue empty, the arrivals likewise; the first one that waits blocks the rest
        bound = fit_bound(s.cnt, g)
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
                    dequeue(&tree, head)
                    waiting -= 1
                count = nodes_of[j]
                s_i = shape_index[j]
                if pol != RANDOM:
                    gpus = choose(s, j, count, per_node[j], kernel, keys_p, ch)
                else:
                    lo = drawn_off[s_i]
                    if drawn_gen[s_i] != gen:
                        mt_draw(mt_p, s.exact, words, s.cnt, s.gpu_free, g, count, per_node[j],
                                &drawn_nodes[lo], &scratch[0], &drawn_gpus[s_i])
                        drawn_gen[s_i] = gen
                    for qq in range(count):
                        ch[qq] = drawn_nodes[lo + qq]
                    gpus = drawn_gpus[s_i]
                f = factor(s, j, ch, count, gpus, kernel, keys_p)
                status = BAD_FACTOR
                if f > 0 and f != F_INFINITY:
                    status = _start(s, j, now, f, gpus, ch, &nodes_of[0], &per_node[0],
                                    &runtime[0], &estimate[0], &run_actual[0], &est_actual[0],
                                    &start[0], &node_off[0], &node_list[0], &gpu_set[0],
                                    &ends[0], &n_ends, &running[0], &n_running, &est_key[0],
                                    shift, key_limit)
                if status != OK:
                    return _result(out, n, status, 0, j, f)
                gen += 1
                bound = fit_bound(s.cnt, g)
            elif nodes_of[j] > reach:
                if queued:
                    dequeue(&tree, head)
                    waiting -= 1
                dropped_j[n_dropped] = j
                dropped_reach[n_dropped] = reach
                dropped_at[n_dropped] = now
                n_dropped += 1
                if st.wc != NULL:
                    wc_remove(st.wc, j)
            elif queued:
                break
            else:  # it waits (and is the queue's head next time round)
                enqueue(&tree, next_pos, j, bit[j], tree_est[j])
                next_pos += 1
                waiting += 1
        while q < i_sub:
            enqueue(&tree, next_pos, q, bit[q], tree_est[q])
            next_pos += 1
            waiting += 1
            q += 1
        if not (easy and waiting) or not bound:
            continue
        fit = fit_masks[upper(&distinct[0], n_shapes, bound)]
        if not keys_tree[1] & fit:
            continue

        # 2. EASY backfilling behind the blocked head
        while not keys_tree[head + leaves]:
            head += 1
        hj = job_at[head]
        if res_head != hj or not has_res or shadow < now:
            head_nodes = nodes_of[hj]
            head_per_node = per_node[hj]
            has_res = reserve(s.free, s.cnt, g, managed, now, head_nodes, head_per_node,
                              &running[0], n_running, shift, low_mask, &node_off[0],
                              &node_list[0], &per_node[0], &cap_t[0] if n_cap else NULL,
                              &cap_n[0] if n_cap else NULL, n_cap, n_nodes, &projected[0],
                              flag, &shadow, &flagged)
            spare = flagged - head_nodes if head_nodes > 1 else flagged - 1
            spare0 = spare
            for w in range(words):
                flagw[w] = 0
            for k in range(n_nodes):
                if flag[k]:
                    flagw[k // WORD] |= (<int64_t>1) << (k % WORD)
                    flag_hi = k
            res_head = hj
        if not has_res:
            continue
        top = (head + leaves) >> bit_length(head ^ (next_pos - 1))
        pos = head
        stale = True
        allowed = 0
        refused = 0
        while True:
            if stale:
                # shapes some placement may start past the shadow time (recomputed after a start)
                present = keys_tree[1] & fit
                allowed = 0
                for s_i in range(n_shapes):
                    verdict[s_i] = -1
                while present:
                    b = present & -present
                    present ^= b
                    s_i = bit_shape[ctz(b)]
                    if verdict[s_i] < 0:
                        verdict[s_i] = _may_allow(s, shape_nodes[s_i], shape_per_node[s_i],
                                                  head_nodes, head_per_node, spare, spare0,
                                                  flagged, flag_hi, &flagw[0], &projected[0])
                    if verdict[s_i]:
                        allowed |= b
                stale = False
                refused = 0  # combination bits whose choice the reservation refused
            pos = search(&tree, pos + leaves, fit, allowed, shadow - now, top)
            if pos < 0:
                break
            j = job_at[pos]
            bj = bit[j]
            if refused & bj and now + _scaled(estimate[j], refused_f[ctz(bj)]) > shadow:
                continue  # its combination's choice, refused: the same verdict
            count = nodes_of[j]
            p = per_node[j]
            bi = ctz(bj)
            lo = memo_off[bi]
            if memo_gen[bi] == gen:  # its combination's choice and factor in this state
                for qq in range(count):
                    ch[qq] = memo_nodes[lo + qq]
                gpus = memo_gpus[bi]
                f = memo_f[bi]
            else:
                s_i = shape_index[j]
                if pol != RANDOM:
                    gpus = choose(s, j, count, p, kernel, keys_p, ch)
                else:
                    r = drawn_off[s_i]
                    if drawn_gen[s_i] != gen:
                        mt_draw(mt_p, s.exact, words, s.cnt, s.gpu_free, g, count, p,
                                &drawn_nodes[r], &scratch[0], &drawn_gpus[s_i])
                        drawn_gen[s_i] = gen
                    for qq in range(count):
                        ch[qq] = drawn_nodes[r + qq]
                    gpus = drawn_gpus[s_i]
                f = factor(s, j, ch, count, gpus, kernel, keys_p)
                if not (f > 0 and f != F_INFINITY):
                    return _result(out, n, BAD_FACTOR, 0, j, f)
                if memo_off[bi + 1] - lo == count:  # a combination's bit (not too wide)
                    memo_gen[bi] = gen
                    for qq in range(count):
                        memo_nodes[lo + qq] = ch[qq]
                    memo_gpus[bi] = gpus
                    memo_f[bi] = f
            e = _scaled(estimate[j], f)
            if now + e > shadow:
                if not allows(head_nodes, head_per_node, spare, flagged, &projected[0], flag,
                               ch, count, p):
                    if bit_combo[bi]:
                        if f >= bit_lower[bi]:
                            allowed &= ~bj
                        else:
                            refused |= bj
                            refused_f[bi] = f
                    continue
                # ``Reservation.commit``
                for qq in range(count):
                    k = ch[qq]
                    b = (<int64_t>1) << (k % WORD)
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
            dequeue(&tree, pos)
            waiting -= 1
            status = _start(s, j, now, f, gpus, ch, &nodes_of[0], &per_node[0], &runtime[0],
                            &estimate[0], &run_actual[0], &est_actual[0], &start[0],
                            &node_off[0], &node_list[0], &gpu_set[0], &ends[0], &n_ends,
                            &running[0], &n_running, &est_key[0], shift, key_limit)
            if status != OK:
                return _result(out, n, status, 0, j, f)
            gen += 1
            bound = fit_bound(s.cnt, g)
            if not bound:
                break
            fit = fit_masks[upper(&distinct[0], n_shapes, bound)]
            stale = True
    return _result(out, n, OK, n_dropped, -1, 0.0)


cdef int64_t _start(State* s, int64_t j, int64_t now, double f, int64_t gpus,
                    const int64_t* chosen, const int64_t* nodes_of, const int64_t* per_node,
                    const int64_t* runtime, const int64_t* estimate, int64_t* run_actual,
                    int64_t* est_actual, int64_t* start, const int64_t* node_off,
                    int64_t* node_list, int64_t* gpu_set, int64_t* ends, int64_t* n_ends,
                    int64_t* running, int64_t* n_running, int64_t* est_key, int64_t shift,
                    int64_t key_limit) noexcept nogil:
    """``start_chosen``: start ``j`` now on ``chosen[:nodes_of[j]]`` x ``gpus`` with factor
    ``f``; returns the status."""
    cdef int64_t r = _scaled(runtime[j], f)
    cdef int64_t e = _scaled(estimate[j], f)
    cdef int64_t count, q, k
    if now + r >= key_limit or now + e >= key_limit:
        return OVERFLOW
    count = nodes_of[j]
    take(s, chosen, count, per_node[j], gpus)
    if s.wc != NULL:
        wc_remove(s.wc, j)
    gpu_set[j] = gpus
    for q in range(count):
        node_list[node_off[j] + q] = chosen[q]
    run_actual[j] = r
    est_actual[j] = e
    start[j] = now
    n_ends[0] = heap_push(ends, n_ends[0], (now + r) << shift | j)
    k = (now + e) << shift | j
    est_key[j] = k
    n_running[0] = sorted_insert(running, n_running[0], k)
    return OK
