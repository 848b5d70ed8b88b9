"""The shared input layer: every reader opens its files here.

Compression is decided by content, never by name: a file whose bytes start with the gzip magic
number (1f 8b) is decompressed whatever it is called; a file named ``.gz`` (or declared
compressed, as a data package resource may be) over plain content is read as it is, with a
:class:`MisnamedGzipWarning` naming the file; a truncated or corrupt gzip stream is an
:class:`~swftools.errors.InputError` naming the file and how far decompression got.
"""

from __future__ import annotations

import gzip
import io
import mmap
import os
import warnings
import zlib
from pathlib import Path
from typing import BinaryIO, TextIO

import numpy as np

from swftools.errors import InputError
from swftools.fileio import GZIP_MAGIC, is_gzip

_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)
_CHUNK = 1 << 20


class MisnamedGzipWarning(UserWarning):
    """A file named ``.gz`` (or declared gzip) holds plain, uncompressed content."""


def _named_gzip(path: str | os.PathLike) -> bool:
    return Path(path).name.lower().endswith(".gz")


def _warn_plain(path: str | os.PathLike, declared: bool) -> None:
    if declared or _named_gzip(path):
        what = "named .gz" if _named_gzip(path) else "declared gzip-compressed"
        warnings.warn(f"{path}: {what} but the content is not gzip; reading it as plain text",
                      MisnamedGzipWarning, stacklevel=3)


def detect_gzip(path: str | os.PathLike, *, declared: bool = False) -> bool:
    """Whether ``path`` holds gzip content; warns when its name (or ``declared``) says gzip
    but the content is plain. Readers that open the file themselves (pyarrow) call this once."""
    compressed = is_gzip(path)
    if not compressed:
        _warn_plain(path, declared)
    return compressed


def how_far(data: bytes) -> tuple[int, int]:
    """(decompressed bytes, complete lines) that a damaged gzip stream yields before it fails."""
    total = lines = 0
    with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as gz:
        try:
            while piece := gz.read1(_CHUNK):  # one raw read each: nothing is lost
                total += len(piece)
                lines += piece.count(b"\n")
        except _GZIP_ERRORS:
            pass
    return total, lines


def gzip_error(path: str | os.PathLike, exc: BaseException, data: bytes) -> InputError:
    """The InputError for a gzip stream that failed with ``exc`` (``data``: the file's bytes)."""
    size, lines = how_far(data)
    got = f"after {lines:,} complete lines ({size:,} bytes) decompressed"
    if isinstance(exc, EOFError):
        return InputError(str(path), f"truncated gzip file: the compressed stream ends early, {got}",
                          expected="a complete gzip file")
    return InputError(str(path), f"corrupt gzip data ({exc}), {got}", expected="a valid gzip file")


def read_bytes(path: str | os.PathLike, *, declared: bool = False) -> bytes:
    """The whole content of ``path``, decompressed when it is gzip (by content)."""
    data = Path(path).read_bytes()
    if not data.startswith(GZIP_MAGIC):
        _warn_plain(path, declared)
        return data
    return _decompress(path, data)


def _decompress(path: str | os.PathLike, data: bytes) -> bytes:
    try:
        return gzip.decompress(data)
    except _GZIP_ERRORS as exc:
        raise gzip_error(path, exc, data) from None


def map_bytes(path: str | os.PathLike, *, declared: bool = False) -> bytes | mmap.mmap:
    """The content of ``path`` as :func:`read_bytes` gives it, but a plain file as a read-only
    memory map: its pages are the file cache's, neither copied nor freshly allocated (~30 ms
    and 40 MB less for a 40 MB file). Use what bytes and mmap share: ``len``, slicing (which
    copies), ``find``, ``re`` searches, the buffer protocol (``numpy.frombuffer``). The map is
    unmapped once nothing refers to it."""
    with open(path, "rb") as fh:
        head = fh.read(len(GZIP_MAGIC))
        if head == GZIP_MAGIC:
            return _decompress(path, head + fh.read())
        _warn_plain(path, declared)
        if os.fstat(fh.fileno()).st_size == 0:
            return b""
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


class _CheckedGzip(io.RawIOBase):
    """A gzip stream whose decompression failures become located InputErrors."""

    def __init__(self, path: str | os.PathLike, raw: BinaryIO) -> None:
        self._path = path
        self._raw = raw
        self._gz = gzip.GzipFile(fileobj=raw, mode="rb")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        try:
            return self._gz.readinto(buffer)
        except _GZIP_ERRORS as exc:
            raise gzip_error(self._path, exc, Path(self._path).read_bytes()) from None

    def close(self) -> None:
        if not self.closed:
            try:
                self._gz.close()
            finally:
                self._raw.close()
        super().close()


def open_binary(path: str | os.PathLike, *, compressed: bool | None = None,
                declared: bool = False) -> BinaryIO:
    """``path`` opened for reading bytes, decompressing gzip content.

    ``compressed``: the answer of an earlier :func:`detect_gzip` (saves a second warning);
    None decides (and warns) here.
    """
    if compressed is None:
        compressed = detect_gzip(path, declared=declared)
    raw = open(path, "rb")
    if not compressed:
        return raw
    return io.BufferedReader(_CheckedGzip(path, raw), buffer_size=1 << 16)  # type: ignore[return-value]


def open_text(path: str | os.PathLike, *, encoding: str = "utf-8", newline: str | None = None,
              compressed: bool | None = None, declared: bool = False) -> TextIO:
    """``path`` opened for reading text (as :func:`open` would), decompressing gzip content."""
    return io.TextIOWrapper(open_binary(path, compressed=compressed, declared=declared),
                            encoding=encoding, newline=newline)


def read_text(path: str | os.PathLike, *, encoding: str = "utf-8", newline: str | None = None) -> str:
    """The whole text of ``path`` (universal newlines unless ``newline`` says otherwise)."""
    with open_text(path, encoding=encoding, newline=newline) as fh:
        return fh.read()


__all__ = ["MisnamedGzipWarning", "detect_gzip", "gzip_error", "how_far", "is_gzip", "map_bytes",
           "open_binary", "open_text", "read_bytes", "read_text"]


def first_repeat(values: np.ndarray) -> tuple[int, int] | None:
    """(row, earlier row) of the first row whose value an earlier row already has (the rows of
    one trace's job ids, say), or None when every value is distinct."""
    if (np.diff(values) > 0).all():  # ascending, the usual case: no sort needed
        return None
    order = np.argsort(values, kind="stable")
    repeated = values[order[1:]] == values[order[:-1]]
    if not repeated.any():
        return None
    later, earlier = order[1:][repeated], order[:-1][repeated]
    i = int(np.argmin(later))
    return int(later[i]), int(earlier[i])
