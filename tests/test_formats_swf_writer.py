"""The SWF writer formats in row slices (issue 15): any slice size gives the same bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
