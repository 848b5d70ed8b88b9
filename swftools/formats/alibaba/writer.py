"""Write the job table as an Alibaba openb pod list (and its node list, when the table has one).

The columns and cell forms are those the Kubernetes Scheduler Simulator's trace loader reads:
``pod_csv_to_yaml.py`` of alibaba/clusterdata ``cluster-trace-gpu-v2023`` (commit b937928c, the
script hkust-adsl/kubernetes-scheduler-simulator's ``data/prepare_input.sh`` runs on every
``csv/openb_pod_list*`` file). It reads the CSV with pandas by column name and formats
``cpu_milli`` and ``memory_mib`` with ``%d`` (so they are never empty here: unknown is 0), takes
``gpu_milli`` and ``num_gpu`` only when ``num_gpu`` is not 0, splits ``gpu_spec`` on ``|`` (empty:
no model constraint), and ignores qos, phase and times (its time annotations are commented
out); those are written for other readers of the trace, as the published files have them.
Pods are written in submit (creation) order, ties in row order; a table read from a pod list
keeps the list's own order (the simulator's arrival order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from swftools import table as jt
from swftools.atomic import atomic_file, check_writable
from swftools.errors import UsageError, count
from swftools.fileio import gzip_writer
from swftools.formats.alibaba import nodes as node_list
from swftools.formats.alibaba.pods import Pods, parse_pods, render, to_columns
from swftools.formats.alibaba.schema import default_origin, phase_of
from swftools.formats.order import in_write_order
from swftools.site import Site, resolve_site

# Job-table columns a pod list gives back (when the table's values fit the pod model).
CARRIED = ("job_id", "queue", "nodes", "gpus_per_node", "gpus", "cpus", "requested_procs", "termcode",
           "swf_status", "submit_time", "start_time", "finish_time", "wait_s", "walltime_s")

UNKNOWN_MODEL = "unknown"
"""The model written for a site's GPU nodes whose model it does not name."""

_WHY = {
    "nodes": "a pod runs on one node: read back as 1",
    "gpus_per_node": "a pod has one GPU count (num_gpu): read back as num_gpu",
    "gpus": "num_gpu holds the total GPU count; read back as num_gpu",
    "requested_procs": "read back as num_gpu",
    "cpus": "cpu_milli holds milli-CPUs: read back rounded up to whole CPUs",
    "termcode": ("pod_phase carries 0 (Succeeded), 1 (Failed) and 3 (Pending) and unknown "
                 "(Running); 2 and 4 are written as Failed (read back 1)"),
    "swf_status": "not written: read back from pod_phase (the phase table)",
    "queue": "qos is the queue; an empty queue name is read back as unknown",
    "wait_s": "not written: derived on reading from the start and submission instants",
    "walltime_s": "not written: derived on reading from the finish and start instants",
    "submit_time": "creation_time is written relative to the time origin",
    "start_time": "scheduled_time is written relative to the time origin",
    "finish_time": "deletion_time is written relative to the time origin",
    "job_id": "the pod name carries the job id",
}


def write(table: pa.Table, path: str | Path, *, site: Any = None, force: bool = False,
          nodes: str | Path | None = None) -> list[str]:
    """Write ``table`` as an openb pod list and its node list; returns the loss report.

    The node list goes beside the pod list (``swftools.formats.alibaba.nodes.node_list_path``, or
    ``nodes=``): the table's own when it was read from an openb trace, else one made from the
    site (``site``, else the table's; GPU nodes with CPU and memory unknown, written as 0); with
    neither there is no cluster to describe and nothing is written (``UsageError``); jobs of
    more GPUs than the site's node has are then skipped (a pod runs on one node). A ``.gz``
    name is gzip-compressed (deterministic bytes). Nothing is written when an output exists
    without ``force``.
    """
    table = jt.conform(table)
    table = in_write_order(table, "alibaba", jt.get_metadata(table).get("source_format"))
    layout = jt.get_metadata(table).get("alibaba") or {}
    target = Path(path)
    inv = layout.get("nodes")
    notes: list[str] = []
    skipped: list[str] = []
    if inv is None:
        site_obj = resolve_site(site, table)
        if site_obj is None:
            raise UsageError("a pod list needs its cluster's node list: the table has none (it "
                             "was not read from an openb trace) and no site gives one; pass "
                             "--site SITE (nothing written)")
        inv = site_inventory(site_obj)
        notes.append(f"node list made from site {site_obj.name} ({inv['nodes']} machines of "
                     f"{site_obj.gpus_per_node} GPUs): their CPU and memory sizes are unknown, "
                     "written as 0")
        if not all(site_obj.gpu_model_of_node):
            notes.append(f"the site names no GPU model for some nodes: written as "
                         f"{UNKNOWN_MODEL!r} (a GPU node's model cannot be empty)")
        # a job of another log may span nodes; a pod list's own pods are written as they are
        table, skipped = _fitting(table, int(inv["largest_node_gpus"]))
    pods, losses = from_table(table, layout)
    losses = skipped + losses + notes
    node_target = Path(nodes) if nodes is not None else node_list.node_list_path(target)
    check_writable(target, force)
    check_writable(node_target, force)
    _write_text(target, render(pods), force)
    _write_text(node_target, node_list.render(inv), force)
    return losses


def _num_gpu(gpus: int | None, requested: int | None) -> int:
    """A job's ``num_gpu``: its GPUs, else its requested processors, else 0."""
    return next((v for v in (gpus, requested) if v is not None), 0)


def _fitting(table: pa.Table, largest: int) -> tuple[pa.Table, list[str]]:
    """(the jobs a node of the node list can hold, the skipped-jobs line): a pod runs on one
    node, so a job of more GPUs than the largest node has (a multi-node job) is left out."""
    nums = [_num_gpu(g, r) for g, r in zip(_ints(table, "gpus"), _ints(table, "requested_procs"))]
    fits = [num <= largest for num in nums]
    if all(fits):
        return table, []
    left = len(fits) - sum(fits)
    return table.filter(pa.array(fits, pa.bool_())), [
        f"{left} job{'s' if left != 1 else ''} skipped: more GPUs than the largest node of the "
        f"node list has ({largest}); a pod runs on one node"]


def site_inventory(site: Site) -> dict[str, Any]:
    """A node inventory (``nodes.inventory`` form) for a site's largest node count."""
    rows = [(f"openb-node-{k:04d}", 0, 0, site.gpus_per_node, model or UNKNOWN_MODEL)
            for k, model in enumerate(site.gpu_model_of_node)]
    return node_list.inventory(rows, f"site {site.name}")


def _write_text(target: Path, text: str, force: bool) -> None:
    data = text.encode("utf-8")
    with atomic_file(target, force) as tmp:
        with open(tmp, "wb") as raw:
            if target.name.lower().endswith(".gz"):
                with gzip_writer(raw) as gz:
                    gz.write(data)
            else:
                raw.write(data)


def _ints(table: pa.Table, name: str) -> list[int | None]:
    return table.column(name).to_pylist()


def time_origin(layout: dict[str, Any], times: list[int]) -> int:
    """The epoch second written as 0: the table's own (read from openb), else the reader's
    default, when no time lies before it; else the earliest time (times are never negative)."""
    first = min(times, default=None)
    for candidate in (layout.get("time_origin"), default_origin()):
        if candidate is not None and (first is None or first >= candidate):
            return int(candidate)
    return int(first)


def from_table(table: pa.Table, layout: dict[str, Any]) -> tuple[Pods, list[str]]:
    """(pods, loss report) for writing ``table`` (canonical) as a pod list.

    The report compares ``table`` with what a read of the written file (default options) gives
    back, column by column: it names exactly the columns that change, and the columns the pod
    list cannot hold that have known values.
    """
    ids = _ints(table, "job_id")
    if len(set(ids)) != len(ids):
        raise UsageError("job ids repeat: pod names are made from job ids, which must be unique "
                         "(nothing written)")
    col = {name: _ints(table, name) for name in table.column_names}
    times = [t for c in ("submit_time", "start_time", "finish_time") for t in col[c] if t is not None]
    origin = time_origin(layout, times)
    resources = layout.get("pods") or {}
    where = {j: k for k, j in enumerate(resources.get("job_id", []))}
    names = layout.get("names") or {"prefix": "openb-pod-", "width": 4, "other": {}}
    sharing = layout.get("gpu_milli") or {}
    specs = layout.get("gpu_spec") or {}
    pods = Pods()
    no_resources = 0
    for i, job in enumerate(ids):
        k = where.get(job)
        if k is None and col["cpus"][i] is None:
            no_resources += 1
        num = _num_gpu(col["gpus"][i], col["requested_procs"][i])
        milli = 0 if num == 0 else (int(sharing.get(str(job), 1000)) if num == 1 else 1000)
        pods.job_id.append(job)
        pods.name.append(names["other"].get(str(job)) or f"{names['prefix']}{job:0{names['width']}d}")
        pods.cpu_milli.append(resources["cpu_milli"][k] if k is not None
                              else 1000 * (col["cpus"][i] or 0))
        pods.memory_mib.append(resources["memory_mib"][k] if k is not None else 0)
        pods.num_gpu.append(num)
        pods.gpu_milli.append(milli)
        pods.gpu_spec.append(specs.get(str(job), ""))
        pods.qos.append(col["queue"][i])
        pods.pod_phase.append(phase_of(col["termcode"][i], col["start_time"][i] is not None))
        for src, dst in (("submit_time", pods.creation_time), ("start_time", pods.scheduled_time),
                         ("finish_time", pods.deletion_time)):
            dst.append(None if col[src][i] is None else col[src][i] - origin)
    _order_losses(pods)
    losses: list[str] = []
    if no_resources:
        losses.append(f"{count(no_resources, 'pod')} without CPU and memory requests in the table "
                      "(cpu_milli, memory_mib written as 0)")
    back = to_columns(parse_pods(render(pods), "<written pod list>", allow_empty=True),
                      default_origin())
    why = dict(_WHY)
    if origin != default_origin():
        for c in ("submit_time", "start_time", "finish_time"):
            why[c] = (f"written as seconds since epoch second {origin}; a read takes 0 as "
                      "2022-01-01T00:00:00Z unless given origin=" + str(origin))
    for name in table.column_names:
        if name in back:
            changed = sum(1 for a, b in zip(col[name], back[name]) if a != b)
            if changed:
                losses.append(f"{name}: {count(changed, 'job')} read back otherwise ({why[name]})")
        else:
            known = table.num_rows - table.column(name).null_count
            if known:
                losses.append(f"{name}: {count(known, 'known value')} dropped; the pod list has no "
                              "such column")
    return pods, losses


def _order_losses(pods: Pods) -> None:
    """Times a read would refuse (deletion before creation, ...) are a usage error, not a loss."""
    for i in range(len(pods)):
        c, s, d = pods.creation_time[i], pods.scheduled_time[i], pods.deletion_time[i]
        for later, earlier, what in ((s, c, "starts before its submission"),
                                     (d, c, "finishes before its submission"),
                                     (d, s, "finishes before it starts")):
            if later is not None and earlier is not None and later < earlier:
                raise UsageError(f"job {pods.job_id[i]} {what}: a pod list cannot hold it "
                                 "(fix the times or drop the job; nothing written)")
