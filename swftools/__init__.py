"""swftools: turn GPU-cluster batch-scheduler logs into open, validated workload archives."""

from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("swftools")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.1.0"

from swftools.errors import InputError, UsageError  # noqa: E402
from swftools.formats import convert, read, write  # noqa: E402

__all__ = ["InputError", "UsageError", "__version__", "convert", "read", "write"]

# Subpackages loaded on first use, under their short public names (``from swftools import swf``).
_SUBMODULES = {
    "formats": "swftools.formats", "swf": "swftools.formats.swf", "nqsii": "swftools.formats.nqsii",
    "datapackage": "swftools.formats.datapackage", "privacy": "swftools.privacy",
    "anonymize": "swftools.privacy.pseudonyms", "audit": "swftools.privacy.audit",
    "synth": "swftools.synth", "release": "swftools.release", "replay": "swftools.replay",
    "report": "swftools.report", "telemetry": "swftools.telemetry", "validate": "swftools.validate",
}


def __getattr__(name: str):
    """Lazy access to subpackages: ``swftools.validate(...)``, ``swftools.replay(...)``."""
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(_SUBMODULES[name])
    raise AttributeError(f"module 'swftools' has no attribute {name!r}")
