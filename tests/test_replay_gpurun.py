"""``replay.gpurun.GpuRun``: the Python engine's bit sets and the compiled engine's arrays give
the same node and GPU sets and ids, each checked against a plain formatting of the sets."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.replay.gpurun import GpuRun

# a job: its nodes (sorted, distinct; [] for a dropped job) and its GPU set on them
_job = st.one_of(
    st.tuples(st.just([]), st.just(0)),
    st.tuples(st.lists(st.integers(0, 70), min_size=1, max_size=4, unique=True).map(sorted),
              st.integers(0, 2**8 - 1)))


def _text(items) -> str:
    return ",".join(str(i) for i in items)


def _bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def _both(jobs):
    """The same run as the Python engine returns it and as the compiled one does (a dropped
    job: one node entry -1, GPU mask 0)."""
    start = np.arange(len(jobs), dtype=np.int64)
    python = GpuRun(start, [sum(1 << k for k in nodes) for nodes, _ in jobs],
                    [mask for _, mask in jobs], [])
    lists = [nodes or [-1] for nodes, _ in jobs]
    off = np.cumsum([0] + [len(n) for n in lists]).astype(np.int64)
    flat = np.array([k for n in lists for k in n], dtype=np.int64)
    compiled = GpuRun(start, None, None, [], node_off=off, node_list=flat,
                      gpu_mask=np.array([mask for _, mask in jobs], dtype=np.int64))
    return python, compiled


@settings(max_examples=200, deadline=None)
@given(st.lists(_job, max_size=25))
def test_bit_sets_and_arrays_give_the_same_sets_and_ids(jobs):
    """Nodes past 63 (Python ints), repeated sets, dropped jobs (no nodes: empty text)."""
    for run in _both(jobs):
        assert run.node_masks() == [sum(1 << k for k in nodes) for nodes, _ in jobs]
        assert run.gpu_masks() == [mask for _, mask in jobs]
        assert run.node_ids().to_pylist() == [_text(nodes) for nodes, _ in jobs]
        assert run.gpu_ids().to_pylist() == [_text(_bits(mask)) for _, mask in jobs]


def test_a_node_list_with_no_entry_for_a_job_is_no_node():
    run = GpuRun(np.zeros(3, np.int64), None, None, [], node_off=np.array([0, 2, 2, 3]),
                 node_list=np.array([4, 9, 1]), gpu_mask=np.array([3, 0, 1]))
    assert run.node_ids().to_pylist() == ["4,9", "", "1"]
    assert run.node_masks() == [(1 << 4) | (1 << 9), 0, 2]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**4 - 1), max_size=3), max_size=20))
def test_gpus_placed_by_count_join_differing_node_sets(node_gpus):
    """``engine_count``'s per-node GPU sets: one set when every node has the same (its mask),
    else each node's joined with ``;`` (mask None); a job with no node: 0 and empty text."""
    run = GpuRun(np.zeros(len(node_gpus), np.int64), [0] * len(node_gpus), None, [],
                 node_gpus=node_gpus)
    for sets, mask, text in zip(node_gpus, run.gpu_masks(), run.gpu_ids().to_pylist()):
        if not sets:
            assert (mask, text) == (0, "")
        elif len(set(sets)) == 1:
            assert (mask, text) == (sets[0], _text(_bits(sets[0])))
        else:
            assert (mask, text) == (None, ";".join(_text(_bits(m)) for m in sets))
