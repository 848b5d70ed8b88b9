"""Analysis 1, parallelism: how many jobs use one processing element, one node, several nodes.

Population: jobs of at least 60 s. With node counts (recorded, or derived for a GPU site whose
multi-node jobs take whole nodes) the classes are single-PE, single-node multi-PE and multi-node,
broken down by PE count within single-node jobs and by node count for multi-node jobs. Without
them (plain SWF traces) the classes are single-PE and multi-PE, broken down by PE count in
power-of-two bins.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from swftools.report.frame import (MIN_WALLTIME_S, MULTI_NODE, JobFrame, long_enough, quarters,
                                   quarters_skip_reason, size_classes, skipped)


def _counts(values: pd.Series, key: str) -> list[dict[str, Any]]:
    """``[{key: value, "jobs": n, "share": s}, ...]`` in ascending value order."""
    counts = values.value_counts().sort_index()
    total = int(counts.sum())
    return [{key: int(v), "jobs": int(c), "share": c / total} for v, c in counts.items()]


def power_of_two_bin(values: np.ndarray) -> np.ndarray:
    """Upper bound of the power-of-two bin of each count: 1, 2, 4 (3-4), 8 (5-8), ..."""
    return np.power(2.0, np.ceil(np.log2(values))).astype(np.int64)


def bin_label(upper: int) -> str:
    """Label of a power-of-two bin: ``1``, ``2``, ``3-4``, ``5-8``, ..."""
    return str(upper) if upper <= 2 else f"{upper // 2 + 1}-{upper}"


def _binned(values: pd.Series) -> list[dict[str, Any]]:
    uppers = pd.Series(power_of_two_bin(values.to_numpy()))
    rows = _counts(uppers, "upper")
    return [{"bin": bin_label(r.pop("upper")), **r} for r in rows]


def analyze(frame: JobFrame) -> dict[str, Any]:
    """The parallelism analysis (see the module docstring)."""
    jobs = long_enough(frame.jobs)
    if jobs.empty:
        return skipped(f"no jobs of at least {MIN_WALLTIME_S} s with a known run time")
    classes = size_classes(frame, jobs)
    known = classes.notna()
    if not known.any():
        return skipped(f"the number of {frame.pe}s is unknown for every job")
    labels = frame.class_labels()
    sized, classes = jobs[known], classes[known]
    counts = {c: int((classes == c).sum()) for c in labels}
    total = sum(counts.values())
    result: dict[str, Any] = {
        "status": "ok",
        "population": f"jobs of at least {MIN_WALLTIME_S} s with a known {frame.pe} count",
        "jobs": total,
        "excluded_unknown_size": int((~known).sum()),
        "processing_element": frame.pe,
        "nodes_source": frame.nodes_source,
        "classes": {c: {"label": labels[c], "jobs": counts[c], "share": counts[c] / total}
                    for c in labels},
    }
    if frame.has_nodes:
        single_node = sized[sized["nodes"].to_numpy() == 1]
        result["single_node_by_pe_count"] = _counts(single_node["gpus"], "pes")
        multi = sized[classes.to_numpy() == MULTI_NODE]
        result["multi_node_by_node_count"] = _counts(multi["nodes"], "nodes")
    else:
        result["single_node_by_pe_count"] = skipped("node counts are unknown")
        result["multi_node_by_node_count"] = skipped("node counts are unknown")
        result["by_pe_count_bins"] = _binned(sized["gpus"])
    result["quarterly"] = _quarterly(frame, sized, classes, list(labels))
    return result


def _quarterly(frame: JobFrame, jobs: pd.DataFrame, classes: pd.Series,
               names: list[str]) -> Any:
    reason = quarters_skip_reason(frame)
    if reason:
        return skipped(reason)
    quarter = quarters(frame, jobs)
    table = pd.crosstab(quarter, classes).reindex(columns=names, fill_value=0)
    rows = []
    for label, counts in table.iterrows():
        total = int(counts.sum())
        rows.append({"quarter": str(label), "jobs": total,
                     "classes": {c: int(counts[c]) for c in names},
                     "shares": {c: counts[c] / total for c in names}})
    return rows
