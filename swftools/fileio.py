"""Bytes on disk, shared by every writer and reader: deterministic gzip, gzip by content, digests.

Reading trace files (warnings for misnamed ``.gz`` files, errors for truncated streams) is
:mod:`swftools.formats.inputs`, built on :func:`is_gzip` here.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import queue
import stat
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

# One compression level for every gzip file swftools writes (SWF, NQSII, data package CSV,
# telemetry fixtures, release tarball): same input, same bytes.
GZIP_LEVEL = 6
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


def gzip_writer(raw: BinaryIO) -> gzip.GzipFile:
    """A gzip stream over ``raw`` with a bare header (no file name, mtime 0) at ``GZIP_LEVEL``."""
    return gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=GZIP_LEVEL, mtime=0)


def write_behind(chunks: Iterable[Any], write: Callable[[Any], Any]) -> None:
    """``write`` each of ``chunks`` (bytes-like) in a second thread while the next one is made:
    a file write or a gzip compression releases the GIL, so it overlaps the producer's work.
    At most two chunks are out at a time, the one being written and the one being made: a
    producer may reuse a chunk's buffer for the chunk after next. An exception on either side
    stops both and is raised here, after the writes already started have ended."""
    room = threading.Semaphore(2)
    handed: queue.Queue[Any] = queue.Queue()
    end = object()
    failed: list[BaseException] = []

    def drain() -> None:
        while (chunk := handed.get()) is not end:
            if not failed:
                try:
                    write(chunk)
                except BaseException as exc:  # raised in the producer's thread
                    failed.append(exc)
            room.release()

    writer = threading.Thread(target=drain, name="swftools-write-behind", daemon=True)
    writer.start()
    items = iter(chunks)
    try:
        while not failed:
            room.acquire()  # the chunk before last is written: its buffer is free
            chunk = next(items, end)
            if chunk is end:
                break
            handed.put(chunk)
    finally:
        handed.put(end)
        writer.join()
    if failed:
        raise failed[0]


_prefetched: dict[str, tuple[threading.Thread, list[Any]]] = {}


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


_PARALLEL_READ_BYTES = 32 << 20  # from this size a file is read by several threads at once


def usable_cores() -> int:
    """The cores this process may use, at most 8 (the threads of a compiled kernel or a read)."""
    return max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1), 8))


@functools.cache
def _native() -> Any:
    """``swftools._fileio``, or None when it is not built (said once on stderr)."""
    from swftools.extensions import load

    return load("swftools._fileio", "reading large files")


def read_whole(fh: BinaryIO, size: int) -> bytes:
    """The first ``size`` bytes of the open file ``fh`` (fewer when it is shorter now). A large
    file is read by one thread per core at once (``_fileio``: the copy from the page cache and
    the first touch of new memory are most of a read's time), else by ``fh.read``.

    Once :func:`_native` has run, this imports nothing: :func:`prefetch` runs it in a second
    thread while the main thread imports the libraries, and two threads importing at once can
    deadlock in CPython 3.11's module locks."""
    threads = usable_cores()
    native = _native() if size >= _PARALLEL_READ_BYTES and threads > 1 else None
    if native is None:
        fh.seek(0)
        return fh.read(size)
    data = native.unfilled(size)
    bounds = [size * k // threads for k in range(threads + 1)]
    reached = [0] * threads
    failed: list[BaseException] = []
    fd = fh.fileno()

    def fill(k: int) -> None:
        try:
            reached[k] = native.fill(data, fd, bounds[k], bounds[k + 1])
        except BaseException as exc:  # raised in the caller's thread below
            failed.append(exc)

    workers = [threading.Thread(target=fill, args=(k,), name="swftools-read", daemon=True)
               for k in range(1, threads)]
    for worker in workers:
        worker.start()
    fill(0)
    for worker in workers:
        worker.join()
    if failed:
        raise failed[0]
    for end, got in zip(bounds[1:], reached):
        if got < end:  # the file ended sooner: what was read before that point
            return data[:got]
    return data


def prefetch(path: str | os.PathLike) -> None:
    """Start reading the plain (not gzip) regular file ``path`` in a second thread, so that the
    read overlaps the libraries a command imports before it reads (the read releases the GIL);
    :func:`take_prefetched` hands the bytes over. Anything unusual (not a file, gzip content, an
    error) just leaves nothing prefetched: the reader then reads as it always does."""
    key = os.fspath(path)
    if key in _prefetched:
        return
    box: list[Any] = []

    def read() -> None:
        try:
            with open(key, "rb") as fh:
                st = os.fstat(fh.fileno())
                if fh.read(len(GZIP_MAGIC)) == GZIP_MAGIC:
                    return
                data = read_whole(fh, st.st_size)
            if len(data) == st.st_size:
                box.append((_identity(st), data))
        except (OSError, ValueError, MemoryError):
            pass

    try:
        st = os.stat(key)
    except (OSError, ValueError):
        return
    if not stat.S_ISREG(st.st_mode):
        return
    if st.st_size >= _PARALLEL_READ_BYTES:
        _native()  # loaded here: the thread below must import nothing
    thread = threading.Thread(target=read, name="swftools-prefetch", daemon=True)
    _prefetched[key] = (thread, box)
    thread.start()


def take_prefetched(path: str | os.PathLike) -> bytes | None:
    """The bytes :func:`prefetch` read of ``path`` (once), or None: none started, gzip content,
    a failed read, or a file that changed since (another size, inode or modification time)."""
    entry = _prefetched.pop(os.fspath(path), None)
    if entry is None:
        return None
    thread, box = entry
    thread.join()
    if not box:
        return None
    identity, data = box[0]
    try:
        if _identity(os.stat(path)) != identity:
            return None
    except OSError:
        return None
    return data


def is_gzip(path: str | os.PathLike) -> bool:
    """Whether the file's content starts with the gzip magic bytes (1f 8b), whatever its name."""
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def file_digest(path: str | os.PathLike, algorithm: str = "sha256",
                advance: Callable[[int], None] | None = None) -> str:
    """Hex digest of a file's bytes, read in chunks (``advance`` is told each chunk's size)."""
    h = hashlib.new(algorithm)
    with open(Path(path), "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            if advance:
                advance(len(chunk))
    return h.hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file."""
    return file_digest(path, "sha256")


PARQUET_COMPRESSION = "zstd"


def write_parquet(table: Any, path: Path) -> None:
    """Write ``table`` as Parquet (zstd): every Parquet file swftools writes; pyarrow output is
    byte-identical across runs. pyarrow.parquet is imported on use (~15 ms)."""
    import pyarrow.parquet as pq

    pq.write_table(table, path, compression=PARQUET_COMPRESSION)


__all__ = ["GZIP_LEVEL", "GZIP_MAGIC", "PARQUET_COMPRESSION", "file_digest", "gzip_writer",
           "is_gzip", "sha256_file", "write_behind", "write_parquet"]
