"""Release settings (``schemas/release-settings.schema.json``) and the license they select."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from swftools.errors import InputError, UsageError
from swftools.resources import load_json
from swftools.urls import WEB_URL_EXPECTED, WEB_URL_PATTERN, is_uri

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")

CC_BY_SA_4 = {
    "id": "CC-BY-SA-4.0",
    "name": "Creative Commons Attribution-ShareAlike 4.0 International",
    "url": "https://creativecommons.org/licenses/by-sa/4.0/",
    "legalcode": "https://creativecommons.org/licenses/by-sa/4.0/legalcode.en",
}


@dataclass(frozen=True)
class License:
    """The license of a release: SPDX id (or LicenseRef-), name, URL and any verbatim terms."""

    id: str
    name: str
    url: str | None
    text: str | None = None

    @property
    def is_cc_by_sa(self) -> bool:
        return self.id == CC_BY_SA_4["id"]


def check_version(version: str) -> str:
    """Refuse anything but a Semantic Versioning 2.0 string (``1.0.0``, ``2.1.0-rc.1``)."""
    if not SEMVER.match(version):
        raise UsageError(f"--version {version!r} is not a semantic version (expected X.Y.Z, e.g. 1.0.0)")
    return version


def load_settings(path: str | Path) -> dict[str, Any]:
    """Load and validate a release settings file; every problem is reported at once."""
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), "no such release settings file")
    try:
        settings = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(str(p), f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    validator = jsonschema.Draft202012Validator(load_json("release-settings.schema.json"),
                                                format_checker=format_checker())
    errors = sorted(validator.iter_errors(settings), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        problems = "; ".join(
            f"{'/'.join(map(str, e.absolute_path)) or '(top level)'}: {_message(e)}" for e in errors)
        raise InputError(str(p), f"invalid release settings: {problems}",
                         expected="see schemas/release-settings.schema.json")
    lic = settings.get("license", {})
    if lic.get("id", "").startswith("LicenseRef-") and not lic.get("text"):
        raise InputError(str(p), "license/text: a LicenseRef- license needs its terms in 'text'")
    return settings


def format_checker() -> jsonschema.FormatChecker:
    """jsonschema's format checks plus ``uri`` (which jsonschema checks only when rfc3987 or
    rfc3986-validator is installed): every ``format`` of the settings schema is enforced."""
    checker = jsonschema.FormatChecker()
    checker.checks("uri")(is_uri)
    return checker


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "pattern" and error.validator_value == WEB_URL_PATTERN:
        return f"{error.instance!r} is not {WEB_URL_EXPECTED}"
    return error.message


def license_of(settings: dict[str, Any]) -> License:
    """The release license: CC BY-SA 4.0 unless the settings name another one."""
    lic = settings.get("license") or {"id": CC_BY_SA_4["id"]}
    if lic["id"] == CC_BY_SA_4["id"]:
        return License(CC_BY_SA_4["id"], CC_BY_SA_4["name"], CC_BY_SA_4["url"], lic.get("text"))
    return License(lic["id"], lic.get("name", lic["id"]), lic.get("url"), lic.get("text"))
