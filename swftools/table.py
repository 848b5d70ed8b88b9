"""The canonical job table: a pyarrow Table whose schema is ``schemas/jobs.schema.json``.

Every reader returns such a table and every writer takes one. Table-level metadata (SWF header,
layout, site, time zone, source file, converter version) travels in the schema metadata under the
key ``swftools`` as JSON.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from swftools.resources import load_json

METADATA_KEY = b"swftools"

# Table Schema type -> Arrow type. Integers are int64 everywhere so that arithmetic on epoch
# seconds never overflows and nulls (unknown, SWF -1) are representable.
ARROW_TYPES = {"integer": pa.int64(), "number": pa.float64(), "string": pa.string(),
               "boolean": pa.bool_()}


def table_schema() -> dict[str, Any]:
    """The Frictionless Table Schema of the job table (a fresh copy)."""
    return json.loads(json.dumps(load_json("jobs.schema.json")))


def arrow_schema_of(schema: dict[str, Any]) -> pa.Schema:
    """The Arrow schema of a Table Schema dict: its fields in order, nullable unless required."""
    fields = []
    for f in schema["fields"]:
        required = f.get("constraints", {}).get("required", False)
        fields.append(pa.field(f["name"], ARROW_TYPES[f["type"]], nullable=not required))
    return pa.schema(fields)


@lru_cache(maxsize=1)
def arrow_schema() -> pa.Schema:
    """The Arrow schema of the job table, built from the Table Schema file."""
    return arrow_schema_of(load_json("jobs.schema.json"))


def column_names() -> list[str]:
    """Job table column names in canonical order."""
    return arrow_schema().names


def get_metadata(table: pa.Table) -> dict[str, Any]:
    """The swftools metadata dict of a table (empty if none)."""
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    return json.loads(raw) if raw else {}


def with_metadata(table: pa.Table, metadata: dict[str, Any]) -> pa.Table:
    """Return ``table`` carrying ``metadata`` (replacing any earlier swftools metadata)."""
    encoded = json.dumps(metadata, sort_keys=True, ensure_ascii=False).encode()
    return table.replace_schema_metadata({METADATA_KEY: encoded})


def from_columns(columns: dict[str, Any], metadata: dict[str, Any] | None = None) -> pa.Table:
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
