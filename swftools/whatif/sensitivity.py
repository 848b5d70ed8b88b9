r"""Job sensitivity model: how a job's run time changes with the GPUs and the placement it gets
(issue 14). Every number is an input file (``schemas/sensitivity.schema.json``; preset
``schemas/whatif/mlperf-p100-v100.json``); the site gives GPU models, scores, racks and links.

Speeds. For class ``c`` and GPU model ``m``, ``speed(c, m)`` is a rate (higher is faster). From
measured run times of the same job, ``speed(c, m) = T(c, ref) / T(c, m)`` with ``ref`` the file's
first GPU model (e.g. MLPerf IC: ``speed(IC, V100) = 16384 s / 10873 s = 1.507``).

Classes. A job's class comes from a trace column when there is one (``assign_classes``), else
from a documented deterministic rule: ``hash`` (splitmix64 of the job id, its top 53 bits as a
uniform ``u`` in [0, 1), the class whose interval of the cumulative normalized ``mix`` holds
``u``; equal weights when the file gives no mix) or ``single:<class>`` (one class for all).

Run time. A job of class ``c`` recorded on GPUs of model ``m_trace`` (the site's ``gpu_model``)
placed on ``p`` GPUs (on ``nodes``, GPU lists ``gpus``) runs ``factor`` times its recorded time:

    r        = speed(c, m_trace) / speed(c, m_slow) / s_min
    comm(k)  = 2 (p - 1) / p * G_c / B_k + 2 (p - 1) * L_k            (0 when p = 1)
               (``comm.ring_allreduce_s``, the training-time model's all-reduce too)
    factor   = (I_c * r + comm(k)) / (I_c + comm(k_rec))

- ``m_slow``: of the GPU models the job holds, the slowest for class ``c``; ``s_min``: the lowest
  score of the GPUs it holds (synchronous data-parallel training runs at its slowest GPU); with
  per-application-class scores (``FactorModel.with_class_scores``) the scores of class ``c``;
- ``I_c`` (``iteration_ms``) the compute time of one iteration and ``G_c`` (``gradient_mb``) the
  gradient bytes all-reduced per iteration (ring all-reduce, no overlap with compute: the
  data-parallel term of published DL training-time models);
- ``k`` the locality level the placement spans: ``intra_node`` (one node), ``inter_node``
  (several nodes, one rack), ``inter_rack`` (several racks); ``B_k`` the lowest bandwidth and
  ``L_k`` the highest latency of the levels up to ``k`` (the slowest link of the ring);
- ``k_rec`` the level of the recorded placement, assumed packed: ``ceil(p / gpus_per_node)``
  nodes, in one rack when a rack holds that many nodes (else ``inter_rack``), on the trace's GPU
  model with every score 1.0.

So a job placed like its recorded placement, on the trace's model with scores 1.0, has factor
exactly 1.0 (and a one-GPU job ``r``). The issue's "recorded run time x speed(class, slowest GPU)
/ speed(class, trace GPU)" reads speed as a time factor; with speed as a rate it is ``r`` above.
``FactorModel`` caches factors by (class, models held, lowest score, link level, p) and offers a
vectorized form (``factors``) for the replay engine.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pyarrow as pa

from swftools import table as jt
from swftools.errors import InputError, UsageError, json_line
from swftools.site import LINK_KINDS, Site, short_gpu_model
from swftools.whatif.comm import level_allreduce_s, ring_allreduce_array_s
from swftools.whatif.jsonfile import load_checked

if TYPE_CHECKING:
    from swftools.replay.factors import FactorKernel

PRESETS = ("mlperf-p100-v100", "compute-only")
DEFAULT_CLASS_COLUMN = "app_class"  # used by assign_classes when the trace has it
LEVELS = ("none",) + LINK_KINDS  # link level index: 0 one GPU, 1 intra, 2 inter-node, 3 inter-rack


@dataclass(frozen=True)
class JobClass:
    """One application class of a sensitivity file."""

    name: str
    speed: dict[str, float]  # GPU model (short name) -> relative rate
    gradient_mb: float
    iteration_ms: float
    title: str = ""
    run_time_s: dict[str, float] | None = None  # as measured, when the file gives run times


@dataclass(frozen=True, eq=False)
class Sensitivity:
    """A job sensitivity model: classes, their speeds per GPU model, communication, mix."""

    name: str
    path: str
    gpu_models: tuple[str, ...]
    classes: tuple[JobClass, ...]
    mix: tuple[float, ...]  # normalized weight per class (sums to 1)
    mix_given: bool
    source: str = ""
    title: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.classes)

    def index(self, name: str) -> int:
        """The index of class ``name`` (UsageError if unknown)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise UsageError(f"unknown class {name!r} (classes of {self.name}: "
                             f"{', '.join(self.names)})") from None

    def speed(self, cls: int, model: str) -> float:
        """``speed(cls, model)``, a rate relative to the file's first GPU model."""
        return self.classes[cls].speed[model]


def _seconds(value: Any) -> float:
    if isinstance(value, str):
        h, m, s = (int(x) for x in value.split(":"))
        return float(h * 3600 + m * 60 + s)
    return float(value)


def load_sensitivity(name_or_path: str | Path) -> Sensitivity:
    """Load a sensitivity model by preset name (``mlperf-p100-v100``) or JSON file, checked by
    ``schemas/sensitivity.schema.json`` and for consistency (InputError naming file, line,
    field, value and what was expected)."""
    raw, name, text = load_checked("sensitivity", name_or_path, PRESETS, "",
                                   "sensitivity.schema.json")
    models = tuple(short_gpu_model(m) for m in raw["gpu_models"])
    ref = models[0]
    classes = []
    for i, c in enumerate(raw["classes"]):
        key = "run_time" if "run_time" in c else "speed"
        given = {short_gpu_model(m): v for m, v in c[key].items()}
        for m_text in c[key]:
            if short_gpu_model(m_text) not in models:
                raise InputError(name, f"unknown GPU model {m_text!r} in class {c['name']}",
                                 line=json_line(text, ["classes", i, key, m_text]),
                                 field=f"classes/{i}/{key}", value=m_text,
                                 expected=f"one of gpu_models ({', '.join(models)})")
        for m in models:
            if m not in given:
                raise InputError(name, f"class {c['name']} gives no {key.replace('_', ' ')} "
                                 f"for GPU model {m}", line=json_line(text, ["classes", i, key]),
                                 field=f"classes/{i}/{key}", value=m,
                                 expected=f"a value for every one of gpu_models ({', '.join(models)})")
        if any(c2["name"] == c["name"] for c2 in raw["classes"][:i]):
            raise InputError(name, f"duplicate class {c['name']!r}",
                             line=json_line(text, ["classes", i, "name"]),
                             field=f"classes/{i}/name", value=c["name"],
                             expected="one entry per class")
        if key == "run_time":
            times = {m: _seconds(v) for m, v in given.items()}
            speed = {m: times[ref] / times[m] for m in models}
        else:
            times = None
            speed = {m: float(given[m]) / float(given[ref]) for m in models}
        classes.append(JobClass(c["name"], speed, float(c["gradient_mb"]),
                                float(c["iteration_ms"]), c.get("title", ""), times))
    names = [c.name for c in classes]
    mix_raw = raw.get("mix")
    if mix_raw is None:
        weights = [1.0] * len(classes)
    else:
        for k in mix_raw:
            if k not in names:
                raise InputError(name, f"unknown class {k!r} in the mix",
                                 line=json_line(text, ["mix", k]), field="mix", value=k,
                                 expected=f"one of the classes ({', '.join(names)})")
        weights = [float(mix_raw.get(n, 0.0)) for n in names]
        if sum(weights) <= 0:
            raise InputError(name, "the mix weights add up to 0", line=json_line(text, ["mix"]),
                             field="mix", value="0", expected="a positive weight for some class")
    total = sum(weights)
    return Sensitivity(raw["name"], name, models, tuple(classes),
                       tuple(w / total for w in weights), mix_raw is not None,
                       raw.get("source", ""), raw.get("title", ""))


# --- classes of jobs ----------------------------------------------------------------------

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer of each value (uint64 arithmetic modulo 2^64)."""
    z = np.asarray(x).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def job_id_values(table: pa.Table) -> np.ndarray:
    """The ``job_id`` column as int64 numpy, through its buffers when it holds integers and no
    null (pyarrow's ``to_numpy`` imports pandas, ~0.25 s); InputError naming the first row whose
    id is missing or not an integer."""
    column = table.column("job_id")
    if pa.types.is_integer(column.type) and not column.null_count:
        return jt.to_numpy(column)
    ids = []
    for row, value in enumerate(column.to_pylist()):
        try:
            ids.append(int(value))
        except (TypeError, ValueError):
            raise InputError(_source_name(table), f"row {row}: job id {value!r} cannot be hashed",
                             field="job_id", value=str(value),
                             expected="an integer job id (the hash rule hashes it)") from None
    return np.array(ids, dtype=np.int64)


def hash_classes(job_ids: np.ndarray, mix: Sequence[float]) -> np.ndarray:
    """Class index per job id: splitmix64(job_id) >> 11 as u in [0, 1), into the cumulative mix."""
    u = (splitmix64(np.asarray(job_ids, dtype=np.int64).view(np.uint64)) >> np.uint64(11))
    u = u.astype(np.float64) * 2.0 ** -53
    cum = np.cumsum(np.asarray(mix, dtype=np.float64))
    cum /= cum[-1]
    return np.minimum(np.searchsorted(cum, u, side="right"), len(cum) - 1).astype(np.int64)


def _source_name(table: pa.Table) -> str:
    meta = table.schema.metadata or {}
    raw = meta.get(b"swftools")
    if raw:
        try:
            return json.loads(raw).get("source_file") or "<trace>"
        except ValueError:
            pass
    return "<trace>"


def assign_classes(table: pa.Table, sens: Sensitivity, *, column: str | None = None,
                   rule: str = "hash") -> tuple[np.ndarray, str]:
    """Each job's class index into ``sens.classes`` and a description of how it was chosen.

    From the trace column ``column`` (or ``app_class`` when the trace has it and no column is
    named): every value must be a class name, else InputError naming the row and job id. Else
    by ``rule``: ``hash`` (see the module docstring) or ``single:<class>``.
    """
    if column is None and DEFAULT_CLASS_COLUMN in table.column_names:
        column = DEFAULT_CLASS_COLUMN
    if column is not None:
        if column not in table.column_names:
            raise UsageError(f"the trace has no column {column!r} to take job classes from")
        values = table.column(column).to_pylist()
        ids = table.column("job_id").to_pylist() if "job_id" in table.column_names else None
        lookup = {n: i for i, n in enumerate(sens.names)}
        out = np.empty(len(values), dtype=np.int64)
        for row, v in enumerate(values):
            key = None if v is None else str(v)
            if key not in lookup:
                job = f" (job {ids[row]})" if ids is not None else ""
                raise InputError(_source_name(table), f"row {row}{job}: unknown class {key!r}",
                                 field=column, value=str(key),
                                 expected=f"a class of {sens.name} ({', '.join(sens.names)})")
            out[row] = lookup[key]
        return out, f"column {column}"
    if rule == "hash":
        if "job_id" not in table.column_names:
            raise UsageError("the hash rule needs a job_id column")
        ids = job_id_values(table)
        mix = ", ".join(f"{n}={w:.4g}" for n, w in zip(sens.names, sens.mix))
        return (hash_classes(ids, sens.mix),
                f"hash: splitmix64(job_id) into the mix of {sens.name} ({mix})")
    if rule.startswith("single:"):
        cls = sens.index(rule.partition(":")[2])
        return np.full(table.num_rows, cls, dtype=np.int64), f"single: every job {sens.names[cls]}"
    raise UsageError(f"unknown class rule {rule!r} (choose hash or single:<class>)")


# --- the run-time factor --------------------------------------------------------------------


class FactorModel:
    """Run-time factors of one site, sensitivity model and trace GPU model (see the module
    docstring for the formula). Build once per replay; ``factor`` per job start."""

    def __init__(self, site: Site, sens: Sensitivity, trace_gpu_model: str | None = None):
        self.site, self.sens = site, sens
        self.trace_model = short_gpu_model(trace_gpu_model or site.gpu_model)
        needed = dict.fromkeys((self.trace_model, *site.gpu_models))
        for m in needed:
            if m not in sens.gpu_models:
                what = "the trace's GPU model" if m == self.trace_model else "a GPU model of the site"
                raise InputError(sens.path, f"no speed for GPU model {m!r} ({what}, site "
                                 f"{site.name})", field="gpu_models", value=m or "(none)",
                                 expected=f"one of {', '.join(sens.gpu_models)}; the site's "
                                          f"node groups and gpu_model must name models the "
                                          "sensitivity file knows")
        self.models = sens.gpu_models
        self.model_index = {m: i for i, m in enumerate(self.models)}
        n_cls, n_mod = len(sens.classes), len(self.models)
        self.speed = np.array([[c.speed[m] for m in self.models] for c in sens.classes])
        t = self.model_index[self.trace_model]
        # slowest speed of class c over the models in bit set ``mask`` (bit i = model i)
        masks = 1 << n_mod
        self.min_speed = np.full((n_cls, masks), np.nan)
        for mask in range(1, masks):
            idx = [i for i in range(n_mod) if mask >> i & 1]
            self.min_speed[:, mask] = self.speed[:, idx].min(axis=1)
        self.trace_speed = self.speed[:, t].copy()
        self.iter_s = np.array([c.iteration_ms * 1e-3 for c in sens.classes])
        self.grad_bytes = np.array([c.gradient_mb * 1e6 for c in sens.classes])
        links = [site.links.of(k) for k in LINK_KINDS]
        # per level 0..3: lowest bandwidth and highest latency of the levels spanned
        self.bw = np.array([np.inf] + [min(x.bytes_per_s for x in links[:k]) for k in (1, 2, 3)])
        self.lat = np.array([0.0] + [max(x.latency_s for x in links[:k]) for k in (1, 2, 3)])
        self.node_model = np.array([self.model_index[m] for m in site.gpu_model_of_node],
                                   dtype=np.int64)
        self.score = np.array(site.gpu_score, dtype=np.float64)
        # per class [node][gpu] scores (``with_class_scores``); None: every class ``score``
        self.class_score: np.ndarray | None = None
        self.rack = np.array(site.rack_of_node, dtype=np.int64)
        sizes = np.unique(self.rack, return_counts=True)[1] if self.rack.size else np.array([1])
        self.max_rack_nodes = int(sizes.max())
        self.gpus_per_node = site.gpus_per_node
        self._cache: dict[tuple, float] = {}

    def with_class_scores(self, grids: Sequence[Any]) -> "FactorModel":
        """A copy of this model in which a job of class ``c`` runs at the scores ``grids[c]``
        (``[node][gpu]``, one grid per class of the sensitivity model), not the site's. Its
        factors depend on the class's scores, not only on the placements' keyed signatures
        (which hold the site's lowest score); its ``kernel`` reads each class's grid."""
        scores = np.array(grids, dtype=np.float64)
        if scores.shape != (len(self.sens.classes),) + self.score.shape:
            raise ValueError(f"class scores of shape {scores.shape}: expected one "
                             f"{self.score.shape} grid per class")
        out = FactorModel(self.site, self.sens, self.trace_model)
        out.class_score = scores
        return out

    def recorded_level(self, p: int) -> int:
        """Link level of the recorded (packed) placement of a ``p``-GPU job."""
        return recorded_level(self.gpus_per_node, self.max_rack_nodes, p)

    def level(self, nodes: Sequence[int], p: int) -> int:
        """Link level a placement on ``nodes`` with ``p`` GPUs spans (0: one GPU)."""
        return placement_level(self.rack, nodes, p)

    def comm_s(self, cls: int, level: int, p: int) -> float:
        """Ring all-reduce time of one iteration: 2(p-1)/p G / B + 2(p-1) L."""
        return level_allreduce_s(level, p, self.grad_bytes[cls], self.bw[level], self.lat[level])

    def key(self, cls: int, nodes: Sequence[int], gpus: Sequence[Sequence[int]]) -> tuple:
        """The cache key of a placement: (cls, models held, lowest score, level, p)."""
        if len(nodes) != len(gpus):
            raise ValueError("nodes and gpus must have one entry per node")
        p = sum(len(g) for g in gpus)
        if p == 0:
            raise ValueError("a placement holds at least one GPU")
        score = self.score if self.class_score is None else self.class_score[cls]
        g0 = gpus[0]
        if len(nodes) > 4 and g0 and all(gs is g0 for gs in gpus):
            # many nodes with one GPU list (the engine's multi-node jobs): in numpy, same values
            idx = np.asarray(nodes, dtype=np.int64)
            s_min = float(score[idx][:, g0].min())
            mask = 0
            for m in np.unique(self.node_model[idx]).tolist():
                mask |= 1 << m
            level = (1 if len(set(nodes)) == 1
                     else 2 if np.unique(self.rack[idx]).size == 1 else 3)
            return (cls, mask, s_min, level, p)
        mask = 0
        s_min = math.inf
        for n, gs in zip(nodes, gpus):
            mask |= 1 << int(self.node_model[n])
            row = score[n]
            for g in gs:
                if row[g] < s_min:
                    s_min = float(row[g])
        return (cls, mask, s_min, self.level(nodes, p), p)

    def factor_of(self, cls: int, mask: int, s_min: float, level: int, p: int) -> float:
        """The factor from a cache key (``mask``: bit set of the model indices held)."""
        k = (cls, mask, s_min, level, p)
        hit = self._cache.get(k)
        if hit is not None:
            return hit
        r = float(self.trace_speed[cls] / self.min_speed[cls, mask] / s_min)
        rec = self.recorded_level(p)
        if r == 1.0 and level == rec:
            f = 1.0
        else:
            i = float(self.iter_s[cls])
            f = float((i * r + self.comm_s(cls, level, p)) / (i + self.comm_s(cls, rec, p)))
        self._cache[k] = f
        return f

    def factor(self, cls: int, nodes: Sequence[int], gpus: Sequence[Sequence[int]]) -> float:
        """Run-time factor of a job of class ``cls`` on ``gpus[i]`` of ``nodes[i]``."""
        return self.factor_of(*self.key(cls, nodes, gpus))

    def kernel(self, classes: np.ndarray) -> "FactorKernel":
        """This model as a ``replay.factors.FactorKernel`` (the compiled engine's form of the
        factor; ``classes``: the class index of each row, the factor key)."""
        from swftools.replay.factors import FactorKernel
        from swftools.whatif.kernel import pack, sensitivity_factor

        params = pack(self.trace_speed, self.min_speed, self.iter_s, self.grad_bytes, self.bw,
                      self.lat, int(self.gpus_per_node), int(self.max_rack_nodes))
        return FactorKernel(sensitivity_factor, params,
                            np.ascontiguousarray(classes, dtype=np.int64),
                            score_grids=self.class_score)

    def factors(self, cls: np.ndarray, mask: np.ndarray, s_min: np.ndarray, level: np.ndarray,
                p: np.ndarray) -> np.ndarray:
        """Vectorized ``factor_of`` over arrays of keys (no cache; same values)."""
        cls, mask, level = (np.asarray(a, dtype=np.int64) for a in (cls, mask, level))
        s_min = np.asarray(s_min, dtype=np.float64)
        pf = np.asarray(p, dtype=np.float64)
        r = self.trace_speed[cls] / self.min_speed[cls, mask] / s_min
        rec = np.array([self.recorded_level(int(x)) for x in np.unique(p)])
        rec_level = rec[np.searchsorted(np.unique(p), p)]
        def comm(lv: np.ndarray) -> np.ndarray:
            c = ring_allreduce_array_s(pf, self.grad_bytes[cls], self.bw[lv], self.lat[lv])
            return np.where(lv == 0, 0.0, c)
        i = self.iter_s[cls]
        f = (i * r + comm(level)) / (i + comm(rec_level))
        return np.where((r == 1.0) & (level == rec_level), 1.0, f)


_MODELS: list[tuple[Site, Sensitivity, str, FactorModel]] = []


def factor_model(site: Site, sens: Sensitivity, trace_gpu_model: str | None = None) -> FactorModel:
    """The ``FactorModel`` of these inputs (the last few are kept, by identity)."""
    model = short_gpu_model(trace_gpu_model or site.gpu_model)
    for s, z, m, fm in _MODELS:
        if s is site and z is sens and m == model:
            return fm
    fm = FactorModel(site, sens, model)
    _MODELS.insert(0, (site, sens, model, fm))
    del _MODELS[4:]
    return fm


def runtime_factor(site: Site, sens: Sensitivity, cls: int, nodes: list[int],
                   gpus: list[list[int]], trace_gpu_model: str | None = None) -> float:
    """Replayed run time / recorded run time of a job of class ``cls`` placed on ``gpus[i]`` of
    ``nodes[i]`` (the module docstring gives the formula); cached per (class, models held,
    lowest score, link level, GPU count)."""
    return factor_model(site, sens, trace_gpu_model).factor(cls, nodes, gpus)


def placement_level(rack_of_node: Sequence[int], nodes: Sequence[int], p: int) -> int:
    """Index into ``LEVELS`` of the links a ``p``-GPU placement on ``nodes`` spans."""
    if p <= 1:
        return 0
    if len(set(nodes)) == 1:
        return 1
    return 2 if len({int(rack_of_node[n]) for n in nodes}) == 1 else 3


def recorded_level(gpus_per_node: int, max_rack_nodes: int, p: int) -> int:
    """Index into ``LEVELS`` of the recorded placement of a ``p``-GPU job: packed on
    ceil(p / gpus_per_node) nodes, in one rack if they fit in the largest one."""
    if p <= 1:
        return 0
    nodes = -(-p // gpus_per_node)
    return 1 if nodes == 1 else 2 if nodes <= max_rack_nodes else 3


def link_kind(site: Site, nodes: Sequence[int], p: int) -> str:
    """``none`` (one GPU), ``intra_node``, ``inter_node`` or ``inter_rack`` for a placement."""
    return LEVELS[placement_level(site.rack_of_node, nodes, p)]


def recorded_link_kind(site: Site, p: int) -> str:
    """The link level of the recorded placement of a ``p``-GPU job (packed, one rack if it fits)."""
    racks = np.unique(np.array(site.rack_of_node), return_counts=True)[1]
    return LEVELS[recorded_level(site.gpus_per_node, int(racks.max()), p)]
