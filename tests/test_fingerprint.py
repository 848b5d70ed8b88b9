"""``swftools.fingerprint``: the job table's fingerprint a what-if comparison records."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given

from swftools import formats
from swftools import table as jt
from swftools.fingerprint import table_fingerprint

from .conftest import SAMPLES
from .strategies import replay_gpu_jobs, row_chunks, string_columns


def test_same_jobs_same_fingerprint_whatever_the_file_metadata():
    table = formats.read(SAMPLES / "aaic-sample.csv.gz")
    fp = table_fingerprint(table)
    assert fp.startswith("sha256:") and len(fp) == 7 + 64
    assert table_fingerprint(formats.read(SAMPLES / "aaic-sample.csv.gz")) == fp
    assert table_fingerprint(table.replace_schema_metadata(None)) == fp
    assert table_fingerprint(table.select(list(reversed(table.column_names)))) == fp


def test_another_value_row_order_or_column_changes_it():
    base = jt.from_columns({"job_id": [1, 2], "submit_time": [0, 5], "walltime_s": [10, 20],
                            "gpus": [1, 2], "queue": ["a", None]})
    fp = table_fingerprint(base)
    changed = [base.set_column(base.column_names.index("walltime_s"), "walltime_s",
                               pa.array([10, 21])),
               base.take([1, 0]), base.slice(0, 1), base.drop_columns(["queue"]),
               base.set_column(base.column_names.index("queue"), "queue",
                               pa.array(["a", ""]))]  # a null is not an empty string
    assert len({fp, *(table_fingerprint(t) for t in changed)}) == len(changed) + 1


@given(replay_gpu_jobs(max_jobs=20).flatmap(lambda ts: row_chunks(ts[0]).map(
    lambda chunks: (ts[0], chunks))))
def test_chunking_never_changes_it(case):
    table, chunks = case
    rechunked = pa.Table.from_batches([b for c in chunks for b in c.to_batches()],
                                      schema=table.schema) if chunks else table
    assert table_fingerprint(rechunked) == table_fingerprint(table)


@given(string_columns())
def test_string_columns_from_buffers_are_the_per_row_definition(case):
    """The buffer path of string and binary columns gives the definition's bytes (per row, the
    8-byte length then the bytes; a null as length 0), sliced arrays included."""
    from swftools.fingerprint import _length_prefixed, _normalised, _values

    arr, values = case
    arr, _ = _normalised(pa.chunked_array([arr], type=arr.type))
    valid = np.array([v is not None for v in values], dtype=bool)
    want = _length_prefixed([b"" if v is None else v.encode("utf-8") if isinstance(v, str)
                             else bytes(v) for v in values])
    assert bytes(_values(arr, valid)) == want


def test_computed_once_per_live_table():
    """A table's fingerprint is computed once while it lives (a what-if sweep asks per
    policy); an equal table gets the same value, a changed one another."""
    from unittest import mock

    from swftools import fingerprint

    table = jt.from_columns({"job_id": [1, 2], "submit_time": [0, 5], "gpus": [1, 2]})
    with mock.patch.object(fingerprint, "_fingerprint", wraps=fingerprint._fingerprint) as spy:
        first = table_fingerprint(table)
        assert table_fingerprint(table) == first and spy.call_count == 1
        copy = jt.from_columns({"job_id": [1, 2], "submit_time": [0, 5], "gpus": [1, 2]})
        assert table_fingerprint(copy) == first and spy.call_count == 2
        other = copy.slice(1)
        assert table_fingerprint(other) != first and spy.call_count == 3
    spy.reset_mock()  # (it holds its calls' arguments)
    key = id(copy)
    assert key in fingerprint._memo
    del copy
    assert key not in fingerprint._memo  # the entry went with its table


def _every_kind() -> pa.Table:
    """One column of each kind the definition names, with nulls, sliced (a buffer offset)."""
    rows = range(11)
    columns = {
        "int": pa.array([None if i % 3 == 0 else i * 7 - 50 for i in rows]),
        "int32": pa.array([None if i % 4 == 0 else i for i in rows], pa.int32()),
        "uint64": pa.array([None if i % 5 == 0 else 2 ** 63 + i for i in rows], pa.uint64()),
        "float": pa.array([None if i % 3 == 1 else (-0.0 if i % 7 == 0 else i / 3)
                           for i in rows]),
        "float32": pa.array([None if i % 2 else i / 3 for i in rows], pa.float32()),
        "bool": pa.array([None if i % 3 == 2 else bool(i % 2) for i in rows]),
        "string": pa.array([None if i % 4 == 3 else "x" * (i % 5) + "\u00e9" for i in rows]),
        "large_string": pa.array([None if i % 4 == 3 else "y" * (i % 3) for i in rows],
                                 pa.large_string()),
        "binary": pa.array([None if i % 2 else b"\x00\x01" * (i % 3) for i in rows]),
        "timestamp": pa.array([None if i % 3 == 0 else i * 1000 for i in rows],
                              pa.timestamp("s")),
        "date32": pa.array([None if i % 3 == 0 else i for i in rows], pa.date32()),
        "dictionary": pa.array([None if i % 3 == 0 else f"k{i % 4}"
                                for i in rows]).dictionary_encode(),
        "null": pa.nulls(11),
        "list": pa.array([None if i % 2 else [i, i + 1] for i in rows]),
    }
    return pa.table({name: column.slice(2) for name, column in columns.items()})


def test_the_definition_is_pinned():
    """The value of a table with every kind of column, as the definition gave it when
    comparisons were first written (``report --whatif`` compares recorded fingerprints)."""
    assert table_fingerprint(_every_kind()) == (
        "sha256:f14bea9ce08ca0930178c8cff6499f4d0f0208123f719007ccbf793455cb275d")

