"""``swftools release`` and ``swftools verify``: citable, checksummed, reproducible archives."""

from swftools import lazy
# ``verify`` is imported here (its function must shadow its module's name); the rest is loaded
# on first access, so that verifying an archive imports neither the release pipeline nor the
# report it renders (matplotlib, scipy).
from swftools.release.verify import VerifyReport, verify

__all__ = ["STAGES", "License", "ReleaseResult", "VerifyReport", "check_version", "license_of",
           "load_settings", "release", "verify"]

_LAZY = {"STAGES": "pipeline", "ReleaseResult": "pipeline", "release": "pipeline",
         "License": "settings", "check_version": "settings", "license_of": "settings",
         "load_settings": "settings"}


__getattr__ = lazy.attributes(__name__, _LAZY, globals())
