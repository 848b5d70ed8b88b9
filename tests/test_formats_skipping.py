"""``--skip-bad-lines`` (``swftools.formats.skipping``): bad lines left out, each reported with its
file line, the rest read as if the bad lines were not there."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from swftools.cli import app
from swftools.errors import InputError
from swftools.formats import pbs, slurm
from swftools.formats.skipping import (MAX_SKIPPED, collecting, describe, read_skipping, reject,
                                       reject_rows, skipped_lines, withhold)

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


# The engine on a toy line format, so that each rule of read_skipping shows by itself: a
# "name,value" header, then "name,integer" lines. A bad integer is noted (``reject``) and the
# line left out of the pass; a line without two fields stops the pass (raises).
def _toy(data: bytes):
    lines = data.split(b"\n")
    if lines[0] != b"name,value":
        raise InputError("toy", "bad header", line=1, field="header", value=lines[0].decode(),
                         expected="name,value")
    names, values = [], []
    for i, line in enumerate(lines[1:], 2):
        if not line:
            continue
        parts = line.split(b",")
        if len(parts) != 2:
            raise InputError("toy", "2 fields expected", line=i)
        if not parts[1].isdigit():
            reject(InputError("toy", f"{parts[1].decode()!r} is not an integer", line=i,
                              field="value", value=parts[1].decode(), expected="an integer"))
            continue
        names.append(parts[0].decode())
        values.append(int(parts[1]))
    return pa.table({"name": names, "value": values})


def _entry(line, message, field=None, value=None, expected=None):
    return {"line": line, "field": field, "value": value, "message": message,
            "expected": expected}


def test_engine_leaves_out_noted_and_stopping_lines_up_to_the_last():
    """The last line counts even without a final newline (``line <= lines``)."""
    data = b"name,value\na,1\nb,x\nc,3,4\nd,4\ne,y"
    table = read_skipping(_toy, data, "toy")
    assert table.column("name").to_pylist() == ["a", "d"]
    assert skipped_lines(table) == [
        _entry(3, "'x' is not an integer", "value", "x", "an integer"),
        _entry(4, "2 fields expected"),
        _entry(6, "'y' is not an integer", "value", "y", "an integer")]


def test_engine_never_skips_the_header_line_unless_told_there_is_none():
    def raised_header(data: bytes):  # a blank first line would pass: no header to check
        if data.split(b"\n")[0] not in (b"name,value", b""):
            raise InputError("toy", "bad header", line=1)
        return _toy(b"name,value" + data[data.index(b"\n"):])

    with pytest.raises(InputError, match="bad header"):
        read_skipping(raised_header, b"name,valu\na,1\n", "toy")  # header=True by default

    def noted_header(data: bytes):  # the header's error noted, not raised
        if data.split(b"\n")[0] not in (b"name,value", b""):
            reject(InputError("toy", "bad header, noted", line=1))
        return _toy(b"name,value" + data[data.index(b"\n"):])

    with pytest.raises(InputError, match="bad header, noted"):
        read_skipping(noted_header, b"name,valu\na,1\n", "toy")
    table = read_skipping(noted_header, b"name,valu\na,1\n", "toy", header=False)
    assert table.column("name").to_pylist() == ["a"]
    assert [e["line"] for e in skipped_lines(table)] == [1]


def test_engine_raises_errors_without_a_line_or_past_the_end():
    def no_line(data: bytes):
        raise InputError("toy", "no line here")

    with pytest.raises(InputError, match="no line here"):
        read_skipping(no_line, b"name,value\na,1\n", "toy")

    def past_the_end(data: bytes):
        reject(InputError("toy", "a line the file does not have", line=99))
        return _toy(data)

    with pytest.raises(InputError, match="a line the file does not have") as err:
        read_skipping(past_the_end, b"name,value\na,1\n", "toy")
    assert err.value.line == 99


def test_engine_goes_on_when_a_later_step_fails_past_a_noted_row():
    """A step that fails (not an InputError) because of a row already noted ends that pass
    only; a failure with nothing noted is raised."""
    def summed(data: bytes):
        values = []
        for i, line in enumerate(data.split(b"\n")[1:], 2):
            if line:
                if not line.isdigit():
                    reject(InputError("toy", "not a number", line=i))
                values.append(int(line) if line.isdigit() else None)
        sum(values)  # TypeError past a noted row
        return pa.table({"value": values})

    table = read_skipping(summed, b"value\n1\nx\n3\n", "toy")
    assert table.column("value").to_pylist() == [1, 3]
    assert [e["line"] for e in skipped_lines(table)] == [3]

    def broken(data: bytes):
        raise ZeroDivisionError("a bug, not a bad line")

    with pytest.raises(ZeroDivisionError):
        read_skipping(broken, b"value\n1\n", "toy")


def test_engine_runs_the_parser_as_is_when_a_pass_fails_on_lines_already_left_out():
    """A pass that fails after noting only lines already left out: the parser runs once more,
    not collecting, on the file without them, and its own error is raised."""
    def stuck(data: bytes):
        if collecting():
            reject(InputError("toy", "bad", line=2))
            raise ValueError("boom")
        raise ValueError(f"final: {data!r}")

    with pytest.raises(ValueError) as err:
        read_skipping(stuck, b"h\nx\ny", "toy")
    assert str(err.value) == "final: b'h\\n\\ny'"


def test_engine_limit_is_exactly_max_skipped():
    ok = read_skipping(_toy, b"name,value\na,x\nb,x\nc,x\nd,1\n", "toy", max_skipped=3)
    assert len(skipped_lines(ok)) == 3 and ok.column("name").to_pylist() == ["d"]
    with pytest.raises(InputError) as err:
        read_skipping(_toy, b"name,value\na,x\nb,x\nc,x\nd,x\n", "toy", max_skipped=3)
    assert err.value.path == "toy" and err.value.line is None
    assert err.value.expected == "a trace with few malformed lines"
    assert str(err.value) == ("toy: more than 3 bad lines; the last: toy:5: value: 'x' is not "
                              "an integer (expected an integer)")


def test_engine_notes_one_row_past_the_limit_per_vectorized_check():
    """``reject_rows`` notes at most MAX_SKIPPED + 1 rows of one check: enough to pass the limit,
    whose error then names the last of them."""
    def vectorized(data: bytes):
        lines = [line for line in data.split(b"\n")[1:]]
        bad = np.array([line == b"x" for line in lines])
        reject_rows(bad, lambda row: InputError("toy", "bad row", line=row + 2))
        return pa.table({"value": [line for line in lines if line and line != b"x"]})

    data = b"value\n" + b"x\n" * (MAX_SKIPPED + 5) + b"1\n"
    with pytest.raises(InputError) as err:
        read_skipping(vectorized, data, "toy")
    assert str(err.value).startswith(f"toy: more than {MAX_SKIPPED} bad lines; the last: "
                                     f"toy:{MAX_SKIPPED + 2}: bad row")


def test_skipped_lines_of_a_table_read_without_skipping():
    assert skipped_lines(_toy(b"name,value\na,1\n")) == []


def test_describe_shortens_a_long_value_and_says_what_was_expected():
    long = "abcdefghij" * 20
    text = describe("toy", _entry(7, f"{long!r} is not an integer", "value", long, "an integer"))
    assert text == ("toy:7: value: '" + long[:60] + "... (200 characters)' is not an integer "
                    "(expected an integer)")
    assert describe("toy", {"line": 3}) == ("toy:3: line left out; its content was withheld "
                                            "by anonymization")


def test_withhold_keeps_only_line_numbers_and_plain_field_names():
    entries = ["not an entry",
               _entry(3, "secret", "value", "alice", "an integer"),
               {"line": "3", "field": "x" * 80},
               {"line": 4, "field": "x" * 81},
               {"line": 5, "field": "user\n"},
               {"line": 6, "field": 7}]
    assert withhold(entries) == [{"line": 3, "field": "value"},
                                 {"line": None, "field": "x" * 80},
                                 {"line": 4, "field": None},
                                 {"line": 5, "field": None},
                                 {"line": 6, "field": None}]
