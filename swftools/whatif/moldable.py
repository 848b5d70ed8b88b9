r"""Moldable replay (issue 28): what if DL jobs ran on more (or fewer) GPUs than they asked for?

A *DL job* is one whose class has a training model (``training``): classes come from a trace
column (``--class-column``; its values are class labels) or a rule (``hash``: splitmix64 of the
job id into the labels, equal weights, as ``sensitivity.hash_classes``; ``single:<label>``), and a
mapping ``label=model`` (a model preset or file; ``none``: a rigid class). A DL job of recorded
size ``k_rec`` may run on ``k`` GPUs of a shape the site allows:

- ``k`` is a power of two, or ``k_rec``; one node (``k`` <= GPUs per node) or whole nodes;
- within the limits of the job's queue (``schemas/sites/*.json``: nodes and GPUs per node;
  a queue the site does not know: the whole machine) and the site's node count;
- at or above the model's memory floor. With data parallelism at a fixed micro-batch (weak
  scaling, as ParaDL) the memory per GPU does not depend on ``k``: the floor is 1 GPU, or the
  job stays rigid when the micro-batch does not fit one GPU of the platform.

Its run time (and EASY estimate) is the recorded one times ``r(k) = T(k) / T(k_rec)``, ``T`` the
model's epoch time on the platform (``training.epoch_time_s``). Policies, all on the same EASY
(or FCFS) engine with the ``packed`` placement:

- ``rigid``: every job as recorded (the baseline);
- ``moldable-fastest``: when a DL job would start from the head of the queue (or on arrival at
  an empty queue), among the allowed shapes that fit the free GPUs now, the one with the
  earliest estimated finish (smallest ``r(k)``; ties: fewer GPUs) (``engine_gpu.run_gpu``'s
  ``mold`` hook; a backfilled job keeps its recorded shape). Python engine only;
- ``moldable-efficient``: each DL job asks for ``k*``, the largest allowed ``k`` whose parallel
  efficiency ``E(k) = T(1) / (k T(k))`` is at least the threshold (default 0.8), chosen at
  submission (not from the free GPUs), and waits for it; a job with no such ``k`` keeps its
  recorded shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools.errors import UsageError
from swftools.replay import replay
from swftools.replay.result import ReplayResult
from swftools.site import Queue, Site
from swftools.whatif.training import (
    Platform,
    TrainingModel,
    epoch_time_s,
    largest_micro_batch,
    load_model,
    load_platform,
    memory_bytes,
)

POLICIES = ("rigid", "moldable-fastest", "moldable-efficient")
DEFAULT_THRESHOLD = 0.8
DEFAULT_MODELS = "alexnet=alexnet,resnet50=resnet50,vgg16=vgg16"
RIGID = "none"  # a mapping's model for a class that is not DL


@dataclass(frozen=True)
class Shape:
    """A shape a moldable job may take: ``nodes`` x ``per_node`` GPUs, run-time ratio, efficiency."""

    gpus: int
    nodes: int
    per_node: int
    ratio: float  # T(k) / T(k_rec)
    efficiency: float  # T(1) / (k T(k))


def parse_models(text: str) -> dict[str, str]:
    """``label=model,...`` (model: preset, file or ``none``) as a dict; UsageError when bad."""
    out: dict[str, str] = {}
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        label, eq, model = part.partition("=")
        label, model = label.strip(), model.strip()
        if not eq or not label or not model:
            raise UsageError(f"--dl-models: {part!r} is not LABEL=MODEL (a model preset, file "
                             f"or {RIGID})")
        if label in out:
            raise UsageError(f"--dl-models: class {label!r} is mapped twice")
        out[label] = model
    if not out:
        raise UsageError("--dl-models: give at least one LABEL=MODEL")
    return out


def assign_dl_classes(table: pa.Table, labels: Sequence[str], *, column: str | None = None,
                      rule: str = "hash") -> tuple[np.ndarray, str]:
    """Per row the index of its class label in ``labels``, -1 for a value of ``column`` that no
    label names (a job that is not DL), and how classes were chosen."""
    from swftools.whatif.sensitivity import hash_classes, job_id_values

    if column is not None:
        if column not in table.column_names:
            raise UsageError(f"the trace has no column {column!r} to take job classes from")
        lookup = {n: i for i, n in enumerate(labels)}
        values = table.column(column).to_pylist()
        out = np.array([lookup.get(None if v is None else str(v), -1) for v in values],
                       dtype=np.int64)
        return out, f"column {column} ({int((out < 0).sum())} rows name no class: rigid)"
    if rule == "hash":
        if "job_id" not in table.column_names:
            raise UsageError("the hash rule needs a job_id column")
        return (hash_classes(job_id_values(table), [1.0] * len(labels)),
                f"hash: splitmix64(job_id) into {', '.join(labels)} (equal weights)")
    if rule.startswith("single:"):
        label = rule.partition(":")[2]
        if label not in labels:
            raise UsageError(f"unknown class {label!r} (classes: {', '.join(labels)})")
        return (np.full(table.num_rows, list(labels).index(label), dtype=np.int64),
                f"single: every job {label}")
    raise UsageError(f"unknown class rule {rule!r} (choose hash or single:<class>)")


def _queue_of(site: Site, name: Any) -> Queue | None:
    if name is None:
        return site.queues[0] if len(site.queues) == 1 else None
    q = site.queue(str(name))
    if q is None and str(name).lstrip("-").isdigit():
        q = site.queue_by_number(int(name))
    if q is None and len(site.queues) == 1:
        q = site.queues[0]
    return q


def allowed_shapes(site: Site, queue: Queue | None, recorded_gpus: int) -> list[tuple[int, int]]:
    """The (nodes, GPUs per node) a job of ``queue`` may take: powers of two and the recorded
    size, one node or whole nodes, within the queue's limits and the site's node count."""
    g, max_nodes = site.gpus_per_node, site.max_nodes
    most = g * max_nodes
    sizes = {1 << i for i in range(most.bit_length()) if 1 << i <= most} | {recorded_gpus}
    out = []
    for k in sorted(sizes):
        if k <= g:
            nodes, per = 1, k
        elif k % g == 0:
            nodes, per = k // g, g
        else:
            continue
        if nodes > max_nodes:
            continue
        if queue is not None and not (queue.nodes_min <= nodes <= queue.nodes_max
                                      and queue.gpus_per_node_min <= per
                                      <= queue.gpus_per_node_max):
            continue
        out.append((nodes, per))
    return out


class MoldableModel:
    """The shapes and run-time ratios of a trace's DL jobs on one site and platform."""

    def __init__(self, table: pa.Table, site: Site, platform: Platform,
                 models: dict[str, TrainingModel | None], classes: np.ndarray,
                 threshold: float = DEFAULT_THRESHOLD):
        from swftools.replay.workload import job_size

        if not 0 < threshold <= 1:
            raise UsageError(f"--threshold must be in (0, 1], not {threshold}")
        self.site, self.platform, self.threshold = site, platform, threshold
        labels = list(models)
        self.labels = labels
        size, known = job_size(table)
        queues = (table.column("queue").to_pylist() if "queue" in table.column_names
                  else [None] * table.num_rows)
        self.shapes: list[list[Shape] | None] = []
        self.no_memory: dict[str, int] = {}
        epoch: dict[tuple[str, int], float] = {}

        def time_of(label: str, m: TrainingModel, b: int, k: int) -> float:
            t = epoch.get((label, k))
            if t is None:
                c, w = epoch_time_s(m, platform, k, b)
                t = epoch[(label, k)] = c + w
            return t

        batches: dict[str, int | None] = {}
        for label, m in models.items():
            if m is None:
                batches[label] = None
                continue
            try:
                b = m.micro_batch or largest_micro_batch(m, platform)
            except UsageError:
                b = None
            if b is not None and memory_bytes(m, b) > platform.gpu_memory_bytes:
                b = None
            batches[label] = b
        for row in range(table.num_rows):
            c = int(classes[row])
            label = labels[c] if c >= 0 else None
            m = models.get(label) if label is not None else None
            if m is None or not known[row] or size[row] < 1:
                self.shapes.append(None)
                continue
            b = batches[label]
            if b is None:  # below the memory floor at any k: rigid
                self.no_memory[label] = self.no_memory.get(label, 0) + 1
                self.shapes.append(None)
                continue
            k_rec = int(size[row])
            t_rec = time_of(label, m, b, k_rec)
            t_one = time_of(label, m, b, 1)
            self.shapes.append([Shape(n * p, n, p, time_of(label, m, b, n * p) / t_rec,
                                      t_one / (n * p * time_of(label, m, b, n * p)))
                                for n, p in allowed_shapes(site, _queue_of(site, queues[row]),
                                                           k_rec)])

    def fastest(self, row: int, bound: int) -> tuple[int, int, float] | None:
        """``moldable-fastest``'s shape of ``row`` among those of at most ``bound`` GPUs."""
        shapes = self.shapes[row]
        if not shapes:
            return None
        best = None
        for s in shapes:
            if s.gpus <= bound and (best is None or s.ratio < best.ratio):
                best = s
        return None if best is None else (best.nodes, best.per_node, best.ratio)

    def efficient(self, row: int) -> Shape | None:
        """``moldable-efficient``'s shape of ``row``: the largest allowed k with E(k) >=
        threshold (None: as recorded, also when no allowed k reaches the threshold)."""
        ok = [s for s in self.shapes[row] or () if s.efficiency >= self.threshold]
        return max(ok, key=lambda s: s.gpus) if ok else None

    def efficient_table(self, table: pa.Table) -> pa.Table:
        """``table`` with every DL job's shape set to ``efficient``'s and its run time and
        requested time scaled by the shape's ratio (rounded to seconds)."""
        from swftools.replay.workload import int_column

        n = table.num_rows
        nodes, nodes_known = int_column(table, "nodes")
        per, per_known = int_column(table, "gpus_per_node")
        gpus, gpus_known = int_column(table, "gpus")
        req, req_known = int_column(table, "requested_procs")
        wall, wall_known = int_column(table, "walltime_s")
        est, est_known = int_column(table, "requested_walltime_s")
        for row in range(n):
            s = self.efficient(row)
            if s is None:
                continue
            nodes[row], per[row], gpus[row], req[row] = s.nodes, s.per_node, s.gpus, s.gpus
            nodes_known[row] = per_known[row] = gpus_known[row] = req_known[row] = True
            if wall_known[row]:
                wall[row] = round(wall[row] * s.ratio)
            if est_known[row]:
                est[row] = round(est[row] * s.ratio)
        out = table
        for name, values, known in (("nodes", nodes, nodes_known), ("gpus_per_node", per, per_known),
                                    ("gpus", gpus, gpus_known), ("requested_procs", req, req_known),
                                    ("walltime_s", wall, wall_known),
                                    ("requested_walltime_s", est, est_known)):
            if name not in out.column_names:
                continue
            field = out.schema.field(name)
            arr = pa.array(values, type=field.type, mask=~known)
            out = out.set_column(out.column_names.index(name), field, arr)
        return out


def _default_platform(site: Site) -> str:
    from swftools.whatif.training import PLATFORM_PRESETS

    if site.name in PLATFORM_PRESETS:
        return site.name
    raise UsageError(f"no training platform preset for site {site.name}: give --platform "
                     f"(presets: {', '.join(PLATFORM_PRESETS)}, or a file)")


def moldable_whatif(table: pa.Table, site: Site | str | Path | None, *,
                    policies: Sequence[str] = POLICIES, platform: str | Path | None = None,
                    dl_models: str | dict[str, str] = DEFAULT_MODELS,
                    class_column: str | None = None, class_rule: str = "hash",
                    threshold: float = DEFAULT_THRESHOLD, procs: int | None = None,
                    scheduler: str = "easy",
                    on_policy=lambda name, k, n: None):
    """Replay ``table`` under the moldable policies (see the module docstring); the result is a
    ``run.WhatIf`` (the same comparison table as the placement what-ifs)."""
    from swftools.site import resolve_site
    from swftools.whatif.cluster import flat_site
    from swftools.whatif.compare import compare
    from swftools.whatif.run import WhatIf, trace_identity

    names = list(policies)
    for name in names:
        if name not in POLICIES:
            raise UsageError(f"unknown moldable policy {name!r} (choose from "
                             f"{', '.join(POLICIES)})")
    if len(set(names)) != len(names) or not names:
        raise UsageError("give each moldable policy once")
    site_obj = None if procs is not None else resolve_site(site, table)
    if site_obj is None:
        from swftools.replay import resource_model

        site_obj = flat_site(resource_model(table, None, procs).procs)
        if platform is None:
            raise UsageError("a flat pool has no training platform preset: give --platform")
    elif not isinstance(site_obj, Site):
        raise UsageError("moldable replays need a site")
    plat = load_platform(platform or _default_platform(site_obj))
    mapping = parse_models(dl_models) if isinstance(dl_models, str) else dict(dl_models)
    models = {label: None if spec == RIGID else load_model(spec) for label, spec in mapping.items()}
    classes, described = assign_dl_classes(table, list(models), column=class_column,
                                           rule=class_rule)
    mm = MoldableModel(table, site_obj, plat, models, classes, threshold)
    results: dict[str, ReplayResult] = {}
    for k, name in enumerate(names):
        on_policy(name, k, len(names))
        if name == "rigid":
            results[name] = replay(table, site_obj, policy=scheduler, placement="packed")
        elif name == "moldable-fastest":
            results[name] = replay(table, site_obj, policy=scheduler, placement="packed",
                                   mold=mm.fastest)
        else:
            results[name] = replay(mm.efficient_table(table), site_obj, policy=scheduler,
                                   placement="packed")
    dl = sum(1 for s in mm.shapes if s)
    rigid_mem = "; ".join(f"{n} {label} jobs rigid (micro-batch over the GPU memory)"
                          for label, n in mm.no_memory.items())
    model_line = (f"platform {plat.name}, training models "
                  f"{', '.join(f'{k}={v}' for k, v in mapping.items())}, {dl} DL jobs, "
                  f"threshold {threshold}" + (f"; {rigid_mem}" if rigid_mem else ""))
    out = WhatIf(site=site_obj.name, sensitivity=model_line, classes=described, profile=None,
                 scheduler=scheduler, policies=names, results=results,
                 trace=trace_identity(table), model_heading="model")
    out.rows = compare([(n, results[n].jobs, results[n].capacity) for n in names])
    return out
