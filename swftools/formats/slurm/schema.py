"""The sacct input as ``schemas/formats/slurm-sacct.schema.json`` describes it: the columns
swftools uses, the header mapping, and the state table (state -> termcode, SWF status)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from swftools.errors import InputError, plural
from swftools.resources import load_json

SCHEMA_FILE = "formats/slurm-sacct.schema.json"


@dataclass(frozen=True)
class SacctField:
    """One sacct column swftools reads."""

    name: str
    title: str
    required: bool
    pattern: str | None


@dataclass(frozen=True)
class StateRule:
    """What a sacct state means for the job table."""

    termcode: int | None
    swf_status: int | None
    finished: bool


@lru_cache(maxsize=1)
def descriptor() -> dict[str, Any]:
    """The schema file (cached; read-only)."""
    return load_json(SCHEMA_FILE)


@lru_cache(maxsize=1)
def fields() -> dict[str, SacctField]:
    """Canonical column name -> field, in the schema's order."""
    return {f["name"]: SacctField(f["name"], f["title"], bool(f.get("required")), f.get("pattern"))
            for f in descriptor()["fields"]}


@lru_cache(maxsize=1)
def states() -> dict[str, StateRule]:
    """State text (``COMPLETED``, ``CANCELLED by 0``) -> its rule."""
    return {name: StateRule(s.get("termcode"), s.get("swf_status"), s["finished"])
            for name, s in descriptor()["states"].items()}


def state_rule(name: str, by_uid: int | None) -> StateRule | None:
    """The rule of a parsed state (``CANCELLED`` by root has its own), None if unknown."""
    table = states()
    if by_uid is not None and f"{name} by {by_uid}" in table:
        return table[f"{name} by {by_uid}"]
    return table.get(name)


def write_states() -> dict[int, str]:
    """termcode -> the state the writer puts down."""
    return {int(k): v for k, v in descriptor()["writeStates"].items()}


def known_names() -> dict[str, str]:
    """Lower-case column name or alias -> canonical name, for every column swftools reads."""
    out: dict[str, str] = {}
    for f in descriptor()["fields"]:
        for name in (f["name"], *f.get("aliases", ())):
            out[name.lower()] = f["name"]
    return out


@dataclass(frozen=True)
class Header:
    """Where the read columns are: canonical name -> first position, and the later positions of
    a column given twice (canonical name, position), whose cells must equal the first's."""

    positions: dict[str, int]
    repeats: list[tuple[str, int]]


def map_header(names: list[str], path: str, line: int = 1,
               given: str = "header") -> Header:
    """The read columns of a header (or of the --columns list: ``given``).

    Names and aliases match case-insensitively; other sacct columns are ignored. A missing
    required column is an ``InputError`` on ``line``.
    """
    known = known_names()
    found: dict[str, int] = {}
    repeats: list[tuple[str, int]] = []
    for position, raw in enumerate(names):
        name = known.get(raw.strip().lower())
        if name is None:
            continue
        if name in found:
            repeats.append((name, position))
        else:
            found[name] = position
    missing = [f.name for f in fields().values() if f.required and f.name not in found]
    if missing:
        raise InputError(path, f"missing sacct {plural(len(missing), 'column')} {', '.join(missing)}", line=line,
                         field=given, value="|".join(names),
                         expected=f"sacct columns including {', '.join(missing)} "
                                  f"(see schemas/{SCHEMA_FILE})")
    return Header(found, repeats)
