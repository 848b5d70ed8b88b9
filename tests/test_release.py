"""End-to-end release and verify on the bundled sample; determinism; the example archive is current."""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swftools.privacy.audit import audit, names_from_table
from swftools.errors import InputError, UsageError
from swftools.formats import read
from swftools.release import release, verify
from swftools.release.tarball import archive_files

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "aaic-sample.csv.gz"
SETTINGS = ROOT / "archive" / "release-settings.example.json"
KEY_FILE = ROOT / "archive" / "example-key.txt"
EXAMPLE = ROOT / "archive" / "example"
KEY = KEY_FILE.read_text().strip().encode()


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "archive"
    release(SAMPLE, out, version="1.0.0", settings=SETTINGS, key=KEY)
    return out


def test_release_layout(archive):
    files = archive_files(archive)
    assert files == sorted([
        ".zenodo.json", "CITATION.cff", "LICENSE", "README.md", "SHA256SUMS", "VALIDATION.json",
        "aaic-synthetic-sample-1.0.0.tar.gz", "data/jobs.csv.gz", "data/jobs.parquet",
        "data/jobs.swf.gz", "datapackage.json", "index.html", "schemas/jobs-parquet.json",
        "schemas/jobs.json"])
    readme = (archive / "README.md").read_text()
    for section in ("## The system", "## Fields", "## Summary", "## Known issues",
                    "## Loading the data", "## How to cite", "## License"):
        assert section in readme
    assert "`requested_walltime_s` | integer | s |" in readme
    assert "CC-BY-SA-4.0" in (archive / "LICENSE").read_text() or "ShareAlike" in (archive / "LICENSE").read_text()
    assert json.loads((archive / "VALIDATION.json").read_text())["valid"] is True
    desc = json.loads((archive / "datapackage.json").read_text())
    assert desc["version"] == "1.0.0" and desc["licenses"][0]["name"] == "CC-BY-SA-4.0"


def test_archive_verifies_and_leaks_no_raw_name(archive):
    report = verify(archive)
    assert report.ok, report.render()
    raw_names = names_from_table(read(SAMPLE))
    result = audit(archive, names=raw_names, key=KEY)
    assert result.clean, result.render()
    tar_report = verify(archive / "aaic-synthetic-sample-1.0.0.tar.gz", names=raw_names)
    assert tar_report.ok, tar_report.render()


def test_tampered_file_fails_verify(archive, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(archive, copy)
    readme = copy / "README.md"
    readme.write_text(readme.read_text() + "\ntampered\n")
    report = verify(copy)
    assert not report.ok
    assert "README.md: SHA-256 does not match SHA256SUMS (file changed)" in report.problems


def test_landing_page_lists_every_file_with_size_and_checksum(archive):
    from swftools.fileio import sha256_file
    from swftools.release.verify import page_downloads

    text = (archive / "index.html").read_text(encoding="utf-8")
    rows = page_downloads(text)
    expected = [f for f in archive_files(archive)
                if f not in ("index.html", "SHA256SUMS") and not f.endswith(".tar.gz")]
    assert [r["data-file"] for r in rows] == expected
    for row in rows:
        path = archive / row["data-file"]
        assert row["data-sha256"] == sha256_file(path)
        assert row["data-bytes"] == str(path.stat().st_size)
    assert 'href="aaic-synthetic-sample-1.0.0.tar.gz"' in text
    assert 'id="cite"' in text and "https://github.com/swftools/swftools" in text
    assert '<a href="https://creativecommons.org/licenses/by-sa/4.0/">' in text
    assert "keyed pseudonyms (HMAC-SHA256)" in text
    assert "Validation rules run without a finding" in text and "Recorded starts impossible" in text


def _resum(root: Path) -> None:
    from swftools.release.tarball import write_checksums

    write_checksums(root, exclude=("aaic-synthetic-sample-1.0.0.tar.gz",))


def test_page_checksums_that_do_not_match_fail_verify(archive, tmp_path):
    """A file changed with SHA256SUMS rewritten to match is still caught by the page's list."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(archive, copy)
    (copy / "README.md").write_text((copy / "README.md").read_text() + "\ntampered\n")
    _resum(copy)
    report = verify(copy)
    assert report.problems == ["index.html: SHA-256 of README.md does not match the page"]
    (copy / "extra.txt").write_text("not in the release\n")
    _resum(copy)
    assert "extra.txt: present but not in the download list of index.html" in verify(copy).problems
    (copy / "index.html").unlink()
    _resum(copy)
    assert "index.html is missing (the archive's landing page)" in verify(copy).problems


def test_tampered_page_fails_verify(archive, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(archive, copy)
    page = copy / "index.html"
    page.write_text(page.read_text().replace("Headline numbers", "Headline figures"))
    assert "index.html: SHA-256 does not match SHA256SUMS (file changed)" in verify(copy).problems


def test_swf_disagreeing_with_the_package_fails_verify(archive, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(archive, copy)
    swf_path = copy / "data" / "jobs.swf.gz"
    lines = gzip.decompress(swf_path.read_bytes()).decode().splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if not line.startswith(";"))
    fields = lines[i].split()
    fields[3] = str(int(fields[3]) + 1)  # run time of the first job
    lines[i] = " ".join(fields) + "\n"
    swf_path.write_bytes(gzip.compress("".join(lines).encode(), mtime=0))
    report = verify(copy)
    assert any(p.startswith("SWF field 4 (run time) disagrees with the package on 1 job ")
               for p in report.problems), report.problems
    assert any(p.startswith("data/jobs.swf.gz: SHA-256 does not match") for p in report.problems)


def test_release_is_byte_identical_across_hash_seeds(archive, tmp_path):
    # the module's archive was made in this process, under its hash seed (random unless
    # PYTHONHASHSEED is set); one CLI release under another fixed seed must give the same bytes
    seed = "1" if os.environ.get("PYTHONHASHSEED") == "987" else "987"
    out = tmp_path / "cli"
    env = dict(os.environ, PYTHONHASHSEED=seed, SWFTOOLS_ANON_KEY=KEY.decode())
    subprocess.run([sys.executable, "-m", "swftools.cli", "release", str(SAMPLE), "--out", str(out),
                    "--version", "1.0.0", "--settings", str(SETTINGS)],
                   check=True, env=env, capture_output=True)
    files = archive_files(archive)
    assert files == archive_files(out)
    for rel in files:
        assert (archive / rel).read_bytes() == (out / rel).read_bytes(), rel


def test_example_archive_is_current(archive):
    """archive/example is rebuilt by `make example-archive`; this fails when it is stale."""
    assert archive_files(EXAMPLE) == archive_files(archive), "run `make example-archive`"
    for rel in archive_files(archive):
        assert (EXAMPLE / rel).read_bytes() == (archive / rel).read_bytes(), (
            f"archive/example/{rel} is stale: run `make example-archive`")


def test_raw_log_without_key_is_refused(tmp_path):
    with pytest.raises(UsageError, match="raw user/group names"):
        release(SAMPLE, tmp_path / "out", version="1.0.0", settings=SETTINGS)
    assert not (tmp_path / "out").exists()


def test_existing_output_is_untouched_without_force(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="already exists"):
        release(SAMPLE, out, version="1.0.0", settings=SETTINGS, key=KEY)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_invalid_version_and_settings_are_clear_errors(tmp_path):
    with pytest.raises(UsageError, match="not a semantic version"):
        release(SAMPLE, tmp_path / "out", version="1.0", settings=SETTINGS, key=KEY)
    bad = tmp_path / "settings.json"
    bad.write_text(json.dumps({"name": "x"}))
    with pytest.raises(InputError, match="invalid release settings"):
        release(SAMPLE, tmp_path / "out", version="1.0.0", settings=bad, key=KEY)
    assert not (tmp_path / "out").exists()


def test_source_failing_validation_is_refused_and_output_untouched(tmp_path):
    # a job that finishes 10 s later than start + walltime: wait/walltime arithmetic errors
    lines = gzip.decompress(SAMPLE.read_bytes()).decode().splitlines(keepends=True)
    header, first = lines[0], lines[1].rstrip("\n").split(",")
    cols = [c.strip() for c in header.strip().split(",")]
    first[cols.index("walltime")] = "00:00:00" if ":" in first[cols.index("walltime")] else "0"
    bad = tmp_path / "bad.csv"
    bad.write_text(header + ",".join(first) + "\n" + "".join(lines[2:50]))
    out = tmp_path / "out"
    with pytest.raises(InputError, match="validation found"):
        release(bad, out, version="1.0.0", settings=SETTINGS, key=KEY)
    assert not out.exists()
    result = release(bad, out, version="1.0.0", settings=SETTINGS, key=KEY, accept_errors=True)
    assert "walltime-arithmetic" in (out / "README.md").read_text()
    assert not result.validation.valid


@pytest.mark.slow
def test_release_with_telemetry_adds_job_telemetry(tmp_path):
    from swftools.telemetry import generate_telemetry

    lines = gzip.decompress(SAMPLE.read_bytes()).decode().splitlines(keepends=True)
    small = tmp_path / "small.csv"
    small.write_text("".join(lines[:301]))  # header + 300 jobs (the first day)
    jobs = read(small)
    exports = tmp_path / "exports"
    # samples of the first 6 hours (one query chunk) on 8 nodes: jobs after it or not placed get
    # null figures with a reason, which the release must carry too; a whole day on 38 nodes
    # made this the slowest test of the suite (generating and reading 3 M JSON samples)
    generate_telemetry(jobs, exports, formats=("prometheus-json-raw",), days=0.25, nodes=8)
    out = tmp_path / "archive"
    release(small, out, version="1.0.0", settings=SETTINGS, key=KEY,
            telemetry={"samples": [exports / "prometheus-json-raw"],
                       "allocations": exports / "allocations.csv"})
    desc = json.loads((out / "datapackage.json").read_text())
    names = [r["name"] for r in desc["resources"]]
    assert "job_telemetry" in names
    assert "data/job_telemetry.csv.gz" in (out / "README.md").read_text()
    report = verify(out)
    assert report.ok, report.render()
    assert "frictionless validate (resource job_telemetry): valid" in report.checks
    with gzip.open(out / "data" / "job_telemetry.csv.gz", "rt") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 300  # every job, with or without samples
    observed = [r for r in rows if r["gpu_samples_observed"] not in ("", "0")]
    assert observed and len(observed) < len(rows)
    assert all(r["telemetry_null_reason"] for r in rows if r not in observed)


def test_unusable_output_location_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(UsageError, match="output parent is not an existing directory"):
        release(SAMPLE, blocker / "out", version="1.0.0", settings=SETTINGS, key=KEY)
    # root can write anywhere, so simulate a read-only parent through os.access
    import swftools.release.pipeline as pipeline

    monkeypatch.setattr(pipeline.os, "access", lambda path, mode: False)
    with pytest.raises(UsageError, match="not writable"):
        release(SAMPLE, tmp_path / "out", version="1.0.0", settings=SETTINGS, key=KEY)
    assert not (tmp_path / "out").exists()
