"""swftools.formats.swf.mapping (issue 30), the field values on inputs the job table's usual
shape does not give: columns in several chunks (a table read in record batches), columns not of
the job table's types, row slices over unknown values, and the site named by the table's
metadata. Every expected value is worked out by hand from the documented rules."""

from __future__ import annotations

import pyarrow as pa

from swftools.formats.swf import mapping as m
from swftools.formats.swf.fields import FIELDS, SwfField
from swftools.site import Queue, Site

from .test_formats_swf_mapping import T0, _field as _values, _table


def test_numeric_ids_kept_across_chunks():
    """Ids in three chunks of 2, 1 and 2 values: each chunk's ids land at its own rows."""
    col = pa.chunked_array([["5", "6"], ["7"], ["80", None]])
    assert m.dense_ids(col).to_pylist() == [5, 6, 7, 80, None]
    assert m.queue_names(col, None) == [(5, "5"), (6, "6"), (7, "7"), (80, "80")]


def test_ids_of_a_column_that_is_not_text():
    """An integer column (a table not conformed to the job table's types) is read as its
    decimal text: non-negative numbers are ids as they are, a negative one ('-1', with a sign)
    makes the column names, numbered 1..N by first appearance."""
    assert m.dense_ids(pa.chunked_array([[7, None, 0]])).to_pylist() == [7, None, 0]
    assert m.dense_ids(pa.chunked_array([[3, -1, 3, None]])).to_pylist() == [1, 2, 1, None]


def test_values_of_columns_not_of_the_job_table_types():
    """A float column where the job table has integers (memory written as 2048.0) gives the
    integer field; an integer column where it has floats (average CPU time) the float field."""
    table = _table(used_memory_kb=[1, 1], avg_cpu_time_s=[1.0, 1.0])
    table = table.set_column(table.schema.get_field_index("used_memory_kb"), "used_memory_kb",
                             pa.array([2048.0, None], pa.float64()))
    table = table.set_column(table.schema.get_field_index("avg_cpu_time_s"), "avg_cpu_time_s",
                             pa.array([3, None], pa.int64()))
    assert _values(table, SwfField.USED_MEMORY) == [2048, -1]
    assert _values(table, SwfField.AVERAGE_CPU_TIME_USED) == [3.0, -1.0]


def test_wait_and_run_time_of_a_table_in_two_batches():
    """Durations unknown: wait = start - submit, run = finish - start, -1 where either is
    unknown, with the unknown starts and finishes in different chunks."""
    first = _table(submit_time=[T0, T0 + 5], start_time=[T0 + 10, None],
                   finish_time=[T0 + 20, T0 + 30], user=["1", "2"])
    second = _table(submit_time=[T0 + 7], start_time=[T0 + 9],
                    finish_time=pa.array([None], pa.int64()), user=["3"])
    table = pa.concat_tables([first, second])
    assert table.column("start_time").num_chunks == 2
    assert _values(table, SwfField.WAIT_TIME) == [10, -1, 2]
    assert _values(table, SwfField.RUN_TIME) == [10, -1, -1]


def test_slices_over_unknown_submit_times_and_termcodes():
    """Two rows a slice: submit times from the first submit (T0 + 10), the status from the
    default termcode mapping (0->1, 1->0, 3->5), -1 where unknown, slice by slice."""
    table = _table(submit_time=[T0 + 10, None, T0 + 30, T0 + 40, None],
                   termcode=[0, None, 3, 1, None],
                   swf_status=pa.array([None] * 5, pa.int64()))
    slices = list(m.iter_field_values(table, None, 2))
    submit = [s[FIELDS.index(SwfField.SUBMIT_TIME)].to_pylist() for s in slices]
    status = [s[FIELDS.index(SwfField.STATUS)].to_pylist() for s in slices]
    assert submit == [[0, -1], [20, 30], [-1]]
    assert status == [[1, -1], [5, 0], [-1]]


def test_unknown_termcode_is_not_mapped_even_when_minus_one_is():
    """A null termcode stays unknown (-1) whatever the mapping holds: here a Site built in
    Python that maps the termcode -1 (a settings file allows only 0-4)."""
    site = Site(name="t", time_zone="UTC", gpus_per_node=4, capacity_since=(T0,),
                capacity_nodes=(1,), queues=(Queue("q", 1, 1, 1, 1, 4, 3600, 3600),),
                termcode_to_swf_status={-1: 5, 0: 1})
    table = _table(termcode=[None, -1, 0], swf_status=pa.array([None] * 3, pa.int64()))
    assert _values(table, SwfField.STATUS, site) == [-1, 5, 1]


def test_site_named_in_the_metadata_numbers_queues_and_partitions():
    """No site given: the table's metadata names the aaic preset, whose queues are 1 Normal,
    2 Short, 3 Middle, 4 Long (swf.md's AAIC header): another queue is numbered 5, and a
    derived table's unknown partition is the one pool, 1."""
    table = _table({"site": "aaic", "processor_unit": "gpu"},
                   queue=["Short", "Long", None, "gpu"],
                   partition=pa.array([None] * 4, pa.int64()))
    assert _values(table, SwfField.QUEUE_ID) == [2, 4, -1, 5]
    assert _values(table, SwfField.PARTITION_ID) == [1, 1, 1, 1]
