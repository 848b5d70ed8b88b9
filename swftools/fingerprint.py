"""The fingerprint of a job table: which trace a derived result (a what-if comparison) was made
from, so that it is never shown beside another trace's report.

Definition (``sha256:`` + 64 hex digits): SHA-256 over, for each column in name order (byte order
of the UTF-8 names), the bytes

    name  NUL  type  NUL  row count (8 bytes, little-endian)  validity  values

- ``type``: the Arrow type after normalising (dictionary columns as their value type, strings
  as ``large_string``, binary as ``large_binary``), as ``str(pyarrow type)``;
- ``validity``: one byte per row, 1 valid, 0 null;
- ``values``: numbers, booleans and temporal types as their physical little-endian integers or
  IEEE doubles (8 bytes each; a null as 0); strings and binaries as, per row, the 8-byte
  little-endian byte length then the bytes (a null as length 0); any other type as, per row,
  the 8-byte length then the bytes of its JSON text (``sort_keys``, no spaces).

Rows in table order, schema metadata (the swftools metadata: source file name, versions) left out:
the same jobs give the same fingerprint whatever file or chunking they were read from, and a
different value, row, row order or column gives another.
"""

from __future__ import annotations

import hashlib
import json
import weakref

import numpy as np
import pyarrow as pa

from swftools import table as jt

PREFIX = "sha256:"


# (through the buffers: pyarrow.compute's casts and fill_null cost ~40 ms to import, and
# pyarrow's to_numpy of an array with nulls imports pandas)

def _normalised(column: pa.ChunkedArray) -> tuple[pa.Array, str]:
    """The column as one array and the name of its normalised type (strings hashed as
    ``large_string``, binaries as ``large_binary``: the same bytes whatever the offset width)."""
    arr = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        return arr, str(pa.large_string())
    if pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type):
        return arr, str(pa.large_binary())
    return arr, str(arr.type)


def _length_prefixed(items: list[bytes]) -> bytes:
    lengths = np.array([len(b) for b in items], dtype="<i8")
    return b"".join(l.tobytes() + b for l, b in zip(lengths, items))


def _length_prefixed_buffers(arr: pa.Array, valid: np.ndarray | None) -> np.ndarray | None:
    """``_length_prefixed`` of a string or binary array (nulls as empty) from its buffers,
    without a Python object per row; None when a null slot holds bytes."""
    n = len(arr)
    if not n:
        return np.empty(0, dtype=np.uint8)
    _, offsets_buf, data_buf = arr.buffers()
    width = "<i8" if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type) \
        else "<i4"
    offsets = np.frombuffer(offsets_buf, width, count=n + 1,
                            offset=arr.offset * np.dtype(width).itemsize).astype(np.int64)
    lengths = np.diff(offsets)
    if valid is not None and lengths[~valid].any():
        return None
    total = int(offsets[-1] - offsets[0])
    out = np.empty(8 * n + total, dtype=np.uint8)
    starts = offsets[:-1] - offsets[0] + 8 * np.arange(n, dtype=np.int64)  # each row's head
    out[(starts[:, None] + np.arange(8, dtype=np.int64)).ravel()] = \
        lengths.astype("<i8").view(np.uint8)
    if total:
        body = np.arange(total, dtype=np.int64) + np.repeat(8 * np.arange(1, n + 1), lengths)
        out[body] = np.frombuffer(data_buf, np.uint8, count=total, offset=int(offsets[0]))
    return out


def _values(arr: pa.Array, valid: np.ndarray | None) -> bytes | np.ndarray:
    t = arr.type
    if (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t)):
        fast = _length_prefixed_buffers(arr, valid)
        if fast is not None:
            return fast
        raw = arr.to_pylist()
        return _length_prefixed([b"" if v is None else v.encode("utf-8") if isinstance(v, str)
                                 else bytes(v) for v in raw])
    if pa.types.is_boolean(t) and len(arr):
        bits = jt.to_numpy(pa.Array.from_buffers(t, len(arr), [None, arr.buffers()[1]],
                                                 offset=arr.offset))
        return (bits if valid is None else bits & valid).astype("<i8")
    if pa.types.is_floating(t):
        return np.ascontiguousarray(jt.filled(arr, 0.0), dtype="<f8")
    if pa.types.is_integer(t) or pa.types.is_temporal(t):
        if pa.types.is_temporal(t):  # its physical integers (32 or 64 bits)
            arr = arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
        return np.ascontiguousarray(jt.filled(arr, 0),
                                    dtype="<u8" if pa.types.is_uint64(t) else "<i8")
    return _length_prefixed([json.dumps(v, sort_keys=True, separators=(",", ":"),
                                        default=str).encode("utf-8") for v in arr.to_pylist()])


# fingerprints of live tables (Arrow tables are immutable): a what-if sweep calls ``whatif`` once
# per policy on the same table; an entry goes with its table
_memo: dict[int, tuple[weakref.ref, str]] = {}


def table_fingerprint(table: pa.Table) -> str:
    """The fingerprint of ``table`` (see the module docstring): ``sha256:`` + 64 hex digits."""
    key = id(table)
    hit = _memo.get(key)
    if hit is not None and hit[0]() is table:
        return hit[1]
    fingerprint = _fingerprint(table)
    _memo[key] = (weakref.ref(table, lambda _, key=key: _memo.pop(key, None)), fingerprint)
    return fingerprint


def _fingerprint(table: pa.Table) -> str:
    h = hashlib.sha256()
    for name in sorted(table.column_names, key=lambda n: n.encode("utf-8")):
        arr, type_name = _normalised(table.column(name))
        valid = jt.validity(arr)
        h.update(name.encode("utf-8") + b"\0" + type_name.encode("utf-8") + b"\0")
        h.update(np.array([len(arr)], dtype="<i8").tobytes())
        h.update(np.ones(len(arr), dtype=np.uint8) if valid is None else valid.view(np.uint8))
        h.update(_values(arr, valid))
    return PREFIX + h.hexdigest()


__all__ = ["PREFIX", "table_fingerprint"]
