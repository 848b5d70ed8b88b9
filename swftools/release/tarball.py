"""Deterministic archives and checksums: sorted members, fixed mtimes, uid/gid 0, bare gzip header."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from swftools.atomic import MARKER
from swftools.fileio import gzip_writer, sha256_file

FIXED_MTIME = 0
CHECKSUMS = "SHA256SUMS"


def archive_files(root: Path, exclude: tuple[str, ...] = ()) -> list[str]:
    """Every regular file below ``root`` as sorted POSIX relative paths, but the top folder's
    ``swftools.atomic.MARKER`` (local bookkeeping: not checksummed, listed nor packed)."""
    skip = (*exclude, MARKER)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and p.relative_to(root).as_posix() not in skip)


def write_checksums(root: Path, exclude: tuple[str, ...] = (),
                    known: dict[str, str] | None = None) -> str:
    """Write ``SHA256SUMS`` (``sha256sum -c`` format) covering every file; returns its text.
    ``known``: digests already computed for some of the files (not read again)."""
    known = known or {}
    lines = [f"{known.get(rel) or sha256_file(root / rel)}  {rel}\n"
             for rel in archive_files(root, exclude + (CHECKSUMS,))]
    text = "".join(lines)
    (root / CHECKSUMS).write_text(text, encoding="utf-8")
    return text


def parse_checksums(text: str) -> dict[str, str]:
    """``{relative path: hex digest}`` from SHA256SUMS text."""
    out = {}
    for line in text.splitlines():
        if line.strip():
            digest, rel = line.split(None, 1)
            out[rel.lstrip("*")] = digest
    return out


def _normalize(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime = FIXED_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o755 if info.isdir() else 0o644
    return info


def write_tarball(root: Path, target: Path, prefix: str, files: list[str]) -> None:
    """Pack ``files`` (relative to ``root``) under ``prefix/`` into a reproducible .tar.gz."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        dirs = sorted({str(Path(f).parent) for f in files if str(Path(f).parent) != "."})
        for d in [""] + [f"{d}/" for d in dirs]:
            info = tarfile.TarInfo(f"{prefix}/{d}")
            info.type = tarfile.DIRTYPE
            tar.addfile(_normalize(info))
        for rel in sorted(files):
            info = _normalize(tar.gettarinfo(str(root / rel), arcname=f"{prefix}/{rel}"))
            with open(root / rel, "rb") as fh:
                tar.addfile(info, fh)
    with open(target, "wb") as raw, gzip_writer(raw) as gz:
        gz.write(buffer.getvalue())
