"""``locality-first`` and ``lxv`` (``swftools.replay.placement.locality``) against brute forces
written from the documented rules (``swftools.replay.placement``'s module docstring).

``fewest_racks`` is checked against every node set (``test_replay_placement_oracle``'s
``locality_first``) and by hand. ``lxv`` is checked through runs of starts, ends and capacity
changes, on the engine's state (``model.TrackedGpuState``, where it keeps per-threshold counts up
to date and caches its candidates and choices while the state is unchanged) and on a plain
``GpuState`` (where it scans): every choice against the oracle's candidates (one per class
threshold), with no run-time factor, a factor callback and a keyed one. The callback is asked
once per distinct candidate (keyed, on the engine's state: once per job key and placement
signature, the documented cache), and the chosen placement's factor is the callback's, not asked
again. The oracle test checks both policies on plain states without a factor."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.replay import PlacementInputs
from swftools.replay.model import TrackedGpuState
from swftools.replay.placement import Lxv, make_placement
from swftools.replay.placement.locality import fewest_racks

from .strategies import examples, placement_event_runs, rack_node_sets
from .test_replay_placement_oracle import flat_case, locality_first, lxv_cells, state_of


def rack_masks(rack):
    """Node bit sets per rack id, ascending (as ``Placement.rack_masks``)."""
    return [sum(1 << k for k, r in enumerate(rack) if r == rid) for rid in sorted(set(rack))]


def nodes_of(mask):
    return tuple(k for k in range(mask.bit_length()) if mask >> k & 1)


# --- fewest_racks --------------------------------------------------------------------------------
@pytest.mark.parametrize("rack, whole, nodes, want", [
    ([0, 0, 0, 1, 1], 0b11111, 2, (3, 4)),  # both racks hold it: the one with fewer whole nodes
    ([0, 0, 0, 1, 1], 0b11111, 3, (0, 1, 2)),  # only rack 0 holds it
    ([0, 0, 1, 1], 0b1111, 2, (0, 1)),  # equal racks: the lower rack id
    ([1, 1, 0, 0], 0b1111, 2, (2, 3)),  # rack ids, not node numbers, break the tie
    ([0, 0, 1, 1, 1, 2], 0b111111, 4, (0, 2, 3, 4)),  # no rack holds it: rack 1 (3), then rack 0
    ([0, 0, 1, 1, 2], 0b11111, 3, (0, 1, 2)),  # spill over equal racks: lower rack id first
    ([0, 1, 0, 1, 0], 0b11110, 2, (2, 4)),  # whole nodes 2, 4 of rack 0 and 1, 3 of rack 1
    ([0, 1, 0, 1, 0, 1], 0b110111, 3, (0, 2, 4)),  # rack 0 has 3 whole nodes, rack 1 only 2
    ([2, 2, 0, 1, 1, 1], 0b111011, 4, (0, 3, 4, 5)),  # 3 + 1: the biggest rack, then rack 2 (2)
])
def test_fewest_racks_by_hand(rack, whole, nodes, want):
    assert nodes_of(fewest_racks(whole, rack_masks(rack), nodes)) == want


@settings(max_examples=examples(100))
@given(rack_node_sets())
def test_fewest_racks_matches_every_node_set(drawn):
    """The rack with the fewest whole free nodes that holds the job (lower rack id on ties),
    else racks by most whole free nodes first; lowest-numbered nodes in a rack."""
    rack, whole, nodes = drawn
    n = len(rack)
    case = flat_case(1, [whole >> k & 1 for k in range(n)], rack=rack, nodes=nodes)
    want = locality_first(case)[0]
    got = fewest_racks(whole, rack_masks(rack), nodes)
    assert nodes_of(got) == want
    assert got & ~whole == 0 and got.bit_count() == nodes


# --- lxv through a run -------------------------------------------------------------------------
def tracked_state_of(case) -> TrackedGpuState:
    """The oracle's state as the engine's: it records its changes."""
    s = TrackedGpuState.__new__(TrackedGpuState)
    s.__dict__.update(vars(state_of(case)))
    s.gen, s.dirty = 0, 0
    return s


def signature(case, ks, held):
    """``Placement.signature`` written from its docstring: GPU models held (bit set), lowest
    score held, nodes, racks spanned, GPUs per node."""
    models = sum({1 << case["model"][k] for k in ks})
    low = min(case["score"][k][i] for k in ks for i in held)
    return models, low, len(ks), len({case["rack"][k] for k in ks}), len(held)


def factor_of(case, kind):
    """A run-time factor: ``plain`` depends on the job (even jobs want the best classes, odd
    ones the worst) and the racks; ``keyed`` on the job's key (j mod 3) and the placement's
    signature only; None for ``none``."""
    cls = case["cls"]

    def plain(j, ks, gpus):
        worst = max(cls[k][i] for k in ks for i in gpus[0])
        racks = len({case["rack"][k] for k in ks})
        return (1 + 0.25 * (worst if j % 2 == 0 else 3 - worst)) * (1 + 0.1 * (racks - 1))

    def keyed(j, ks, gpus):
        if ks is None:  # the key query
            return j % 3
        models, low, _, racks, _ = signature(case, ks, gpus[0])
        spread = 1 + 0.1 * (racks - 1)
        return (1 / low * spread, low * spread, 1 + 0.1 * models)[j % 3]

    return {"none": None, "plain": plain, "keyed": keyed}[kind]


def fitting_shapes(state):
    """The job shapes that fit now: one node with p free GPUs, or m whole free nodes."""
    live = [state.gpu_free[k] for k in range(state.managed.bit_length())]
    shapes = [(1, p) for p in range(1, state.g + 1) if any(f.bit_count() >= p for f in live)]
    whole = sum(f == state.full_gpus for f in live)
    return shapes + [(m, state.g) for m in range(2, whole + 1)]


def expected(snap, j, factor):
    """The oracle's choice: the candidate with the smallest (factor, racks, threshold)."""
    def key(cell):
        t, (ks, held), racks = cell
        f = 1.0 if factor is None else factor(j, list(ks), [list(held)] * len(ks))
        return f, racks, t
    ks, held = min(lxv_cells(snap), key=key)[1]
    return tuple(sorted(ks)), tuple(sorted(held))


def distinct_candidates(snap):
    return len({cell[1] for cell in lxv_cells(snap)})


@settings(max_examples=examples(100))
@given(placement_event_runs(), st.sampled_from(("none", "plain", "keyed")), st.booleans())
def test_lxv_through_a_run_matches_the_documented_rule(run, kind, tracked):
    """On the engine's state (``tracked``) or a plain one (where ``lxv`` scans)."""
    case, events = run
    n, g = case["n"], case["g"]
    inputs = PlacementInputs(rack=case["rack"], gpu_model=case["model"], score=case["score"],
                             gpu_class=case["cls"], model_speed=case["model_speed"],
                             factor_by_key=kind == "keyed")
    placement = make_placement("lxv", inputs.resolved(n, g))
    state = tracked_state_of(case) if tracked else state_of(case)
    truth = factor_of(case, kind)
    calls = []

    def factor(j, ks, gpus):
        calls.append((j, ks, gpus))
        return truth(j, ks, gpus)

    placement.start(state, None if truth is None else factor)
    running = []
    j = 0
    for what, x in events:
        if what == "capacity":
            state.set_capacity(1 + x % n)
        elif what == "end":
            if running:
                state.give_back(*running.pop(x % len(running)))
            else:  # free one GPU the first state holds busy
                busy = [(k, i) for k in range(n) for i in range(g)
                        if not state.gpu_free[k] >> i & 1]
                if busy:
                    k, i = busy[x % len(busy)]
                    state.give_back(1 << k, 1 << i, 1)
        else:
            shapes = fitting_shapes(state)
            if not shapes:
                continue
            nodes, per_node = shapes[x % len(shapes)]
            snap = {**case, "gpu_free": list(state.gpu_free),
                    "managed": state.managed.bit_length(), "nodes": nodes, "per_node": per_node}
            # two jobs of the shape on one state: the second may come from the choice cache
            for probe in (j, j + 1, j + 3):
                before = len(calls)
                node_set, gpus = placement.choose(state, probe, nodes, per_node)
                got = nodes_of(node_set), nodes_of(gpus)
                assert got == expected(snap, probe, truth), (probe, snap)
                if kind == "plain":  # every candidate evaluated once, none twice
                    assert len(calls) - before == distinct_candidates(snap)
                if truth is not None:  # the chosen placement's factor, not asked again
                    before = len(calls)
                    f = placement.factor(probe, node_set, gpus)
                    assert f == truth(probe, list(got[0]), [list(got[1])] * len(got[0]))
                    assert len(calls) == before
            state.take_set(node_set, per_node, gpus)
            running.append((node_set, gpus, per_node))
            j += 4
    if kind == "keyed" and tracked:  # once per (job key, signature), and once per job's key
        asked = [(j % 3, signature(case, ks, gpus[0])) for j, ks, gpus in calls if ks is not None]
        assert len(asked) == len(set(asked))
        keys = [j for j, ks, _ in calls if ks is None]
        assert len(keys) == len(set(keys))


# --- choice groups -----------------------------------------------------------------------------
def test_lxv_choice_groups():
    """Jobs of one group get the same choice: without a factor every job is in one group, with
    a keyed factor the job's key is its group, with an unkeyed one there are none; a subclass
    declares none (``Placement.choice_group``)."""
    case = flat_case(2, [3, 3])
    inputs = PlacementInputs(gpu_class=[[0, 1], [1, 0]])

    def started(cls, factor, keyed=False):
        p = cls(PlacementInputs(gpu_class=inputs.gpu_class, factor_by_key=keyed).resolved(2, 2))
        p.start(tracked_state_of(case), factor)
        return p

    group = started(Lxv, None).choice_group()
    assert group is not None and group(0) == group(1) == group(7)
    keyed = started(Lxv, lambda j, ks, gpus: ("a", "b")[j % 2] if ks is None else 1.0, True)
    group = keyed.choice_group()
    assert group(0) == group(2) == "a" and group(1) == "b"
    assert started(Lxv, lambda j, ks, gpus: 1.0).choice_group() is None

    class Mine(Lxv):
        pass

    assert started(Mine, None).choice_group() is None


def test_lxv_without_placement_inputs():
    """The homogeneous machine (one class, one candidate): best fit, node 1 with one free GPU."""
    for make in (state_of, tracked_state_of):
        p = Lxv()
        state = make(flat_case(2, [0b11, 0b10]))
        p.start(state, None)
        assert p.choose(state, 0, 1, 1) == (0b10, 0b10)


def test_lxv_counts_a_gpu_freed_between_start_and_its_first_choice():
    """Classes 0 and 1 (two thresholds); node 0 busy, node 1 with one free GPU of class 0, node
    2 whole, of class 1. Once node 0's GPU 0 (class 0) is freed, nodes 0 and 1 tie at threshold
    0 (one usable, one free GPU): the lower number, node 0."""
    case = {**flat_case(2, [0b00, 0b01, 0b11]), "cls": [[0, 0], [0, 0], [1, 1]]}
    p = Lxv(PlacementInputs(gpu_class=case["cls"]).resolved(3, 2))
    state = tracked_state_of(case)
    p.start(state, None)
    state.give_back(0b001, 0b01, 1)
    assert p.choose(state, 0, 1, 1) == (0b001, 0b01)


@pytest.mark.parametrize("make", [state_of, tracked_state_of])
def test_lxv_multi_node_candidates_by_hand(make):
    """One GPU per node: nodes 0 (rack 0) and 1 (rack 1) of class 0, node 2 (rack 1) of class 1,
    at half speed; a 2-node job. Threshold 0 takes nodes 0, 1 (two racks), threshold 1 nodes 1,
    2 (rack 1 holds them). Without a factor the fewer racks win: nodes 1, 2. A keyed factor,
    1 / the lowest score held: nodes 0, 1 (factor 1 against 2)."""
    score = [[1.0], [1.0], [0.5]]
    case = flat_case(1, [1, 1, 1], rack=[0, 1, 1], nodes=2)

    def started(factor):
        inputs = PlacementInputs(rack=case["rack"], score=score, gpu_class=[[0], [0], [1]],
                                 factor_by_key=factor is not None)
        p = Lxv(inputs.resolved(3, 1))
        state = make(case)
        p.start(state, factor)
        return p, state

    p, state = started(None)
    assert p.choose(state, 0, 2, 1) == (0b110, 0b1)
    p, state = started(lambda j, ks, gpus: 0 if ks is None else 1 / min(score[k][0] for k in ks))
    assert p.choose(state, 0, 2, 1) == (0b011, 0b1)
    assert p.factor(0, 0b011, 0b1) == 1.0


@pytest.mark.parametrize("make", [state_of, tracked_state_of])
def test_lxv_asks_the_factor_once_per_distinct_candidate(make):
    """Nodes 0, 1 (rack 0) of class 0, node 2 (rack 1) of class 1; a 2-node job: both
    thresholds give nodes 0, 1 (rack 0 holds the job), one candidate, one call."""
    case = flat_case(1, [1, 1, 1], rack=[0, 0, 1], nodes=2)
    p = Lxv(PlacementInputs(rack=case["rack"], gpu_class=[[0], [0], [1]]).resolved(3, 1))
    state = make(case)
    calls = []
    p.start(state, lambda j, ks, gpus: calls.append(ks) or 1.0)
    assert p.choose(state, 0, 2, 1) == (0b011, 0b1)
    assert calls == [[0, 1]]
