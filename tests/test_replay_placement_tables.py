"""``replay.placement.tables``: the compiled placements' tables on small machines worked by hand
from the layout of ``_choose.pyx``'s and ``_pal.pyx``'s docstrings and the Python policies'
own groups, orders and masks (``Priority.start``, ``Lxv.start``, ``PmFirst``, ``pal_classes``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.replay.placement import PlacementInputs
from swftools.replay.placement import tables as T
from swftools.replay.placement.base import Machine

from .strategies import placement_inputs

# _choose.pxd's O_* blocks, in order
BLOCKS = ("grp", "rack", "model", "order", "gc", "gw", "curw", "curm", "left", "take", "mark",
          "stamp", "cand", "okw", "oknode", "okgpu", "twr", "tw", "byu", "byucnt", "high")
MASKED = ("even", "priority", "priority-wc", "variability-first")  # the policies with GW masks
U32 = (1 << 32) - 1  # a full word of 32 nodes


def _machine(rack, model, score, cls, speed=(1.0,), **extra) -> Machine:
    return Machine(len(rack), len(score[0]) if score else 0, list(rack), list(model),
                   [list(r) for r in score], [list(r) for r in cls], list(speed), **extra)


# three nodes of two GPUs: racks 5, 5, 3 (ranks 1, 1, 0); GPU models 1, 0, 1 of speeds 1.0 (model
# 0) and 2.0 (model 1); classes per GPU; node 0's GPU 0 is first by class despite its lower score,
# node 1's GPU 1 by score (equal classes), node 2's GPU 1 by class
M3 = _machine(rack=[5, 5, 3], model=[1, 0, 1], speed=[1.0, 2.0],
              score=[[1.0, 2.0], [0.5, 0.9], [1.0, 3.0]], cls=[[0, 1], [0, 0], [2, 1]])
M3_ORDER = [0, 1, 1, 0, 1, 0]


def _blocks(aux: np.ndarray, g: int, jobs: int, masked: bool) -> dict[str, list[int]]:
    """The blocks of ``aux``, after checking its header against the documented sizes: N, G, T,
    R and the offsets, each block right after the one before (from HEADER = 25)."""
    assert aux.dtype == np.int64 and aux.ndim == 1
    n, groups, t, r = aux[:4].tolist()
    w = (n + 31) // 32
    sizes = [n, n, n, n * g, groups * (g + 1), groups * w if masked else 0, groups, groups,
             groups, r, r, 1, max(n, 1), t * w, t * n, t * n, t * r, t,
             (t - 1) * (g + 1) * w, (t - 1) * (g + 1), jobs]
    at, out = 25, {}
    for i, (name, size) in enumerate(zip(BLOCKS, sizes)):
        assert aux[4 + i] == at, (name, aux[4 + i].item(), at)
        out[name] = aux[at:at + size].tolist()
        at += size
    assert len(aux) == at
    return out


def _tables(name, m=M3, gains=None, jobs=1):
    return T.placement_tables(name, m, m.n_nodes, m.g, gains, jobs)


# --- _ranks, _speed_tiers, _group_words, _as_grid -------------------------------------------

def test_ranks_by_hand():
    """Dense ranks of the distinct keys ascending; equal keys share a rank."""
    got = T._ranks([7, -2, 7, 3, -2])
    assert got.dtype == np.int64 and got.tolist() == [2, 0, 2, 1, 0]
    assert T._ranks([(1.0, 2), (1.0, 1), (0.5, 9)]).tolist() == [2, 1, 0]
    empty = T._ranks([])
    assert empty.dtype == np.int64 and empty.shape == (0,)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 2)), max_size=30))
def test_ranks_count_the_smaller_distinct_keys(keys):
    """A key's rank is the number of distinct keys below it."""
    want = [len({k for k in keys if k < key}) for key in keys]
    assert T._ranks(keys).tolist() == want


def test_speed_tiers_by_model_speed_then_best_class():
    """Models 0 and 1 equally fast share a tier unless the node's best class differs; the
    slower model 2 comes last; only the first ``n_nodes`` nodes are ranked."""
    m = _machine(rack=[0] * 4, model=[0, 1, 2, 0], speed=[2.0, 2.0, 1.0],
                 score=[[1.0, 1.0]] * 4, cls=[[3, 0], [0, 1], [0, 0], [1, 2]])
    tiers = T._speed_tiers(m, 4)
    assert tiers.dtype == np.int64 and tiers.tolist() == [0, 0, 2, 1]
    assert T._speed_tiers(m, 2).tolist() == [0, 0]
    assert T._speed_tiers(m, 3).tolist() == [0, 0, 1]  # (-2, 0) twice, then (-1, 0)


def test_group_words_past_two_words():
    """70 nodes alternating between two groups: three words of 32 nodes each."""
    grp = np.arange(70, dtype=np.int64) % 2
    got = T._group_words(grp, 2, 3)
    even, odd = 0x55555555, 0xAAAAAAAA
    assert got.dtype == np.int64 and got.shape == (2, 3)
    # the last word holds nodes 64..69: 64, 66, 68 even (bits 0, 2, 4), 65, 67, 69 odd
    assert got.tolist() == [[even, even, 0b010101], [odd, odd, 0b101010]]


def test_group_words_a_group_without_nodes_and_a_spare_word():
    got = T._group_words(np.array([2, 0, 2], dtype=np.int64), 3, 2)
    assert got.tolist() == [[0b010, 0], [0, 0], [0b101, 0]]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=100))
def test_group_words_hold_each_node_once(grp):
    """Bit k % 32 of word k // 32 of node k's group, and nothing else."""
    n_groups, words = max(grp, default=0) + 1, (len(grp) + 31) // 32
    want = [[0] * words for _ in range(n_groups)]
    for k, group in enumerate(grp):
        want[group][k // 32] += 2 ** (k % 32)
    assert T._group_words(np.array(grp, dtype=np.int64), n_groups, words).tolist() == want


def test_as_grid():
    got = T._as_grid([[1, 2], [3, 4]], 2, 2, np.float64)
    assert got.dtype == np.float64 and got.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert T._as_grid([[1.5, 2.0]], 1, 2, np.int64).tolist() == [[1, 2]]
    empty = T._as_grid([], 0, 3, np.int64)
    assert empty.shape == (0, 3) and empty.dtype == np.int64


@pytest.mark.parametrize("rows, n, g", [([[1, 2]], 2, 2), ([[1, 2], [3, 4], [5, 6]], 2, 2),
                                        ([[1, 2], [3]], 2, 2), ([[1], [3, 4]], 2, 2),
                                        ([[1, 2], [3, 4, 5]], 2, 2), ([[1, 2]] * 2, 2, 3)])
def test_as_grid_of_a_wrong_shape_is_none(rows, n, g):
    assert T._as_grid(rows, n, g, np.float64) is None


# --- placement_tables: every block of aux worked by hand ------------------------------------

def test_priority_tables_by_hand():
    """Tiers by (-speed, best class): node 0 (-2, 0) -> 0, node 2 (-2, 1) -> 1, node 1 (-1, 0)
    -> 2; gains 3, 1, 2, 5 have median 2.5, so jobs 0 and 3 are on the high side."""
    aux, score, high = _tables("priority", gains=[3.0, 1.0, 2.0, 5.0], jobs=4)
    assert aux[:25].tolist() == [3, 3, 1, 2, 25, 28, 31, 34, 40, 49, 52, 55, 58, 61, 63, 65, 66,
                                 69, 70, 73, 76, 78, 79, 79, 79]
    b = _blocks(aux, 2, 4, masked=True)
    assert (b["grp"], b["rack"], b["model"], b["order"]) == ([0, 2, 1], [1, 1, 0], [1, 0, 1],
                                                             M3_ORDER)
    assert b["gw"] == [0b001, 0b100, 0b010]  # tier 0: node 0, tier 1: node 2, tier 2: node 1
    assert b["gc"] == [0] * 9 and b["curw"] == b["curm"] == b["left"] == [0] * 3
    assert b["take"] == b["mark"] == [0, 0] and b["stamp"] == [0] and b["cand"] == [0] * 3
    # one threshold admitting every node and no GPU bits (lxv's alone)
    assert (b["okw"], b["oknode"], b["okgpu"]) == ([0b111], [1, 1, 1], [0, 0, 0])
    assert (b["twr"], b["tw"], b["byu"], b["byucnt"]) == ([0, 0], [0], [], [])
    assert b["high"] == [1, 0, 0, 1]
    assert high.dtype == np.bool_ and high.tolist() == [True, False, False, True]
    assert score.dtype == np.float64 and score.shape == (3, 2)
    assert score.tolist() == [[1.0, 2.0], [0.5, 0.9], [1.0, 3.0]]


@pytest.mark.parametrize("gains, want", [
    ([1.0, 2.0, 3.0], [False, False, True]),  # odd count: the median itself is not above it
    ([2.0, 2.0, 2.0], [False, False, False]),
    ([4.0, 1.0, 1.0], [True, False, False]),
    ([1.5, 1.2, 1.0], [True, False, False]),  # the median 1.2, not a whole number
    (None, [False] * 3), ([], [False] * 3)])
def test_priority_high_side_is_strictly_above_the_median(gains, want):
    aux, _, high = _tables("priority", gains=gains, jobs=3)
    assert high.tolist() == want and high.dtype == np.bool_
    assert _blocks(aux, 2, 3, masked=True)["high"] == [int(h) for h in want]


def test_priority_gains_not_one_per_job_are_refused():
    assert _tables("priority", gains=[1.0, 2.0], jobs=3) is None
    assert _tables("priority", gains=[1.0, 2.0, 3.0, 4.0], jobs=3) is None


def test_priority_wc_has_priority_groups_and_no_high_side():
    """``priority-wc`` ranks the nodes as ``priority`` but its gains go to ``waiting_tables``
    (not checked here: gains of any length give tables)."""
    for gains in ([5.0, 1.0], [5.0, 1.0, 0.5]):
        aux, _, high = _tables("priority-wc", gains=gains, jobs=2)
        b = _blocks(aux, 2, 2, masked=True)
        assert aux[1] == 3 and b["grp"] == [0, 2, 1] and b["gw"] == [0b001, 0b100, 0b010]
        assert high.tolist() == [False, False] and b["high"] == [0, 0]


def test_even_groups_by_gpu_model():
    aux, _, high = _tables("even", gains=[9.0, 1.0], jobs=2)
    b = _blocks(aux, 2, 2, masked=True)
    assert aux[:4].tolist() == [3, 2, 1, 2]
    assert b["grp"] == [1, 0, 1] and b["gw"] == [0b010, 0b101] and b["gc"] == [0] * 6
    assert high.tolist() == [False, False] and b["high"] == [0, 0]


def test_variability_first_groups_by_worst_class():
    """Nodes' slowest classes 1, 0, 2: ranks 1, 0, 2."""
    aux, _, _ = _tables("variability-first")
    b = _blocks(aux, 2, 1, masked=True)
    assert aux[1] == 3 and b["grp"] == [1, 0, 2] and b["gw"] == [0b010, 0b001, 0b100]


@pytest.mark.parametrize("name", ["locality-first", "lxv"])
def test_locality_groups_are_racks_without_masks(name):
    aux, _, _ = _tables(name)
    b = _blocks(aux, 2, 1, masked=False)
    assert aux[1] == 2 and aux[3] == 2 and b["grp"] == b["rack"] == [1, 1, 0]
    assert b["gw"] == [] and b["gc"] == [0] * 6 and b["curw"] == [0, 0]


@pytest.mark.parametrize("name", ["packed", "best-fit", "random", "pm-first", "pal"])
def test_ungrouped_policies_have_one_group(name):
    aux, score, high = _tables(name, gains=[2.0, 1.0], jobs=2)
    b = _blocks(aux, 2, 2, masked=False)
    assert aux[:4].tolist() == [3, 1, 1, 2]
    assert b["grp"] == [0, 0, 0] and b["gw"] == [] and b["gc"] == [0, 0, 0]
    assert (b["rack"], b["model"], b["order"]) == ([1, 1, 0], [1, 0, 1], M3_ORDER)
    assert (b["okw"], b["oknode"], b["okgpu"]) == ([0b111], [1, 1, 1], [0, 0, 0])
    assert high.tolist() == [False, False] and score.tolist()[1] == [0.5, 0.9]


def test_lxv_thresholds_by_hand():
    """Classes 0, 1, 2 (T = 3): at class 0 node 0's GPU 0 and node 1's two GPUs qualify (node 1
    whole); at 1 nodes 0 and 1 whole, node 2's GPU 1; at 2 everything."""
    aux, _, _ = _tables("lxv")
    assert aux[:25].tolist() == [3, 2, 3, 2, 25, 28, 31, 34, 40, 46, 46, 48, 50, 52, 54, 56, 57,
                                 60, 63, 72, 81, 87, 90, 96, 102]
    b = _blocks(aux, 2, 1, masked=False)
    assert b["okw"] == [0b010, 0b011, 0b111]
    assert b["oknode"] == [0, 1, 0, 1, 1, 0, 1, 1, 1]
    assert b["okgpu"] == [0b01, 0b11, 0b00, 0b11, 0b11, 0b10, 0b11, 0b11, 0b11]
    assert b["twr"] == [0] * 6 and b["tw"] == [0] * 3
    assert b["byu"] == [0] * 6 and b["byucnt"] == [0] * 6 and b["high"] == [0]


def test_lxv_four_gpus_a_node():
    """Classes 0, 1, 2 on 2 x 4 GPUs: node 0's class-0 GPUs 0 and 3 (0b1001), with class 1 also
    GPU 2 (0b1101); node 1 (all class 1) qualifies whole from threshold 1 on."""
    m = _machine(rack=[0, 0], model=[0, 0], score=[[1.0] * 4] * 2,
                 cls=[[0, 2, 1, 0], [1, 1, 1, 1]])
    aux, _, _ = _tables("lxv", m)
    b = _blocks(aux, 4, 1, masked=False)
    assert aux[:4].tolist() == [2, 1, 3, 1]
    assert b["order"] == [0, 3, 2, 1, 0, 1, 2, 3]  # by class, then GPU (equal scores)
    assert b["okgpu"] == [0b1001, 0, 0b1101, 0b1111, 0b1111, 0b1111]
    assert b["oknode"] == [0, 0, 0, 1, 1, 1] and b["okw"] == [0, 0b10, 0b11]
    assert len(b["byu"]) == 2 * 5 and len(b["byucnt"]) == 2 * 5


def test_lxv_gpu_masks_of_62_gpus_are_exact():
    """At the compiled limit of 62 GPUs a node the GPU masks pass 2**53: node 0 (GPU 61 of
    class 1, the rest 0) has GPUs 0-60 at threshold 0 (2**61 - 1), node 1 (all class 1) none;
    at threshold 1 both have all 62 (2**62 - 1), exact to the last bit."""
    m = _machine(rack=[0, 0], model=[0, 0], score=[[1.0] * 62] * 2,
                 cls=[[0] * 61 + [1], [1] * 62])
    aux, _, _ = _tables("lxv", m)
    assert aux[:4].tolist() == [2, 1, 2, 1]
    b = _blocks(aux, 62, 1, masked=False)
    assert b["okgpu"] == [(1 << 61) - 1, 0, (1 << 62) - 1, (1 << 62) - 1]
    assert b["oknode"] == [0, 0, 1, 1] and b["okw"] == [0, 0b11]
    assert b["order"] == list(range(62)) * 2


def test_one_gpu_a_node():
    """g = 1: every node's order is its GPU 0, ``lxv``'s GPU masks are 0 or 1."""
    m = _machine(rack=[0, 1], model=[0, 0], score=[[1.0], [2.0]], cls=[[1], [0]])
    aux, score, _ = _tables("lxv", m)
    b = _blocks(aux, 1, 1, masked=False)
    assert aux[:4].tolist() == [2, 2, 2, 2] and b["order"] == [0, 0]
    assert b["okgpu"] == [0, 1, 1, 1] and b["oknode"] == [0, 1, 1, 1] and b["okw"] == [2, 3]
    assert len(b["byu"]) == 2 and len(b["byucnt"]) == 2 and score.shape == (2, 1)
    b = _blocks(_tables("priority", m)[0], 1, 1, masked=True)
    assert b["grp"] == [1, 0] and b["gw"] == [0b10, 0b01]  # equal speeds: best class 0 first


def test_racks_rank_ascending_whatever_their_numbers():
    m = _machine(rack=[-1, 7, 7, 2], model=[0] * 4, score=[[1.0]] * 4, cls=[[0]] * 4)
    aux, _, _ = _tables("locality-first", m)
    b = _blocks(aux, 1, 1, masked=False)
    assert aux[3] == 3 and b["rack"] == b["grp"] == [0, 2, 2, 1] and b["take"] == [0] * 3


def test_even_past_two_words_of_nodes():
    """70 nodes, GPU models alternating: two groups of three words each."""
    m = _machine(rack=[0] * 70, model=[k % 2 for k in range(70)], speed=[1.0, 1.0],
                 score=[[1.0]] * 70, cls=[[0]] * 70)
    aux, _, _ = _tables("even", m)
    b = _blocks(aux, 1, 1, masked=True)
    assert b["gw"] == [0x55555555, 0x55555555, 0b010101, 0xAAAAAAAA, 0xAAAAAAAA, 0b101010]
    assert b["okw"] == [U32, U32, 0b111111] and b["cand"] == [0] * 70


def test_lxv_past_one_word_of_nodes():
    """40 nodes of one GPU, nodes 3 and 35 of class 1: at class 0 their bits are missing."""
    m = _machine(rack=[0] * 40, model=[0] * 40, score=[[1.0]] * 40,
                 cls=[[1] if k in (3, 35) else [0] for k in range(40)])
    b = _blocks(_tables("lxv", m)[0], 1, 1, masked=False)
    assert b["okw"] == [U32 - 8, 255 - 8, U32, 255]
    assert len(b["byu"]) == 1 * 2 * 2


@pytest.mark.parametrize("name", T.COMPILED_POLICIES)
def test_no_nodes(name):
    """A machine of no node: one group, one rack, one scratch candidate, no word; ``lxv`` has
    no class threshold to tabulate and declines (it raised numpy's ValueError before)."""
    m = PlacementInputs().resolved(0, 2)
    got = T.placement_tables(name, m, 0, 2, None, 1)
    if name == "lxv":
        assert got is None
        return
    aux, score, high = got
    assert aux[:4].tolist() == [0, 1, 1, 1] and score.shape == (0, 2) and high.tolist() == [False]
    b = _blocks(aux, 2, 1, masked=name in MASKED)
    assert b["gc"] == [0, 0, 0] and b["cand"] == [0] and b["twr"] == [0] and b["gw"] == []


# --- placement_tables: what it declines -------------------------------------------------------

@pytest.mark.parametrize("name", ["first-fit", "Packed", "", "PAL"])
def test_a_policy_without_a_compiled_twin(name):
    assert _tables(name) is None


@pytest.mark.parametrize("name", T.COMPILED_POLICIES)
def test_nodes_without_gpus_are_declined(name):
    """No GPU to place on: every policy declines (``priority`` raised min()'s ValueError)."""
    assert T.placement_tables(name, PlacementInputs().resolved(2, 0), 2, 0, None, 1) is None


def test_inputs_not_of_the_machine_size_are_declined():
    assert T.placement_tables("packed", M3, 4, 2, None, 1) is None
    assert T.placement_tables("packed", M3, 3, 1, None, 1) is None
    ok = dict(n_nodes=2, g=2, rack=[0, 0], model=[0, 0], score=[[1.0, 1.0]] * 2,
              cls=[[0, 0]] * 2, model_speed=[1.0])
    assert T.placement_tables("packed", Machine(**ok), 2, 2, None, 1) is not None
    # the sizes recorded in the Machine, or its lists, not those of the replay
    for bad in ({"n_nodes": 3}, {"g": 3}, {"n_nodes": 1}, {"rack": [0]}, {"model": [0]},
                {"model": [0, 0, 0]}, {"score": [[1.0, 1.0]]}, {"score": [[1.0, 1.0], [1.0]]},
                {"cls": [[0, 0], [0]]}, {"cls": [[0, 0]] * 3}):
        assert T.placement_tables("packed", Machine(**{**ok, **bad}), 2, 2, None, 1) is None, bad


@pytest.mark.parametrize("models, fits", [([0, 62], True), ([0, 63], False), ([-1, 0], False),
                                          ([62, 62], True)])
def test_gpu_models_must_be_bits_of_an_int64(models, fits):
    m = _machine(rack=[0, 0], model=models, speed=[1.0] * 64, score=[[1.0]] * 2, cls=[[0]] * 2)
    got = _tables("packed", m)
    assert (got is not None) == fits
    if fits:
        assert _blocks(got[0], 1, 1, masked=False)["model"] == models


def test_group_mask_words_past_the_limit(monkeypatch):
    """Four GPU models on four nodes of one GPU: ``even``'s masks take 4 words (1 a group), the
    one threshold's 1 x (g + 2) = 3; the limits themselves are taken."""
    m = _machine(rack=[0] * 4, model=[0, 1, 2, 3], speed=[1.0] * 4, score=[[1.0]] * 4,
                 cls=[[0]] * 4)
    monkeypatch.setattr(T, "MAX_WORDS", 4)
    assert _tables("even", m) is not None
    monkeypatch.setattr(T, "MAX_WORDS", 3)
    assert _tables("even", m) is None
    assert _tables("packed", m) is not None  # no masks
    monkeypatch.setattr(T, "MAX_WORDS", 2)
    assert _tables("packed", m) is None


def test_threshold_words_past_the_limit(monkeypatch):
    """``lxv`` on M3: 3 thresholds x 1 word x (2 + 2) = 12 words."""
    monkeypatch.setattr(T, "MAX_WORDS", 12)
    assert _tables("lxv") is not None
    monkeypatch.setattr(T, "MAX_WORDS", 11)
    assert _tables("lxv") is None
    assert _tables("locality-first") is not None  # one threshold: 4 words


def test_every_compiled_policy_has_tables():
    for name in T.COMPILED_POLICIES:
        assert _tables(name, gains=[1.0, 2.0], jobs=2) is not None, name


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 5), st.integers(1, 3), st.data())
def test_groups_follow_the_python_policies(n, g, data):
    """On drawn machines each policy's groups are those its Python twin forms with
    ``Machine.group_masks`` (ascending keys), their word masks those bit sets, the racks those
    of ``rack_masks`` and ``lxv``'s masks ``Lxv.start``'s."""
    m = data.draw(placement_inputs(n, g, 3)).resolved(n, g)
    keys = {"even": lambda k: m.model[k],
            "priority": lambda k: (-m.model_speed[m.model[k]], min(m.cls[k])),
            "variability-first": lambda k: max(m.cls[k]), "locality-first": lambda k: m.rack[k]}
    keys["priority-wc"] = keys["priority"]
    keys["lxv"] = keys["locality-first"]
    racks = m.group_masks(lambda k: m.rack[k])
    for name in T.COMPILED_POLICIES:
        aux, _, _ = _tables(name, m, jobs=3)
        b = _blocks(aux, g, 3, masked=name in MASKED)
        masks = m.group_masks(keys[name]) if name in keys else [(1 << n) - 1]
        assert b["grp"] == [next(i for i, s in enumerate(masks) if s >> k & 1) for k in range(n)]
        assert b["rack"] == [next(i for i, s in enumerate(racks) if s >> k & 1)
                             for k in range(n)]
        assert b["gw"] == (masks if name in MASKED else [])
        assert b["order"] == [i for row in m.gpu_order(True) for i in row]
    classes = sorted({c for row in m.cls for c in row})
    b = _blocks(_tables("lxv", m)[0], g, 1, masked=False)
    assert b["okgpu"] == [sum(1 << i for i in range(g) if m.cls[k][i] <= c)
                          for c in classes for k in range(n)]
    assert b["okw"] == [sum(1 << k for k in range(n) if max(m.cls[k]) <= c) for c in classes]


# --- pal_tables -------------------------------------------------------------------------------

def _pal(name, m, jobs):
    return T.pal_tables(name, m, m.n_nodes, m.g, jobs)


def test_pm_first_tables_by_hand():
    """One class, values 1 / score: [[1, 2], [4, 1], [1, 1]]. GPUs by (value, GPU): [0, 1],
    [1, 0], [0, 1]; nodes by (worst value, node): 2 (1), 0 (2), 1 (4), so node 0 is second,
    node 1 third, node 2 first; the within-node cells are the distinct values 1, 2, 4."""
    m = PlacementInputs(score=[[1.0, 0.5], [0.25, 1.0], [1.0, 1.0]]).resolved(3, 2)
    paux, pval, job_class = _pal("pm-first", m, 2)
    assert paux.dtype == np.int64 and pval.dtype == np.float64
    assert paux.tolist() == [3, 1, 0, 2, 9, 15, 18, 21, 23,  # N, C, pal?, jobs, offsets
                             0, 1, 1, 0, 0, 1,  # RANK
                             2, 0, 1,  # WORST
                             1, 2, 0,  # POS
                             6, 9,  # CELLS: after the 6 values, then 3 cells
                             0, 0]  # CLASS
    assert pval.tolist() == [1.0, 2.0, 4.0, 1.0, 1.0, 1.0, 1.0, 2.0, 4.0]
    assert job_class.dtype == np.int64 and job_class.tolist() == [0, 0]


def test_pal_tables_of_two_classes_by_hand():
    """Class 0 scores all 1 form one class of value 1; class 1's variabilities 2, 1, 1, 1 form
    two classes (centres 1 and 2, over their median 1.5): 4/3 for node 0's GPU 0, 2/3 for the
    others. Class 1 ranks node 0's GPU 1 first and node 1 (worst 2/3) before node 0 (4/3)."""
    inputs = PlacementInputs(class_score=[[[1.0, 1.0], [1.0, 1.0]], [[0.5, 1.0], [1.0, 1.0]]],
                             job_class=[1, 0, 1])
    paux, pval, job_class = _pal("pal", inputs.resolved(2, 2), 3)
    assert paux.tolist() == [2, 2, 1, 3, 9, 17, 21, 25, 28,
                             0, 1, 0, 1, 1, 0, 0, 1,  # RANK, class 0 then class 1
                             0, 1, 1, 0,  # WORST
                             0, 1, 1, 0,  # POS
                             8, 9, 11,  # CELLS: class 0's one cell, class 1's two
                             1, 0, 1]  # CLASS
    assert pval.tolist() == [1.0] * 4 + [4 / 3, 2 / 3, 2 / 3, 2 / 3] + [1.0, 2 / 3, 4 / 3]
    assert job_class.dtype == np.int64 and job_class.tolist() == [1, 0, 1]


def test_pal_cells_are_the_within_node_ones_whatever_the_penalty():
    """A penalty below 1 puts the cross-node cells first; only the within-node ones (every
    distinct value, ascending) are tabulated: a recorded one-node shape never spans nodes."""
    for penalty in (0.5, 1.7):
        m = PlacementInputs(score=[[1.0, 0.5], [0.25, 1.0]], pal_penalty=penalty).resolved(2, 2)
        paux, pval, _ = _pal("pm-first", m, 1)
        assert paux[7:9].tolist() == [9 + 4 + 2 + 2, 9 + 4 + 2 + 2 + 2]  # after RANK, WORST, POS
        assert paux[paux[7]:paux[7] + 2].tolist() == [4, 7] and pval[4:].tolist() == [1, 2, 4]


def test_pal_job_classes():
    """One job class per job with several classes; with one class (or no job classes) every
    job is of class 0, whatever ``job_class`` says."""
    two = [[[1.0, 1.0]] * 2, [[0.5, 1.0]] * 2]
    m = PlacementInputs(class_score=two, job_class=[1, 0]).resolved(2, 2)
    assert _pal("pm-first", m, 2)[2].tolist() == [1, 0]
    assert _pal("pm-first", m, 3) is None and _pal("pm-first", m, 1) is None
    for inputs in (PlacementInputs(class_score=two), PlacementInputs(class_score=two,
                                                                     job_class=[])):
        paux, _, job_class = _pal("pal", inputs.resolved(2, 2), 3)
        assert job_class.tolist() == [0, 0, 0] and paux[-3:].tolist() == [0, 0, 0]
    one = PlacementInputs(class_score=two[:1], job_class=[0, 0]).resolved(2, 2)
    assert _pal("pal", one, 3)[2].tolist() == [0, 0, 0]


@pytest.mark.parametrize("name", ["pm-first", "pal"])
def test_pal_tables_decline_nan_values(name):
    # resolved() refuses a NaN score: the Machine's own values are set after it
    m = PlacementInputs().resolved(2, 2)
    m.score = [[float("nan"), 1.0], [1.0, 1.0]]
    assert _pal(name, m, 1) is None
    m = PlacementInputs(class_score=[[[1.0, 1.0]] * 2, [[1.0, 1.0]] * 2],
                        job_class=[0]).resolved(2, 2)
    m.class_score[1] = [[1.0, float("nan")], [1.0, 1.0]]
    assert _pal(name, m, 1) is None


def test_pm_first_and_pal_of_one_value_on_one_gpu():
    """1 x 1 machine: one value (1 / 2 for pm-first, 1 over its own median for pal)."""
    m = PlacementInputs(score=[[2.0]]).resolved(1, 1)
    for name, flag, value in (("pm-first", 0, 0.5), ("pal", 1, 1.0)):
        paux, pval, _ = _pal(name, m, 1)
        assert paux.tolist() == [1, 1, flag, 1, 9, 10, 11, 12, 14, 0, 0, 0, 1, 2, 0], name
        assert pval.tolist() == [value, value], name


# --- waiting_tables ---------------------------------------------------------------------------

def test_waiting_tables_by_hand():
    """Gains 2, 5, 2, 1: ranks 1, 0, 1, 2 (highest first, equal gains one rank); tiers 0, 0, 2,
    1 give the nodes fastest first 0, 1, 3, 2 (stable within a tier)."""
    m = _machine(rack=[0] * 4, model=[0, 1, 2, 0], speed=[2.0, 2.0, 1.0],
                 score=[[1.0, 1.0]] * 4, cls=[[3, 0], [0, 1], [0, 0], [1, 2]])
    rank, order = T.waiting_tables(m, 4, [2.0, 5.0, 2.0, 1.0], 4)
    assert rank.dtype == order.dtype == np.int64
    assert rank.tolist() == [1, 0, 1, 2] and order.tolist() == [0, 1, 3, 2]
    for gains in (None, []):
        rank, order = T.waiting_tables(m, 4, gains, 3)
        assert rank.dtype == np.int64 and rank.tolist() == [0, 0, 0]
        assert order.tolist() == [0, 1, 3, 2]
    assert T.waiting_tables(M3, 3, None, 1)[1].tolist() == [0, 2, 1]
    ties = _machine(rack=[0] * 4, model=[0, 1, 0, 1], speed=[1.0, 3.0],
                    score=[[1.0]] * 4, cls=[[0]] * 4)
    assert T.waiting_tables(ties, 4, None, 1)[1].tolist() == [1, 3, 0, 2]


def test_waiting_tables_node_order_is_stable_on_many_nodes():
    """40 nodes of models k % 3, model 0 fastest: the nodes of each model ascending (an
    unstable sort of so many ties mixes them)."""
    m = _machine(rack=[0] * 40, model=[k % 3 for k in range(40)], speed=[3.0, 2.0, 1.0],
                 score=[[1.0]] * 40, cls=[[0]] * 40)
    want = list(range(0, 40, 3)) + list(range(1, 40, 3)) + list(range(2, 40, 3))
    assert T.waiting_tables(m, 40, None, 1)[1].tolist() == want


def test_waiting_tables_gain_ranks_of_integers_and_negatives():
    rank, _ = T.waiting_tables(M3, 3, np.array([0, 1, 255, 1], dtype=np.uint8), 4)
    assert rank.tolist() == [2, 1, 0, 1]
    assert T.waiting_tables(M3, 3, [-1.0, 0.0, -2.0], 3)[0].tolist() == [1, 0, 2]


@pytest.mark.parametrize("gains, jobs", [([1.0, 2.0], 3), ([1.0, 2.0, 3.0], 2),
                                         ([1.0, float("nan")], 2), ([[1.0, 2.0]], 2),
                                         ([[1.0], [2.0]], 2)])
def test_waiting_tables_decline(gains, jobs):
    assert T.waiting_tables(M3, 3, gains, jobs) is None


@settings(max_examples=20, deadline=None)
@given(st.lists(st.sampled_from([-1.5, 0.0, 1.0, 1.2, 2.0]), min_size=1, max_size=20))
def test_gain_rank_counts_the_higher_distinct_gains(gains):
    """Rank 0 is the highest gain; a job's rank is the number of distinct gains above its."""
    rank, _ = T.waiting_tables(M3, 3, gains, len(gains))
    assert rank.tolist() == [len({x for x in gains if x > gain}) for gain in gains]
