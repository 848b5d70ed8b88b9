"""``swftools release`` and ``swftools verify``: citable, checksummed, reproducible archives."""

from swftools.release.pipeline import STAGES, ReleaseResult, release
from swftools.release.settings import License, check_version, license_of, load_settings
from swftools.release.verify import VerifyReport, verify

__all__ = ["STAGES", "License", "ReleaseResult", "VerifyReport", "check_version", "license_of",
           "load_settings", "release", "verify"]
