"""The replayable workload: per-job arrays in queue order, and the jobs that cannot be replayed.

Pinned semantics (as the archive's users read them):

* a job's *size* is its requested processors (SWF field 8, ``requested_procs``) when known and
  positive, else its allocated ones (field 5, ``gpus``): :func:`job_size`, the one rule the
  replay and the consistency comparison of the recorded schedule (:mod:`.compare`) share;
* its *estimate* is its requested time (field 9, ``requested_walltime_s``) when known, else its
  run time (field 4, ``walltime_s``);
* with ``kill_at_request`` the run time is capped at the requested time when that is known;
* jobs with an unknown submit time, run time or size are skipped and reported, and so are jobs
  that can never fit the machine;
* queue order is submit order, ties broken by job id (then by row, for duplicate ids);
* GPU model: a job's shape is its recorded ``nodes`` x ``gpus_per_node`` when both are known,
  else derived from its size (``ceil(size / gpus_per_node)`` nodes); multi-node jobs hold
  whole nodes, so their size is ``nodes x gpus_per_node`` of the site;
* ``shape="gpus"`` (opt-in; HPC sites enforce recorded shapes): a job's size is its GPU count,
  its recorded ``nodes x gpus_per_node`` when both are known, else its size; ``engine_count``
  places it on any free GPUs (a 2-node x 4-GPU job may take 8 GPUs of one node, or spread).
  ``nodes`` x ``gpus_per_node`` is then its fewest-nodes shape (one node when the count fits
  one, else ``ceil(count / gpus_per_node)`` nodes of ``gpus_per_node``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.errors import UsageError
from swftools.replay.model import FlatPool, GpuNodes

SKIP_UNKNOWN_SUBMIT = "unknown submit time"
SKIP_UNKNOWN_RUNTIME = "unknown run time"
SKIP_UNKNOWN_SIZE = "unknown size (requested and allocated processors unknown or 0)"
SKIP_NEVER_FITS = "never fits"
SHAPES = ("recorded", "gpus")  # how a job's node shape is taken (see the module docstring)


@dataclass
class Workload:
    """Replayable jobs sorted in queue order (submit time, then job id)."""

    row: np.ndarray  # row index in the input table
    job_id: np.ndarray
    submit: np.ndarray
    runtime: np.ndarray
    estimate: np.ndarray
    size: np.ndarray  # processors (flat pool) or GPUs held (GPU model: nodes x GPUs per node)
    nodes: np.ndarray  # GPU model: nodes per job (flat pool: all ones)
    gpus_per_node: np.ndarray  # GPU model: GPUs used on each node (flat pool: == size)
    skipped_row: np.ndarray
    skipped_reason: list[str]

    def __len__(self) -> int:
        return len(self.row)


def int_column(table: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(values with nulls as 0, known mask) of an integer column."""
    if not table.num_rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    col = table.column(name).combine_chunks()
    valid = jt.validity(col)  # the bitmap (``is_null`` would import pyarrow.compute, ~0.1 s)
    known = np.ones(len(col), dtype=bool) if valid is None else valid
    values = jt.filled(col, 0)
    return values.astype(np.int64, copy=False), known


def job_size(table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """(size, known mask) of every job: the one job-size rule of replay and comparison.

    A job's size is its requested processors (SWF field 8, ``requested_procs``) when known and
    positive, else its allocated ones (field 5, ``gpus``) when known and positive; otherwise it
    is unknown. Requested first, because that is what a scheduler sees when it decides; the
    comparison of the recorded schedule uses the same size so that a replay and the recorded
    schedule of one trace are measured in the same jobs' units. (In the GPU model, ``prepare``
    then gives a job with a recorded node shape that shape.)
    """
    requested, requested_known = int_column(table, "requested_procs")
    allocated, allocated_known = int_column(table, "gpus")
    use_requested = requested_known & (requested > 0)
    size = np.where(use_requested, requested, allocated)
    known = use_requested | (allocated_known & (allocated > 0))
    return size, known


def prepare(table: pa.Table, model: FlatPool | GpuNodes, *,
            kill_at_request: bool = False, shape: str = "recorded") -> Workload:
    """Extract the replayable jobs of ``table`` for ``model``; report the others with a reason.
    ``shape``: ``recorded`` or ``gpus`` (see the module docstring; a flat pool has no shapes)."""
    if shape not in SHAPES:
        raise UsageError(f"unknown job shape {shape!r} (choose from {', '.join(SHAPES)})")
    n = table.num_rows
    job_id, _ = int_column(table, "job_id")
    submit, submit_known = int_column(table, "submit_time")
    runtime, runtime_known = int_column(table, "walltime_s")
    requested_time, requested_time_known = int_column(table, "requested_walltime_s")
    nodes_col, nodes_known = int_column(table, "nodes")
    per_node_col, per_node_known = int_column(table, "gpus_per_node")
    size, size_known = job_size(table)

    runtime_known &= runtime >= 0
    if kill_at_request:
        runtime = np.where(requested_time_known, np.minimum(runtime, requested_time), runtime)
    estimate = np.where(requested_time_known, requested_time, runtime)
    del requested_time, requested_time_known  # (10M jobs: 90 MB a column; drop them early)

    if isinstance(model, GpuNodes):
        g = model.gpus_per_node
        explicit = nodes_known & per_node_known & (nodes_col > 0) & (per_node_col > 0)
        if shape == "gpus":  # the GPU count on the fewest nodes
            size = np.where(explicit, nodes_col * per_node_col, size)
            size_known |= explicit
            explicit = np.zeros(n, dtype=bool)
        nodes = np.where(explicit, nodes_col, -(-size // g))
        per_node = np.where(explicit, per_node_col, np.where(nodes > 1, g, size))
        per_node = np.where(nodes > 1, g, per_node)  # multi-node jobs hold whole nodes
        size_known |= explicit
        if shape != "gpus":
            size = nodes * per_node
        del nodes_col, per_node_col, explicit
    else:
        nodes = np.ones(n, dtype=np.int64)
        per_node = size

    ok = submit_known & runtime_known & size_known
    never = ok & ~model.can_ever_fit(submit, nodes, per_node, size)
    ok &= ~never
    skipped = np.flatnonzero(~ok)
    # the reason of each skipped row: the first unknown of submit, run time, size; else too big
    cause = np.select([~submit_known[skipped], ~runtime_known[skipped], ~size_known[skipped]],
                      [0, 1, 2], 3)
    unknown = (SKIP_UNKNOWN_SUBMIT, SKIP_UNKNOWN_RUNTIME, SKIP_UNKNOWN_SIZE)
    reasons = [unknown[c] if c < 3 else f"{SKIP_NEVER_FITS}: " + model.describe_demand(
        int(nodes[i]), int(per_node[i]), int(size[i]))
        for i, c in zip(skipped.tolist(), cause.tolist())]
    if not len(skipped) and _in_queue_order(submit, job_id):
        # every row replayable, already in queue order (the usual table): no copies (at 10
        # million jobs each copy of the eight columns is 640 MB)
        return Workload(row=np.arange(n, dtype=np.int64), job_id=job_id, submit=submit,
                        runtime=runtime, estimate=estimate, size=size, nodes=nodes,
                        gpus_per_node=per_node, skipped_row=skipped, skipped_reason=reasons)
    rows = np.flatnonzero(ok)
    order = np.lexsort((rows, job_id[rows], submit[rows]))
    rows = rows[order]
    return Workload(
        row=rows,
        job_id=job_id[rows],
        submit=submit[rows],
        runtime=runtime[rows],
        estimate=estimate[rows],
        size=size[rows],
        nodes=nodes[rows],
        gpus_per_node=per_node[rows],
        skipped_row=skipped,
        skipped_reason=reasons,
    )


def _in_queue_order(submit: np.ndarray, job_id: np.ndarray) -> bool:
    """Whether rows are already in queue order: submit time, then job id (then row)."""
    step = np.diff(submit)
    if (step < 0).any():
        return False
    ties = np.flatnonzero(step == 0)
    return not (job_id[ties + 1] < job_id[ties]).any()
