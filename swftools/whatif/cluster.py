"""Derived resource models: a site with part of its nodes upgraded, a site with GPU scores."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from itertools import groupby

from swftools.errors import UsageError
from swftools.site import NodeGroup, Site, bad_score_message, site_from_settings


def _groups(models: Sequence[str], gpus_per_node: int) -> tuple[NodeGroup, ...]:
    """Node groups for a per-node model list (runs of one model; names by model, numbered
    when a model appears in several runs)."""
    runs = [(m, len(list(g))) for m, g in groupby(models)]
    seen: dict[str, int] = {}
    groups = []
    for model, count in runs:
        k = seen.get(model, 0)
        seen[model] = k + 1
        name = model.lower() if k == 0 else f"{model.lower()}-{k + 1}"
        groups.append(NodeGroup(name, count, model, gpus_per_node))
    return tuple(groups)


def upgraded(site: Site, v100_nodes: int, *, gpu_model: str = "V100") -> Site:
    """``site`` with its last ``v100_nodes`` nodes (the highest numbers) holding ``gpu_model``
    GPUs (V100 by default); the other nodes, racks, links, scores and the trace's GPU model are
    kept. ``v100_nodes`` is 0..the site's node count (0 returns an equal site)."""
    n = len(site.gpu_model_of_node)
    if not 0 <= v100_nodes <= n:
        raise UsageError(f"cannot upgrade {v100_nodes} nodes: site {site.name} has {n} nodes "
                         f"(choose 0..{n})")
    if v100_nodes == 0:
        return site
    models = site.gpu_model_of_node[:n - v100_nodes] + (gpu_model,) * v100_nodes
    groups = _groups(models, site.gpus_per_node)
    settings = dict(site.settings)
    settings["node_groups"] = [{"name": g.name, "nodes": g.nodes, "gpu_model": g.gpu_model,
                                "gpus_per_node": g.gpus_per_node} for g in groups]
    name = f"{site.name}-{gpu_model.lower()}-{v100_nodes}"
    settings["name"] = name
    title = f"{site.title} with {v100_nodes} {gpu_model} nodes"
    settings["title"] = title
    return dataclasses.replace(site, name=name, title=title, node_groups=groups,
                               gpu_model_of_node=models, settings=settings)


def with_scores(site: Site, scores: Sequence[Sequence[float]],
                classes: Sequence[Sequence[int]] | None = None) -> Site:
    """``site`` with the per-GPU scores ``scores[node][gpu]`` (e.g. a profile's) and, when given,
    the performance classes ``classes[node][gpu]`` (0 fastest; else the site's are dropped); the
    site's per-application-class scores are dropped (a profile carries its own)."""
    n, g = len(site.gpu_model_of_node), site.gpus_per_node
    if len(scores) != n or any(len(row) != g for row in scores):
        raise UsageError(f"scores for {len(scores)} nodes do not fit site {site.name} "
                         f"({n} nodes of {g} GPUs)")
    table = tuple(tuple(float(s) for s in row) for row in scores)
    bad = bad_score_message(table, "GPU scores")
    if bad:
        raise UsageError(bad)
    klass = None if classes is None else tuple(tuple(int(c) for c in row) for row in classes)
    if klass is not None and [len(r) for r in klass] != [len(r) for r in table]:
        raise UsageError(f"classes do not fit the scores of site {site.name}")
    return dataclasses.replace(site, gpu_score=table, gpu_class=klass, gpu_app_score=())


def flat_site(procs: int, *, gpu_model: str = "CPU", nodes_per_rack: int | None = None) -> Site:
    """A flat pool of ``procs`` processors as a site of one-processor nodes (what the replay's
    general path runs a flat pool as), so that per-processor scores, racks and the run-time
    model apply to SWF traces in flat mode. No queue limits apply (one queue admits any job)."""
    if procs < 1:
        raise UsageError(f"a flat pool needs at least one processor, not {procs}")
    queue = {"name": "all", "number": 1, "nodes_min": 1, "nodes_max": procs,
             "gpus_per_node_min": 1, "gpus_per_node_max": 1, "walltime_default_s": 1,
             "walltime_max_s": 10**12}
    settings: dict = {"name": f"flat-{procs}", "title": f"flat pool of {procs} processors",
                      "time_zone": "UTC", "gpu_model": gpu_model, "gpus_per_node": 1,
                      "capacity_timeline": [{"since": "1970-01-01T00:00:00+00:00",
                                             "nodes": procs}],
                      "queues": [queue]}
    if nodes_per_rack:
        settings["racks"] = {"nodes_per_rack": nodes_per_rack}
    return site_from_settings(settings)
