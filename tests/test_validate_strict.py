"""``validate(strict=True)`` / ``--strict``: warnings fail the report, for a release gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from swftools.validate import validate

# A job of 8 processors on a machine of 4 (warnings: job-exceeds-machine, capacity-gpus).
OVERSIZED = ("; Version: 2.2\n; MaxProcs: 4\n"
             "1 0 0 10 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1\n"
             "2 5 0 10 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n")
FITS = OVERSIZED.replace(" 10 8 -1 -1 8 ", " 10 4 -1 -1 4 ").replace("; MaxProcs: 4", "; MaxProcs: 8")


@pytest.fixture
def oversized(tmp_path: Path) -> Path:
    path = tmp_path / "big.swf"
    path.write_text(OVERSIZED)
    return path


def test_warnings_pass_by_default(oversized):
    report = validate(oversized)
    assert report.warnings and not report.errors
    assert report.valid and not report.strict
    assert report.to_json()["valid"] is True


def test_strict_makes_warnings_fail(oversized):
    report = validate(oversized, strict=True)
    assert report.fired("warning") >= {"job-exceeds-machine"}
    assert not report.valid
    assert report.to_json()["valid"] is False and report.to_json()["strict"] is True
    assert report.status_line().endswith("(--strict: warnings fail)")


def test_strict_passes_a_trace_without_warnings(tmp_path):
    path = tmp_path / "fits.swf"
    path.write_text(FITS)
    report = validate(path, strict=True)
    assert report.warnings == 0
    assert report.valid


def test_strict_applies_to_tables_too(oversized):
    from swftools import formats

    assert not validate(formats.read(oversized), strict=True).valid


def test_cli_strict_exit_codes(oversized):
    from typer.testing import CliRunner

    from swftools.cli import app

    runner = CliRunner()
    assert runner.invoke(app, ["validate", str(oversized)]).exit_code == 0
    result = runner.invoke(app, ["validate", "--strict", str(oversized)])
    assert result.exit_code == 1
    assert "(--strict: warnings fail)" in result.output


def test_release_strict_refuses_warnings_and_writes_nothing(oversized, tmp_path):
    from swftools.errors import InputError
    from swftools.release import release

    settings = Path(__file__).resolve().parent.parent / "archive" / "release-settings.example.json"
    out = tmp_path / "archive"
    with pytest.raises(InputError, match=r"validation found 3 warnings \(capacity-gpus, "
                                         r"job-exceeds-machine\) and --strict"):
        release(oversized, out, version="1.0.0", settings=settings, strict=True)
    assert not out.exists()
    result = release(oversized, out, version="1.0.0", settings=settings)
    assert result.validation.warnings == 3 and out.is_dir()


# --- --allow-empty: a trace without jobs is an error unless asked for -------------------------

HEADER_ONLY = "; Version: 2.2\n; MaxProcs: 8\n"


def test_every_command_refuses_an_empty_trace_unless_allowed(tmp_path):
    from typer.testing import CliRunner

    from swftools.cli import app

    runner = CliRunner()
    src = tmp_path / "empty.swf"
    src.write_text(HEADER_ONLY)
    words = "no job rows: the file holds only a header"
    for command, out in (("convert", tmp_path / "o.swf"), ("report", tmp_path / "rep")):
        args = [command, str(src), "--out", str(out)]
        result = runner.invoke(app, args)
        assert result.exit_code == 1 and words in result.output, result.output
        assert not out.exists()
        assert runner.invoke(app, [*args, "--allow-empty"]).exit_code == 0
        assert out.exists()
    result = runner.invoke(app, ["validate", str(src)])
    assert result.exit_code == 1 and words in result.output
    assert runner.invoke(app, ["validate", "--allow-empty", str(src)]).exit_code == 0
