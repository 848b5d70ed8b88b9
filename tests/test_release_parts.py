"""Release building blocks: settings, CITATION.cff / .zenodo.json, deterministic tarball, checksums."""

from __future__ import annotations

import copy
import gzip
import importlib.util
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from swftools.atomic import MARKER
from swftools.errors import InputError, UsageError
from swftools.release import citation
from swftools.release.settings import License, check_version, license_of, load_settings
from swftools.release.tarball import (CHECKSUMS, archive_files, parse_checksums, sha256_file,
                                      write_checksums, write_tarball)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "archive" / "release-settings.example.json"


def cff_schema() -> dict:
    """The CFF 1.2.0 JSON Schema shipped in the cffconvert package (installed by `make dev`)."""
    spec = importlib.util.find_spec("cffconvert")
    assert spec is not None, "cffconvert is not installed: run `make dev` (it provides the CFF schema)"
    path = Path(list(spec.submodule_search_locations)[0]) / "schemas" / "1.2.0" / "schema.json"
    return json.loads(path.read_text())


def example_settings() -> dict:
    return load_settings(EXAMPLE)


def test_example_settings_are_valid_and_default_to_cc_by_sa():
    settings = example_settings()
    lic = license_of(settings)
    assert lic.id == "CC-BY-SA-4.0" and lic.url == "https://creativecommons.org/licenses/by-sa/4.0/"


def test_missing_settings_fields_are_all_reported(tmp_path):
    bad = {k: v for k, v in example_settings().items() if k not in ("title", "contact")}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError) as err:
        load_settings(path)
    assert "'title' is a required property" in str(err.value)
    assert "'contact' is a required property" in str(err.value)


def test_custom_license_needs_verbatim_terms(tmp_path):
    settings = example_settings()
    settings["license"] = {"id": "LicenseRef-AIST-AAIC", "name": "AIST AAIC workload terms"}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(settings))
    with pytest.raises(InputError, match="needs its terms in 'text'"):
        load_settings(path)


@pytest.mark.parametrize("version", ["1", "1.0", "v1.0.0", "1.0.0.0", "01.0.0", ""])
def test_invalid_versions_are_refused(version):
    with pytest.raises(UsageError, match="not a semantic version"):
        check_version(version)


@pytest.mark.parametrize("version", ["0.1.0", "1.0.0", "2.10.3-rc.1", "1.0.0+build.5"])
def test_valid_versions(version):
    assert check_version(version) == version


@given(st.sampled_from(["1.0.0", "0.2.1"]), st.booleans(), st.booleans())
def test_citation_cff_validates_against_the_cff_schema(version, with_date, custom_license):
    settings = copy.deepcopy(example_settings())
    if with_date:
        settings["date_released"] = "2026-11-23"
    if custom_license:
        settings["license"] = {"id": "LicenseRef-AIST", "name": "AIST terms",
                               "url": "https://example.org/terms", "text": "Use it kindly."}
    lic = license_of(settings)
    text = citation.render_cff(citation.citation_cff(settings, version, lic))
    data = yaml.safe_load(text)  # a YAML 1.1 loader must still see strings (quoted scalars)
    jsonschema.Draft7Validator(cff_schema()).validate(data)
    assert data["type"] == "dataset" and data["version"] == version
    if with_date:
        assert data["date-released"] == "2026-11-23"
    zen = json.loads(citation.zenodo_json(settings, version, lic))
    assert zen["upload_type"] == "dataset" and zen["version"] == version
    assert zen["license"] == ("other-at" if custom_license else "cc-by-sa-4.0")


def _tree(root: Path) -> None:
    (root / "data").mkdir(parents=True)
    (root / "data" / "b.txt").write_text("bee\n")
    (root / "a.txt").write_text("ay\n")
    (root / ".zenodo.json").write_text("{}\n")


def test_tarball_is_deterministic_and_normalized(tmp_path):
    outs = []
    for i in range(2):
        root = tmp_path / f"r{i}"
        _tree(root)
        (root / "a.txt").touch()  # different mtimes must not matter
        write_checksums(root)
        files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        write_tarball(root, tmp_path / f"t{i}.tar.gz", "pkg-1.0.0", files)
        outs.append((tmp_path / f"t{i}.tar.gz").read_bytes())
    assert outs[0] == outs[1]
    assert outs[0][4:8] == b"\0\0\0\0"  # gzip header mtime 0
    assert outs[0][3] & 0x08 == 0  # no file name in the gzip header
    with tarfile.open(tmp_path / "t0.tar.gz") as tar:
        members = tar.getmembers()
        names = [m.name for m in members]
        assert names == ["pkg-1.0.0", "pkg-1.0.0/data", "pkg-1.0.0/.zenodo.json",
                         "pkg-1.0.0/SHA256SUMS", "pkg-1.0.0/a.txt", "pkg-1.0.0/data/b.txt"]
        assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 and m.uname == "" for m in members)


def test_checksums_cover_every_file(tmp_path):
    _tree(tmp_path)
    text = write_checksums(tmp_path)
    sums = parse_checksums(text)
    assert sorted(sums) == [".zenodo.json", "a.txt", "data/b.txt"]
    assert sums["a.txt"] == sha256_file(tmp_path / "a.txt")


def test_archive_files_skips_the_top_marker_and_excluded_files_only(tmp_path):
    _tree(tmp_path)
    (tmp_path / MARKER).write_text("")
    (tmp_path / "data" / MARKER).write_text("")  # only the top folder's marker is bookkeeping
    (tmp_path / "data" / "empty").mkdir()
    (tmp_path / "notes.md").write_text("n\n")
    assert archive_files(tmp_path, ("notes.md",)) == [
        ".zenodo.json", "a.txt", f"data/{MARKER}", "data/b.txt"]


def test_checksums_exclude_themselves_and_reuse_known_digests(tmp_path):
    _tree(tmp_path)
    (tmp_path / MARKER).write_text("")
    write_checksums(tmp_path)
    known = {"a.txt": "f" * 64}
    text = write_checksums(tmp_path, exclude=(".zenodo.json",), known=known)
    assert text == (f"{'f' * 64}  a.txt\n"
                    f"{sha256_file(tmp_path / 'data' / 'b.txt')}  data/b.txt\n")
    assert (tmp_path / CHECKSUMS).read_bytes() == text.encode("utf-8")


def test_parse_checksums_reads_sha256sum_output():
    # `*` is sha256sum's binary-mode mark, not part of the name
    text = "aa  a.txt\n\n   \nbb *bin/x.dat\ncc  name with spaces.txt\ndd *X*\n"
    assert parse_checksums(text) == {"a.txt": "aa", "bin/x.dat": "bb",
                                     "name with spaces.txt": "cc", "X*": "dd"}


def test_tarball_modes_owners_and_folders_are_normalized(tmp_path):
    root = tmp_path / "r"
    (root / "data" / "sub").mkdir(parents=True)
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o700)
    (root / "data" / "sub" / "c.txt").write_text("see\n")
    (root / "data" / "sub" / "c.txt").chmod(0o600)
    long_name = "x" * 120 + ".txt"  # past ustar's 100 bytes: GNU long-name records, no pax headers
    (root / long_name).write_text("long\n")
    write_tarball(root, tmp_path / "t.tar.gz", "pkg", ["run.sh", "data/sub/c.txt", long_name])
    with tarfile.open(tmp_path / "t.tar.gz") as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert list(members) == ["pkg", "pkg/data/sub", "pkg/data/sub/c.txt", "pkg/run.sh",
                                 f"pkg/{long_name}"]
        assert [m.isdir() for m in members.values()] == [True, True, False, False, False]
        assert {n: m.mode for n, m in members.items()} == {
            "pkg": 0o755, "pkg/data/sub": 0o755, "pkg/data/sub/c.txt": 0o644,
            f"pkg/{long_name}": 0o644, "pkg/run.sh": 0o644}
        assert all(m.gname == "" and m.uname == "" for m in members.values())
        assert tar.extractfile("pkg/data/sub/c.txt").read() == b"see\n"
    raw = gzip.decompress((tmp_path / "t.tar.gz").read_bytes())
    assert b"././@LongLink" in raw and b"PaxHeader" not in raw


def _write_settings(tmp_path: Path, settings: dict) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(settings))
    return path


def test_a_missing_settings_file_is_named(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(InputError) as err:
        load_settings(path)
    assert str(err.value) == f"{path}: no such release settings file"


def test_settings_that_are_not_json_report_the_line(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"title": "x",\n  oops}\n')
    with pytest.raises(InputError) as err:
        load_settings(path)
    assert (err.value.path, err.value.line) == (str(path), 2)
    assert str(err.value).startswith(f"{path}:2: not valid JSON: Expecting property name")


def test_settings_problems_are_joined_and_located(tmp_path):
    bad = {k: v for k, v in example_settings().items() if k not in ("title", "contact")}
    bad["name"] = "Not A Name"
    path = _write_settings(tmp_path, bad)
    with pytest.raises(InputError) as err:
        load_settings(path)
    text = str(err.value)
    assert text.startswith(f"{path}: invalid release settings: (top level): ")
    assert "required property; (top level): " in text
    # a pattern other than the web-URL one keeps jsonschema's own message
    assert "name: 'Not A Name' does not match" in text and "http://" not in text
    assert text.endswith(" (expected see schemas/release-settings.schema.json)")


def test_custom_license_error_names_the_file_and_field(tmp_path):
    settings = example_settings()
    settings["license"] = {"id": "LicenseRef-AIST-AAIC", "name": "AIST AAIC workload terms"}
    path = _write_settings(tmp_path, settings)
    with pytest.raises(InputError) as err:
        load_settings(path)
    assert str(err.value) == (f"{path}: license/text: a LicenseRef- license needs its terms "
                              "in 'text'")


def test_settings_are_read_as_utf8_whatever_the_locale(tmp_path):
    settings = example_settings()
    settings["title"] = "Données GPU — 東京"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(settings, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0",
           "PYTHONCOERCECLOCALE": "0", "PYTHONPATH": os.pathsep.join(sys.path)}
    code = ("import sys; from swftools.release.settings import load_settings; "
            "print(ascii(load_settings(sys.argv[1])['title']))")
    run = subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True,
                         text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == ascii("Données GPU — 東京")


def test_license_of_keeps_every_given_field():
    cc = {"id": "CC-BY-SA-4.0", "text": "verbatim"}
    assert license_of({"license": cc}) == License(
        "CC-BY-SA-4.0", "Creative Commons Attribution-ShareAlike 4.0 International",
        "https://creativecommons.org/licenses/by-sa/4.0/", "verbatim")
    assert license_of({}).text is None
    own = {"id": "LicenseRef-X", "name": "X terms", "url": "https://example.org/x", "text": "t"}
    assert license_of({"license": own}) == License("LicenseRef-X", "X terms",
                                                   "https://example.org/x", "t")
    assert license_of({"license": {"id": "LicenseRef-Y", "text": "t"}}) == License(
        "LicenseRef-Y", "LicenseRef-Y", None, "t")
