"""The AAIC paper's headline workload figures and how to measure them on a job table.

Targets are from Takizawa, Ogawa, Takano, "Workload analysis of the AIST AI Cloud" (IPSJ HPC170,
2019), as restated in issue 8's calibration proof. The published values live once, in
``schemas/aaic-paper.json`` (:func:`published`), shared with the report's summary table; each
figure there names the ``measure`` below it is compared with. Filters, written down once here:

- *jobs of at least 60 s*: ``walltime_s >= 60`` (any termination code);
- *successful*: ``termcode == 0``;
- walltime request accuracy (WRA = ``walltime_s / requested_walltime_s``), the share requesting
  their queue's maximum (``requested_walltime_s == walltime_max_s`` of the job's queue in the site
  settings), the walltime medians and the correlations are computed on successful jobs of at
  least 60 s;
- the single-GPU and single-node shares on all jobs of at least 60 s; the success share on all jobs.

Correlation between parallelism (total GPUs) and walltime: Spearman rank correlation (average
ranks for ties; ``scipy.stats.spearmanr``, as in the report) and Pearson correlation of ``log(gpus)`` with ``log(walltime_s)``, on a balanced
random sample (2,000 single-GPU + 2,000 multi-GPU jobs drawn without replacement with
``numpy.random.default_rng(sample_seed)``; all of a class when it has fewer) and, for reference,
on all jobs of the population. The paper's figures are those of the balanced sample: with 96 %
single-GPU jobs tied at rank one, the all-jobs coefficient is necessarily much smaller.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from swftools.resources import load_json
from swftools.site import Site, load_site

MIN_WALLTIME_S = 60
BALANCED_SAMPLE_PER_CLASS = 2000
PAPER_FILE = "aaic-paper.json"


def published() -> dict[str, Any]:
    """The paper's published figures, ``schemas/aaic-paper.json`` (cached; treat as read-only):
    ``citation``, ``column`` and ``figures``, each with ``key``, ``value``, ``unit``, ``source``
    and, for the calibrated ones, ``calibration`` (``measure``, ``tolerance``, ``tolerance_kind``).
    """
    return load_json(PAPER_FILE)


# measure name -> (paper value, tolerance, "rel" | "abs"), from the published figures
TARGETS: dict[str, tuple[float, float, str]] = {
    f["calibration"]["measure"]: (f["value"], f["calibration"]["tolerance"],
                                  f["calibration"]["tolerance_kind"])
    for f in published()["figures"] if "calibration" in f}


def _frame(table: pa.Table) -> pd.DataFrame:
    cols = ["user", "queue", "nodes", "gpus", "requested_walltime_s", "termcode",
            "submit_time", "walltime_s"]
    return table.select(cols).to_pandas()


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation (average ranks for ties): scipy's, the report's implementation."""
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    from scipy.stats import spearmanr  # on first use: scipy is slow to import

    return float(spearmanr(x, y).statistic)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2 or np.std(x) == 0 or np.std(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def balanced_sample(gpus: np.ndarray, sample_seed: int = 0,
                    per_class: int = BALANCED_SAMPLE_PER_CLASS) -> np.ndarray:
    """Row indices of a balanced sample: ``per_class`` single-GPU and ``per_class`` other jobs."""
    rng = np.random.default_rng(sample_seed)
    single = np.flatnonzero(gpus == 1)
    other = np.flatnonzero(gpus > 1)
    picks = [rng.choice(idx, size=min(per_class, len(idx)), replace=False)
             for idx in (single, other)]
    return np.sort(np.concatenate(picks))


def measure(table: pa.Table, site: Site | None = None, sample_seed: int = 0) -> dict[str, Any]:
    """The paper's figures (see the module docstring for the filters) plus context figures."""
    site = site or load_site("aaic")
    df = _frame(table)
    long_enough = df[df["walltime_s"] >= MIN_WALLTIME_S]
    ok = long_enough[long_enough["termcode"] == 0]
    queue_max = {q.name: q.walltime_max_s for q in site.queues}
    hours = ok["walltime_s"].to_numpy() / 3600.0
    gpus = ok["gpus"].to_numpy()
    nodes = ok["nodes"].to_numpy()
    wra = (ok["walltime_s"] / ok["requested_walltime_s"]).to_numpy()
    at_max = ok["requested_walltime_s"].to_numpy() == ok["queue"].map(queue_max).to_numpy()

    def median(mask: np.ndarray) -> float:
        return float(np.median(hours[mask])) if mask.any() else float("nan")

    sample = balanced_sample(gpus, sample_seed)
    gs, ws = gpus[sample].astype(float), ok["walltime_s"].to_numpy()[sample].astype(float)
    walltime = ok["walltime_s"].to_numpy().astype(float)
    figures: dict[str, Any] = {
        "single_gpu_share": float((long_enough["gpus"] == 1).mean()),
        "single_node_share": float((long_enough["nodes"] == 1).mean()),
        "success_share": float((df["termcode"] == 0).mean()),
        "wra_mean": float(np.mean(wra)),
        "wra_median": float(np.median(wra)),
        "max_request_share": float(np.mean(at_max)),
        "median_walltime_h_all": median(np.ones(len(ok), bool)),
        "median_walltime_h_single_gpu": median(gpus == 1),
        "median_walltime_h_single_node_multi_gpu": median((nodes == 1) & (gpus > 1)),
        "median_walltime_h_multi_node": median(nodes > 1),
        "spearman_balanced": _spearman(gs, ws),
        "pearson_log_balanced": _pearson(np.log(gs), np.log(ws)),
        "spearman_all": _spearman(gpus.astype(float), walltime),
        "pearson_log_all": _pearson(np.log(gpus.astype(float)), np.log(walltime)),
        "jobs": len(df),
        "jobs_min_60s": len(long_enough),
        "jobs_successful_min_60s": len(ok),
        "users": int(df["user"].nunique()),
        "queue_shares": {str(k): float(v) for k, v in
                         df["queue"].value_counts(normalize=True).sort_index().items()},
    }
    return figures


def compare(figures: dict[str, Any]) -> list[tuple[str, float, float, float, str, bool]]:
    """Rows ``(name, measured, target, tolerance, kind, within)`` for every calibrated figure."""
    rows = []
    for name, (target, tol, kind) in TARGETS.items():
        value = figures[name]
        off = abs(value - target) if kind == "abs" else abs(value - target) / target
        rows.append((name, value, target, tol, kind, bool(off <= tol)))
    return rows
