"""The NQSII writer in chunks (``write_chunks``): the same bytes and loss report as ``write``
on the whole table, for every layout, form and compression."""

from __future__ import annotations

import gzip
import warnings

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.formats import nqsii
from tests.strategies import aaic_jobs, row_chunks


def _names_turn_up_late(chunks) -> bool:
    """Published form: the first non-empty chunk holds only integer ids in a column where a
    later chunk holds names (``write_chunks`` refuses: the numbering is decided up front)."""
    nonempty = [c for c in chunks if c.num_rows]
    for column in ("user", "group"):
        digits = [all(v.isdigit() for v in c.column(column).to_pylist()) for c in nonempty]
        if digits and digits[0] and not all(digits):
            return True
    return False


def _pair(tmp_path, table, chunks, **options):
    whole, chunked = tmp_path / "whole.csv", tmp_path / "chunked.csv"
    if options.pop("gz", False):
        whole, chunked = tmp_path / "whole.csv.gz", tmp_path / "chunked.csv.gz"
    losses_whole = nqsii.write(table, whole, force=True, **options)
    losses_chunked = nqsii.write_chunks(chunks, chunked, force=True, **options)
    return whole.read_bytes(), chunked.read_bytes(), losses_whole, losses_chunked


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data(), st.sampled_from(["raw", "published"]), st.booleans())
def test_chunked_output_is_byte_identical(tmp_path, data, form, gz):
    table = data.draw(aaic_jobs(min_size=0, max_size=40))
    chunks = data.draw(row_chunks(table))
    if form == "published" and _names_turn_up_late(chunks):
        with pytest.raises(InputError, match="write the whole table"):
            nqsii.write_chunks(chunks, tmp_path / "late.csv", form=form, force=True)
        assert not (tmp_path / "late.csv").exists()
        return
    whole, chunked, losses_whole, losses_chunked = _pair(tmp_path, table, chunks, form=form,
                                                         gz=gz)
    assert chunked == whole
    assert losses_chunked == losses_whole
    if gz:
        assert gzip.decompress(chunked) == nqsii.render(table, form=form)[0]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_chunked_loss_counts_add_up(tmp_path, data):
    # unknown node counts derived chunk by chunk ("derived as ceil(gpus / 8)"), SWF-only values
    # dropped, published numbering: one report each, the counts over all chunks
    table = data.draw(aaic_jobs(min_size=1, max_size=30))
    mask = pa.array([i % 3 == 0 for i in range(table.num_rows)])
    gpus = pa.array(table.column("gpus").combine_chunks().to_pylist(), mask=mask)
    table = table.set_column(table.schema.get_field_index("gpus"), "gpus", gpus)
    nodes = pa.array(table.column("nodes").combine_chunks().to_pylist(),
                     mask=pa.array([i % 3 == 1 for i in range(table.num_rows)]))
    table = table.set_column(table.schema.get_field_index("nodes"), "nodes", nodes)
    table = table.set_column(table.schema.get_field_index("avg_cpu_time_s"), "avg_cpu_time_s",
                             pa.array(range(table.num_rows), pa.int64()))
    chunks = data.draw(row_chunks(table))
    assume(not _names_turn_up_late(chunks))
    whole, chunked, losses_whole, losses_chunked = _pair(tmp_path, table, chunks,
                                                         form="published")
    assert chunked == whole
    assert losses_chunked == losses_whole


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(aaic_jobs(min_size=3, max_size=3))
def test_layout_without_final_newline_across_chunks(tmp_path, table):
    # the last line ending is dropped even when the last chunks are empty
    layout = {"form": "raw", "final_newline": False}
    table = jt.with_metadata(table, {**jt.get_metadata(table), "nqsii": layout})
    chunks = [table.slice(0, 2), table.slice(2, 1), table.slice(3, 0)]
    whole, chunked, _, _ = _pair(tmp_path, table, chunks)
    assert chunked == whole and not chunked.endswith(b"\n")


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(aaic_jobs(min_size=2, max_size=2))
def test_needs_a_table_and_writes_nothing_on_error(tmp_path, good):
    with pytest.raises(ValueError) as err:
        nqsii.write_chunks([], tmp_path / "x.csv")
    assert str(err.value) == "write_chunks needs at least one table (an empty one for no jobs)"
    bad = good.set_column(good.schema.get_field_index("queue"), "queue",
                          pa.array(["Nope"] * good.num_rows))
    with pytest.raises(InputError):
        nqsii.write_chunks([good, bad], tmp_path / "y.csv")
    assert not (tmp_path / "y.csv").exists() and not (tmp_path / "x.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_render_defaults_to_the_raw_form_and_honours_the_site():
    import json
    from pathlib import Path

    from swftools.resources import schemas_dir
    from swftools.site import site_from_settings

    golden = Path(__file__).parent / "golden" / "nqsii"
    table = jt.from_columns(json.loads((golden / "raw.expected.json").read_text()))
    text, losses = nqsii.render(table)
    assert text == (golden / "default-raw.csv").read_bytes() and losses == []
    settings = json.loads((schemas_dir() / "sites" / "aaic.json").read_text())
    settings.update(name="ny", time_zone="America/New_York")
    text, _ = nqsii.render(table, site=site_from_settings(settings))
    line = text.splitlines()[1]  # submitted 2018-01-05 09:30:00 in Tokyo: 19:30 the day before in New York
    assert b",2018-01-04 19:30:00," in line and b"2018-01-05 09:30:00" not in line


@pytest.mark.parametrize("form", ["raw", "published"])
@pytest.mark.parametrize("layout", [None, {"format": "iso", "separator": "T", "offset": None}])
def test_an_instant_after_year_9999_is_a_located_error(tmp_path, form, layout):
    """Local and ISO date-times stop at 9999-12-31; UNIX seconds (published) have no end."""
    import json

    table = jt.from_columns({"job_id": pa.array([1]), "user": pa.array(["u"]),
                             "group": pa.array(["g"]), "queue": pa.array(["Normal"]),
                             "submit_time": pa.array([0]), "start_time": pa.array([10]),
                             "finish_time": pa.array([10**12]), "requested_walltime_s": pa.array([60]),
                             "nodes": pa.array([1]), "gpus": pa.array([1]), "wait_s": pa.array([10]),
                             "walltime_s": pa.array([10**12 - 10]),
                             "gpus_per_node": pa.array([1]), "termcode": pa.array([0])}, {})
    if layout is not None:
        meta = {"nqsii": {"form": "raw", "formats": {"finish": layout}}}
        table = table.replace_schema_metadata({**table.schema.metadata,
                                               b"swftools": json.dumps(meta).encode()})
    if form == "published":
        nqsii.write(table, tmp_path / "log.csv", form=form)
        assert "1000000000000" in (tmp_path / "log.csv").read_text()
        return
    with pytest.raises(InputError) as err:
        nqsii.write(table, tmp_path / "log.csv", form=form)
    assert err.value.message == ("cannot write an NQSII log: an instant after year 9999 cannot "
                                 "be written as a date")
    assert not (tmp_path / "log.csv").exists()


def _one_job(nqsii_meta: dict) -> pa.Table:
    import json

    table = jt.from_columns({"job_id": [1], "user": ["u"], "group": ["g"], "queue": ["Normal"],
                             "submit_time": [0], "start_time": [10], "finish_time": [70],
                             "requested_walltime_s": [60], "nodes": [1], "gpus": [1],
                             "wait_s": [10], "walltime_s": [60], "gpus_per_node": [1],
                             "termcode": [0]}, {})
    return table.replace_schema_metadata({**table.schema.metadata,
                                          b"swftools": json.dumps({"nqsii": nqsii_meta}).encode()})


@pytest.mark.parametrize("recorded,problem", [
    ({"formats": {"finish": {"format": "iso", "offset": "+25:00"}}},
     "finish's UTC offset '+25:00', expected Z, +HH:MM or +HHMM"),
    ({"formats": {"finish": {"format": "iso", "offset": 9}}},
     "finish's UTC offset 9, expected Z, +HH:MM or +HHMM"),
    ({"formats": {"finish": {"format": "iso", "separator": "/"}}},
     "finish's date-time separator '/', expected 'T' or ' '"),
    ({"formats": {"finish": {"format": "hms"}}},
     "finish's format {'format': 'hms'}, expected one of ['local', 'epoch', 'iso']"),
    ({"formats": {"wait": "hms"}}, "wait's format 'hms', expected one of ['hms', 'seconds']"),
    ({"formats": {"wait": {"format": "hms", "hour_width": 3}}},
     "wait's hour width 3, expected 1 or 2"),
    ({"formats": {"wait": {"format": "hms", "hour_width": True}}},
     "wait's hour width True, expected 1 or 2"),
    ({"separator": ""}, "separator '', expected str (not empty)"),
    ({"separator": 5}, "separator 5, expected str (not empty)"),
    ({"line_ending": "\r"}, "line_ending '\\r', expected one of '\\n', '\\r\\n'"),
    ({"gpus_column": "all"}, "gpus_column 'all', expected one of 'per_node', 'total'"),
    ({"bom": "yes"}, "bom 'yes', expected bool"),
    ({"queue_spelling": []}, "queue_spelling [], expected dict"),
    ({"queue_spelling": {"Normal": 1}}, "a header, field or queue spelling that is not text"),
    ({"fields": ["job_id", 1]}, "a header, field or queue spelling that is not text"),
    ({"header": ["job_id", 1]}, "a header, field or queue spelling that is not text"),
])
def test_a_recorded_layout_the_writer_cannot_use_is_a_located_error(tmp_path, recorded, problem):
    """The ``nqsii`` metadata of a hand-edited table: an error naming what it records and what
    was expected, nothing written (before, a TypeError or AttributeError traceback, or a log
    the reader cannot read back)."""
    table = _one_job({"form": "raw", **recorded})
    with pytest.raises(InputError) as err:
        nqsii.write(table, tmp_path / "log.csv")
    assert err.value.message == ("cannot write an NQSII log: the table's nqsii metadata records "
                                 + problem)
    assert err.value.field == "nqsii metadata" and not (tmp_path / "log.csv").exists()
    assert err.value.path == "job table"  # the table records no source file


def test_a_recorded_layout_of_another_form_is_not_checked_and_a_good_one_is_used(tmp_path):
    nqsii.write(_one_job({"form": "published", "bom": "yes"}), tmp_path / "a.csv")
    good = {"form": "raw", "line_ending": "\r\n", "formats": {
        "finish": {"format": "iso", "separator": " ", "offset": "+0900"},
        "wait": {"format": "hms", "hour_width": 1}}}
    nqsii.write(_one_job(good), tmp_path / "b.csv")
    line = (tmp_path / "b.csv").read_bytes().split(b"\r\n")[1]
    assert b",1970-01-01 09:01:10+0900,0:00:10," in line


def test_a_table_that_counts_processors_is_refused_and_nothing_written(tmp_path):
    """An NQSII log counts GPUs: a CPU log's table (processors) written as one claimed 9 GPUs on
    a node of 8, which validate refused. A PBS log whose jobs ask for ``ngpus=0`` is read as a
    CPU log (its ncpus become the processors); the NQSII writer now says so, and writes nothing.
    The same table claiming GPUs is written."""
    from swftools import formats
    from swftools.metadata import TableMetadata

    columns = {"job_id": [1], "user": ["0"], "group": ["0"], "queue": ["Normal"], "nodes": [1],
               "gpus_per_node": [0], "gpus": [0], "cpus": [9], "requested_walltime_s": [60],
               "termcode": [0], "submit_time": [1_500_000_000], "start_time": [1_500_000_000],
               "finish_time": [1_500_000_060], "wait_s": [0], "walltime_s": [60]}
    formats.write(jt.from_columns(columns), tmp_path / "a.log", "pbs")
    with warnings.catch_warnings():  # the assumed-zone warning: the table is UTC
        warnings.simplefilter("ignore")
        cpu = formats.read(tmp_path / "a.log", "pbs")
    assert TableMetadata.from_table(cpu).unit == "processor"
    assert cpu.column("gpus").to_pylist() == [9]
    for table in (cpu, jt.from_columns(dict(columns, gpus=[9], gpus_per_node=[9]),
                                       TableMetadata(processor_unit="processor"))):
        with pytest.raises(UsageError) as info:
            nqsii.write(table, tmp_path / "b.csv")
        origin = ", read from a.log" if table is cpu else ""  # the name the table records
        assert str(info.value).endswith(
            f"the table counts processors (a CPU trace{origin}), an NQSII log counts GPUs; "
            "write it as swf, slurm, pbs or a data package")
        assert list(tmp_path.glob("b.csv*")) == []
    gpu = jt.from_columns(dict(columns, gpus=[8], gpus_per_node=[8]),
                          TableMetadata(processor_unit="gpu"))
    nqsii.write(gpu, tmp_path / "c.csv")
    assert nqsii.read(tmp_path / "c.csv").column("gpus").to_pylist() == [8]


def test_a_recorded_format_takes_the_defaults_for_what_it_leaves_out(tmp_path):
    """An ISO format without a separator is written with ``T`` and the site's offset (Tokyo,
    +09:00), an hms format without an hour width with two-digit hours; an hour width on a
    format without hours is not looked at."""
    layout = {"form": "raw", "formats": {"finish": {"format": "iso"}, "wait": {"format": "hms"},
                                         "walltime_req": {"format": "seconds", "hour_width": 3},
                                         "submit": {"format": "epoch", "hour_width": 0}}}
    nqsii.write(_one_job(layout), tmp_path / "log.csv")
    # submit 0, start 10, finish 70 (UTC epoch s); wait 10 s, walltime 60 s of 60 requested
    assert (tmp_path / "log.csv").read_text().splitlines()[1] == (
        "1,u,g,Normal,1,1,60,0,0,1970-01-01 09:00:10,1970-01-01T09:01:10+09:00,00:00:10,00:01:00")


@pytest.mark.parametrize("separator", [";;", " | ", ";"])
def test_a_recorded_separator_is_written_between_every_field(tmp_path, separator):
    """The header and the job lines alike (before, a separator of two characters or more not
    starting with a comma was cut to its first character in the job lines, and one starting
    with a space stopped with pyarrow's ArrowInvalid: the local date-times hold a space)."""
    nqsii.write(_one_job({"form": "raw", "separator": separator}), tmp_path / "log.csv")
    header = ["job_id", "user", "group", "queue", "nodes", "gpus", "walltime_req", "termcode",
              "submit", "start", "finish", "wait", "walltime"]
    line = ["1", "u", "g", "Normal", "1", "1", "00:01:00", "0", "1970-01-01 09:00:00",
            "1970-01-01 09:00:10", "1970-01-01 09:01:10", "00:00:10", "00:01:00"]
    assert (tmp_path / "log.csv").read_text() == (
        separator.join(header) + "\n" + separator.join(line) + "\n")


def test_dense_ids_number_values_by_first_appearance():
    """1..N in the order values first turn up; with ``known`` (an earlier chunk's numbering)
    the numbers go on from it, and it is extended."""
    from swftools.formats.nqsii.writer import _dense_ids

    values = pa.array(["b", "a", "b", "c", "a"])
    assert _dense_ids(values).to_pylist() == ["1", "2", "1", "3", "2"]
    known = {"a": 1, "z": 2}
    assert _dense_ids(values, known).to_pylist() == ["3", "1", "3", "4", "1"]
    assert known == {"a": 1, "z": 2, "b": 3, "c": 4}


def _three_jobs(**columns) -> pa.Table:
    """Jobs 11, 12, 13 (all valid), with ``columns`` replaced."""
    base = {"job_id": [11, 12, 13], "user": ["u", "v", "w"], "group": ["g", "g", "g"],
            "queue": ["Normal"] * 3, "submit_time": [0, 0, 0], "start_time": [10, 10, 10],
            "finish_time": [70, 70, 70], "requested_walltime_s": [60, 60, 60],
            "nodes": [1, 1, 1], "gpus": [1, 1, 1], "wait_s": [10, 10, 10],
            "walltime_s": [60, 60, 60], "gpus_per_node": [1, 1, 1], "termcode": [0, 0, 0]}
    return jt.from_columns({**base, **columns}, {})


@pytest.mark.parametrize("column,values,field,problem", [
    ("submit_time", [0, None, None], "'submit_time' (Submit time (UTC epoch s))",
     "unknown for 2 jobs (first: job 12); NQSII logs have no marker for unknown values"),
    ("requested_walltime_s", [60, -9, 60], "'requested_walltime_s' (Requested walltime (s))",
     "negative value -9 (job 12)"),
    ("user", ["u", None, "w"], "'user' (User)",
     "unknown for 1 job (first: job 12); NQSII logs have no marker for unknown values"),
    ("group", ["g", "", "g"], "'group' (Group)", "empty value (job 12)"),
    ("termcode", [0, 7, 9], "'termcode' (Termination code)",  # schemas/nqsii-raw.schema.json
     "7 is not one of 0 success, 1 fail, 2 walltime exceeded, 3 cancelled by user, "
     "4 cancelled by system"),
])
def test_a_value_the_log_cannot_hold_names_its_column_and_job(tmp_path, column, values, field,
                                                              problem):
    """Unknown, negative and empty values: the column, its title and the first such job (here
    the second, so not the first row by chance)."""
    with pytest.raises(InputError) as err:
        nqsii.write(_three_jobs(**{column: values}), tmp_path / "log.csv")
    assert err.value.message == "cannot write an NQSII log: " + problem
    assert err.value.field == f"column {field}" and not (tmp_path / "log.csv").exists()


def test_a_queue_the_site_does_not_define_lists_the_sites_queues(tmp_path):
    # aaic's queues (schemas/sites/aaic.json): 1 Normal, 2 Short, 3 Middle, 4 Long
    with pytest.raises(InputError) as err:
        nqsii.write(_three_jobs(queue=["Normal", "gpu-large", "Short"]), tmp_path / "log.csv")
    assert err.value.message == (
        "cannot write an NQSII log: 'gpu-large' is not a queue of site aaic (1 Normal, 2 Short, "
        "3 Middle, 4 Long); pass a site whose settings define it")


def test_a_raw_name_holding_a_quote_is_quoted_with_the_quote_doubled(tmp_path):
    """RFC 4180: a field holding a quote is enclosed in quotes, the quote written twice."""
    nqsii.write(_three_jobs(user=['a"b', "v", "w"]), tmp_path / "log.csv")
    assert (tmp_path / "log.csv").read_text().splitlines()[1].startswith('11,"a""b",g,Normal,')
    assert nqsii.read(tmp_path / "log.csv").column("user").to_pylist() == ['a"b', "v", "w"]


def test_unknown_gpu_totals_are_derived_only_for_a_total_gpu_column(tmp_path):
    """A log whose GPU column holds totals (``gpus_column: total``) derives an unknown total
    as nodes x GPUs per node, and says so (a known total is kept, even one that is not nodes x
    GPUs per node); one holding GPUs per node needs no total."""
    table = _three_jobs(nodes=[2, 1, 3], gpus_per_node=[2, None, 8], gpus=[None, 3, None])
    total = jt.with_metadata(table, {**jt.get_metadata(table),
                                     "nqsii": {"form": "raw", "gpus_column": "total"}})
    losses = nqsii.write(total, tmp_path / "total.csv")
    assert losses == ["gpus: unknown for 2 jobs, derived as nodes x GPUs per node"]
    lines = (tmp_path / "total.csv").read_text().splitlines()[1:]
    assert [line.split(",")[5] for line in lines] == ["4", "3", "24"]  # 2 x 2, as is, 3 x 8
    assert nqsii.write(table, tmp_path / "per_node.csv") == [
        "gpus_per_node: unknown for 1 job, derived as gpus / nodes"]
    lines = (tmp_path / "per_node.csv").read_text().splitlines()[1:]
    assert [line.split(",")[5] for line in lines] == ["2", "3", "8"]  # as is, 3 / 1, as is


def test_unknown_gpus_per_node_are_derived_where_nodes_divide_the_total(tmp_path):
    """gpus / nodes when both are known, nodes > 0 and the division is exact; a known value is
    kept (and a total it does not give is reported lost)."""
    table = _three_jobs(nodes=[2, 1, 2], gpus=[16, 3, 8], gpus_per_node=[None, None, 2])
    assert nqsii.write(table, tmp_path / "a.csv") == [
        "gpus_per_node: unknown for 2 jobs, derived as gpus / nodes",
        "gpus: 1 job with a total other than nodes x GPUs per node; the GPU column carries GPUs "
        "per node, so those totals are lost"]
    lines = (tmp_path / "a.csv").read_text().splitlines()[1:]
    assert [line.split(",")[5] for line in lines] == ["8", "3", "2"]
    # 16 / 3 is not whole, 0 nodes divide nothing, an unknown total gives no count per node
    table = _three_jobs(nodes=[3, 0, 2], gpus=[16, 0, None], gpus_per_node=[None] * 3)
    with pytest.raises(InputError) as err:
        nqsii.write(table, tmp_path / "b.csv")
    assert err.value.message == ("cannot write an NQSII log: unknown for 3 jobs (first: job 11); "
                                 "NQSII logs have no marker for unknown values")
    assert err.value.field == "column 'gpus_per_node' (GPUs per node)"
    # a node count neither known nor implied (no total either)
    with pytest.raises(InputError) as err:
        nqsii.write(_three_jobs(nodes=[1, None, 1], gpus=[1, None, 1]), tmp_path / "c.csv")
    assert err.value.message == ("cannot write an NQSII log: unknown for 1 job (first: job 12); "
                                 "NQSII logs have no marker for unknown values")


def test_a_table_of_several_chunks_is_written_as_the_same_table_in_one():
    table = _three_jobs(nodes=[None, 1, 1], gpus=[16, 4, 1], gpus_per_node=[8, 4, 1])
    chunked = pa.concat_tables([table.slice(0, 1), table.slice(1, 2)])
    assert chunked.column("nodes").num_chunks == 2
    assert nqsii.render(chunked) == nqsii.render(table)


def test_names_after_integer_ids_in_earlier_chunks_are_refused_by_name(tmp_path):
    first, later = _three_jobs(user=["7", "8", "9"]), _three_jobs(user=["7", "ann", "9"])
    with pytest.raises(InputError) as err:
        nqsii.write_chunks([first, later], tmp_path / "log.csv", form="published")
    assert err.value.message == (
        "cannot write an NQSII log: earlier chunks held integer ids and were written as they "
        "are, this one holds names; write the whole table")
    assert err.value.field == "column 'user' (User)" and not (tmp_path / "log.csv").exists()


_RAW = ["job_id", "user", "group", "queue", "nodes", "gpus", "walltime_req", "termcode",
        "submit", "start", "finish", "wait", "walltime"]


@pytest.mark.parametrize("recorded", [
    {"fields": _RAW[::-1]},  # no header
    {"header": [name.upper() for name in _RAW[::-1]]},  # no fields
    {"fields": ["job_id"] * 13, "header": [f"c{i}" for i in range(13)]},  # not the form's fields
])
def test_recorded_fields_and_header_are_used_only_together_and_whole(tmp_path, recorded):
    """Fields and header labels that do not pair up (one missing, or fields other than the
    form's) are both dropped for the form's own: the default header and order."""
    nqsii.write(_one_job({"form": "raw", **recorded}), tmp_path / "log.csv")
    assert (tmp_path / "log.csv").read_text() == (
        ",".join(_RAW) + "\n1,u,g,Normal,1,1,00:01:00,0,1970-01-01 09:00:00,1970-01-01 09:00:10,"
        "1970-01-01 09:01:10,00:00:10,00:01:00\n")


def test_without_a_site_the_times_are_written_in_the_zone_the_table_records(tmp_path):
    """No ``site``: the local times are in the table's recorded zone (here UTC), and only a
    table that records none takes the AAIC preset's Asia/Tokyo (+9 h)."""
    utc = _one_job({"form": "raw"})
    utc = utc.replace_schema_metadata({**utc.schema.metadata,
                                       b"swftools": b'{"time_zone": "UTC"}'})
    lines = {}
    for name, table in (("utc", utc), ("none", _one_job({"form": "raw"}))):
        nqsii.write(table, tmp_path / f"{name}.csv")
        lines[name] = (tmp_path / f"{name}.csv").read_text().splitlines()[1].split(",")[8:11]
    # submit 0, start 10, finish 70 (UTC epoch s)
    assert lines["utc"] == ["1970-01-01 00:00:00", "1970-01-01 00:00:10", "1970-01-01 00:01:10"]
    assert lines["none"] == ["1970-01-01 09:00:00", "1970-01-01 09:00:10", "1970-01-01 09:01:10"]


def test_write_chunks_keeps_an_existing_file_unless_forced(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("mine\n")
    with pytest.raises(UsageError, match="already exists \\(use --force to overwrite\\)$"):
        nqsii.write_chunks([_one_job({"form": "raw"})], path)
    assert path.read_text() == "mine\n"
    nqsii.write_chunks([_one_job({"form": "raw"})], path, force=True)
    assert path.read_text().splitlines()[1].startswith("1,u,g,Normal,")
