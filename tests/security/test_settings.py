"""Issue 29: a ``javascript:`` licence URL in the release settings became a link on the landing
page (the schema's ``uri`` format was not enforced). Now every URL of the settings must be
http(s), every ``format`` of the schema is checked, and the page links nothing else even when a
bad URL reaches it."""

from __future__ import annotations

import copy
import json
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

from swftools import synth, urls
from swftools.errors import InputError
from swftools.release.settings import format_checker, load_settings
from swftools.report import analyze, html
from swftools.resources import load_json
from tests.strategies import url_texts

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = json.loads((ROOT / "archive" / "release-settings.example.json").read_text())
HOSTILE = ["javascript:alert(document.domain)", "JavaScript:alert(1)", " javascript:alert(1)",
           "java\tscript:alert(1)", "data:text/html,<script>alert(1)</script>",
           "vbscript:msgbox(1)", "file:///etc/passwd", "ftp://example.org/x",
           "//evil.example/x", "https://user:pw@evil.example/", "https://a b.example/",
           "https://example.org/\x00", "https:evil.example", "https://"]
URL_FIELDS = [("homepage",), ("repository",), ("license", "url"), ("references", 0, "url")]


def _settings_file(tmp_path: Path, where: tuple, value: str) -> Path:
    data = copy.deepcopy(EXAMPLE)
    data.pop("$schema")
    data["license"] = {"id": "LicenseRef-site", "name": "Site terms", "text": "terms"}
    target = data
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(data))
    return path


# --- the settings file ----------------------------------------------------------------------

def test_a_javascript_licence_url_is_refused(tmp_path):
    path = _settings_file(tmp_path, ("license", "url"), "javascript:alert(document.domain)")
    with pytest.raises(InputError) as info:
        load_settings(path)
    assert str(info.value).startswith(
        f"{path}: invalid release settings: license/url: 'javascript:alert(document.domain)' "
        "is not an http:// or https:// URL")


@pytest.mark.parametrize("where", URL_FIELDS, ids=lambda w: "/".join(map(str, w)))
@pytest.mark.parametrize("value", HOSTILE)
def test_every_url_field_refuses_other_schemes(tmp_path, where, value):
    with pytest.raises(InputError, match="/".join(map(str, where)) + ": .* is not an http"):
        load_settings(_settings_file(tmp_path, where, value))


@pytest.mark.parametrize("where", URL_FIELDS, ids=lambda w: "/".join(map(str, w)))
def test_web_urls_are_accepted(tmp_path, where):
    value = "https://example.org/data/v1?x=1#top"
    assert load_settings(_settings_file(tmp_path, where, value))


def _formats(node) -> set[str]:
    if isinstance(node, dict):
        found = {node["format"]} if isinstance(node.get("format"), str) else set()
        return found.union(*(_formats(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_formats(v) for v in node))
    return set()


def test_every_format_of_the_schema_is_enforced():
    used = _formats(load_json("release-settings.schema.json"))
    assert used == {"uri", "email"}
    assert used <= set(format_checker().checkers), "a format no checker enforces"
    assert not format_checker().conforms("not a uri", "uri")
    assert not format_checker().conforms("nobody", "email")


def test_email_format_is_enforced(tmp_path):
    data = copy.deepcopy(EXAMPLE)
    data["contact"]["email"] = "nobody"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="contact/email: 'nobody' is not a 'email'"):
        load_settings(path)


def test_the_schema_pattern_is_the_code_rule():
    schema = load_json("release-settings.schema.json")
    assert schema["$defs"]["webUrl"]["pattern"] == urls.WEB_URL_PATTERN


@settings(max_examples=300, deadline=None)
@given(url_texts)
def test_schema_and_code_agree_on_every_url(text):
    schema = load_json("release-settings.schema.json")
    validator = jsonschema.Draft202012Validator(
        {"$defs": schema["$defs"], "$ref": "#/$defs/webUrl"}, format_checker=format_checker())
    assert validator.is_valid(text) == urls.is_web_url(text)
    if urls.is_web_url(text):
        parts = urlsplit(text)
        assert parts.scheme.lower() in ("http", "https") and parts.hostname
        assert "@" not in parts.netloc and not any(c.isspace() or ord(c) < 32 for c in text)


# --- the landing page -----------------------------------------------------------------------

class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.hrefs += [v for k, v in attrs if k == "href" and v is not None]


def _hrefs(page: str) -> list[str]:
    parser = _Links()
    parser.feed(page)
    return parser.hrefs


def _safe(href: str) -> bool:
    """What a browser would not run: an http(s) URL, or a relative reference (fragment, path)
    that names no scheme and no other host, read as a browser reads it (tab, CR, LF dropped,
    leading controls and spaces stripped)."""
    seen = "".join(c for c in href if c not in "\t\n\r").lstrip("".join(map(chr, range(33))))
    parts = urlsplit(seen)
    if parts.scheme.lower() in ("http", "https"):
        return bool(parts.netloc)
    return parts.scheme == "" and parts.netloc == "" and \
        not seen.startswith(("\\\\", "/\\", "\\/"))


@pytest.fixture(scope="module")
def bare_data():
    data = copy.deepcopy(analyze(synth.generate(200, seed=1)).data)
    data["figures"] = []
    return data


def _release(license_url, legalcode_url=None, downloads=(), tarball="t-1.0.0.tar.gz"):
    return html.ReleaseInfo(
        title="t", version="1.0.0", description="d", downloads=list(downloads), tarball=tarball,
        citation="c", how_to_cite="h", license_name="Site terms", license_id="LicenseRef-x",
        license_url=license_url, legalcode_url=legalcode_url, anonymization=["a"], source="s",
        time_zone="UTC")


@pytest.mark.parametrize("bad", HOSTILE)
def test_the_page_never_links_a_bad_licence_url(bare_data, bad):
    page = html.page(bare_data, release=_release(bad, legalcode_url=bad))
    hrefs = _hrefs(page)
    assert all(_safe(h) for h in hrefs), hrefs
    assert "javascript:" not in " ".join(hrefs).lower()
    assert hrefs.count("LICENSE") >= 3  # the two licence links fell back to the LICENSE file


def test_the_page_links_a_good_licence_url(bare_data):
    url = "https://creativecommons.org/licenses/by-sa/4.0/"
    page = html.page(bare_data, release=_release(url, legalcode_url=url + "legalcode.en"))
    assert url in _hrefs(page) and url + "legalcode.en" in _hrefs(page)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(license_url=url_texts, path=url_texts.filter(lambda p: p.strip() != ""))
def test_every_href_of_the_page_is_safe(bare_data, license_url, path):
    download = html.Download(path, 1, "0" * 64)
    page = html.page(bare_data, release=_release(license_url, license_url, [download], path))
    hrefs = _hrefs(page)
    assert all(_safe(h) for h in hrefs), hrefs


@given(url_texts)
def test_relative_href_never_yields_a_scheme_or_another_host(path):
    href = urls.relative_href(path)
    assert href in (path, "./" + path)
    seen = "".join(c for c in href if c not in "\t\n\r").lstrip("".join(map(chr, range(33))))
    assert not seen.startswith(("//", "\\\\", "/\\", "\\/"))
    parts = urlsplit(seen)
    assert parts.scheme == "" and parts.netloc == "", (path, href)
