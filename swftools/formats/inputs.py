"""The shared input layer: every reader opens its files here.

Compression is decided by content, never by name: a file whose bytes start with the gzip magic
number (1f 8b) is decompressed whatever it is called; a file named ``.gz`` (or declared
compressed, as a data package resource may be) over plain content is read as it is, with a
:class:`MisnamedGzipWarning` naming the file; a truncated or corrupt gzip stream is an
:class:`~swftools.errors.InputError` naming the file and how far decompression got.

Decompression is streamed and bounded (:mod:`swftools.limits`): a stream that expands past
``max(floor, ratio x compressed size)`` or the absolute cap is an InputError as soon as it
does, before the rest is decompressed. No input is memory-mapped: a file truncated while it is
read is an InputError, not a SIGBUS.
"""

from __future__ import annotations

import gzip
import io
import os
import warnings
import zlib
from pathlib import Path
from typing import BinaryIO, TextIO

import numpy as np

from swftools.errors import InputError, count, open_error_reason
from swftools.fileio import GZIP_MAGIC, is_gzip, read_whole, take_prefetched
from swftools.limits import BoundedReader, Limits, current

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


def how_far(data: bytes, limit: int | None = None) -> tuple[int, int]:
    """(decompressed bytes, complete lines) that a damaged gzip stream yields before it fails
    (counting stops past ``limit`` bytes, by default the stream's budget: a bomb stays cheap)."""
    total = lines = 0
    if limit is None:
        limit = current().stream_budget(len(data))
    with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as gz:
        try:
            while total <= limit and (piece := gz.read1(_CHUNK)):  # one raw read each
                total += len(piece)
                lines += piece.count(b"\n")
        except _GZIP_ERRORS:
            pass
    return total, lines


def gzip_error(path: str | os.PathLike, exc: BaseException, data: bytes) -> InputError:
    """The InputError for a gzip stream that failed with ``exc`` (``data``: the file's bytes)."""
    size, lines = how_far(data)
    got = (f"after {count(lines, 'complete line', thousands=True)} "
           f"({count(size, 'byte', thousands=True)}) decompressed")
    if isinstance(exc, EOFError):
        return InputError(str(path), f"truncated gzip file: the compressed stream ends early, {got}",
                          expected="a complete gzip file")
    return InputError(str(path), f"corrupt gzip data ({exc}), {got}", expected="a valid gzip file")


def open_error(path: str | os.PathLike, exc: OSError, expected: str) -> InputError:
    """The InputError for an input file that cannot be opened (missing, a directory, not
    readable), in the words the CLI prints for the bare OSError; ``expected``: what it should be."""
    return InputError(str(path), open_error_reason(exc), expected=expected)


def read_bytes(path: str | os.PathLike, *, declared: bool = False,
               limits: Limits | None = None) -> bytes:
    """The whole content of ``path``, decompressed when it is gzip (by content), within
    ``limits`` (default: :meth:`Limits.from_env`); a plain file a command prefetched
    (``fileio.prefetch``) is handed over, not read again."""
    data = take_prefetched(path)
    if data is not None:
        _warn_plain(path, declared)
        return data
    with open(path, "rb") as fh:
        head = fh.read(len(GZIP_MAGIC))
        if head == GZIP_MAGIC:
            return _decompress(path, fh, current(limits))
        _warn_plain(path, declared)
        fh.seek(0)  # read again from the start: ``head + rest`` would copy the whole file
        return _read_plain(path, fh)


def _read_plain(path: str | os.PathLike, fh: BinaryIO) -> bytes:
    """All of an open plain file, read from its start: a file that shrinks while it is read (or
    grows past its size at the start) is an InputError rather than a silently cut trace."""
    size = os.fstat(fh.fileno()).st_size
    data = read_whole(fh, size)
    if len(data) != size:
        raise _changed(path, size, len(data))
    return data


def _changed(path: str | os.PathLike, size: int, got: int) -> InputError:
    return InputError(str(path), f"the file changed while it was read: {size:,} bytes at the "
                                 f"start, {got:,} read", expected="a file no other program writes "
                                                                  "to while swftools reads it")


def _decompress(path: str | os.PathLike, fh: BinaryIO, limits: Limits) -> bytes:
    """Decompress the gzip file open at ``fh`` (its magic already read) in chunks, stopping
    with an InputError as soon as the output passes the stream's budget."""
    fh.seek(0)
    out = io.BytesIO()  # getvalue() hands over its buffer: no second copy
    gz = _CheckedGzip(path, fh, limits, close_file=False)
    buffer = memoryview(bytearray(min(_CHUNK * 4, gz.budget + 1)))  # one piece, reused
    while n := gz.readinto(buffer):
        out.write(buffer[:n])
    gz.close()
    return out.getvalue()


class _CheckedGzip(BoundedReader):
    """A gzip stream within the stream's budget (:mod:`swftools.limits`), whose decompression
    failures become located InputErrors; it closes the file under it unless ``close_file`` is
    false."""

    def __init__(self, path: str | os.PathLike, raw: BinaryIO, limits: Limits | None = None,
                 *, close_file: bool = True) -> None:
        limits = current(limits)
        compressed = os.fstat(raw.fileno()).st_size
        super().__init__(gzip.GzipFile(fileobj=raw, mode="rb"), limits.stream_budget(compressed),
                         lambda produced: limits.stream_error(str(path), compressed, produced))
        self._path = path
        self._file = raw if close_file else None

    def readinto(self, buffer) -> int:  # type: ignore[override]
        try:
            return super().readinto(buffer)
        except _GZIP_ERRORS as exc:
            raise gzip_error(self._path, exc, Path(self._path).read_bytes()) from None

    def seekable(self) -> bool:
        return False  # read forward only, as the readers do

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._file is not None:
                self._file.close()


def open_binary(path: str | os.PathLike, *, compressed: bool | None = None,
                declared: bool = False, limits: Limits | None = None) -> BinaryIO:
    """``path`` opened for reading bytes, decompressing gzip content within ``limits``.

    ``compressed``: the answer of an earlier :func:`detect_gzip` (saves a second warning);
    None decides (and warns) here.
    """
    if compressed is None:
        compressed = detect_gzip(path, declared=declared)
    raw = open(path, "rb")
    if not compressed:
        return raw
    try:
        checked = _CheckedGzip(path, raw, limits)
    except BaseException:
        raw.close()
        raise
    return io.BufferedReader(checked, buffer_size=1 << 16)  # type: ignore[return-value]


def open_text(path: str | os.PathLike, *, encoding: str = "utf-8", newline: str | None = None,
              compressed: bool | None = None, declared: bool = False,
              limits: Limits | None = None) -> TextIO:
    """``path`` opened for reading text (as :func:`open` would), decompressing gzip content."""
    return io.TextIOWrapper(open_binary(path, compressed=compressed, declared=declared,
                                        limits=limits), encoding=encoding, newline=newline)


def read_text(path: str | os.PathLike, *, encoding: str = "utf-8", newline: str | None = None,
              limits: Limits | None = None) -> str:
    """The whole text of ``path`` (universal newlines unless ``newline`` says otherwise)."""
    with open_text(path, encoding=encoding, newline=newline, limits=limits) as fh:
        return fh.read()


__all__ = ["MisnamedGzipWarning", "detect_gzip", "gzip_error", "how_far", "is_gzip",
           "open_binary", "open_error", "open_text", "read_bytes", "read_text"]


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
