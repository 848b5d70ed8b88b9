"""CITATION.cff, .zenodo.json and the plain-text reference, checked against hand-written files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from swftools.release.citation import citation_cff, plain_text, render_cff, zenodo_json
from swftools.release.settings import license_of, load_settings

ORCID = "https://orcid.org/0000-0002-1825-0097"
MINIMAL = {
    "name": "aaic", "title": "AAIC GPU cluster workload",
    "description": "Jobs of the AAIC cluster.",
    "creators": [{"name": "AIST AAIC team"}],
    "contact": {"name": "AAIC team", "email": "aaic@example.org"},
    "how_to_cite": "AAIC team, AAIC GPU cluster workload.", "source": {"title": "AAIC logs"},
}
FULL = {
    **MINIMAL,
    "keywords": ["GPU", "SWF"],
    "homepage": "https://example.org/aaic",
    "repository": "https://github.com/example/aaic",
    "date_released": "2026-11-23",
    "doi": "10.5281/zenodo.123456",
    "creators": [{"family_names": "Öberg", "given_names": "Åsa", "affiliation": "AIST",
                  "orcid": ORCID, "email": "asa@example.org"},
                 {"name": "AIST AAIC team"}],
    "references": [
        {"type": "report", "title": "AAIC workload analysis", "authors": ["A. One", "B. Two"],
         "year": 2019, "journal": "IPSJ SIG HPC-170", "doi": "10.1000/xyz",
         "url": "https://example.org/paper"},
        {"title": "Scheduling on GPUs", "authors": ["C. Three"], "conference": "SC19"},
    ],
}

FULL_CFF = """\
cff-version: 1.2.0
message: If you use this dataset, please cite it using these metadata.
type: dataset
title: AAIC GPU cluster workload
version: 1.0.0
authors:
- family-names: Öberg
  given-names: Åsa
  affiliation: AIST
  orcid: https://orcid.org/0000-0002-1825-0097
  email: asa@example.org
- name: AIST AAIC team
abstract: Jobs of the AAIC cluster.
date-released: '2026-11-23'
license: CC-BY-SA-4.0
doi: 10.5281/zenodo.123456
repository: https://github.com/example/aaic
url: https://example.org/aaic
keywords:
- GPU
- SWF
references:
- type: report
  title: AAIC workload analysis
  authors:
  - name: A. One
  - name: B. Two
  year: 2019
  journal: IPSJ SIG HPC-170
  doi: 10.1000/xyz
  url: https://example.org/paper
- type: article
  title: Scheduling on GPUs
  authors:
  - name: C. Three
  conference:
    name: SC19
"""

FULL_ZENODO = """\
{
  "access_right": "open",
  "creators": [
    {
      "affiliation": "AIST",
      "name": "Öberg, Åsa",
      "orcid": "0000-0002-1825-0097"
    },
    {
      "name": "AIST AAIC team"
    }
  ],
  "description": "Jobs of the AAIC cluster.",
  "keywords": [
    "GPU",
    "SWF"
  ],
  "license": "cc-by-sa-4.0",
  "publication_date": "2026-11-23",
  "references": [
    "A. One, B. Two: AAIC workload analysis (2019)",
    "C. Three: Scheduling on GPUs"
  ],
  "title": "AAIC GPU cluster workload",
  "upload_type": "dataset",
  "version": "1.0.0"
}
"""


def settings_of(tmp_path: Path, settings: dict) -> dict:
    """The settings as ``swftools release`` reads them: from a file, checked by the schema."""
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings, ensure_ascii=False), encoding="utf-8")
    return load_settings(path)


def cff_text(settings: dict, version: str = "1.0.0") -> str:
    return render_cff(citation_cff(settings, version, license_of(settings)))


def test_citation_cff_carries_every_setting(tmp_path):
    assert cff_text(settings_of(tmp_path, FULL)) == FULL_CFF


def test_zenodo_json_carries_every_setting(tmp_path):
    settings = settings_of(tmp_path, FULL)
    assert zenodo_json(settings, "1.0.0", license_of(settings)) == FULL_ZENODO


def test_minimal_settings_write_only_what_is_known(tmp_path):
    settings = settings_of(tmp_path, {**MINIMAL, "keywords": [], "references": []})
    assert yaml.safe_load(cff_text(settings)) == {
        "cff-version": "1.2.0", "message": "If you use this dataset, please cite it using these "
        "metadata.", "type": "dataset", "title": "AAIC GPU cluster workload", "version": "1.0.0",
        "authors": [{"name": "AIST AAIC team"}], "abstract": "Jobs of the AAIC cluster.",
        "license": "CC-BY-SA-4.0"}
    assert json.loads(zenodo_json(settings, "1.0.0", license_of(settings))) == {
        "access_right": "open", "creators": [{"name": "AIST AAIC team"}],
        "description": "Jobs of the AAIC cluster.", "keywords": [], "license": "cc-by-sa-4.0",
        "title": "AAIC GPU cluster workload", "upload_type": "dataset", "version": "1.0.0"}
    settings = settings_of(tmp_path, MINIMAL)  # no keywords at all: Zenodo still gets a list
    assert json.loads(zenodo_json(settings, "1.0.0", license_of(settings)))["keywords"] == []


@pytest.mark.parametrize("changes, reference", [
    ({}, "Öberg, Åsa; AIST AAIC team (2026). AAIC GPU cluster workload. Version 1.0.0. "
         "https://doi.org/10.5281/zenodo.123456"),
    ({"doi": None}, "Öberg, Åsa; AIST AAIC team (2026). AAIC GPU cluster workload. "
                    "Version 1.0.0. https://example.org/aaic"),
    ({"doi": None, "homepage": None}, "Öberg, Åsa; AIST AAIC team (2026). AAIC GPU cluster "
                                      "workload. Version 1.0.0. https://github.com/example/aaic"),
    ({"doi": None, "repository": None}, "Öberg, Åsa; AIST AAIC team (2026). AAIC GPU cluster "
                                        "workload. Version 1.0.0. https://example.org/aaic"),
    ({"doi": None, "repository": None, "homepage": None, "date_released": None},
     "Öberg, Åsa; AIST AAIC team. AAIC GPU cluster workload. Version 1.0.0."),
])
def test_plain_text_reference(tmp_path, changes, reference):
    settings = {k: v for k, v in {**FULL, **changes}.items() if v is not None}
    settings = settings_of(tmp_path, settings)
    assert plain_text(citation_cff(settings, "1.0.0", license_of(settings))) == reference


def test_long_text_is_folded_after_the_word_passing_column_100(tmp_path):
    # "abstract: " is 10 columns; the words end at columns 85, 95, 101 and 107
    words = ["a" * 75, "b" * 9, "c" * 5, "d" * 5, "e" * 5]
    text = cff_text(settings_of(tmp_path, {**MINIMAL, "description": " ".join(words)}))
    abstract = text[text.index("abstract:"):text.index("license:")].splitlines()
    assert abstract == ["abstract: " + " ".join(words[:3]), "  " + " ".join(words[3:])]
    assert yaml.safe_load(text)["abstract"] == " ".join(words)
