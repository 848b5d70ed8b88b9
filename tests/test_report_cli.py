"""``swftools report``: exit codes, outputs, messages."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from swftools.cli import app

RUNNER = CliRunner()
SWF = ("; UnixStartTime: 1500000000\n"
       "1 0 5 600 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n"
       "2 60 5 900 4 -1 -1 4 -1 -1 1 2 1 -1 1 -1 -1 -1\n")


def test_report_command_writes_the_report(tmp_path):
    src = tmp_path / "t.swf"
    src.write_text(SWF)
    out = tmp_path / "rep"
    result = RUNNER.invoke(app, ["report", str(src), "--out", str(out), "--seed", "3"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "report.json").read_text())
    assert data["seed"] == 3 and data["trace"]["jobs"] == 2
    assert "skipped wra: the requested walltime is unknown" in result.output


def test_existing_output_is_a_usage_error(tmp_path):
    src = tmp_path / "t.swf"
    src.write_text(SWF)
    (tmp_path / "rep").mkdir()
    result = RUNNER.invoke(app, ["report", str(src), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 2
    assert "already exists (use --force to overwrite)" in result.output
    forced = RUNNER.invoke(app, ["report", str(src), "--out", str(tmp_path / "rep"), "--force"])
    assert forced.exit_code == 0, forced.output


def test_bad_input_exits_1_naming_the_line(tmp_path):
    src = tmp_path / "bad.swf"
    src.write_text(SWF + "3 x7 1 1 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n")
    result = RUNNER.invoke(app, ["report", str(src), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 1
    assert "bad.swf:4" in result.output
    assert not (tmp_path / "rep").exists()


def test_usage_errors_exit_2(tmp_path):
    src = tmp_path / "t.swf"
    src.write_text(SWF)
    assert RUNNER.invoke(app, ["report", str(src)]).exit_code == 2  # --out missing
    negative = RUNNER.invoke(app, ["report", str(src), "--out", str(tmp_path / "r"),
                                   "--seed", "-1"])
    assert negative.exit_code == 2
    unknown_site = RUNNER.invoke(app, ["report", str(src), "--out", str(tmp_path / "r"),
                                       "--site", str(tmp_path / "nosuch.json")])
    assert unknown_site.exit_code == 1 and "no such site file" in unknown_site.output
