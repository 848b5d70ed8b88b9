"""Analysis 4, parallelism vs walltime: Spearman rank and Pearson (log-log) correlation.

Population: successful jobs of at least 60 s with a known PE count. The paper's figures are those
of a balanced random sample, 2,000 single-PE and 2,000 multi-PE jobs drawn without replacement
(all of a class when it has fewer) with ``numpy.random.default_rng(seed)``, single-PE jobs first;
with almost all jobs tied at one PE, the coefficient over all jobs is reported for reference.
The walltime quantiles per PE-count bin (the box plot) are those of the balanced sample too, so
the figure titled by the sample's coefficients draws that sample.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy import stats

from swftools.report.frame import JobFrame, skipped, successful_long
from swftools.report.parallelism import bin_label, power_of_two_bin
from swftools.synth.calibration import BALANCED_SAMPLE_PER_CLASS as PER_CLASS
from swftools.synth.calibration import balanced_sample  # one sampler for report and calibration
BOX_QUANTILES = {"p5": 0.05, "p25": 0.25, "median": 0.5, "p75": 0.75, "p95": 0.95}


def coefficients(pes: np.ndarray, walltime_s: np.ndarray) -> dict[str, Any]:
    """Spearman rank correlation and Pearson correlation of the logs, with p-values."""
    if pes.size < 3 or np.all(pes == pes[0]) or np.all(walltime_s == walltime_s[0]):
        return skipped("fewer than 3 jobs, or one of the variables is constant")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho, rho_p = stats.spearmanr(pes, walltime_s)
        r, r_p = stats.pearsonr(np.log(pes), np.log(walltime_s))
    return {"status": "ok", "jobs": int(pes.size), "spearman": float(rho),
            "spearman_p_value": float(rho_p), "pearson_log": float(r),
            "pearson_log_p_value": float(r_p)}


def analyze(frame: JobFrame, seed: int = 0) -> dict[str, Any]:
    """The correlation analysis (see the module docstring)."""
    jobs, description = successful_long(frame)
    jobs = jobs[jobs["gpus"].notna()]
    if jobs.empty:
        return skipped(f"no {description} with a known {frame.pe} count")
    pes = jobs["gpus"].to_numpy()
    walltime = jobs["walltime_s"].to_numpy()
    if not (pes > 1).any():
        return skipped(f"every job uses one {frame.pe}: parallelism does not vary")
    sample = balanced_sample(pes, seed)
    return {
        "status": "ok",
        "population": f"{description} with a known {frame.pe} count",
        "variables": f"{frame.pe}s (total) and walltime (s); Pearson on natural logarithms",
        "seed": seed,
        "per_class": PER_CLASS,
        "balanced_sample": {**coefficients(pes[sample], walltime[sample]),
                            "single_pe_jobs": int((pes[sample] == 1).sum()),
                            "multi_pe_jobs": int((pes[sample] > 1).sum())},
        "all_jobs": coefficients(pes, walltime),
        "walltime_h_by_pe_bin": _boxes(pes[sample], walltime[sample] / 3600.0),
    }


def _boxes(pes: np.ndarray, hours: np.ndarray) -> list[dict[str, Any]]:
    uppers = power_of_two_bin(pes)
    order = np.argsort(uppers, kind="stable")
    uppers, hours = uppers[order], hours[order]
    values, starts = np.unique(uppers, return_index=True)
    rows = []
    for upper, chunk in zip(values, np.split(hours, starts[1:])):
        q = np.quantile(chunk, list(BOX_QUANTILES.values()))
        rows.append({"bin": bin_label(int(upper)), "jobs": int(chunk.size),
                     **{k: float(v) for k, v in zip(BOX_QUANTILES, q)}})
    return rows
