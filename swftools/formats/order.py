"""The one row order every writer uses: submit order.

Rows are written by submit time, ties in the table's row order (a stable sort), jobs with an
unknown submit time last (in row order). The check is one pass over the column; a table already
in that order is returned as it is (no copy), so writers keep their speed and their bytes on the
tables they always got. A table written back to the format it was read from keeps the file's
order where the format is itself the record (``own_order``): an SWF trace or an Alibaba pod list
read and written back is the same file, byte for byte.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from swftools import table as jt


def submit_order(table: pa.Table) -> np.ndarray | None:
    """Row indices that put ``table`` in submit order (see the module doc), or None when it
    already is in that order."""
    n = table.num_rows
    if n < 2 or "submit_time" not in table.column_names:
        return None
    column = table.column("submit_time")
    values = jt.filled(column, 0, np.empty(n, np.int64))
    valid = jt.validity(column)
    if valid is None:
        if bool((values[1:] >= values[:-1]).all()):
            return None
        return np.argsort(values, kind="stable")
    known = np.flatnonzero(valid)
    head = values[known]
    if bool((known == np.arange(len(known))).all()) and bool((head[1:] >= head[:-1]).all()):
        return None  # the known times come first, in order; the unknown ones follow
    return np.concatenate([known[np.argsort(head, kind="stable")], np.flatnonzero(~valid)])


def in_submit_order(table: pa.Table) -> pa.Table:
    """``table`` with its rows in submit order (the same object when they already are); the
    schema and its metadata are kept."""
    order = submit_order(table)
    if order is None:
        return table
    return table.take(pa.array(order, pa.int64()))


def in_write_order(table: pa.Table, fmt: str, source_format: str | None) -> pa.Table:
    """``table`` in the order a writer of format ``fmt`` writes its rows: the table's own order
    when it was read from ``fmt`` (``source_format``), else submit order."""
    return table if source_format == fmt else in_submit_order(table)
