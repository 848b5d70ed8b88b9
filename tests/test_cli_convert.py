"""`swftools convert`: exit codes, nothing written on bad input, loss report, determinism."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from swftools.cli import app

from .conftest import trace_path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "aaic-sample.csv.gz"
runner = CliRunner()


def test_sample_to_swf_and_package_with_loss_report(tmp_path):
    result = runner.invoke(app, ["convert", str(SAMPLE), "--out", str(tmp_path / "s.swf")])
    assert result.exit_code == 0, result.output
    assert "user names replaced by numbers" in result.output
    assert (tmp_path / "s.swf").read_text().startswith("; Version: 2.2\n")
    result = runner.invoke(app, ["convert", str(SAMPLE), "--out", str(tmp_path / "pkg")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "pkg" / "datapackage.json").is_file()


def test_bad_input_exits_1_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text("1 0 0 10 x7 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n")
    out = tmp_path / "out.swf"
    result = runner.invoke(app, ["convert", str(bad), "--out", str(out)])
    assert result.exit_code == 1
    assert f"{bad}:1: field 5 (allocated processors): 'x7' is not a number" in result.output
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.swf"]  # no temporary leftovers


def test_existing_output_exits_2_and_is_unchanged(tmp_path):
    out = tmp_path / "out.swf"
    out.write_text("precious")
    result = runner.invoke(app, ["convert", str(SAMPLE), "--out", str(out)])
    assert result.exit_code == 2 and "already exists (use --force to overwrite)" in result.output
    assert out.read_text() == "precious"
    assert runner.invoke(app, ["convert", str(SAMPLE), "--out", str(out), "--force"]).exit_code == 0
    assert out.read_text() != "precious"


def test_usage_errors_exit_2(tmp_path):
    result = runner.invoke(app, ["convert", str(SAMPLE), "--out", str(tmp_path / "x.swf"), "--to", "xls"])
    assert result.exit_code == 2 and "unknown format 'xls'" in result.output
    result = runner.invoke(app, ["convert", str(SAMPLE), "--out", str(tmp_path / "x.dat")])
    assert result.exit_code == 2 and "cannot tell the format" in result.output


def test_swf_gz_round_trips_through_the_cli(tmp_path):
    src = trace_path("NASA-iPSC-1993-3-excerpt228.swf.gz")
    out = tmp_path / "excerpt.swf.gz"
    assert runner.invoke(app, ["convert", str(src), "--out", str(out)]).exit_code == 0
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(src.read_bytes())


def test_console_script_output_is_deterministic(tmp_path):
    outs = []
    for seed in ("0", "4242"):
        out = tmp_path / f"s{seed}.swf.gz"
        subprocess.run([sys.executable, "-m", "swftools", "convert", str(SAMPLE), "-o", str(out)],
                       check=True, capture_output=True, env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"})
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_progress_is_shown_for_large_inputs_only(tmp_path):
    from swftools import progress

    assert progress.estimated_lines(trace_path("RICC-2010-2.swf.gz")) > progress.LARGE_INPUT_LINES
    assert progress.estimated_lines(SAMPLE) < progress.LARGE_INPUT_LINES
    assert progress.wanted(SAMPLE, None) is False  # not a terminal, small input
    result = runner.invoke(app, ["convert", str(SAMPLE), "--out", str(tmp_path / "p.swf"), "--progress"])
    assert result.exit_code == 0, result.output
