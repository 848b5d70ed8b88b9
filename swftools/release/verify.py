"""``swftools verify``: check a downloaded archive (folder or tarball) end to end."""

from __future__ import annotations

import json
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from swftools.formats import datapackage
from swftools.formats import swf
from swftools.errors import InputError
from swftools.fileio import sha256_file
from swftools.release.tarball import CHECKSUMS, archive_files, parse_checksums
from swftools.report.html import INDEX_HTML
from swftools.site import resolve_site
from swftools.formats.swf.fields import FIELDS
from swftools.formats.swf.mapping import swf_field_values


@dataclass
class VerifyReport:
    """Every problem found in an archive (empty when it verifies)."""

    path: str
    problems: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "ok": self.ok, "checks": self.checks, "problems": self.problems}

    def render(self) -> str:
        lines = [f"{self.path}: {'OK' if self.ok else f'{len(self.problems)} problem(s)'}"]
        lines += [f"  ok: {c}" for c in self.checks]
        lines += [f"  problem: {p}" for p in self.problems]
        return "\n".join(lines)


def _safe_extract(tarball: Path, dest: Path) -> Path:
    """Extract a release tarball (refusing absolute or climbing paths); return its top folder."""
    try:
        with tarfile.open(tarball, "r:gz") as tar:
            tops = set()
            for member in tar.getmembers():
                parts = PurePosixPath(member.name).parts
                if member.name.startswith("/") or ".." in parts or not (member.isfile() or member.isdir()):
                    raise InputError(str(tarball), f"unsafe member {member.name!r} in the tarball")
                tops.add(parts[0])
            tar.extractall(dest)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(str(tarball), f"not a readable .tar.gz ({exc})") from None
    if len(tops) != 1:
        raise InputError(str(tarball), f"expected one top folder, found {sorted(tops)}")
    return dest / tops.pop()


def check_checksums(root: Path, report: VerifyReport) -> None:
    """Every file listed matches; every file present is listed."""
    sums_path = root / CHECKSUMS
    if not sums_path.is_file():
        report.problems.append(f"{CHECKSUMS} is missing")
        return
    listed = parse_checksums(sums_path.read_text(encoding="utf-8"))
    for rel, digest in sorted(listed.items()):
        path = root / rel
        if not path.is_file():
            report.problems.append(f"{rel}: listed in {CHECKSUMS} but missing")
        elif sha256_file(path) != digest:
            report.problems.append(f"{rel}: SHA-256 does not match {CHECKSUMS} (file changed)")
    present = [f for f in archive_files(root, (CHECKSUMS,)) if not f.endswith(".tar.gz")]
    for rel in present:
        if rel not in listed:
            report.problems.append(f"{rel}: present but not listed in {CHECKSUMS}")
    report.checks.append(f"{CHECKSUMS}: {len(listed)} files")


class _DownloadRows(HTMLParser):
    """The download list of index.html: ``<tr data-file data-bytes data-sha256>`` rows."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "tr" and "data-file" in values:
            self.rows.append(values)


def page_downloads(text: str) -> list[dict[str, str]]:
    """The rows (data-file, data-bytes, data-sha256) of an archive page's download list."""
    parser = _DownloadRows()
    parser.feed(text)
    parser.close()
    return parser.rows


def check_page(root: Path, report: VerifyReport) -> None:
    """index.html's download list: every file it names has that size and SHA-256, and every file
    of the archive but the page itself, SHA256SUMS and the tarball is listed."""
    page = root / INDEX_HTML
    if not page.is_file():
        report.problems.append(f"{INDEX_HTML} is missing (the archive's landing page)")
        return
    rows = page_downloads(page.read_text(encoding="utf-8"))
    listed = set()
    for row in rows:
        rel = row["data-file"]
        listed.add(rel)
        path = root / rel
        if PurePosixPath(rel).is_absolute() or ".." in PurePosixPath(rel).parts:
            report.problems.append(f"{INDEX_HTML}: download {rel!r} leaves the archive")
        elif not path.is_file():
            report.problems.append(f"{INDEX_HTML}: lists {rel}, which is missing")
        elif sha256_file(path) != row.get("data-sha256"):
            report.problems.append(f"{INDEX_HTML}: SHA-256 of {rel} does not match the page")
        elif str(path.stat().st_size) != row.get("data-bytes"):
            report.problems.append(f"{INDEX_HTML}: size of {rel} does not match the page")
    for rel in archive_files(root, (INDEX_HTML, CHECKSUMS)):
        if rel not in listed and not rel.endswith(".tar.gz"):
            report.problems.append(f"{rel}: present but not in the download list of {INDEX_HTML}")
    report.checks.append(f"{INDEX_HTML}: download list of {len(rows)} files")


def check_package(root: Path, report: VerifyReport) -> Any:
    """Our validation and the frictionless profile; returns the job table (or None)."""
    from swftools.validate import validate

    try:
        table = datapackage.read(root)
    except InputError as exc:
        report.problems.append(f"data package unreadable: {exc}")
        return None
    result = validate(root)
    if result.errors:
        report.problems.extend(f"validation: {f.render()}" for f in result if f.severity == "error")
    report.checks.append(f"swftools validate: {result.status_line()}")
    import frictionless

    # frictionless reads Parquet through pandas, which takes minutes on large tables; the CSV
    # resources carry the same rows, and the Parquet files are covered by SHA256SUMS.
    desc = datapackage.descriptor(root)
    csv_resources = [r["name"] for r in desc.get("resources", []) if r.get("format") != "parquet"]
    for name in csv_resources:
        fr = frictionless.validate(str(root / "datapackage.json"), resource_name=name)
        if fr.valid:
            report.checks.append(f"frictionless validate (resource {name}): valid")
            continue
        for task in fr.tasks:
            for err in task.errors[:10]:
                report.problems.append(f"frictionless: {task.name}: {err.message}")
        for err in fr.errors[:10]:
            report.problems.append(f"frictionless: {err.message}")
    return table


def check_swf_agreement(root: Path, table: Any, report: VerifyReport) -> None:
    """The SWF file carries exactly what the package says, field by field."""
    swf_path = root / "data" / "jobs.swf.gz"
    if not swf_path.is_file():
        report.problems.append("data/jobs.swf.gz is missing")
        return
    try:
        swf_table = swf.read(swf_path)
    except InputError as exc:
        report.problems.append(f"SWF unreadable: {exc}")
        return
    if swf_table.num_rows != table.num_rows:
        report.problems.append(f"SWF has {swf_table.num_rows} jobs, the package {table.num_rows}")
        return
    site = resolve_site(None, table)
    expected = swf_field_values(table, site)
    actual = swf_field_values(swf_table)
    for f, exp, act in zip(FIELDS, expected, actual):
        e, a = exp.to_numpy(zero_copy_only=False), act.to_numpy(zero_copy_only=False)
        diff = np.flatnonzero(e != a)
        if len(diff):
            row = int(diff[0])
            report.problems.append(
                f"SWF {f.label} disagrees with the package on {len(diff)} jobs "
                f"(first: job {table.column('job_id')[row].as_py()}: SWF {a[row]}, package {e[row]})")
    report.checks.append(f"SWF and package agree on {table.num_rows} jobs")


def verify(path: str | Path, names: Iterable[str] | Mapping[str, Iterable[str]] = (),
           hosts: Iterable[str] = ()) -> VerifyReport:
    """Verify an archive folder or tarball: checksums, package, SWF agreement, optional leak audit."""
    src = Path(path)
    if not src.exists():
        raise InputError(str(src), "no such archive folder or tarball")
    report = VerifyReport(str(path))
    with tempfile.TemporaryDirectory(prefix="swftools-verify-") as tmp:
        root = _safe_extract(src, Path(tmp)) if src.is_file() else src
        check_checksums(root, report)
        check_page(root, report)
        table = check_package(root, report)
        if table is not None:
            check_swf_agreement(root, table, report)
        if names or hosts:
            from swftools.privacy import audit as audit_mod

            audit_report = audit_mod.audit(root, names=names, hosts=hosts)
            if not audit_report.clean:
                report.problems.append("leak audit:\n" + audit_report.render())
            else:
                report.checks.append("leak audit: no raw name found")
    return report


def report_json(report: VerifyReport) -> str:
    """Deterministic JSON rendering."""
    return json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n"
