"""Every format that reads and writes: read(write(t)) equals t on every column the format
declares it carries, and the loss report names exactly the rest (``swftools.formats.formatinfo``).

Driven by the registry: a format added to ``swftools.formats`` is picked up here from its
``INFO`` descriptor; one without a descriptor fails (it does not skip).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swftools import formats
from swftools import table as jt
from swftools.errors import UsageError
from swftools.formats.formatinfo import TABLE_KINDS, named_columns, skipped_jobs
from tests.strategies import aaic_jobs, swf_jobs, with_cpus_and_recorded_walltime

STRATEGIES = {"gpu": aaic_jobs, "swf": swf_jobs}


def _cases() -> list[tuple[str, str | None]]:
    cases = []
    for fmt in formats.FORMATS:
        try:
            info = formats.info(fmt)
        except (UsageError, ImportError):
            cases.append((fmt, None))  # fails in the test below, loudly
            continue
        if info.read and info.write:
            cases += [(fmt, kind) for kind in info.tables]
    return cases


def test_every_table_kind_has_a_strategy():
    assert set(STRATEGIES) == set(TABLE_KINDS)


@pytest.mark.parametrize("fmt", formats.FORMATS)
def test_every_registered_format_declares_its_descriptor(fmt):
    info = formats.info(fmt)
    assert info.name == fmt
    assert info.read or info.write
    assert info.extensions, fmt
    assert info.carries <= set(jt.column_names()), sorted(info.carries - set(jt.column_names()))
    assert "job_id" in info.carries or not (info.read and info.write)


def _out_path(tmp: Path, fmt: str) -> Path:
    ext = next((e for e in formats.info(fmt).extensions if e.startswith(".")), "")
    return tmp / f"out{ext}"


def _by_id(table: pa.Table) -> pa.Table:
    return table.sort_by("job_id")


def check_round_trip(fmt: str, table: pa.Table) -> None:
    """The property for one format and one table (also used by the per-format tests)."""
    info = formats.info(fmt)
    columns = jt.column_names()
    with tempfile.TemporaryDirectory() as tmp:
        path = _out_path(Path(tmp), fmt)
        losses = formats.write(table, path, fmt)
        back = formats.read(path, fmt, allow_empty=True)
    ids = back.column("job_id").to_pylist()
    assert len(ids) == len(set(ids))
    assert set(ids) <= set(table.column("job_id").to_pylist())
    assert skipped_jobs(losses) == table.num_rows - back.num_rows, losses
    kept = _by_id(table.filter(pc.is_in(table.column("job_id"), pa.array(ids, pa.int64()))))
    back = _by_id(jt.conform(back))
    named = named_columns(losses, columns)
    for c in columns:
        if c in info.carries:
            should_name = kept.column(c).to_pylist() != back.column(c).to_pylist()
        else:
            should_name = kept.column(c).null_count < kept.num_rows
        assert (c in named) == should_name, (fmt, c, "named" if c in named else "not named", losses)


@pytest.mark.parametrize("fmt,kind", _cases())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_read_of_write_keeps_what_the_format_carries(fmt, kind, data):
    if kind is None:
        pytest.fail(f"format {fmt!r} declares no INFO descriptor (swftools.formats.formatinfo)")
    check_round_trip(fmt, data.draw(STRATEGIES[kind](max_size=15)))


@pytest.mark.parametrize("fmt,kind", [c for c in _cases() if c[1] is not None])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_cpus_and_the_recorded_walltime_are_kept_or_named(fmt, kind, data):
    """Tables with processors beside GPUs (CPU-only jobs among them) and a log's own run time:
    every format gives them back or names them in its loss report."""
    table = data.draw(with_cpus_and_recorded_walltime(STRATEGIES[kind](max_size=10)))
    check_round_trip(fmt, table)


def test_the_check_catches_a_silent_loss(monkeypatch):
    """A format that drops a column it claims to carry, or says nothing about one it drops, is
    caught (the property is not vacuous)."""
    from swftools.formats import batsim

    table = jt.from_columns({"job_id": [1, 2], "submit_time": [10, 20], "walltime_s": [5, 6],
                             "gpus": [1, 2], "termcode": [0, 3]})
    real = batsim.write
    monkeypatch.setattr(batsim, "write", lambda *a, **k: [line for line in real(*a, **k)
                                                          if "termcode" not in line])
    with pytest.raises(AssertionError, match="termcode"):
        check_round_trip("batsim", table)


def test_convert_list_formats_shows_every_registered_format():
    from typer.testing import CliRunner

    from swftools.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["convert", "--list-formats"])
    assert result.exit_code == 0, result.output
    listed = [line.split()[0] for line in result.output.splitlines() if line and not line[0].isspace()]
    assert listed == list(formats.FORMATS)
    assert "columns not carried: none" in result.output  # the data package carries everything
    result = runner.invoke(app, ["convert", "--list-formats", "--json"])
    assert result.exit_code == 0, result.output
    import json

    assert json.loads(result.output)["formats"] == [i.as_dict() for i in formats.formats_info()]
    result = runner.invoke(app, ["convert"])
    assert result.exit_code == 2 and "missing argument SRC" in result.output


@pytest.mark.parametrize("fmt", ["slurm", "pbs"])
def test_unknown_wait_reads_back_as_start_minus_submit(tmp_path, fmt):
    """Docs: ``wait_s = start - submit``. Slurm and PBS logs have no wait field: a null
    wait_s with both instants known comes back as their difference, a recorded wait_s that
    agrees as itself, none where the job never started, 0 for a start at the submission
    (expected values written out by hand)."""
    import importlib

    from swftools import table as jt

    module = importlib.import_module(f"swftools.formats.{fmt}")
    table = jt.from_columns({
        "job_id": [1, 2, 3, 4, 5],
        "submit_time": [1_000_000, 1_000_000, 1_002_000, 1_002_500, 1_003_000],
        "start_time": [1_000_100, 1_000_500, None, 1_002_600, 1_003_000],
        "finish_time": [1_000_200, 1_000_600, None, 1_002_700, 1_003_050],
        "wait_s": [None, None, None, 100, None], "user": ["u"] * 5, "group": ["g"] * 5,
        "nodes": [1] * 5, "gpus": [1] * 5, "cpus": [1] * 5, "requested_walltime_s": [3600] * 5})
    path = tmp_path / "t.log"
    module.write(table, path, tz="UTC")
    assert module.read(path, tz="UTC").column("wait_s").to_pylist() == [100, 500, None, 100, 0]
