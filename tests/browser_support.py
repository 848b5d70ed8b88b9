"""Open a local page in headless Chromium (Debian's ``chromium``) through Playwright.

Used by ``tests/test_report_browser.py``, and run as a script to refresh the screenshots of the
example archive's page (``make screenshots``):

    .venv/bin/python -m tests.browser_support archive/example/index.html archive/screenshots

Playwright drives the installed executable (no browser download); every launch gets a fresh
profile folder. ``unavailable()`` says why a browser cannot be started here (None when it can).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDTHS = (1280, 390)


def chromium_path() -> str | None:
    """The Chromium executable, or None."""
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).is_file():
            return candidate
    return shutil.which("chromium")


def unavailable() -> str | None:
    """Why no browser can be driven here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return ("no Chromium executable (/usr/bin/chromium): install the Debian package with "
                "`apt-get install chromium` (.ci/run does so when it can)")
    return None


@dataclass
class Visit:
    """What happened while a page loaded: console errors, failed and requested URLs."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def _watched_page(context: Any, visit: Visit) -> Any:
    """A new page of ``context`` whose console errors, page errors, requests and failed
    requests are recorded in ``visit``."""
    page = context.new_page()
    page.on("console", lambda m: visit.console_errors.append(m.text)
            if m.type == "error" else None)
    page.on("pageerror", lambda e: visit.page_errors.append(str(e)))
    page.on("request", lambda r: visit.requests.append(r.url))
    page.on("requestfailed", lambda r: visit.failed.append(r.url))
    return page


@contextmanager
def open_page(path: Path | str, width: int, height: int = 900) -> Iterator[tuple[Any, Visit]]:
    """Load ``path`` (a file, or an ``http://`` URL of a loopback server) at ``width`` CSS
    pixels; yields the Playwright page and the visit. Nothing else is reached: offline for a
    file, every request to another origin aborted (and listed as failed) for a URL."""
    from playwright.sync_api import sync_playwright

    visit = Visit()
    http = str(path).startswith("http://")
    url = str(path) if http else Path(path).resolve().as_uri()
    origin = "/".join(url.split("/")[:3]) + "/"
    with tempfile.TemporaryDirectory(prefix="swftools-chromium-") as profile, \
            sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=chromium_path(), headless=True, args=LAUNCH_ARGS,
            viewport={"width": width, "height": height}, device_scale_factor=1,
            offline=not http, java_script_enabled=True)
        try:
            if http:
                context.route("**/*", lambda route: route.continue_()
                              if route.request.url.startswith(origin) else route.abort())
            page = _watched_page(context, visit)
            page.goto(url, wait_until="load")
            yield page, visit
        finally:
            context.close()


@contextmanager
def browser_session() -> Iterator[Any]:
    """One Chromium launch for several visits: yields ``visit(path, width, height=900)``, a
    context manager like ``open_page`` (a file only), each visit in a fresh browser context
    (its own storage, offline, the given viewport)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), headless=True,
                                    args=LAUNCH_ARGS)

        @contextmanager
        def visit_page(path: Path | str, width: int,
                       height: int = 900) -> Iterator[tuple[Any, Visit]]:
            visit = Visit()
            context = browser.new_context(viewport={"width": width, "height": height},
                                          device_scale_factor=1, offline=True,
                                          java_script_enabled=True)
            try:
                page = _watched_page(context, visit)
                page.goto(Path(path).resolve().as_uri(), wait_until="load")
                yield page, visit
            finally:
                context.close()

        try:
            yield visit_page
        finally:
            browser.close()


def screenshot(path: Path, out_png: Path, width: int, height: int | None = None) -> None:
    """A full-page screenshot of ``path`` at ``width`` CSS pixels (only the top ``height``
    pixels when given)."""
    with open_page(path, width, height or 900) as (page, _):
        page.screenshot(path=str(out_png), full_page=height is None)


def main(argv: list[str]) -> int:
    """``browser_support PAGE OUT_DIR``: write OUT_DIR/index-1280.png and index-390.png (full
    pages) and index-1280-top.png (the first screen, shown in the README)."""
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    why = unavailable()
    if why:
        print(f"cannot take screenshots: {why}", file=sys.stderr)
        return 1
    page, out = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        target = out / f"{page.stem}-{width}.png"
        screenshot(page, target, width)
        print(f"wrote {target}")
    top = out / f"{page.stem}-{WIDTHS[0]}-top.png"
    screenshot(page, top, WIDTHS[0], height=1400)
    print(f"wrote {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
