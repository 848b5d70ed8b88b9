"""The node list: where it is, its nodes, and the site (capacity, queues) they make.

The node list lies beside the pod list: ``X_pod_list_Y.csv`` -> ``X_node_list_Y.csv`` (the name
the writer gives it), else the one ``X_node_list_*`` file there (``X_node_list_all_node*``
preferred: the published trace has ``all_node`` and ``gpu_node`` lists); ``nodes=PATH`` names it.

The site model has one GPU count per node, the openb cluster 0, 1, 2, 4 and 8: the inline site
counts the cluster in nodes of the largest size (8), rounded up, so its GPU capacity is at least
the real one (6,212 GPUs -> 777 x 8 = 6,216 for the published list). A capacity violation found
against it is real; passing does not prove the pods fitted on the real, smaller nodes. The exact
inventory (every node, by model) is kept in the metadata key ``alibaba.nodes``.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from swftools.errors import InputError
from swftools.formats.alibaba.pods import integer, split_csv
from swftools.formats.alibaba.schema import node_columns
from swftools.formats.names import check_name

SITE_NAME = "alibaba-openb"
QOS_CLASSES = ("LS", "BE", "Burstable", "Guaranteed")  # the published trace's, in this order
_NAME = re.compile(r"^(.*?)([0-9]+)$")
_SUFFIXES = (".csv.gz", ".csv", ".gz")


def _split_suffix(name: str) -> tuple[str, str]:
    for suffix in _SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)], name[-len(suffix):]
    return name, ""


def node_list_path(pod_path: str | Path) -> Path:
    """The node list the writer puts beside ``pod_path`` (and the reader looks for first)."""
    p = Path(pod_path)
    stem, suffix = _split_suffix(p.name)
    if "pod_list" in stem:
        return p.with_name(stem.replace("pod_list", "node_list") + suffix)
    return p.with_name(f"{stem}.nodes{suffix or '.csv'}")


def find_node_list(pod_path: str | Path) -> Path | None:
    """The node list beside a pod list, or None (see the module docstring for the rule)."""
    p = Path(pod_path)
    direct = node_list_path(p)
    if direct.is_file():
        return direct
    stem, _ = _split_suffix(p.name)
    if "pod_list" not in stem:
        return None
    prefix = stem[: stem.index("pod_list")] + "node_list"
    found = sorted(c for c in p.parent.glob(f"{prefix}*") if c.is_file())
    preferred = [c for c in found if "all_node" in c.name]
    if len(preferred) == 1:
        return preferred[0]
    return found[0] if len(found) == 1 else None


def parse_nodes(text: str, path: str) -> list[tuple[str, int, int, int, str]]:
    """(sn, cpu_milli, memory_mib, gpu, model) per node, every cell checked."""
    index, rows = split_csv(text, path, node_columns(), "node list", allow_empty=False)
    nodes = []
    seen: dict[str, int] = {}
    for line, cells in rows:
        sn = check_name(cells[index["sn"]].strip(), path, line, "sn")
        if not sn:
            raise InputError(path, "empty node name", line=line, field="sn", value="",
                             expected="a node name such as openb-node-0227")
        if sn in seen:
            raise InputError(path, f"node {sn!r} repeats line {seen[sn]}", line=line, field="sn",
                             value=sn, expected="node names unique in the file")
        seen[sn] = line
        cpu = integer(cells[index["cpu_milli"]], path, line, "cpu_milli")
        mem = integer(cells[index["memory_mib"]], path, line, "memory_mib")
        gpu = integer(cells[index["gpu"]], path, line, "gpu")
        model = check_name(cells[index["model"]].strip(), path, line, "model")
        if model.lower() == "nan":  # pandas' rendering of an empty cell
            model = ""
        if gpu and not model:
            raise InputError(path, f"a node with {gpu} GPUs has no GPU model", line=line,
                             field="model", value="", expected="a GPU model such as T4 or G2")
        nodes.append((sn, cpu, mem, gpu, model))
    return nodes


def inventory(nodes: list[tuple[str, int, int, int, str]], source: str) -> dict[str, Any]:
    """The node list as metadata: totals, per model, and runs that give it back line for line."""
    runs: list[list[Any]] = []
    for sn, cpu, mem, gpu, model in nodes:
        if runs and runs[-1][2:] == [cpu, mem, gpu, model]:
            runs[-1][1] += 1
            runs[-1][0].append(sn)
        else:
            runs.append([[sn], 1, cpu, mem, gpu, model])
    packed = []
    for names, count, cpu, mem, gpu, model in runs:
        packed.append({"names": _compress(names), "nodes": count, "cpu_milli": cpu,
                       "memory_mib": mem, "gpu": gpu, "model": model})
    models: dict[str, dict[str, Any]] = {}
    for _, _, _, gpu, model in nodes:
        if gpu:
            entry = models.setdefault(model, {"nodes": 0, "gpus": 0})
            entry["nodes"] += 1
            entry["gpus"] += gpu
    return {"file": source, "nodes": len(nodes), "gpu_nodes": sum(1 for n in nodes if n[3]),
            "gpus": sum(n[3] for n in nodes), "cpu_milli": sum(n[1] for n in nodes),
            "memory_mib": sum(n[2] for n in nodes), "largest_node_gpus": max(n[3] for n in nodes),
            "models": dict(sorted(models.items())), "runs": packed}


def _compress(names: list[str]) -> dict[str, Any] | list[str]:
    """``{prefix, width, first}`` when the names are prefix + consecutive numbers, else the list."""
    m = _NAME.match(names[0])
    if m:
        prefix, width, first = m.group(1), len(m.group(2)), int(m.group(2))
        if all(n == f"{prefix}{first + k:0{width}d}" for k, n in enumerate(names)):
            return {"prefix": prefix, "width": width, "first": first}
    return names


def _expand(names: dict[str, Any] | list[str], count: int) -> list[str]:
    if isinstance(names, list):
        return names
    return [f"{names['prefix']}{names['first'] + k:0{names['width']}d}" for k in range(count)]


def render(inv: dict[str, Any]) -> str:
    """The node list (published column order) from ``inventory``'s metadata."""
    lines = [",".join(node_columns())]
    for run in inv["runs"]:
        for sn in _expand(run["names"], run["nodes"]):
            lines.append(f"{sn},{run['cpu_milli']},{run['memory_mib']},{run['gpu']},{run['model']}")
    return "\n".join(lines) + "\n"


def site_settings(inv: dict[str, Any], qos: list[str | None], origin: int,
                  span_s: int) -> dict[str, Any]:
    """Inline site settings (``schemas/site.schema.json``) for the cluster of a node list."""
    size = max(inv["largest_node_gpus"], 1)
    units = max(math.ceil(inv["gpus"] / size), 1)
    since = datetime.fromtimestamp(origin, timezone.utc).isoformat()
    classes = list(QOS_CLASSES) + sorted({q for q in qos if q} - set(QOS_CLASSES))
    limit = max(span_s, 1)
    models = ", ".join(f"{m} {v['gpus']} GPUs on {v['nodes']} nodes"
                       for m, v in inv["models"].items()) or "none"
    return {
        "name": SITE_NAME,
        "title": f"Alibaba GPU cluster (openb node list {inv['file']})",
        "description": (f"{inv['nodes']} nodes, {inv['gpu_nodes']} with GPUs, {inv['gpus']} GPUs "
                        f"({models}); Kubernetes pods, one node each."),
        "scheduler": "Kubernetes (GPU sharing)",
        "time_zone": "UTC",
        "gpus_per_node": size,
        "capacity_timeline": [{
            "since": since, "nodes": units,
            "note": (f"{inv['gpus']} GPUs counted in nodes of the largest size ({size} GPUs), "
                     f"rounded up: {units} x {size} = {units * size} GPUs. The real nodes hold "
                     "0 to {size} GPUs (alibaba.nodes in the table metadata).").replace(
                         "{size}", str(size))}],
        "multi_node_whole_nodes": True,
        "queues": [{"name": q, "number": i, "nodes_min": 1, "nodes_max": 1,
                    "gpus_per_node_min": 0, "gpus_per_node_max": size,
                    "walltime_default_s": limit, "walltime_max_s": limit,
                    "description": "Kubernetes QoS class; pods have no time limit (the trace's "
                                   "span stands in)"}
                   for i, q in enumerate(classes, start=1)],
        "termcode_to_swf_status": {"0": 1, "1": 0, "3": 5},
        "notes": ["Built by swftools from the openb node list; see swftools.formats.alibaba.nodes "
                  "for how the mixed node sizes are counted."],
    }
