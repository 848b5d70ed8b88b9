"""Caps on what a hostile input may make swftools read or allocate.

A gzip stream may expand to ``max(floor_bytes, max_ratio x its compressed size)``, never past
``max_bytes``: real traces expand 5-20x (a 10-million-job log is ~1.5 GB uncompressed), a gzip
bomb ~1000x, so a ratio of 100 with a 256 MiB floor never stops a real trace and stops a bomb
after at most a few hundred MB. Tar members (``verify``, ``audit``) are read through
:func:`safe_members` and :func:`read_member`: regular files only, through the standard library's
``data`` filter, no sparse members, each member and the running total capped.

Every cap is overridable: by environment variable (:meth:`Limits.from_env`), or by the caller
(``Limits(...)``, ``dataclasses.replace``). An exceeded cap is an
:class:`~swftools.errors.InputError` naming the file, the cap and the variable that raises it.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import BinaryIO

from swftools.errors import InputError, UsageError

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30

ENV_RATIO = "SWFTOOLS_MAX_EXPANSION"
ENV_INPUT = "SWFTOOLS_MAX_INPUT_BYTES"
ENV_MEMBER = "SWFTOOLS_MAX_MEMBER_BYTES"
ENV_ARCHIVE = "SWFTOOLS_MAX_ARCHIVE_BYTES"
ENV_FLOOR = "SWFTOOLS_MIN_EXPANSION_BYTES"

_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]i?b?|b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": KIB, "m": MIB, "g": GIB, "t": GIB << 10}


def parse_size(text: str, *, name: str = "size") -> int:
    """Bytes from ``'1073741824'``, ``'512M'``, ``'32GiB'``, ``'1.5g'`` (binary units)."""
    m = _SIZE.match(text)
    if not m:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise UsageError(f"{name}={shown!r} is not a size (expected a number of bytes, optionally "
                         "with K, M, G or T in binary units, e.g. 64G)")
    unit = (m.group(2) or "").lower()[:1]
    return int(float(m.group(1)) * _UNITS[unit])


def format_size(n: int) -> str:
    """``268435456`` -> ``'256 MiB'`` (exact binary units where they fit, else bytes)."""
    for unit, size in (("TiB", GIB << 10), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"


@dataclass(frozen=True)
class Limits:
    """Caps on what a hostile input may make swftools read or allocate."""

    max_ratio: float = 100.0       # decompressed bytes / compressed bytes for a gzip stream
    floor_bytes: int = 256 * MIB   # a stream may always expand to this many bytes, whatever the ratio
    max_bytes: int = 64 * GIB      # absolute cap on one decompressed stream
    member_bytes: int = 16 * GIB   # cap on one tar member (verify, audit)
    total_bytes: int = 64 * GIB    # cap on all members of one tar read together

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> "Limits":
        """The defaults, overridden by ``SWFTOOLS_MAX_EXPANSION`` (a ratio),
        ``SWFTOOLS_MIN_EXPANSION_BYTES``, ``SWFTOOLS_MAX_INPUT_BYTES``,
        ``SWFTOOLS_MAX_MEMBER_BYTES`` and ``SWFTOOLS_MAX_ARCHIVE_BYTES`` (sizes such as ``64G``)."""
        env = os.environ if environ is None else environ
        base = cls()
        ratio = base.max_ratio
        if (text := env.get(ENV_RATIO, "").strip()):
            try:
                ratio = float(text)
            except ValueError:
                ratio = -1.0
            if not 0 < ratio < float("inf"):
                shown = text if len(text) <= 40 else text[:37] + "..."
                raise UsageError(f"{ENV_RATIO}={shown!r} is not an expansion ratio (expected a "
                                 "positive number, e.g. 100)")

        def size(var: str, default: int) -> int:
            text = env.get(var, "").strip()
            return parse_size(text, name=var) if text else default

        return cls(max_ratio=ratio, floor_bytes=size(ENV_FLOOR, base.floor_bytes),
                   max_bytes=size(ENV_INPUT, base.max_bytes),
                   member_bytes=size(ENV_MEMBER, base.member_bytes),
                   total_bytes=size(ENV_ARCHIVE, base.total_bytes))

    def stream_budget(self, compressed_bytes: int | None) -> int:
        """How many bytes a stream of ``compressed_bytes`` may expand to (unknown: ``max_bytes``)."""
        if compressed_bytes is None:
            return self.max_bytes
        by_ratio = max(self.floor_bytes, int(self.max_ratio * max(compressed_bytes, 0)))
        return min(self.max_bytes, by_ratio)

    def stream_error(self, path: str, compressed_bytes: int | None, produced: int) -> InputError:
        """The InputError for a stream of ``path`` that passed its budget at ``produced`` bytes."""
        budget = self.stream_budget(compressed_bytes)
        if compressed_bytes is not None and budget < self.max_bytes:
            what = (f"expands past {format_size(budget)} ({self.max_ratio:g}x its "
                    f"{compressed_bytes:,} compressed bytes, at least {format_size(self.floor_bytes)})")
            how = f"set {ENV_RATIO} (now {self.max_ratio:g}) to read it anyway"
        else:
            what = f"expands past {format_size(budget)}, the cap on one input"
            how = f"set {ENV_INPUT} (now {format_size(self.max_bytes)}) to read it anyway"
        return InputError(str(path), f"decompressed input {what}: stopped after {produced:,} "
                                     f"bytes, likely a compression bomb",
                          expected=f"a trace that expands less; {how}")


def current(limits: Limits | None = None) -> Limits:
    """``limits``, else the defaults with this process's environment overrides."""
    return limits if limits is not None else Limits.from_env()


class BoundedReader(io.RawIOBase):
    """A raw binary stream over ``raw`` that raises ``error(produced)`` as soon as more than
    ``budget`` bytes have come out (it reads at most one byte past the budget to know)."""

    def __init__(self, raw: BinaryIO, budget: int, error, *, close_raw: bool = True) -> None:
        self._raw = raw
        self.budget = budget
        self._error = error
        self._close_raw = close_raw
        self.produced = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        room = self.budget + 1 - self.produced
        if room <= 0:
            raise self._error(self.produced)
        want = min(len(view), room)
        if hasattr(self._raw, "readinto"):
            n = self._raw.readinto(view[:want]) or 0
        else:
            piece = self._raw.read(want)
            n = len(piece)
            view[:n] = piece
        self.produced += n
        if self.produced > self.budget:
            raise self._error(self.produced)
        return n

    def seekable(self) -> bool:
        return bool(getattr(self._raw, "seekable", lambda: False)())

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        # counted by position: a reader that seeks back and reads again (pyarrow) is no bomb
        self.produced = self._raw.seek(offset, whence)
        return self.produced

    def tell(self) -> int:
        return self._raw.tell()

    def close(self) -> None:
        if not self.closed and self._close_raw:
            self._raw.close()
        super().close()


# -- tar members --------------------------------------------------------------------------------

_BAD_NAME_CHARS = re.compile(r"[\x00-\x1f\x7f\\]")
_FILTER_ROOT = "/nonexistent-swftools-archive-root"


def member_name(info: tarfile.TarInfo, *, path: str) -> str:
    """The member's name, normalised (``./a//b`` -> ``a/b``); InputError for a name that is
    absolute, climbs (``..``), holds a backslash or a control character, or is empty / ``.``
    for anything but a directory (where it is returned as ``''``)."""
    raw = info.name
    shown = raw if len(raw) <= 80 else raw[:77] + "..."
    if raw.startswith("/") or _BAD_NAME_CHARS.search(raw) or ".." in raw.split("/"):
        raise InputError(str(path), f"unsafe member name {shown!r} in the archive",
                         expected="relative member names inside the archive, without '..', "
                                  "backslashes or control characters")
    norm = "/".join(p for p in PurePosixPath(raw).parts if p != ".")
    if not norm and not info.isdir():
        raise InputError(str(path), f"member with no file name ({shown!r}) in the archive",
                         expected="a file name for every file member")
    return norm


def _archive_size(tar: tarfile.TarFile) -> int | None:
    try:
        return os.path.getsize(tar.name) if tar.name else None  # type: ignore[arg-type]
    except (OSError, TypeError, ValueError):
        return None


def safe_members(tar: tarfile.TarFile, *, path: str, limits: Limits | None = None,
                 compressed_bytes: int | None = None) -> Iterator[tarfile.TarInfo]:
    """Regular-file members only, each passed through ``tarfile.data_filter``; refuses
    (InputError naming the archive and member) absolute or ``..`` names, ``.`` or empty names,
    links, devices, sparse members, a member over ``member_bytes``, a running total over
    ``total_bytes`` or past the expansion budget of the archive file (``compressed_bytes``, by
    default the size of ``tar.name``: a ``.tar.gz`` of zeros is a bomb like any gzip stream), and
    a second member of the same (normalised) name. Directories are skipped. Each member yielded
    has its normalised name in ``.name``."""
    lim = current(limits)
    size = compressed_bytes if compressed_bytes is not None else _archive_size(tar)
    budget = lim.total_bytes if size is None else min(lim.total_bytes, lim.stream_budget(size))
    seen: set[str] = set()
    total = 0
    try:
        for info in tar:
            name = member_name(info, path=path)
            if info.isdir():
                continue
            where = f"member {name!r}"
            if info.issparse():
                raise InputError(str(path), f"{where} is a sparse file ({info.size:,} bytes "
                                            "mostly holes)", expected="regular file members only")
            if not info.isreg():
                kind = ("a symbolic link" if info.issym() else "a hard link" if info.islnk()
                        else "a FIFO (not a regular file)" if info.isfifo()
                        else "a device" if info.isdev() else "not a regular file")
                raise InputError(str(path), f"{where} is {kind}", expected="regular file members only")
            try:
                filtered = tarfile.data_filter(info, _FILTER_ROOT)
            except tarfile.FilterError as exc:
                raise InputError(str(path), f"{where} refused: {exc}",
                                 expected="regular file members inside the archive") from None
            if info.size > lim.member_bytes:
                raise InputError(str(path), f"{where} holds {info.size:,} bytes, over the cap of "
                                            f"{format_size(lim.member_bytes)} per member",
                                 expected=f"smaller members; set {ENV_MEMBER} to read it anyway")
            total += info.size
            if total > budget:
                if budget < lim.total_bytes:
                    raise InputError(
                        str(path), f"the members up to {where} hold {total:,} bytes, past "
                                   f"{format_size(budget)} ({lim.max_ratio:g}x the archive's "
                                   f"{size:,} bytes, at least {format_size(lim.floor_bytes)}): "
                                   "likely a compression bomb",
                        expected=f"an archive that expands less; set {ENV_RATIO} "
                                 f"(now {lim.max_ratio:g}) to read it anyway")
                raise InputError(str(path), f"the members up to {where} hold {total:,} bytes, over "
                                            f"the cap of {format_size(lim.total_bytes)} per archive",
                                 expected=f"a smaller archive; set {ENV_ARCHIVE} to read it anyway")
            if name in seen:
                raise InputError(str(path), f"{where} appears twice in the archive",
                                 expected="each member once")
            seen.add(name)
            filtered.name = name
            yield filtered
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(str(path), f"not a readable tar archive ({exc})") from None


def read_member(tar: tarfile.TarFile, info: tarfile.TarInfo, *, path: str,
                limits: Limits | None = None) -> BinaryIO:
    """A file object over the member that raises InputError if more than ``info.size`` /
    ``member_bytes`` bytes come out, or if the archive ends before the member does."""
    lim = current(limits)
    if info.issparse() or not info.isreg():
        raise InputError(str(path), f"member {info.name!r} is not a regular file",
                         expected="regular file members only")
    budget = min(info.size, lim.member_bytes)
    if info.size > lim.member_bytes:
        raise InputError(str(path), f"member {info.name!r} holds {info.size:,} bytes, over the cap "
                                    f"of {format_size(lim.member_bytes)} per member",
                         expected=f"smaller members; set {ENV_MEMBER} to read it anyway")
    try:
        raw = tar.extractfile(info)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(str(path), f"member {info.name!r} unreadable ({exc})") from None
    if raw is None:
        raise InputError(str(path), f"member {info.name!r} has no content to read")

    def error(produced: int) -> InputError:
        return InputError(str(path), f"member {info.name!r} gives more than its {budget:,} bytes",
                          expected="a member no longer than its header says")

    return io.BufferedReader(_TarMember(str(path), info.name, BoundedReader(raw, budget, error)),
                             buffer_size=1 << 16)  # type: ignore[return-value]


class _TarMember(io.RawIOBase):
    """Turns a damaged archive's read errors into located InputErrors."""

    def __init__(self, path: str, name: str, raw: BoundedReader) -> None:
        self._path, self._name, self._raw = path, name, raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        try:
            return self._raw.readinto(buffer)
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise InputError(self._path, f"member {self._name!r} unreadable: the archive is "
                                         f"damaged or truncated ({exc})") from None

    def seekable(self) -> bool:
        return self._raw.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


__all__ = ["ENV_ARCHIVE", "ENV_FLOOR", "ENV_INPUT", "ENV_MEMBER", "ENV_RATIO", "BoundedReader",
           "Limits", "current", "format_size", "member_name", "parse_size", "read_member",
           "safe_members"]
