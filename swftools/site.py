"""Site settings: resource model, capacity timeline, queues, time zone (``schemas/site.schema.json``)."""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema

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


PRESETS = ("aaic",)


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
    """Load a site preset by name (``aaic``) or a site settings JSON file, validated by its schema."""
    text = str(name_or_path)
    path = schemas_dir() / "sites" / f"{text}.json" if text in PRESETS else Path(text)
    if not path.is_file():
        raise InputError(str(path), f"no such site file or preset (presets: {', '.join(PRESETS)})")
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    return site_from_settings(settings, str(path))


def site_from_settings(settings: dict[str, Any], path: str = "<site>") -> Site:
    """Build a Site from a settings dict (as found in a site file)."""
    validator = jsonschema.Draft202012Validator(load_json("site.schema.json"))
    errors = sorted(validator.iter_errors(settings), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise InputError(path, f"{where}: {err.message}", field=None)
    timeline = sorted(
        (_parse_instant(e["since"], path), e["nodes"]) for e in settings["capacity_timeline"]
    )
    queues = tuple(
        Queue(**{k: q[k] for k in Queue.__dataclass_fields__}) for q in settings["queues"]
    )
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
    )


DEFAULT_NQSII_SITE = "aaic"  # the NQSII reader's site when neither --site nor the trace names one


@lru_cache(maxsize=None)
def preset(name: str) -> Site:
    """The site preset ``name`` (loaded once and shared; see ``PRESETS``)."""
    return load_site(name)


def resolve_site(site: Site | str | Path | None, table: Any = None, *,
                 fmt: str | None = None) -> Site | None:
    """The one rule for which site a command or format uses.

    An explicit ``site`` (a Site, a preset name or a site settings file) wins; else the preset
    named in the trace's metadata (``table``: a job table or its metadata dict); else the AAIC
    preset when the input is an NQSII log (``fmt="nqsii"``, its reader's default); else None.
    """
    if isinstance(site, Site):
        return site
    if site is not None:
        return preset(str(site)) if str(site) in PRESETS else load_site(site)
    if table is not None:
        if isinstance(table, dict):
            name = table.get("site")
        else:
            from swftools.table import get_metadata

            name = get_metadata(table).get("site")
        if name in PRESETS:
            return preset(name)
    if fmt == "nqsii":
        return preset(DEFAULT_NQSII_SITE)
    return None
