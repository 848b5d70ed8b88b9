"""``swftools release``: read -> anonymize -> validate -> replay -> write -> audit -> checksums -> tarball.

Everything is built in a temporary folder beside the output and renamed into place only when every
stage succeeded, so a failed release leaves the output folder untouched.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from swftools import __version__, formats
from swftools.formats import datapackage
from swftools.formats import swf
from swftools import table as jt
from swftools.atomic import atomic_dir, check_not_inside, check_writable
from swftools.errors import InputError, UsageError, count
from swftools.release import citation, readme
from swftools.release.settings import CC_BY_SA_4, check_version, license_of, load_settings
from swftools.fileio import sha256_file
from swftools.release.tarball import CHECKSUMS, archive_files, write_checksums, write_tarball
from swftools.site import PRESETS, Site, resolve_site

STAGES = ("read", "anonymize", "validate", "replay", "report", "write", "audit", "checksums")


@dataclass
class ReleaseResult:
    """What a release produced and what it found on the way."""

    out_dir: Path
    tarball: Path
    tarball_sha256: str
    files: list[str]
    validation: Any
    replay_findings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: ``swftools.privacy.audit.nothing_to_search`` when the audit had no raw name to seek
    nothing_to_search: str | None = None


def _needs_anonymization(table: pa.Table) -> bool:
    meta = jt.get_metadata(table)
    if meta.get("anonymization"):
        return False
    for name in ("user", "group"):
        values = table.column(name).drop_null()
        if len(values) and not all(v.isdigit() for v in values.unique().to_pylist()):
            return True
    return False


def _merge_names(*parts: dict[str, list[str]]) -> dict[str, list[str]]:
    """Names by kind from several sources, each kind sorted and without repeats."""
    out: dict[str, set[str]] = {}
    for part in parts:
        for kind, values in part.items():
            out.setdefault(kind, set()).update(values)
    return {kind: sorted(values) for kind, values in sorted(out.items())}


def _metric_map(options: dict[str, Any]) -> Any:
    """The metric map ``telemetry.attach`` uses with ``options`` (its node labels and names)."""
    from swftools.telemetry import DEFAULT_MAPS, load_metric_map
    from swftools.telemetry.metric_map import identity_map

    chosen = options.get("metric_map", DEFAULT_MAPS)
    return identity_map() if chosen is None else load_metric_map(chosen)


def _known_issues(validation: Any, replay_findings: list[str]) -> str:
    """Validation errors and warnings per rule, then the replay consistency findings."""
    from swftools.validate import describe_rules

    descriptions = {rule_id: description for rule_id, _, _, description in describe_rules()}
    lines = []
    for (rule, severity), count in sorted(validation.counts.items()):
        if severity == "info" or not count:
            continue
        first = next((f for f in validation if f.rule == rule), None)
        example = f" First: {first.message}" if first else ""
        lines.append(f"- **{rule}** ({severity}, {count:,} finding{'s' if count != 1 else ''}): "
                     f"{descriptions.get(rule, '')}{example}")
    if not lines:
        lines.append("Validation found no errors or warnings (`VALIDATION.json` lists the "
                     "informational findings).")
    if replay_findings:
        lines += ["", "Replay consistency (the recorded schedule against a reference FCFS + EASY "
                      "backfilling scheduler on the declared resources):", ""]
        lines.extend(f"- {text}" for text in replay_findings)
    return "\n".join(lines)


def _with_site_inline(table: pa.Table, site: Site | None) -> pa.Table:
    """A site that is no preset (a site settings file) goes into the archive's metadata whole
    (``site_settings``): ``verify`` and any later reader then resolve the site the SWF was written
    with (queue numbers, partition) by the one rule, ``resolve_site``. The score file a
    heterogeneous site names is not part of the archive, so ``gpu_scores`` is left out."""
    if site is None or site.name in PRESETS or not site.settings:
        return table
    meta = jt.get_metadata(table)
    settings = {k: v for k, v in site.settings.items() if k not in ("$schema", "gpu_scores")}
    return jt.with_metadata(table, {**meta, "site": site.name, "site_settings": settings})


def _replay_findings(table: pa.Table, site: Site | None) -> list[str]:
    """One-line consistency findings: the recorded schedule against FCFS + EASY on the site."""
    from swftools.report import consistency

    return consistency.findings(table, site)


def _change_steps(settings: dict[str, Any], table: pa.Table, anonymized: bool) -> list[str]:
    """The anonymization statement: every change made to the source data, one sentence each."""
    meta = jt.get_metadata(table)
    steps = list(settings.get("changes", []))
    if anonymized:
        steps.append("user and group names replaced by keyed pseudonyms (HMAC-SHA256); the key is "
                     "kept by the maintainers, so the same user keeps the same pseudonym across releases")
        steps.append("host, node and job names, file names, free-text header lines and the content "
                     "of unreadable source lines removed from the metadata (node names of a node "
                     "list replaced by keyed pseudonyms)")
    if (meta.get("anonymization") or {}).get("time_shifted"):
        steps.append("all times shifted by a whole number of weeks (weekday and time of day kept)")
    steps.append(f"converted with swftools {__version__} to a Frictionless data package and to SWF 2.2 "
                 "(times as UTC epoch seconds)")
    return steps


def _landing_page(root: Path, report_data: dict[str, Any], settings: dict[str, Any], version: str,
                  lic: Any, cff: dict[str, Any], steps: list[str], validation: Any,
                  replay_findings: list[str], time_zone: str) -> dict[str, str]:
    """Write index.html: the report page with the download list (file, size, SHA-256 of every
    file written so far), how to cite, the licence and the anonymization statement. Returns
    those digests (``SHA256SUMS`` reuses them)."""
    from swftools.report import html

    downloads = [html.Download(rel, (root / rel).stat().st_size, sha256_file(root / rel))
                 for rel in archive_files(root, (html.INDEX_HTML, CHECKSUMS))]
    info = html.ReleaseInfo(
        title=settings["title"], version=version, description=settings["description"].strip(),
        downloads=downloads, tarball=f"{settings['name']}-{version}.tar.gz",
        citation=citation.plain_text(cff), how_to_cite=settings["how_to_cite"].strip(),
        license_name=lic.name, license_id=lic.id, license_url=lic.url,
        legalcode_url=CC_BY_SA_4["legalcode"] if lic.is_cc_by_sa else None,
        anonymization=steps, source=_source(settings), time_zone=time_zone)
    page = html.page(report_data, validation=validation, consistency=replay_findings, release=info)
    (root / html.INDEX_HTML).write_text(page, encoding="utf-8")
    return {d.path: d.sha256 for d in downloads}


def _source(settings: dict[str, Any]) -> str:
    return settings["source"]["title"] + (f" ({settings['source']['path']})"
                                          if "path" in settings["source"] else "")


def _write_archive(root: Path, table: pa.Table, site: Site | None, settings: dict[str, Any],
                   version: str, validation: Any, replay_findings: list[str], anonymized: bool,
                   telemetry_table: pa.Table | None) -> dict[str, str]:
    """Write every file of the archive but SHA256SUMS and the tarball; returns the SHA-256 of
    the files the landing page lists."""
    lic = license_of(settings)
    props = {"name": settings["name"], "title": settings["title"], "version": version,
             "description": settings["description"],
             "licenses": [{k: v for k, v in (("name", lic.id), ("path", lic.url), ("title", lic.name)) if v}],
             "sources": [{"title": _source(settings)}]}  # the settings' words, not a file name
    datapackage.write(table, root, site=site, force=True, properties=props)
    if telemetry_table is not None:
        from swftools.telemetry import RESOURCE, output

        description = jt.get_metadata(telemetry_table)["telemetry"]["description"]
        datapackage.add_resource(root, RESOURCE, telemetry_table, output.table_schema(), force=True,
                                 title="Job telemetry", description=description)
    swf.write(table, root / "data" / "jobs.swf.gz", site=site, force=True)
    (root / "VALIDATION.json").write_text(
        json.dumps(validation.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n",
        encoding="utf-8")
    cff = citation.citation_cff(settings, version, lic)
    (root / "CITATION.cff").write_text(citation.render_cff(cff), encoding="utf-8")
    (root / ".zenodo.json").write_text(citation.zenodo_json(settings, version, lic),
                                       encoding="utf-8")
    (root / "LICENSE").write_text(f"{lic.name}\n\n{readme.license_text(lic)}\n", encoding="utf-8")
    tz = jt.get_metadata(table).get("time_zone") or (site.time_zone if site else "UTC")
    has_telemetry = (root / "data" / "job_telemetry.csv.gz").exists()
    from swftools import report as report_mod

    report_result = report_mod.analyze(table, site=site)
    steps = _change_steps(settings, table, anonymized)
    if telemetry_table is not None:
        steps.append("telemetry: sample and allocation file names replaced by 'source N', host "
                     "labels, Prometheus warnings and site metric-map names left out of the "
                     "metadata (only per-job aggregates are published)")
    ack = settings.get("acknowledgement")
    values = {
        "title": settings["title"], "version": version,
        "license_line": f"License: {lic.name} (`{lic.id}`).",
        "description": settings["description"].strip(),
        "telemetry_row": ("| `data/job_telemetry.csv.gz`, `data/job_telemetry.parquet` | per-job GPU "
                          "and node telemetry aggregates (foreign key `job_id` -> jobs) |\n"
                          if has_telemetry else ""),
        "system": readme.system_section(site, table),
        "time_zone": tz,
        "fields": readme.fields_table(jt.table_schema(), table),
        "summary": report_mod.summary_table_markdown(report_result),
        "known_issues": _known_issues(validation, replay_findings),
        "procs_note": (f"{site.max_gpus} in all" if site else "see MaxProcs in the SWF header"),
        "how_to_cite": settings["how_to_cite"].strip(),
        "acknowledgement": f"\n## Acknowledgement\n\n{ack.strip()}\n" if ack else "",
        "license_text": readme.license_text(lic),
        "changes": "\n".join(f"- {step}" for step in steps),
        "source": _source(settings),
    }
    (root / "README.md").write_text(readme.render_readme(values), encoding="utf-8")
    return _landing_page(root, report_result.data, settings, version, lic, cff, steps,
                         validation, replay_findings, tz)


def release(source: str | Path, out_dir: str | Path, *, version: str, settings: str | Path | dict,
            site: Site | str | Path | None = None, key: bytes | None = None,
            accept_errors: bool = False, strict: bool = False, force: bool = False,
            time_shift_weeks: int = 0, telemetry: dict[str, Any] | None = None,
            on_stage: Callable[[str], None] = lambda stage: None) -> ReleaseResult:
    """Build a complete, deterministic archive from a trace; see the module docstring.

    ``telemetry`` (optional) is ``{"samples": [paths...], **options of telemetry.attach}``; the
    per-job aggregates become the ``job_telemetry`` resource. With ``strict`` a validation
    warning stops the release as an error does (``accept_errors`` does not lift it).
    """
    check_version(version)
    settings = settings if isinstance(settings, dict) else load_settings(settings)
    out = Path(out_dir)
    if not out.parent.is_dir():
        raise UsageError(f"{out.parent}: output parent is not an existing directory")
    check_writable(out, force, directory=True)  # --force replaces only a folder swftools wrote
    if not os.access(out.parent, os.W_OK):
        raise UsageError(f"{out.parent}: output parent directory is not writable")
    check_not_inside([source, settings, site if isinstance(site, (str, Path))
                      and Path(site).is_file() else None, *(telemetry or {}).get("samples", []),
                      (telemetry or {}).get("allocations")], out)
    fmt = formats.detect_format(source)
    on_stage("read")
    raw = formats.read(source, fmt, site=resolve_site(site, fmt=fmt))
    site_obj = resolve_site(site, raw, fmt=fmt)  # the one rule (swftools.site.resolve_site)
    on_stage("anonymize")
    table, raw_names, anonymized = raw, {}, False
    from swftools.privacy import rawnames

    # every user, group, host and job name of the source (its bad lines too): what the audit seeks
    found = rawnames.raw_names(source, fmt, table=raw)
    hidden = [kind for kind in ("host", "job") if found.get(kind)]
    if key is not None or _needs_anonymization(raw) or hidden:
        if key is None:
            what = ("user/group names" if _needs_anonymization(raw)
                    else " and ".join(f"{kind} names" for kind in hidden) + " in its metadata")
            raise UsageError(f"the source holds raw {what}: give --key-file (or set "
                             "SWFTOOLS_ANON_KEY) so that they are pseudonymized or dropped")
        from swftools.privacy import pseudonyms as anon

        result = anon.anonymize(raw, key, time_shift_weeks=time_shift_weeks)
        table, anonymized = result.table, True
        raw_names = _merge_names(result.raw_names(), found)
    telemetry_table: pa.Table | None = None
    telemetry_notes: list[str] = []
    if telemetry:
        from swftools.privacy import scrub
        from swftools.telemetry import attach

        # joined on the recorded (unshifted) times; job ids survive anonymization unchanged
        options = dict(telemetry)
        samples = options.pop("samples")
        options.setdefault("work_dir", out.resolve().parent)
        telemetry_table = attach(raw, samples, site=site_obj, **options)
        # the exports' machines (file names, instance/host labels, allocation nodes): dropped
        # from the published metadata, then sought by the audit like the job log's names
        raw_names = _merge_names(raw_names, rawnames.telemetry_names(
            samples, options.get("allocations"), _metric_map(options)))
        telemetry_table = scrub.clean_telemetry_table(telemetry_table, raw_names, telemetry_notes)
    on_stage("validate")
    from swftools.validate import validate

    validation = validate(table, site=site_obj)
    if validation.errors and not accept_errors:
        rules = ", ".join(sorted(validation.fired("error")))
        raise InputError(str(source), f"validation found {validation.errors} errors ({rules}); "
                         "fix the source or pass --accept-errors to publish them as known issues")
    if strict and validation.warnings:
        rules = ", ".join(sorted(validation.fired("warning")))
        raise InputError(str(source), f"validation found {validation.warnings} warnings ({rules}) "
                         "and --strict makes warnings fail; fix the source or release without "
                         "--strict to publish them as known issues")
    on_stage("replay")
    replay_findings = _replay_findings(table, site_obj)
    table = _with_site_inline(table, site_obj)
    on_stage("report")
    name = settings["name"]
    tarball_name = f"{name}-{version}.tar.gz"
    with atomic_dir(out, force=force) as tmp:
        on_stage("write")
        digests = _write_archive(tmp, table, site_obj, settings, version, validation,
                                 replay_findings, anonymized, telemetry_table)
        on_stage("audit")
        notes: list[str] = list(telemetry_notes)
        from swftools.privacy import audit as audit_mod

        n_searchable, n_unsearchable = audit_mod.searchable(raw_names)
        if not anonymized:  # the source's ids are published as they are: count what they are
            n_unsearchable += audit_mod.searchable(found)[1]
        nothing = None if n_searchable else audit_mod.nothing_to_search(n_unsearchable)
        audited = bool(n_searchable or key)  # else there is nothing to scan the archive for
        if audited:
            audit_report = audit_mod.audit(tmp, names=raw_names, key=key)
            if audit_report.failed:
                raise InputError(str(source), "the archive leaks raw names:\n" + audit_report.render())
            files_text = count(len(archive_files(tmp)), "file")
            if n_searchable:
                kinds = ", ".join(sorted(audit_report.searched))
                notes.append(f"audit: no raw name ({kinds}){', nor the key,' if key else ''} "
                             f"in {files_text}")
            else:
                notes.append(f"audit: the key is in none of {files_text}")
        on_stage("checksums")
        write_checksums(tmp, exclude=(tarball_name,), known=digests)
        files = archive_files(tmp)
        write_tarball(tmp, tmp / tarball_name, f"{name}-{version}", files)
        if audited:  # the tarball as published: every member, read within the caps
            tar_report = audit_mod.audit(tmp / tarball_name, names=raw_names, key=key)
            if tar_report.failed:
                raise InputError(str(source), "the tarball leaks raw names:\n" + tar_report.render())
    tarball = out / tarball_name
    return ReleaseResult(out, tarball, sha256_file(tarball), files + [tarball_name], validation,
                         replay_findings, notes, nothing)


__all__ = ["CHECKSUMS", "STAGES", "ReleaseResult", "release"]
