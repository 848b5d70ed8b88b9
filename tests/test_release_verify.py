"""swftools.release.verify: the page's download list, written by the template and read back."""

from __future__ import annotations

import copy
import os
import re
import shutil
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings

from swftools import synth
from swftools.release import verify
from swftools.release.verify import page_downloads
from swftools.report import analyze, html
from tests.strategies import download_lists


@pytest.fixture(scope="module")
def bare_data():
    """Report data without figures, so that a page renders in milliseconds."""
    data = copy.deepcopy(analyze(synth.generate(200, seed=1)).data)
    data["figures"] = []
    return data


def _release(downloads):
    return html.ReleaseInfo(
        title="t", version="1.0.0", description="d", downloads=downloads, tarball="t-1.0.0.tar.gz",
        citation="c", how_to_cite="h", license_name="CC BY-SA 4.0", license_id="CC-BY-SA-4.0",
        license_url="https://creativecommons.org/licenses/by-sa/4.0/", legalcode_url=None,
        anonymization=["a"], source="s", time_zone="UTC")


@settings(max_examples=60, deadline=None)
@given(downloads=download_lists())
def test_download_list_round_trips_through_the_page(bare_data, downloads):
    rows = page_downloads(html.page(bare_data, release=_release(downloads)))
    assert [(r["data-file"], int(r["data-bytes"]), r["data-sha256"]) for r in rows] == \
        [(d.path, d.size_bytes, d.sha256) for d in downloads]


def test_a_report_page_has_no_download_list(bare_data):
    assert page_downloads(html.page(bare_data)) == []


# --- issue 30: files present in an archive but listed nowhere --------------------------------

EXAMPLE = Path(__file__).resolve().parent.parent / "archive" / "example"
TARBALL = "aaic-synthetic-sample-1.0.0.tar.gz"
ADDED = {"extra.txt": b"not in the release\n", "data/notes.txt": b"nor this\n"}


def _unlisted(root: Path) -> set[str]:
    """The findings expected for files listed nowhere, worked out here without swftools: the
    files on disk (os.walk) minus the paths SHA256SUMS names (``digest  path`` lines) and minus
    the page's ``data-file`` attributes (a regular expression)."""
    on_disk = {Path(d, f).relative_to(root).as_posix()
               for d, _, files in os.walk(root) for f in files}
    on_disk -= {".swftools-output"}  # the output marker: local bookkeeping
    on_disk = {f for f in on_disk if not f.endswith(".tar.gz")}
    summed = {line.split("  ", 1)[1]
              for line in (root / "SHA256SUMS").read_text().splitlines() if line}
    paged = set(re.findall(r'data-file="([^"]*)"', (root / "index.html").read_text()))
    return ({f"{f}: present but not listed in SHA256SUMS" for f in on_disk - summed - {"SHA256SUMS"}}
            | {f"{f}: present but not in the download list of index.html"
               for f in on_disk - paged - {"SHA256SUMS", "index.html"}})


def _add_files(root: Path) -> None:
    for rel, data in ADDED.items():
        (root / rel).write_bytes(data)


def test_unlisted_files_in_an_archive_folder_are_found(tmp_path):
    copy = tmp_path / "archive"
    shutil.copytree(EXAMPLE, copy)
    assert _unlisted(copy) == set() and verify(copy).ok
    _add_files(copy)
    expected = _unlisted(copy)
    assert len(expected) == 2 * len(ADDED)  # each file: once per list
    report = verify(copy)
    assert sorted(report.problems) == sorted(expected), report.render()


def test_unlisted_files_in_a_tarball_are_found(tmp_path):
    with tarfile.open(EXAMPLE / TARBALL, "r:gz") as tar:
        tar.extractall(tmp_path / "x", filter="data")
    (top,) = (tmp_path / "x").iterdir()
    _add_files(top)
    expected = _unlisted(top)
    assert len(expected) == 2 * len(ADDED)
    repacked = tmp_path / TARBALL
    with tarfile.open(repacked, "w:gz") as tar:
        tar.add(top, arcname=top.name)
    report = verify(repacked)
    assert sorted(report.problems) == sorted(expected), report.render()
