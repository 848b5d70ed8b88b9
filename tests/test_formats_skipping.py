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
BAD_SACCT = ["7|7|u", "x|y|z|" * 7, "", "8|8|u|g|p|2023-02-30T00:00:00" + "|" * 13]


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
       bad=st.sampled_from(["garbage", "03/01/2023 10:00:00;E;9[1].s;user=u",
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

    def always_bad(data: bytes):
        raise InputError("f", "bad", line=2)

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
                       (5, "7 fields, the header has 6")):
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
