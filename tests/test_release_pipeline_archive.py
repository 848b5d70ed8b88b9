"""swftools.release.pipeline's archive writer (``_write_archive`` and ``_landing_page``) called
directly on a small job table: every file it writes against the settings, the licence, the site
and the telemetry it is given, and its text files written as UTF-8 whatever the locale."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import html
import json
import locale
import sys
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from swftools import __version__, formats
from swftools import table as jt
from swftools.release import pipeline
from swftools.release.verify import page_downloads
from swftools.site import resolve_site
from swftools.telemetry import output
from swftools.validate.report import Finding, Report

from .validate_support import swf_line, write_swf
from tests.conftest import stubbed_figures
from tests.test_release_pipeline import SETTINGS

RULE = "job-exceeds-machine"  # a warning rule: the page's validation table names its finding
CC_NAME = "Creative Commons Attribution-ShareAlike 4.0 International"
CC_URL = "https://creativecommons.org/licenses/by-sa/4.0/"
SWF_ROW = ("| `data/jobs.swf.gz` | the same jobs in the Standard Workload Format (SWF 2.2) of the "
           "Parallel Workloads Archive |")
VALIDATION_ROW = ("| `VALIDATION.json` | the validation report this release was checked with "
                  "(`swftools validate --json`) |")
TELEMETRY_ROW = ("| `data/job_telemetry.csv.gz`, `data/job_telemetry.parquet` | per-job GPU and "
                 "node telemetry aggregates (foreign key `job_id` -> jobs) |")
TELEMETRY_STEP = ("telemetry: sample and allocation file names replaced by 'source N', host "
                  "labels, Prometheus warnings and site metric-map names left out of the metadata "
                  "(only per-job aggregates are published)")
CONVERTED = (f"converted with swftools {__version__} to a Frictionless data package and to SWF 2.2 "
             "(times as UTC epoch seconds)")


def _table(folder: Path, site=None, **meta_changes) -> pa.Table:
    """Twelve SWF jobs (numeric users 1-3, groups 1-2, 1/4/16 processors; think time -1, unknown,
    in every line), read with ``site``; metadata keys set to None are dropped."""
    lines = [swf_line(i + 1, submit=600 * i, procs=(1, 4, 16)[i % 3], req_procs=(1, 4, 16)[i % 3],
                      user=1 + i % 3, group=1 + i % 2) for i in range(12)]
    table = formats.read(write_swf(folder / "jobs.swf", lines), site=site)
    meta = {**jt.get_metadata(table), **meta_changes}
    return jt.with_metadata(table, {k: v for k, v in meta.items() if v is not None})


def _validation(path: str) -> Report:
    report = Report(path)
    report.add(Finding(path, 21, 1, "gpus", RULE, "warning", "première ligne trop large"))
    return report


def _settings(**changes) -> dict:
    settings = json.loads(SETTINGS.read_text(encoding="utf-8"))
    settings.update(changes)
    return {k: v for k, v in settings.items() if v is not None}


def _write(root: Path, table, site, settings, *, telemetry=None, validation=None,
           findings=("replay finding one", "replay finding two")) -> dict[str, str]:
    root.mkdir()
    with stubbed_figures():
        return pipeline._write_archive(root, table, site, settings, "2.1.0",
                                       validation or _validation("données.swf"), list(findings),
                                       False, telemetry)


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and p.name != ".swftools-output")


def _section(text: str, heading: str) -> str:
    """A README section's body: from its heading to the next one."""
    return text.split(f"\n## {heading}\n\n", 1)[1].split("\n## ", 1)[0]


def _sorted_everywhere(pairs: list[tuple[str, object]]) -> dict:
    keys = [k for k, _ in pairs]
    assert keys == sorted(keys), keys
    return dict(pairs)


def test_archive_of_a_cc_by_sa_release_without_site(tmp_path):
    """The example settings (CC BY-SA 4.0, an acknowledgement, a source path), no site, no
    telemetry, a table whose recorded time zone is Europe/Paris."""
    table = _table(tmp_path, time_zone="Europe/Paris")
    settings = _settings()
    root = tmp_path / "out"
    digests = _write(root, table, None, settings)
    assert _files(root) == [".zenodo.json", "CITATION.cff", "LICENSE", "README.md",
                            "VALIDATION.json", "data/jobs.csv.gz", "data/jobs.parquet",
                            "data/jobs.swf.gz", "datapackage.json", "index.html",
                            "schemas/jobs-parquet.json", "schemas/jobs.json"]
    # the digests the page lists: every file written before it
    assert digests == {rel: hashlib.sha256((root / rel).read_bytes()).hexdigest()
                       for rel in _files(root) if rel != "index.html"}
    desc = json.loads((root / "datapackage.json").read_text(encoding="utf-8"))
    assert (desc["name"], desc["title"], desc["version"], desc["description"]) == (
        "aaic-synthetic-sample", settings["title"], "2.1.0", settings["description"])
    assert desc["licenses"] == [{"name": "CC-BY-SA-4.0", "path": CC_URL, "title": CC_NAME}]
    assert desc["sources"] == [{"title": "swftools synth (seed 2019, 5,000 jobs) "
                                         "(samples/aaic-sample.csv.gz)"}]
    # VALIDATION.json: the report, sorted keys, 2-space indent, UTF-8 kept, one final newline
    text = (root / "VALIDATION.json").read_text(encoding="utf-8")
    expected = _validation("données.swf").to_json()
    assert json.loads(text, object_pairs_hook=_sorted_everywhere) == expected
    assert text.startswith('{\n  "counts": [') and text.endswith("\n}\n")
    assert '"path": "données.swf"' in text and "première ligne trop large" in text
    cff = yaml.safe_load((root / "CITATION.cff").read_text(encoding="utf-8"))
    assert (cff["title"], cff["version"], cff["license"]) == (settings["title"], "2.1.0",
                                                              "CC-BY-SA-4.0")
    zenodo = json.loads((root / ".zenodo.json").read_text(encoding="utf-8"))
    assert (zenodo["title"], zenodo["version"], zenodo["license"]) == (settings["title"], "2.1.0",
                                                                        "cc-by-sa-4.0")
    assert (root / "LICENSE").read_text(encoding="utf-8").startswith(
        f"{CC_NAME}\n\nThis dataset is licensed under the {CC_NAME} license (SPDX: `CC-BY-SA-4.0`)")

    readme = (root / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(f"# {settings['title']}\n\nVersion 2.1.0. License: {CC_NAME} "
                             "(`CC-BY-SA-4.0`).\n")
    assert f"{SWF_ROW}\n{VALIDATION_ROW}\n" in readme  # no telemetry row
    assert "the site's local time zone is **Europe/Paris** (stated once" in readme
    assert '.dt.tz_convert("Europe/Paris")' in readme
    assert ("(reads SWF with its default reader; processors are GPUs, see MaxProcs in the SWF "
            "header)") in readme
    fields = {line.split(" | ")[0]: line for line in _section(readme, "Fields").splitlines()}
    assert fields["| `think_time_s`"].endswith(". *(unknown for every job in this release)* |")
    assert fields["| `gpus`"].endswith("(SWF field 5). |")
    assert _section(readme, "Known issues").endswith(
        "\n\n- replay finding one\n- replay finding two\n")
    assert _section(readme, "Acknowledgement") == settings["acknowledgement"] + "\n"
    assert _section(readme, "Changes made to the source data") == (
        f"- {settings['changes'][0]}\n- {CONVERTED}\n\n"
        "Source: swftools synth (seed 2019, 5,000 jobs) (samples/aaic-sample.csv.gz)\n")

    page = (root / "index.html").read_text(encoding="utf-8")
    title = html.escape(settings["title"])
    assert f"<title>{title}</title>" in page and f"<h1>{title}</h1>" in page
    assert (f'<p class="lede">Version 2.1.0. Licence: <a href="{CC_URL}">{CC_NAME}</a> '
            "(CC-BY-SA-4.0).</p>\n<p>A 5,000-job synthetic workload generated by <code>swftools "
            "synth</code> to follow") in page
    assert '<caption id="downloads-caption"><span>Files of version 2.1.0</span></caption>' in page
    assert 'href="aaic-synthetic-sample-2.1.0.tar.gz"' in page
    rows = page_downloads(page)
    assert [(r["data-file"], r["data-bytes"], r["data-sha256"]) for r in rows] == [
        (rel, str((root / rel).stat().st_size), digests[rel]) for rel in sorted(digests)]
    assert "the site's local time zone is Europe/Paris. " in page
    assert ("<p>swftools developers. Synthetic AAIC-like GPU cluster workload (swftools example "
            "archive), version 1.0.0. Generated with <code>swftools synth --jobs 5000 --seed "
            "2019</code>.</p>") in page
    # the plain-text reference from CITATION.cff: authors. title. version. repository.
    assert (f'<pre class="cite">swftools developers. {title}. Version 2.1.0. '
            "https://github.com/swftools/swftools</pre>") in page
    assert (f'(SPDX <code>CC-BY-SA-4.0</code>); legal code: <a href="{CC_URL}legalcode.en">'
            f"{CC_URL}legalcode.en</a>. See") in page
    assert f"<li>{CONVERTED}</li>" in page
    assert ("<p>Source: swftools synth (seed 2019, 5,000 jobs) (samples/aaic-sample.csv.gz)."
            "</p>") in page
    validation = page.split('<section id="validation"', 1)[1].split("</section>", 1)[0]
    assert "Valid: 0 errors, 1 warning" in validation and "première ligne trop large" in validation
    consistency = page.split('<section id="consistency"', 1)[1].split("</section>", 1)[0]
    assert "<li>replay finding one</li>\n<li>replay finding two</li>" in consistency


def _telemetry() -> pa.Table:
    rows = [{"job_id": 1, "gpus_allocated": 1}, {"job_id": 2, "gpus_allocated": 4}]
    table = pa.Table.from_pylist(rows, schema=output.arrow_schema())
    return jt.with_metadata(table, {"telemetry": {"description": "GPU samples of 2 jobs (test)."}})


def test_archive_of_an_own_licence_on_a_site_with_telemetry(tmp_path):
    """An own licence (LicenseRef, verbatim terms), no acknowledgement, the aaic preset
    (Asia/Tokyo; 40 nodes x 8 GPUs), telemetry, and a table that records neither a time zone nor
    its SWF layout (as one read from another format): the site fills them in."""
    site = resolve_site("aaic")
    table = _table(tmp_path, site, time_zone=None, swf_header=None, swf_header_lines=None,
                   swf_layout=None, swf_first_line=None, swf_time_origin=None)
    licence = {"id": "LicenseRef-Lab", "name": "Lab data terms", "url": "https://example.org/terms",
               "text": "Use it kindly."}
    settings = _settings(license=licence, acknowledgement=None)
    root = tmp_path / "out"
    _write(root, table, site, settings, telemetry=_telemetry(), findings=())
    assert {"data/job_telemetry.csv.gz", "data/job_telemetry.parquet",
            "schemas/job_telemetry.json"} < set(_files(root))
    desc = json.loads((root / "datapackage.json").read_text(encoding="utf-8"))
    assert desc["licenses"] == [{"name": "LicenseRef-Lab", "path": "https://example.org/terms",
                                 "title": "Lab data terms"}]
    assert desc["swftools"]["time_zone"] == "Asia/Tokyo"  # the site's
    resource = next(r for r in desc["resources"] if r["name"] == "job_telemetry")
    assert (resource["title"], resource["description"]) == ("Job telemetry",
                                                            "GPU samples of 2 jobs (test).")
    header = gzip.decompress((root / "data" / "jobs.swf.gz").read_bytes()).decode()
    assert "; Installation: AIST AI Cloud (AAIC)\n" in header and "; MaxProcs: 320\n" in header
    assert (root / "LICENSE").read_text(encoding="utf-8") == "Lab data terms\n\nUse it kindly.\n"

    readme = (root / "README.md").read_text(encoding="utf-8")
    assert f"{SWF_ROW}\n{TELEMETRY_ROW}\n{VALIDATION_ROW}\n" in readme
    assert "the site's local time zone is **Asia/Tokyo** (stated once" in readme
    assert "**AIST AI Cloud (AAIC)**." in _section(readme, "The system")
    assert "processors are GPUs, 320 in all)" in readme
    assert "## Acknowledgement" not in readme
    assert "`.zenodo.json`.\n\n## License\n\nUse it kindly.\n" in readme
    assert _section(readme, "Changes made to the source data").startswith(
        f"- {settings['changes'][0]}\n- {CONVERTED}\n- {TELEMETRY_STEP}\n\nSource: ")

    page = (root / "index.html").read_text(encoding="utf-8")
    assert ('Licence: <a href="https://example.org/terms">Lab data terms</a> (LicenseRef-Lab).'
            in page)
    assert "(SPDX <code>LicenseRef-Lab</code>). See" in page and "legal code" not in page
    assert "site aaic; processing element: GPU; local time zone Asia/Tokyo)" in page
    assert "the site's local time zone is Asia/Tokyo. " in page
    assert "<li>{}</li>".format(TELEMETRY_STEP.replace("'", "&#39;")) in page  # escaped
    assert 'id="consistency"' not in page  # no replay finding


@contextlib.contextmanager
def _ascii_locale():
    """LC_CTYPE set to C for the block: Python (not in UTF-8 mode) then encodes a text file
    opened without an encoding as ASCII, as under a user's C locale."""
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        assert locale.getpreferredencoding(False).lower().replace("-", "") != "utf8"
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def test_text_files_are_utf8_whatever_the_locale(tmp_path):
    """Under an ASCII locale every text file the writer makes is UTF-8, as the page always
    was: a title, licence name and source path that are not ASCII (before, the first of them
    failed to encode). With neither a site nor a recorded time zone the README says UTC."""
    if sys.flags.utf8_mode:
        pytest.skip("Python's UTF-8 mode ignores the locale's encoding")
    title = "Données GPU — 東京"
    settings = _settings(title=title, license={"id": "LicenseRef-Lab", "name": "Conditions —",
                                               "text": "Usage libre — merci."})
    table = _table(tmp_path, time_zone=None)
    with _ascii_locale():
        _write(tmp_path / "out", table, None, settings, validation=_validation("données.swf"))
    expected = {"README.md": f"# {title}\n", "CITATION.cff": f"title: {title}\n",
                ".zenodo.json": f'"title": "{title}"', "index.html": f"<h1>{title}</h1>",
                "LICENSE": "Conditions —\n\nUsage libre — merci.\n",
                "VALIDATION.json": '"path": "données.swf"'}
    for name, text in expected.items():
        assert text in (tmp_path / "out" / name).read_bytes().decode("utf-8"), name
    readme = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "the site's local time zone is **UTC** (stated once" in readme
