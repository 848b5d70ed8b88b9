"""Slurm sacct --parsable2: generated and golden files read right, round trips, located errors,
the CLI end to end."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from swftools import formats
from swftools.cli import app
from swftools.errors import InputError
from swftools.formats import slurm
from swftools.formats.slurm.schema import states
from swftools.metadata import TableMetadata
from swftools.resources import load_json

from .strategies import sacct_files, slurm_job_tables

GOLDEN = Path(__file__).resolve().parent / "golden" / "slurm"
runner = CliRunner()
FS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.function_scoped_fixture])
CARRIED = sorted(slurm.INFO.carries)


def _write(tmp_path: Path, text: str, name: str = "jobs.sacct") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@FS
@given(case=sacct_files())
def test_generated_sacct_reads_as_expected(tmp_path, case):
    text, expected = case
    path = _write(tmp_path, text)
    if not expected:
        with pytest.raises(InputError, match="no finished jobs"):
            slurm.read(path, tz="Asia/Tokyo")
        return
    table = slurm.read(path, tz="Asia/Tokyo")
    got = {r["job_id"]: r for r in table.to_pylist()}
    assert sorted(got) == sorted(e["job_id"] for e in expected)  # steps and unfinished: no rows
    for e in expected:
        row = got[e["job_id"]]
        assert {k: row[k] for k in e} == e
    meta = TableMetadata.from_table(table)
    assert (meta.source_format, meta.time_zone, meta.processor_unit) == ("slurm", "Asia/Tokyo", "gpu")


@FS
@given(table=slurm_job_tables())
def test_write_read_round_trip(tmp_path, table):
    path = tmp_path / "rt.sacct"
    losses = slurm.write(table, path, force=True)
    back = slurm.read(path)
    assert back.select(CARRIED).equals(table.select(CARRIED)), losses
    assert losses == ["eligible time written as the submit time (the job table has none)"]


@FS
@given(table=slurm_job_tables())
def test_round_trip_in_a_site_time_zone(tmp_path, table):
    path = tmp_path / "rt.sacct"
    slurm.write(table, path, force=True, tz="Asia/Tokyo")
    assert slurm.read(path, tz="Asia/Tokyo").select(CARRIED).equals(table.select(CARRIED))
    shifted = slurm.read(path, tz="UTC")  # the same text read as UTC: 9 hours later
    assert pa.compute.subtract(shifted.column("submit_time"),
                               table.column("submit_time")).to_pylist() == [9 * 3600] * table.num_rows


def test_golden_awkward_cases():
    expected = json.loads((GOLDEN / "awkward.expected.json").read_text())
    table = slurm.read(GOLDEN / "awkward.sacct", tz=expected["time_zone"])
    columns = list(expected["jobs"][0])
    assert table.select(columns).to_pylist() == expected["jobs"]
    meta = TableMetadata.from_table(table)
    assert meta.extra["slurm"]["unfinished"] == expected["unfinished"]
    assert meta.extra["slurm"]["steps"] == 4


def test_gzip_and_crlf_and_content_detection(tmp_path):
    text = (GOLDEN / "awkward.sacct").read_text()
    plain = slurm.read(GOLDEN / "awkward.sacct")
    packed = tmp_path / "export.txt"
    packed.write_bytes(gzip.compress(text.replace("\n", "\r\n").encode()))
    assert formats.detect_format(packed) == "slurm"
    assert slurm.read(packed).equals(plain)


def test_state_table_covers_the_issue_and_the_docs():
    table = states()
    for name in ("COMPLETED", "FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                 "REQUEUED", "CANCELLED", "RUNNING", "PENDING"):
        assert name in table
    readme = (Path(__file__).resolve().parent.parent / "docs" / "formats" / "slurm-pbs.md"
              ).read_text(encoding="utf-8")
    for name, rule in table.items():
        if rule.finished:
            assert f"| `{name}` | {rule.termcode} | {rule.swf_status} |" in readme, name
    assert load_json("formats/slurm-sacct.schema.json")["fields"][0]["name"] == "JobID"


HEADER = ("JobID|JobIDRaw|User|Group|Partition|Submit|Eligible|Start|End|Elapsed|ElapsedRaw|"
          "Timelimit|State|ExitCode|NNodes|NCPUS|ReqTRES|AllocTRES|NodeList")
GOOD = ("5|5|u|g|gpu|2023-01-01T00:00:00|2023-01-01T00:00:00|2023-01-01T00:01:00|"
        "2023-01-01T00:02:00|00:01:00|60|01:00:00|COMPLETED|0:0|1|4|cpu=4,gres/gpu=1,node=1|"
        "cpu=4,gres/gpu=1,node=1|gpu01")


def _line(**changes: str) -> str:
    cells = dict(zip(HEADER.split("|"), GOOD.split("|")))
    cells.update(changes)
    return "|".join(cells.values())


@pytest.mark.parametrize("bad,line,field,value", [
    (GOOD + "|extra", 3, "line", GOOD + "|extra"),
    ("|" * 18, 3, "JobID", ""),  # a line of empty cells is not a blank line
    (_line(Submit="2023-13-01T00:00:00"), 3, "Submit", "2023-13-01T00:00:00"),
    (_line(Submit="Unknown"), 3, "Submit", "Unknown"),
    (_line(Start="yesterday"), 3, "Start", "yesterday"),
    (_line(ReqTRES="cpu=4,gres/gpu=x"), 3, "ReqTRES", "cpu=4,gres/gpu=x"),
    (_line(Timelimit="1-25:00:00"), 3, "Timelimit", "1-25:00:00"),
    (_line(State="EXPLODED"), 3, "State", "EXPLODED"),
    (_line(End="2022-12-31T00:00:00"), 3, "End", "2022-12-31T00:00:00"),
    (_line(JobID="6_1", JobIDRaw="x"), 3, "JobIDRaw", "x"),
    (_line(JobID="6", JobIDRaw="6") + "\n6.batch|6.batch||||||||||||||||", 4, "line", None),
    (_line(JobID="9.batch", JobIDRaw="9.batch"), 3, "JobID", "9.batch"),
    (_line(JobID="6", JobIDRaw="6", Timelimit="soon"), 3, "Timelimit", "soon"),
    (_line(NNodes="two"), 3, "NNodes", "two"),
    (_line(ExitCode="0"), 3, "ExitCode", "0"),
    (_line(NodeList="gpu[01-"), 3, "NodeList", "gpu[01-"),
])
def test_bad_input_is_located(tmp_path, bad, line, field, value):
    path = _write(tmp_path, f"{HEADER}\n{GOOD}\n{bad}\n")
    with pytest.raises(InputError) as info:
        slurm.read(path)
    err = info.value
    assert err.line == line, str(err)
    assert field in (err.field or ""), str(err)
    if value is not None:
        assert err.value == value, str(err)
    assert err.expected, str(err)


def test_array_ids_without_jobidraw_are_numbered(tmp_path):
    """Issue 24: array tasks and het components without JobIDRaw are jobs, numbered in submit
    order (formats.jobids), their ids kept as source_job_id (was: refused)."""
    header = HEADER.replace("JobIDRaw|", "")
    body = GOOD.replace("5|5|", "5_1|", 1)
    het = body.replace("5_1|", "5+1|", 1).replace("2023-01-01T00:00:00", "2022-12-31T23:00:00", 2)
    table = slurm.read(_write(tmp_path, f"{header}\n{body}\n{het}\n"))
    assert table.column("job_id").to_pylist() == [2, 1]
    assert table.column("source_job_id").to_pylist() == ["5_1", "5+1"]


def test_missing_column_and_empty(tmp_path):
    with pytest.raises(InputError, match="missing sacct column.*State"):
        slurm.read(_write(tmp_path, HEADER.replace("|State", "|Status") + "\n"))
    with pytest.raises(InputError, match="no job rows"):
        slurm.read(_write(tmp_path, HEADER + "\n"))
    assert slurm.read(_write(tmp_path, HEADER + "\n"), allow_empty=True).num_rows == 0


def test_processor_unit_without_gpu_tres(tmp_path):
    body = _line(ReqTRES="cpu=4,mem=4G,node=1", AllocTRES="cpu=4,mem=4G,node=1", NCPUS="4")
    table = slurm.read(_write(tmp_path, f"{HEADER}\n{body}\n"))
    assert table.column("gpus").to_pylist() == [4]
    assert table.column("requested_memory_kb").to_pylist() == [1024 ** 2]
    assert TableMetadata.from_table(table).unit == "processor"


def test_cli_convert_to_swf_and_package_then_validate(tmp_path):
    src = GOLDEN / "awkward.sacct"
    swf = tmp_path / "out.swf"
    result = runner.invoke(app, ["convert", str(src), "--out", str(swf), "--tz", "Asia/Tokyo"])
    assert result.exit_code == 0, result.output
    assert "wrote 10 of 10 jobs" in result.output and "(slurm)" in result.output
    assert "; TimeZoneString: Asia/Tokyo" in swf.read_text()
    pkg = tmp_path / "pkg"
    result = runner.invoke(app, ["convert", str(src), "--out", str(pkg), "--to", "package"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["validate", str(pkg)])
    assert result.exit_code == 0, result.output
    back = tmp_path / "back.sacct"
    result = runner.invoke(app, ["convert", str(pkg), "--out", str(back), "--to", "slurm"])
    assert result.exit_code == 0, result.output
    assert slurm.read(back).select(CARRIED).equals(slurm.read(src, tz="UTC").select(CARRIED))


def test_cli_bad_input_exits_1_and_writes_nothing(tmp_path):
    bad = _write(tmp_path, f"{HEADER}\n{_line(State='EXPLODED')}\n", "bad.sacct")
    out = tmp_path / "out.swf"
    result = runner.invoke(app, ["convert", str(bad), "--out", str(out)])
    assert result.exit_code == 1
    assert f"{bad}:2: field 'State' (state): 'EXPLODED' is not a valid state" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.sacct"]


def test_cli_tz_is_checked(tmp_path):
    src = GOLDEN / "awkward.sacct"
    result = runner.invoke(app, ["convert", str(src), "--out", str(tmp_path / "o.swf"),
                                 "--tz", "Mars/Olympus"])
    assert result.exit_code == 2 and "unknown time zone" in result.output
    sample = Path(__file__).resolve().parent.parent / "samples" / "aaic-sample.csv.gz"
    result = runner.invoke(app, ["convert", str(sample), "--out", str(tmp_path / "o.swf"),
                                 "--tz", "UTC"])
    assert result.exit_code == 2 and "--tz applies to slurm and pbs" in result.output


def test_unfinished_jobs_are_counted_not_read(tmp_path):
    pending = _line(JobID="6_[1-9%2]", JobIDRaw="6", Start="Unknown", End="Unknown",
                    State="PENDING", NNodes="2-4", AllocTRES="", NodeList="None assigned")
    running = _line(JobID="7", JobIDRaw="7", End="Unknown", State="RUNNING")
    table = slurm.read(_write(tmp_path, f"{HEADER}\n{GOOD}\n{pending}\n{running}\n"))
    assert table.column("job_id").to_pylist() == [5]
    assert TableMetadata.from_table(table).extra["slurm"]["unfinished"] == {"PENDING": 1,
                                                                              "RUNNING": 1}
    bad_state = _line(JobID="8", JobIDRaw="8", State="PENDIN")
    with pytest.raises(InputError, match="PENDIN"):
        slurm.read(_write(tmp_path, f"{HEADER}\n{GOOD}\n{bad_state}\n"))


def test_no_final_line_break_and_steps_away_from_their_job(tmp_path):
    step = _line(JobID="5.batch", JobIDRaw="5.batch", User="", Group="", Partition="",
                 Timelimit="", ReqTRES="")
    other = _line(JobID="6", JobIDRaw="6")
    plain = slurm.read(_write(tmp_path, f"{HEADER}\n{GOOD}\n{step}\n{other}\n", "a.sacct"))
    moved = slurm.read(_write(tmp_path, f"{HEADER}\n{step}\n{other}\n{GOOD}", "b.sacct"))
    assert moved.num_rows == 2
    assert moved.sort_by("job_id").select(CARRIED).equals(plain.sort_by("job_id").select(CARRIED))
    assert TableMetadata.from_table(moved).extra["slurm"]["steps"] == 1
    with pytest.raises(InputError, match="no job line") as info:
        slurm.read(_write(tmp_path, f"{HEADER}\n{other}\n{step}", "c.sacct"))
    assert (info.value.line, info.value.value) == (3, "5.batch")


def test_bad_utf8_names_the_column(tmp_path):
    path = tmp_path / "bad.sacct"
    path.write_bytes(f"{HEADER}\n{GOOD}\n".replace("|u|g|", "|u\udcff|g|").encode(
        "utf-8", "surrogateescape"))
    with pytest.raises(InputError, match="invalid UTF-8 in column #2 \\('User'\\)"):
        slurm.read(path)


def test_read_in_parts_is_the_same(tmp_path, monkeypatch):
    """Large files are scanned in one part per core (cells then come in chunks): forced on a
    small file, with outputs that must grow, the table and the located errors are the same."""
    from swftools.formats.slurm import kernels

    src = GOLDEN / "awkward.sacct"
    whole = slurm.read(src, tz="Asia/Tokyo")
    bad = _write(tmp_path, f"{HEADER}\n{GOOD}\n{_line(JobID='6', JobIDRaw='6')}\n"
                           f"{_line(JobID='7', JobIDRaw='7', NNodes='two')}\n")
    with pytest.raises(InputError) as serial:
        slurm.read(bad)
    monkeypatch.setattr(kernels, "_MIN_PART_BYTES", 1)
    monkeypatch.setattr(kernels, "_MIN_GUESS", 1)
    monkeypatch.setattr(kernels, "_cell_capacity", lambda *_: (1, 1))
    monkeypatch.setattr(kernels, "workers", lambda: 3)
    parts = slurm.read(src, tz="Asia/Tokyo")
    assert parts.equals(whole) and parts.schema.metadata == whole.schema.metadata
    with pytest.raises(InputError) as parted:
        slurm.read(bad)
    assert str(parted.value) == str(serial.value) and parted.value.line == 4


@pytest.mark.parametrize("changes", [
    {"Submit": "x", "NCPUS": "y", "NodeList": "gpu[01-"},
    {"ReqTRES": "cpu=x", "AllocTRES": "cpu=y", "NNodes": "z"},
    {"Timelimit": "1-25:00:00", "Start": "Unknown", "ExitCode": "0"},
    {"AllocTRES": "cpu=1,cpu=1", "NodeList": "node[4-1]", "NNodes": ""},
])
def test_checks_side_by_side_report_the_first_error(tmp_path, monkeypatch, changes):
    """From many job lines on, independent column checks run in threads: with several bad
    cells the error is the one the checks made one by one report."""
    from swftools.formats.slurm import reader

    path = _write(tmp_path, f"{HEADER}\n{GOOD}\n{_line(JobID='6', JobIDRaw='6', **changes)}\n")
    with pytest.raises(InputError) as serial:
        slurm.read(path)
    monkeypatch.setattr(reader, "_THREADED_ROWS", 0)
    monkeypatch.setattr(reader.kernels, "workers", lambda: 2)
    with pytest.raises(InputError) as threaded:
        slurm.read(path)
    assert str(threaded.value) == str(serial.value) and threaded.value.line == 3


@pytest.mark.parametrize("threaded", [False, True])
def test_bad_step_id_is_located_among_many_steps(tmp_path, monkeypatch, threaded):
    from swftools.formats.slurm import reader

    if threaded:
        monkeypatch.setattr(reader, "_THREADED_ROWS", 0)
        monkeypatch.setattr(reader.kernels, "workers", lambda: 2)
    steps = [_line(JobID=f"5.{s}", JobIDRaw=f"5.{s}") for s in ("batch", "extern", "0", "b@d", "1")]
    path = _write(tmp_path, "\n".join([HEADER, GOOD, *steps, _line(JobID="6.x y")]) + "\n")
    with pytest.raises(InputError) as info:
        slurm.read(path)
    assert (info.value.line, info.value.value) == (6, "5.b@d")


def test_skipping_bad_lines_threaded_and_serial_agree(tmp_path, monkeypatch):
    """``--skip-bad-lines`` with the checks forced into threads (and the scan into parts): the
    same table, the same skipped-line report and, as one by one, one collecting pass plus the
    clean one (noted errors live in a context variable that pool threads do not see)."""
    from swftools.formats.slurm import kernels, reader
    from swftools.formats.skipping import skipped_lines

    lines = [HEADER, GOOD, _line(JobID="5.batch", JobIDRaw="5.batch"),
             _line(JobID="6", JobIDRaw="6", Submit="x"),
             _line(JobID="7", JobIDRaw="7", ExitCode="0"),
             _line(JobID="8", JobIDRaw="8", NCPUS="y"), _line(JobID="5.b@d", JobIDRaw="5.b@d"),
             _line(JobID="9", JobIDRaw="9", NodeList="gpu[01-"), _line(JobID="10", JobIDRaw="10")]
    path = _write(tmp_path, "\n".join(lines) + "\n")
    passes = []
    real = reader._read_data
    monkeypatch.setattr(reader, "_read_data", lambda *a, **k: passes.append(1) or real(*a, **k))

    def read() -> tuple[pa.Table, list, int]:
        passes.clear()
        table = slurm.read(path, tz="UTC", skip_bad_lines=True)
        return table, skipped_lines(table), len(passes)

    serial, serial_report, serial_passes = read()
    assert serial.column("job_id").to_pylist() == [5, 10]
    assert [(e["line"], e["value"]) for e in serial_report] == [
        (4, "x"), (5, "0"), (6, "y"), (7, "5.b@d"), (8, "gpu[01-")]
    assert serial_passes == 2
    monkeypatch.setattr(reader, "_THREADED_ROWS", 0)
    monkeypatch.setattr(kernels, "_MIN_PART_BYTES", 1)
    monkeypatch.setattr(kernels, "workers", lambda: 2)
    threaded, threaded_report, threaded_passes = read()
    assert threaded.equals(serial) and threaded_report == serial_report
    assert threaded_passes == serial_passes
