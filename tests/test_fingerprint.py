"""``swftools.fingerprint``: the job table's fingerprint a what-if comparison records."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given

from swftools import formats
from swftools import table as jt
from swftools.fingerprint import table_fingerprint

from .conftest import SAMPLES
from .strategies import replay_gpu_jobs, row_chunks


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
