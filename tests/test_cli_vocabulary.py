"""One CLI vocabulary: ``--out/-o`` (old spellings kept one release with a warning), ``--json``
results, and the one ``--site`` rule."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from swftools import formats
from swftools.cli import app
from swftools.table import get_metadata

from .validate_support import swf_jobs, write_swf

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "aaic-sample.csv.gz"
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_positional_output_still_works_with_a_warning(tmp_path):
    result = invoke("convert", SAMPLE, tmp_path / "a.swf")
    assert result.exit_code == 0, result.output
    assert "swftools: warning: the positional OUT is deprecated, use --out" in result.stderr
    assert (tmp_path / "a.swf").is_file()
    result = invoke("synth", "--jobs", "20", tmp_path / "s.csv")
    assert result.exit_code == 0 and "deprecated, use --out" in result.stderr


def test_output_given_twice_or_never_is_a_usage_error(tmp_path):
    both = invoke("convert", SAMPLE, tmp_path / "a.swf", "--out", tmp_path / "b.swf")
    assert both.exit_code == 2 and "give the output once" in both.stderr
    assert not (tmp_path / "a.swf").exists() and not (tmp_path / "b.swf").exists()
    neither = invoke("convert", SAMPLE)
    assert neither.exit_code == 2 and "--out" in neither.stderr


def test_validate_output_and_format_aliases_warn(tmp_path):
    path = write_swf(tmp_path / "ok.swf", swf_jobs(3))
    result = invoke("validate", path, "--output", tmp_path / "r.json", "--format", "swf")
    assert result.exit_code == 0, result.output
    assert "swftools: warning: --output is deprecated, use --out" in result.stderr
    assert "swftools: warning: --format is deprecated, use --from" in result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["valid"] is True
    result = invoke("validate", path, "-o", tmp_path / "s.json")
    assert result.exit_code == 0 and "warning" not in result.stderr


def test_json_results(tmp_path):
    result = invoke("synth", "--jobs", "30", "--seed", "2", "-o", tmp_path / "s.csv", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["jobs"] == 30
    result = invoke("convert", tmp_path / "s.csv", "-o", tmp_path / "s.swf", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["jobs"] == 30 and doc["to_format"] == "swf" and doc["site"] == "aaic"


def test_site_rule_convert_follows_the_trace(tmp_path):
    """No --site: an NQSII log gets the AAIC preset (its reader's default) and keeps it; an SWF
    trace naming no site gets none (convert used to force aaic)."""
    assert invoke("convert", SAMPLE, "-o", tmp_path / "p").exit_code == 0
    assert get_metadata(formats.read(tmp_path / "p"))["site"] == "aaic"
    swf = write_swf(tmp_path / "t.swf", swf_jobs(3))
    result = invoke("convert", swf, "-o", tmp_path / "t-pkg", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["site"] is None


# --- issue 27: one vocabulary, checked by walking every command's options --------------------

import re as _re

import pytest
import typer

from swftools.cli.common import SCHEDULERS, listing
from swftools.errors import count, plural

# Every option name more than one command uses, and its one meaning: a pattern each use's help
# matches (case-insensitive). A name used for a second meaning (telemetry attach's Dask address was
# --scheduler) fails here and gets a name of its own.
MEANINGS = {
    "--out": r"output|write|folder|directory|file", "--from": r"format", "--to": r"format",
    "--site": r"site preset \(", "--scheduler": r"^scheduling policy: ", "--json": r"JSON",
    "--force": r"overwrite|replace", "--seed": r"seed", "--allow-empty": r"without job rows",
    "--strict": r"warnings", "--key-file": r"key", "--ephemeral-key": r"random",
    "--time-shift-weeks": r"whole weeks", "--telemetry": r"telemetry export",
    "--allocations": r"allocation", "--raw": r"^raw (job )?log", "--names": r"names",
    "--procs": r"flat pool of N processors", "--sensitivity": r"sensitivity model",
    "--nodes": r"^nodes", "--gpus-per-node": r"GPUs per node",
    "--interval": r"sampling interval", "--progress": r"^progress", "--form": r"^NQSII (output )?form",
    "--tz": r"^time zone", "--help": r"this message", "--platform": r"training platform",
}
# Flags that take no value wherever they appear (the others always take one).
FLAGS = {"--json", "--force", "--allow-empty", "--strict", "--ephemeral-key", "--progress",
         "--help"}


def _registries() -> dict[tuple[str, str], tuple[str, ...]]:
    """(option, command) -> the registry its help must list; command "*" for every command."""
    from swftools.formats import FORMATS
    from swftools.replay import ALLOCATIONS, POLICIES
    from swftools.site import PRESETS
    from swftools.synth.telemetry import FORMATS as FIXTURE_FORMATS
    from swftools.telemetry.metric_map import PRESETS as MAP_PRESETS
    from swftools.telemetry.samples import INPUT_FORMATS
    from swftools.whatif.training import MODEL_PRESETS, PLATFORM_PRESETS

    assert SCHEDULERS == POLICIES
    return {("--scheduler", "*"): POLICIES, ("--site", "*"): PRESETS,
            ("--from", "*"): FORMATS, ("--to", "*"): FORMATS,
            ("--from", "telemetry attach"): INPUT_FORMATS,
            ("--to", "telemetry synth"): FIXTURE_FORMATS,
            ("--allocation", "replay"): ALLOCATIONS, ("--map", "telemetry attach"): MAP_PRESETS,
            ("--platform", "*"): PLATFORM_PRESETS, ("--model", "whatif estimate"): MODEL_PRESETS}


def _commands():
    """(path, click command) of every visible command, the top level included."""
    def walk(command, path):
        yield path, command
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if not sub.hidden:
                yield from walk(sub, (*path, name))
    return list(walk(typer.main.get_command(app), ()))


def _options():
    """(command path, option, its long name) of every visible option of every command."""
    for path, command in _commands():
        for param in command.params:
            if param.param_type_name != "option" or param.hidden:
                continue
            for name in (*param.opts, *param.secondary_opts):
                if name.startswith("--") and not name.startswith("--no-"):
                    yield " ".join(path), param, name


def test_site_presets_registry_is_the_preset_files():
    from swftools.resources import schemas_dir
    from swftools.site import PRESETS

    assert sorted(PRESETS) == sorted(p.stem for p in (schemas_dir() / "sites").glob("*.json"))


def test_one_meaning_per_option_name():
    users: dict[str, set[str]] = {}
    for command, param, name in _options():
        if command:  # the top level's --version is the program's, not a command's option
            users.setdefault(name, set()).add(command)
            if name in MEANINGS:
                assert param.is_flag == (name in FLAGS), (command, name)
                assert _re.search(MEANINGS[name], param.help or "", _re.I), (command, name,
                                                                             param.help)
    shared = {name for name, commands in users.items() if len(commands) > 1}
    assert not shared - set(MEANINGS), (
        f"declare the meaning of {sorted(shared - set(MEANINGS))} in MEANINGS (one per name)")


def test_choice_lists_are_their_registries():
    registries = _registries()
    for command, param, name in _options():
        registry = registries.get((name, command), registries.get((name, "*")))
        if registry is not None:
            assert listing(registry) in (param.help or ""), (command, name, param.help)
    from swftools.replay.placement import PLACEMENTS

    policies = next(p for c, p, n in _options() if n == "--policies")
    assert set(PLACEMENTS) <= set(_re.findall(r"[a-z][a-z-]*", policies.help))


def test_hidden_aliases_point_to_a_visible_option():
    for path, command in _commands():
        visible = {n for p in command.params if not getattr(p, "hidden", False)
                   for n in (*p.opts, *p.secondary_opts)}
        for param in command.params:
            if getattr(param, "hidden", False) and param.param_type_name == "option":
                new = _re.fullmatch(r"Deprecated: use (--[a-z-]+)\.", param.help or "")
                assert new and new.group(1) in visible, (path, param.opts, param.help)


def test_argument_metavars_are_uppercase():
    ctx_cls = typer.main.get_command(app).context_class
    for path, command in _commands():
        pieces = command.collect_usage_pieces(ctx_cls(command))
        for piece in pieces:
            if piece in ("[OPTIONS]", "COMMAND [ARGS]..."):
                continue
            assert _re.fullmatch(r"\[?[A-Z][A-Z_]*(\.\.\.)?\]?", piece), (path, piece)


def test_summaries_are_whole_single_lines():
    """`swftools --help` (100 columns) shows each summary on one line, never cut with ...."""
    for path, command in _commands():
        subs = {n: c for n, c in getattr(command, "commands", {}).items() if not c.hidden}
        if not subs:
            continue
        room = 100 - 6 - max(map(len, subs))
        for name, sub in subs.items():
            summary = sub.get_short_help_str(limit=10_000)
            assert len(summary) <= room and not summary.endswith("..."), (path, name, summary)
    text = invoke("--help").stdout
    assert "..." not in text.split("Commands:")[1]


@pytest.mark.parametrize("args", [("replay", "--polcy", "easy"), ("replay",),
                                  ("replay", "--bin-s", "0", "x.swf"), ("nosuch",)])
def test_click_usage_errors_use_the_one_error_style(args):
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("swftools: error: "), result.stderr
    assert "Error:" not in result.stderr and "Usage:" not in result.stderr


def test_renamed_options_warn_and_still_work(tmp_path):
    swf = write_swf(tmp_path / "t.swf", swf_jobs(4))
    old = invoke("replay", swf, "--procs", "8", "--policy", "fcfs", "--json")
    new = invoke("replay", swf, "--procs", "8", "--scheduler", "fcfs", "--json")
    assert old.exit_code == 0 and new.exit_code == 0, old.output + new.output
    assert "swftools: warning: --policy is deprecated, use --scheduler" in old.stderr
    assert json.loads(old.stdout) == json.loads(new.stdout)
    assert json.loads(new.stdout)["policy"] == "fcfs"
    dask = invoke("telemetry", "attach", swf, tmp_path / "s.json", "--scheduler", "tcp://h:1")
    assert "swftools: warning: --scheduler is deprecated, use --dask-scheduler" in dask.stderr


def test_plural_agreement():
    assert [count(n, "job") for n in (0, 1, 2)] == ["0 jobs", "1 job", "2 jobs"]
    assert plural(1, "is", "are") == "is" and plural(3, "is", "are") == "are"
    assert count(1, "complete line", thousands=True) == "1 complete line"


def test_main_turns_abort_into_one_error_line_and_lets_other_errors_through(capsys):
    """An Abort (Ctrl-C at a prompt) is one ``swftools: error`` line and exit 1; any other
    exception keeps its own type (the handler once raised AttributeError instead)."""
    from typer.exceptions import Abort

    from swftools.cli.group import Typer

    mini = Typer(name="mini", add_completion=False)

    @mini.command("stop")
    def stop() -> None:
        raise Abort()

    @mini.command("boom")
    def boom() -> None:
        raise RuntimeError("boom")

    command = typer.main.get_command(mini)
    with pytest.raises(SystemExit) as done:
        command.main(["stop"], prog_name="mini")
    assert done.value.code == 1 and "swftools: error: aborted" in capsys.readouterr().err
    with pytest.raises(RuntimeError, match="boom"):
        command.main(["boom"], prog_name="mini")
