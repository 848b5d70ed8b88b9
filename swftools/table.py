"""The canonical job table: a pyarrow Table whose schema is ``schemas/jobs.schema.json``.

Every reader returns such a table and every writer takes one. Table-level metadata (SWF header,
layout, site, time zone, source file, converter version) travels in the schema metadata under the
key ``swftools`` as JSON; its typed form is :class:`swftools.metadata.TableMetadata`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa

from swftools.metadata import METADATA_KEY, TableMetadata, decode, encode
from swftools.errors import UsageError
from swftools.resources import load_json

# Table Schema type -> Arrow type. Integers are int64 everywhere so that arithmetic on epoch
# seconds never overflows and nulls (unknown, SWF -1) are representable.
ARROW_TYPES = {"integer": pa.int64(), "number": pa.float64(), "string": pa.string(),
               "boolean": pa.bool_()}


# -- numpy <-> Arrow without pandas -------------------------------------------------------------
# pyarrow imports pandas (0.15-0.25 s) the first time it converts a Python or numpy value:
# ``pa.array``, ``pa.scalar``, ``Array.to_numpy``, a Python number given to a compute function.
# The hot paths (SWF read and write, replay) build and read arrays through their buffers instead,
# and this module loads ``pyarrow.compute`` (~45 ms) only where it uses it: the SWF path of
# ``convert`` does without.

def from_numpy(values: np.ndarray, null: np.ndarray | bool | None = None) -> pa.Array:
    """A numeric 1-D numpy array as an Arrow array over the same memory; ``null`` (bool, same
    length) marks nulls, ``True`` makes every value null. Equal to ``pa.array(values,
    mask=null)``, without importing pandas."""
    values = np.ascontiguousarray(values)
    if values.ndim != 1 or values.dtype.kind not in "iuf":
        raise TypeError(f"from_numpy: a 1-D integer or float array, not {values.dtype} "
                        f"with {values.ndim} dimensions")
    validity, nulls = None, 0
    if null is True:
        nulls = len(values)
        validity = pa.py_buffer(np.zeros((nulls + 7) // 8, dtype=np.uint8)) if nulls else None
    elif null is not None and null is not False:
        nulls = int(np.count_nonzero(null))
        if nulls:
            validity = pa.py_buffer(np.packbits(~np.asarray(null, dtype=bool), bitorder="little"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values),
                                 [validity, pa.py_buffer(values)], null_count=nulls)


def nulls(n: int, type_: pa.DataType) -> pa.Array:
    """An array of ``n`` nulls (``pa.nulls(n, type_)``) whose buffers, for numbers and strings,
    are lazily zeroed memory that stays untouched: ``pa.nulls`` writes the zeros (3.5 MB of
    fresh memory for 450,000 int64 nulls, ~40 ms where page faults are dear)."""
    if pa.types.is_integer(type_) or pa.types.is_floating(type_):
        return from_numpy(np.zeros(n, dtype=type_.to_pandas_dtype()), True)
    if pa.types.is_string(type_):
        return pa.Array.from_buffers(type_, n, [pa.py_buffer(np.zeros((n + 7) // 8, np.uint8)),
                                                pa.py_buffer(np.zeros(n + 1, np.int32)),
                                                pa.py_buffer(b"")], null_count=n)
    return pa.nulls(n, type_)


def scalar(value: int | float, type_: pa.DataType = pa.int64()) -> pa.Scalar:
    """An Arrow scalar of a number (``pa.scalar(value, type_)``, without importing pandas)."""
    return from_numpy(np.array([value], dtype=type_.to_pandas_dtype()))[0]


def strings(values: list[str]) -> pa.Array:
    """A list of str as an Arrow string array (``pa.array(values, pa.string())``, without
    importing pandas)."""
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(encoded),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def strings_at(words: list[str], index: np.ndarray) -> pa.Array:
    """``words[index[i]]`` for each ``i`` as an Arrow string array (a dictionary decoded
    through numpy: pyarrow's ``dictionary_decode`` imports pyarrow.compute, ~0.1 s)."""
    encoded = [w.encode("utf-8") for w in words]
    lengths = np.array([len(b) for b in encoded], dtype=np.int64)
    starts = np.zeros(len(encoded), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    index = np.asarray(index, dtype=np.int64)
    size = lengths[index]
    offsets = np.zeros(len(index) + 1, dtype=np.int64)
    np.cumsum(size, out=offsets[1:])
    if offsets[-1] >= 2 ** 31:
        raise ValueError("strings_at: more than 2 GiB of text")
    blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    data = blob[np.repeat(starts[index] - offsets[:-1], size) + np.arange(offsets[-1])]
    return pa.Array.from_buffers(pa.string(), len(index),
                                 [None, pa.py_buffer(offsets.astype(np.int32)),
                                  pa.py_buffer(data)])


def chunks(array: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    """The arrays of a chunked array; a plain array as its one chunk."""
    return array.chunks if isinstance(array, pa.ChunkedArray) else [array]


def string_buffers(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string array's offsets (int32, int64 for a large string array; ``len + 1``) and bytes
    (uint8) as numpy views: value ``i`` is ``data[offsets[i]:offsets[i + 1]]``."""
    n = len(array)
    _, offsets, data = array.buffers()
    kind = np.int64 if pa.types.is_large_string(array.type) else np.int32
    offsets = np.frombuffer(offsets, kind, count=n + 1, offset=array.offset * kind().itemsize) \
        if n else np.zeros(1, kind)
    data = np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)
    return offsets, data


def _bits(buffer: pa.Buffer, offset: int, n: int) -> np.ndarray:
    """Bits ``offset...offset + n`` of an Arrow bitmap as bool (unpacking only their bytes)."""
    first = offset // 8
    raw = np.frombuffer(buffer, dtype=np.uint8, count=(offset + n + 7) // 8 - first,
                        offset=first)
    return np.unpackbits(raw, bitorder="little", count=offset % 8 + n)[offset % 8:].view(bool)


def validity(array: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """Which values of ``array`` are valid (not null), as bool; None when none is null."""
    if not array.null_count:
        return None
    parts = []
    for chunk in chunks(array):
        bitmap = chunk.buffers()[0]
        if chunk.null_count == len(chunk):  # (a null-type array has no bitmap)
            parts.append(np.zeros(len(chunk), dtype=bool))
        elif bitmap is None:
            parts.append(np.ones(len(chunk), dtype=bool))
        else:
            parts.append(_bits(bitmap, chunk.offset, len(chunk)))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def to_numpy(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numeric or boolean Arrow array without nulls as numpy (read-only; zero copy for numbers
    in one chunk). Equal to ``array.to_numpy()``, without importing pandas."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    if array.null_count:
        raise ValueError("to_numpy: the array has nulls (fill them first)")
    kind = array.type
    if pa.types.is_boolean(kind):
        bits = array.buffers()[1]
        if bits is None:
            return np.zeros(0, dtype=bool)
        return _bits(bits, array.offset, len(array))
    return _values(array)


def _values(array: pa.Array) -> np.ndarray:
    """The data buffer of a numeric array as numpy (nulls hold whatever the buffer holds)."""
    kind = array.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        raise TypeError(f"to_numpy: a numeric or boolean array, not {kind}")
    dtype = np.dtype(kind.to_pandas_dtype())
    data = array.buffers()[1]
    if data is None:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def filled(array: pa.Array | pa.ChunkedArray, value: int | float,
           out: np.ndarray | None = None) -> np.ndarray:
    """``to_numpy`` of a numeric ``array`` with its nulls replaced by ``value``; with ``out``
    (as long, a buffer its caller reuses) written there, chunk by chunk, without an
    intermediate array."""
    if out is None:
        if not array.null_count:
            return to_numpy(array)
        # through the buffers too (pyarrow.compute's fill_null costs ~0.1 s to import)
        out = np.empty(len(array), np.dtype(array.type.to_pandas_dtype()))
    if len(out) != len(array):
        raise ValueError(f"filled: out holds {len(out)} values, the array {len(array)}")
    pos = 0
    for chunk in chunks(array):
        part = out[pos:pos + len(chunk)]
        pos += len(chunk)
        if chunk.null_count == len(chunk):
            part[:] = value
            continue
        np.copyto(part, _values(chunk), casting="same_kind")
        if chunk.null_count:
            np.copyto(part, value, where=~_bits(chunk.buffers()[0], chunk.offset, len(chunk)))
    return out


def table_schema() -> dict[str, Any]:
    """The Frictionless Table Schema of the job table (a fresh copy)."""
    return json.loads(json.dumps(load_json("jobs.schema.json")))


def arrow_schema_of(schema: dict[str, Any]) -> pa.Schema:
    """The Arrow schema of a Table Schema dict: its fields in order, nullable unless required.

    A field without a type is a string; a field is required when its constraints say so or it is
    part of the primary key. Types other than integer, number, string and boolean are a
    ``UsageError``. The one Table Schema -> Arrow mapping (the data package reader uses it too).
    """
    fields = []
    for f in schema["fields"]:
        kind = f.get("type", "string")
        if kind not in ARROW_TYPES:
            raise UsageError(f"field {f['name']!r}: type {kind!r} is not supported "
                             f"(choose from {', '.join(ARROW_TYPES)})")
        fields.append(pa.field(f["name"], ARROW_TYPES[kind], nullable=not is_required(f, schema)))
    return pa.schema(fields)


def is_required(field: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Whether a Table Schema field may not be null: ``required`` or in the ``primaryKey``."""
    key = schema.get("primaryKey", [])
    return bool(field.get("constraints", {}).get("required")) or \
        field["name"] in ([key] if isinstance(key, str) else key)


@lru_cache(maxsize=1)
def arrow_schema() -> pa.Schema:
    """The Arrow schema of the job table, built from the Table Schema file."""
    return arrow_schema_of(load_json("jobs.schema.json"))


def column_names() -> list[str]:
    """Job table column names in canonical order."""
    return arrow_schema().names


def get_metadata(table: pa.Table) -> dict[str, Any]:
    """The swftools metadata of a table as a plain dict (empty if none; unchecked).

    Compatibility view: new code reads :meth:`TableMetadata.from_table` instead.
    """
    return decode(table)


def metadata_of(table: pa.Table) -> TableMetadata:
    """The typed, schema-checked metadata of a table."""
    return TableMetadata.from_table(table)


def with_metadata(table: pa.Table, metadata: dict[str, Any] | TableMetadata) -> pa.Table:
    """Return ``table`` carrying ``metadata`` (replacing any earlier swftools metadata)."""
    if isinstance(metadata, TableMetadata):
        return metadata.to_table(table)
    return table.replace_schema_metadata({METADATA_KEY: encode(metadata)})


def from_columns(columns: dict[str, Any],
                 metadata: dict[str, Any] | TableMetadata | None = None) -> pa.Table:
    """Build a canonical table from a mapping of column name -> values; missing columns are null.

    Raises ``KeyError`` for a name that is not a canonical column.
    """
    schema = arrow_schema()
    unknown = set(columns) - set(schema.names)
    if unknown:
        raise KeyError(f"not job-table columns: {sorted(unknown)}")
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"columns of different lengths: {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    arrays = []
    for field in schema:
        if field.name in columns:
            values = columns[field.name]
            arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values)
            if arr.type != field.type:
                import pyarrow.compute as pc

                arr = pc.cast(arr, field.type)
        else:
            arr = nulls(n, field.type)
        arrays.append(arr)
    table = pa.Table.from_arrays(arrays, schema=schema)
    return with_metadata(table, metadata or {})


def conform(table: pa.Table) -> pa.Table:
    """Cast/reorder an arbitrary table with canonical column names to the canonical schema."""
    cols = {name: table.column(name) for name in table.column_names}
    return from_columns(cols, get_metadata(table))


def empty() -> pa.Table:
    """A job table with no rows."""
    return from_columns({})


def equal(a: pa.Table, b: pa.Table, metadata: bool = False) -> bool:
    """Whether two job tables hold the same rows (and, optionally, the same metadata)."""
    same = a.cast(arrow_schema()).equals(b.cast(arrow_schema()))
    return same and (not metadata or get_metadata(a) == get_metadata(b))
