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
import pyarrow.compute as pc

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
# The hot paths (SWF read and write, replay) build and read arrays through their buffers instead.

def from_numpy(values: np.ndarray, null: np.ndarray | None = None) -> pa.Array:
    """A numeric 1-D numpy array as an Arrow array over the same memory; ``null`` (bool, same
    length) marks nulls. Equal to ``pa.array(values, mask=null)``, without importing pandas."""
    values = np.ascontiguousarray(values)
    if values.ndim != 1 or values.dtype.kind not in "iuf":
        raise TypeError(f"from_numpy: a 1-D integer or float array, not {values.dtype} "
                        f"with {values.ndim} dimensions")
    validity, nulls = None, 0
    if null is not None:
        nulls = int(np.count_nonzero(null))
        if nulls:
            validity = pa.py_buffer(np.packbits(~np.asarray(null, dtype=bool), bitorder="little"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values),
                                 [validity, pa.py_buffer(values)], null_count=nulls)


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
        unpacked = np.unpackbits(np.frombuffer(bits, dtype=np.uint8), bitorder="little",
                                 count=array.offset + len(array))
        return unpacked[array.offset:].view(bool)
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        raise TypeError(f"to_numpy: a numeric or boolean array, not {kind}")
    dtype = np.dtype(kind.to_pandas_dtype())
    data = array.buffers()[1]
    if data is None:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def filled(array: pa.Array | pa.ChunkedArray, value: int | float) -> np.ndarray:
    """``to_numpy`` of ``array`` with its nulls replaced by ``value``."""
    if array.null_count:
        array = pc.fill_null(array, scalar(value, array.type))
    return to_numpy(array)


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
                arr = pc.cast(arr, field.type)
        else:
            arr = pa.nulls(n, field.type)
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
