"""Atomic, never-clobbering output: write to a temporary sibling, then rename."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from swftools.errors import UsageError


def check_writable(path: Path, force: bool) -> None:
    """Refuse to overwrite an existing output unless ``force`` is set."""
    if path.exists() and not force:
        raise UsageError(f"{path}: already exists (use --force to overwrite)")
    if not path.parent.exists():
        raise UsageError(f"{path.parent}: output directory does not exist")


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, force: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` only on success."""
    target = Path(path)
    check_writable(target, force)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o644)
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, force: bool = False) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; swap it into place only on success."""
    target = Path(path)
    check_writable(target, force)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o755)
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            if old.exists():
                shutil.rmtree(old) if old.is_dir() else old.unlink()
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old) if old.is_dir() else old.unlink()
        else:
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
