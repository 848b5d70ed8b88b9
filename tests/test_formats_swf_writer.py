"""The SWF writer formats in row slices (issue 15): any slice size gives the same bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.fileio import write_behind
from swftools.formats import swf
from swftools.formats.swf.writer import format_lines, iter_chunks
from swftools.metadata import TableMetadata
from tests.strategies import swf_jobs

GOLDEN = Path(__file__).parent / "golden" / "swf"


def _sliced(table, rows_per_slice, **layout) -> bytes:
    return b"".join(c.tobytes() for c in iter_chunks(table, rows_per_slice=rows_per_slice,
                                                      **layout))


@settings(max_examples=50, deadline=None)
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


@settings(max_examples=50, deadline=None)
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
