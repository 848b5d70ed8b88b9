"""Test helpers shared by the replay engines' tests: a queue-watching placement, and
``engine_gpu``'s small workloads and GPU sites with the reference scheduler's schedule of them."""

from __future__ import annotations

import numpy as np

from swftools.replay.model import GpuNodes
from swftools.replay.placement import Placement
from swftools.replay.workload import Workload

from .test_replay import gpu_site
from .test_replay_reference import Job, Nodes, simulate


class Watching(Placement):
    """``packed`` that watches the queue, as ``priority-wc`` does: records the waiting jobs it
    is told about at each of its choices (a job added twice or removed while not waiting
    fails)."""

    watches_queue = True

    def __init__(self):
        super().__init__()
        self.waiting = {"not told"}
        self.shapes = None
        self.seen = []

    def queue_add(self, jobs):
        jobs = list(jobs)
        assert not self.waiting & set(jobs)
        self.waiting.update(jobs)

    def queue_remove(self, j):
        self.waiting.remove(j)

    def set_waiting(self, jobs):
        self.waiting = set(jobs)

    def choose(self, state, j, nodes, per_node):
        self.seen.append((j, frozenset(self.waiting)))
        return super().choose(state, j, nodes, per_node)


def work(rows) -> Workload:
    """A workload of (submit, run, estimate, nodes, GPUs per node) jobs in queue order (job ids
    1, 2, ...), taken as given (no job is checked against the site)."""
    n = len(rows)

    def col(values):
        return np.array(list(values), dtype=np.int64).reshape(n)

    return Workload(row=np.arange(n, dtype=np.int64), job_id=np.arange(1, n + 1, dtype=np.int64),
                    submit=col(r[0] for r in rows), runtime=col(r[1] for r in rows),
                    estimate=col(r[2] for r in rows), size=col(r[3] * r[4] for r in rows),
                    nodes=col(r[3] for r in rows), gpus_per_node=col(r[4] for r in rows),
                    skipped_row=np.zeros(0, dtype=np.int64), skipped_reason=[])


def model(nodes=2, gpus=4, timeline=None, allocation="first-fit") -> GpuNodes:
    return GpuNodes(gpu_site(nodes=nodes, gpus=gpus, timeline=timeline), allocation)


def ids(mask: int) -> tuple[int, ...]:
    return tuple(k for k in range(mask.bit_length()) if mask >> k & 1)


def reference(w: Workload, m: GpuNodes, policy: str):
    """(start, node ids, GPU ids) per queue position (None: dropped) by the reference."""
    site = m.site
    jobs = [Job(q, int(w.submit[q]), int(w.runtime[q]), int(w.estimate[q]), int(w.nodes[q]),
                int(w.gpus_per_node[q])) for q in range(len(w))]
    machine = Nodes(site.gpus_per_node, list(zip(site.capacity_since, site.capacity_nodes)),
                    best_fit=m.allocation == "best-fit")
    done, dropped = simulate(jobs, machine, policy)
    assert set(done) | set(dropped) == set(range(len(w)))
    return [None if q in dropped else (done[q].start, done[q].node_ids, done[q].gpu_ids)
            for q in range(len(w))]


def engine(run) -> list:
    gone = {j for j, _ in run.dropped}
    return [None if q in gone else (s, ids(n), ids(g)) for q, (s, n, g) in
            enumerate(zip(run.start.tolist(), run.node_masks(), run.gpu_masks()))]
