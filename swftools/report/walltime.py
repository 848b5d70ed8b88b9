"""Analysis 3, walltime statistics in hours, overall and by parallelism class, with the CDF.

Population: successful jobs of at least 60 s (all jobs of at least 60 s when the trace records no
outcome). The CDF is kept as quantiles at 101 evenly spaced probabilities, so the figure can be
redrawn from ``report.json`` alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from swftools.report.frame import JobFrame, describe, size_classes, skipped, successful_long

CDF_PROBABILITIES = tuple(i / 100 for i in range(101))
ALL = "all"


def analyze(frame: JobFrame) -> dict[str, Any]:
    """The walltime analysis (see the module docstring)."""
    jobs, description = successful_long(frame)
    if jobs.empty:
        return skipped(f"no {description}")
    hours = jobs["walltime_s"].to_numpy() / 3600.0
    classes = size_classes(frame, jobs).to_numpy()
    groups: dict[str, Any] = {ALL: _stats(hours, "all jobs")}
    for key, label in frame.class_labels().items():
        values = hours[classes == key]
        groups[key] = _stats(values, label) if values.size else skipped(f"no {label} jobs")
    if not frame.has_nodes:
        groups["single_node_multi"] = skipped("node counts are unknown")
        groups["multi_node"] = skipped("node counts are unknown")
    return {"status": "ok", "population": description, "jobs": len(jobs), "unit": "hours",
            "cdf_probabilities": list(CDF_PROBABILITIES), "groups": groups}


def _stats(hours: np.ndarray, label: str) -> dict[str, Any]:
    return {"status": "ok", "label": label, **describe(hours),
            "cdf_hours": [float(v) for v in np.quantile(hours, CDF_PROBABILITIES)]}
