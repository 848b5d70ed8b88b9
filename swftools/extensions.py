"""Compiled extension modules (Cython, built at install by ``setup.py``) with their pure-Python
references as the fallback: ``load`` imports one, or says once per process on stderr that the
reference runs instead (no C compiler at install, or a source checkout not built)."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

_told: set[str] = set()


def load(name: str, what: str) -> ModuleType | None:
    """The extension module ``name`` (dotted), or None after a one-line notice that ``what``
    runs in pure Python (once per process and module)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if name not in _told:
            _told.add(name)
            print(f"swftools: note: compiled module {name} is not built; {what} runs in pure "
                  "Python (slower). Build it with: pip install . (needs a C compiler)",
                  file=sys.stderr)
        return None
