"""The validation context's shared column arrays: the same values whatever the table's chunks
and null columns (views of contiguous columns, lazily zeroed arrays for all-null ones)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings

from swftools.validate import validate
from swftools.validate.context import Context, Options
from swftools.validate.report import Report

from .strategies import sparse_job_tables


def _context(table: pa.Table) -> Context:
    return Context(table, Report(path="t"), path="t", lines=np.arange(table.num_rows) + 2,
                   source_format="table", site=None, options=Options())


@given(sparse_job_tables())
@settings(max_examples=60, deadline=None)
def test_values_are_the_column_with_unknowns_as_zero(table):
    ctx = _context(table)
    for field in table.schema:
        if not (pa.types.is_integer(field.type) or pa.types.is_floating(field.type)):
            continue
        cells = table.column(field.name).to_pylist()
        values, known = ctx.values(field.name)
        assert known.dtype == bool and known.tolist() == [c is not None for c in cells]
        assert values.dtype == field.type.to_pandas_dtype()
        assert values.tolist() == [0 if c is None else c for c in cells]
        assert ctx.column(field.name).to_pylist() == cells


@given(sparse_job_tables())
@settings(max_examples=25, deadline=None)
def test_findings_do_not_depend_on_the_chunks(table):
    one = validate(table.combine_chunks(), site="aaic")
    many = validate(table, site="aaic")
    assert one.to_json() == many.to_json()
