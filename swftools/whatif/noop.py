"""Policies that cannot differ (issue 25): said on stderr and in ``comparison.json``, never silent.

Before the replays, from the inputs (``static_reasons``):

- **no variability**: the site has one GPU model, every GPU the same score and one performance
  class (a homogeneous site without ``--profile`` or ``gpu_scores``; a flat pool without a
  profile): the policies that rank GPUs by model, score or class (``VARIABILITY_POLICIES``) have
  nothing to rank by, and each places as the policy named there;
- **one GPU model**: ``even`` spreads over GPU models, so with one it places as ``packed``;
- **one performance class** (GPU models differ, but no profile or class column gives classes):
  ``variability-first`` places as ``packed``, ``lxv`` has one class threshold, so one candidate,
  and places as ``locality-first``.

- **one score per GPU** (``pal``, ``pm-first``): the profile (or the site's ``gpu_scores``) has
  no ``score:<class>`` columns, so every application class sees the same scores and these rank
  the GPUs alike for every job; PAL's per-class variability is not in the replay (they may
  still differ from the baseline).

After the replays (``no_ops``): a policy whose schedule came out identical to the baseline's
(every job starts and ends at the same second) is reported too, with the reason above when one
applies.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.site import Site

# placements that act on GPU models, scores or performance classes, and the policy each places
# as when there is no variability (pal/pm-first: see their module; a policy not listed here is
# judged by its schedule only)
VARIABILITY_POLICIES = {"even": "packed", "priority": "packed", "priority-wc": "packed",
                        "variability-first": "packed", "lxv": "locality-first"}
# with one performance class, these place exactly as the named policy does
ONE_CLASS = {"variability-first": "packed", "lxv": "locality-first"}
# with one GPU model, these place exactly as the named policy does
ONE_MODEL = {"even": "packed"}
# these rank GPUs per application class (per-class scores: ``score:<class>`` profile columns)
PER_CLASS = ("pm-first", "pal")


def static_reasons(site: Site, classes: np.ndarray | None, names: list[str],
                   profile_given: bool, *, class_scores: bool = False) -> dict[str, str]:
    """Per policy of ``names`` (the baseline, ``names[0]``, excluded) why it cannot use what it
    ranks by, from the site (with its scores), the GPUs' performance ``classes`` (None: one) and
    whether the profile gives per-application-class scores, and the policy it then places as."""
    out = _reasons(site, classes, names, profile_given)
    if not class_scores:
        for name in names[1:]:
            if name in PER_CLASS:
                note = (f"one score per GPU: the {'profile' if profile_given else 'site'} has no "
                        f"score:<class> columns, so every application class sees the same "
                        f"scores and {name} ranks the GPUs alike for every job (PAL's "
                        "per-class variability is not modelled)")
                out[name] = f"{out[name]}; {note}" if name in out else note
    return out


def _reasons(site: Site, classes: np.ndarray | None, names: list[str],
             profile_given: bool) -> dict[str, str]:
    """``static_reasons`` without the per-class note."""
    one_model = len(site.gpu_models) == 1  # a site has at least one node
    scores = {s for row in site.gpu_score for s in row}
    one_class = classes is None or classes.size == 0 or int(np.max(classes)) == 0
    out: dict[str, str] = {}
    if one_model and len(scores) <= 1 and one_class:
        source = ("the profile gives every GPU the same score" if profile_given else
                  "no --profile and no gpu_scores in the site file")
        for name in names[1:]:
            if name in VARIABILITY_POLICIES:
                out[name] = (f"no variability: site {site.name} has one GPU model "
                             f"({site.gpu_models[0]}) and every GPU scores the same ({source}), so "
                             f"{name}, which ranks GPUs by model, score or class, places as "
                             f"{VARIABILITY_POLICIES[name]} does")
        return out
    for name in names[1:]:
        if one_model and name in ONE_MODEL:
            out[name] = (f"one GPU model: site {site.name} has only {site.gpu_models[0]} GPUs, so "
                         f"{name} places as {ONE_MODEL[name]} does")
        elif one_class and name in ONE_CLASS:
            source = ("the profile has one class" if profile_given else
                      "no --profile and no class column in the site's gpu_scores")
            out[name] = (f"one performance class: every GPU of site {site.name} is in class 0 "
                         f"({source}), so {name} places as {ONE_CLASS[name]} does")
    return out


def same_schedule(a: pa.Table, b: pa.Table) -> bool:
    """Whether two replays of one trace start and end every job at the same second."""
    if a.num_rows != b.num_rows:
        return False
    return all(np.array_equal(x, y) for x, y in zip(_by_job(a), _by_job(b)))


def _by_job(jobs: pa.Table) -> list[np.ndarray]:
    """Job ids, start and end times in job id order (through the buffers: pyarrow's sort
    imports pyarrow.compute, ~40 ms)."""
    ids, start, end = (jt.to_numpy(jobs.column(name))
                       for name in ("job_id", "start_time", "end_time"))
    order = np.argsort(ids, kind="stable")
    return [ids[order], start[order], end[order]]


def no_ops(static: dict[str, str], schedules: dict[str, pa.Table],
           names: list[str]) -> dict[str, str]:
    """The ``no_op`` entry of a comparison: per policy (never the baseline) the reason it cannot
    differ or did not differ from the baseline, ``names[0]``; in ``names`` order."""
    base = names[0]
    out: dict[str, str] = {}
    for name in names[1:]:
        identical = same_schedule(schedules[base], schedules[name])
        reasons = [static[name]] if name in static else []
        if identical:
            reasons.append(f"its schedule is identical to {base}'s (every job starts and ends "
                           "at the same second)")
        if reasons:
            out[name] = "; ".join(reasons)
    return out


__all__ = ["ONE_CLASS", "ONE_MODEL", "PER_CLASS", "VARIABILITY_POLICIES", "no_ops", "same_schedule",
           "static_reasons"]
