"""``swftools.formats.slurm.kernels_ref`` (issue 30): the pure-Python sacct kernels against a
line-by-line statement of their docstrings (every line start, the exact ``step_after_job`` rule,
columns picked and reordered by ``want``) and hand-worked edges of ``uints`` and ``cells``."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swftools.formats.slurm import kernels, kernels_ref

from .strategies import sacct_split_texts


@pytest.fixture(autouse=True)
def _reference(monkeypatch):
    monkeypatch.setattr(kernels, "_kernels", kernels_ref)


def _lines(data: bytes, begin: int) -> list[tuple[int, bytes]]:
    """(start, text) of each line of ``data[begin:]``: lines end at \\r\\n, \\r or \\n."""
    out, start = [], begin
    for brk in re.finditer(rb"\r\n|\r|\n", data[begin:]):
        out.append((start, data[start:begin + brk.start()]))
        start = begin + brk.end()
    return out


@st.composite
def _cases(draw):
    text, width, id_pos = draw(sacct_split_texts())
    columns = draw(st.permutations(range(width)))
    keep = draw(st.lists(st.booleans(), min_size=width, max_size=width))
    keep[id_pos] = True  # at least one column
    return text, width, id_pos, np.array([c if k else -1 for c, k in zip(columns, keep)])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_cases())
def test_scan_finds_every_line_start_and_exactly_the_steps_after_their_job(case):
    """One part: job and step lines at their starts, the wanted cells in their columns, and
    ``step_after_job`` exactly where the JobID before the first '.' is the latest job line's."""
    text, width, id_pos, want = case
    header = "|".join(f"h{i}" for i in range(width)).encode() + b"\n"
    data = header + (text if text.endswith(b"\n") else text + b"\n")
    found = kernels.scan(data, len(header), width, id_pos, want)
    jobs, steps, latest = [], [], None
    bad = -1
    for row, (start, line) in enumerate(_lines(data, len(header))):
        cells = line.split(b"|") if line else [b""] * width
        if len(cells) != width:
            bad = row
            break
        job_id = cells[id_pos]
        if b"." not in job_id:
            jobs.append((row, start, cells))
            latest = job_id
        else:
            steps.append((row, start, job_id, job_id.split(b".", 1)[0] == latest))
    assert found.bad_row == bad
    if bad >= 0:
        return
    assert found.job_row.tolist() == [j[0] for j in jobs]
    assert found.job_start.tolist() == [j[1] for j in jobs]
    assert found.step_row.tolist() == [s[0] for s in steps]
    assert found.step_line.tolist() == [s[1] for s in steps]
    assert found.step_ids.to_pylist() == [s[2].decode() for s in steps]
    assert found.step_after_job.tolist() == [s[3] for s in steps]
    assert len(found.cells) == want.max() + 1
    for field, k in enumerate(want.tolist()):
        if k >= 0:
            assert found.cells[k].to_pylist() == [j[2][field].decode() for j in jobs]
    again = kernels.gather(data, found.job_start, want)
    assert [a.to_pylist() for a in again] == [c.to_pylist() for c in found.cells]


def test_a_step_after_a_job_with_an_empty_jobid():
    """An empty line is a job line of empty cells: a step whose JobID starts with '.' is after
    it; a step line is no job line for the steps after it."""
    data = b"h0|h1\n\n.batch|x\n.x.y|x\n5|a\n5.0|b\n5.0.1|c\n6.0|d\n.x|e\n"
    found = kernels.scan(data, 6, 2, 0, np.array([0, 1]))
    assert found.step_row.tolist() == [1, 2, 4, 5, 6, 7]
    assert found.step_after_job.tolist() == [True, True, True, True, False, False]
    assert found.job_row.tolist() == [0, 3]
    assert [c.to_pylist() for c in found.cells] == [["", "5"], ["", "a"]]
    # the JobID in the second field: the empty line's JobID is empty all the same
    data = b"h0|h1\nx|5\n\nx|.batch\nx|5.0\n"
    found = kernels.scan(data, 6, 2, 1, np.array([0, 1]))
    assert found.job_row.tolist() == [0, 1] and found.step_row.tolist() == [2, 3]
    assert found.step_after_job.tolist() == [True, False]


def _scan_directly(data: bytes, begin: int, rows: int, room: int, id_room: int = 64) -> dict:
    """One call of ``kernels_ref.scan`` on two-field lines (JobID first) from ``begin``, with
    outputs of ``rows`` rows and ``room`` / ``id_room`` bytes."""
    out = dict(job_row=np.zeros(rows, np.int64), job_start=np.zeros(rows, np.int64),
               offsets=np.zeros((2, rows + 1), np.int32), cells=np.zeros((2, room), np.uint8),
               step_row=np.zeros(rows, np.int64), step_line=np.zeros(rows, np.int64),
               step_offsets=np.zeros(rows + 1, np.int32), step_ids=np.zeros(id_room, np.uint8),
               after=np.zeros(rows, np.uint8),
               state=np.array([begin, 0, 0, 0, -1, 0, -1, 0, 0, 0], np.int64))
    kernels_ref.scan(np.frombuffer(data, np.uint8), 2, 0, np.array([0, 1]), out["job_row"],
                     out["job_start"], out["offsets"], out["cells"], out["step_row"],
                     out["step_line"], out["step_offsets"], out["step_ids"], out["after"],
                     out["state"])
    return out


def test_a_text_ending_with_a_lone_carriage_return():
    """A lone \r is a line break too, the last one included (the kernel's docstring)."""
    out = _scan_directly(b"h|i\n1|a\r2.0|b\r", 4, 4, 16)
    assert out["state"].tolist() == [14, 2, 1, 1, 4, 1, -1, 1, 0, 0]
    assert out["job_start"][:1].tolist() == [4] and out["step_line"][:1].tolist() == [8]
    assert bytes(out["cells"][1, :1]) == b"a" and out["after"][:1].tolist() == [0]


def test_a_job_line_at_the_start_of_the_buffer():
    """The latest job's JobID may start at byte 0 (a text scanned from its first line)."""
    out = _scan_directly(b"1|a\n1.0|b\n", 0, 4, 16)
    assert out["state"].tolist() == [10, 2, 1, 1, 0, 1, -1, 1, 0, 0]
    assert out["after"][:1].tolist() == [1]


def test_scan_stops_where_an_output_is_full_and_says_where():
    """With room, one call reads every line; with too little room for the job cells or too few
    rows it stops at the line start it could not take, keeping the latest job's JobID."""
    data = b"h|i\n10|ab\n10.0|c\n11|de\n11.batch|f\n11.1|g\n"

    def run(rows: int, room: int, id_room: int = 64, data: bytes = data):
        return _scan_directly(data, 4, rows, room, id_room)

    # job lines at 4 and 17, steps at 10, 23 and 34
    out = run(8, 64)
    state = out["state"].tolist()
    assert state == [len(data), 5, 2, 3, 17, 2, -1, 1, 0, 0]
    assert out["job_row"][:2].tolist() == [0, 2] and out["job_start"][:2].tolist() == [4, 17]
    assert out["offsets"][:, :3].tolist() == [[0, 2, 4], [0, 2, 4]]
    assert bytes(out["cells"][0, :4]) == b"1011" and bytes(out["cells"][1, :4]) == b"abde"
    assert out["step_row"][:3].tolist() == [1, 3, 4]
    assert out["step_line"][:3].tolist() == [10, 23, 34]
    assert out["step_offsets"][:4].tolist() == [0, 4, 12, 16]
    assert bytes(out["step_ids"][:16]) == b"10.011.batch11.1"
    assert out["after"][:3].tolist() == [1, 1, 1]
    # 3 bytes a column: job 11's cells do not fit; the scan stops at its line
    assert run(8, 3)["state"].tolist() == [17, 2, 1, 1, 4, 2, -1, 0, 1, 0]
    assert run(8, 4)["state"].tolist() == state  # exactly full fits
    # room for 15 bytes of step ids: "10.0" and "11.batch" take 12, "11.1" does not fit
    assert run(8, 64, 15)["state"].tolist() == [34, 4, 2, 2, 17, 2, -1, 0, 0, 1]
    assert run(8, 64, 16)["state"].tolist() == state
    # one row of each output: the scan stops at the first line it has no row for
    assert run(1, 64)["state"].tolist() == [10, 1, 1, 0, 4, 2, -1, 0, 0, 0]
    # the step rows are full first: the job line after the step is not read
    assert run(1, 64, data=b"h|i\n9.0|x\n10|ab\n")["state"].tolist() == \
        [10, 1, 0, 1, -1, 0, -1, 0, 0, 0]


def test_a_line_with_another_field_count_stops_the_scan():
    data = b"h|i\n1|a\n2\n3|c\n"
    found = kernels.scan(data, 4, 2, 0, np.array([0, 1]))
    assert found.bad_row == 1
    data = b"h|i\n1|a\n2|b|c\n3|c\n"
    assert kernels.scan(data, 4, 2, 0, np.array([0, 1])).bad_row == 1


def test_an_empty_line_of_one_field():
    data = b"h\n1\n\n2.0\n"
    found = kernels.scan(data, 2, 1, 0, np.array([0]))
    assert found.bad_row == -1 and found.job_row.tolist() == [0, 1]
    assert found.job_start.tolist() == [2, 4] and found.cells[0].to_pylist() == ["1", ""]
    assert found.step_after_job.tolist() == [False]


def test_cells_measures_and_copies_only_up_to_last_field():
    """``cells`` stops after ``last_field``; a line at the very end of the buffer (no line
    break) ends there."""
    data = b"a|bb|ccc|dddd\r\nee|f||g\nh|ii|jjj"
    buf = np.frombuffer(data, np.uint8)
    starts = np.array([0, 15, 23], np.int64)
    want = np.array([1, -1, 0, -1], np.int64)  # field 0 -> column 1, field 2 -> column 0
    lengths = np.full((3, 2), -7, np.int64)
    kernels_ref.cells(buf, starts, want, 2, lengths, None, None, 0, 3, False)
    assert lengths.tolist() == [[3, 1], [0, 2], [3, 1]]
    offsets = np.empty((2, 4), np.int64)
    kernels_ref.running_offsets(lengths, offsets)
    assert offsets.tolist() == [[0, 3, 3, 6], [6, 7, 9, 10]]
    out = np.zeros(10, np.uint8)
    kernels_ref.cells(buf, starts, want, 2, lengths, offsets, out, 0, 3, True)
    assert bytes(out) == b"cccjjjaeeh"
    lengths[:] = -7
    kernels_ref.cells(buf, starts, want, 2, lengths, None, None, 1, 2, False)
    assert lengths.tolist() == [[-7, -7], [0, 2], [-7, -7]]  # only rows [first, last)
    short = np.frombuffer(b"x|yy", np.uint8)  # the buffer ends inside the line
    lengths = np.zeros((1, 2), np.int64)
    kernels_ref.cells(short, np.array([0]), np.array([0, 1]), 1, lengths, None, None, 0, 1,
                      False)
    assert lengths.tolist() == [[1, 2]]
    lengths = np.full((1, 2), -7, np.int64)  # field 1 is after last_field 0: not looked at
    kernels_ref.cells(short, np.array([0]), np.array([0, 1]), 0, lengths, None, None, 0, 1,
                      False)
    assert lengths.tolist() == [[1, -7]]


@pytest.mark.parametrize("text,value,status", [
    ("0", 0, 0), ("7", 7, 0), ("007", 7, 0), ("9" * 18, 10 ** 18 - 1, 0),
    ("1" + "0" * 18, 0, 2),          # 19 digits
    ("", 0, 1), ("/", 0, 2), (":", 0, 2), ("1:", 0, 2), ("/1", 0, 2), ("1 ", 0, 2),
    ("-1", 0, 2), ("+1", 0, 2), ("1.0", 0, 2),
])
def test_uints_by_hand(text, value, status):
    values, codes = kernels.uints(pa.array(["5", text, "6"], pa.string()))
    assert values.tolist() == [5, value, 6] and codes.tolist() == [0, status, 0]


def test_uints_writes_every_value():
    offsets = np.array([0, 1, 1, 3, 5], np.int32)  # "4", "", "x1", "2x"
    data = np.frombuffer(b"4x12x", np.uint8)
    values, status = np.full(4, 99, np.int64), np.full(4, 9, np.uint8)
    kernels_ref.uints(offsets, data, values, status)
    assert values.tolist() == [4, 0, 0, 0] and status.tolist() == [0, 1, 2, 2]
