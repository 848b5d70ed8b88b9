"""The two NQSII input forms, described by ``schemas/nqsii-published.schema.json`` and
``schemas/nqsii-raw.schema.json``: field names, aliases, titles, text formats, writer defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from swftools.errors import InputError, UsageError
from swftools.resources import load_json
from swftools.site import DEFAULT_NQSII_SITE, Site
from swftools.site import resolve_site as _resolve_site

FORMS = ("published", "raw")
DEFAULT_SITE = DEFAULT_NQSII_SITE


@dataclass(frozen=True)
class NqsiiField:
    """One column of an NQSII form, as its schema file declares it."""

    name: str
    title: str
    column: str  # the job-table column it fills
    type: str
    aliases: tuple[str, ...]
    text_formats: tuple[str, ...]
    enum: tuple[int, ...] | None
    description: str


@dataclass(frozen=True)
class FormSchema:
    """An NQSII form: its fields in file order and the writer's separator."""

    form: str
    fields: tuple[NqsiiField, ...]
    separator: str

    @property
    def names(self) -> list[str]:
        """Canonical header names in the form's column order."""
        return [f.name for f in self.fields]

    def field(self, name: str) -> NqsiiField:
        """The field called ``name``."""
        return next(f for f in self.fields if f.name == name)

    def by_column(self, column: str) -> NqsiiField:
        """The field filling job-table column ``column``."""
        return next(f for f in self.fields if f.column == column)


@lru_cache(maxsize=None)
def form_schema(form: str) -> FormSchema:
    """The schema of ``form`` ("published" or "raw"), loaded from ``schemas/``."""
    if form not in FORMS:
        raise UsageError(f"unknown NQSII form {form!r} (choose from {', '.join(FORMS)})")
    descriptor = load_json(f"nqsii-{form}.schema.json")
    fields = tuple(
        NqsiiField(name=f["name"], title=f["title"], column=f["column"], type=f["type"],
                   aliases=tuple(f.get("aliases", ())),
                   text_formats=tuple(f.get("textFormats", ())),
                   enum=tuple(f["constraints"]["enum"]) if "enum" in f.get("constraints", {}) else None,
                   description=f.get("description", ""))
        for f in descriptor["fields"])
    return FormSchema(form, fields, descriptor["separator"])


def resolve_site(site: Site | str | Path | None, table: Any = None) -> Site:
    """The site an NQSII log is read or written with: ``swftools.site.resolve_site`` with the
    NQSII default (the AAIC preset) when neither ``site`` nor the table names one."""
    resolved = _resolve_site(site, table, fmt="nqsii")
    assert resolved is not None  # fmt="nqsii" always falls back to the preset
    return resolved


def normalize_header_name(name: str) -> str:
    """Header names match case-insensitively, with spaces and hyphens read as underscores."""
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def map_header(names: list[str], schema: FormSchema, path: str) -> list[NqsiiField]:
    """The schema field of every header column, in file order; InputError if any is missing,
    unknown or repeated."""
    lookup: dict[str, NqsiiField] = {}
    for f in schema.fields:
        for alias in (f.name, *f.aliases):
            lookup[normalize_header_name(alias)] = f
    expected = (f"the {len(schema.fields)} columns {', '.join(schema.names)}, or their aliases "
                f"(see schemas/nqsii-{schema.form}.schema.json)")
    if names and all(re.fullmatch(r"\s*[0-9]+\s*", n) for n in names):
        raise InputError(path, "no header row: line 1 holds numbers", line=1, field="header",
                         expected=f"a header naming {expected}")
    found: list[NqsiiField] = []
    first_name: dict[str, str] = {}
    for name in names:
        f = lookup.get(normalize_header_name(name))
        if f is None:
            raise InputError(path, f"unknown column {name!r}", line=1, field="header",
                             value=name, expected=expected)
        if f.name in first_name:
            raise InputError(path, f"column {name!r} repeats column {first_name[f.name]!r} "
                             f"({f.title})", line=1, field="header", value=name)
        first_name[f.name] = name
        found.append(f)
    for f in schema.fields:
        if f.name not in first_name:
            raise InputError(path, f"missing column {f.name!r} ({f.title})", line=1,
                             field="header", expected=expected)
    return found


def form_defaults(schema: FormSchema) -> dict[str, Any]:
    """The text layout the writer uses when a table carries none for this form."""
    formats = {}
    for f in schema.fields:
        if f.text_formats:
            kind = f.text_formats[0]
            formats[f.name] = {"format": kind, **({"hour_width": 2} if kind == "hms" else {}),
                               **({"separator": "T", "offset": None} if kind == "iso" else {})}
    return {"form": schema.form, "header": schema.names, "fields": schema.names,
            "separator": schema.separator, "line_ending": "\n", "final_newline": True,
            "bom": False, "gpus_column": "per_node", "formats": formats, "queue_spelling": {}}
