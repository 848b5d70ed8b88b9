"""``--skip-bad-lines`` (``swftools.formats.skipping``): bad lines left out, each reported with its
file line, the rest read as if the bad lines were not there."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from swftools.cli import app
from swftools.errors import InputError
from swftools.formats import pbs, slurm
from swftools.formats.skipping import read_skipping, skipped_lines

from .strategies import pbs_logs, sacct_files

runner = CliRunner()
FS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.function_scoped_fixture])
BAD_SACCT = ["7|7|u", "x|y|z|" * 7, "\x01|2|u", "8|8|u|g|p|2023-02-30T00:00:00" + "|" * 13]


@FS
@given(case=sacct_files(), where=st.integers(0, 10 ** 6), bad=st.sampled_from(BAD_SACCT))
def test_a_bad_sacct_line_is_skipped_and_reported(tmp_path, case, where, bad):
    text, expected = case
    lines = text.rstrip("\n").split("\n")
    at = 1 + where % len(lines)  # after the header
    (tmp_path / "clean.sacct").write_text(text)
    (tmp_path / "dirty.sacct").write_text("\n".join(lines[:at] + [bad] + lines[at:]) + "\n")
    if not expected:
        return
    clean = slurm.read(tmp_path / "clean.sacct", tz="Asia/Tokyo")
    dirty = slurm.read(tmp_path / "dirty.sacct", tz="Asia/Tokyo", skip_bad_lines=True)
    assert dirty.select(clean.column_names).equals(clean)
    report = skipped_lines(dirty)
    assert [entry["line"] for entry in report] == [at + 1]
    with pytest.raises(InputError) as info:
        slurm.read(tmp_path / "dirty.sacct", tz="Asia/Tokyo")
    assert info.value.line == at + 1


@FS
@given(case=pbs_logs(), where=st.integers(0, 10 ** 6),
       bad=st.sampled_from(["garbage", "03/01/2023 10:00:00;E;99999998.s;start=x end=4",
                            "03/01/2023 10:00:00;E;99999999.s;start=5 end=4"]))
def test_a_bad_pbs_line_is_skipped_and_reported(tmp_path, case, where, bad):
    text, expected = case
    lines = text.rstrip("\n").split("\n")
    at = where % (len(lines) + 1)
    (tmp_path / "clean.log").write_text(text)
    (tmp_path / "dirty.log").write_text("\n".join(lines[:at] + [bad] + lines[at:]) + "\n")
    clean = pbs.read(tmp_path / "clean.log")
    dirty = pbs.read(tmp_path / "dirty.log", skip_bad_lines=True)
    assert dirty.select(clean.column_names).equals(clean)
    assert [entry["line"] for entry in skipped_lines(dirty)] == [at + 1]


def test_header_errors_and_limits_are_not_skipped():
    def parse(data: bytes):
        raise InputError("f", "bad header", line=1)

    with pytest.raises(InputError, match="bad header"):
        read_skipping(parse, b"h\nx\n", "f")

    def always_bad(data: bytes):  # every data line is bad: the first left is reported
        line = next(i for i, text in enumerate(data.split(b"\n"), 1) if i > 1 and text)
        raise InputError("f", "bad", line=line)

    with pytest.raises(InputError, match="more than 3 bad lines"):
        read_skipping(always_bad, b"h\n" + b"x\n" * 10, "f", max_skipped=3)


SACCT = ("JobID|JobIDRaw|Submit|Start|End|State\n"
         "1|1|2023-01-01T00:00:00|2023-01-01T00:00:01|2023-01-01T00:00:02|COMPLETED\n"
         "2|2|2023-01-01T00:00:00|2023-01-01T00:00:05|2023-01-01T00:00:02|COMPLETED\n"
         "3|3|2023-01-01T00:00:00|2023-01-01T00:00:01|2023-01-01T00:00:02|BOOM\n"
         "4|4|2023-01-01T00:00:00|2023-01-01T00:00:01|2023-01-01T00:00:02|COMPLETED|x\n"
         "5|5|2023-01-01T00:00:00|2023-01-01T00:00:01|2023-01-01T00:00:02|FAILED\n")


def test_cli_reports_every_skipped_line_and_the_count(tmp_path):
    src = tmp_path / "x.sacct"
    src.write_text(SACCT)
    out = tmp_path / "x.swf"
    result = runner.invoke(app, ["convert", str(src), "--out", str(out)])
    assert result.exit_code == 1 and not out.exists()
    result = runner.invoke(app, ["convert", str(src), "--out", str(out), "--skip-bad-lines"])
    assert result.exit_code == 0, result.output
    assert f"skipped 3 bad lines of {src}" in result.output
    for line, what in ((3, "is before the start time"), (4, "'BOOM' is not a valid state"),
                       (5, "7 fields, the header names 6")):
        assert f"{src}:{line}: " in result.output and what in result.output
    assert "wrote 2 of 2 jobs" in result.output
    result = runner.invoke(app, ["convert", str(src), "--out", str(tmp_path / "y.swf"),
                                 "--skip-bad-lines", "--json"])
    report = json.loads(result.stdout)
    assert [e["line"] for e in report["skipped_lines"]] == [3, 4, 5] and report["jobs"] == 2


def test_cli_skip_bad_lines_is_for_slurm_and_pbs(tmp_path):
    from pathlib import Path

    sample = Path(__file__).resolve().parent.parent / "samples" / "aaic-sample.csv.gz"
    result = runner.invoke(app, ["convert", str(sample), "--out", str(tmp_path / "o.swf"),
                                 "--skip-bad-lines"])
    assert result.exit_code == 2 and "--skip-bad-lines applies to slurm and pbs" in result.output


# Bad lines of each kind a check refuses, with job ids no generated job has.
def _sacct_bad(k: int, kind: str) -> str:
    cells = {"JobID": str(20_000_000 + k), "JobIDRaw": str(20_000_000 + k), "User": "u",
             "Group": "g", "Partition": "p", "Submit": "2017-07-14T09:00:00",
             "Eligible": "2017-07-14T09:00:00", "Start": "2017-07-14T09:00:00",
             "End": "2017-07-14T10:00:00", "Elapsed": "01:00:00", "ElapsedRaw": "3600",
             "Timelimit": "UNLIMITED", "State": "COMPLETED", "ExitCode": "0:0", "NNodes": "1",
             "NCPUS": "4", "ReqTRES": "cpu=4,node=1", "AllocTRES": "cpu=4,node=1",
             "NodeList": "n1"}
    if kind == "width":
        return "7|7|u"
    change = {"state": ("State", "BOOM"), "time": ("Submit", "2023-02-30T00:00:00"),
              "late": ("End", "2017-07-14T08:00:00"), "name": ("User", "u\x01"),
              "id": ("JobID", "x!y"), "nodes": ("NNodes", "abc"),
              "tres": ("ReqTRES", "cpu=x")}[kind]
    cells[change[0]] = change[1]
    return "|".join(cells.values())


def _pbs_bad(k: int, kind: str) -> str:
    job = f"{20_000_000 + k}.s"
    return {"garbage": "garbage here", "stamp": f"13/45/2017 10:00:00;E;{job};end=5",
            "epoch": f"07/14/2017 10:00:00;E;{job};start=x end=4",
            "late": f"07/14/2017 10:00:00;E;{job};start=5 end=4",
            "name": f"07/14/2017 10:00:00;E;{job};user=a\x01b start=4 end=5"}[kind]


def _insert(lines: list[str], draws: list[tuple[int, str]], first: int) -> tuple[list[str], list[int]]:
    """``lines`` with each drawn bad line inserted at a position from ``first`` on; the file
    lines (1-based) the bad lines end up on."""
    out = [(line, False) for line in lines]
    for where, bad in draws:
        out.insert(first + where % (len(out) - first + 1), (bad, True))
    return [line for line, _ in out], [i for i, (_, bad) in enumerate(out, 1) if bad]


def _counting(monkeypatch, module) -> list[int]:
    calls: list[int] = []
    real = module._read_data

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "_read_data", counted)
    return calls


SACCT_KINDS = ["width", "state", "time", "late", "name", "id", "nodes", "tres"]


@FS
@given(case=sacct_files(), draws=st.lists(st.tuples(st.integers(0, 10 ** 6),
                                                      st.sampled_from(SACCT_KINDS)),
                                            min_size=1, max_size=8))
def test_many_bad_sacct_lines_are_found_in_a_few_passes(tmp_path, monkeypatch, case, draws):
    from swftools.formats.slurm import reader

    text, expected = case
    if not expected:
        return
    lines = text.rstrip("\n").split("\n")
    bad = [(where, _sacct_bad(k, kind)) for k, (where, kind) in enumerate(draws)]
    dirty, bad_at = _insert(lines, bad, 1)
    (tmp_path / "clean.sacct").write_text(text)
    (tmp_path / "dirty.sacct").write_text("\n".join(dirty) + "\n")
    clean = slurm.read(tmp_path / "clean.sacct", tz="Asia/Tokyo")
    calls = _counting(monkeypatch, reader)
    table = slurm.read(tmp_path / "dirty.sacct", tz="Asia/Tokyo", skip_bad_lines=True)
    assert table.select(clean.column_names).equals(clean)
    report = skipped_lines(table)
    assert [entry["line"] for entry in report] == bad_at
    for entry in report:  # the reported value is on the reported line
        assert entry["value"] is None or entry["value"] in dirty[entry["line"] - 1]
    assert len(calls) <= 3  # a wrong field count stops a pass; then the rest; then clean


@FS
@given(case=pbs_logs(), draws=st.lists(st.tuples(
    st.integers(0, 10 ** 6), st.sampled_from(["garbage", "stamp", "epoch", "late", "name"])),
    min_size=1, max_size=8))
def test_many_bad_pbs_lines_are_found_in_two_passes(tmp_path, monkeypatch, case, draws):
    from swftools.formats.pbs import reader

    text, _ = case
    lines = text.rstrip("\n").split("\n")
    bad = [(where, _pbs_bad(k, kind)) for k, (where, kind) in enumerate(draws)]
    dirty, bad_at = _insert(lines, bad, 0)
    (tmp_path / "clean.log").write_text(text)
    (tmp_path / "dirty.log").write_text("\n".join(dirty) + "\n")
    clean = pbs.read(tmp_path / "clean.log", tz="UTC")
    calls = _counting(monkeypatch, reader)
    table = pbs.read(tmp_path / "dirty.log", tz="UTC", skip_bad_lines=True)
    assert table.select(clean.column_names).equals(clean)
    assert [entry["line"] for entry in skipped_lines(table)] == bad_at
    assert len(calls) == 2


def test_notes_keep_their_file_lines_after_a_skipped_line(tmp_path):
    """Lines after a skipped one keep their numbers in what the reader notes (the line is
    blanked, not removed)."""
    log = ("garbage\n"
           "07/14/2017 10:00:00;E;1.s;start=4 end=5 Resource_List.ncpus=x "
           "total_execution_slots=4\n")
    (tmp_path / "a.log").write_text(log)
    table = pbs.read(tmp_path / "a.log", tz="UTC", skip_bad_lines=True)
    from swftools.metadata import TableMetadata

    pbs_meta = TableMetadata.from_table(table).extra["pbs"]
    assert pbs_meta["unreadable_values"] == [{"line": 2, "key": "Resource_List.ncpus"}]
    assert [entry["line"] for entry in skipped_lines(table)] == [1]


def test_steps_of_a_skipped_job_line_are_skipped_too(tmp_path):
    """A job line left out leaves its steps without a job line: they are reported too, each on
    its own file line, as when the file is read without the job line."""
    head = "JobID|JobIDRaw|Submit|Start|End|State"
    times = "2023-01-01T00:00:00|2023-01-01T00:00:01|2023-01-01T00:00:02"
    text = "\n".join([head, f"1|1|{times}|COMPLETED", f"2|2|{times}|BOOM", f"2.batch|2|{times}|COMPLETED",
                      f"2.0|2|{times}|COMPLETED", f"3|3|{times}|COMPLETED", "9|9|x"]) + "\n"
    (tmp_path / "a.sacct").write_text(text)
    table = slurm.read(tmp_path / "a.sacct", tz="UTC", skip_bad_lines=True)
    assert table.column("job_id").to_pylist() == [1, 3]
    report = skipped_lines(table)
    assert [e["line"] for e in report] == [3, 4, 5, 7]
    assert "BOOM" in report[0]["message"] and "no job line" in report[1]["message"]
