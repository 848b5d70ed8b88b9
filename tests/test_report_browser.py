"""index.html in a real browser: headless Chromium loads the page at desktop and phone widths.

Checks what a reader meets: no console error, no request leaving the file, every figure drawn at
a non-zero size, the headline table, nothing wider than the screen (a wide table scrolls inside
its frame, with a shadow at the edge as the sign), contents numbered once, and a full-page
screenshot; for the sample's report (with its what-if table), the example archive's page and
a CPU SWF trace's report (KTH-SP2, processors, no AAIC reference).
Skips, saying why, only where no Chromium (Debian package ``chromium``) or no Playwright is
installed; ``.ci/run`` installs Chromium when it can.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.browser_support import WIDTHS, browser_session, unavailable
from tests.conftest import sample_html_report, trace_path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_PAGE = ROOT / "archive" / "example" / "index.html"

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))


@pytest.fixture(scope="module")
def open_page():
    """One Chromium for the module's visits (each in a fresh context): a launch per visit cost
    more than the visit."""
    with browser_session() as visit:
        yield visit


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    """The sample's report page with its what-if table (built once per run, shared with
    tests/test_report_html.py's cross-process test)."""
    return sample_html_report(tmp_path_factory) / "index.html"


@pytest.fixture(scope="module")
def cpu_page(tmp_path_factory) -> Path:
    """The report page of a real CPU SWF trace (KTH-SP2: processors, no nodes, no site)."""
    from swftools.report import report

    out = tmp_path_factory.mktemp("browser-cpu") / "rep"
    report(trace_path("KTH-SP2-1996-2.1-cln.swf.gz"), out, html=True)
    return out / "index.html"


@pytest.fixture(params=["report", "archive", "cpu"])
def page_path(request) -> Path:
    if request.param == "archive":
        return EXAMPLE_PAGE
    return request.getfixturevalue("report_page" if request.param == "report" else "cpu_page")


FIGURES_JS = """() => Array.from(document.querySelectorAll('img, svg')).map(e => {
  const r = e.getBoundingClientRect();
  return {tag: e.tagName, width: r.width, height: r.height,
          natural: e.tagName === 'IMG' ? e.naturalWidth : -1, complete: e.complete !== false,
          alt: e.getAttribute('alt') || ''};
})"""

HEADLINE_JS = """() => {
  const t = document.querySelector('table#headline');
  if (!t) return null;
  return {caption: t.caption ? t.caption.textContent : '',
          rows: Array.from(t.tBodies[0].rows).map(r => r.cells[0].textContent),
          visible: t.getBoundingClientRect().height > 0};
}"""


# Every table frame whose table is wider than the frame: does it show the scroll sign (the
# edge shadows of its background, painted behind the content) and scroll by itself?
WIDE_TABLES_JS = """() => Array.from(document.querySelectorAll('.table-wrap'))
  .filter(w => w.scrollWidth > w.clientWidth + 1).map(w => {
    const cs = getComputedStyle(w);
    return {id: w.querySelector('table').id, overflowX: cs.overflowX,
            shadow: cs.backgroundImage.includes('radial-gradient'),
            covers: cs.backgroundAttachment.includes('local'),
            right: w.getBoundingClientRect().right};
  })"""


@pytest.mark.parametrize("width", WIDTHS)
def test_page_renders_in_chromium(open_page, page_path, width, tmp_path):
    with open_page(page_path, width) as (page, visit):
        images = page.evaluate(FIGURES_JS)
        headline = page.evaluate(HEADLINE_JS)
        overflow = page.evaluate("() => Math.max(document.documentElement.scrollWidth, "
                                 "document.body.scrollWidth)")
        wide = page.evaluate(WIDE_TABLES_JS)
        figure_count = page.evaluate("() => document.querySelectorAll('figure').length")
        contents = page.evaluate("() => getComputedStyle(document.querySelector('nav ol'))"
                                 ".listStyleType")
        font_px = page.evaluate(
            "() => parseFloat(getComputedStyle(document.querySelector('main p')).fontSize)")
        shot = tmp_path / f"index-{width}.png"
        page.screenshot(path=str(shot), full_page=True)
    assert visit.console_errors == [] and visit.page_errors == []
    assert visit.failed == []
    assert visit.requests and all(u.startswith(("file://", "data:")) for u in visit.requests), \
        [u for u in visit.requests if not u.startswith(("file://", "data:"))]
    assert len(images) == figure_count >= 8  # every figure drawn (none for a one-period series)
    for image in images:
        assert image["width"] > 0 and image["height"] > 0, image
        assert image["natural"] > 0 and image["complete"], image
        assert image["alt"], image
    assert headline is not None and headline["visible"]
    assert headline["caption"] == "Headline numbers of this trace"
    assert headline["rows"][:3] == ["Jobs", "Users", "Groups"]
    assert overflow <= width, f"the page is {overflow} px wide on a {width} px screen"
    for table in wide:  # scrolls inside its frame, which ends within the screen, with the sign
        assert table["overflowX"] == "auto" and table["shadow"] and table["covers"], table
        assert table["right"] <= width, table
    assert contents == "none"  # the titles carry the analyses' numbers ("1. Parallelism")
    assert font_px >= 16
    png = shot.read_bytes()
    shot_width, shot_height = struct.unpack(">II", png[16:24])
    assert shot_width == width and shot_height > 3 * width


def test_phone_width_uses_the_stacked_figures(open_page, report_page):
    """On a phone, each figure comes from its narrow (stacked panels) variant."""
    with open_page(report_page, 390) as (page, _):
        narrow = page.evaluate("() => Array.from(document.querySelectorAll('img'))"
                               ".map(i => [i.currentSrc === i.src, i.naturalWidth])")
    with open_page(report_page, 1280) as (page, _):
        wide = page.evaluate("() => Array.from(document.querySelectorAll('img'))"
                             ".map(i => [i.currentSrc === i.src, i.naturalWidth])")
    assert all(not same for same, _ in narrow) and all(same for same, _ in wide)
    assert max(w for _, w in narrow) < min(w for _, w in wide)
