"""Attacks on ``swftools verify`` (issue 29 items 4, 5 and 8): a SHA256SUMS that names files
outside the archive, links out of an archive folder, odd member names, sparse, oversized and
lying tar members, and random hostile tarballs (never a traceback)."""

from __future__ import annotations

import gzip
import hashlib
import importlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from swftools.errors import InputError
from swftools.limits import MIB, Limits, read_member, safe_members
from swftools.release.verify import VerifyReport, check_checksums, parse_checksum_lines, verify

from ..strategies import tar_member_specs

SMALL = Limits(max_ratio=100, floor_bytes=1 * MIB, max_bytes=64 * MIB, member_bytes=8 * MIB,
               total_bytes=16 * MIB)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


verify_mod = importlib.import_module("swftools.release.verify")  # the package exports the function
A_SHA, SECRET_SHA = sha(b"a\n"), sha(b"secret\n")


def raw_tar(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    """A tar stream written by hand: each header states ``info.size``, whatever the data is."""
    out = io.BytesIO()
    for info, data in members:
        out.write(info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape"))
        out.write(data + b"\0" * (-len(data) % 512))
    out.write(b"\0" * 1024)
    return out.getvalue()


def member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE,
           size: int | None = None) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if size is None else size
    if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        info.linkname = "/etc/hostname"
    return info, data


def tarball(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    path.write_bytes(gzip.compress(raw_tar(members), mtime=0))
    return path


# ------------------------------------------------------------------------- SHA256SUMS paths

@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "archive"
    (root / "data").mkdir(parents=True)
    (root / "data" / "a.txt").write_bytes(b"a\n")
    return root


def hashed_paths(monkeypatch) -> list[Path]:
    seen: list[Path] = []
    real = verify_mod.sha256_file

    def spy(path):
        seen.append(Path(path))
        return real(path)

    monkeypatch.setattr(verify_mod, "sha256_file", spy)
    return seen


@pytest.mark.parametrize("rel", ["../../etc/hostname", "/etc/hostname", "data/../../outside.txt",
                                 ".", "", "./data/a.txt", "data//a.txt", "..\\..\\outside.txt",
                                 "C:/Windows/win.ini", "data/a.txt\x00.png"])
def test_checksum_lines_outside_the_archive_are_problems_and_never_opened(folder, monkeypatch, rel):
    outside = folder.parent / "outside.txt"
    outside.write_bytes(b"secret\n")
    digest = sha(outside.read_bytes())
    (folder / "SHA256SUMS").write_text(f"{A_SHA}  data/a.txt\n{digest}  {rel}\n",
                                       encoding="utf-8")
    seen = hashed_paths(monkeypatch)
    report = VerifyReport(str(folder))
    check_checksums(folder, report)
    root = folder.resolve()
    assert all(root in p.resolve().parents for p in seen), seen  # nothing outside was read
    assert any("SHA256SUMS:2" in p for p in report.problems), report.problems
    assert "data/a.txt: SHA-256 does not match" not in " ".join(report.problems)


def test_a_link_out_of_an_archive_folder_is_not_followed(folder, monkeypatch):
    outside = folder.parent / "secret.txt"
    outside.write_bytes(b"secret\n")
    os.symlink(outside, folder / "data" / "b.txt")
    (folder / "SHA256SUMS").write_text(f"{A_SHA}  data/a.txt\n"
                                       f"{SECRET_SHA}  data/b.txt\n", encoding="utf-8")
    seen = hashed_paths(monkeypatch)
    report = VerifyReport(str(folder))
    check_checksums(folder, report)
    assert [p.name for p in seen] == ["a.txt"]
    assert "data/b.txt: listed in SHA256SUMS but is not a regular file inside the archive" \
        in report.problems


def test_checksum_file_parser_reports_bad_lines_without_failing():
    listed, problems = parse_checksum_lines(
        f"{'0' * 64}  ok.txt\nnot a line\n{'1' * 64}  ok.txt\n{'2' * 64} *bin.dat\nx" * 1)
    assert listed == {"ok.txt": "0" * 64, "bin.dat": "2" * 64}
    assert [p.split(":")[1] for p in problems] == ["2", "3", "5"]


def test_present_but_not_listed_still_reported(folder):
    (folder / "SHA256SUMS").write_text(f"{A_SHA}  data/a.txt\n", encoding="utf-8")
    (folder / "data" / "extra.txt").write_bytes(b"x")
    report = VerifyReport(str(folder))
    check_checksums(folder, report)
    assert report.problems == ["data/extra.txt: present but not listed in SHA256SUMS"]


# ------------------------------------------------------------------------------ tar members

def expect_refused(path: Path, *words: str, limits: Limits = SMALL) -> str:
    with pytest.raises(InputError) as err:
        verify(path, limits=limits)
    text = str(err.value)
    assert text.startswith(str(path)), text
    for word in words:
        assert word in text, text
    return text


@pytest.mark.parametrize("name, kind, words", [
    (".", tarfile.REGTYPE, ["no file name"]),
    ("top/../../etc/x", tarfile.REGTYPE, ["unsafe member name"]),
    ("/etc/x", tarfile.REGTYPE, ["unsafe member name"]),
    ("top\\..\\x", tarfile.REGTYPE, ["unsafe member name"]),
    ("top/link", tarfile.SYMTYPE, ["symbolic link"]),
    ("top/hard", tarfile.LNKTYPE, ["hard link"]),
    ("top/dev", tarfile.CHRTYPE, ["device"]),
    ("top/fifo", tarfile.FIFOTYPE, ["not a regular file"]),
])
def test_odd_members_are_located_errors(tmp_path, name, kind, words):
    path = tarball(tmp_path / "a.tar.gz", [member("top/a.txt", b"a"), member(name, kind=kind)])
    expect_refused(path, *words)


def test_a_dot_folder_and_dot_slash_names_are_accepted_once(tmp_path):
    ok = tarball(tmp_path / "ok.tar.gz", [member(".", kind=tarfile.DIRTYPE),
                                          member("./top/a.txt", b"a")])
    assert "SHA256SUMS is missing" in verify(ok, limits=SMALL).problems
    twice = tarball(tmp_path / "twice.tar.gz", [member("./top/a.txt", b"a"),
                                                member("top/a.txt", b"b")])
    expect_refused(twice, "'top/a.txt' appears twice")


def test_member_over_the_per_member_cap_is_refused_before_extraction(tmp_path):
    path = tarball(tmp_path / "a.tar.gz", [member("top/a.txt", os.urandom(3000))])
    expect_refused(path, "3,000 bytes, over the cap", "SWFTOOLS_MAX_MEMBER_BYTES",
                   limits=Limits(member_bytes=2000))


def test_a_zero_filled_member_is_a_compression_bomb(tmp_path, monkeypatch):
    # 8 MiB of zeros in ~8 KB: over 100x its archive and the (lowered) 1 MiB floor
    path = tarball(tmp_path / "bomb.tar.gz", [member("top/zeros", bytes(8 * MIB))])
    assert path.stat().st_size < 64 * 1024
    written = []
    real = shutil.copyfileobj
    monkeypatch.setattr(shutil, "copyfileobj", lambda *a, **k: written.append(1) or real(*a, **k))
    expect_refused(path, "compression bomb", "SWFTOOLS_MAX_EXPANSION")
    assert not written  # refused on the header, before a byte was extracted
    monkeypatch.setenv("SWFTOOLS_MIN_EXPANSION_BYTES", "1M")  # the same through the environment
    with pytest.raises(InputError, match="compression bomb"):
        verify(path)


def test_header_claiming_more_than_the_archive_holds_is_a_located_error(tmp_path):
    info, _ = member("top/a.txt", size=10_000)
    path = tmp_path / "short.tar.gz"
    path.write_bytes(gzip.compress(info.tobuf(tarfile.GNU_FORMAT) + b"x" * 700, mtime=0))
    expect_refused(path)


def test_read_member_stops_at_the_stated_size(tmp_path):
    path = tarball(tmp_path / "a.tar.gz", [member("top/a.txt", b"abc")])
    with tarfile.open(path) as tar:
        (info,) = list(safe_members(tar, path=str(path), limits=SMALL))
        with read_member(tar, info, path=str(path), limits=SMALL) as fh:
            assert fh.read() == b"abc"
            assert fh.read() == b""


@pytest.mark.skipif(shutil.which("tar") is None, reason="GNU tar makes the sparse member")
def test_a_sparse_member_is_refused(tmp_path):
    src = tmp_path / "top"
    src.mkdir()
    with open(src / "holes.bin", "wb") as fh:  # 16 GiB of holes, a few bytes on disk
        fh.truncate(16 << 30)
        fh.write(b"data")
    path = tmp_path / "sparse.tar.gz"
    done = subprocess.run(["tar", "--sparse", "-czf", str(path), "-C", str(tmp_path), "top"],
                          capture_output=True, timeout=60)
    if done.returncode != 0:
        pytest.skip(f"tar cannot make a sparse archive here: {done.stderr[:200]!r}")
    with tarfile.open(path) as tar:
        if not any(m.issparse() for m in tar.getmembers()):
            pytest.skip("this file system keeps no holes")
    expect_refused(path, "sparse", limits=Limits())


# ------------------------------------------------------------------------------ hypothesis

def hostile_tarball(specs) -> bytes | None:
    members = []
    for name, kind, size, claimed in specs:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.size = claimed
        if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
            info.linkname = "../../etc/hostname"
        try:
            info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")
        except (ValueError, UnicodeError):
            return None
        members.append((info, b"z" * size))
    return raw_tar(members)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tar_member_specs())
def test_verify_never_tracebacks_on_hostile_tarballs(specs):
    data = hostile_tarball(specs)
    if data is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.tar.gz"
        path.write_bytes(gzip.compress(data, mtime=0))
        try:
            report = verify(path, limits=SMALL)
        except InputError as exc:
            assert str(exc).startswith(str(path))
            assert len(str(exc)) < 1000
        else:
            assert not report.ok  # no such tarball is a valid archive
        assert os.listdir(tmp) == ["x.tar.gz"]  # nothing extracted next to it


# ------------------------------------------------------------- issue 30: layout of a tarball

def test_a_member_below_a_file_of_the_archive_is_refused(tmp_path):
    path = tarball(tmp_path / "a.tar.gz", [member("top/a", b"a"), member("top/a/b", b"b")])
    assert expect_refused(path) == (f"{path}: member 'top/a/b' lies below a file of the same "
                                    "archive (expected folders and files with distinct names)")


def test_a_file_where_a_member_made_a_folder_is_refused_by_its_member_name(tmp_path):
    path = tarball(tmp_path / "a.tar.gz", [member("top/a/b", b"b"), member("top/a", b"a")])
    assert expect_refused(path) == (f"{path}: member 'top/a' would be extracted twice "
                                    "(expected each member once)")


@pytest.mark.parametrize("members, found", [
    ([member("a/x", b"x"), member("b/y", b"y")], "found 2: ['a', 'b']"),
    ([member("top/x", b"x"), member("other/", kind=tarfile.DIRTYPE)], "found 2: ['other', 'top']"),
    ([member("top/x", b"x"), member("./other", kind=tarfile.DIRTYPE)], "found 2: ['other', 'top']"),
    ([member("top/x", b"x"), member("Xtra/", kind=tarfile.DIRTYPE)], "found 2: ['Xtra', 'top']"),
    ([member("top/x", b"x"), member(" /", kind=tarfile.DIRTYPE)], "found 2: [' ', 'top']"),
    ([member(f"t{i:02}/x", b"x") for i in range(12)],
     f"found 12: {[f't{i:02}' for i in range(10)]}"),
    ([member("x", b"x")], "found the file 'x'"),
    ([], "found 0: []"),
])
def test_a_tarball_needs_exactly_one_top_folder(tmp_path, members, found):
    path = tarball(tmp_path / "a.tar.gz", members)
    assert expect_refused(path) == f"{path}: expected one top folder, {found}"


def test_dot_and_nested_folder_members_do_not_count_as_top_folders(tmp_path):
    path = tarball(tmp_path / "a.tar.gz", [member("./", kind=tarfile.DIRTYPE),
                                           member("top/sub/", kind=tarfile.DIRTYPE),
                                           member("top/sub/deeper/", kind=tarfile.DIRTYPE),
                                           member("top/a.txt", b"a")])
    assert verify(path, limits=SMALL).problems[0] == "SHA256SUMS is missing"


def test_the_limits_given_apply_to_reading_members_too(tmp_path, monkeypatch):
    """Limits passed to verify win over the environment's, while extracting as while listing."""
    path = tarball(tmp_path / "a.tar.gz", [member("top/a.txt", os.urandom(3000))])
    monkeypatch.setenv("SWFTOOLS_MAX_MEMBER_BYTES", "2000")
    with pytest.raises(InputError, match="over the cap"):
        verify(path)
    assert verify(path, limits=Limits(member_bytes=8000)).problems[0] == "SHA256SUMS is missing"
