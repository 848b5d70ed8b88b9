"""The SWF writer formats in row slices (issue 15): any slice size gives the same bytes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.fileio import write_behind
from swftools.formats import swf
from swftools.formats.swf.writer import format_lines, iter_chunks
from swftools.metadata import TableMetadata
from tests.strategies import examples, swf_jobs

GOLDEN = Path(__file__).parent / "golden" / "swf"


def _sliced(table, rows_per_slice, **layout) -> bytes:
    return b"".join(c.tobytes() for c in iter_chunks(table, rows_per_slice=rows_per_slice,
                                                      **layout))


# 30 examples each (50 before) for the two slicing properties: slice sizes from 1 to past the
# table's size are forced by the strategies, and slices of 1, 2 and 7 rows run on every golden
# file (test_recorded_layouts_survive_slicing)
@settings(max_examples=examples(30), deadline=None)
@given(swf_jobs(min_size=0, max_size=40), st.integers(1, 45))
def test_slices_give_the_same_lines(table, rows_per_slice):
    assert _sliced(table, rows_per_slice) == format_lines(table)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.swf")), ids=lambda p: p.name)
@pytest.mark.parametrize("rows_per_slice", [1, 2, 7])
def test_recorded_layouts_survive_slicing(path, rows_per_slice):
    # widths and per-row decimals recorded by the reader apply to the right rows in every slice
    table = swf.read(path)
    layout = TableMetadata.from_table(table).swf_layout or {}
    options = {"widths": layout.get("widths", swf.PWA_WIDTHS),
               "decimals": layout.get("decimals")}
    assert _sliced(table, rows_per_slice, **options) == format_lines(table, **options)


@settings(max_examples=examples(30), deadline=None)
@given(swf_jobs(min_size=0, max_size=40), st.integers(1, 45), st.integers(1, 3))
def test_reused_buffers_give_the_same_lines(table, rows_per_slice, sets):
    """With ``buffer_sets`` the chunks are views of buffers used in turn: a chunk holds its text
    until ``sets - 1`` more slices have been taken."""
    expected = format_lines(table)
    chunks = iter_chunks(table, rows_per_slice=rows_per_slice, buffer_sets=sets)
    taken, texts = [], []
    for chunk in chunks:
        taken.append(chunk)
        if len(taken) > sets:
            taken.pop(0)
        assert all(c.tobytes() == t for c, t in zip(taken[:-1], texts[-len(taken) + 1:]))
        texts.append(chunk.tobytes())
    assert b"".join(texts) == expected


def test_write_behind_keeps_order_and_raises_either_sides_errors():
    written: list[bytes] = []
    write_behind((bytes([i]) * 3 for i in range(50)), written.append)
    assert written == [bytes([i]) * 3 for i in range(50)]

    def failing_write(chunk):
        if len(written) == 3:
            raise OSError("disk full")
        written.append(chunk)

    written.clear()
    with pytest.raises(OSError, match="disk full"):
        write_behind((bytes([i]) for i in range(50)), failing_write)
    assert written == [b"\x00", b"\x01", b"\x02"]

    def failing_chunks():
        yield b"a"
        yield b"b"
        raise ValueError("bad row")

    written.clear()
    with pytest.raises(ValueError, match="bad row"):
        write_behind(failing_chunks(), written.append)
    assert written == [b"a", b"b"]  # what was handed over is written before the error rises


def test_a_failing_write_leaves_nothing_behind(tmp_path, monkeypatch):
    table = swf.read(sorted(GOLDEN.glob("*.swf"))[0])
    from swftools.formats.swf import writer

    def broken(*args, **kwargs):
        yield np.frombuffer(b"1 2 3\n", np.uint8)
        raise RuntimeError("formatting failed")

    monkeypatch.setattr(writer, "iter_chunks", broken)
    with pytest.raises(RuntimeError, match="formatting failed"):
        swf.write(table, tmp_path / "out.swf")
    assert list(tmp_path.iterdir()) == []


# --- issue 30: field 3 when wait_s is unknown but the submission and the start are known ------

@pytest.mark.parametrize("rows_per_slice", [1, 2, 3, 100])
def test_unknown_wait_is_written_as_start_minus_submit(rows_per_slice):
    """Docs: ``wait_s = start - submit``. A table whose ``wait_s`` is null where both instants
    are known writes that difference in field 3 (in every slice), -1 where either is unknown,
    and a known ``wait_s`` as it is. The expected fields are computed here by hand."""
    from swftools import table as jt

    submit = [1000, 1000, 2000, 2500, 3000, 3100]
    start = [1100, 1500, None, 2600, 3000, None]
    wait = [None, None, None, 100, None, 7]
    table = jt.from_columns({"job_id": [1, 2, 3, 4, 5, 6], "submit_time": submit,
                             "start_time": start, "wait_s": wait}, {"source_format": "swf"})
    expected = [100, 500, -1, 100, 0, 7]
    text = _sliced(table, rows_per_slice).decode()
    assert [int(line.split()[2]) for line in text.splitlines()] == expected
    origin = min(submit)  # field 2 is relative to the first submission
    assert [int(line.split()[1]) for line in text.splitlines()] == [s - origin for s in submit]


# --- issue 30 (mutation testing): the caller's site, the header's source, buffers in flight ---

_TWO_JOBS = {"job_id": [11, 12], "user": ["ann", "bo"], "queue": ["Long", "Short"],
             "nodes": [2, 1], "gpus_per_node": [8, 1], "gpus": [16, 1],
             "submit_time": [1500000000, 1500000060], "start_time": [1500000100, 1500000060],
             "finish_time": [1500003700, 1500000160], "termcode": [0, 3]}


def test_a_site_named_by_the_caller_shapes_the_header_and_the_losses(tmp_path):
    """``site=`` applies to a table whose metadata names no site: the header describes the
    site (machine, queues with their limits), field 16 is its one partition, and the loss
    report explains nodes by its GPUs per node; ``write`` gives ``to_bytes``'s bytes."""
    from swftools import table as jt
    from swftools.formats.swf.writer import to_bytes

    table = jt.from_columns(_TWO_JOBS, {"source_format": "nqsii", "time_zone": "Asia/Tokyo"})
    text = to_bytes(table, site="aaic").decode()
    assert "; Computer: 40 nodes x 8 NVIDIA Tesla P100 GPUs\n" in text
    assert ("; Queue: 4 Long (1-1 nodes, 1-8 GPUs per node, walltime default/max 72/336 h)\n"
            in text)
    jobs = [line.split() for line in text.splitlines() if not line.startswith(";")]
    assert [job[14] for job in jobs] == ["4", "2"]  # the site's queue numbers
    assert [job[15] for job in jobs] == ["1", "1"]
    losses = swf.write(table, tmp_path / "out.swf", site="aaic")
    assert (tmp_path / "out.swf").read_text() == text
    assert ("nodes and gpus_per_node have no SWF field: field 5 holds total GPUs (nodes = "
            "ceil(GPUs/8) under the whole-node policy)") in losses
    # without a site none of it: queues numbered by first appearance, no partition
    plain = to_bytes(table).decode()
    assert "; Computer:" not in plain and "; Queue: 1 Long\n" in plain
    assert [line.split()[15] for line in plain.splitlines() if not line.startswith(";")] == [
        "-1", "-1"]
    assert ("nodes and gpus_per_node have no SWF field: field 5 holds total GPUs"
            in swf.write(table, tmp_path / "plain.swf"))


def test_an_edited_swf_header_is_written_as_edited(tmp_path):
    """A table read from SWF whose header pairs were changed (the verbatim lines no longer say
    the same) writes the pairs; one marked as SWF without a header gets a generated header."""
    from swftools import table as jt
    from swftools.formats.swf.writer import to_bytes

    job = "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 1 -1 -1"
    path = tmp_path / "t.swf"
    path.write_text(f"; Version: 2.2\n; Computer: old\n; MaxJobs: 1\n{job}\n")
    table = swf.read(path)
    assert to_bytes(table) == path.read_bytes()
    pairs = [["Version", "2.2"], ["Computer", "new"], ["Note", "two\nlines"]]
    meta = dataclasses.replace(TableMetadata.from_table(table), swf_header=pairs)
    edited = to_bytes(meta.to_table(table)).decode()
    # a continuation line sits under the value (``; Note: `` is 7 characters after the ';')
    assert edited == f"; Version: 2.2\n; Computer: new\n; Note: two\n;       lines\n{job}\n"

    bare = jt.from_columns({"job_id": [1], "submit_time": [100]}, {"source_format": "swf"})
    text = to_bytes(bare).decode()
    assert text.startswith("; Version: 2.2\n; Conversion: swftools ")
    assert "(converted from swf)\n" in text and "; MaxJobs: 1\n" in text


def test_chunks_in_flight_are_not_overwritten(tmp_path, monkeypatch):
    """``write`` formats the next row slice while the writer thread still holds the last chunk
    (``write_behind``: two chunks out at a time). Through a writer that lags one chunk behind, as
    a slow disk does, a table of three slices gives exactly ``to_bytes``'s bytes."""
    from swftools import table as jt
    from swftools.formats.swf import writer

    n = 2 * writer.ROWS_PER_SLICE + 5
    ids = np.arange(1, n + 1, dtype=np.int64)
    table = jt.from_columns({"job_id": ids, "submit_time": ids * 7, "start_time": ids * 7 + 3,
                             "finish_time": ids * 7 + 3 + ids % 1000, "gpus": ids % 64},
                            {"source_format": "synth"})

    def lagging(chunks, write):
        held = None
        for chunk in chunks:  # the next chunk is made while ``held`` is not yet written
            if held is not None:
                write(held)
            held = chunk
        if held is not None:
            write(held)

    monkeypatch.setattr(writer, "write_behind", lagging)
    swf.write(table, tmp_path / "out.swf")
    assert (tmp_path / "out.swf").read_bytes() == writer.to_bytes(table)


def test_a_recorded_layout_applies_only_to_the_rows_it_was_read_with(tmp_path):
    """The file's widths and per-row decimals are kept for the rows read; a table with other
    rows (here the first dropped) is written in the Parallel Workloads Archive layout, with
    decimals where the value has some, as is a layout that records no widths."""
    from swftools import table as jt
    from swftools.formats.swf.writer import to_bytes

    lines = [f"{i} 0 0 10 1 {cpu} -1 1 10 -1 1 1 1 -1 1 1 -1 -1"
             for i, cpu in ((1, "5.25"), (2, "3"), (3, "7.25"))]
    path = tmp_path / "t.swf"
    path.write_text(f"{lines[0]}\n; among the jobs\n{lines[1]}\n{lines[2]}\n")
    table = swf.read(path)
    assert to_bytes(table) == path.read_bytes()
    rest = to_bytes(table.slice(1)).decode().splitlines()  # nor the comment line: it stood
    assert len(rest) == 2                                   # before a row now first
    assert [line.split()[5] for line in rest] == ["3", "7.25"]
    assert all(line.startswith(f"    {i}        0      0     10    1") for i, line in
               zip((2, 3), rest))
    bare = jt.from_columns({"job_id": [1], "submit_time": [0]},
                           {"source_format": "swf", "swf_layout": {"n_rows": 1}})
    assert to_bytes(bare).decode().splitlines()[-1] == (
        "    1        0     -1     -1   -1     -1    -1   -1     -1    -1 -1  -1  -1  -1 -1 -1 "
        "-1 -1")


def test_format_lines_takes_the_layout_and_the_site():
    """``format_lines`` and ``format_chunks`` write the job lines with the decimals and the site
    they are given (the layout's digits on its rows; the site's queue numbers and partition)."""
    from swftools import table as jt
    from swftools.formats.swf.layout import pack_mask
    from swftools.formats.swf.writer import format_chunks

    table = jt.from_columns({"job_id": [1, 2], "avg_cpu_time_s": [4.5, 3.0],
                             "queue": ["Long", "Short"]}, {"source_format": "nqsii"})
    decimals = {"6": {"digits": 3, "rows": pack_mask(np.array([False, True]))}}
    lines = format_lines(table, decimals=decimals, site="aaic").decode().splitlines()
    assert [line.split()[5] for line in lines] == ["4", "3.000"]  # 4.5 rounds half to even
    assert [line.split()[14:16] for line in lines] == [["4", "1"], ["2", "1"]]
    chunks = format_chunks(table, decimals=decimals, site="aaic")
    assert b"".join(c.tobytes() for c in chunks).decode().splitlines() == lines
    assert [line.split()[5] for line in format_lines(table).decode().splitlines()] == [
        "4.50", "3"]


@settings(max_examples=20, deadline=None)
@given(swf_jobs(min_size=2, max_size=20), st.integers(1, 3))
def test_chunks_of_their_own_can_all_be_kept(table, rows_per_slice):
    """Without ``buffer_sets`` every chunk is an array of its own: chunks kept in a list still
    hold their text after the later slices are formatted."""
    kept = list(iter_chunks(table, rows_per_slice=rows_per_slice))
    assert b"".join(c.tobytes() for c in kept) == format_lines(table)


@pytest.mark.parametrize("cpus", [["1.25", "2", "3.50", "4", "5", "6.75", "7"],
                                  ["12.", "2", "3.", "4", "0.", "6", "7."]])
@pytest.mark.parametrize("rows_per_slice", [1, 2, 4])
def test_recorded_decimals_apply_to_their_rows_in_every_slice(tmp_path, rows_per_slice, cpus):
    """Field 6 written with decimals on some rows only (or a bare point, ``12.``): each slice
    writes them on its own rows (the golden files above have no decimals)."""
    text = "".join(f"{i} 0 0 10 1 {cpu} -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n"
                   for i, cpu in enumerate(cpus, start=1))
    path = tmp_path / "t.swf"
    path.write_text(text)
    table = swf.read(path)
    layout = TableMetadata.from_table(table).swf_layout
    assert _sliced(table, rows_per_slice, widths=layout["widths"],
                   decimals=layout["decimals"]).decode() == text
