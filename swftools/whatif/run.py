"""``swftools whatif TRACE``: replay one trace under several placement policies and compare them.

Every policy runs on the same EASY (or FCFS) engine (``swftools.replay``), the same resource
model and the same job classes; only the placement differs. A job's run time and EASY estimate
are its recorded run time and requested walltime times the run-time factor of the GPUs it gets
(``swftools.whatif.sensitivity``); the backfill filter uses a lower bound of that factor (the
fastest GPU model at the best score, no communication on the new placement, the recorded
placement's communication at the largest GPU count the job may hold), and the engine then checks
the job's real factor, so a reservation is never broken.

Gain of a job (what ``priority`` and ``priority-wc`` rank by): its class's speed on the site's fastest GPU model over
its speed on the slowest one. On a homogeneous site every gain is 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from swftools.atomic import atomic_dir
from swftools.errors import InputError, UsageError
from swftools.fingerprint import PREFIX, table_fingerprint
from swftools.replay import replay
from swftools.replay.placement import PLACEMENTS, PlacementInputs
from swftools.replay.result import ReplayResult, sorted_distinct
from swftools.site import Site, resolve_site
from swftools.whatif.cluster import flat_site, with_scores
from swftools.whatif.compare import PolicyFigures, compare, jct_cdf_figure, table_text
from swftools.whatif.noop import no_ops, static_reasons
from swftools.whatif.profile import Profile, read_profile, site_profile
from swftools.whatif.sensitivity import Sensitivity, assign_classes, factor_model, load_sensitivity

DEFAULT_POLICIES = ("packed", "priority", "priority-wc", "lxv")
DEFAULT_SENSITIVITY = "mlperf-p100-v100"
FLAT_SENSITIVITY = "compute-only"
FIGURE = "jct-cdf.png"


@dataclass
class WhatIf:
    """The what-if replays of one trace: per policy its replay, and the comparison."""

    site: str
    sensitivity: str
    classes: str  # how job classes were chosen
    profile: Any  # the profile file, or the summary of a generated one
    scheduler: str
    policies: list[str]
    results: dict[str, ReplayResult]
    rows: list[PolicyFigures] = field(default_factory=list)
    seed: int = 0
    trace: dict[str, Any] = field(default_factory=dict)  # fingerprint, source file, unit, jobs
    no_op: dict[str, str] = field(default_factory=dict)  # policy -> why it cannot differ
    shape: str = "recorded"  # job shapes: recorded, or by GPU count ("gpus")
    model_heading: str = "sensitivity"  # what ``sensitivity`` describes (moldable: "model")

    def context_lines(self) -> list[str]:
        """What the table is about: trace, site, profile, sensitivity, classes, replay."""
        profile = self.profile if isinstance(self.profile, (str, type(None))) else "generated"
        fingerprint = str(self.trace.get("fingerprint", ""))
        return [f"trace        {self.trace.get('source_file') or '<table>'} "
                f"({fingerprint[:len(PREFIX) + 16]}...)",
                f"site         {self.site}; profile {profile or 'none'}",
                f"{self.model_heading:<12} {self.sensitivity}; classes by {self.classes}",
                (f"replay       scheduler {self.scheduler}, seed {self.seed}"
                 + ("" if self.shape == "recorded" else ", jobs placed by GPU count")
                 + f"; ratios against {self.policies[0]}"), ""]

    def table_text(self) -> str:
        """The comparison table (text) after its context lines: what the terminal shows and
        ``comparison.txt`` holds."""
        return table_text(self.rows, self.trace.get("processor_unit", "gpu"),
                          self.context_lines())

    def to_json(self) -> dict[str, Any]:
        """The comparison as a JSON-ready dict."""
        return {"trace": self.trace, "site": self.site, "sensitivity": self.sensitivity,
                "classes": self.classes, "profile": self.profile, "scheduler": self.scheduler,
                "seed": self.seed, "shape": self.shape, "baseline": self.policies[0],
                "policies": [r.to_json() for r in self.rows], "no_op": self.no_op,
                "skipped": {p: self.results[p].skipped.num_rows for p in self.policies}}

    def write(self, out_dir: str | Path, *, force: bool = False) -> Path:
        """Per-policy job tables (``<policy>.parquet``), ``comparison.json``, ``comparison.txt``
        and the JCT figure, written into ``out_dir`` at once (atomic)."""
        import json

        from swftools.fileio import write_parquet  # on use: a run may write nothing

        with atomic_dir(out_dir, force=force) as tmp:
            for name in self.policies:
                write_parquet(self.results[name].jobs, tmp / f"{name}.parquet")
            (tmp / "comparison.json").write_text(
                json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
            (tmp / "comparison.txt").write_text(self.table_text(), encoding="utf-8")
            jct_cdf_figure([(p, self.results[p].jobs) for p in self.policies], tmp / FIGURE)
        return Path(out_dir)


def _profile(profile: Profile | str | Path | None, site: Site) -> Profile | None:
    """The profile of the replays: ``profile`` (a Profile or its CSV) when given, else the one
    the site's ``gpu_scores`` file carries (``site_profile``); both read by ``read_score_csv``
    and made a Profile alike, so classes come from either."""
    if profile is None:
        return site_profile(site)
    if isinstance(profile, Profile):
        return profile
    return read_profile(profile, site)


def _class_scores(prof: Profile | None, sens: Sensitivity) -> list[list[list[float]]] | None:
    """Per application class of ``sens`` its ``[node][gpu]`` scores from the profile's
    ``score:<class>`` columns (a class without a column: the profile's ``score``), or None when
    the profile has one score per GPU. InputError for a column naming no class of ``sens``."""
    if prof is None or not prof.app_scores:
        return None
    given = dict(prof.app_scores)
    for name in given:
        if name not in sens.names:
            raise InputError(prof.path or "profile", f"column score:{name} names no application "
                             f"class of sensitivity model {sens.name}", line=1,
                             field=f"score:{name}", value=name,
                             expected=f"one of {', '.join(sens.names)}")
    return [given.get(name, prof.scores).tolist() for name in sens.names]


def _factor_lower_bounds(table: pa.Table, fm: Any, speeds: np.ndarray,
                         classes: np.ndarray) -> np.ndarray:
    """Per row, a factor no placement can beat: factor = (I r + comm) / (I + comm_recorded) >=
    I r_min / (I + comm_recorded(p_max)), with r_min the trace model's speed over the fastest
    model's at the best score, comm >= 0, and comm_recorded growing with the GPU count p (so the
    largest count the job may hold gives the smallest bound)."""
    from swftools.replay.workload import int_column, job_size

    grids = fm.score if fm.class_score is None else fm.class_score
    best_score = float(np.max(grids)) if grids.size else 1.0
    r_min = np.array([fm.trace_speed[c] / speeds[c].max() for c in range(len(speeds))]) / best_score
    size, _ = job_size(table)
    gpus, known = int_column(table, "gpus")
    p_max = np.maximum(np.maximum(size, np.where(known, gpus, 1)), 1)
    # one bound per distinct (class, p_max) pair, computed as scalars, then spread to the rows
    classes = np.asarray(classes, dtype=np.int64)
    width = int(p_max.max()) + 1 if len(p_max) else 1
    pairs, inverse = np.unique(classes * width + p_max, return_inverse=True)
    values = np.empty(len(pairs))
    for k, (c, p) in enumerate(zip((pairs // width).tolist(), (pairs % width).tolist())):
        i = float(fm.iter_s[c])
        values[k] = float(i * r_min[c] / (i + fm.comm_s(c, fm.recorded_level(p), p)))
    return values[inverse.reshape(-1)]


def parse_policies(policies: str | Sequence[str]) -> list[str]:
    """Placement names from ``a,b,c`` or a list; UsageError for unknown or repeated names."""
    names = [p.strip() for p in (policies.split(",") if isinstance(policies, str) else policies)
             if p.strip()]
    if not names:
        raise UsageError("give at least one placement policy")
    for name in names:
        if name not in PLACEMENTS:
            raise UsageError(f"unknown placement policy {name!r} (choose from "
                             f"{', '.join(PLACEMENTS)})")
    if len(set(names)) != len(names):
        raise UsageError(f"a placement policy is named twice in {','.join(names)}")
    return names


def whatif(table: pa.Table, site: Site | str | Path | None, *,
           policies: str | Sequence[str] = DEFAULT_POLICIES,
           profile: Profile | str | Path | None = None,
           sensitivity: Sensitivity | str | Path | None = None, procs: int | None = None,
           class_column: str | None = None, class_rule: str = "hash", scheduler: str = "easy",
           seed: int = 0, locality_penalty: float = 1.7, pal_k2: bool = False,
           shape: str = "recorded",
           on_policy: Callable[[str, int, int], None] = lambda name, k, n: None) -> WhatIf:
    """Replay ``table`` on ``site`` under each placement policy; see the module docstring.

    ``profile`` (a ``Profile`` or its CSV) gives per-GPU scores and classes; ``sensitivity`` the
    job classes' speeds (a preset name or file; default ``mlperf-p100-v100`` on GPU sites,
    ``compute-only`` on a flat pool). Without a site, or with ``procs``, the trace replays on a
    flat pool (``procs``, else its SWF header's MaxProcs) of one-processor nodes
    (``cluster.flat_site``). Classes come from ``class_column`` or
    ``class_rule`` (``hash`` or ``single:<class>``). ``locality_penalty`` and ``pal_k2``: ``pal``'s
    cross-node penalty and the artifact's k = 2. ``shape``: ``recorded`` node shapes, or
    ``gpus`` (opt-in): jobs placed by their GPU count, partial nodes allowed
    (``replay.engine_count``, Python only). ``on_policy(name, k, n)`` is called
    before each replay (progress).
    """
    names = parse_policies(policies)
    site_obj = None if procs is not None else resolve_site(site, table)
    flat = site_obj is None
    if flat:
        from swftools.replay import resource_model

        pool = resource_model(table, None, procs)  # the header's MaxProcs, or UsageError
        site_obj = flat_site(pool.procs)
    if sensitivity is None:
        sensitivity = FLAT_SENSITIVITY if flat else DEFAULT_SENSITIVITY
    prof = _profile(profile, site_obj)
    if prof is not None:
        site_obj = with_scores(site_obj, prof.scores.tolist(), prof.classes.tolist())
    sens = sensitivity if isinstance(sensitivity, Sensitivity) else load_sensitivity(sensitivity)
    classes, described = assign_classes(table, sens, column=class_column, rule=class_rule)
    fm = factor_model(site_obj, sens)
    class_score = _class_scores(prof, sens)
    if class_score is not None:
        fm = fm.with_class_scores(class_score)
    speeds = fm.speed[:, sorted_distinct(fm.node_model)]  # per class, on the site's GPU models
    gain = (speeds.max(axis=1) / speeds.min(axis=1))[classes]
    min_factor = _factor_lower_bounds(table, fm, speeds, classes)
    klass = prof.classes.tolist() if prof is not None else None
    # placements rank GPU models by their mean speed over the job classes (higher: faster)
    model_speed = [float(fm.speed[:, i].mean()) for i in range(len(fm.models))]
    # per-class scores: a factor depends on the class's scores, not the placement signature's
    keyed = class_score is None
    inputs = PlacementInputs(rack=list(site_obj.rack_of_node), gpu_model=fm.node_model.tolist(),
                             score=fm.score.tolist(), gpu_class=klass, model_speed=model_speed,
                             gain=gain.tolist(), factor_by_key=keyed,
                             factor_kernel=fm.kernel(classes),
                             class_score=class_score, job_class=classes.tolist(),
                             pal_penalty=locality_penalty, pal_k2=pal_k2)
    cls_list = classes.tolist()

    def factor(row: int, nodes: list[int] | None, gpus: list[list[int]] | None) -> float:
        if nodes is None:  # the key query of keyed factors: a job's factor depends on its class
            return cls_list[row]
        return fm.factor(cls_list[row], nodes, gpus)

    results: dict[str, ReplayResult] = {}
    for k, name in enumerate(names):
        on_policy(name, k, len(names))
        results[name] = replay(table, site_obj, policy=scheduler, placement=name,
                               placement_inputs=inputs, runtime_factor=factor,
                               min_factor=min_factor, seed=seed, shape=shape)
    static = static_reasons(site_obj, None if prof is None else prof.classes, names,
                            profile is not None, class_scores=class_score is not None)
    out = WhatIf(site=site_obj.name, sensitivity=sens.name, classes=described,
                 profile=None if prof is None else (prof.path or prof.summary()),
                 scheduler=scheduler, policies=names, results=results, seed=seed, shape=shape,
                 trace=trace_identity(table),
                 no_op=no_ops(static, {n: results[n].jobs for n in names}, names))
    out.rows = compare([(n, results[n].jobs, results[n].capacity) for n in names])
    return out


def trace_identity(table: pa.Table) -> dict[str, Any]:
    """What a comparison records of its trace: the fingerprint of its job table
    (``swftools.fingerprint``; ``report --whatif`` checks it), source file, job count and what
    its processors are (``TableMetadata.unit``: ``gpu`` or ``processor``)."""
    from swftools.table import metadata_of

    meta = metadata_of(table)
    return {"fingerprint": table_fingerprint(table), "source_file": meta.source_file,
            "jobs": table.num_rows, "processor_unit": meta.unit}


__all__ = ["DEFAULT_POLICIES", "DEFAULT_SENSITIVITY", "WhatIf", "parse_policies", "whatif"]
