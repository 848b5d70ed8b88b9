"""A feasible schedule for the synthetic jobs on ``nodes`` x ``gpus_per_node`` GPUs.

Jobs are placed one by one in submission order, so a job's start depends only on earlier jobs
(the trace stays prefix-stable). Each GPU keeps the instant it becomes free; a job starts at the
earliest instant at or after its submission when it can get, on one node, ``gpus_per_node`` GPUs
(single-node jobs, sharing a node at GPU granularity), or ``nodes`` whole nodes (multi-node jobs).
This is first-come-first-served with GPU-level backfilling: a later job takes any GPU free before
an earlier waiting job's start. Single-node jobs go to the busiest node that can take them (best
fit), which keeps whole nodes free for multi-node jobs. Per GPU, jobs never overlap, so no more
GPUs are ever busy than exist.
"""

from __future__ import annotations

import numpy as np


class Cluster:
    """Per-node, per-GPU free-at instants (each row kept sorted ascending)."""

    def __init__(self, nodes: int, gpus_per_node: int, origin_s: int) -> None:
        self.free_at = np.full((nodes, gpus_per_node), origin_s, dtype=np.int64)
        self.gpus_per_node = gpus_per_node

    def earliest(self, submit_s: int, nodes: int, per_node: int) -> tuple[int, np.ndarray]:
        """Earliest start >= ``submit_s`` and the node indices that would be used."""
        free_at = self.free_at
        if nodes == 1:
            ready = np.maximum(free_at[:, per_node - 1], submit_s)
            start = int(ready.min())
            free_count = np.count_nonzero(free_at <= start, axis=1)
            free_count[ready != start] = self.gpus_per_node + 1
            return start, np.array([int(np.argmin(free_count))])
        ready = np.maximum(free_at[:, -1], submit_s)
        chosen = np.argsort(ready, kind="stable")[:nodes]
        return int(ready[chosen].max()), chosen

    def occupy(self, chosen: np.ndarray, per_node: int, start_s: int, finish_s: int) -> None:
        """Mark ``per_node`` GPUs of each chosen node busy until ``finish_s``."""
        if len(chosen) > 1:
            self.free_at[chosen] = finish_s
            return
        row = self.free_at[chosen[0]]
        free = int(np.count_nonzero(row <= start_s))
        # take the free GPUs that freed last: earlier-freed ones stay usable for later jobs
        row[free - per_node:free] = finish_s
        row.sort()


def schedule(submit_s: np.ndarray, nodes: np.ndarray, per_node: np.ndarray, run_s: np.ndarray,
             cancel_at_s: np.ndarray, n_nodes: int, gpus_per_node: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """Start and finish instants (epoch s) for jobs given in submission order.

    ``cancel_at_s`` is the instant a user cancels the job (``-1`` for jobs never cancelled); a
    job cancelled before it could start never runs (start = finish = cancel instant), one
    cancelled while running stops then.
    """
    n = len(submit_s)
    start = np.empty(n, dtype=np.int64)
    finish = np.empty(n, dtype=np.int64)
    cluster = Cluster(n_nodes, gpus_per_node, int(submit_s[0]) if n else 0)
    submit_l, nodes_l, per_l = submit_s.tolist(), nodes.tolist(), per_node.tolist()
    run_l, cancel_l = run_s.tolist(), cancel_at_s.tolist()
    for i in range(n):
        t, chosen = cluster.earliest(submit_l[i], nodes_l[i], per_l[i])
        end = t + run_l[i]
        cancel = cancel_l[i]
        if cancel >= 0:
            if t >= cancel:
                start[i] = finish[i] = cancel
                continue
            end = min(end, cancel)
        cluster.occupy(chosen, per_l[i], t, end)
        start[i], finish[i] = t, end
    return start, finish
