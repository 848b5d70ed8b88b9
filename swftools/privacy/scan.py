"""Walk an output directory or archive and run the leak matcher over every byte a reader could see.

File kinds, chosen by name: ``.tar[.gz|.bz2|.xz]``/``.tgz`` and ``.zip`` (every member, nested
archives too; tar members through ``swftools.limits``: regular files only, each within the
per-member and total caps), ``.gz`` (decompressed as a stream, then by its inner name),
``.parquet`` (file-level and Arrow-schema key-value metadata, field metadata, column names and
every string value, one row group at a time, located by column and 0-based row), anything else
as text, read in chunks and located by line. The names of files and members are searched too.
A file holding NUL bytes (not text) only reports whole-token hits, because random bytes spell
short names by chance. A file that cannot be read within the caps, or runs out of memory, is
reported unreadable (the audit then fails), never a traceback.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
import lzma
import os
import tarfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from swftools.errors import InputError
from swftools.privacy.match import Matcher, Term

CHUNK_BYTES = 8 << 20
_CONTEXT_BYTES = 128  # what the matcher reads around a hit (token, archive word and hex run checks)
OUT_OF_MEMORY = "out of memory while reading it (too large to scan on this machine)"
MAX_LOCATIONS = 100  # listed per file, member and term; the rest are counted
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


@dataclass(frozen=True)
class Leak:
    """One place where a term occurs: a text line, a Parquet cell or a metadata entry."""

    file: str
    member: str | None
    term: Term
    match: str
    line: int | None = None
    column: str | None = None
    row: int | None = None
    rows: int | None = None
    metadata_key: str | None = None
    count: int = 1
    in_name: bool = False  # in the file or member name itself

    def where(self) -> str:
        place = self.file + (f"!{self.member}" if self.member else "")
        if self.in_name:
            return f"{place}: {'member' if self.member else 'file'} name"
        if self.line is not None:
            return f"{place}:{self.line}"
        if self.metadata_key is not None:
            return f"{place}: metadata {self.metadata_key!r}"
        if self.row is not None:
            more = f" (in {self.rows} rows)" if self.rows and self.rows > 1 else ""
            return f"{place}: column {self.column!r}, row {self.row}{more}"
        return f"{place}: column name {self.column!r}"

    def to_dict(self) -> dict[str, Any]:
        term = self.term
        return {"file": self.file, "member": self.member, "kind": term.kind,
                "name": None if term.kind == "key" else term.text, "what": term.describe(),
                "match": self.match, "line": self.line, "column": self.column, "row": self.row,
                "rows": self.rows, "metadata_key": self.metadata_key, "in_name": self.in_name,
                "count": self.count}


@dataclass
class ScanResult:
    """Everything the walk found (leaks capped at MAX_LOCATIONS per file, member and term)."""

    leaks: list[Leak] = field(default_factory=list)
    omitted: Counter = field(default_factory=Counter)  # (file, member, term) -> unlisted hits
    unreadable: list[tuple[str, str | None, str]] = field(default_factory=list)
    files_scanned: int = 0
    bytes_scanned: int = 0
    job_tables: list[tuple[str, pa.Table]] = field(default_factory=list)


class Scanner:
    """Scans files with one matcher; ``want_table`` decides which Parquet files are job tables."""

    def __init__(self, matcher: Matcher, want_table: Callable[[pa.Schema], list[str] | None]
                 = lambda schema: None, limits: Any = None) -> None:
        self.matcher = matcher
        self.want_table = want_table
        self.limits = limits
        self.result = ScanResult()
        self._listed: Counter = Counter()

    # -- walking -------------------------------------------------------------------------------
    def scan_path(self, path: Path) -> ScanResult:
        """Scan a file or every file below a directory (sorted, symlinked dirs not followed),
        and the names of the files and directories themselves."""
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in dirs:
                    self._scan_name(Path(root, name).relative_to(path).as_posix() + "/", None)
                for name in sorted(files):
                    full = Path(root, name)
                    self._scan_disk_file(full, full.relative_to(path).as_posix())
        else:
            self._scan_disk_file(path, path.name)
        return self.result

    def _scan_name(self, file: str, member: str | None) -> None:
        """Hits in a file or member name (``scan_path`` labels, tar and zip member names)."""
        name = member.rsplit("!", 1)[-1] if member is not None else file
        for hit in self.matcher.scan(name.encode("utf-8", "surrogateescape")):
            self._add(Leak(file, member, hit.term, hit.match, in_name=True))

    def _scan_disk_file(self, path: Path, label: str) -> None:
        self._scan_name(label, None)
        if not path.is_file():
            return
        try:
            if path.name.lower().endswith(".parquet"):
                self._scan_parquet(str(path), label, None)
            else:
                with open(path, "rb") as fh:
                    self._scan_stream(fh, path.name, label, None)
        except OSError as exc:
            self.result.unreadable.append((label, None, exc.strerror or str(exc)))
        except pa.ArrowException as exc:  # a Parquet file that is not one, or is cut short
            self.result.unreadable.append((label, None, f"{type(exc).__name__}: {exc}"))
        except MemoryError:
            self.result.unreadable.append((label, None, OUT_OF_MEMORY))
        except InputError as exc:
            self.result.unreadable.append((label, None, _reason(exc)))

    def _scan_stream(self, fh: IO[bytes], name: str, file: str, member: str | None) -> None:
        lower = name.lower()
        try:
            if lower.endswith(_TAR_SUFFIXES):
                self._scan_tar(fh, file, member)
            elif lower.endswith(".zip"):
                self._scan_zip(fh, file, member)
            elif lower.endswith(".gz"):
                with gzip.GzipFile(fileobj=fh, mode="rb") as inner:
                    self._scan_stream(inner, name[:-3], file, member)
            elif lower.endswith(".parquet"):
                self._scan_parquet(self._seekable(fh, file, member), file, member)
            else:
                self._scan_text(fh, file, member)
        except (EOFError, zlib.error, gzip.BadGzipFile, tarfile.TarError, zipfile.BadZipFile,
                pa.ArrowException, lzma.LZMAError, OSError) as exc:
            self.result.unreadable.append((file, member, f"{type(exc).__name__}: {exc}"))
        except MemoryError:
            self.result.unreadable.append((file, member, OUT_OF_MEMORY))
        except InputError as exc:
            self.result.unreadable.append((file, member, _reason(exc)))

    def _seekable(self, fh: IO[bytes], file: str, member: str | None) -> IO[bytes]:
        """``fh`` itself when it can seek (Parquet reads its footer first), else its bytes up to
        the per-member cap (a longer stream is refused, not read)."""
        if getattr(fh, "seekable", lambda: False)():
            return fh
        cap = self._limits().member_bytes
        data = fh.read(cap + 1)
        if len(data) > cap:
            raise InputError(file + (f"!{member}" if member else ""),
                             f"a Parquet stream of more than {cap} bytes",
                             expected="a member within SWFTOOLS_MAX_MEMBER_BYTES")
        return io.BytesIO(data)

    def _limits(self) -> Any:
        if self.limits is None:
            from swftools.limits import Limits

            self.limits = Limits.from_env()
        return self.limits

    def _scan_tar(self, fh: IO[bytes], file: str, member: str | None) -> None:
        from swftools.limits import read_member, safe_members

        where = file + (f"!{member}" if member else "")
        with tarfile.open(fileobj=fh, mode="r:*") as tar:
            for info in safe_members(tar, path=where, limits=self._limits()):
                inner_member = _join(member, info.name)
                self._scan_name(file, inner_member)
                inner = read_member(tar, info, path=where, limits=self._limits())
                self._scan_stream(inner, info.name, file, inner_member)

    def _scan_zip(self, fh: IO[bytes], file: str, member: str | None) -> None:
        data = fh if fh.seekable() else self._seekable(fh, file, member)
        with zipfile.ZipFile(data) as archive:
            for info in archive.infolist():
                self._scan_name(file, _join(member, info.filename))
                if info.is_dir():
                    continue
                with archive.open(info) as inner:
                    self._scan_stream(inner, info.filename, file, _join(member, info.filename))

    # -- text ----------------------------------------------------------------------------------
    def _scan_text(self, fh: IO[bytes], file: str, member: str | None) -> None:
        self.result.files_scanned += 1
        line, carry, binary, first = 1, b"", False, True
        # a line of four chunks or more is scanned in parts that overlap by twice `keep` bytes:
        # a hit is reported by the part where it starts within [seen, end), seen with `keep`
        # bytes of context on each side, so a name across a cut is found once
        keep = min(CHUNK_BYTES, self.matcher.max_term_bytes + _CONTEXT_BYTES)
        seen = 0  # the leading bytes of `data` an earlier part has reported
        while True:
            chunk = fh.read(CHUNK_BYTES)
            if first:
                binary, first = b"\x00" in chunk[:8192], False
            if not chunk:
                data, carry, end = carry, b"", len(carry)
            else:
                data = carry + chunk
                cut = data.rfind(b"\n") + 1
                if cut == 0 and len(data) < 4 * CHUNK_BYTES:
                    carry = data
                    continue
                if cut:
                    data, carry, end = data[:cut], data[cut:], cut
                else:
                    end = len(data) - keep
                    carry = data[end - keep:]
            if end > seen:
                self.result.bytes_scanned += end - seen
                for line_no, hit in self.matcher.scan_lines(data, line, tokens_only=binary):
                    if seen <= hit.offset < end:
                        self._add(Leak(file, member, hit.term, hit.match, line=line_no))
                line += data.count(b"\n", seen, end)
            seen = keep if chunk and not cut else 0
            if not chunk:
                return

    # -- parquet -------------------------------------------------------------------------------
    def _scan_parquet(self, source: Any, file: str, member: str | None) -> None:
        """Key-value metadata (file level and the Arrow schema's), field metadata, column names,
        then every text column one row group at a time."""
        self.result.files_scanned += 1
        pf = pq.ParquetFile(source)
        kv = dict(pf.metadata.metadata or {})
        serialized = kv.pop(b"ARROW:schema", None)
        for key, value in sorted(kv.items()):
            self._scan_metadata(key, value, file, member)
        schemas = [pf.schema_arrow]
        if serialized is not None:
            try:
                stored = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(serialized)))
            except (ValueError, binascii.Error, pa.ArrowException):
                self._scan_metadata(b"ARROW:schema", serialized, file, member)
            else:
                schemas.append(stored)
                for key, value in sorted((stored.metadata or {}).items()):
                    if kv.get(key) != value:
                        self._scan_metadata(b"ARROW:schema." + key, value, file, member)
        seen: set[tuple[str, bytes, bytes]] = set()
        for schema in schemas:
            for f in schema:
                for key, value in sorted((f.metadata or {}).items()):
                    if (f.name, key, value) not in seen:
                        seen.add((f.name, key, value))
                        self._scan_metadata(f.name.encode() + b"." + key, value, file, member)
        schema = pf.schema_arrow
        for f in schema:
            for hit in self.matcher.scan(f.name.encode("utf-8", "surrogatepass")):
                self._add(Leak(file, member, hit.term, hit.match, column=f.name))
        texts = [f.name for f in schema if _has_text(f.type)]
        wanted = self.want_table(schema)
        label = file + (f"!{member}" if member else "")
        cap = self._limits().member_bytes
        parts: list[pa.Table] = []
        offset = 0
        for group in range(pf.metadata.num_row_groups):
            meta = pf.metadata.row_group(group)
            if meta.total_byte_size > cap:
                raise InputError(label, f"row group {group} holds {meta.total_byte_size} bytes "
                                 f"uncompressed, more than the cap of {cap}",
                                 expected="row groups within SWFTOOLS_MAX_MEMBER_BYTES")
            for name in texts:
                column = pf.read_row_group(group, columns=[name]).column(0)
                self._scan_column(column, name, file, member, offset)
            if wanted is not None:
                parts.append(pf.read_row_group(group, columns=wanted))
            offset += meta.num_rows
        if wanted is not None:
            table = (pa.concat_tables(parts) if parts
                     else pf.schema_arrow.empty_table().select(wanted))
            self.result.job_tables.append((label, table))

    def _scan_metadata(self, key: bytes, value: bytes, file: str, member: str | None) -> None:
        name = key.decode("utf-8", "replace")
        self.result.bytes_scanned += len(key) + len(value)
        for hit in self.matcher.scan(key + b"\n" + value):
            self._add(Leak(file, member, hit.term, hit.match, metadata_key=name))

    def _scan_column(self, column: pa.ChunkedArray, name: str, file: str,
                     member: str | None, offset: int = 0) -> None:
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        if not _is_flat_text(column.type):
            texts = [None if v is None else json.dumps(v, default=str, ensure_ascii=False)
                     for v in column.to_pylist()]
            column = pa.chunked_array([pa.array(texts, pa.string())])
        uniques = [v for v in pc.unique(column).to_pylist() if v is not None]
        encoded = [v if isinstance(v, bytes) else v.encode("utf-8", "surrogatepass")
                   for v in uniques]
        blob = b"\n".join(v.replace(b"\n", b" ") for v in encoded)
        self.result.bytes_scanned += len(blob)
        seen: set[tuple[int, Term]] = set()
        for line_no, hit in self.matcher.scan_lines(blob):
            if (line_no, hit.term) in seen:
                continue
            seen.add((line_no, hit.term))
            value = pa.scalar(uniques[line_no - 1], column.type)
            first_row = offset + pc.index(column, value).as_py()
            rows = pc.sum(pc.equal(column, value)).as_py()
            self._add(Leak(file, member, hit.term, hit.match, column=name, row=first_row,
                           rows=rows, count=rows))

    # -- bookkeeping ---------------------------------------------------------------------------
    def _add(self, leak: Leak) -> None:
        key = (leak.file, leak.member, leak.term)
        if self._listed[key] < MAX_LOCATIONS:
            self._listed[key] += 1
            self.result.leaks.append(leak)
        else:
            self.result.omitted[key] += leak.count


def _reason(exc: InputError) -> str:
    """An InputError's message without the file (the report names it)."""
    text = exc.message
    if exc.expected:
        text += f" (expected {exc.expected})"
    return text


def _join(outer: str | None, inner: str) -> str:
    return inner if outer is None else f"{outer}!{inner}"


def _is_flat_text(dtype: pa.DataType) -> bool:
    return (pa.types.is_string(dtype) or pa.types.is_large_string(dtype)
            or pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype))


def _has_text(dtype: pa.DataType) -> bool:
    if pa.types.is_dictionary(dtype):
        return _has_text(dtype.value_type)
    if _is_flat_text(dtype) or pa.types.is_string_view(dtype) or pa.types.is_binary_view(dtype):
        return True
    if pa.types.is_nested(dtype):
        return any(_has_text(dtype.field(i).type) for i in range(dtype.num_fields))
    return False
