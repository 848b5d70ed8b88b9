"""A feasible schedule for the synthetic jobs on ``nodes`` x ``gpus_per_node`` GPUs.

Jobs are placed one by one in submission order, so a job's start depends only on earlier jobs
(the trace stays prefix-stable). Each GPU keeps the instant it becomes free; a job starts at the
earliest instant at or after its submission when it can get ``gpus_per_node`` GPUs on one node
(single-node jobs share nodes at GPU granularity) or ``nodes`` whole nodes (multi-node jobs).
This is first-come-first-served with GPU-level backfilling: a later job takes any GPU that is
free before an earlier waiting job starts. Single-node jobs go to the busiest node that can take
them (best fit), which keeps whole nodes free for multi-node jobs. Jobs never overlap on a GPU,
so no more GPUs are ever busy than exist.

Single-GPU jobs (96 % of the workload) take a fast path: GPUs free at the current submission
instant are counted per node, updated lazily from a heap of release instants.
"""

from __future__ import annotations

import heapq

import numpy as np


class Cluster:
    """Free-at instants per GPU, free-GPU counts per node at the current instant, release heap."""

    def __init__(self, nodes: int, gpus_per_node: int, origin_s: int) -> None:
        self.gpus_per_node = gpus_per_node
        self.free_at = [[origin_s] * gpus_per_node for _ in range(nodes)]
        self.free_count = [gpus_per_node] * nodes
        self.releases: list[tuple[int, int, int]] = []  # (instant, node, gpu); stale if reassigned
        self.now = origin_s

    def advance(self, now: int) -> None:
        """Move the current instant to ``now`` (non-decreasing), freeing GPUs released by then."""
        self.now = now
        releases, free_at = self.releases, self.free_at
        while releases and releases[0][0] <= now:
            instant, node, gpu = heapq.heappop(releases)
            if free_at[node][gpu] == instant:
                self.free_count[node] += 1

    def _next_release(self) -> tuple[int, int, int]:
        releases, free_at = self.releases, self.free_at
        while free_at[releases[0][1]][releases[0][2]] != releases[0][0]:
            heapq.heappop(releases)
        return releases[0]

    def plan(self, nodes: int, per_node: int) -> tuple[int, list[tuple[int, int]]]:
        """Earliest start >= now and the (node, gpu) pairs the job would take."""
        if nodes == 1 and per_node == 1:
            return self._plan_one_gpu()
        if nodes == 1:
            return self._plan_one_node(per_node)
        return self._plan_nodes(nodes)

    def _plan_one_gpu(self) -> tuple[int, list[tuple[int, int]]]:
        counts = self.free_count
        for count in range(1, self.gpus_per_node + 1):  # best fit: fewest free GPUs, lowest index
            if count in counts:
                best = counts.index(count)
                break
        else:  # every GPU busy: the first to be released
            instant, node, gpu = self._next_release()
            return instant, [(node, gpu)]
        row, now = self.free_at[best], self.now
        gpu, latest = -1, None
        for g, t in enumerate(row):  # the free GPU that freed last
            if t <= now and (latest is None or t > latest):
                gpu, latest = g, t
        return now, [(best, gpu)]

    def _plan_one_node(self, per_node: int) -> tuple[int, list[tuple[int, int]]]:
        now, best, best_key = self.now, 0, None
        counts = self.free_count
        for count in range(per_node, self.gpus_per_node + 1):
            # a node with enough GPUs free now starts the job now; among those the key
            # (start, GPUs free by then, node) is smallest for the fewest free, lowest index
            if count in counts:
                best = counts.index(count)
                best_key = (now, count, best)
                break
        else:
            for node, row in enumerate(self.free_at):
                start = max(sorted(row)[per_node - 1], now)
                key = (start, sum(1 for t in row if t <= start), node)
                if best_key is None or key < best_key:
                    best, best_key = node, key
        start, row = best_key[0], self.free_at[best]
        # take the free GPUs that freed last: earlier-freed ones stay usable for later jobs
        free = sorted((g for g in range(len(row)) if row[g] <= start), key=lambda g: (row[g], g))
        return start, [(best, g) for g in free[len(free) - per_node:]]

    def _plan_nodes(self, nodes: int) -> tuple[int, list[tuple[int, int]]]:
        whole = self.gpus_per_node
        free = [node for node, count in enumerate(self.free_count) if count == whole]
        if len(free) >= nodes:  # enough whole nodes free now: the first ones (the key below)
            return self.now, [(node, g) for node in free[:nodes] for g in range(whole)]
        ready = sorted((max(max(row), self.now), node) for node, row in enumerate(self.free_at))
        chosen = ready[:nodes]
        start = chosen[-1][0]
        return start, [(node, g) for _, node in chosen for g in range(self.gpus_per_node)]

    def occupy(self, gpus: list[tuple[int, int]], finish_s: int) -> None:
        """Hold each (node, gpu) until ``finish_s``."""
        now, free_at = self.now, self.free_at
        for node, gpu in gpus:
            if free_at[node][gpu] <= now:
                self.free_count[node] -= 1
            free_at[node][gpu] = finish_s
            heapq.heappush(self.releases, (finish_s, node, gpu))


class Scheduler:
    """``schedule`` in pieces: jobs given chunk by chunk in submission order, one cluster state
    kept between chunks, so the starts are those of one ``schedule`` call on all the jobs."""

    def __init__(self, n_nodes: int, gpus_per_node: int) -> None:
        self.n_nodes, self.gpus_per_node = n_nodes, gpus_per_node
        self.cluster: Cluster | None = None

    def place(self, submit_s: np.ndarray, nodes: np.ndarray, per_node: np.ndarray,
              run_s: np.ndarray, cancel_at_s: np.ndarray,
              placements: list[list[tuple[int, int]]] | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """Start and finish instants of the next jobs (see ``schedule``)."""
        n = len(submit_s)
        start = np.empty(n, dtype=np.int64)
        finish = np.empty(n, dtype=np.int64)
        if n and self.cluster is None:
            self.cluster = Cluster(self.n_nodes, self.gpus_per_node, int(submit_s[0]))
        cluster = self.cluster
        submit_l, nodes_l, per_l = submit_s.tolist(), nodes.tolist(), per_node.tolist()
        run_l, cancel_l = run_s.tolist(), cancel_at_s.tolist()
        for i in range(n):
            cluster.advance(submit_l[i])
            t, gpus = cluster.plan(nodes_l[i], per_l[i])
            end = t + run_l[i]
            cancel = cancel_l[i]
            if cancel >= 0:
                if t >= cancel:
                    start[i] = finish[i] = cancel
                    if placements is not None:
                        placements.append([])
                    continue
                end = min(end, cancel)
            cluster.occupy(gpus, end)
            if placements is not None:
                placements.append(gpus)
            start[i], finish[i] = t, end
        return start, finish


def schedule(submit_s: np.ndarray, nodes: np.ndarray, per_node: np.ndarray, run_s: np.ndarray,
             cancel_at_s: np.ndarray, n_nodes: int, gpus_per_node: int,
             placements: list[list[tuple[int, int]]] | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
    """Start and finish instants (epoch s) for jobs given in submission order.

    ``cancel_at_s`` is the instant a user cancels the job (``-1``: never cancelled); a job
    cancelled before it could start never runs (start = finish = cancel instant, no GPU held),
    one cancelled while running stops then. If ``placements`` is a list, the (node, gpu) pairs
    each job held are appended to it (empty for jobs that never ran).
    """
    return Scheduler(n_nodes, gpus_per_node).place(submit_s, nodes, per_node, run_s,
                                                   cancel_at_s, placements)
