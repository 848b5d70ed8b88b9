"""swftools: turn GPU-cluster batch-scheduler logs into open, validated workload archives."""

from swftools.errors import InputError, UsageError

__all__ = ["InputError", "UsageError", "__version__", "convert", "read", "write"]

# Subpackages loaded on first use, under their short public names (``from swftools import swf``).
_SUBMODULES = {
    "formats": "swftools.formats", "swf": "swftools.formats.swf", "nqsii": "swftools.formats.nqsii",
    "datapackage": "swftools.formats.datapackage", "privacy": "swftools.privacy",
    "anonymize": "swftools.privacy.pseudonyms", "audit": "swftools.privacy.audit",
    "synth": "swftools.synth", "release": "swftools.release", "replay": "swftools.replay",
    "report": "swftools.report", "telemetry": "swftools.telemetry", "validate": "swftools.validate",
}

# Functions of the format registry, also loaded on first use: ``import swftools`` stays light
# (no pyarrow) so that ``swftools --help`` starts fast.
_FUNCTIONS = {"convert": "swftools.formats", "read": "swftools.formats", "write": "swftools.formats"}


def _package_version() -> str:
    """The installed distribution's version: written into ``_version.py`` when a wheel is built
    (``setup.py``); in a checkout (an editable install, a source tree) its ``pyproject.toml``'s;
    else from importlib.metadata, which costs ~20-50 ms: loaded on use."""
    try:
        from swftools._version import VERSION

        return VERSION
    except ImportError:
        pass
    import os

    pyproject = os.path.join(os.path.dirname(os.path.dirname(__file__)), "pyproject.toml")
    if os.path.isfile(pyproject):
        import tomllib

        with open(pyproject, "rb") as fh:
            project = tomllib.load(fh).get("project", {})
        if project.get("name") == "swftools" and isinstance(project.get("version"), str):
            return project["version"]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("swftools")
    except PackageNotFoundError:  # running from a source tree without installation
        return "0.1.0"


def __getattr__(name: str):
    """Lazy access to subpackages (``swftools.validate``, ``swftools.replay``), to ``convert``,
    ``read`` and ``write``, and to ``__version__``."""
    if name == "__version__":
        value = globals()["__version__"] = _package_version()
        return value
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(_SUBMODULES[name])
    if name in _FUNCTIONS:
        import importlib

        value = getattr(importlib.import_module(_FUNCTIONS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'swftools' has no attribute {name!r}")
