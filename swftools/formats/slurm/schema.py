"""The sacct input as ``schemas/formats/slurm-sacct.schema.json`` describes it: the columns
swftools uses, the header mapping, and the state table (state -> termcode, SWF status)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from swftools.errors import InputError
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


def map_header(names: list[str], path: str) -> dict[str, int]:
    """Canonical column name -> position in the file, for the columns swftools reads.

    Names match case-insensitively; other sacct columns are ignored. A missing required column
    or a repeated one is an ``InputError`` on line 1.
    """
    known = {name.lower(): name for name in fields()}
    found: dict[str, int] = {}
    for position, raw in enumerate(names):
        name = known.get(raw.strip().lower())
        if name is None:
            continue
        if name in found:
            raise InputError(path, f"column {raw!r} appears twice", line=1, field="header",
                             value=raw, expected="each sacct column once")
        found[name] = position
    missing = [f.name for f in fields().values() if f.required and f.name not in found]
    if missing:
        raise InputError(path, f"missing sacct column(s) {', '.join(missing)}", line=1,
                         field="header", value="|".join(names),
                         expected=f"a sacct --parsable2 header with {', '.join(missing)} "
                                  f"(see schemas/{SCHEMA_FILE})")
    return found
