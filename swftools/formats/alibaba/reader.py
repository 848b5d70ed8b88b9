"""Read an Alibaba openb pod list (and its node list) into the job table."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa

from swftools import table as jt
from swftools.errors import InputError
from swftools.formats.alibaba import nodes as node_list
from swftools.formats.alibaba.pods import Pods, name_format, parse_pods, to_columns
from swftools.formats.alibaba.schema import default_origin
from swftools.formats.inputs import read_text
from swftools.metadata import TableMetadata
from swftools.site import Site, resolve_site


def read(path: str | Path, *, nodes: str | Path | None = None, site: Site | str | Path | None = None,
         origin: int | None = None, progress: bool = False, allow_empty: bool = False) -> pa.Table:
    """Read an openb pod list (gzip or plain) into the job table.

    The node list (``nodes=``, else found beside the pod list by name: see
    ``swftools.formats.alibaba.nodes``) gives the site: its capacity, GPU models and the QoS
    classes as queues, carried inline in the metadata (``site_settings``) so that validate checks
    capacity against it. Without a node list a ``site`` must be given, else ``InputError``.
    Times are seconds since the trace start; ``origin`` (epoch seconds, default the schema's
    ``default_time_origin``, 2022-01-01T00:00:00Z) is the instant taken for 0. ``progress`` is
    accepted for the registry's sake (the files are small). Pods without a row are an error
    unless ``allow_empty``.
    """
    name = str(path)
    pods = parse_pods(read_text(path), name, allow_empty)
    origin = default_origin() if origin is None else int(origin)
    nodes_path = Path(nodes) if nodes is not None else node_list.find_node_list(path)
    if nodes is not None and not Path(nodes).is_file():
        raise InputError(str(nodes), "no such node list", field="nodes", value=str(nodes),
                         expected="the openb node list CSV (sn,cpu_milli,memory_mib,gpu,model)")
    site_obj = resolve_site(site) if site is not None else None
    if nodes_path is None and site_obj is None:
        raise InputError(name, "no node list beside the pod list", field="nodes",
                         value=str(node_list.node_list_path(path).name),
                         expected="the node list as X_node_list_*.csv[.gz] beside "
                                  "X_pod_list_*.csv[.gz], or nodes=PATH (convert: --site SITE "
                                  "gives the capacity instead)")
    inv = None
    if nodes_path is not None:
        inv = node_list.inventory(node_list.parse_nodes(read_text(nodes_path), str(nodes_path)),
                                  nodes_path.name)
    columns = to_columns(pods, origin)
    extra = {"alibaba": _layout(pods, origin, inv)}
    settings = None
    if site_obj is None:
        settings = node_list.site_settings(inv, pods.qos, origin, _span(pods))
    metadata = TableMetadata(source_file=Path(name).name, source_format="alibaba",
                             converter_version=_version(),
                             site=site_obj.name if site_obj else node_list.SITE_NAME,
                             time_zone=site_obj.time_zone if site_obj else "UTC",
                             processor_unit="gpu", site_settings=settings, extra=extra)
    return jt.from_columns({k: pa.array(v, pa.int64() if k != "queue" else pa.string())
                            for k, v in columns.items()}, metadata)


def _span(pods: Pods) -> int:
    times = [t for col in (pods.creation_time, pods.deletion_time, pods.scheduled_time)
             for t in col if t is not None]
    return max(times, default=0)


def _layout(pods: Pods, origin: int, inv: dict[str, Any] | None) -> dict[str, Any]:
    """The metadata key ``alibaba``: time origin, the pod fields the job table has no column
    for (by job id), how names derive from job ids, the node inventory."""
    sharing = {str(i): m for i, g, m in zip(pods.job_id, pods.num_gpu, pods.gpu_milli)
               if g == 1 and m < 1000}
    out: dict[str, Any] = {
        "time_origin": origin,
        "time_origin_utc": datetime.fromtimestamp(origin, timezone.utc).isoformat(),
        "times": "pod times are seconds since the trace start; time_origin is the epoch second "
                 "taken for 0 (an arbitrary, documented stand-in: the trace has no dates)",
        "trace_end_s": _span(pods),
        "pods": {"job_id": list(pods.job_id), "cpu_milli": list(pods.cpu_milli),
                 "memory_mib": list(pods.memory_mib)},
        "gpu_milli": sharing,
        "gpu_spec": {str(i): s for i, s in zip(pods.job_id, pods.gpu_spec) if s},
        "names": name_format(pods),
        "gpu_sharing_pods": len(sharing),
        "gpu_note": "gpus counts the GPUs a pod is bound to; a GPU-sharing pod (num_gpu 1, "
                    "gpu_milli < 1000) holds that share of one GPU: gpu_milli by job id",
        "never_started": sum(1 for s in pods.scheduled_time if s is None),
    }
    if inv is not None:
        out["nodes"] = inv
    return out


def _version() -> str:
    from swftools import __version__

    return __version__
