"""``swftools.site.resolve_site``: the one rule every command and format uses."""

from __future__ import annotations

import pytest

from swftools import table as jt
from swftools.errors import InputError
from swftools.formats.datapackage import package
from swftools.formats.nqsii import schema
from swftools.site import Site, load_site, preset, resolve_site


def _table(site=None):
    return jt.with_metadata(jt.empty(), {} if site is None else {"site": site})


def test_explicit_site_wins():
    aaic = load_site("aaic")
    assert resolve_site(aaic, _table("other"), fmt="nqsii") is aaic
    assert resolve_site("aaic", _table()).name == "aaic"
    with pytest.raises(InputError):
        resolve_site("no-such-site.json", _table("aaic"))


def test_then_the_trace_then_the_nqsii_default_then_none():
    assert resolve_site(None, _table("aaic")).name == "aaic"
    assert resolve_site(None, {"site": "aaic"}).name == "aaic"  # a metadata dict works too
    assert resolve_site(None, _table("unknown-site")) is None  # not a preset: ignored
    assert resolve_site(None, _table(), fmt="nqsii").name == "aaic"
    assert resolve_site(None, _table(), fmt="swf") is None
    assert resolve_site(None) is None


def test_presets_are_loaded_once_and_the_format_copies_delegate():
    assert preset("aaic") is preset("aaic")
    assert resolve_site("aaic") is preset("aaic")
    assert schema.resolve_site(None) is preset("aaic")
    assert not hasattr(package, "_resolve_site")
    assert isinstance(schema.resolve_site("aaic"), Site)
