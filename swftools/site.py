"""Site settings: resource model, capacity timeline, queues, time zone (``schemas/site.schema.json``).

The resource model may be heterogeneous (issue 14): ``node_groups`` give each node a GPU model
(nodes numbered 0.. in group order), ``racks`` a rack (switch) per node, ``links`` the
interconnect of each locality level and ``gpu_scores`` a per-GPU performance score file. Without
them a site is homogeneous: every node has the site's ``gpu_model``, all nodes share rack 0, every
GPU scores 1.0 and the links take the documented defaults (``DEFAULT_LINKS``).

The score file is read here, with ``csv`` (the core imports no subpackage, so not through
``swftools.formats.inputs``): it is part of the site settings, and a loaded ``Site`` is complete
and checked (one error, naming file, line, field, value and expectation, at load time, before any
replay starts). ``swftools.whatif.profile`` reads and writes profiles with the same reader.
"""

from __future__ import annotations

import bisect
import csv
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import datetime
from pathlib import Path
from typing import Any

from swftools.errors import InputError
from swftools.resources import load_json, schemas_dir


@dataclass(frozen=True)
class Queue:
    """One queue and its per-job limits."""

    name: str
    number: int
    nodes_min: int
    nodes_max: int
    gpus_per_node_min: int
    gpus_per_node_max: int
    walltime_default_s: int
    walltime_max_s: int


@dataclass(frozen=True)
class NodeGroup:
    """Consecutive nodes of one GPU model."""

    name: str
    nodes: int
    gpu_model: str  # short name, e.g. "V100"
    gpus_per_node: int


@dataclass(frozen=True)
class Link:
    """One interconnect level: bandwidth in gigabytes (10^9 bytes) per second, latency in us."""

    bandwidth_gbytes_per_s: float
    latency_us: float

    @property
    def bytes_per_s(self) -> float:
        return self.bandwidth_gbytes_per_s * 1e9

    @property
    def latency_s(self) -> float:
        return self.latency_us * 1e-6


@dataclass(frozen=True)
class Links:
    """The interconnect per locality level (see ``DEFAULT_LINKS`` for the assumed defaults)."""

    intra_node: Link
    inter_node: Link
    inter_rack: Link

    def of(self, kind: str) -> Link:
        """The link of ``kind``: ``intra_node``, ``inter_node`` or ``inter_rack``."""
        return getattr(self, kind)


LINK_KINDS = ("intra_node", "inter_node", "inter_rack")

# Assumptions, used when a site file gives no ``links``: NVLink-class intra-node bandwidth
# (P100/V100 SXM2 boards: 80 GB/s and more between GPU pairs), 100 Gb/s InfiniBand EDR between the
# nodes of a rack (12.5 GB/s), a 2:1 oversubscribed uplink between racks (6.25 GB/s); latencies
# 2 us (intra node), 5 us (one switch hop with the MPI/NCCL stack), 10 us (across racks).
DEFAULT_LINKS = Links(intra_node=Link(80.0, 2.0), inter_node=Link(12.5, 5.0),
                      inter_rack=Link(6.25, 10.0))


@dataclass(frozen=True)
class Site:
    """A cluster's resource model and conventions."""

    name: str
    time_zone: str
    gpus_per_node: int
    capacity_since: tuple[int, ...]  # UTC epoch seconds, ascending
    capacity_nodes: tuple[int, ...]
    queues: tuple[Queue, ...]
    title: str = ""
    multi_node_whole_nodes: bool = True
    termcode_to_swf_status: dict[int, int] = field(default_factory=dict)
    walltime_grace_s: int = 300
    settings: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # Heterogeneous resource model (issue 14); empty tuples are filled in by __post_init__ with
    # the homogeneous model (every node gpu_model, rack 0, every GPU score 1.0).
    gpu_model: str = ""  # short name of the GPU model the trace ran on, e.g. "P100"
    gpu_model_text: str = ""  # the site file's gpu_model as written, e.g. "NVIDIA Tesla P100"
    node_groups: tuple[NodeGroup, ...] = ()
    gpu_model_of_node: tuple[str, ...] = ()  # [node]
    rack_of_node: tuple[int, ...] = ()  # [node]
    gpu_score: tuple[tuple[float, ...], ...] = ()  # [node][gpu], 1.0 = nominal
    links: Links = DEFAULT_LINKS
    gpu_scores_file: str | None = None  # the score file read, as resolved
    # [node][gpu] performance class (0 fastest) from the score file's ``class`` column; None when
    # the file has none (``swftools.whatif.profile.site_profile`` then clusters the scores)
    gpu_class: tuple[tuple[int, ...], ...] | None = None
    # per application class (its name), [node][gpu] scores from the file's ``score:<class>``
    # columns (PAL's per-class variability); empty when the file has one score per GPU
    gpu_app_score: tuple[tuple[str, tuple[tuple[float, ...], ...]], ...] = ()

    def __post_init__(self) -> None:
        n = max(self.capacity_nodes) if self.capacity_nodes else 0
        if not self.node_groups and n:
            object.__setattr__(self, "node_groups", (
                NodeGroup(self.gpu_model.lower() or "all", n, self.gpu_model, self.gpus_per_node),))
        if not self.gpu_model_of_node:
            object.__setattr__(self, "gpu_model_of_node", tuple(
                g.gpu_model for g in self.node_groups for _ in range(g.nodes)))
        if not self.rack_of_node:
            object.__setattr__(self, "rack_of_node", (0,) * n)
        if not self.gpu_score:
            object.__setattr__(self, "gpu_score", ((1.0,) * self.gpus_per_node,) * n)

    @property
    def gpu_models(self) -> tuple[str, ...]:
        """The GPU models of the nodes, in node order of first appearance."""
        return tuple(dict.fromkeys(self.gpu_model_of_node))

    @property
    def is_homogeneous(self) -> bool:
        """One GPU model, every score 1.0."""
        return (len(set(self.gpu_model_of_node)) <= 1
                and all(s == 1.0 for row in self.gpu_score for s in row))

    @property
    def max_nodes(self) -> int:
        """Largest node count the site ever managed."""
        return max(self.capacity_nodes)

    @property
    def max_gpus(self) -> int:
        """Largest GPU count the site ever managed."""
        return self.max_nodes * self.gpus_per_node

    def nodes_at(self, epoch_s: int) -> int:
        """Managed node count in force at ``epoch_s`` (the first entry also covers earlier times)."""
        i = bisect.bisect_right(self.capacity_since, epoch_s) - 1
        return self.capacity_nodes[max(i, 0)]

    def queue(self, name: str) -> Queue | None:
        """The queue named ``name`` (case-insensitive), or None."""
        for q in self.queues:
            if q.name.lower() == name.lower():
                return q
        return None

    def queue_by_number(self, number: int) -> Queue | None:
        """The queue with SWF number ``number``, or None."""
        for q in self.queues:
            if q.number == number:
                return q
        return None


PRESETS = ("aaic", "aaic-v100-half", "abci")


def _parse_instant(text: str, path: str) -> int:
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(path, f"capacity_timeline: {text!r} is not an ISO 8601 instant",
                         expected="e.g. 2017-07-01T00:00:00+09:00") from None
    if dt.tzinfo is None:
        raise InputError(path, f"capacity_timeline: {text!r} has no UTC offset",
                         expected="an offset such as +09:00")
    return int(dt.timestamp())


def load_site(name_or_path: str | Path) -> Site:
    """Load a site preset by name (``aaic``) or a site settings JSON file, validated by its
    schema (a preset by the test suite, ``tests/test_site.py``, not at every load: jsonschema
    costs ~0.1 s a process)."""
    text = str(name_or_path)
    is_preset = text in PRESETS
    path = schemas_dir() / "sites" / f"{text}.json" if is_preset else Path(text)
    if not path.is_file():
        raise InputError(str(path), f"no such site file or preset (presets: {', '.join(PRESETS)})")
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    return site_from_settings(settings, str(path), validate=not is_preset)


def site_from_settings(settings: dict[str, Any], path: str = "<site>", *,
                       validate: bool = True) -> Site:
    """Build a Site from a settings dict (as found in a site file), validated by
    ``schemas/site.schema.json`` unless ``validate`` is false (a preset's settings)."""
    if validate:
        _check_schema(settings, path)
    timeline = sorted(
        (_parse_instant(e["since"], path), e["nodes"]) for e in settings["capacity_timeline"]
    )
    queues = tuple(
        Queue(**{k: q[k] for k in Queue.__dataclass_fields__}) for q in settings["queues"]
    )
    n_nodes = max(n for _, n in timeline)
    gpn = settings["gpus_per_node"]
    model_text = settings.get("gpu_model", "")
    model = short_gpu_model(model_text)
    groups = _node_groups(settings, path, n_nodes, gpn, model)
    of_node = tuple(g.gpu_model for g in groups for _ in range(g.nodes))
    racks = _racks(settings.get("racks"), path, n_nodes)
    links = _links(settings.get("links", {}))
    scores_file = None
    scores: tuple[tuple[float, ...], ...] = ()
    classes: tuple[tuple[int, ...], ...] | None = None
    app_scores: tuple = ()
    if "gpu_scores" in settings:
        base = Path(path).parent if path != "<site>" else Path(".")
        scores_file = str(base / settings["gpu_scores"])
        read = read_score_csv(scores_file, n_nodes, gpn, of_node)
        scores, classes, app_scores = read.scores, read.classes, read.app_scores
    return Site(
        name=settings["name"],
        title=settings.get("title", settings["name"]),
        time_zone=settings["time_zone"],
        gpus_per_node=settings["gpus_per_node"],
        capacity_since=tuple(t for t, _ in timeline),
        capacity_nodes=tuple(n for _, n in timeline),
        queues=queues,
        multi_node_whole_nodes=settings.get("multi_node_whole_nodes", True),
        termcode_to_swf_status={int(k): v for k, v in settings.get("termcode_to_swf_status", {}).items()},
        walltime_grace_s=settings.get("walltime_grace_s", 300),
        settings=settings,
        gpu_model=model,
        gpu_model_text=model_text,
        node_groups=groups,
        gpu_model_of_node=of_node,
        rack_of_node=racks,
        gpu_score=scores,
        links=links,
        gpu_scores_file=scores_file,
        gpu_class=classes,
        gpu_app_score=app_scores,
    )


def _check_schema(settings: dict[str, Any], path: str) -> None:
    """InputError naming the first schema error (by path) of site settings."""
    import jsonschema  # on first use: keeps CLI start-up light

    validator = jsonschema.Draft202012Validator(load_json("site.schema.json"))
    errors = sorted(validator.iter_errors(settings), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise InputError(path, f"{where}: {err.message}", field=None)


_MODEL_RE = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{1,3}[0-9]{1,4}[A-Za-z]?)(?![A-Za-z0-9])")
_VENDOR_WORDS = {"NVIDIA", "TESLA", "AMD", "INSTINCT", "GEFORCE", "QUADRO", "RADEON", "INTEL"}


def short_gpu_model(text: str) -> str:
    """The short name of a GPU model: ``NVIDIA Tesla P100`` -> ``P100``, ``v100-sxm2`` -> ``V100``.

    The first word of letters then digits (``P100``, ``V100``, ``A100``, ``K80``, ``MI250X``)
    after dropping vendor words, upper-cased; else the text stripped (``""`` stays ``""``).
    """
    words = [w for w in re.split(r"[\s_]+", text.strip()) if w.upper() not in _VENDOR_WORDS]
    for word in words:
        m = _MODEL_RE.search(word)
        if m:
            return m.group(1).upper()
    return " ".join(words) or text.strip()


def _node_groups(settings: dict[str, Any], path: str, n_nodes: int, gpn: int,
                 model: str) -> tuple[NodeGroup, ...]:
    raw = settings.get("node_groups")
    if raw is None:
        return (NodeGroup(model.lower() or "all", n_nodes, model, gpn),)
    groups = []
    names: set[str] = set()
    for i, g in enumerate(raw):
        if g["gpus_per_node"] != gpn:
            raise InputError(path, "groups with another GPU count per node are not supported in "
                             "this version", field=f"node_groups/{i}/gpus_per_node",
                             value=str(g["gpus_per_node"]),
                             expected=f"{gpn}, the site's gpus_per_node")
        if g["name"] in names:
            raise InputError(path, f"duplicate group name {g['name']!r}",
                             field=f"node_groups/{i}/name", value=g["name"],
                             expected="a name not used by another group")
        names.add(g["name"])
        short = short_gpu_model(g["gpu_model"])
        if not short:
            raise InputError(path, "empty GPU model", field=f"node_groups/{i}/gpu_model",
                             value=g["gpu_model"], expected="a model such as P100 or V100")
        groups.append(NodeGroup(g["name"], g["nodes"], short, gpn))
    total = sum(g.nodes for g in groups)
    if total != n_nodes:
        raise InputError(path, f"the node groups hold {total} nodes, the capacity timeline "
                         f"{n_nodes}", field="node_groups", value=str(total),
                         expected=f"node counts adding up to {n_nodes}, the largest node count "
                                  "of capacity_timeline")
    return tuple(groups)


def _racks(raw: Any, path: str, n_nodes: int) -> tuple[int, ...]:
    if raw is None:
        return (0,) * n_nodes
    if isinstance(raw, dict):
        per = raw["nodes_per_rack"]
        return tuple(i // per for i in range(n_nodes))
    if len(raw) > n_nodes:
        raise InputError(path, f"rack id {raw[n_nodes]} for node {n_nodes}, which does not exist",
                         field=f"racks/{n_nodes}", value=str(raw[n_nodes]),
                         expected=f"one rack id per node, {n_nodes} entries (nodes 0..{n_nodes - 1})")
    if len(raw) < n_nodes:
        raise InputError(path, f"no rack id for node {len(raw)}", field="racks",
                         value=f"{len(raw)} entries",
                         expected=f"one rack id per node, {n_nodes} entries (nodes 0..{n_nodes - 1})")
    return tuple(int(r) for r in raw)


def _links(raw: dict[str, Any]) -> Links:
    def one(kind: str) -> Link:
        if kind not in raw:
            return DEFAULT_LINKS.of(kind)
        return Link(float(raw[kind]["bandwidth_gbytes_per_s"]), float(raw[kind]["latency_us"]))
    return Links(*(one(k) for k in LINK_KINDS))


@dataclass(frozen=True)
class ScoreFile:
    """A per-GPU score file as read: ``scores[node][gpu]`` and, when present, ``classes``."""

    path: str
    scores: tuple[tuple[float, ...], ...]
    classes: tuple[tuple[int, ...], ...] | None = None
    lines: tuple[tuple[int, ...], ...] = ()  # [node][gpu]: the file line of each GPU's row
    # per application class: (its name, scores[node][gpu]) from the ``score:<class>`` columns
    app_scores: tuple[tuple[str, tuple[tuple[float, ...], ...]], ...] = ()


_INT = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
SCORE_COLUMNS = ("node", "gpu_index", "score")
APP_SCORE_PREFIX = "score:"  # per application class score columns, e.g. score:IC
SCORE_EXPECTED = "a positive decimal number, 1.0 = nominal"


def is_score(value: float) -> bool:
    """The one rule of a GPU score (score file, what-if scores, placement inputs): positive
    and finite (PAL ranks GPUs by ``1 / score``)."""
    return value > 0 and math.isfinite(value)


def bad_score_message(grid, what: str) -> str | None:
    """The message for the first entry of ``grid[node][gpu]`` that is not a score
    (``what``: the grid's name), or None when all are."""
    for node, row in enumerate(grid):
        for gpu, value in enumerate(row):
            if not is_score(value):
                return (f"{what}: node {node}, GPU {gpu}: {value!r} is not a positive score "
                        f"(expected {SCORE_EXPECTED})")
    return None


def read_score_csv(path: str | Path, nodes: int, gpus_per_node: int,
                   gpu_model_of_node: tuple[str, ...] | None = None) -> ScoreFile:
    """Read a per-GPU score CSV (``node,gpu_index,score``, optional ``class``, ``gpu_model`` and
    per application class ``score:<class>``, e.g. ``score:IC``: the GPU's score for jobs of that
    class, checked as ``score`` is).

    Exactly one row per GPU of ``nodes x gpus_per_node``; scores are positive finite decimals
    (1.0 = nominal). Any defect is an ``InputError`` naming file, line, field, value and what was
    expected: a missing GPU, a non-numeric or non-positive score, a node or GPU index that does
    not exist, a duplicate row, a class that is not a non-negative integer, classes that are not
    numbered 0..k-1 or not ordered by score (``check_score_classes``), a GPU model that is not
    the model the node groups give that node.
    """
    name = str(path)
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh))
    except FileNotFoundError:
        raise InputError(name, "no such GPU score file",
                         expected="a CSV file node,gpu_index,score (gpu_scores, relative to the "
                                  "site file)") from None
    except UnicodeDecodeError as exc:
        raise InputError(name, f"not UTF-8 text ({exc.reason})") from None
    if not rows or not any(c.strip() for c in rows[0]):
        raise InputError(name, "empty file: no header", line=1,
                         expected="the header node,gpu_index,score")
    header = [c.strip() for c in rows[0]]
    missing = [c for c in SCORE_COLUMNS if c not in header]
    if missing:
        raise InputError(name, f"no column {missing[0]!r} in the header", line=1,
                         field=missing[0], value=",".join(header),
                         expected="the columns node,gpu_index,score (class, gpu_model optional)")
    col = {c: header.index(c) for c in header}
    for i, c in enumerate(header):
        if header.index(c) != i:
            raise InputError(name, f"column {c!r} appears twice in the header", line=1, field=c,
                             value=",".join(header), expected="each column once")
    app_cols = [c for c in header if c.startswith(APP_SCORE_PREFIX)]
    for c in app_cols:
        if not c[len(APP_SCORE_PREFIX):].strip():
            raise InputError(name, f"column {c!r} names no application class", line=1, field=c,
                             value=",".join(header),
                             expected="score:<class>, e.g. score:IC (a class of the sensitivity "
                                      "model)")
    app = {c: [[math.nan] * gpus_per_node for _ in range(nodes)] for c in app_cols}
    has_class = "class" in col
    has_model = "gpu_model" in col
    scores = [[math.nan] * gpus_per_node for _ in range(nodes)]
    classes = [[-1] * gpus_per_node for _ in range(nodes)]
    seen: dict[tuple[int, int], int] = {}
    last_line = 1
    for line, row in enumerate(rows[1:], start=2):
        if not row or not any(c.strip() for c in row):
            continue
        last_line = line
        if len(row) != len(header):
            raise InputError(name, f"{len(row)} fields, the header has {len(header)}", line=line,
                             value=",".join(row), expected=f"{len(header)} comma-separated fields")

        def index(field_name: str, limit: int, what: str) -> int:
            text = row[col[field_name]].strip()
            if not _INT.fullmatch(text):
                raise InputError(name, f"{text!r} is not a {what} index", line=line,
                                 field=field_name, value=text,
                                 expected=f"an integer 0..{limit - 1}")
            v = int(text)
            if v >= limit:
                raise InputError(name, f"{what} {v} does not exist", line=line, field=field_name,
                                 value=text, expected=f"an integer 0..{limit - 1}")
            return v

        def positive(field_name: str) -> float:
            text = row[col[field_name]].strip()
            if not _NUMBER.fullmatch(text):
                raise InputError(name, f"{text!r} is not a number", line=line, field=field_name,
                                 value=text, expected=SCORE_EXPECTED)
            value = float(text)
            if not is_score(value):
                raise InputError(name, f"{text!r} is not a positive score", line=line,
                                 field=field_name, value=text, expected=SCORE_EXPECTED)
            return value

        node = index("node", nodes, "node")
        gpu = index("gpu_index", gpus_per_node, "GPU")
        score = positive("score")
        for c in app_cols:
            app[c][node][gpu] = positive(c)
        if (node, gpu) in seen:
            raise InputError(name, f"duplicate row for node {node}, GPU {gpu} (first on line "
                             f"{seen[node, gpu]})", line=line, field="gpu_index", value=str(gpu),
                             expected="one row per GPU")
        seen[node, gpu] = line
        if has_class:
            ctext = row[col["class"]].strip()
            if not _INT.fullmatch(ctext):
                raise InputError(name, f"{ctext!r} is not a class number", line=line,
                                 field="class", value=ctext, expected="an integer >= 0, 0 = fastest")
            classes[node][gpu] = int(ctext)
        if has_model and gpu_model_of_node is not None:
            mtext = row[col["gpu_model"]].strip()
            if short_gpu_model(mtext) != gpu_model_of_node[node]:
                known = ", ".join(dict.fromkeys(gpu_model_of_node))
                raise InputError(name, f"unknown GPU model {mtext!r} for node {node}", line=line,
                                 field="gpu_model", value=mtext,
                                 expected=f"{gpu_model_of_node[node]}, the model the site's node "
                                          f"groups give node {node} (models: {known})")
        scores[node][gpu] = score
    for node in range(nodes):
        for gpu in range(gpus_per_node):
            if (node, gpu) not in seen:
                raise InputError(name, f"no score for node {node}, GPU {gpu} (the file ends "
                                 f"on line {last_line})", line=last_line, field="score",
                                 value=f"node {node}, gpu_index {gpu}",
                                 expected=f"one row per GPU: nodes 0..{nodes - 1} x gpu_index "
                                          f"0..{gpus_per_node - 1}")
    lines = tuple(tuple(seen[n, g] for g in range(gpus_per_node)) for n in range(nodes))
    if has_class:
        check_score_classes(name, scores, classes, lines)
    return ScoreFile(name, tuple(tuple(r) for r in scores),
                     tuple(tuple(r) for r in classes) if has_class else None, lines,
                     tuple((c[len(APP_SCORE_PREFIX):].strip(), tuple(tuple(r) for r in app[c]))
                           for c in app_cols))


def check_score_classes(path: str, scores: Any, classes: Any, lines: Any) -> None:
    """Performance classes ``classes[node][gpu]`` numbered 0..k-1 without gaps, class 0 the
    fastest: every score of class c is >= every score of class c + 1 (what the placement
    policies rely on). InputError naming the file, the GPU's line, the class and the rule."""
    flat = [(float(s), int(c), int(ln)) for rs, rc, rl in zip(scores, classes, lines)
            for s, c, ln in zip(rs, rc, rl)]
    used = sorted({c for _, c, _ in flat})
    if used and used != list(range(len(used))):
        gap = min(set(range(used[-1] + 1)) - set(used))
        raise InputError(path, f"class {gap} has no GPU", field="class", value=str(gap),
                         expected=f"classes numbered 0..{used[-1]} without gaps")
    gpus = len(scores[0]) if len(scores) else 1
    slowest = {c: min(s for s, k, _ in flat if k == c) for c in used}
    for i, (s, c, line) in enumerate(flat):
        if c > 0 and s > slowest[c - 1]:
            node, gpu = divmod(i, gpus)
            raise InputError(path, f"node {node}, GPU {gpu} scores {s} in class {c}, above the "
                             f"slowest GPU of class {c - 1} ({slowest[c - 1]})", line=line,
                             field="class", value=str(c),
                             expected="classes ordered by score, class 0 = fastest")


DEFAULT_NQSII_SITE = "aaic"  # the NQSII reader's site when neither --site nor the trace names one


@lru_cache(maxsize=None)
def preset(name: str) -> Site:
    """The site preset ``name`` (loaded once and shared; see ``PRESETS``)."""
    return load_site(name)


def resolve_site(site: Site | str | Path | None, table: Any = None, *,
                 fmt: str | None = None) -> Site | None:
    """The one rule for which site a command or format uses.

    An explicit ``site`` (a Site, a preset name or a site settings file) wins; else the preset
    named in the trace's metadata (``table``: a job table or its metadata dict), or the inline
    ``site_settings`` it carries (a site that is no preset, e.g. an Alibaba node list's); else the
    AAIC preset when the input is an NQSII log (``fmt="nqsii"``, its reader's default); else None.
    """
    if isinstance(site, Site):
        return site
    if site is not None:
        return preset(str(site)) if str(site) in PRESETS else load_site(site)
    if table is not None:
        if isinstance(table, dict):
            meta = table
        else:
            from swftools.table import get_metadata

            meta = get_metadata(table)
        name = meta.get("site")
        if name in PRESETS:
            return preset(name)
        inline = meta.get("site_settings")
        if isinstance(inline, dict):
            return site_from_settings(inline, "table metadata site_settings")
    if fmt == "nqsii":
        return preset(DEFAULT_NQSII_SITE)
    return None
