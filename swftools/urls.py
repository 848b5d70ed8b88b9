"""The one rule for links swftools publishes: absolute ``http(s)`` URLs, or plain relative paths.

``WEB_URL_PATTERN`` is also the ``pattern`` of every URL in ``schemas/release-settings.schema.json``
(``$defs/webUrl``; a test checks the two are equal), so the settings file is refused by the same
rule the landing page applies again before it writes a link (``web_href``, ``relative_href``):
no ``javascript:``, ``data:``, ``file:`` or other scheme, no user name or password, no space or
control character anywhere.
"""

from __future__ import annotations

import re

INDEX_HTML = "index.html"  # the file every page swftools writes is: a report's, an archive's

# Characters no URL swftools writes may hold: Unicode whitespace and every control character.
_BAD = r"\s\x00-\x1f\x7f-\x9f"
WEB_URL_PATTERN = (rf"^[Hh][Tt][Tt][Pp][Ss]?://[^{_BAD}/?#\\@:][^{_BAD}/?#\\@]*"
                   rf"(?:[/?#][^{_BAD}]*)?$")
WEB_URL_EXPECTED = "an http:// or https:// URL (no other scheme, no spaces, no user:password@)"
# A URI of any scheme (RFC 3986's scheme ":" then something, without spaces or controls): the
# check behind the schema's ``format: uri`` (jsonschema checks ``uri`` only with extra packages).
URI_PATTERN = rf"^[A-Za-z][A-Za-z0-9+.\-]*:[^{_BAD}]+$"

_WEB_URL = re.compile(WEB_URL_PATTERN)
_URI = re.compile(URI_PATTERN)
# What a browser takes for a scheme or another host after dropping tab/CR/LF and the leading
# controls and spaces (WHATWG URL parsing).
_SCHEME_OR_HOST = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:|[/\\]{2})")


def is_web_url(text: object) -> bool:
    """Whether ``text`` is an absolute http(s) URL that swftools may publish as a link."""
    return isinstance(text, str) and _WEB_URL.match(text) is not None


def is_uri(text: object) -> bool:
    """Whether ``text`` is an absolute URI of any scheme (the ``uri`` format of the schemas)."""
    return isinstance(text, str) and _URI.match(text) is not None


def web_href(url: object, fallback: str | None = None) -> str | None:
    """``url`` if it is a web URL (``is_web_url``), else ``fallback``."""
    return url if is_web_url(url) else fallback  # type: ignore[return-value]


def relative_href(path: str) -> str:
    """A relative link to ``path`` inside the archive: ``path`` itself, or ``./path`` when a
    browser would read a scheme (``javascript:``) or another host (``//host``) in it."""
    seen = re.sub(r"[\t\n\r]", "", path).lstrip("".join(map(chr, range(0x21))))
    return "./" + path if _SCHEME_OR_HOST.match(seen) else path
