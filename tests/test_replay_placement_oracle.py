"""An independent placement oracle (issue 30): every policy's ``choose`` against a brute force
written from the documented rules (docs/guide/whatif.md, ``swftools.replay.placement``'s
module docstring, ``pal.py``'s for ``pm-first`` and ``pal``); ``random`` is left to the
invariant and seed tests of ``test_replay_placement``.

The oracle enumerates every feasible placement of the job on the state (one managed node with
enough free GPUs and every ``per_node``-subset of its free GPUs; or every set of ``nodes`` whole
free managed nodes) and keeps the one the policy's documented ranking puts first. It shares no
placement code with the policies: ``GpuState`` is built by hand here, and only ``pal`` takes
PAL's class values and cell order as given (``test_replay_placement_pal`` checks those).
States are multi-GPU (2-8 GPUs per node) and partly occupied, so the GPU order within a node
matters, unlike the 1-GPU cases of ``test_replay_placement``.
"""

from __future__ import annotations

import statistics
from itertools import combinations

import numpy as np
from hypothesis import example, given, settings

from swftools.replay import PlacementInputs
from swftools.replay.model import GpuState
from swftools.replay.placement import make_placement
from swftools.replay.placement.pal_classes import cell_order, form_classes

from .strategies import examples, placement_oracle_cases


def state_of(case) -> GpuState:
    g, n = case["g"], case["n"]
    s = GpuState.__new__(GpuState)
    s.g, s.n_nodes, s.full_gpus, s.best_fit = g, n, (1 << g) - 1, False
    s.gpu_free = list(case["gpu_free"])
    s.free = [f.bit_count() for f in s.gpu_free]
    s.managed = (1 << case["managed"]) - 1
    s.exact = [0] * (g + 1)
    for k in range(case["managed"]):
        s.exact[s.free[k]] |= 1 << k
    return s


def candidates(case):
    """Every feasible placement: (tuple of nodes, tuple of GPUs on each)."""
    g, full = case["g"], (1 << case["g"]) - 1
    live = range(case["managed"])
    free = case["gpu_free"]
    if case["nodes"] > 1:
        whole = [k for k in live if free[k] == full]
        return [(ks, tuple(range(g))) for ks in combinations(whole, case["nodes"])]
    return [((k,), held) for k in live
            for held in combinations([i for i in range(g) if free[k] >> i & 1], case["per_node"])]


def first(case, key):
    """The candidate ranked first by ``key`` (asserted unique: the rules leave no tie)."""
    cands = sorted(candidates(case), key=key)
    assert cands, "the strategy draws shapes that fit"
    if len(cands) > 1:
        assert key(cands[0]) != key(cands[1]), "the documented rule leaves a tie"
    return cands[0]


def n_free(case, k):
    return case["gpu_free"][k].bit_count()


# --- the documented rules, one per policy -----------------------------------------------------
def packed(case):
    # lowest-numbered node that fits, lowest-numbered free GPUs; lowest whole free nodes
    return first(case, lambda c: c)


def best_fit(case):
    # the node with the fewest free GPUs that still fit, lowest number on ties (GPUs and
    # multi-node jobs as packed)
    if case["nodes"] > 1:
        return packed(case)
    return first(case, lambda c: (n_free(case, c[0][0]), c))


def gpu_rank(case, k, i):
    """Best first: performance class, then the highest score, then the lower GPU."""
    return (case["cls"][k][i], -case["score"][k][i], i)


def variability_first(case):
    # nodes by the class of their slowest GPU (0 first), lowest number on ties; on a node the
    # best-class (then highest-score) free GPUs
    def key(c):
        ks, held = c
        return (sorted((max(case["cls"][k]), k) for k in ks),
                sorted(gpu_rank(case, ks[0], i) for i in held))
    return first(case, key)


def gains_of(case):
    """Per job of the queue its gain: the job placed (0), then ``others``."""
    return (case["gain"],) + tuple(o[2] for o in case["others"])


def tiered_key(case, fastest):
    """Nodes ranked by (model speed, best class of the node), fastest first or the reverse,
    lowest number within a tier; on a node the fastest free GPUs or the slowest."""
    speed = case["model_speed"]

    def tier(k):
        t = (-speed[case["model"][k]], min(case["cls"][k]))
        return t if fastest else tuple(-x for x in t)

    def key(c):
        ks, held = c
        gpus = [gpu_rank(case, ks[0], i) for i in held]
        if not fastest:
            gpus = [tuple(-x for x in r) for r in gpus]
        return sorted((tier(k), k) for k in ks), sorted(gpus)
    return key


def priority(case):
    # jobs above the median gain of the workload take the fastest nodes and GPUs, the others
    # the slowest (equal gains: every job on the slow side)
    gains = gains_of(case)
    return first(case, tiered_key(case, case["gain"] > statistics.median(gains)))


def priority_wc(case):
    # the waiting jobs of higher gain (highest first, then queue order) claim, on a copy of the
    # free GPUs, the fastest nodes that fit them (whole free nodes for multi-node jobs; a job
    # that does not fit claims nothing); the job takes the fastest unclaimed nodes that fit and
    # the fastest free GPUs on them, else the slowest nodes and GPUs
    g, gains = case["g"], gains_of(case)
    speed, model, cls = case["model_speed"], case["model"], case["cls"]
    order = sorted(range(case["n"]), key=lambda k: (-speed[model[k]], min(cls[k]), k))
    left = [n_free(case, k) if k < case["managed"] else 0 for k in range(case["n"])]
    higher = sorted((w for w, o in enumerate(case["others"], 1) if o[3] and gains[w] > gains[0]),
                    key=lambda w: (-gains[w], w))
    for w in higher:
        n_w, p_w = case["others"][w - 1][:2]
        need = g if n_w > 1 else p_w
        fits = [k for k in order if left[k] >= need][:n_w]
        if len(fits) == n_w:
            for k in fits:
                left[k] -= need
    need = g if case["nodes"] > 1 else case["per_node"]
    room = [c for c in candidates(case) if all(left[k] >= need for k in c[0])]
    if room:
        return min(room, key=tiered_key(case, True))
    return first(case, tiered_key(case, False))


def locality_first(case, allowed=None):
    # single-node jobs best-fit; a multi-node job in the rack with the fewest whole free nodes
    # that holds it all (lower rack id on ties), else racks by most whole free nodes first
    # (lower rack id on ties), lowest-numbered nodes in a rack
    rack = case["rack"]
    if case["nodes"] == 1:
        return best_fit(case)
    whole = {k for c in candidates(case) for k in c[0]}
    if allowed is not None:
        whole &= allowed
    count = {r: sum(rack[k] == r for k in whole) for r in set(rack)}
    order = sorted(count, key=lambda r: (-count[r], r))

    def key(c):
        ks = c[0]
        racks = sorted({rack[k] for k in ks})
        if len(racks) == 1:
            return (1, count[racks[0]], racks[0], ks)
        return (len(racks), [-sum(rack[k] == r for k in ks) for r in order], ks)
    cands = [c for c in candidates(case) if set(c[0]) <= whole]
    if not cands:
        return None
    cands.sort(key=key)
    return cands[0]


def even(case):
    # the GPU model with the largest share of free GPUs (free GPUs of its managed nodes over
    # their GPUs; lower model index on ties) among those that can host the job, first-fit in it;
    # multi-node jobs one node at a time by the share of whole free nodes
    model, g = case["model"], case["g"]
    live = range(case["managed"])
    models = sorted(set(model))
    size = {m: sum(model[k] == m for k in live) for m in models}
    if case["nodes"] == 1:
        hosts = {c[0][0] for c in candidates(case)}

        def share(m):
            return sum(n_free(case, k) for k in live if model[k] == m) / (size[m] * g)
        best = max((m for m in models if any(model[k] == m for k in hosts)),
                   key=lambda m: (share(m), -m))
        return first(case, lambda c: (model[c[0][0]] != best, c))
    whole = sorted({k for c in candidates(case) for k in c[0]})
    chosen = []
    for _ in range(case["nodes"]):
        left = {m: [k for k in whole if model[k] == m and k not in chosen] for m in models}
        m = max(models, key=lambda m: (len(left[m]) / max(1, size[m]), -m))
        chosen.append(left[m][0])
    return tuple(sorted(chosen)), tuple(range(g))


def lxv_cells(case):
    """``lxv``'s candidates, one per class threshold that admits the job: (threshold index,
    placement, racks spanned). Per class threshold c (only GPUs of class <= c) the fewest-racks
    placement; a single-node candidate: the node with the fewest free GPUs of class <= c that
    fit, then the fewest free, then the lowest number; its best-class GPUs."""
    cls, g = case["cls"], case["g"]
    cells = []
    for t, c in enumerate(sorted({x for row in cls for x in row})):
        if case["nodes"] > 1:
            ok = {k for k in range(case["n"]) if max(cls[k]) <= c}
            pick = locality_first(case, ok)
            if pick is None:
                continue
            racks = len({case["rack"][k] for k in pick[0]})
        else:
            cands = [x for x in candidates(case) if all(cls[x[0][0]][i] <= c for i in x[1])]
            if not cands:
                continue

            def key(x, c=c):
                k = x[0][0]
                usable = sum(1 for i in range(g) if case["gpu_free"][k] >> i & 1 and cls[k][i] <= c)
                return usable, n_free(case, k), k, sorted(gpu_rank(case, k, i) for i in x[1])
            pick = min(cands, key=key)
            racks = 1
        cells.append((t, pick, racks))
    return cells


def lxv(case):
    # without a run-time factor every factor is 1: fewer racks win, then the lower threshold
    return min(lxv_cells(case), key=lambda cell: (cell[2], cell[0]))[1]


def pm_first(case):
    # GPUs ranked by the job's-class variability 1 / score (lowest first; ties lower node, then
    # lower GPU): a one-node job the node whose p-th best free GPU ranks first and those GPUs; a
    # multi-node job the whole free nodes whose worst GPUs rank first
    score = case["class_score"][case["job_class"]]

    def rank(k, i):
        return (1.0 / score[k][i], k, i)

    def key(c):
        ks, held = c
        if len(ks) > 1:
            return sorted(max(rank(k, i) for i in held) for k in ks)
        return max(rank(ks[0], i) for i in held)
    return first(case, key)


def pal(case):
    # class values (``pal_classes.form_classes``) and cell order (``cell_order``, default
    # penalty 1.7) are taken as given here (``test_replay_placement_pal`` checks them); the rule
    # checked is the placement: 1-GPU jobs PM-First by (class value, best-match locality |free
    # GPUs of the node with the same class value - 1|, node, GPU); multi-node jobs the whole
    # free nodes of the lowest worst class value (then node); other jobs the first within-node
    # cell (cross-node cells skipped: recorded one-node shapes) some node fits with free GPUs of
    # class value <= the cell's, the node with the most such GPUs (lower node on ties), its
    # lowest-valued ones (lower GPU on ties)
    grid = np.array(case["class_score"][case["job_class"]], dtype=np.float64)
    value = form_classes(1.0 / grid).tolist()
    free = case["gpu_free"]
    g = case["g"]

    def free_ok(k, c):
        return [i for i in range(g) if free[k] >> i & 1 and value[k][i] <= c]

    if case["nodes"] > 1:
        return first(case, lambda x: sorted((max(value[k]), k) for k in x[0]))
    if case["per_node"] == 1:
        def key(x):
            (k,), (i,) = x
            same = sum(1 for j in range(g) if free[k] >> j & 1 and value[k][j] == value[k][i])
            return (value[k][i], abs(same - 1), k, i)
        return first(case, key)
    for c, within in cell_order(np.array(value), 1.7):
        if not within:
            continue
        fit = [x for x in candidates(case) if all(value[x[0][0]][i] <= c for i in x[1])]
        if fit:
            return min(fit, key=lambda x: (-len(free_ok(x[0][0], c)), x[0][0],
                                           sorted((value[x[0][0]][i], i) for i in x[1])))
    raise AssertionError("the last within-node cell admits every free GPU")


# every policy but ``random`` (checked by invariants and seeds in ``test_replay_placement``)
ORACLES = {"packed": packed, "best-fit": best_fit, "even": even, "priority": priority,
           "priority-wc": priority_wc, "variability-first": variability_first,
           "locality-first": locality_first, "lxv": lxv, "pm-first": pm_first, "pal": pal}


def policy_choice(name, case):
    n, g = case["n"], case["g"]
    jobs = 1 + len(case["others"])
    inputs = PlacementInputs(rack=case["rack"], gpu_model=case["model"],
                             score=case["score"], gpu_class=case["cls"],
                             model_speed=case["model_speed"],
                             class_score=case["class_score"], job_class=[case["job_class"]] * jobs)
    placement = make_placement(name, inputs.resolved(n, g), gains_of(case))
    state = state_of(case)
    placement.start(state, None)
    if name == "priority-wc":
        placement.shapes = ([case["nodes"]] + [o[0] for o in case["others"]],
                            [case["per_node"]] + [o[1] for o in case["others"]])
        placement.set_waiting([0] + [w for w, o in enumerate(case["others"], 1) if o[3]])
    node_set, gpus = placement.choose(state, 0, case["nodes"], case["per_node"])
    return (tuple(k for k in range(n) if node_set >> k & 1),
            tuple(i for i in range(g) if gpus >> i & 1))


def as_sets(choice):
    ks, held = choice
    return tuple(sorted(ks)), tuple(sorted(held))


def flat_case(g, gpu_free, rack=None, nodes=1, per_node=1, gain=1.0):
    """A machine with one model, one class and equal scores: only numbering breaks ties."""
    n = len(gpu_free)
    ones = [[1.0] * g for _ in range(n)]
    return {"g": g, "n": n, "managed": n, "gpu_free": gpu_free, "rack": rack or [0] * n,
            "model": [0] * n, "model_speed": [1.0, 1.0, 1.0], "score": ones,
            "cls": [[0] * g for _ in range(n)], "class_score": [ones, ones], "job_class": 0,
            "gain": gain, "others": [(1, 1, 1.0, False)] * 3, "nodes": nodes,
            "per_node": per_node}


@example(flat_case(4, [0b1110, 0b1111], per_node=2))  # GPU order within a node: 1, 2 not 2, 3
@example(flat_case(2, [3, 3, 3, 3, 3], rack=[0, 0, 0, 1, 1], nodes=2, per_node=2))  # smaller rack
@example({**flat_case(2, [3, 3, 3, 3], nodes=3, per_node=2), "model": [1, 1, 0, 0]})  # even tie
@settings(max_examples=examples(100))
@given(placement_oracle_cases())
def test_every_policy_matches_its_documented_rule(case):
    for name, oracle in ORACLES.items():
        want = as_sets(oracle(case))
        got = policy_choice(name, case)
        assert got == want, (name, case)
