"""Test helpers shared by the replay engines' tests."""

from __future__ import annotations

from swftools.replay.placement import Placement


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
