"""The documentation site (mkdocs.yml, docs/): it builds offline in strict mode and strict mode
fails on a broken link; the CLI reference is the commands' own help; the tutorials' commands run
as written; README stays short and links only to what exists; the front page fits a phone."""

from __future__ import annotations

import http.server
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest

from swftools.cli import command_paths

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GOLDEN_HELP = ROOT / "tests" / "golden" / "cli"
TUTORIALS = sorted((DOCS / "tutorials").glob("*.md"))
# What a build reads besides docs/ (mkdocs.yml's hooks, snippets and API paths).
BUILD_INPUTS = ("mkdocs.yml", "ARCHITECTURE.md", "DEVELOPING.md", "archive", "swftools")

needs_mkdocs = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason="mkdocs is not installed (pip install -e '.[docs]'; make test installs it)")


def _hooks():
    spec = importlib.util.spec_from_file_location("swftools_docs_hooks",
                                                  DOCS / "_hooks" / "swftools_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
         "--site-dir", str(site)],
        capture_output=True, text=True, env=env, timeout=600, check=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]'; make test installs it)")
    out = tmp_path_factory.mktemp("site") / "site"
    result = _build(ROOT / "mkdocs.yml", out)
    assert result.returncode == 0, result.stderr[-4000:]
    return out


# ------------------------------------------------------------------------------ the build

@needs_mkdocs
def test_site_builds_in_strict_mode_with_every_page(site):
    for page in ("index.html", "getting-started/index.html", "reference/cli/index.html",
                 "reference/python-api/index.html", "ARCHITECTURE/index.html",
                 "DEVELOPING/index.html", "formats/swf/index.html",
                 "archive/screenshots/index-1280-top.png", "search/search_index.json",
                 *(f"tutorials/{t.stem}/index.html" for t in TUTORIALS)):
        assert (site / page).is_file(), page
    # the API reference is rendered from the docstrings, not an empty shell
    api = (site / "reference/python-api/index.html").read_text(encoding="utf-8")
    for name in ("swftools.formats.read", "swftools.formats.convert", "swftools.site.load_site",
                 "swftools.errors.InputError"):
        assert f'id="{name}"' in api, name
    # ARCHITECTURE.md is served as it is in the repository
    arch = (site / "ARCHITECTURE/index.html").read_text(encoding="utf-8")
    assert "job table" in arch and "swftools/formats/" in arch


@needs_mkdocs
def test_strict_mode_fails_on_a_broken_link_and_a_broken_anchor(tmp_path):
    """The site's own configuration, less the API reference's plugin (mkdocstrings, two thirds
    of the build's time; link checking is mkdocs' own ``validation``, which it does not touch)."""
    for name in BUILD_INPUTS:
        if name != "mkdocs.yml":
            (tmp_path / name).symlink_to(ROOT / name)
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    without_api = re.sub(r"\n  - mkdocstrings:\n(?:    .*\n)+", "\n", config)
    assert "mkdocstrings" not in without_api and "strict: true" in without_api
    (tmp_path / "mkdocs.yml").write_text(without_api, encoding="utf-8")
    shutil.copytree(DOCS, tmp_path / "docs")
    page = tmp_path / "docs" / "getting-started.md"
    page.write_text(page.read_text(encoding="utf-8")
                    + "\nSee [gone](no-such-page.md) and [here](guide/replay.md#no-such-anchor).\n",
                    encoding="utf-8")
    result = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 1
    assert "no-such-page.md" in result.stderr and "no-such-anchor" in result.stderr


def test_the_build_fetches_nothing():
    """Material's web fonts (Google Fonts) are off, no plugin that downloads is on, and no
    repo_url (whose widget asks GitHub's API when a page is read)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^  font: false$", text, re.MULTILINE)
    assert not re.search(r"^repo_url:", text, re.MULTILINE)
    assert "strict: true" in text
    for plugin in ("social", "privacy", "optimize"):
        assert not re.search(rf"^  - {plugin}\b", text, re.MULTILINE), plugin


# -------------------------------------------------------------------------- CLI reference

def test_cli_reference_is_every_commands_own_help():
    """The hook renders each command's help as ``swftools ... --help`` prints it (the golden
    files of tests/test_cli_help.py), for every visible command."""
    hooks = _hooks()
    paths = command_paths()
    for path in paths:
        golden = GOLDEN_HELP / (("-".join(path) or "swftools") + ".txt")
        assert hooks.command_help(path) == golden.read_text(encoding="utf-8"), path
    markdown = hooks.cli_reference_markdown()
    assert markdown.count("```text\n") == len(paths)
    for path in paths:
        assert f"`{' '.join(('swftools', *path))}`" in markdown, path


def test_cli_page_holds_the_marker_not_a_copy():
    text = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert _hooks().CLI_MARKER in text
    assert "Usage:" not in text and "Options:" not in text


# ------------------------------------------------------------------------------ tutorials

def tutorial_steps(text: str) -> list[tuple[str, str]]:
    """The steps of a tutorial, in order: ``("file", name, body)`` for a fenced block with a
    ``title="NAME"`` (the reader writes that file), ``("run", command)`` for each ``$ `` line of
    a ``console`` block."""
    steps: list[tuple] = []
    for match in re.finditer(r"^```(\w+)([^\n]*)\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
        lang, info, body = match.groups()
        title = re.search(r'title="([^"]+)"', info)
        if title:
            steps.append(("file", title.group(1), body))
        elif lang == "console":
            steps += [("run", line[2:]) for line in body.splitlines() if line.startswith("$ ")]
    return steps


def test_tutorial_steps_are_parsed_in_order():
    text = ('x\n```console\n$ swftools a\nout\n$ swftools b\n```\n```json title="s.json"\n{}\n```\n'
            '```\nnot run\n```\n')
    assert tutorial_steps(text) == [("run", "swftools a"), ("run", "swftools b"),
                                    ("file", "s.json", "{}\n")]


@pytest.mark.slow
@pytest.mark.parametrize("tutorial", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_commands_run_as_written(tutorial, tmp_path, monkeypatch, stub_figures):
    """Each tutorial, run from a folder that sees the checkout's samples, archive and tests as
    the reader's checkout does: every command exits 0 and every file it names is written. The
    figures of its reports and releases are placeholders (``stubbed_figures``: the same pages
    are drawn for real by tests/test_report_html.py and tests/test_release.py).

    The commands run in this process, split into words as a POSIX shell splits them and given
    to the CLI as ``swftools`` (``swftools.cli.main``) gives them: a process per command spent
    most of its time importing swftools' dependencies again (about 2 s a command); the console
    entry point itself is run as a process by tests/test_cli_convert.py and test_release.py."""
    from typer.testing import CliRunner

    from swftools.cli import app_for

    for name in ("samples", "archive", "tests", "schemas"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    runner = CliRunner(env={"COLUMNS": "120"})
    steps = tutorial_steps(tutorial.read_text(encoding="utf-8"))
    assert sum(kind == "run" for kind, *_ in steps) >= 3, "a tutorial runs commands"
    for kind, *args in steps:
        if kind == "file":
            (tmp_path / args[0]).write_text(args[1], encoding="utf-8")
            continue
        assert args[0].startswith("swftools "), args[0]
        assert not set(args[0]) & set("*?[]$`;|&<>(){}~"), f"not a plain command: {args[0]}"
        argv = shlex.split(args[0])[1:]
        result = runner.invoke(app_for(argv), argv)
        assert result.exit_code == 0, (
            f"{tutorial.name}: `{args[0]}` exited {result.exit_code}:\n{result.output[-3000:]}"
            + ("".join(traceback.format_exception(result.exception))
               if result.exception and not isinstance(result.exception, SystemExit) else ""))
        for out in re.findall(r"(?:--out|-o) (\S+)", args[0]):
            assert (tmp_path / out).exists(), f"{tutorial.name}: `{args[0]}` wrote no {out}"


# --------------------------------------------------------------------------------- README

def test_readme_is_short_keeps_the_quick_start_and_links_only_what_exists():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 80, "README is one or two screens; the rest is in docs/"
    assert "```\nmake demo\nmake test\n```" in text
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, re.MULTILINE), ".ci/run runs the README's test command"
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert any(link.endswith(".png") for link in local), "README shows a screenshot"
    for link in local:
        assert (ROOT / link).exists(), link
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for link in local:
        if link.startswith("docs/"):
            assert re.search(rf": {re.escape(link[len('docs/'):])}$", nav, re.MULTILINE), link


# -------------------------------------------------------------------------------- browser

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no access log on the test's stderr
        pass


@contextmanager
def served(folder: Path) -> Iterator[str]:
    """``folder`` served over HTTP on a free loopback port (as GitHub Pages serves the site);
    yields its base URL."""
    handler = partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@needs_mkdocs
def test_front_page_screenshot_has_no_horizontal_overflow(site, tmp_path):
    """At each width (desktop, then phone): one browser, the page loaded afresh at each width
    (a launch costs more than a visit)."""
    from tests.browser_support import WIDTHS, open_page, unavailable

    why = unavailable()
    if why:
        pytest.skip(why)
    assert WIDTHS == (1280, 390)
    seen = {}
    with served(site) as base, open_page(base, WIDTHS[0]) as (page, visit):
        for width in WIDTHS:
            if width != WIDTHS[0]:
                page.set_viewport_size({"width": width, "height": 900})
                page.goto(base, wait_until="load")
            assert page.evaluate("() => window.innerWidth") == width
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(tmp_path / f"docs-{width}.png"), full_page=True)
            seen[width] = (page.evaluate("() => document.documentElement.scrollWidth"),
                           page.title())
    for width, (scroll_width, title) in seen.items():
        assert (tmp_path / f"docs-{width}.png").stat().st_size > 10_000
        assert scroll_width <= width, f"the front page is {scroll_width} px wide at {width} px"
        assert title.startswith("swftools")
    assert not visit.failed, f"requests that failed offline: {visit.failed}"
    assert not visit.console_errors and not visit.page_errors, visit
    assert not [u for u in visit.requests if not u.startswith((base, "data:", "blob:"))], \
        visit.requests
