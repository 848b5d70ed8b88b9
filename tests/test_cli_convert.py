"""`swftools convert`: exit codes, nothing written on bad input, loss report, determinism."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
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


def test_an_nqsii_log_that_cannot_be_opened_exits_1_with_the_readers_message(tmp_path):
    missing, out = tmp_path / "missing.log", tmp_path / "out.swf"
    result = runner.invoke(app, ["convert", str(missing), "--from", "nqsii", "--out", str(out)])
    assert result.exit_code == 1
    assert f"swftools: error: {missing}: no such file (expected an NQSII job log: a CSV file " \
           "with a header row, plain or gzip)" in result.output
    assert list(tmp_path.iterdir()) == []


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


# -- issue 24 item 6: the headline says what was written ----------------------------------------

SACCT_HEADER = "JobID|User|Group|Partition|Submit|Start|End|Timelimit|State|ExitCode|NNodes|NCPUS"


def _sacct(tmp_path: Path, *states: str) -> Path:
    """A sacct --parsable2 dump: one job per state (finished jobs ran 60 s, on CPUs)."""
    lines = [SACCT_HEADER]
    for k, state in enumerate(states, 1):
        ran = state not in ("PENDING", "RUNNING")
        start = f"2023-01-01T00:0{k}:30" if state != "PENDING" else "Unknown"
        end = f"2023-01-01T00:0{k + 1}:30" if ran else "Unknown"
        lines.append(f"{k}|u|g|batch|2023-01-01T00:0{k}:00|{start}|{end}|01:00:00|{state}|0:0|1|4")
    path = tmp_path / "jobs.sacct"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_headline_counts_jobs_in_correct_english(tmp_path):
    src = _sacct(tmp_path, "COMPLETED")
    result = runner.invoke(app, ["convert", str(src), "--out", str(tmp_path / "one.swf"),
                                 "--tz", "UTC"])
    assert result.exit_code == 0, result.output
    assert f"wrote 1 of 1 job: {src} (slurm) -> {tmp_path / 'one.swf'} (swf)" in result.output
    assert "converted" not in result.output and "1 jobs" not in result.output


def test_unfinished_jobs_are_counted_on_screen(tmp_path):
    src = _sacct(tmp_path, "COMPLETED", "PENDING", "COMPLETED", "RUNNING")
    result = runner.invoke(app, ["convert", str(src), "--out", str(tmp_path / "o.swf"),
                                 "--tz", "UTC"])
    assert result.exit_code == 0, result.output
    assert "wrote 2 of 2 jobs" in result.output
    assert "2 unfinished jobs (pending or running in the log) not converted" in result.output
    single = _sacct(tmp_path, "COMPLETED", "PENDING")
    result = runner.invoke(app, ["convert", str(single), "--out", str(tmp_path / "p.swf"),
                                 "--tz", "UTC", "--json"])
    assert json.loads(result.stdout)["unfinished_jobs"] == 1


@pytest.mark.parametrize("fmt,suffix", [("batsim", ".json"), ("tiresias", ".csv"),
                                        ("swf", ".swf")])
def test_the_printed_count_is_what_the_file_holds(tmp_path, fmt, suffix):
    src = ROOT / "tests" / "corpus" / "alibaba" / \
        "kubernetes-scheduler-simulator-openb_pod_list_cpu050.csv"
    out = tmp_path / f"out{suffix}"
    result = runner.invoke(app, ["convert", str(src), "--to", fmt, "--out", str(out)])
    assert result.exit_code == 0, result.output
    match = re.search(r"wrote (\d+) of (\d+) jobs(?: \((\d+) skipped: ([^)]*\)?[^)]*)\))?: ",
                      result.output)
    assert match, result.output
    written, read = int(match.group(1)), int(match.group(2))
    from swftools import formats

    assert formats.read(out, fmt, allow_empty=True).num_rows == written
    assert read == 2697 and (written < read) == (fmt != "swf")
    if written < read:
        assert int(match.group(3)) == read - written
    data = json.loads(runner.invoke(app, ["convert", str(src), "--to", fmt, "--out", str(out),
                                          "--force", "--json"]).stdout)
    assert (data["jobs"], data["written"], data["skipped_jobs"]) == (read, written, read - written)


def _stderr_of_convert(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "swftools.cli", "convert", *args],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_an_assumed_time_zone_is_said_once_on_stderr(tmp_path):
    src = _sacct(tmp_path, "COMPLETED", "COMPLETED")
    note = f"swftools: warning: {src}: times have no zone; taken as UTC (use --tz ZONE)\n"
    stderr = _stderr_of_convert(str(src), "--out", str(tmp_path / "a.swf"), "--skip-bad-lines")
    assert stderr.count(note) == 1 and stderr.startswith(note), stderr
    for given in (["--tz", "Asia/Tokyo"], ["--site", "aaic"]):
        stderr = _stderr_of_convert(str(src), "--out", str(tmp_path / "b.swf"), "--force", *given)
        assert "no zone" not in stderr, (given, stderr)
