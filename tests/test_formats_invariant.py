"""The invariant (issue 24 item 7): whatever swftools writes, its own ``validate`` finds 0 errors
in it, and holds the jobs the conversion says it wrote.

Every writer of the registry (``swftools.formats.FORMATS`` and each format's ``INFO``) writes an
irregular job table as the issue-24 readers make them from real logs (``irregular_job_tables``:
rows out of submit order, ties, unknown values, array-style source ids, CPU jobs on a GPU site,
recorded run times that differ); every reader reads its own format's file back and every
writer writes that again. ``swftools.validate.validate`` (what ``swftools validate`` runs) reads
every format the registry reads, so every output is validated, exports (Batsim, Tiresias) too.

A writer may refuse a table it cannot carry (an ``InputError``/``UsageError``, nothing
written: NQSII has no marker for unknown values, Slurm needs every submit time): a refusal is no
output, so there is nothing to validate; the test checks nothing was left behind.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import formats
from swftools.errors import InputError, UsageError
from swftools.formats.formatinfo import skipped_jobs
from swftools.validate import validate
from tests.strategies import irregular_job_tables, irregular_site

SITE = irregular_site()
WRITERS = [f for f in formats.FORMATS if formats.info(f).write]
READERS = [f for f in formats.FORMATS if formats.info(f).read]


def _out(tmp: Path, fmt: str, tag: str) -> Path:
    """An output path of format ``fmt`` (a directory for the data package; a pod list's name
    pairs it with the node list written beside it)."""
    ext = next((e for e in formats.info(fmt).extensions if e.startswith(".")), "")
    return tmp / (f"{tag}_pod_list_{fmt}{ext}" if fmt == "alibaba" else f"{tag}-{fmt}{ext}")


def write_and_validate(table: pa.Table, fmt: str, path: Path) -> pa.Table | None:
    """Write ``table`` as ``fmt`` to ``path`` and assert ``validate`` finds 0 errors in it and
    as many jobs as written; returns what the format's reader gives back (None: the writer
    refused the table, and wrote nothing)."""
    try:
        losses = formats.write(table, path, fmt, site=SITE)
    except (InputError, UsageError):
        assert not path.exists() and not list(path.parent.glob(f"{path.name}*")), fmt
        return None
    written = table.num_rows - skipped_jobs(losses)
    with warnings.catch_warnings():  # the readers' assumed-zone warning: the table is UTC
        warnings.simplefilter("ignore")
        # an NQSII log names no site (validate would take AAIC's); the others are validated
        # as they stand: the site's GPU node size says nothing of a CPU log read back
        report = validate(path, site=SITE if fmt == "nqsii" else None, fmt=fmt,
                          allow_empty=written == 0)
        errors = [f.render() for f in report.findings if f.severity == "error"]
        assert not errors, (fmt, errors[:5], losses)
        assert report.rows == written, (fmt, report.rows, written, losses)
        return formats.read(path, fmt, site=SITE, allow_empty=True)


def _valid(table: pa.Table) -> pa.Table:
    """The drawn table validates itself (else the invariant says nothing about it)."""
    report = validate(table, site=SITE)
    assert not report.errors, [f.render() for f in report.findings if f.severity == "error"][:5]
    return table


@given(table=irregular_job_tables())
def test_every_writer_writes_what_validate_accepts(table):
    _valid(table)
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in WRITERS:
            write_and_validate(table, fmt, _out(Path(tmp), fmt, "t"))


def _read_then_every_writer(table: pa.Table, reader: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        back = write_and_validate(table, reader, _out(Path(tmp), reader, "a"))
        if back is None:
            return
        for fmt in WRITERS:
            write_and_validate(back, fmt, _out(Path(tmp), fmt, f"b-{reader}"))


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS)
@settings(max_examples=6)
@given(data=st.data())
def test_each_reader_then_every_writer(reader, data):
    """A table read by any reader (from what its format's writer wrote) and written by every
    writer: what comes out validates. Every reader x writer pair, not left to the draw (this
    also holds what test_every_reader_then_every_writer checked with one reader drawn per
    example: 30 tables over all readers, where this draws 6 for each)."""
    complete = True if reader == "nqsii" else None  # NQSII refuses unknown values
    _read_then_every_writer(_valid(data.draw(irregular_job_tables(complete=complete))), reader)


def test_the_registry_is_covered():
    assert set(READERS) | set(WRITERS) == set(formats.FORMATS)
    assert len(WRITERS) >= 8 and len(READERS) >= 8
