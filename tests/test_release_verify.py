"""swftools.release.verify: the page's download list, written by the template and read back."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings

from swftools import synth
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
