"""Replay a trace through a textbook FCFS / EASY-backfilling scheduler on declared resources.

``replay(table, site=..., policy="easy")`` returns a ``ReplayResult``; ``compare(table, result)``
(in ``swftools.replay.compare``) sets the recorded schedule against it.

Resource model: with ``site`` (a ``Site``, preset name or settings file) the site's GPU nodes
(``model.GpuNodes``); with ``procs`` a flat pool of that many processors; with neither, the
preset named in the table's metadata, else a flat pool of the SWF header's ``MaxProcs``
(``MaxNodes`` when only that is declared, as in model-generated traces).

Placement and run-time factors (what-if replays): ``placement`` (a name of
``placement.PLACEMENTS`` or a ``placement.Placement``) chooses the nodes and GPUs of every job,
with ``placement_inputs`` (``placement.PlacementInputs``: racks, GPU models, per-GPU scores and
classes, per-row gains) and ``seed`` (``random``); ``runtime_factor(row, nodes, gpus)`` scales a
job's run time and EASY estimate by the factor of the placement it got (``row``: the job's row in
``table``); ``min_factor`` (scalar or per row) bounds the factors from below for the backfill
filter. Either one runs the general path of ``engine_gpu.run_gpu``; a flat pool then runs as
``procs`` one-GPU nodes (``model.FlatNodes``), processors listed in ``node_ids``. Without them
the output is byte-identical to a plain replay. Large replays (``engine_gpu.COMPILED_MIN_JOBS``)
with a built-in placement and no factor, or a keyed factor also given in compiled form
(``PlacementInputs.factor_kernel``, its keys per row: mapped to queue order here), run the
general path's compiled twin (``engine_general``): the same output.

Job shapes: ``shape="recorded"`` (default; HPC sites enforce them) replays each job on its
recorded ``nodes x gpus_per_node``; ``shape="gpus"`` (opt-in) places a job by its GPU count,
anywhere, partial nodes allowed (``engine_count``, Python only; ``node_ids`` lists the nodes it
got, ``nodes`` their count, ``gpu_ids`` the GPUs of each, ``;`` between nodes whose sets
differ). A flat pool has no shapes.
"""

from __future__ import annotations

import dataclasses
import sys
import types

from pathlib import Path
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.errors import UsageError
from swftools.replay.engine_count import run_count
from swftools.replay.engine_flat import run_flat
from swftools.replay.engine_gpu import run_gpu
from swftools.replay.model import ALLOCATIONS, FlatNodes, FlatPool, GpuNodes
from swftools.replay.placement import (PLACEMENTS, Placement, PlacementInputs, RuntimeFactor,
                                       make_placement)
from swftools.replay.result import (JOBS_SCHEMA, SCALED_JOBS_SCHEMA, SKIPPED_SCHEMA, ReplayResult,
                                    summarize)
from swftools.replay.workload import Workload, prepare
from swftools.site import Site, resolve_site
from swftools.formats.swf.header import header_int

POLICIES = ("fcfs", "easy")

__all__ = ["ALLOCATIONS", "PLACEMENTS", "POLICIES", "PlacementInputs", "ReplayResult", "replay",
           "resource_model"]


def resource_model(table: pa.Table, site: Site | str | Path | None = None,
                   procs: int | None = None,
                   allocation: str = "first-fit") -> FlatPool | GpuNodes:
    """The resource model a replay of ``table`` uses (see the module docstring)."""
    if site is not None and procs is not None:
        raise UsageError("give either a site (GPU node model) or a processor count (flat pool), "
                         "not both")
    if procs is not None:
        if procs < 1:
            raise UsageError(f"--procs must be a positive processor count, not {procs}")
        return FlatPool(int(procs))
    resolved = resolve_site(site, table)
    if resolved is not None:
        return GpuNodes(resolved, allocation)
    header = jt.get_metadata(table).get("swf_header") or []
    for key in ("MaxProcs", "MaxNodes"):  # model traces (e.g. Lublin's) state only MaxNodes
        declared = header_int(header, key)
        if declared is not None and declared >= 1:
            return FlatPool(declared)
    raise UsageError("the trace declares neither MaxProcs nor MaxNodes in its SWF header; "
                     "give --procs N (flat pool) or --site (GPU nodes)")


def replay(table: pa.Table, site: Site | str | Path | None = None, policy: str = "easy",
           allocation: str = "first-fit", kill_at_request: bool = False,
           procs: int | None = None, placement: str | Placement | None = None,
           placement_inputs: PlacementInputs | None = None,
           runtime_factor: RuntimeFactor | None = None,
           min_factor: float | np.ndarray | None = None, seed: int = 0,
           shape: str = "recorded",
           mold: Callable[[int, int], tuple[int, int, float] | None] | None = None
           ) -> ReplayResult:
    """Replay ``table`` under ``policy`` (``fcfs`` or ``easy``) on the declared resources
    (placement and run-time factors: see the module docstring). ``shape="gpus"`` places jobs
    by their GPU count, partial nodes allowed (``engine_count``, Python only). ``mold(row,
    bound)``: a moldable job's shape at its start (``engine_gpu.run_gpu``'s ``mold``, called
    with the table row)."""
    if policy not in POLICIES:
        raise UsageError(f"unknown policy {policy!r} (choose from {', '.join(POLICIES)})")
    if allocation not in ALLOCATIONS:
        raise UsageError(f"unknown allocation {allocation!r} (choose from {', '.join(ALLOCATIONS)})")
    model = resource_model(table, site, procs, allocation)
    work = prepare(table, model, kill_at_request=kill_at_request, shape=shape)
    by_count = shape == "gpus" and isinstance(model, GpuNodes)  # engine_count, Python only
    skipped_rows = list(work.skipped_row)
    skipped_reasons = list(work.skipped_reason)
    node_ids = gpu_ids = None
    keep = np.ones(len(work), dtype=bool)
    if by_count and mold is not None:
        raise UsageError("moldable policies choose each job's shape themselves: "
                         "they cannot be combined with shape='gpus'")
    general = placement is not None or runtime_factor is not None or by_count \
        or mold is not None
    scaled = None
    if general:
        model, work, chosen, factor, bound, kernel = _general_inputs(
            model, work, placement, placement_inputs, runtime_factor, min_factor, seed)
        if by_count:
            run = run_count(work, model, policy, chosen, factor)
            work = dataclasses.replace(work, nodes=np.asarray(
                [m.bit_count() for m in run.node_sets], dtype=np.int64))
        else:
            mold_q = None
            if mold is not None:
                queue_rows = work.row.tolist()

                def mold_q(j: int, fit_bound: int) -> tuple[int, int, float] | None:
                    return mold(queue_rows[j], fit_bound)
            run = run_gpu(work, model, policy, chosen, factor, bound, factor_kernel=kernel,
                          mold=mold_q)
            if run.shapes is not None:  # moldable jobs: the shapes they ran on
                work = dataclasses.replace(work, nodes=run.shapes[0], gpus_per_node=run.shapes[1],
                                           size=run.shapes[0] * run.shapes[1])
            if mold is not None:
                scaled = (run.runtime, run.estimate)
        start = run.start
        node_ids = run.node_ids()
        gpu_ids = run.gpu_ids() if isinstance(model, GpuNodes) else None
        if runtime_factor is not None:
            scaled = (run.runtime, run.estimate)
        for j, reason in run.dropped:
            keep[j] = False
            skipped_rows.append(work.row[j])
            skipped_reasons.append(reason)
        gpu_model = isinstance(model, GpuNodes)
        g = model.gpus_per_node
        capacity = [(t, nodes * g) for t, nodes in model.capacity_changes()]
        unit = "GPUs" if gpu_model else "processors"
        allocation_used = allocation if gpu_model else None
        described = f"{model.describe()}, placement {chosen.name}"
        jobs = _jobs_table(table, work, start, keep, node_ids, gpu_ids, gpu_model, scaled,
                           flat_nodes=not gpu_model)
        skipped = _skipped_table(table, skipped_rows, skipped_reasons)
        summary = summarize(jobs, skipped, model=described, policy=policy,
                            allocation=allocation_used, kill_at_request=kill_at_request,
                            unit=unit, capacity=capacity)
        return ReplayResult(jobs, skipped, summary, capacity)
    if isinstance(model, GpuNodes):
        run = run_gpu(work, model, policy)
        start = run.start
        node_ids = run.node_ids()
        gpu_ids = run.gpu_ids()
        for j, reason in run.dropped:
            keep[j] = False
            skipped_rows.append(work.row[j])
            skipped_reasons.append(reason)
        del run  # its node lists are in node_ids now (10 million jobs: 0.3 GB)
        capacity = [(t, nodes * model.gpus_per_node) for t, nodes in model.capacity_changes()]
        unit, allocation_used = "GPUs", allocation
    else:
        start = run_flat(work, model.procs, policy)
        capacity = [(0, model.procs)]
        unit, allocation_used = "processors", None
    jobs = _jobs_table(table, work, start, keep, node_ids, gpu_ids, isinstance(model, GpuNodes))
    skipped = _skipped_table(table, skipped_rows, skipped_reasons)
    summary = summarize(jobs, skipped, model=model.describe(), policy=policy,
                        allocation=allocation_used, kill_at_request=kill_at_request, unit=unit,
                        capacity=capacity)
    return ReplayResult(jobs, skipped, summary, capacity)


def _general_inputs(model, work, placement, inputs, runtime_factor, min_factor, seed):
    """The engine's inputs for a replay with a placement or run-time factors: the model (a flat
    pool becomes one-GPU nodes), the workload (a flat job of size s is s nodes x 1), the bound
    placement, the factor callback and bound in queue order, and the compiled factor
    (``PlacementInputs.factor_kernel``) with its keys in queue order."""
    import dataclasses

    if isinstance(model, FlatPool):
        model = FlatNodes(model.procs)
        work = dataclasses.replace(work, nodes=work.size.copy(),
                                   gpus_per_node=np.ones(len(work), dtype=np.int64))
    inputs = inputs or PlacementInputs()
    gains = None
    if inputs.gain is not None:
        gain = np.asarray(inputs.gain, dtype=float)
        gains = gain[work.row].tolist() if len(work) else []
    if inputs.job_class is not None:  # rows -> queue order, as the gains
        job_class = np.asarray(inputs.job_class, dtype=np.int64)
        inputs = dataclasses.replace(inputs, job_class=job_class[work.row].tolist()
                                     if len(work) else [])
    if isinstance(placement, Placement):
        chosen = placement
    else:
        name = placement or ("best-fit" if model.allocation == "best-fit" else "packed")
        machine = inputs.resolved(model.max_nodes, model.gpus_per_node)
        chosen = make_placement(name, machine, gains, seed)
    factor = None
    if runtime_factor is not None:
        rows: list[int] = []  # the rows as ints, made on the first call (the Python path's)
        user = runtime_factor

        def factor(j: int, nodes: list[int], gpus: list[list[int]]) -> float:
            if not rows:
                rows.extend(work.row.tolist())
            return user(rows[j], nodes, gpus)
    bound = min_factor
    if min_factor is not None and not isinstance(min_factor, (int, float)):
        bound = np.asarray(min_factor, dtype=float)[work.row].tolist()
    kernel = inputs.factor_kernel
    if kernel is not None and runtime_factor is not None:
        kernel = dataclasses.replace(kernel, keys=np.asarray(kernel.keys, dtype=np.int64)[
            work.row])
    return model, work, chosen, factor, bound, kernel


def _jobs_table(table: pa.Table, work: Workload, start: np.ndarray, keep: np.ndarray,
                node_ids: pa.Array | None, gpu_ids: pa.Array | None, gpu: bool,
                scaled: tuple[np.ndarray, np.ndarray] | None = None,
                flat_nodes: bool = False) -> pa.Table:
    every = bool(keep.all())  # the usual case: no row dropped, so no copies (10M jobs: 80 MB
    idx = None if every else np.flatnonzero(keep)  # a column)
    rows = len(keep) if every else len(idx)

    def kept(values):
        if isinstance(values, np.ndarray):
            return values if every else values[idx]
        return values if every else values.take(jt.from_numpy(idx))

    start = kept(start)
    submit = kept(work.submit)
    queue = _in_rows(table.column("queue"), kept(work.row)) if table.num_rows \
        else pa.nulls(0, pa.string())
    run = kept(work.runtime if scaled is None else scaled[0])
    columns: dict[str, Any] = {
        "job_id": kept(work.job_id),
        "queue": queue,
        "submit_time": submit,
        "start_time": start,
        "end_time": start + run,
        "wait_s": start - submit,
        "run_s": run,
        "estimate_s": kept(work.estimate if scaled is None else scaled[1]),
        "size": kept(work.size),
        "nodes": kept(work.nodes) if gpu else pa.nulls(rows, pa.int64()),
        "node_ids": kept(node_ids) if gpu or flat_nodes else pa.nulls(rows, pa.string()),
        "gpu_ids": kept(gpu_ids) if gpu else pa.nulls(rows, pa.string()),
    }
    if scaled is None:
        return _arrow_table(columns, JOBS_SCHEMA)
    columns["recorded_run_s"] = kept(work.runtime)
    columns["recorded_estimate_s"] = kept(work.estimate)
    return _arrow_table(columns, SCALED_JOBS_SCHEMA)


def _in_rows(column: pa.ChunkedArray, rows: np.ndarray) -> pa.ChunkedArray:
    """``column.take(rows)``; the column itself when ``rows`` are all of its rows in order (a
    trace in submit order: no take, whose pyarrow.compute costs ~0.1 s to import)."""
    if len(rows) == len(column) and np.array_equal(rows, np.arange(len(rows))):
        return column
    return column.take(jt.from_numpy(rows))


def _arrow_table(columns: dict[str, Any], schema: pa.Schema) -> pa.Table:
    """``pa.table(columns, schema=schema)`` for numpy, list-of-str and Arrow columns, built
    through buffers (``pa.array`` on numpy or Python values imports pandas, 0.15-0.25 s)."""
    arrays = []
    for field in schema:
        values = columns[field.name]
        if isinstance(values, np.ndarray):
            values = jt.from_numpy(values.astype(field.type.to_pandas_dtype(), copy=False))
        elif isinstance(values, list):
            values = jt.strings(values)
        arrays.append(values)
    return pa.Table.from_arrays(arrays, schema=schema)


def _skipped_table(table: pa.Table, rows: list[int], reasons: list[str]) -> pa.Table:
    ids = jt.to_numpy(table.column("job_id"))[np.asarray(rows, dtype=np.int64)]
    order = np.lexsort((np.arange(len(rows)), np.asarray(ids, dtype=np.int64)))
    return _arrow_table({"job_id": ids[order], "reason": [reasons[i] for i in order]},
                        SKIPPED_SCHEMA)


class _CallableModule(types.ModuleType):
    """Lets ``swftools.replay(table, ...)`` call :func:`replay` while ``swftools.replay`` stays
    the package (so ``from swftools.replay import ReplayResult`` keeps working)."""

    def __call__(self, *args: Any, **kwargs: Any) -> ReplayResult:
        return replay(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
