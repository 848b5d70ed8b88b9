"""The sacct splitter and integer kernel, compiled (``_kernels.pyx``) and their pure-Python
reference (``kernels_ref``), each against plain-Python statements of what they compute (and
pyarrow's CSV reader, the splitter the reader used before)."""

from __future__ import annotations

import io
import re

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swftools.formats.slurm import _kernels  # the compiled kernels must be built (``make dev``)
from swftools.formats.slurm import kernels, kernels_ref

from .strategies import sacct_split_texts


@pytest.fixture(scope="module", autouse=True, params=["compiled", "reference"])
def which(request):
    """Every test of this file runs on the compiled kernels and on the reference."""
    saved = kernels._kernels
    kernels._kernels = _kernels if request.param == "compiled" else kernels_ref
    yield request.param
    kernels._kernels = saved


def test_the_compiled_kernels_run_by_default(which):
    saved = kernels._kernels
    kernels._kernels = None
    try:
        assert kernels.native() is _kernels
    finally:
        kernels._kernels = saved

FS = settings(max_examples=150, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])


def _reference(body: bytes, width: int) -> tuple[int, list[list[str]]]:
    """(first row with a wrong field count or -1, the rows' cells): lines end at \\r\\n, \\r or
    \\n, the last line break ends the text, an empty line is a row of empty cells."""
    pieces = re.split(r"\r\n|\r|\n", body.decode("utf-8"))
    if body.endswith((b"\n", b"\r")):
        pieces = pieces[:-1]
    rows = []
    for number, line in enumerate(pieces):
        cells = line.split("|") if line else [""] * width  # an empty line: empty cells
        if len(cells) != width:
            return number, rows
        rows.append(cells)
    return -1, rows


def _pyarrow_rows(data: bytes, width: int) -> list[list[str]]:
    names = [f"c{i}" for i in range(width)]
    table = pacsv.read_csv(
        io.BytesIO(data),
        read_options=pacsv.ReadOptions(column_names=names, skip_rows=1),
        parse_options=pacsv.ParseOptions(delimiter="|", quote_char=False, escape_char=False,
                                         newlines_in_values=False, ignore_empty_lines=False),
        convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names},
                                             strings_can_be_null=False))
    return [list(row.values()) for row in table.to_pylist()]


def _split(text: bytes, width: int, id_pos: int):
    header = "|".join(f"h{i}" for i in range(width)).encode()
    data = header + b"\n" + (text if text.endswith(b"\n") else text + b"\n")
    want = np.arange(width)
    return data, len(header) + 1, kernels.scan(data, len(header) + 1, width, id_pos, want)


def _outputs(found: kernels.Scan) -> dict:
    if found.bad_row >= 0:  # a scan that found a bad row holds that alone
        return {"bad_row": found.bad_row}
    out = {name: getattr(found, name) for name in kernels._OUTPUTS}
    cells = [c.to_pylist() for c in getattr(found, "cells", [])]
    return {"bad_row": found.bad_row, "cells": cells, **out}


@FS
@given(case=sacct_split_texts())
def test_scan_and_gather_split_like_the_reference(case):
    text, width, id_pos = case
    data, begin, found = _split(text, width, id_pos)
    bad, rows = _reference(data[begin:], width)
    assert found.bad_row == bad
    if bad >= 0:
        return
    assert _pyarrow_rows(data, width) == rows
    is_step = np.array(["." in row[id_pos] for row in rows], dtype=bool)
    assert found.job_row.tolist() == np.flatnonzero(~is_step).tolist()
    assert found.step_row.tolist() == np.flatnonzero(is_step).tolist()
    again = kernels.gather(data, found.job_start, np.arange(width))  # measured, not scanned
    for k in range(width):
        expected = [rows[r][k] for r in found.job_row.tolist()]
        assert found.cells[k].to_pylist() == expected == again[k].to_pylist()
    steps = found.step_ids.to_pylist()
    assert steps == [rows[r][id_pos] for r in found.step_row.tolist()]
    latest = None
    after = dict(zip(found.step_row.tolist(), found.step_after_job.tolist()))
    for r, row in enumerate(rows):
        if not is_step[r]:
            latest = row[id_pos]
        elif after[r]:  # the scan's shortcut: the step's job is the latest job line
            assert row[id_pos].split(".", 1)[0] == latest


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=sacct_split_texts())
def test_scan_in_parts_and_growing_outputs_finds_the_same(monkeypatch, case):
    text, width, id_pos = case
    text = text * 5
    _, _, whole = _split(text, width, id_pos)
    with monkeypatch.context() as patch:
        patch.setattr(kernels, "_MIN_PART_BYTES", 1)
        patch.setattr(kernels, "_MIN_GUESS", 1)  # outputs and cell buffers grow
        patch.setattr(kernels, "_cell_capacity", lambda *_: (1, 1))
        patch.setattr(kernels, "_MIN_ROWS_PER_THREAD", 1)
        patch.setattr(kernels, "workers", lambda: 3)
        data, _, parts = _split(text, width, id_pos)
        a, b = _outputs(whole), _outputs(parts)
        assert a["bad_row"] == b["bad_row"]
        if a["bad_row"] >= 0:
            return
        gathered = kernels.gather(data, parts.job_start, np.arange(width))
    for name in kernels._OUTPUTS:
        if name != "step_after_job":  # a shortcut: parts know less at their start
            assert np.array_equal(a[name], b[name]), name
    assert not (b["step_after_job"] & ~a["step_after_job"]).any()
    assert a["cells"] == b["cells"]
    assert whole.step_ids.to_pylist() == parts.step_ids.to_pylist()
    serial = kernels.gather(data, whole.job_start, np.arange(width))
    assert [g.to_pylist() for g in gathered] == [s.to_pylist() for s in serial]


@pytest.mark.parametrize("text,expected", [
    (b"h0|h1\n7|a\r\n7.batch|b\n", (6, 1)),        # \r\n ends one line: job 7 before the part
    (b"h0|h1\n7|a\r\r\n7.batch|b\n", (-1, 0)),    # \r, then \r\n: an empty line (JobID "")
    (b"h0|h1\n7|a\n7.0|b\n7.batch|b\n", (6, 1)),  # steps skipped back to their job
    (b"h0|h1\n7|a|c\n7.batch|b\n", (-1, 0)),       # another field count: not a line to trust
])
def test_the_job_before_a_part_is_found_where_the_scan_finds_it(text, expected):
    """The shortcut a part starts from: the JobID of the job line before it, read with the scan's
    line ends (a lone ``\r`` ends a line too). Found by the parts property: ``0|||\r\r\n`` was
    taken for job 0, the scan reads job 0 then an empty line."""
    begin = text.rindex(b"7.batch")
    assert kernels._previous_job_id(text, begin, 2, 0) == expected


def test_a_part_after_a_lone_carriage_return_knows_no_more_than_the_whole_scan(monkeypatch):
    text = b"0|||\r\r\n0.batch|||\n.|||\n0.batch|||\n" * 8
    _, _, whole = _split(text, 4, 0)
    monkeypatch.setattr(kernels, "_MIN_PART_BYTES", 1)
    for workers in range(2, 9):
        monkeypatch.setattr(kernels, "workers", lambda w=workers: w)
        _, _, parts = _split(text, 4, 0)
        assert parts.step_row.tolist() == whole.step_row.tolist()
        assert not (parts.step_after_job & ~whole.step_after_job).any(), workers


def test_scan_needs_a_final_line_break():
    with pytest.raises(ValueError, match="^scan: the text must end with a line break$"):
        kernels.scan(b"a|b\n1|2", 4, 2, 0, np.arange(2))


@given(st.lists(st.text(st.sampled_from(list("0123456789") + ["a", " ", "-", "+", "é"]),
                        max_size=21)))
def test_uints_is_the_integer_grammar(cells):
    values, status = kernels.uints(pa.array(cells, pa.string()))
    for text, value, code in zip(cells, values.tolist(), status.tolist()):
        if text == "":
            assert code == 1
        elif re.fullmatch(r"[0-9]{1,18}", text):
            assert (code, value) == (0, int(text))
        else:
            assert code == 2, text


def test_uints_on_a_slice_and_large_strings():
    arr = pa.array(["x", "12", "", "007"], pa.string()).slice(1)
    assert [v.tolist() for v in kernels.uints(arr)] == [[12, 0, 7], [0, 1, 0]]
    large = pa.array(["5", "x"], pa.large_string())
    assert [v.tolist() for v in kernels.uints(large)] == [[5, 0], [0, 2]]


# -- the wrapper (issue 30): loading, the integer cells, parts, the 2 GiB limits ---------------

def test_native_runs_the_reference_where_the_kernels_were_not_built(monkeypatch):
    calls = []
    monkeypatch.setattr(kernels, "_kernels", None)
    monkeypatch.setattr(kernels, "load", lambda name, what: calls.append((name, what)))
    assert kernels.native() is kernels_ref
    assert kernels.native() is kernels_ref  # looked up once
    assert calls == [("swftools.formats.slurm._kernels", "reading sacct text")]


def test_uints_on_chunks_empty_cells_and_no_cells():
    chunked = pa.chunked_array([["4"], ["x", "", "10"]], pa.string())
    assert [v.tolist() for v in kernels.uints(chunked)] == [[4, 0, 0, 10], [0, 2, 1, 0]]
    values, status = kernels.uints(pa.array(["", ""], pa.string()))  # no data bytes at all
    assert values.tolist() == [0, 0] and status.tolist() == [1, 1]
    values, status = kernels.uints(pa.array([], pa.string()))
    assert values.dtype == np.int64 and status.dtype == np.uint8 and len(values) == 0 == len(status)
    with pytest.raises(ValueError, match="^uints: cells without nulls$"):
        kernels.uints(pa.array(["1", None], pa.string()))


def test_scan_in_parts_counts_rows_and_the_first_bad_row_across_parts(monkeypatch):
    lines = [b"%d|a%d\n" % (j, j) if j % 3 else b"%d.batch|s\n" % (j - 1) for j in range(1, 40)]
    good = b"".join(lines)
    bad = b"".join(lines[:22] + [b"x|y|z\n"] + lines[23:30] + [b"q\n"] + lines[31:])
    monkeypatch.setattr(kernels, "_MIN_PART_BYTES", 1)
    for workers in (1, 2, 3, 5, 40):
        monkeypatch.setattr(kernels, "workers", lambda w=workers: w)
        _, _, found = _split(good, 2, 0)
        assert found.bad_row == -1 and found.rows == 39
        assert found.job_row.tolist() == [r for r in range(39) if (r + 1) % 3]
        assert found.step_row.tolist() == [r for r in range(39) if (r + 1) % 3 == 0]
        assert found.cells[1].to_pylist() == ["a%d" % j for j in range(1, 40) if j % 3]
        assert _split(bad, 2, 0)[2].bad_row == 22, workers
        chunked = workers > 1  # a string array per part, chunked when there are several
        assert all(isinstance(c, pa.ChunkedArray) == chunked for c in found.cells)
        assert isinstance(found.step_ids, pa.ChunkedArray) == chunked
        for p in range(12):  # a bad line at any row, some at the start of a part
            text = b"".join(b"x|y|z\n" if r == p else lines[r] for r in range(12))
            found = _split(text, 2, 0)[2]
            # the bad row alone: a later part's rows would not be shifted yet
            assert found.bad_row == p and vars(found) == {"bad_row": p}, (workers, p)


def test_scan_of_no_lines_after_the_header():
    data = b"h0|h1\n"
    found = kernels.scan(data, len(data), 2, 0, np.arange(2))
    assert found.bad_row == -1 and found.rows == 0
    assert [c.to_pylist() for c in found.cells] == [[], []] and found.step_ids.to_pylist() == []


@pytest.mark.parametrize("limit", [100, 150])
def test_a_part_refuses_a_column_or_step_ids_past_the_cell_limit(monkeypatch, limit):
    """A part's cells of one column (and its step ids) must fit int32 offsets; with the limit
    lowered to ``limit`` bytes, exactly that many fit and one more is refused."""
    monkeypatch.setattr(kernels, "_MAX_CELL_BYTES", limit)
    monkeypatch.setattr(kernels, "_cell_capacity", lambda *_: (1, 1))  # grown from 1 byte

    def jobs(n_bytes: int) -> bytes:  # column 1 holds n_bytes (cells of 10, then the rest)
        cells = [b"c" * 10] * (n_bytes // 10) + ([b"c" * (n_bytes % 10)] if n_bytes % 10 else [])
        return b"".join(b"%d|%s\n" % (j, c) for j, c in enumerate(cells))

    _, _, found = _split(jobs(limit), 2, 0)
    assert sum(len(c) for c in found.cells[1].to_pylist()) == limit
    with pytest.raises(ValueError, match="^a column of sacct cells past 2 GiB in one part$"):
        _split(jobs(limit + 1), 2, 0)
    steps = b"".join(b"1.%08d|s\n" % j for j in range(limit // 10))  # ids of 10 bytes
    _, _, found = _split(steps, 2, 0)
    assert len(found.step_ids) == limit // 10
    with pytest.raises(ValueError, match="^sacct step ids past 2 GiB in one part$"):
        _split(steps + b"2.|s\n", 2, 0)


def test_outputs_grown_from_one_row_and_one_byte_find_the_same(monkeypatch):
    """Every output and buffer of a part started at one row or byte and doubled when full: the
    same rows, cells and step ids as with the room guessed from the text."""
    text = b"".join(b"%d|c%d\n%d.batch|s\n%d.0|t\n" % (j, j * 7, j, j) if j % 4 else b"%d|\n" % j
                    for j in range(1, 60))
    _, _, whole = _split(text, 2, 0)
    monkeypatch.setattr(kernels, "_MIN_GUESS", 1)
    monkeypatch.setattr(kernels, "_cell_capacity", lambda *_: (1, 1))
    _, _, grown = _split(text, 2, 0)
    a, b = _outputs(whole), _outputs(grown)
    for name in ("bad_row", "cells", *kernels._OUTPUTS):
        assert np.array_equal(a[name], b[name]) if name in kernels._OUTPUTS else a[name] == b[name]
    assert grown.step_ids.to_pylist() == whole.step_ids.to_pylist()
    assert len(whole.job_row) == 59 and len(whole.step_row) == 2 * 45
    assert whole.cells[1].to_pylist()[:4] == ["c7", "c14", "c21", ""]
    assert whole.step_ids.to_pylist()[:2] == ["1.batch", "1.0"]


def test_step_outputs_grow_when_the_text_after_the_sample_has_more_lines(which, monkeypatch):
    """The rows are guessed from the first MiB (one long job line here): the 300 step lines
    after it make the step outputs grow; every row is found (compiled only: 1 MiB in Python
    is slow, and the growth is the wrapper's)."""
    if which == "reference":
        pytest.skip("the wrapper's growth, once")
    monkeypatch.setattr(kernels, "_MIN_GUESS", 1)
    text = b"1|" + b"x" * (1 << 20) + b"\n" + b"".join(b"1.%d|s\n" % j for j in range(300))
    _, _, found = _split(text, 2, 0)
    assert found.job_row.tolist() == [0] and found.step_row.tolist() == list(range(1, 301))
    assert found.step_ids.to_pylist() == ["1.%d" % j for j in range(300)]
    assert found.step_after_job.all() and len(found.cells[1].to_pylist()[0]) == 1 << 20


@pytest.mark.parametrize("workers", [1, 3])
def test_gather_copies_the_wanted_cells_of_the_given_lines(monkeypatch, workers):
    """``want[field]`` is the output column (-1: not copied); cells in the order of ``starts``,
    the lines split in Python; in threads (one span of rows each) the same."""
    lines = [b"%d|u%d|%s|x\n" % (j, j, b"n" * (j % 4)) for j in range(20)]
    data = b"".join(lines)
    begins = np.cumsum([0] + [len(line) for line in lines[:-1]])
    pick = [19, 3, 0, 7, 7, 12, 5]
    monkeypatch.setattr(kernels, "_MIN_ROWS_PER_THREAD", 1)
    monkeypatch.setattr(kernels, "workers", lambda: workers)
    out = kernels.gather(data, begins[pick], np.array([-1, 1, 0, -1]))
    split = [lines[r].rstrip(b"\n").decode().split("|") for r in pick]
    assert [a.to_pylist() for a in out] == [[s[2] for s in split], [s[1] for s in split]]
    assert all(a.type == pa.string() for a in out)
    assert [a.to_pylist() for a in kernels.gather(data, begins[[]], np.array([0, -1, -1, 1]))] \
        == [[], []]


@pytest.mark.parametrize("text,begin,width,id_pos,expected", [
    (b"h0|h1\na|7\na|7.batch\n", 10, 2, 1, (8, 1)),  # the JobID after a cell: "a|" before it
    (b"h0|h1\n7.batch|b\n", 6, 2, 0, (-1, 0)),      # the header is no job line
    (b"\n7|a\n", 1, 2, 0, (-1, 0)),                 # an empty header: no line before the part
    (b"\n\n.0\n", 2, 1, 0, (1, 0)),                 # one field: an empty line is the job ""
    (b"h0|h1\n7|a\n" + b"".join(b"7.%d|s\n" % j for j in range(63)), None, 2, 0, (6, 1)),
    (b"h0|h1\n7|a\n" + b"".join(b"7.%d|s\n" % j for j in range(64)), None, 2, 0, (-1, 0)),
])
def test_the_job_before_a_part_by_hand(text, begin, width, id_pos, expected):
    """(start, length) of the JobID of the job line before ``begin``, worked by hand: found
    after the cells before it, never in the header line, and at most 64 lines back (a part's
    look-back is bounded; past it the part starts knowing no job)."""
    begin = len(text) if begin is None else begin
    assert kernels._previous_job_id(text, begin, width, id_pos) == expected


def test_the_whole_scan_reads_an_empty_line_of_one_field_as_the_job_before_its_step():
    """The case above where the look-back finds the empty JobID: the whole scan agrees."""
    found = kernels.scan(b"\n\n.0\n", 1, 1, 0, np.arange(1))
    assert found.job_row.tolist() == [0] and found.step_row.tolist() == [1]
    assert found.step_after_job.tolist() == [True]


def test_the_text_is_cut_in_one_part_per_min_part_bytes_at_line_breaks(monkeypatch):
    """With 8 cores and parts of at least 10 bytes, the 26 bytes after the header are 2 parts,
    cut at the first line break from the middle (byte 6 + 13 = 19: the end of ``4|d``); the
    step starting part 2 still knows its job, the line before the part."""
    monkeypatch.setattr(kernels, "_MIN_PART_BYTES", 10)
    monkeypatch.setattr(kernels, "workers", lambda: 8)
    data = b"h0|h1\n1|a\n2|b\n3|c\n4|d\n4.0|e\n6|f\n"
    found = kernels.scan(data, 6, 2, 0, np.arange(2))
    assert [c.to_pylist() for c in found.cells[1].chunks] == [["a", "b", "c", "d"], ["f"]]
    assert [c.to_pylist() for c in found.step_ids.chunks] == [[], ["4.0"]]
    assert found.job_row.tolist() == [0, 1, 2, 3, 5] and found.step_row.tolist() == [4]
    assert found.step_after_job.tolist() == [True]
    # 37 bytes: 3 parts asked for, but both cuts fall in the long last line: one part
    data = b"h0|h1\n1|a\n2|" + b"x" * 30 + b"\n"
    found = kernels.scan(data, 6, 2, 0, np.arange(2))
    assert isinstance(found.cells[1], pa.Array) and isinstance(found.step_ids, pa.Array)
    assert found.cells[1].to_pylist() == ["a", "x" * 30]


@pytest.mark.parametrize("room", [(1, 1), (4, 1), (1, 4)])
def test_a_buffer_grows_only_when_it_is_full(monkeypatch, room):
    """With the limit lowered to 4 bytes, a column of 2 bytes and step ids of 3 bytes fit
    whatever room they start with, however often the row outputs grow (200 job lines from
    room for one): a buffer grown again for another output would be refused at the limit."""
    monkeypatch.setattr(kernels, "_MAX_CELL_BYTES", 4)
    monkeypatch.setattr(kernels, "_MIN_GUESS", 1)
    monkeypatch.setattr(kernels, "_cell_capacity", lambda *_: room)
    data = b"h0|h1\n1|ab\n1.0|\n" + b"".join(b"%d|\n" % j for j in range(2, 200))
    found = kernels.scan(data, 6, 2, 0, np.array([-1, 0]))
    assert found.bad_row == -1 and found.rows == 200
    assert found.job_row.tolist() == [0, *range(2, 200)]
    assert found.cells[0].to_pylist() == ["ab"] + [""] * 198
    assert found.step_ids.to_pylist() == ["1.0"] and found.step_after_job.tolist() == [True]


def test_scan_and_gather_take_int32_positions_and_columns():
    """``want`` and ``starts`` as int32 arrays (converted for the kernels): the same cells."""
    data = b"h0|h1\n1|a\n1.0|b\n2|c\n"
    found = kernels.scan(data, 6, 2, 0, np.array([1, 0], np.int32))
    assert [c.to_pylist() for c in found.cells] == [["a", "c"], ["1", "2"]]
    out = kernels.gather(data, np.array([16, 6], np.int32), np.array([1, 0], np.int32))
    assert [a.to_pylist() for a in out] == [["c", "a"], ["2", "1"]]


@pytest.mark.parametrize("want", [[-1, 0, -1], [2, 0, 1]])
def test_gather_of_one_and_three_columns_of_long_cells_in_threads(monkeypatch, want):
    """20 lines of cells of 40-60 bytes (each column past 61 bytes: still ``string``), in
    spans of at least 3 rows on 8 cores (6 threads): the cells of the lines split in Python."""
    monkeypatch.setattr(kernels, "_MIN_ROWS_PER_THREAD", 3)
    monkeypatch.setattr(kernels, "workers", lambda: 8)
    lines = [b"%d%s|%s|%s\n" % (j, b"i" * 40, b"u%02d" % j * 15, b"n" * (j + 40))
             for j in range(20)]
    data = b"".join(lines)
    begins = np.cumsum([0] + [len(line) for line in lines[:-1]])
    pick = [19, 3, 0, 7, 7, 12, 5]
    out = kernels.gather(data, begins[pick], np.array(want))
    split = [lines[r].rstrip(b"\n").decode().split("|") for r in pick]
    expected = [[s[want.index(k)] for s in split] for k in range(max(want) + 1)]
    assert [a.to_pylist() for a in out] == expected
    assert all(a.type == pa.string() for a in out)


@pytest.mark.parametrize("size", [2 ** 31 - 2, 2 ** 31 - 1, 2 ** 31])
def test_a_gathered_column_from_2_gib_on_is_a_large_string(size):
    """A column of cells whose bytes could overrun int32 offsets (2**31 - 1 bytes or more) is a
    ``large_string``; smaller, a ``string``. The 2 GiB of zeros are never touched (mapped on
    first use), except the first cell's one byte, read at the column's base."""
    data = np.zeros(2 ** 31 + 16, np.uint8)
    data[5] = ord("x")
    column = kernels._strings(data, np.array([5, 6, 5 + size]), 5, size, 2)
    assert column.type == (pa.string() if size < 2 ** 31 - 1 else pa.large_string())
    assert len(column) == 2 and column[0].as_py() == "x"
