"""swftools.release.verify: the page's download list, written by the template and read back."""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import shutil
import sys
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings

from swftools import synth
from swftools.release import verify
from swftools.release.verify import (
    VerifyReport,
    archive_path_problem,
    check_checksums,
    check_page,
    page_downloads,
    parse_checksum_lines,
)
from swftools.report import analyze, html
from tests.strategies import download_lists, examples


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


@settings(max_examples=examples(30), deadline=None)
@given(downloads=download_lists())
def test_download_list_round_trips_through_the_page(bare_data, downloads):
    """The strategy's awkward cases are forced by its alphabet (16 characters: space, quotes,
    ampersand, angle brackets, non-ASCII) and sizes (0 to 6 rows, 0 to 10**12 bytes), so 30
    examples (x SWFTOOLS_TEST_DEPTH) find what 60 did."""
    rows = page_downloads(html.page(bare_data, release=_release(downloads)))
    assert [(r["data-file"], int(r["data-bytes"]), r["data-sha256"]) for r in rows] == \
        [(d.path, d.size_bytes, d.sha256) for d in downloads]


def test_a_report_page_has_no_download_list(bare_data):
    assert page_downloads(html.page(bare_data)) == []


# --- issue 30: files present in an archive but listed nowhere --------------------------------

EXAMPLE = Path(__file__).resolve().parent.parent / "archive" / "example"
TARBALL = "aaic-synthetic-sample-1.0.0.tar.gz"
ADDED = {"extra.txt": b"not in the release\n", "data/notes.txt": b"nor this\n",
         "data/a note.txt": b"a space in its name\n"}


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


# --- issue 30: what verify prints (text and JSON) --------------------------------------------

def test_report_renders_checks_problems_and_the_audit_note():
    from swftools.release.verify import report_json
    ok = VerifyReport("a", checks=["c1", "c2"], nothing_to_search="no names")
    assert ok.ok and ok.render() == "a: OK\n  ok: c1\n  ok: c2\n  leak audit: no names"
    one = VerifyReport("b", problems=["p1"], checks=["c1"])
    assert not one.ok and one.render() == "b: 1 problem\n  ok: c1\n  problem: p1"
    two = VerifyReport("c", problems=["p1", "p2"])
    assert two.render() == "c: 2 problems\n  problem: p1\n  problem: p2"
    assert one.to_dict() == {"path": "b", "ok": False, "checks": ["c1"], "problems": ["p1"],
                             "nothing_to_search": None}
    assert ok.to_dict()["ok"] is True and ok.to_dict()["nothing_to_search"] == "no names"
    assert report_json(one) == ('{\n  "checks": [\n    "c1"\n  ],\n  "nothing_to_search": null,\n'
                                '  "ok": false,\n  "path": "b",\n  "problems": [\n    "p1"\n  ]\n}\n')


def test_a_tarball_that_is_not_gzip_compressed_is_refused(tmp_path):
    from swftools.errors import InputError
    plain = tmp_path / TARBALL
    with tarfile.open(EXAMPLE / TARBALL, "r:gz") as src, tarfile.open(plain, "w") as out:
        for info in src.getmembers():
            out.addfile(info, src.extractfile(info) if info.isfile() else None)
    with pytest.raises(InputError) as err:
        verify(plain)
    assert str(err.value).startswith(f"{plain}: not a readable .tar.gz (")


# --- issue 30: every check's finding, word for word ------------------------------------------

@pytest.mark.parametrize("rel, why", [
    ("", "an empty path"),
    ("/etc/x", "an absolute path"),
    ("C:x", "an absolute path"),
    ("z:/x", "an absolute path"),
    ("a\\b", "a backslash or control character in the path"),
    ("a\x01b", "a backslash or control character in the path"),
    ("a\x7fb", "a backslash or control character in the path"),
    ("a\x1fb", "a backslash or control character in the path"),
    ("a/../b", "a path that climbs out of the archive ('..')"),
    ("..", "a path that climbs out of the archive ('..')"),
    ("a//b", "a path with an empty or '.' part"),
    ("./a", "a path with an empty or '.' part"),
    ("a/", "a path with an empty or '.' part"),
    ("a/b.txt", None), ("a..b/c...d", None), ("1:x", None), ("xC:y", None), ("a b/ü~.txt", None),
])
def test_archive_path_problem_names_each_kind_of_bad_path(rel, why):
    assert archive_path_problem(rel) == why


def _sums_report(root: Path, text: str | bytes) -> list[str]:
    data = text if isinstance(text, bytes) else text.encode()
    (root / "SHA256SUMS").write_bytes(data)
    report = VerifyReport(str(root))
    check_checksums(root, report)
    return report.problems + report.checks


A = "a" * 64
A_TXT = "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"  # sha256(b"a\n")


def test_checksum_lines_are_read_as_sha256sum_writes_them():
    text = (f"{A.upper()}  up.txt\n\n   \n{'b' * 64} *bin.dat\n{'c' * 64} one.txt\n"
            f"{'d' * 64}  sp ace.txt\n{'e' * 64}   lead.txt")
    listed, problems = parse_checksum_lines(text)
    assert listed == {"up.txt": A, "bin.dat": "b" * 64, "one.txt": "c" * 64,
                      "sp ace.txt": "d" * 64, " lead.txt": "e" * 64}
    assert problems == []


def test_bad_checksum_lines_are_located_and_explained():
    text = (f"{A}  ok.txt\n{A[:-1]}  short.txt\n{A}g  long.txt\nnospace\n{A}  ../x\n"
            f"{A}  ok.txt\n")
    listed, problems = parse_checksum_lines(text)
    assert listed == {"ok.txt": A}
    line = "(expected a SHA-256 in hex, two spaces, a relative path)"
    assert problems == [
        f"SHA256SUMS:2: not a checksum line: '{A[:-1]}  short.txt' {line}",
        f"SHA256SUMS:3: not a checksum line: '{A}g  long.txt' {line}",
        f"SHA256SUMS:4: not a checksum line: 'nospace' {line}",
        ("SHA256SUMS:5: '../x' is a path that climbs out of the archive ('..'); only relative "
        "paths inside the archive are checked"),
        "SHA256SUMS:6: 'ok.txt' is listed twice"]


def test_checksum_findings_name_each_file(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "a.txt").write_bytes(b"a\n")
    (tmp_path / "data" / "b.txt").write_bytes(b"b\n")
    (tmp_path / "t.tar.gz").write_bytes(b"not listed, not reported")
    (tmp_path / "data" / "c d.txt").write_bytes(b"a\n")
    assert _sums_report(tmp_path, f"{A_TXT}  a.txt\n{A}  data/b.txt\n{A}  gone.txt\n"
                                  f"{A}  data\n{A_TXT}  data/c d.txt\n") == [
        "data: listed in SHA256SUMS but is not a regular file inside the archive",
        "data/b.txt: SHA-256 does not match SHA256SUMS (file changed)",
        "gone.txt: listed in SHA256SUMS but missing",
        "SHA256SUMS: 5 files"]
    assert _sums_report(tmp_path, f"{A_TXT}  a.txt\n") == [
        "data/b.txt: present but not listed in SHA256SUMS",
        "data/c d.txt: present but not listed in SHA256SUMS", "SHA256SUMS: 1 file"]
    assert _sums_report(tmp_path, b"\xff\xfe") == ["SHA256SUMS is not UTF-8 text"]
    (tmp_path / "SHA256SUMS").unlink()
    report = VerifyReport("x")
    check_checksums(tmp_path, report)
    assert (report.problems, report.checks) == (["SHA256SUMS is missing"], [])
    (tmp_path / "SHA256SUMS").mkdir()
    check_checksums(tmp_path, report := VerifyReport("x"))
    assert report.problems == ["SHA256SUMS is not a regular file inside the archive"]


def _page(root: Path, rows: list[tuple[str, str, str]]) -> list[str]:
    body = "".join(f'<tr data-file="{f}" data-bytes="{b}" data-sha256="{s}"><td>{f}</td></tr>'
                   for f, b, s in rows)
    (root / "index.html").write_text(f"<table><tr><th>file</th></tr>{body}</table>")
    report = VerifyReport(str(root))
    check_page(root, report)
    return report.problems + report.checks


def test_page_findings_name_each_download(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"a\n")
    (tmp_path / "b.txt").write_bytes(b"b\n")
    (tmp_path / "SHA256SUMS").write_text("")
    (tmp_path / "t.tar.gz").write_bytes(b"")
    (tmp_path / "dir").mkdir()
    assert _page(tmp_path, [("a.txt", "2", A_TXT), ("b.txt", "2", A_TXT), ("../x", "1", A),
                            ("gone.txt", "1", A), ("dir", "1", A)]) == [
        "index.html: SHA-256 of b.txt does not match the page",
        ("index.html: download '../x' is a path that climbs out of the archive ('..'), not a "
        "file of the archive"),
        "index.html: lists gone.txt, which is missing (or not a regular file inside the archive)",
        "index.html: lists dir, which is missing (or not a regular file inside the archive)",
        "index.html: download list of 5 files"]
    assert _page(tmp_path, [("a.txt", "3", A_TXT)]) == [
        "index.html: size of a.txt does not match the page",
        "b.txt: present but not in the download list of index.html",
        "index.html: download list of 1 file"]
    assert _page(tmp_path, [("a.txt", "2", A_TXT.upper())])[0] == \
        "index.html: SHA-256 of a.txt does not match the page"


def test_a_verified_archive_lists_each_check_it_passed():
    report = verify(EXAMPLE)
    assert report.problems == [] and report.nothing_to_search is None
    assert report.path == str(EXAMPLE) and report.render().startswith(f"{EXAMPLE}: OK\n")
    assert report.checks == [
        "SHA256SUMS: 12 files", "index.html: download list of 11 files",
        f"swftools validate: {EXAMPLE}: valid: 0 errors, 0 warnings, 0 info",
        "frictionless validate (resource jobs): valid", "SWF and package agree on 5000 jobs"]


def test_the_leak_audit_runs_when_names_or_hosts_are_given():
    assert verify(EXAMPLE, names=["alice"]).checks[-1] == "leak audit: no raw name found"
    assert verify(EXAMPLE, hosts=["node1"]).checks[-1] == "leak audit: no raw name found"
    empty = verify(EXAMPLE, names=[])
    assert empty.ok and empty.checks[-1] == "SWF and package agree on 5000 jobs"
    assert empty.nothing_to_search.startswith("nothing to search for: the raw input holds no ")
    leaked = verify(EXAMPLE, names=["synthetic"])  # a word of the archive's title
    (problem,) = leaked.problems
    assert problem.startswith("leak audit:\n") and "README.md:1: name 'synthetic'" in problem
    assert leaked.checks[-1] == "SWF and package agree on 5000 jobs"


def test_a_missing_archive_is_an_input_error(tmp_path):
    from swftools.errors import InputError
    with pytest.raises(InputError) as err:
        verify(tmp_path / "nope")
    assert str(err.value) == f"{tmp_path / 'nope'}: no such archive folder or tarball"


def _swf_findings(root: Path) -> list[str]:
    from swftools.formats import datapackage
    from swftools.release.verify import check_swf_agreement
    report = VerifyReport(str(root))
    check_swf_agreement(root, datapackage.read(root), report)
    return report.problems + report.checks


def test_swf_findings_say_what_disagrees(tmp_path):
    """Each field that disagrees is named with its first job, and then no "agree" check."""
    copy = tmp_path / "archive"
    shutil.copytree(EXAMPLE, copy)
    swf_path = copy / "data" / "jobs.swf.gz"
    original = swf_path.read_bytes()
    lines = gzip.decompress(original).decode().splitlines(keepends=True)
    jobs = [i for i, line in enumerate(lines) if not line.startswith(";")]
    changed = list(lines)
    for i in jobs[2:4]:
        fields = changed[i].split()
        fields[4] = str(int(fields[4]) + 7)  # allocated processors
        changed[i] = " ".join(fields) + "\n"
    first = lines[jobs[2]].split()
    swf_path.write_bytes(gzip.compress("".join(changed).encode(), mtime=0))
    assert _swf_findings(copy) == [
        (f"SWF field 5 (allocated processors) disagrees with the package on 2 jobs (first: job "
        f"{first[0]}: SWF {int(first[4]) + 7}, package {first[4]})")]
    swf_path.write_bytes(gzip.compress("".join(lines[:jobs[-1]]).encode(), mtime=0))
    assert _swf_findings(copy) == ["SWF has 4999 jobs, the package 5000"]
    swf_path.write_bytes(b"\x1f\x8b not gzip")
    (unreadable,) = _swf_findings(copy)
    assert unreadable.startswith(f"SWF unreadable: {swf_path}")
    swf_path.unlink()
    swf_path.mkdir()
    assert _swf_findings(copy) == ["data/jobs.swf.gz is missing"]
    swf_path.rmdir()
    assert _swf_findings(copy) == ["data/jobs.swf.gz is missing"]


def test_package_findings_come_from_validate_and_frictionless(tmp_path):
    copy = tmp_path / "archive"
    shutil.copytree(EXAMPLE, copy)
    csv_path = copy / "data" / "jobs.csv.gz"
    rows = gzip.decompress(csv_path.read_bytes()).decode().split("\n")
    for i in range(1, 13):  # twelve negative GPU counts
        rows[i] = rows[i].replace('"Normal",1,1,1,', '"Normal",1,1,-1,', 1)
    csv_path.write_bytes(gzip.compress("\n".join(rows).encode(), mtime=0))
    report = verify(copy)
    fl = [p for p in report.problems if p.startswith("frictionless: jobs: ")]
    assert len(fl) == 10  # the first ten of the resource's errors
    assert fl[0] == ('frictionless: jobs: The cell "-1" in row at position "2" and field "gpus" at '
                     'position "8" does not conform to a constraint: constraint "minimum" is "0"')
    checks = [c for c in report.checks if c.startswith(("swftools validate", "frictionless"))]
    assert checks[0].startswith(f"swftools validate: {copy}: INVALID: ")
    assert len(checks) == 1  # no "valid" for the jobs resource
    assert any(p.startswith("validation: ") and "[package-integrity]" in p
               for p in report.problems)
    (copy / "datapackage.json").unlink()
    report = verify(copy)
    assert f"data package unreadable: {copy / 'datapackage.json'}: no such file (expected a data " \
           "package directory holding datapackage.json)" in report.problems
    assert not [c for c in report.checks if c.startswith(("swftools validate", "SWF"))]


def test_an_os_error_while_reading_is_a_problem_not_a_traceback(monkeypatch):
    """A failing disk (EIO) while the package or the SWF file is read is reported, located."""
    import errno
    verify_mod = sys.modules["swftools.release.verify"]

    def failing(path, *args, **kwargs):
        raise OSError(errno.EIO, "Input/output error", str(path))

    monkeypatch.setattr(verify_mod.swf, "read", failing)
    swf_path = EXAMPLE / "data" / "jobs.swf.gz"
    assert verify(EXAMPLE).problems == [
        f"SWF unreadable: {swf_path}: cannot read or write: Input/output error [EIO]"]
    monkeypatch.setattr(verify_mod.datapackage, "read", failing)
    assert verify(EXAMPLE).problems == [
        f"data package unreadable: {EXAMPLE}: cannot read or write: Input/output error [EIO]"]


def test_a_page_that_is_not_utf8_is_still_read(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"a\n")
    (tmp_path / "index.html").write_bytes(
        f'<p>\xff</p><tr data-file="a.txt" data-bytes="2" data-sha256="{A_TXT}">'.encode("latin-1"))
    report = VerifyReport(str(tmp_path))
    check_page(tmp_path, report)
    assert (report.problems, report.checks) == ([], ["index.html: download list of 1 file"])


def test_a_download_attribute_without_a_value_reads_as_empty():
    assert page_downloads('<table><TR DATA-FILE="a" data-bytes><td>a</td></TR></table>') == [
        {"data-file": "a", "data-bytes": ""}]


def test_a_missing_page_is_one_problem(tmp_path):
    report = VerifyReport(str(tmp_path))
    check_page(tmp_path, report)
    assert (report.problems, report.checks) == (
        ["index.html is missing (the archive's landing page)"], [])


def test_a_download_name_with_a_nul_character_is_a_problem_not_a_crash(tmp_path):
    (tmp_path / "index.html").write_text('<tr data-file="a\x00b" data-bytes="1" data-sha256="x">')
    report = VerifyReport(str(tmp_path))
    check_page(tmp_path, report)
    assert report.problems == ["index.html: download 'a\\x00b' is a backslash or control "
                               "character in the path, not a file of the archive"]


def test_frictionless_checks_every_csv_resource_and_reports_package_errors(tmp_path):
    copy = tmp_path / "archive"
    shutil.copytree(EXAMPLE, copy)
    (copy / "data" / "extra.csv").write_text("n\n1\nx\n")
    desc = json.loads((copy / "datapackage.json").read_text())
    desc["resources"].append({"name": "extra", "path": "data/extra.csv", "format": "csv",
                              "schema": {"fields": [{"name": "n", "type": "integer"}]}})
    (copy / "datapackage.json").write_text(json.dumps(desc))
    report = verify(copy)
    assert "frictionless validate (resource jobs): valid" in report.checks
    assert [p for p in report.problems if p.startswith("frictionless")] == [
        'frictionless: extra: Type error in the cell "x" in row "3" and field "n" at position '
        '"1": type is "integer/default"']
    desc["resources"][0]["schema"] = "schemas/nope.json"
    (copy / "datapackage.json").write_text(json.dumps(desc))
    found = [p for p in verify(copy).problems if p.startswith("frictionless")]
    assert found and all(p.startswith("frictionless: Schema is not valid: cannot retrieve "
                                      "metadata") and "nope.json" in p for p in found)


def test_at_most_ten_of_frictionless_package_errors_are_listed_per_resource(tmp_path):
    """A resource whose 12 fields frictionless each refuses (a format that is not text): the
    package cannot be opened, so each of the two CSV resources' validations lists the first 10
    of those errors, no more."""
    copy = tmp_path / "archive"
    shutil.copytree(EXAMPLE, copy)
    names = [f"n{k}" for k in range(12)]
    (copy / "data" / "extra.csv").write_text(",".join(names) + "\n" + ",".join("1" * 12) + "\n")
    desc = json.loads((copy / "datapackage.json").read_text())
    desc["resources"].append({"name": "extra", "path": "data/extra.csv", "format": "csv",
                              "schema": {"fields": [{"name": n, "type": "integer", "format": 5}
                                                    for n in names]}})
    (copy / "datapackage.json").write_text(json.dumps(desc))
    found = [p for p in verify(copy).problems if p.startswith("frictionless")]
    assert found == ["frictionless: Field is not valid: 5 is not of type 'string' at property "
                     "'format'"] * 20
