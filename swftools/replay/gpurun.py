"""What the GPU engine returns (``engine_gpu.run_gpu``, Python or compiled): each job's start,
node set and GPU set in queue order, the dropped jobs, and the node and GPU ids as text."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.replay.model import bits
from swftools.replay.result import sorted_distinct


@dataclass
class GpuRun:
    """Engine output in queue order: start, node set and GPU set per job; dropped jobs.

    The Python engine gives node and GPU sets as bit sets (``node_sets``, ``gpu_sets``); the
    compiled twin as arrays (a job's nodes ``node_list[node_off[j]:node_off[j + 1]]``, its GPUs
    on each the bit set ``gpu_mask[j]``). ``node_masks``, ``gpu_masks``, ``node_ids`` and
    ``gpu_ids`` read either. Jobs placed by GPU count (``engine_count``) may hold different
    GPUs on each node: ``node_gpus`` (per job, the GPU bit set of each of its nodes in node
    order) replaces ``gpu_sets``, and ``gpu_ids`` joins the nodes' sets with ``;`` where they
    differ ("0,1,2,3;0,1").
    """

    start: np.ndarray
    node_sets: list[int] | None
    gpu_sets: list[int] | None
    dropped: list[tuple[int, str]]  # (queue index, reason)
    runtime: np.ndarray | None = None  # general path: the replayed (scaled) run times
    estimate: np.ndarray | None = None  # general path: the scaled estimates EASY used
    node_off: np.ndarray | None = None
    node_list: np.ndarray | None = None
    gpu_mask: np.ndarray | None = None
    node_gpus: list[list[int]] | None = None
    shapes: tuple[np.ndarray, np.ndarray] | None = None  # moldable runs: (nodes, GPUs per node)

    def node_masks(self) -> list[int]:
        """Each job's node set as a bit set (bit ``k`` = node ``k``)."""
        if self.node_sets is not None:
            return self.node_sets
        out = [0] * len(self.start)
        off, nodes = self.node_off.tolist(), self.node_list.tolist()
        for j in range(len(out)):
            m = 0
            for k in nodes[off[j]:off[j + 1]]:
                if k >= 0:  # -1: a dropped job's (none)
                    m |= 1 << k
            out[j] = m
        return out

    def gpu_masks(self) -> list[int]:
        """Each job's GPU set on each of its nodes as a bit set (bit ``i`` = GPU ``i``; None for a
        job placed by GPU count with different sets on its nodes)."""
        if self.node_gpus is not None:
            return [c[0] if len(set(c)) == 1 else (None if c else 0) for c in self.node_gpus]
        return self.gpu_sets if self.gpu_sets is not None else self.gpu_mask.tolist()

    def node_ids(self) -> pa.Array:
        """Each job's nodes as text ("0,1,5"), a string array in queue order."""
        if self.node_sets is not None:
            return jt.strings(_format_sets(self.node_sets))
        off, nodes = self.node_off, self.node_list
        count = np.diff(off)
        width = int(nodes.max()) + 1 if len(nodes) else 1
        index = np.zeros(len(count), dtype=np.int64)
        single = count == 1
        index[single] = nodes[off[:-1][single]]
        words = [str(k) for k in range(width)] + [""]  # "": dropped jobs (node -1)
        index[index < 0] = width
        multi: dict[tuple[int, ...], int] = {}
        for j in np.flatnonzero(~single).tolist():  # multi-node jobs only (few)
            key = tuple(k for k in nodes[off[j]:off[j + 1]].tolist() if k >= 0)
            at = multi.get(key)
            if at is None:
                at = multi[key] = len(words)
                words.append(",".join(map(str, key)))
            index[j] = at
        return jt.strings_at(words, index)

    def gpu_ids(self) -> pa.Array:
        """Each job's GPUs on each of its nodes as text ("0,1"; "0,1;2" when the nodes' sets
        differ), a string array in queue order."""
        if self.node_gpus is not None:
            text: dict[tuple[int, ...], str] = {}
            out = []
            for c in self.node_gpus:
                key = tuple(c) if len(set(c)) > 1 else tuple(c[:1])
                if key not in text:
                    text[key] = ";".join(_format_sets(list(key)))
                out.append(text[key])
            return jt.strings(out)
        if self.gpu_sets is not None:
            return jt.strings(_format_sets(self.gpu_sets))
        masks = sorted_distinct(self.gpu_mask)  # (return_inverse would sort every job)
        index = np.searchsorted(masks, self.gpu_mask)
        words = [",".join(map(str, bits(m))) for m in masks.tolist()]
        return jt.strings_at(words, index)


def _format_sets(masks: list[int]) -> list[str]:
    """Bit sets as comma-separated indices ("0,1,5"); sets repeat a lot, so format each once."""
    text: dict[int, str] = {}
    out = []
    for m in masks:
        t = text.get(m)
        if t is None:
            t = text[m] = ",".join(map(str, bits(m)))
        out.append(t)
    return out
