"""``replay.workload.prepare`` against a row-by-row reading of its module docstring: job size,
estimate, kill at request, skip reasons, node shapes on GPU sites and queue order, on tables
in any row order with nulls, zeros, negatives and repeated ids."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import table as jt
from swftools.errors import UsageError
from swftools.replay.model import FlatPool, GpuNodes
from swftools.replay.workload import (SKIP_NEVER_FITS, SKIP_UNKNOWN_RUNTIME, SKIP_UNKNOWN_SIZE,
                                      SKIP_UNKNOWN_SUBMIT, job_size, prepare)

from .strategies import examples
from .test_replay import gpu_site


def _mostly(values):
    """Unknown (null) one time in five: most rows are replayable, the rest skipped."""
    return st.one_of(values, values, values, values, st.none())


_row = st.fixed_dictionaries({
    "job_id": st.integers(1, 6), "submit_time": _mostly(st.integers(0, 40)),
    "walltime_s": _mostly(st.integers(-1, 50)),
    "requested_walltime_s": _mostly(st.integers(0, 60)),
    "requested_procs": _mostly(st.integers(-1, 10)), "gpus": _mostly(st.integers(-1, 10)),
    "nodes": _mostly(st.integers(-1, 4)), "gpus_per_node": _mostly(st.integers(-1, 5))})
_COLUMNS = ("job_id", "submit_time", "walltime_s", "requested_walltime_s", "requested_procs",
            "gpus", "nodes", "gpus_per_node")


def _site(g: int, timeline: list[tuple[int, int]]):
    return gpu_site(gpus=g, timeline=timeline)


def _expected(rows, model, kill, shape):
    """Each job's (row, id, submit, run, estimate, size, nodes, per node) in queue order, and
    each skipped row's reason, read from the docstring one row at a time."""
    kept, skipped = [], []
    for i, r in enumerate(rows):
        req, alloc = r["requested_procs"], r["gpus"]
        size = req if req is not None and req > 0 else (
            alloc if alloc is not None and alloc > 0 else None)
        run = r["walltime_s"] if r["walltime_s"] is not None and r["walltime_s"] >= 0 else None
        if run is not None and kill and r["requested_walltime_s"] is not None:
            run = min(run, r["requested_walltime_s"])
        estimate = r["requested_walltime_s"] if r["requested_walltime_s"] is not None else run
        nodes, per_node = 1, size
        if isinstance(model, GpuNodes):
            g = model.gpus_per_node
            recorded = all(r[c] is not None and r[c] > 0 for c in ("nodes", "gpus_per_node"))
            if shape == "gpus":
                count = r["nodes"] * r["gpus_per_node"] if recorded else size
                size = count
                nodes = per_node = None
                if count is not None:
                    nodes = -(-count // g)
                    per_node = g if nodes > 1 else count
            else:
                if recorded:
                    nodes, per_node = r["nodes"], r["gpus_per_node"]
                elif size is not None:
                    nodes = -(-size // g)
                    per_node = g if nodes > 1 else size
                else:
                    nodes = None
                if nodes is not None and nodes > 1:
                    per_node = g
                size = None if nodes is None else nodes * per_node
        if r["submit_time"] is None:
            skipped.append((i, SKIP_UNKNOWN_SUBMIT))
        elif run is None:
            skipped.append((i, SKIP_UNKNOWN_RUNTIME))
        elif size is None:
            skipped.append((i, SKIP_UNKNOWN_SIZE))
        elif not _fits(model, r["submit_time"], nodes, per_node, size):
            skipped.append((i, SKIP_NEVER_FITS))
        else:
            kept.append((r["submit_time"], r["job_id"], i, run, estimate, size, nodes, per_node))
    kept.sort()
    return [(i, j, s, run, est, size, n, p) for s, j, i, run, est, size, n, p in kept], skipped


def _fits(model, submit, nodes, per_node, size):
    if isinstance(model, FlatPool):
        return size <= model.procs
    later = [n for since, n in model.capacity_changes() if since > submit]
    in_force = model.nodes_at(submit)
    return per_node <= model.gpus_per_node and nodes <= max([in_force, *later])


def _check(rows, model, kill, shape):
    table = jt.from_columns({c: [r[c] for r in rows] for c in _COLUMNS}, {})
    work = prepare(table, model, kill_at_request=kill, shape=shape)
    kept, skipped = _expected(rows, model, kill, shape)
    got = list(zip(*(a.tolist() for a in (work.row, work.job_id, work.submit, work.runtime,
                                           work.estimate, work.size, work.nodes,
                                           work.gpus_per_node))))
    assert got == kept
    for name in ("row", "job_id", "submit", "runtime", "estimate", "size", "nodes",
                 "gpus_per_node", "skipped_row"):
        assert getattr(work, name).dtype == "int64", name
    assert list(zip(work.skipped_row.tolist(), [r.split(":")[0] for r in work.skipped_reason])) \
        == skipped
    assert len(work) == len(kept)


@settings(max_examples=examples(70), deadline=None)
@given(st.lists(_row, max_size=14), st.integers(1, 12), st.booleans())
def test_flat_pool_matches_the_docstring(rows, procs, kill):
    _check(rows, FlatPool(procs), kill, "recorded")


@settings(max_examples=300, deadline=None)
@given(st.lists(_row, max_size=14), st.sampled_from([1, 2, 4]),
       st.lists(st.tuples(st.integers(0, 50), st.integers(1, 4)), min_size=1, max_size=3,
                unique_by=lambda e: e[0]).map(sorted),
       st.booleans(), st.sampled_from(["recorded", "gpus"]))
def test_gpu_nodes_match_the_docstring(rows, g, timeline, kill, shape):
    """Recorded or derived shapes, multi-node jobs on whole nodes, a capacity that grows or
    shrinks after a job's submission."""
    _check(rows, GpuNodes(_site(g, timeline)), kill, shape)


def test_never_fits_names_the_demand_and_the_machine():
    table = jt.from_columns({"job_id": [1, 2], "submit_time": [0, 0], "walltime_s": [5, 5],
                             "gpus": [9, 3], "nodes": [None, 5], "gpus_per_node": [None, 1]}, {})
    flat = prepare(table, FlatPool(8))
    assert flat.skipped_reason == ["never fits: needs 9 processors, the machine has 8"]
    gpu = prepare(table, GpuNodes(_site(4, [(0, 2), (30, 4)])))
    assert gpu.skipped_reason == ["never fits: needs 5 nodes x 4 GPUs, the site has at most "
                                  "4 nodes x 4 GPUs"]
    assert gpu.job_id.tolist() == [1]  # 9 GPUs: 3 nodes x 4, fits after t=30


def test_job_size_prefers_positive_requested_processors():
    table = jt.from_columns({"job_id": [1, 2, 3, 4, 5], "requested_procs": [4, 0, None, -1, None],
                             "gpus": [2, 3, 5, 0, None]}, {})
    size, known = job_size(table)
    assert size.tolist()[:3] == [4, 3, 5] and known.tolist() == [True, True, True, False, False]


def test_shapes_by_hand():
    """Recorded 1 x 2 of a 3-processor request; recorded 2 x 1 on 4-GPU nodes (whole nodes:
    8); 6 GPUs unrecorded (2 x 4); by GPU count the recorded 2 x 1 is 1 x 2."""
    table = jt.from_columns({"job_id": [1, 2, 3], "submit_time": [0, 1, 2],
                             "walltime_s": [5, 5, 5], "requested_procs": [3, 2, 6],
                             "nodes": [1, 2, None], "gpus_per_node": [2, 1, None]}, {})
    model = GpuNodes(_site(4, [(0, 4)]))
    work = prepare(table, model)
    assert (work.nodes.tolist(), work.gpus_per_node.tolist(), work.size.tolist()) == (
        [1, 2, 2], [2, 4, 4], [2, 8, 8])
    work = prepare(table, model, shape="gpus")
    assert (work.nodes.tolist(), work.gpus_per_node.tolist(), work.size.tolist()) == (
        [1, 1, 2], [2, 2, 4], [2, 2, 6])


def test_run_times_are_capped_at_the_request_only_when_asked():
    table = jt.from_columns({"job_id": [1], "submit_time": [0], "walltime_s": [50],
                             "requested_walltime_s": [30], "gpus": [1]}, {})
    assert prepare(table, FlatPool(1)).runtime.tolist() == [50]
    assert prepare(table, FlatPool(1), kill_at_request=True).runtime.tolist() == [30]


def test_an_empty_table_and_an_unknown_shape():
    empty = jt.from_columns({c: [] for c in _COLUMNS}, {})
    _check([], FlatPool(4), False, "recorded")
    _check([], GpuNodes(_site(2, [(0, 1)])), False, "recorded")
    with pytest.raises(UsageError, match=r"unknown job shape 'nodes' \(choose from recorded, "
                                         r"gpus\)"):
        prepare(empty, FlatPool(4), shape="nodes")


def test_rows_in_queue_order_are_used_as_they_are():
    """Sorted rows (submit, then id) with nothing skipped: the workload is the table's rows."""
    table = jt.from_columns({"job_id": [3, 1, 2], "submit_time": [0, 5, 5],
                             "walltime_s": [1, 1, 1], "gpus": [1, 1, 1]}, {})
    assert prepare(table, FlatPool(2)).row.tolist() == [0, 1, 2]
    swapped = jt.from_columns({"job_id": [3, 2, 1], "submit_time": [0, 5, 5],
                               "walltime_s": [1, 1, 1], "gpus": [1, 1, 1]}, {})
    assert prepare(swapped, FlatPool(2)).row.tolist() == [0, 2, 1]
    later_first = jt.from_columns({"job_id": [1, 2], "submit_time": [5, 0],
                                   "walltime_s": [1, 1], "gpus": [1, 1]}, {})
    assert prepare(later_first, FlatPool(2)).row.tolist() == [1, 0]
