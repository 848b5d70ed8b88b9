"""The anonymization key: making one, loading one, and refusing a weak one.

A key is the bytes of a key file (or of ``$SWFTOOLS_ANON_KEY``) with leading and trailing ASCII
whitespace removed. ``new_key`` writes ``secrets.token_hex(32)`` and a newline (64 hex digits:
256 random bits) to a new file of mode 0600. ``load_key`` refuses a key that is

- shorter than ``MIN_KEY_BYTES`` (32) bytes,
- made of fewer than ``MIN_DISTINCT_KEY_BYTES`` (8) distinct byte values
  (``passwordpassword...``, ``0000...``), or
- a shorter pattern repeated (``0123456789abcdef0123456789abcdef``).

These checks catch only the obviously weak keys: a key must come from a random source, which no
test of its bytes can prove. A key file that group or others may read is used with a warning.
No value derived from the key alone is published (issue 29 dropped the ``key_id`` fingerprint:
any public function of the key is a test for guessing it); a key holder checks that a release
used their key by recomputing the pseudonym of one known name.
"""

from __future__ import annotations

import os
import secrets
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from swftools.errors import InputError, UsageError

MIN_KEY_BYTES = 32
MIN_DISTINCT_KEY_BYTES = 8
NEW_KEY_RANDOM_BYTES = 32  # written as 64 hex digits
MAX_KEY_FILE_BYTES = 64 * 1024
DEFAULT_KEY_ENV = "SWFTOOLS_ANON_KEY"
KEY_HINT = (f"at least {MIN_KEY_BYTES} bytes from a random source: make a key file with "
            "`swftools anonymize --new-key FILE`")
EPHEMERAL_WARNING = (
    "WARNING: using an EPHEMERAL random key. Pseudonyms will NOT be stable: the same user gets a "
    "different pseudonym in every run, so this output cannot be lined up with any other release. "
    "Use --key-file or SWFTOOLS_ANON_KEY for a publishable archive.")
READABLE_WARNING = ("warning: key file {path} can be read by group or others (mode {mode:04o}); "
                    "restrict it with `chmod 600 {path}`")


def _stderr(message: str) -> None:
    print(f"swftools: {message}", file=sys.stderr)


def _period(key: bytes) -> int:
    """The smallest p such that key[i] == key[i + p] for every i (Knuth-Morris-Pratt)."""
    border = [0] * len(key)
    k = 0
    for i in range(1, len(key)):
        while k and key[i] != key[k]:
            k = border[k - 1]
        if key[i] == key[k]:
            k += 1
        border[i] = k
    return len(key) - (border[-1] if key else 0)


def weakness(key: bytes) -> str | None:
    """Why ``key`` (already trimmed) is obviously weak, or None."""
    if len(key) < MIN_KEY_BYTES:
        return f"too short ({len(key)} bytes, at least {MIN_KEY_BYTES} needed)"
    distinct = len(set(key))
    if distinct < MIN_DISTINCT_KEY_BYTES:
        return (f"too regular to be random: only {distinct} distinct byte values "
                f"(at least {MIN_DISTINCT_KEY_BYTES} expected)")
    period = _period(key)
    if period <= len(key) // 2:
        return f"too regular to be random: a {period}-byte pattern repeated"
    return None


def check_key(key: bytes, source: str) -> bytes:
    """The trimmed ``key``, or an ``InputError`` naming ``source`` when it is empty or weak."""
    key = key.strip()
    if not key:
        raise InputError(source, "the anonymization key is empty", expected=KEY_HINT)
    why = weakness(key)
    if why is not None:
        raise InputError(source, f"the anonymization key is {why}", expected=KEY_HINT)
    return key


def _read_key_file(path: Path, warn: Callable[[str], None]) -> bytes:
    """The key file's bytes, read through one descriptor (the checks and the read see the same
    file); a warning when group or others may read it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError(str(path), "key file does not exist", expected=KEY_HINT) from None
    except OSError as exc:
        raise InputError(str(path), f"cannot open the key file: {exc.strerror}",
                         expected=KEY_HINT) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(str(path), "key file is not a regular file", expected=KEY_HINT)
        if info.st_size > MAX_KEY_FILE_BYTES:
            raise InputError(str(path), f"key file is {info.st_size:,} bytes, not a key",
                             expected=f"a key file of at most {MAX_KEY_FILE_BYTES:,} bytes")
        data = os.read(fd, MAX_KEY_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if info.st_mode & 0o077:
        warn(READABLE_WARNING.format(path=path, mode=stat.S_IMODE(info.st_mode)))
    return data


def load_key(key_file: str | os.PathLike | None = None, env_var: str = DEFAULT_KEY_ENV,
             ephemeral: bool = False, *,
             warn: Callable[[str], None] = _stderr) -> bytes:
    """The secret key: from ``key_file``, else from ``$env_var``; refuses when there is none.

    A weak key is refused (``check_key``); a key file readable by group or others is used with
    a warning through ``warn``. ``ephemeral=True`` returns a fresh random key and calls ``warn``
    with a loud warning that pseudonyms will not be stable (an explicit ``ephemeral`` wins over
    the environment variable, but contradicts ``key_file``). The key is never printed or
    written anywhere.
    """
    if key_file is not None and ephemeral:
        raise UsageError("--key-file and --ephemeral-key contradict each other; give one")
    if key_file is not None:
        path = Path(key_file)
        return check_key(_read_key_file(path, warn), str(path))
    if ephemeral:
        warn(EPHEMERAL_WARNING)
        return secrets.token_bytes(NEW_KEY_RANDOM_BYTES)
    value = os.environ.get(env_var)
    if value is not None:
        return check_key(value.encode("utf-8", "surrogateescape"),
                         f"environment variable {env_var}")
    raise UsageError(f"no anonymization key: give --key-file FILE or set {env_var} "
                     "(or --ephemeral-key for a throw-away run whose pseudonyms are not stable; "
                     "make a key with `swftools anonymize --new-key FILE`)")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def new_key(path: str | os.PathLike, *, force: bool = False) -> Path:
    """Write a new random key (64 hex digits and a newline) to ``path``, mode 0600.

    The file is created with ``O_CREAT | O_EXCL`` and mode 0600 (never wider at any moment),
    without following a symlink; an existing ``path`` is refused unless ``force``, which writes
    a fresh file beside it and renames it over (a symlink there is replaced, not followed).
    """
    target = Path(path)
    data = (secrets.token_hex(NEW_KEY_RANDOM_BYTES) + "\n").encode("ascii")
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    if target.is_dir() and not target.is_symlink():
        raise UsageError(f"--new-key {target}: is a directory; give a file name")
    created = target if not force else target.with_name(
        f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(created, flags, 0o600)
    except FileExistsError:
        raise UsageError(f"--new-key {target}: the file exists; give --force to replace it "
                         "(pseudonyms made with the old key will no longer line up)") from None
    except OSError as exc:
        raise UsageError(f"--new-key {target}: cannot create the key file: "
                         f"{exc.strerror}") from None
    try:
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        if force:
            os.replace(created, target)
    except OSError as exc:
        created.unlink(missing_ok=True)
        raise UsageError(f"--new-key {target}: cannot write the key file: {exc.strerror}") from None
    except BaseException:
        created.unlink(missing_ok=True)
        raise
    return target
