"""``swftools.lazy``: a package's names loaded from their modules on first access."""

from __future__ import annotations

import json

import pytest

from swftools import lazy

from .test_cli_startup import _fresh


def test_a_listed_name_is_imported_from_its_module_once_and_kept():
    namespace: dict[str, object] = {}
    getattr_ = lazy.attributes("swftools.formats.swf", {"FIELDS": "fields", "SwfField": "fields"},
                               namespace)
    from swftools.formats.swf import fields

    assert getattr_("FIELDS") is fields.FIELDS
    assert namespace == {"FIELDS": fields.FIELDS}  # kept: the module's next lookup finds it
    assert getattr_("SwfField") is fields.SwfField
    assert set(namespace) == {"FIELDS", "SwfField"}


def test_an_unlisted_name_is_an_attribute_error_naming_the_package():
    namespace: dict[str, object] = {}
    getattr_ = lazy.attributes("swftools.formats.swf", {"FIELDS": "fields"}, namespace)
    with pytest.raises(AttributeError) as info:
        getattr_("PWA_WIDTHS")  # in the module, but not listed
    assert str(info.value) == "module 'swftools.formats.swf' has no attribute 'PWA_WIDTHS'"
    assert namespace == {}


def test_the_lazy_packages_load_their_modules_on_first_access_only():
    """Importing the packages loads none of the listed modules; the first access does."""
    code = """
import json, sys
import swftools.formats.nqsii as nqsii, swftools.formats.swf as swf, swftools.release as release
before = sorted(m for m in sys.modules if m.endswith(("nqsii.reader", "swf.writer", "release.pipeline")))
nqsii.read, swf.write, release.STAGES
after = sorted(m for m in sys.modules if m.endswith(("nqsii.reader", "swf.writer", "release.pipeline")))
print(json.dumps([before, after, "read" in vars(nqsii), type(release.verify).__name__]))
"""
    out = _fresh(code)
    before, after, kept, verify_kind = json.loads(out)
    assert before == []
    assert after == ["swftools.formats.nqsii.reader", "swftools.formats.swf.writer",
                     "swftools.release.pipeline"]
    assert kept
    assert verify_kind == "function"  # release.verify is the function, not its module
