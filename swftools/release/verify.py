"""``swftools verify``: check a downloaded archive (folder or tarball) end to end."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np

from swftools.formats import datapackage
from swftools.formats import swf
from swftools.errors import InputError, count, os_error_message, shorten
from swftools.fileio import sha256_file
from swftools.limits import Limits, current, read_member, safe_members
from swftools.release.tarball import CHECKSUMS, archive_files
from swftools.site import resolve_site
from swftools.urls import INDEX_HTML
from swftools.formats.swf.fields import FIELDS
from swftools.formats.swf.mapping import swf_field_values


@dataclass
class VerifyReport:
    """Every problem found in an archive (empty when it verifies)."""

    path: str
    problems: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    #: ``swftools.privacy.audit.nothing_to_search`` when the leak audit had no raw name to seek
    nothing_to_search: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "ok": self.ok, "checks": self.checks, "problems": self.problems,
                "nothing_to_search": self.nothing_to_search}

    def render(self) -> str:
        lines = [f"{self.path}: {'OK' if self.ok else count(len(self.problems), 'problem')}"]
        lines += [f"  ok: {c}" for c in self.checks]
        lines += [f"  problem: {p}" for p in self.problems]
        if self.nothing_to_search:
            lines.append(f"  leak audit: {self.nothing_to_search}")
        return "\n".join(lines)


def _safe_extract(tarball: Path, dest: Path, limits: Limits | None = None) -> Path:
    """Extract a release tarball into ``dest`` and return its top folder: regular files and
    folders only, through :func:`swftools.limits.safe_members` (no absolute or climbing
    names, links, devices or sparse files; each member and the whole within the caps)."""
    lim = current(limits)
    tops: set[str] = set()
    try:
        with tarfile.open(tarball, "r:gz") as tar:
            for info in safe_members(tar, path=str(tarball), limits=lim):
                tops.add(info.name.split("/", 1)[0])
                target = dest.joinpath(*info.name.split("/"))
                if target.parent.exists() and not target.parent.is_dir():
                    raise InputError(str(tarball), f"member {shorten(info.name)!r} lies below "
                                                   "a file of the same archive",
                                     expected="folders and files with distinct names")
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    out = open(target, "xb")
                except FileExistsError:  # a folder made by an earlier member's path
                    raise InputError(str(tarball), f"member {shorten(info.name)!r} would be "
                                                   "extracted twice",
                                     expected="each member once") from None
                with out, read_member(tar, info, path=str(tarball), limits=lim) as src:
                    shutil.copyfileobj(src, out, 1 << 20)
            for info in tar.getmembers():  # a folder of its own counts as a top folder too
                if info.isdir() and (name := info.name.strip("/").removeprefix("./")) \
                        and name != ".":
                    tops.add(name.split("/", 1)[0])
    except (tarfile.TarError, EOFError) as exc:
        raise InputError(str(tarball), f"not a readable .tar.gz ({exc})") from None
    if len(tops) != 1:
        shown = sorted(shorten(t) for t in tops)[:10]
        raise InputError(str(tarball), f"expected one top folder, found {len(tops)}: {shown}")
    top = dest / tops.pop()
    if not top.is_dir():
        raise InputError(str(tarball), f"expected one top folder, found the file {top.name!r}")
    return top


_DIGEST = re.compile(r"[0-9a-fA-F]{64}")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\\]")


def archive_path_problem(rel: str) -> str | None:
    """Why ``rel`` is not a plain relative path inside an archive (None when it is): absolute,
    ``..``, ``.`` or empty parts, backslashes or control characters are refused."""
    if not rel:
        return "an empty path"
    if rel.startswith("/") or re.match(r"^[A-Za-z]:", rel):
        return "an absolute path"
    if _UNSAFE.search(rel):
        return "a backslash or control character in the path"
    parts = rel.split("/")
    if ".." in parts:
        return "a path that climbs out of the archive ('..')"
    if any(part in ("", ".") for part in parts):
        return "a path with an empty or '.' part"
    return None


def _inside(root: Path, rel: str) -> Path | None:
    """``root/rel`` if it is a regular file that is inside ``root`` once links are resolved."""
    path = root.joinpath(*rel.split("/"))
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if not stat.S_ISREG(mode):
        return None
    real_root = os.path.realpath(root)
    if os.path.commonpath([real_root, os.path.realpath(path)]) != real_root:
        return None
    return path


def parse_checksum_lines(text: str) -> tuple[dict[str, str], list[str]]:
    """``({relative path: hex digest}, problems)`` from SHA256SUMS text: every line must be a
    SHA-256 and a relative path inside the archive (``sha256sum`` format, ``*`` for binary)."""
    listed: dict[str, str] = {}
    problems: list[str] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        digest, sep, rel = line.partition(" ")
        rel = rel[1:] if rel[:1] in (" ", "*") else rel
        where = f"{CHECKSUMS}:{number}"
        if not sep or not _DIGEST.fullmatch(digest):
            problems.append(f"{where}: not a checksum line: {shorten(line)!r} "
                            "(expected a SHA-256 in hex, two spaces, a relative path)")
            continue
        why = archive_path_problem(rel)
        if why:
            problems.append(f"{where}: {shorten(rel)!r} is {why}; only relative paths inside "
                            "the archive are checked")
        elif rel in listed:
            problems.append(f"{where}: {shorten(rel)!r} is listed twice")
        else:
            listed[rel] = digest.lower()
    return listed, problems


def check_checksums(root: Path, report: VerifyReport) -> None:
    """Every file listed matches; every file present is listed; no line names a path outside
    the archive (such a line is a problem and its file is never opened)."""
    sums_path = _inside(root, CHECKSUMS)
    if sums_path is None:
        report.problems.append(f"{CHECKSUMS} is missing" if not os.path.lexists(root / CHECKSUMS)
                               else f"{CHECKSUMS} is not a regular file inside the archive")
        return
    try:
        text = sums_path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        report.problems.append(f"{CHECKSUMS} is not UTF-8 text")
        return
    listed, problems = parse_checksum_lines(text)
    report.problems.extend(problems)
    for rel, digest in sorted(listed.items()):
        path = _inside(root, rel)
        if path is None:
            what = ("is not a regular file inside the archive" if os.path.lexists(root / rel)
                    else "missing")
            report.problems.append(f"{rel}: listed in {CHECKSUMS} but {what}")
        elif sha256_file(path) != digest:
            report.problems.append(f"{rel}: SHA-256 does not match {CHECKSUMS} (file changed)")
    present = [f for f in archive_files(root, (CHECKSUMS,)) if not f.endswith(".tar.gz")]
    for rel in present:
        if rel not in listed:
            report.problems.append(f"{shorten(rel)}: present but not listed in {CHECKSUMS}")
    report.checks.append(f"{CHECKSUMS}: {count(len(listed), 'file')}")


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
    rows = page_downloads(page.read_text(encoding="utf-8", errors="replace"))
    listed = set()
    for row in rows:
        rel = row["data-file"]
        listed.add(rel)
        path = None if archive_path_problem(rel) else _inside(root, rel)
        if archive_path_problem(rel):
            report.problems.append(f"{INDEX_HTML}: download {shorten(rel)!r} is "
                                   f"{archive_path_problem(rel)}, not a file of the archive")
        elif path is None:
            report.problems.append(f"{INDEX_HTML}: lists {shorten(rel)}, which is missing "
                                   "(or not a regular file inside the archive)")
        elif sha256_file(path) != row.get("data-sha256"):
            report.problems.append(f"{INDEX_HTML}: SHA-256 of {rel} does not match the page")
        elif str(path.stat().st_size) != row.get("data-bytes"):
            report.problems.append(f"{INDEX_HTML}: size of {rel} does not match the page")
    for rel in archive_files(root, (INDEX_HTML, CHECKSUMS)):
        if rel not in listed and not rel.endswith(".tar.gz"):
            report.problems.append(f"{shorten(rel)}: present but not in the download list of "
                                   f"{INDEX_HTML}")
    report.checks.append(f"{INDEX_HTML}: download list of {count(len(rows), 'file')}")


def check_package(root: Path, report: VerifyReport) -> Any:
    """Our validation and the frictionless profile; returns the job table (or None)."""
    from swftools.validate import validate

    try:
        table = datapackage.read(root)
    except InputError as exc:
        report.problems.append(f"data package unreadable: {exc}")
        return None
    except OSError as exc:  # a folder where a file should be, and the like
        report.problems.append(f"data package unreadable: {os_error_message(exc)}")
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
    except OSError as exc:
        report.problems.append(f"SWF unreadable: {os_error_message(exc)}")
        return
    if swf_table.num_rows != table.num_rows:
        report.problems.append(f"SWF has {count(swf_table.num_rows, 'job')}, the package "
                               f"{table.num_rows}")
        return
    site = resolve_site(None, table)
    expected = swf_field_values(table, site)
    actual = swf_field_values(swf_table)
    agree = True
    for f, exp, act in zip(FIELDS, expected, actual):
        e, a = exp.to_numpy(zero_copy_only=False), act.to_numpy(zero_copy_only=False)
        diff = np.flatnonzero(e != a)
        if len(diff):
            agree, row = False, int(diff[0])
            report.problems.append(
                f"SWF {f.label} disagrees with the package on {count(len(diff), 'job')} "
                f"(first: job {table.column('job_id')[row].as_py()}: SWF {a[row]}, package {e[row]})")
    if agree:
        report.checks.append(f"SWF and package agree on {count(table.num_rows, 'job')}")


def verify(path: str | Path, names: Iterable[str] | Mapping[str, Iterable[str]] | None = None,
           hosts: Iterable[str] = (), *, limits: Limits | None = None) -> VerifyReport:
    """Verify an archive folder or tarball: checksums, package, SWF agreement, and a leak audit
    when ``names`` (or ``hosts``) are given, even empty ones (then ``nothing_to_search`` says so).
    A tarball is extracted within ``limits`` (default :meth:`Limits.from_env`)."""
    src = Path(path)
    if not src.exists():
        raise InputError(str(src), "no such archive folder or tarball")
    report = VerifyReport(str(path))
    with tempfile.TemporaryDirectory(prefix="swftools-verify-") as tmp:
        root = _safe_extract(src, Path(tmp), limits) if src.is_file() else src
        check_checksums(root, report)
        check_page(root, report)
        table = check_package(root, report)
        if table is not None:
            check_swf_agreement(root, table, report)
        if names is not None or hosts:
            from swftools.privacy import audit as audit_mod

            audit_report = audit_mod.audit(root, names=names or (), hosts=hosts)
            if audit_report.failed:
                report.problems.append("leak audit:\n" + audit_report.render())
            elif audit_report.nothing_to_search:
                report.nothing_to_search = audit_report.nothing_to_search
            else:
                report.checks.append("leak audit: no raw name found")
    return report


def report_json(report: VerifyReport) -> str:
    """Deterministic JSON rendering."""
    return json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n"
