"""The built-in placements compiled, for the engine's compiled general path
(``replay/_engine_general.pyx``): each policy's ``choose`` on the compiled node state, the
incremental counts it reads, and the placement signature a keyed factor takes.

The state (``State``, ``_choose.pxd``): ``exact[f * words + w]`` (word ``w``, 32 nodes, of the
managed nodes with exactly ``f`` free GPUs), ``cnt[f]``, ``free[k]``, ``gpu_free[k]`` (a node's
free GPUs as bits); managed nodes are ``0 .. managed - 1``. Every change of a managed node goes
through ``index_node`` (out with the old values, in with the new), which also keeps the policy's
own counts: per node group (GPU model, tier or rack) the managed nodes by free GPUs (``even``,
``priority``, ``variability-first``, ``locality-first``), and for ``lxv`` per class threshold the
nodes by usable free GPUs and the whole free nodes per rack -- what the Python policies scan
from bit sets or keep in ``Lxv.refresh``. A ``choose`` writes the chosen nodes ascending into
``out[:nodes]`` and returns the GPU set (the same on each node); it gives the Python policy's
choice from the same state (``tests/test_replay_engine_general_jit.py``). ``random`` is in the
engine (its draw cache) and ``_mtrand.pyx`` (CPython's Mersenne Twister); ``pm-first`` and
``pal`` in ``_pal.pyx`` (their tables ``State.paux`` and ``State.pval``). ``priority-wc`` also
reads the waiting jobs, which the engine keeps in ``State.wc`` (``_waiting.pxd``: per gain
rank a list in queue order, as ``PriorityWc.queue_add`` and ``queue_remove``), so
``PriorityWc.claimed``'s order (highest gain first, then queue order) is a walk over the ranks
above the job's; the claims go on a copy of the free GPU counts.

The placement's tables (built by ``placement.tables``) are one int64 array ``aux`` and the float
scores ``score[k * g + i]``. ``aux[H_*]`` hold sizes, ``aux[O_*]`` the offsets of the blocks (N
nodes, G node groups, T class thresholds, R racks, W words): ``GRP`` (N) a node's group rank,
``RACK`` (N) its rack rank, ``MODEL`` (N) its GPU model index, ``ORDER`` (N x g) its GPUs best
first (``Machine.gpu_order(True)``), ``GC`` (G x (g + 1)) managed nodes per group and free count,
``GW`` (G x W; empty for a policy that reads no group mask) group word masks, ``CURW``, ``CURM``,
``LEFT`` (G), ``TAKE``, ``MARK`` (R), ``STAMP`` (1), ``CAND`` (N, at least 1) scratch, ``OKW`` (T x
W) per threshold the nodes all of whose GPUs qualify, ``OKNODE`` (T x N) the same as 0/1, ``OKGPU``
(T x N) the qualifying GPUs of each node, ``TWR`` (T x R) and ``TW`` (T) whole free qualifying
managed nodes per rack and in all, ``BYU`` ((T - 1) x (g + 1) x W) and ``BYUCNT`` the managed nodes
by usable free GPUs, ``HIGH`` (jobs) the ``priority`` side of each job.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int64_t

from swftools.replay._bits cimport ctz, first_in_order, lowest_bits, popcount
from swftools.replay.placement._pal cimport choose_pal
from swftools.replay.placement._waiting cimport Waiting, wc_claim, wc_fitting, wc_higher, wc_take

POLICY_IDS = {"packed": PACKED, "best-fit": BEST_FIT, "random": RANDOM, "even": EVEN,
              "priority": PRIORITY, "variability-first": VARIABILITY_FIRST,
              "locality-first": LOCALITY_FIRST, "lxv": LXV, "pm-first": PM_FIRST, "pal": PAL,
              "priority-wc": PRIORITY_WC}
TABLES_HEADER = HEADER  # placement.tables.HEADER must equal it (tested)


cdef inline void _flip(int64_t* words, int64_t i, int64_t b, int64_t sign) noexcept nogil:
    if sign > 0:
        words[i] |= b
    else:
        words[i] &= ~b


cdef void _lxv_index(int64_t k, int64_t sign, int64_t f, int64_t held, int64_t g, int64_t w,
                     int64_t b, int64_t* aux) noexcept nogil:
    """``lxv``'s counts of node ``k`` (``f`` free GPUs ``held``, bit ``b`` of word ``w``)."""
    cdef int64_t n = aux[H_N], n_t = aux[H_T], n_r = aux[H_R], t, r, u
    cdef int64_t words = (n + WORD - 1) // WORD
    if f == g:
        r = aux[aux[O_RACK] + k]
        for t in range(n_t):
            if aux[aux[O_OKNODE] + t * n + k]:
                aux[aux[O_TWR] + t * n_r + r] += sign
                aux[aux[O_TW] + t] += sign
    for t in range(n_t - 1):
        u = popcount(held & aux[aux[O_OKGPU] + t * n + k])
        _flip(aux, aux[O_BYU] + (t * (g + 1) + u) * words + w, b, sign)
        aux[aux[O_BYUCNT] + t * (g + 1) + u] += sign


cdef inline void index_node(State* s, int64_t k, int64_t sign) noexcept nogil:
    """Managed node ``k`` enters (``sign`` 1) or leaves (-1) the state's sets and the policy's
    counts, with its current ``free`` and ``gpu_free``."""
    cdef int64_t f = s.free[k], g = s.g, pol = s.pol
    cdef int64_t w = k // WORD
    cdef int64_t b = (<int64_t>1) << (k % WORD)
    if sign > 0:
        s.exact[f * s.words + w] |= b
    else:
        s.exact[f * s.words + w] &= ~b
    s.cnt[f] += sign
    if (pol == EVEN or pol == PRIORITY or pol == VARIABILITY_FIRST or pol == LOCALITY_FIRST
            or pol == PRIORITY_WC):
        s.aux[s.aux[O_GC] + s.aux[s.aux[O_GRP] + k] * (g + 1) + f] += sign
    elif pol == LXV:
        _lxv_index(k, sign, f, s.gpu_free[k], g, w, b, s.aux)


cdef int64_t set_capacity(State* s, int64_t managed, int64_t nodes) noexcept nogil:
    """``GpuState.set_capacity``: manage nodes ``0 .. nodes - 1``; returns the new count."""
    cdef int64_t k
    for k in range(nodes, managed):
        index_node(s, k, -1)
    for k in range(managed, nodes):
        index_node(s, k, 1)
    return nodes


cdef void take(State* s, const int64_t* chosen, int64_t count, int64_t per_node,
               int64_t gpus) noexcept nogil:
    """``GpuState.take_set``: ``gpus`` (``per_node`` of them) on each of ``chosen[:count]``."""
    cdef int64_t q, k
    for q in range(count):
        k = chosen[q]
        index_node(s, k, -1)
        s.free[k] -= per_node
        s.gpu_free[k] ^= gpus
        index_node(s, k, 1)


cdef void give_back(State* s, int64_t managed, const int64_t* node_list, int64_t lo,
                    int64_t hi, int64_t per_node, int64_t gpus) noexcept nogil:
    """``GpuState.give_back`` of the job on ``node_list[lo:hi]``."""
    cdef int64_t q, k
    for q in range(lo, hi):
        k = node_list[q]
        if k < managed:
            index_node(s, k, -1)
        s.free[k] += per_node
        s.gpu_free[k] |= gpus
        if k < managed:
            index_node(s, k, 1)


cdef int64_t cands_word(const State* s, int64_t w, int64_t per_node) noexcept nogil:
    """Word ``w`` of the nodes with at least ``per_node`` free GPUs (``node_candidates``)."""
    cdef int64_t m = 0, f
    for f in range(per_node, s.g + 1):
        m |= s.exact[f * s.words + w]
    return m


cdef void place(const State* s, bint best_fit, int64_t nodes, int64_t per_node,
                int64_t* out) noexcept nogil:
    """``GpuState.place``: the chosen nodes (ascending) into ``out``."""
    cdef int64_t words = s.words, g = s.g, c = 0, w, m, low, f
    cdef const int64_t* whole = s.exact + g * words
    if nodes > 1:
        for w in range(words):
            m = whole[w]
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
            if s.cnt[f]:
                for w in range(words):
                    m = s.exact[f * words + w]
                    if m:
                        out[0] = w * WORD + ctz(m)
                        return
    for w in range(words):
        m = cands_word(s, w, per_node)
        if m:
            out[0] = w * WORD + ctz(m)
            return


cdef int64_t _pick_gpus(int64_t free, const int64_t* aux, int64_t k, int64_t g, int64_t count,
                        bint reverse) noexcept nogil:
    """``placement.pick_gpus``: the first ``count`` free GPUs of node ``k`` in its order (best
    first, or the reverse)."""
    return first_in_order(free, aux + aux[O_ORDER] + k * g, g, count, reverse)


cdef int64_t _lowest_of(const State* s, int64_t per_node, int64_t base) noexcept nogil:
    """The lowest node with at least ``per_node`` free GPUs in the word mask at ``aux[base:]``."""
    cdef int64_t w, m
    for w in range(s.words):
        m = cands_word(s, w, per_node) & s.aux[base + w]
        if m:
            return w * WORD + ctz(m)
    return -1


cdef int64_t _take_whole(const State* s, int64_t base, int64_t count, int64_t* out,
                         int64_t c) noexcept nogil:
    """The ``count`` lowest whole free nodes of the word mask at ``aux[base:]`` into
    ``out[c:]``; returns the new ``c``."""
    cdef int64_t w, m, low
    cdef const int64_t* whole = s.exact + s.g * s.words
    for w in range(s.words):
        m = whole[w] & s.aux[base + w]
        while m and count:
            low = m & -m
            m ^= low
            out[c] = w * WORD + ctz(low)
            c += 1
            count -= 1
        if not count:
            break
    return c


cdef void _sort_prefix(int64_t* out, int64_t count) noexcept nogil:
    """Insertion sort of ``out[:count]`` (a few nodes)."""
    cdef int64_t i, j, x
    for i in range(1, count):
        x = out[i]
        j = i - 1
        while j >= 0 and out[j] > x:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = x


cdef inline bint _has(const int64_t* aux, int64_t row, int64_t per_node,
                      int64_t g) noexcept nogil:
    """Whether the count row at ``aux[row:]`` has a node with at least ``per_node`` free."""
    cdef int64_t f
    for f in range(per_node, g + 1):
        if aux[row + f]:
            return True
    return False


cdef int64_t _packed(State* s, bint best_fit, int64_t nodes, int64_t per_node,
                     int64_t* out) noexcept nogil:
    place(s, best_fit, nodes, per_node, out)
    if nodes > 1:
        return ((<int64_t>1) << s.g) - 1
    return lowest_bits(s.gpu_free[out[0]], per_node)


cdef int64_t _choose_even(State* s, int64_t nodes, int64_t per_node,
                          int64_t* out) noexcept nogil:
    """``Even.scan``: the GPU model with the largest share of free GPUs, first-fit in it;
    multi-node jobs node by node by share of whole free nodes (one model: ``packed``)."""
    cdef int64_t* aux = s.aux
    cdef int64_t g = s.g, words = s.words
    cdef int64_t n_groups = aux[H_GROUPS], gc = aux[O_GC], gw = aux[O_GW]
    cdef int64_t best, m, row, free_gpus, managed, f, k, q, size, w, low, mm
    cdef int64_t cur_w, cur_m, left
    cdef double best_share, share
    cdef const int64_t* whole = s.exact + g * words
    if n_groups == 1:
        return _packed(s, False, nodes, per_node, out)
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
            share = <double>free_gpus / <double>(managed * g)
            if share > best_share:
                best = m
                best_share = share
        k = _lowest_of(s, per_node, gw + best * words)
        out[0] = k
        return lowest_bits(s.gpu_free[k], per_node)
    cur_w, cur_m, left = aux[O_CURW], aux[O_CURM], aux[O_LEFT]
    for m in range(n_groups):
        aux[cur_w + m] = 0
        aux[cur_m + m] = whole[0] & aux[gw + m * words]
        aux[left + m] = aux[gc + m * (g + 1) + g]
    for q in range(nodes):
        best = 0
        best_share = -1.0
        for m in range(n_groups):
            size = 0
            for f in range(g + 1):
                size += aux[gc + m * (g + 1) + f]
            share = <double>aux[left + m] / <double>(size if size > 1 else 1)
            if share > best_share:
                best = m
                best_share = share
        while not aux[cur_m + best]:
            aux[cur_w + best] += 1
            w = aux[cur_w + best]
            aux[cur_m + best] = whole[w] & aux[gw + best * words + w]
        mm = aux[cur_m + best]
        low = mm & -mm
        aux[cur_m + best] = mm ^ low
        out[q] = aux[cur_w + best] * WORD + ctz(low)
        aux[left + best] -= 1
    _sort_prefix(out, nodes)
    return ((<int64_t>1) << g) - 1


cdef int64_t _choose_tiered(State* s, int64_t nodes, int64_t per_node, bint reverse,
                            int64_t* out) noexcept nogil:
    """``Tiered.choose`` (``priority``, ``variability-first``): nodes from the first tier on
    (the last first when ``reverse``), lowest numbers first in a tier; GPUs in ``order``."""
    cdef int64_t* aux = s.aux
    cdef int64_t g = s.g, words = s.words
    cdef int64_t n_tiers = aux[H_GROUPS], gc = aux[O_GC], gw = aux[O_GW]
    cdef int64_t q, tier, k, c = 0, tiers_used = 0, avail
    if nodes == 1:
        for q in range(n_tiers):
            tier = n_tiers - 1 - q if reverse else q
            if _has(aux, gc + tier * (g + 1), per_node, g):
                k = _lowest_of(s, per_node, gw + tier * words)
                out[0] = k
                return _pick_gpus(s.gpu_free[k], aux, k, g, per_node, reverse)
        return 0  # unreachable: the job fits
    for q in range(n_tiers):
        tier = n_tiers - 1 - q if reverse else q
        avail = aux[gc + tier * (g + 1) + g]
        if not avail:
            continue
        c = _take_whole(s, gw + tier * words, avail if avail < nodes - c else nodes - c, out, c)
        tiers_used += 1
        if c == nodes:
            break
    if tiers_used > 1:
        _sort_prefix(out, nodes)
    return ((<int64_t>1) << g) - 1


cdef int64_t _fewest_racks(State* s, int64_t counts, int64_t stride, int64_t t,
                           int64_t nodes, int64_t* out) noexcept nogil:
    """``locality.fewest_racks`` on the whole free nodes (qualifying for threshold ``t`` when
    ``t >= 0``), ``aux[counts + r * stride]`` of them in rack ``r``: nodes into ``out``
    ascending; returns the racks spanned. Several racks: the fullest first (lower rack on
    ties), as a stable sort by count would rank them."""
    cdef int64_t* aux = s.aux
    cdef int64_t n_racks = aux[H_R], take_ = aux[O_TAKE], rack = aux[O_RACK]
    cdef int64_t best = -1, r, c, spanned = 0, rest, most, q, w, m, low, k, okw
    cdef const int64_t* whole = s.exact + s.g * s.words
    for r in range(n_racks):
        aux[take_ + r] = 0
        c = aux[counts + r * stride]
        if c >= nodes and (best < 0 or c < aux[counts + best * stride]):
            best = r
    if best >= 0:
        aux[take_ + best] = nodes
        spanned = 1
    else:
        rest = nodes
        while rest:
            best = -1
            most = 0
            for r in range(n_racks):
                c = aux[counts + r * stride]
                if not aux[take_ + r] and c > most:
                    best = r
                    most = c
            if best < 0:
                break
            q = most if most < rest else rest
            aux[take_ + best] = q
            rest -= q
            spanned += 1
    c = 0
    okw = aux[O_OKW] + t * s.words
    for w in range(s.words):
        m = whole[w]
        if t >= 0:
            m &= aux[okw + w]
        while m:
            low = m & -m
            m ^= low
            k = w * WORD + ctz(low)
            r = aux[rack + k]
            if aux[take_ + r] > 0:
                aux[take_ + r] -= 1
                out[c] = k
                c += 1
                if c == nodes:
                    return spanned
    return spanned


cdef double factor(State* s, int64_t j, const int64_t* chosen, int64_t count, int64_t gpus,
                   FactorCallback kernel, const int64_t* keys) except? -1.0:
    """The run-time factor of job ``j`` on ``gpus`` of each of ``chosen[:count]`` (1.0 without
    a factor): ``kernel``'s of ``keys[j]`` and ``Placement.signature`` (models held, lowest
    score held, nodes, racks spanned, GPUs per node); with ``score_by_key`` the lowest score
    is read from the key's grid (a what-if model's per-class scores)."""
    if kernel is None:
        return 1.0
    cdef int64_t* aux = s.aux
    cdef int64_t model = aux[O_MODEL], rack = aux[O_RACK], mark = aux[O_MARK]
    cdef int64_t stamp, models = 0, racks = 0, q, k, x, low, r
    cdef double s_min = INFINITY, v
    cdef const double* score = s.score
    if s.score_by_key:
        score = score + keys[j] * aux[H_N] * s.g
    aux[aux[O_STAMP]] += 1
    stamp = aux[aux[O_STAMP]]
    for q in range(count):
        k = chosen[q]
        models |= (<int64_t>1) << aux[model + k]
        x = gpus
        while x:
            low = x & -x
            x ^= low
            v = score[k * s.g + ctz(low)]
            if v < s_min:
                s_min = v
        r = aux[rack + k]
        if aux[mark + r] != stamp:
            aux[mark + r] = stamp
            racks += 1
    return kernel.call(keys[j], models, s_min, count, racks, popcount(gpus))


cdef int64_t _lxv_single(const State* s, int64_t t, int64_t per_node) noexcept nogil:
    """Threshold ``t``'s single-node candidate: the managed node with the fewest usable free
    GPUs (class <= threshold; at least ``per_node``), then the fewest free, then the lowest."""
    cdef const int64_t* aux = s.aux
    cdef int64_t g = s.g, words = s.words, u, f, w, m, base
    cdef int64_t counts = aux[O_BYUCNT] + t * (g + 1)
    for u in range(per_node, g + 1):
        if not aux[counts + u]:
            continue
        base = aux[O_BYU] + (t * (g + 1) + u) * words
        for f in range(u, g + 1):
            if not s.cnt[f]:
                continue
            for w in range(words):
                m = aux[base + w] & s.exact[f * words + w]
                if m:
                    return w * WORD + ctz(m)
    return -1


cdef inline bint _better(double f, int64_t racks, int64_t t, double best_f, int64_t best_racks,
                         int64_t best_t) noexcept nogil:
    """``(f, racks, t) < (best_f, best_racks, best_t)`` as Python compares tuples."""
    if f != best_f:
        return f < best_f
    if racks != best_racks:
        return racks < best_racks
    return t < best_t


cdef int64_t _choose_lxv(State* s, int64_t j, int64_t nodes, int64_t per_node,
                         FactorCallback kernel, const int64_t* keys, int64_t* out) except -1:
    """``Lxv.choose``: per class threshold the fewest-racks candidate; the smallest (factor,
    racks, threshold) wins (duplicate candidates, skipped in Python, never win a tie)."""
    cdef int64_t* aux = s.aux
    cdef int64_t g = s.g, words = s.words
    cdef int64_t full = ((<int64_t>1) << g) - 1
    cdef int64_t n = aux[H_N], n_t = aux[H_T], n_r = aux[H_R]
    cdef int64_t* cand = aux + aux[O_CAND]
    cdef bint found = False
    cdef double best_f = 0.0, f
    cdef int64_t best_racks = 0, best_t = 0, best_gpus = 0, t, racks, k, usable, gpus, ff, w, q
    if nodes > 1:
        for t in range(n_t):
            if aux[aux[O_TW] + t] < nodes:
                continue
            racks = _fewest_racks(s, aux[O_TWR] + t * n_r, 1, t, nodes, cand)
            f = factor(s, j, cand, nodes, full, kernel, keys)
            if not found or _better(f, racks, t, best_f, best_racks, best_t):
                found = True
                best_f, best_racks, best_t = f, racks, t
                for q in range(nodes):
                    out[q] = cand[q]
        return full
    for t in range(n_t):
        if t < n_t - 1:
            k = _lxv_single(s, t, per_node)
            if k < 0:
                continue
            usable = s.gpu_free[k] & aux[aux[O_OKGPU] + t * n + k]
        else:  # the last threshold admits every GPU: best fit on the free GPUs
            k = -1
            for ff in range(per_node, g + 1):
                if s.cnt[ff]:
                    for w in range(words):
                        if s.exact[ff * words + w]:
                            k = w * WORD + ctz(s.exact[ff * words + w])
                            break
                    break
            usable = s.gpu_free[k]
        gpus = _pick_gpus(usable, aux, k, g, per_node, False)
        cand[0] = k
        f = factor(s, j, cand, 1, gpus, kernel, keys)
        if not found or _better(f, 1, t, best_f, best_racks, best_t):
            found = True
            best_f, best_racks, best_t = f, 1, t
            best_gpus = gpus
            out[0] = k
    return best_gpus


cdef int64_t _choose_wc(State* s, int64_t j, int64_t nodes, int64_t per_node,
                        int64_t* out) noexcept nogil:
    """``PriorityWc.scan``: the waiting jobs of higher gain than ``j`` (highest first, then
    queue order) claim, on a copy of the free GPUs, the fastest nodes that fit them; ``j``
    takes the fastest unclaimed nodes that fit it and the fastest free GPUs on them, else (all
    claimed) the slowest nodes and GPUs it fits on."""
    cdef Waiting* w = s.wc
    cdef int64_t g = s.g, words = s.words, mine = w.rank[j], total = 0, f, c, k, m, low, need
    if not wc_higher(w, mine):  # nothing claimed: the fastest nodes that fit
        return _choose_tiered(s, nodes, per_node, False, out)
    for k in range(s.aux[H_N]):
        w.left[k] = 0  # unmanaged nodes have nothing to give
    for f in range(g + 1):
        w.cnt[f] = s.cnt[f]
        w.ptr[f] = 0
        total += f * s.cnt[f]
        if f:
            for c in range(words):
                m = s.exact[f * words + c]
                while m:
                    low = m & -m
                    m ^= low
                    w.left[c * WORD + ctz(low)] = f
    wc_claim(w, mine, g, total)
    need = g if nodes > 1 else per_node
    if wc_fitting(w, need, g) < nodes:  # everything it fits on is claimed: the slowest
        return _choose_tiered(s, nodes, per_node, True, out)
    wc_take(w, need, nodes, out)
    if nodes == 1:
        return _pick_gpus(s.gpu_free[out[0]], s.aux, out[0], g, per_node, False)
    for c in range(words):
        w.mask[c] = 0
    for c in range(nodes):
        w.mask[out[c] // WORD] |= (<int64_t>1) << (out[c] % WORD)
    c = 0
    for f in range(words):  # ascending
        m = w.mask[f]
        while m:
            low = m & -m
            m ^= low
            out[c] = f * WORD + ctz(low)
            c += 1
    return ((<int64_t>1) << g) - 1


cdef int64_t choose(State* s, int64_t j, int64_t nodes, int64_t per_node,
                    FactorCallback kernel, const int64_t* keys, int64_t* out) except -1:
    """The placement ``s.pol`` (not ``random``) of job ``j`` (``nodes`` x ``per_node``, fits
    now): nodes into ``out[:nodes]`` ascending; returns the GPU set."""
    cdef int64_t pol = s.pol
    if pol == PACKED or pol == BEST_FIT or (pol == LOCALITY_FIRST and nodes == 1):
        return _packed(s, pol != PACKED, nodes, per_node, out)
    if pol == EVEN:
        return _choose_even(s, nodes, per_node, out)
    if pol == PRIORITY:
        return _choose_tiered(s, nodes, per_node, not s.aux[s.aux[O_HIGH] + j], out)
    if pol == VARIABILITY_FIRST:
        return _choose_tiered(s, nodes, per_node, False, out)
    if pol == PRIORITY_WC:
        return _choose_wc(s, j, nodes, per_node, out)
    if pol == LOCALITY_FIRST:
        _fewest_racks(s, s.aux[O_GC] + s.g, s.g + 1, -1, nodes, out)
        return ((<int64_t>1) << s.g) - 1
    if pol == PM_FIRST or pol == PAL:
        return choose_pal(s.exact, s.words, s.g, s.gpu_free, s.paux, s.pval, j, nodes, per_node,
                          out)
    return _choose_lxv(s, j, nodes, per_node, kernel, keys, out)
