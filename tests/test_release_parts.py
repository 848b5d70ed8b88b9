"""Release building blocks: settings, CITATION.cff / .zenodo.json, deterministic tarball, checksums."""

from __future__ import annotations

import copy
import importlib.util
import json
import tarfile
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from swftools.errors import InputError, UsageError
from swftools.release import citation
from swftools.release.settings import check_version, license_of, load_settings
from swftools.release.tarball import (parse_checksums, sha256_file, write_checksums,
                                      write_tarball)

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
