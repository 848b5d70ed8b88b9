"""Atomic, never-clobbering output: write to a temporary sibling, then rename.

The rules every output of swftools follows:

- A temporary sibling ``.NAME.<pid>.<random>.tmp`` is written, then renamed into place only on
  success; the next write beside ``NAME`` removes the temporaries of writers that died
  (``kill -9``), recognised by that pattern and a pid that no longer runs.
- Without ``force`` the last step cannot replace anything: a file is published with ``link()``
  (fails if the target appeared meanwhile), a folder with ``rename()`` (fails on a non-empty
  folder, and ours always holds the marker), so of two concurrent writers the later gets an error.
- With ``force`` only what swftools wrote is replaced: a file, a symbolic link (the link itself,
  never what it points to), an empty folder, or a folder holding the marker :data:`MARKER` (or,
  written by an earlier version, a swftools descriptor). The old folder is moved to a unique
  ``.NAME.<pid>.<random>.old`` and removed; a pre-existing file of that shape is never touched.
- Permissions come from the process umask (``0o666``/``0o777`` minus the umask) and are set on
  the open descriptor (``fchmod``), never through a path that could be swapped for a link.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import shutil
import stat
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from swftools.errors import UsageError

# An empty regular file: outputs stay byte-identical run to run and across versions, and it
# holds no word the leak audit could take for a user's name (it matches names of 3 characters
# inside any text). The release leaves it out of SHA256SUMS, the download list and the tarball.
MARKER = ".swftools-output"
MARKER_TEXT = ""
_DESCRIPTOR_MAX_BYTES = 16 << 20
# Folders written before the marker existed, recognised by a descriptor only swftools writes
# (file name -> the keys its JSON object holds): data packages and releases, report, replay,
# what-if. The names are spelled here because the core imports no subpackage.
_LEGACY_DESCRIPTORS = {
    "datapackage.json": ("swftools", "resources"),
    "report.json": ("report_format", "swftools_version", "analyses"),
    "summary.json": ("model", "policy", "allocation", "bounded_slowdown_tau_s", "peak_busy"),
    "comparison.json": ("policies", "scheduler", "sensitivity", "classes"),
}
_SUFFIX = re.compile(r"\.(\d+)\.[0-9a-f]{8}\.(tmp|old)")
_UMASK_LOCK = threading.Lock()


# ------------------------------------------------------------------------------------ checks

def check_writable(path: str | os.PathLike, force: bool, *, directory: bool = False,
                   use_empty: bool = False) -> None:
    """Refuse an output that exists unless ``force`` (and then only what swftools may replace).

    ``directory``: the output is a folder; a file in its place is refused even with ``force``,
    an empty folder is replaced with it. ``use_empty``: an existing empty folder is used even
    without ``force`` (nothing there to lose), as the data package writer documents.
    """
    target = Path(path)
    if not target.parent.is_dir():
        raise UsageError(f"{target.parent}: output directory does not exist")
    st = _lstat(target)
    if st is None:
        return
    if stat.S_ISDIR(st.st_mode):
        empty = _is_empty_dir(target)
        if directory and empty and (force or use_empty):
            return
        if not empty and not is_swftools_output(target):
            raise UsageError(f"{target}: already exists and is not a folder swftools wrote (no "
                             f"{MARKER} file); not replacing it, even with --force: choose "
                             "another output or remove it yourself")
    elif directory and not stat.S_ISLNK(st.st_mode) and force:
        raise UsageError(f"{target}: already exists and is not a folder; not replacing it "
                         "with one, even with --force")
    if not force:
        raise UsageError(f"{target}: already exists (use --force to overwrite)")


def check_not_inside(inputs: Iterable[Any], out: str | os.PathLike) -> None:
    """Refuse an input that is the output folder ``out`` or lies inside it (``--force`` would
    replace it). Entries that are not paths (``None``, tables, settings dicts) are skipped;
    ``out`` itself is not followed if it is a symbolic link (only the link is replaced)."""
    out_abs = Path(os.path.abspath(out))
    out_real = Path(os.path.realpath(out_abs.parent)) / out_abs.name
    for item in inputs:
        if not isinstance(item, (str, os.PathLike)):
            continue
        real = Path(os.path.realpath(item))
        if real == out_real or out_real in real.parents:
            raise UsageError(f"{item}: this input is inside the output {out}, which the output "
                             "would replace; write the output elsewhere")


def is_swftools_output(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a real folder (not a link) that swftools wrote: it holds the marker,
    or (an earlier version's output) one of swftools's own descriptors."""
    folder = Path(path)
    st = _lstat(folder)
    if st is None or not stat.S_ISDIR(st.st_mode):
        return False
    marker = _lstat(folder / MARKER)
    if marker is not None and stat.S_ISREG(marker.st_mode):
        return True
    for name, keys in _LEGACY_DESCRIPTORS.items():
        data = _read_regular(folder / name, _DESCRIPTOR_MAX_BYTES)
        if data is None:
            continue
        try:
            value = json.loads(data)
        except ValueError:
            continue
        if isinstance(value, dict) and all(key in value for key in keys):
            return True
    return False


# ------------------------------------------------------------------------------- permissions

def current_umask() -> int:
    """The process umask, read without changing it where Linux tells it (``/proc``); elsewhere
    set and restored under a lock, to the strict ``0o077`` meanwhile (never looser)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def file_mode(mode: int = 0o666) -> int:
    """``mode`` less the umask: what ``open()`` would give a new file."""
    return mode & ~current_umask() & 0o7777


# ----------------------------------------------------------------------------------- writing

@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, force: bool = False, *,
                mode: int = 0o666) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; publish it as ``path`` only on success.

    The temporary file is created empty (mode 0600, exclusively, not through a link); write it
    by path. Its final mode is ``mode`` less the umask, set on the descriptor held since its
    creation. Without ``force`` the publication fails if ``path`` appeared meanwhile.
    """
    target = Path(path)
    clean_stale(target)
    check_writable(target, force)
    _refuse_dir_for_file(target)
    tmp, fd = _new_temp_file(target)
    published = False
    try:
        yield tmp
        _check_same_file(tmp, fd, target)
        os.fchmod(fd, file_mode(mode))
        _publish_file(tmp, target, force)
        published = True
    finally:
        os.close(fd)
        if not published:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, force: bool = False, *, rewrite: bool = False,
               use_empty: bool = False) -> Iterator[Path]:
    """Yield a temporary folder beside ``path``; swap it into place only on success.

    An existing ``path`` is replaced only with ``force`` and only if swftools wrote it or it is
    an empty folder (see the module docstring); a link is replaced itself, never followed.
    ``use_empty``: an existing empty folder is used without ``force`` too. ``rewrite``: the new
    folder is an update of the existing folder ``path`` built from its contents
    (``datapackage.add_resource``), which it replaces whoever wrote it. The marker
    :data:`MARKER` is written into the folder last.
    """
    target = Path(path)
    clean_stale(target)
    if rewrite:
        st = _lstat(target)
        if st is None or not stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{target}: not a folder (a link is not followed); cannot update it")
    else:
        check_writable(target, force, directory=True, use_empty=use_empty)
    tmp = _new_temp_dir(target)
    published = False
    try:
        yield tmp
        _finish_dir(tmp, target)
        _publish_dir(tmp, target, force or rewrite, rewrite)
        published = True
    finally:
        if not published:
            _remove(tmp)


def clean_stale(target: str | os.PathLike) -> list[Path]:
    """Remove the temporary files and folders that dead writers left beside ``target``.

    Only names of swftools's pattern (``.NAME.<pid>.<hex8>.tmp``, nested ones too) owned by
    this user whose every pid no longer runs; an ``.old`` copy only once ``target`` exists again
    (until then it may be the only copy). Best effort: an entry that cannot be removed is left.
    Returns what was removed.
    """
    target = Path(target)
    pattern = re.compile(r"\.+" + re.escape(target.name)
                         + r"((?:\.\d+\.[0-9a-f]{8}\.(?:tmp|old))+)")
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None:
            continue
        suffixes = _SUFFIX.findall(match.group(1))
        if any(_alive(int(pid)) for pid, _ in suffixes):
            continue
        if any(kind == "old" for _, kind in suffixes) and not os.path.lexists(target):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                continue
        except OSError:
            continue
        if _remove(Path(entry.path)):
            removed.append(Path(entry.path))
    return removed


# --------------------------------------------------------------------------------- internals

def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _is_empty_dir(path: Path) -> bool:
    try:
        with os.scandir(path) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def _read_regular(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes (not through a link, not a FIFO), or None; None past ``limit``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (an unknowable answer counts as alive: nothing removed)."""
    if pid <= 0 or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True
    return True


def _temp_name(target: Path, kind: str) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.{kind}")


def _new_temp_file(target: Path) -> tuple[Path, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        tmp = _temp_name(target, "tmp")
        try:
            return tmp, os.open(tmp, flags, 0o600)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target))  # pragma: no cover


def _new_temp_dir(target: Path) -> Path:
    for _ in range(100):
        tmp = _temp_name(target, "tmp")
        try:
            os.mkdir(tmp, 0o700)
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target))  # pragma: no cover


def _refuse_dir_for_file(target: Path) -> None:
    st = _lstat(target)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{target}: is a folder; not replacing it with a file")


def _replaced(tmp: Path, target: Path, kind: str = "file") -> UsageError:
    return UsageError(f"{tmp}: the temporary {kind} was replaced while {target} was being "
                      "written; not publishing it")


def _check_same_file(tmp: Path, fd: int, target: Path) -> None:
    """The temporary path still names the file created (not a link or file swapped in)."""
    st, ours = _lstat(tmp), os.fstat(fd)
    if st is None or not stat.S_ISREG(st.st_mode) or \
            (st.st_dev, st.st_ino) != (ours.st_dev, ours.st_ino):
        raise _replaced(tmp, target)


def _appeared(target: Path) -> UsageError:
    return UsageError(f"{target}: appeared while this output was being written (another writer?); "
                      "not replacing it (use --force to overwrite)")


def _publish_file(tmp: Path, target: Path, force: bool) -> None:
    if force:
        _refuse_dir_for_file(target)
        try:
            os.replace(tmp, target)  # rename() replaces a link itself, never what it points to
        except IsADirectoryError:
            raise UsageError(f"{target}: is a folder; not replacing it with a file") from None
        return
    try:
        os.link(tmp, target, follow_symlinks=False)
    except FileExistsError:
        raise _appeared(target) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK,
                             errno.ENOSYS, errno.EXDEV):
            raise
        # a file system without hard links: check, then rename (a narrow window remains)
        if os.path.lexists(target):
            raise _appeared(target) from None
        os.rename(tmp, target)
        return
    os.unlink(tmp)


def _finish_dir(tmp: Path, target: Path) -> None:
    """Write the marker into the folder and set its mode, through a descriptor of the folder
    itself (a link swapped in for ``tmp`` is refused, not followed). A nested writer (the
    release's package) may have replaced ``tmp`` by a folder of its own: that is accepted."""
    try:
        fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        raise _replaced(tmp, target, "folder") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _replaced(tmp, target, "folder") from None
        raise
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(MARKER, dir_fd=fd)  # may be a hard link to the old folder's (rewrite)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        marker = os.open(MARKER, flags, 0o600, dir_fd=fd)
        try:
            os.fchmod(marker, file_mode())
        finally:
            os.close(marker)
        os.fchmod(fd, file_mode(0o777))
    finally:
        os.close(fd)


def _publish_dir(tmp: Path, target: Path, force: bool, rewrite: bool) -> None:
    st = _lstat(target)
    if st is not None and stat.S_ISLNK(st.st_mode) and force:
        os.unlink(target)  # the link, never what it points to
        st = None
    if st is None or (stat.S_ISDIR(st.st_mode) and _is_empty_dir(target)):
        _rename_dir(tmp, target)  # fails on a non-empty folder: nothing is lost
        return
    if not force:
        raise _appeared(target)
    if not stat.S_ISDIR(st.st_mode) or not (rewrite or is_swftools_output(target)):
        raise UsageError(f"{target}: exists and is not a folder swftools wrote (no {MARKER} file); "
                         "not replacing it, even with --force")
    old = _move_aside(target)
    try:
        _rename_dir(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.rename(old, target)
        raise
    _remove(old)


def _rename_dir(tmp: Path, target: Path) -> None:
    try:
        os.rename(tmp, target)
    except OSError as exc:
        if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
            raise _appeared(target) from None
        raise


def _move_aside(target: Path) -> Path:
    """Rename ``target`` to a fresh unique ``.NAME.<pid>.<hex>.old`` name; return it."""
    for _ in range(100):
        old = _temp_name(target, "old")
        if os.path.lexists(old):
            continue
        try:
            os.rename(target, old)
            return old
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                raise
    raise FileExistsError(errno.EEXIST, "no free name for the old copy",  # pragma: no cover
                          str(target))


def _remove(path: Path) -> bool:
    """Remove a file, link or folder tree (links inside are removed, never followed)."""
    st = _lstat(path)
    if st is None:
        return False
    try:
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError:
        return False
    return True
