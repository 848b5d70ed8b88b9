"""CITATION.cff (CFF 1.2.0, ``type: dataset``) and ``.zenodo.json`` for a release."""

from __future__ import annotations

import json
from typing import Any

import yaml

from swftools.release.settings import License

CFF_MESSAGE = "If you use this dataset, please cite it using these metadata."


def _cff_person(creator: dict[str, Any]) -> dict[str, Any]:
    if "family_names" in creator:
        person = {"family-names": creator["family_names"], "given-names": creator["given_names"]}
    else:
        person = {"name": creator["name"]}
    for key in ("affiliation", "orcid", "email"):
        if key in creator:
            person[key] = creator[key]
    return person


def _cff_reference(ref: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": ref.get("type", "article"), "title": ref["title"],
                           "authors": [{"name": a} for a in ref["authors"]]}
    for key, cff_key in (("year", "year"), ("journal", "journal"), ("doi", "doi"), ("url", "url")):
        if key in ref:
            out[cff_key] = ref[key]
    if "conference" in ref:
        out["conference"] = {"name": ref["conference"]}
    return out


def citation_cff(settings: dict[str, Any], version: str, lic: License) -> dict[str, Any]:
    """The CITATION.cff content as a dict (key order is the order written)."""
    cff: dict[str, Any] = {
        "cff-version": "1.2.0",
        "message": CFF_MESSAGE,
        "type": "dataset",
        "title": settings["title"],
        "version": version,
        "authors": [_cff_person(c) for c in settings["creators"]],
        "abstract": settings["description"],
    }
    if "date_released" in settings:
        cff["date-released"] = settings["date_released"]
    if not lic.id.startswith("LicenseRef-"):
        cff["license"] = lic.id
    elif lic.url:
        cff["license-url"] = lic.url
    if "doi" in settings:
        cff["doi"] = settings["doi"]
    if "repository" in settings:
        cff["repository"] = settings["repository"]
    if "homepage" in settings:
        cff["url"] = settings["homepage"]
    if settings.get("keywords"):
        cff["keywords"] = list(settings["keywords"])
    if settings.get("references"):
        cff["references"] = [_cff_reference(r) for r in settings["references"]]
    return cff


def plain_text(cff: dict[str, Any]) -> str:
    """A human-readable reference from CITATION.cff content: authors (year). Title. Version. DOI."""
    names = []
    for author in cff["authors"]:
        if "family-names" in author:
            names.append(f"{author['family-names']}, {author['given-names']}")
        else:
            names.append(author["name"])
    year = f" ({str(cff['date-released'])[:4]})" if "date-released" in cff else ""
    parts = [f"{'; '.join(names)}{year}.", f"{cff['title']}.", f"Version {cff['version']}."]
    if "doi" in cff:
        parts.append(f"https://doi.org/{cff['doi']}")
    elif "url" in cff or "repository" in cff:
        parts.append(cff.get("url") or cff["repository"])
    return " ".join(parts)


def render_cff(cff: dict[str, Any]) -> str:
    """YAML text. PyYAML quotes any string that a YAML 1.1 loader would read as another type
    (``"2026-01-01"`` stays a string), so dates and versions survive every loader."""
    return yaml.safe_dump(cff, sort_keys=False, allow_unicode=True, width=100)


def zenodo_json(settings: dict[str, Any], version: str, lic: License) -> str:
    """``.zenodo.json`` for GitHub -> Zenodo DOI minting (deterministic JSON)."""
    creators = []
    for c in settings["creators"]:
        name = f"{c['family_names']}, {c['given_names']}" if "family_names" in c else c["name"]
        entry: dict[str, Any] = {"name": name}
        if "affiliation" in c:
            entry["affiliation"] = c["affiliation"]
        if "orcid" in c:
            entry["orcid"] = c["orcid"].rsplit("/", 1)[-1]
        creators.append(entry)
    meta: dict[str, Any] = {
        "title": settings["title"],
        "upload_type": "dataset",
        "description": settings["description"],
        "creators": creators,
        "version": version,
        "access_right": "open",
        "license": lic.id.lower() if not lic.id.startswith("LicenseRef-") else "other-at",
        "keywords": list(settings.get("keywords", [])),
    }
    if "date_released" in settings:
        meta["publication_date"] = settings["date_released"]
    if settings.get("references"):
        meta["references"] = [f"{', '.join(r['authors'])}: {r['title']}" + (f" ({r['year']})" if "year" in r else "")
                              for r in settings["references"]]
    return json.dumps(meta, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
