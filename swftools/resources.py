"""Locate the files in ``schemas/`` both in a source checkout and in an installed wheel."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

_PACKAGE_DIR = Path(__file__).resolve().parent


def schemas_dir() -> Path:
    """The directory holding every schema and site preset."""
    for candidate in (_PACKAGE_DIR.parent / "schemas", _PACKAGE_DIR / "_schemas"):
        if (candidate / "jobs.schema.json").is_file():
            return candidate
    raise FileNotFoundError("swftools: cannot find the schemas/ directory")


@lru_cache(maxsize=None)
def load_json(name: str) -> Any:
    """Load a JSON file from ``schemas/`` by relative name (cached; treat as read-only)."""
    with open(schemas_dir() / name, encoding="utf-8") as fh:
        return json.load(fh)
