"""NQSII job logs (AAIC): the published form and the raw pre-release form.

Modules by role: ``schema`` (the two forms, header aliases, site resolution), ``logfile`` (bytes
to header and cells), ``timefmt`` (time and duration text forms), ``columns`` (cells to typed
columns), ``reader`` and ``writer``.
"""

from swftools.formats.nqsii.reader import FORMS, read
from swftools.formats.nqsii.writer import render, write

__all__ = ["FORMS", "read", "render", "write"]
