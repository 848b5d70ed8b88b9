"""Trace formats, one subpackage each (``swf``, ``nqsii``, ``datapackage``), and their registry.

The registry picks a reader/writer from a path or a ``--from/--to`` name, and ``convert`` goes
through the canonical job table. Each format subpackage exposes ``read(path, **opts) -> Table``
and ``write(table, path, *, force=False, **opts) -> list[str]`` (the loss report).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from swftools.errors import UsageError

FORMATS = ("swf", "nqsii", "package")
_MODULES = {"swf": "swftools.formats.swf", "nqsii": "swftools.formats.nqsii",
            "package": "swftools.formats.datapackage"}


def detect_format(path: str | Path) -> str:
    """Guess a format from a path: ``*.swf[.gz]``, ``datapackage.json`` or a directory, else NQSII."""
    p = Path(path)
    name = p.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name == "datapackage.json" or p.is_dir() or (not p.suffix and not p.exists()):
        return "package"
    if name.endswith(".swf"):
        return "swf"
    if name.endswith((".csv", ".log", ".txt", ".nqsii")):
        return "nqsii"
    raise UsageError(f"{path}: cannot tell the format from the name; use --from/--to "
                     f"({', '.join(FORMATS)})")


def module_for(fmt: str) -> Any:
    """The module implementing format ``fmt`` (exposes ``read`` and ``write``)."""
    if fmt not in _MODULES:
        raise UsageError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    return importlib.import_module(_MODULES[fmt])


def read(path: str | Path, fmt: str | None = None, **options: Any) -> pa.Table:
    """Read any supported trace into the canonical job table."""
    return module_for(fmt or detect_format(path)).read(path, **options)


def write(table: pa.Table, path: str | Path, fmt: str | None = None, **options: Any) -> list[str]:
    """Write the job table in a format; returns the loss report (what the format cannot carry)."""
    return module_for(fmt or detect_format(path)).write(table, path, **options) or []


@dataclass
class ConversionResult:
    """What ``convert`` did: the table it went through and what the output could not carry."""

    table: pa.Table
    source_format: str
    target_format: str
    losses: list[str] = field(default_factory=list)


def convert(src: str | Path, dst: str | Path, *, from_format: str | None = None,
            to_format: str | None = None, site: Any = None, force: bool = False,
            progress: bool = False, allow_empty: bool = False) -> ConversionResult:
    """Convert a trace between formats through the canonical job table; a trace without jobs
    is an error unless ``allow_empty``."""
    src_fmt = from_format or detect_format(src)
    dst_fmt = to_format or detect_format(dst)
    table = read(src, src_fmt, site=site, progress=progress, allow_empty=allow_empty)
    losses = write(table, dst, dst_fmt, site=site, force=force)
    return ConversionResult(table, src_fmt, dst_fmt, losses)
