"""Golden ``--help`` of ``swftools`` and of every command and subcommand, so the CLI vocabulary
(``--out/-o``, ``--site``, ``--from/--to``, ``--json``) cannot drift unnoticed.

The files are ``tests/golden/cli/<command>[-<subcommand>].txt`` (``swftools.txt`` for the top
level), rendered 100 columns wide without colour. After an intended change, regenerate them with
``UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_cli_help.py`` and review the diff.
"""

from __future__ import annotations

import re

from pathlib import Path

import pytest
from typer.testing import CliRunner

from swftools.cli import app, command_paths
from . import goldens

GOLDEN = Path(__file__).parent / "golden" / "cli"
ENV = {"COLUMNS": "100", "TERMINAL_WIDTH": "100", "TERM": "dumb", "NO_COLOR": "1",
       "FORCE_COLOR": None, "_TYPER_FORCE_DISABLE_TERMINAL": "1"}


COMMANDS = command_paths()


def _golden(path: tuple[str, ...]) -> Path:
    return GOLDEN / (("-".join(path) or "swftools") + ".txt")


def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env=ENV, prog_name="swftools",
                                terminal_width=100)
    assert result.exit_code == 0, result.output
    return "\n".join(line.rstrip() for line in result.output.splitlines()) + "\n"


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "swftools")
def test_help_matches_golden(path):
    text = _help(path)
    golden = _golden(path)
    if goldens.updating():
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.is_file(), f"{golden} missing: run UPDATE_GOLDEN=1 pytest tests/test_cli_help.py"
    assert text == golden.read_text(encoding="utf-8"), (
        f"`swftools {' '.join(path)} --help` changed: review it, then regenerate with "
        "UPDATE_GOLDEN=1 pytest tests/test_cli_help.py")


def test_no_stale_golden_files():
    expected = {_golden(p).name for p in COMMANDS}
    assert {p.name for p in GOLDEN.glob("*.txt")} <= expected


def test_one_vocabulary():
    """The output is --out/-o, file formats are --from/--to, results print with --json."""
    for path in COMMANDS[1:]:
        text = _help(path)
        # sacct's own --format=LIST may be quoted (convert --columns); no option of ours
        assert "--output" not in text and not re.search(r"--format(?!=)", text), path
        assert "--raw-format" not in text, path


def _run(application, args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(application, args, env=ENV, prog_name="swftools",
                                terminal_width=100)
    return result.exit_code, result.output


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "swftools")
def test_the_entry_point_builds_the_one_command_with_the_same_help_and_errors(path):
    """``main`` gives click only the command that runs (``app_for``, ~10 ms a process): its
    help, and a usage error, are the whole app's."""
    from swftools.cli import app_for

    only = app_for(list(path))
    if path:
        assert only is not app
        assert len(only.registered_commands) + len(only.registered_groups) == 1
    assert _run(only, [*path, "--help"]) == _run(app, [*path, "--help"])
    assert _run(only, [*path, "--no-such-option"]) == _run(app, [*path, "--no-such-option"])
