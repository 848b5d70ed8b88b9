"""Metric maps: exporter metric + labels -> canonical metric, unit scale, node and GPU labels.

A map is a JSON or YAML file validated by ``schemas/metric-map.schema.json``; presets (``dcgm``,
``nvidia_gpu_exporter``, ``node_exporter``, ``ipmi_exporter``) live in ``schemas/metric-maps/``.
The canonical metrics (level, kind, unit) are declared once, in that schema's ``$defs``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from swftools.errors import InputError
from swftools.resources import load_json, schemas_dir

PRESETS = ("dcgm", "nvidia_gpu_exporter", "node_exporter", "ipmi_exporter")


@dataclass(frozen=True)
class CanonicalMetric:
    """One canonical metric: ``level`` gpu|node, ``kind`` gauge|counter, canonical ``unit``."""

    name: str
    level: str
    kind: str
    unit: str
    derives: str | None = None


@lru_cache(maxsize=1)
def canonical_metrics() -> dict[str, CanonicalMetric]:
    """The canonical metrics by name, as declared in ``metric-map.schema.json``."""
    out = {}
    for d in load_json("metric-map.schema.json")["$defs"]["canonical_metric"]["oneOf"]:
        out[d["const"]] = CanonicalMetric(d["const"], d["x-level"], d["x-kind"], d["x-unit"],
                                          d.get("x-derives"))
    return out


@dataclass(frozen=True)
class MapEntry:
    """One source -> canonical rule of a metric map."""

    source: str
    canonical: str
    kind: str
    unit: str
    scale: float
    match: tuple[tuple[str, str], ...] = ()
    combine: str = "first"
    node_label: str = "instance"
    strip_port: bool = False
    gpu_label: str = "gpu"
    origin: str = ""  # map file the entry came from

    @property
    def level(self) -> str:
        return canonical_metrics()[self.canonical].level

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.match)


@dataclass
class MetricMap:
    """A merged set of map entries, looked up by source metric name."""

    entries: list[MapEntry] = field(default_factory=list)
    ignore: set[str] = field(default_factory=set)
    names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_source: dict[str, list[MapEntry]] = {}
        for e in self.entries:
            self._by_source.setdefault(e.source, []).append(e)

    def lookup(self, name: str) -> list[MapEntry] | None:
        """Entries for a sample name; None when unmapped, [] when deliberately ignored.

        A counter's samples may carry the OpenMetrics ``_total`` suffix (prometheus_client adds
        it to every counter sample), so ``X_total`` also finds a counter entry for ``X``.
        """
        found = self._by_source.get(name)
        if found is None and name.endswith("_total"):
            found = [e for e in self._by_source.get(name[:-6], []) if e.kind == "counter"] or None
        if found is not None:
            return found
        if name in self.ignore or (name.endswith("_total") and name[:-6] in self.ignore):
            return []
        return None

    def canonical_names(self) -> set[str]:
        return {e.canonical for e in self.entries}

    def describe(self) -> list[dict[str, Any]]:
        """A JSON-able summary (for package metadata): source, canonical, unit, scale, kind."""
        return [{"source": e.source, "match": dict(e.match), "canonical": e.canonical,
                 "source_unit": e.unit, "scale": e.scale, "type": e.kind, "map": e.origin}
                for e in self.entries]


def _validate(doc: Any, path: str) -> None:
    validator = jsonschema.Draft202012Validator(load_json("metric-map.schema.json"))
    errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return
    err = errors[0]
    where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
    message = err.message
    if err.absolute_path and err.absolute_path[-1] == "canonical":
        message = (f"{err.instance!r} is not a canonical metric "
                   f"(expected one of {', '.join(canonical_metrics())})")
    raise InputError(path, message, field=where)


def _load_document(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(str(path), f"not valid YAML: {getattr(exc, 'problem', exc)}",
                             line=mark.line + 1 if mark else None) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not valid JSON: {exc.msg}", line=exc.lineno) from None


def resolve(name_or_path: str | Path) -> Path:
    """Path of a preset name or a map file."""
    text = str(name_or_path)
    if text in PRESETS:
        return schemas_dir() / "metric-maps" / f"{text}.json"
    path = Path(text)
    if not path.is_file():
        raise InputError(text, f"no such metric-map file or preset (presets: {', '.join(PRESETS)})")
    return path


def entries_from_document(doc: dict[str, Any], origin: str, path: str = "<metric map>"
                          ) -> tuple[list[MapEntry], set[str]]:
    """Entries and ignored names of one validated map document (``path`` for errors)."""
    defaults = {"node_label": doc.get("node_label", "instance"),
                "strip_port": doc.get("strip_port", False),
                "gpu_label": doc.get("gpu_label", "gpu")}
    entries = []
    for i, m in enumerate(doc["metrics"]):
        spec = canonical_metrics()[m["canonical"]]
        if m["type"] != spec.kind:
            raise InputError(path, f"{m['source']} is declared {m['type']} but {spec.name} is a "
                             f"{spec.kind}", field=f"metrics/{i}/type", value=m["type"],
                             expected=spec.kind)
        entries.append(MapEntry(
            source=m["source"], canonical=m["canonical"], kind=m["type"], unit=m["unit"],
            scale=float(m["scale"]), match=tuple(sorted(m.get("match", {}).items())),
            combine=m.get("combine", "first"),
            node_label=m.get("node_label", defaults["node_label"]),
            strip_port=m.get("strip_port", defaults["strip_port"]),
            gpu_label=m.get("gpu_label", defaults["gpu_label"]), origin=origin))
    return entries, set(doc.get("ignore", []))


def load_metric_map(maps: str | Path | Sequence[str | Path] | MetricMap) -> MetricMap:
    """Load and merge metric maps (preset names or JSON/YAML files), validated by the schema."""
    if isinstance(maps, MetricMap):
        return maps
    items: Iterable[str | Path] = [maps] if isinstance(maps, (str, Path)) else maps
    entries: list[MapEntry] = []
    ignore: set[str] = set()
    names = []
    for item in items:
        path = resolve(item)
        doc = _load_document(path)
        _validate(doc, str(path))
        origin = doc.get("name", path.stem)
        new, ign = entries_from_document(doc, origin, str(path))
        entries.extend(new)
        ignore |= ign
        names.append(origin)
    if not entries:
        raise InputError("<metric map>", "no metric map given", expected="a preset or a map file")
    return MetricMap(entries, ignore, names)


def identity_map() -> MetricMap:
    """The map of a canonical long table whose metric names are already canonical."""
    entries = [MapEntry(source=m.name, canonical=m.name, kind=m.kind, unit=m.unit, scale=1.0,
                        origin="canonical") for m in canonical_metrics().values()]
    return MetricMap(entries, set(), ["canonical"])
