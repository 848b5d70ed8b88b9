"""tools/mutate.py: module names, the tests chosen for a module, and the score it reports."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("mutate", ROOT / "tools" / "mutate.py")
mutate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutate)


def test_module_names():
    assert mutate.module_name(Path("swftools/formats/walltime.py")) == "swftools.formats.walltime"
    assert mutate.module_name(Path("swftools/replay/__init__.py")) == "swftools.replay"


def test_tests_are_the_mirrored_files_and_the_importers():
    chosen = mutate.tests_for(Path("swftools/formats/walltime.py"))
    assert "tests/test_formats_walltime.py" in chosen
    assert all(t.startswith("tests/") and Path(t).name.startswith("test_") for t in chosen)
    assert "tests/test_formats_jobids.py" in mutate.tests_for(Path("swftools/formats/jobids.py"))


def test_score_counts_listed_equivalents_and_leaves_out_timeouts(monkeypatch):
    monkeypatch.setattr(mutate, "equivalent", lambda: {"m.x__mutmut_3": "same dtype"})
    statuses = {"m.x__mutmut_1": "killed", "m.x__mutmut_2": "killed", "m.x__mutmut_3": "survived",
                "m.x__mutmut_4": "survived", "m.x__mutmut_5": "timeout"}
    text = mutate.report({"m": statuses}, {"m": ["tests/test_m.py"]})
    assert "| `m` | 5 | 2 | 1 | 1 | 1 | 75.0% |" in text  # (2 + 1) / (5 - 1)
    assert "`m.x__mutmut_4`" in text and "`m.x__mutmut_3`" not in text.split("## Surviving")[1]


def test_no_mutant_is_not_a_perfect_score():
    text = mutate.report({"m": {"m.x__mutmut_1": "timeout"}}, {"m": ["t"]})
    assert "no mutant ran" in text and "| n/a |" in text


def test_rule_modules_are_tested_by_their_concept_files():
    chosen = mutate.tests_for(Path("swftools/validate/rules_time.py"))
    assert "tests/test_validate_time.py" in chosen


def test_the_report_has_the_command_and_the_lines_for_developing(monkeypatch):
    monkeypatch.setattr(mutate, "equivalent", lambda: {"m.x__mutmut_3": "same dtype"})
    statuses = {"m.x__mutmut_1": "killed", "m.x__mutmut_2": "killed", "m.x__mutmut_3": "survived",
                "m.x__mutmut_4": "survived", "m.x__mutmut_5": "timeout"}
    text = mutate.report({"m": statuses}, {"m": ["t"]}, "python tools/mutate.py m.py --jobs 1")
    assert "Command: `python tools/mutate.py m.py --jobs 1`" in text
    measured = text.split("## Measured scores (for DEVELOPING.md)")[1].split("##")[0]
    assert "- `m` 75.0% (2 of 4 killed, 1 listed equivalent, 1 surviving, 1 left out)" in measured


def test_jobs_must_be_positive(capsys):
    with pytest.raises(SystemExit) as info:
        mutate.main(["swftools/formats/order.py", "--jobs", "0"])
    assert info.value.code == 2 and "--jobs must be at least 1" in capsys.readouterr().err


def test_scratch_copy_takes_new_test_files_but_not_ignored_ones(tmp_path):
    new = ROOT / "tests" / "test_zz_mutate_untracked_probe.py"
    ignored = ROOT / "tests" / "__pycache__" / "zz_mutate_probe.pyc"
    new.write_text("def test_probe():\n    pass\n")
    ignored.parent.mkdir(exist_ok=True)
    ignored.write_bytes(b"")
    try:
        files = mutate.checkout_files()
    finally:
        new.unlink()
        ignored.unlink()
    assert "tests/test_zz_mutate_untracked_probe.py" in files
    assert "tests/__pycache__/zz_mutate_probe.pyc" not in files
    assert "tools/mutate.py" in files and "tests/test_tools_mutate.py" in files


def test_the_scratch_conftest_turns_hypothesis_shrinking_off(tmp_path):
    """A mutant failing a property test fails at once instead of shrinking into a timeout;
    the fast tier's other settings stay."""
    import os
    import subprocess
    import sys

    code = ((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8") + mutate.NO_SHRINK
            + "\nprint(sorted(p.name for p in settings.default.phases), "
              "settings.default.max_examples)\n")
    (tmp_path / "conftest.py").write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    done = subprocess.run([sys.executable, str(tmp_path / "conftest.py")], capture_output=True,
                          text=True, cwd=ROOT, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['explicit',", "'generate',", "'reuse']", "30"]


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_stopping_the_tool_ends_the_mutmut_workers(tmp_path, stop):
    """Killing tools/mutate.py (or Ctrl-C) ends every process its mutmut run started, not
    only mutmut itself: before, its forked workers went on testing mutants."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pids = tmp_path / "pids"
    # a stand-in for `mutmut run`: it forks a worker, both write their pid, then wait
    worker = ("import os, sys, time\n"
              "if os.fork() == 0:\n"
              "    open(sys.argv[1] + '.worker', 'w').write(str(os.getpid()))\n"
              "    time.sleep(120); os._exit(0)\n"
              "open(sys.argv[1] + '.parent', 'w').write(str(os.getpid()))\n"
              "time.sleep(120)\n")
    driver = ("import importlib.util, signal, sys\n"
              f"spec = importlib.util.spec_from_file_location('m', {str(ROOT / 'tools' / 'mutate.py')!r})\n"
              "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
              "signal.signal(signal.SIGTERM, m._exit_on_sigterm)\n"
              # as at a terminal: a shell that starts the suite in the background (`make test &`
              # without job control) ignores SIGINT, and Python then installs no Ctrl-C handler
              "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
              f"m.run_group([sys.executable, '-c', {worker!r}, {str(pids)!r}])\n")
    tool = subprocess.Popen([sys.executable, "-c", driver])
    worker_file, parent_file = Path(f"{pids}.worker"), Path(f"{pids}.parent")
    deadline = time.monotonic() + 60
    while not (worker_file.exists() and parent_file.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    started = [int(parent_file.read_text()), int(worker_file.read_text())]
    tool.send_signal(getattr(signal, stop))
    assert tool.wait(timeout=30) != 0

    def alive(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        # a zombie waits for its (gone) parent's reaper: it runs nothing
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"

    deadline = time.monotonic() + 15
    while any(alive(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in started if alive(p)]
    for pid in left:  # do not leave them running when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not left


def test_resume_needs_the_earlier_runs_folder(capsys):
    with pytest.raises(SystemExit) as info:
        mutate.main(["swftools/formats/order.py", "--resume"])
    assert info.value.code == 2 and "--resume needs --work" in capsys.readouterr().err


def test_only_names_the_mutants_and_resume_keeps_the_scratch_copy(tmp_path, monkeypatch):
    """``--only`` hands its names to ``mutmut run``; ``--resume`` keeps the earlier run's
    ``mutants/`` (mutants with a result keep it) but copies the checkout in afresh (new tests
    count), and the report's command says so."""
    import subprocess

    ran, copied = [], []
    monkeypatch.setattr(mutate, "run_group", lambda command, **kw: ran.append(command) or 0)
    def copy(dest):  # the checkout's files, as scratch_copy writes them
        copied.append(dest)
        (dest / "tests").mkdir(exist_ok=True)
        (dest / "tests" / "conftest.py").write_text("from hypothesis import settings\n")
        (dest / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    monkeypatch.setattr(mutate, "scratch_copy", copy)
    results = subprocess.CompletedProcess([], 0, "    swftools.limits.x_a__mutmut_1: killed\n", "")
    monkeypatch.setattr(mutate.subprocess, "run", lambda *a, **kw: results)
    work = tmp_path / "swftools.limits"
    (work / "mutants").mkdir(parents=True)
    keep = work / "mutants" / "kept"
    keep.write_text("a result")
    report = tmp_path / "r.md"
    assert mutate.main(["swftools/limits.py", "--tests", "tests/test_limits.py", "--work",
                        str(tmp_path), "--resume", "--only", "swftools.limits.x_a__mutmut_*",
                        "--report", str(report), "--jobs", "1"]) == 0
    assert copied == [work] and keep.read_text() == "a result"
    assert "[tool.mutmut]" in (work / "pyproject.toml").read_text()
    assert ran[0][-4:] == ["run", "--max-children", "1", "swftools.limits.x_a__mutmut_*"]
    text = report.read_text()
    assert ("Command: `python tools/mutate.py swftools/limits.py --tests tests/test_limits.py "
            "--jobs 1 --only swftools.limits.x_a__mutmut_* --work " + str(tmp_path)
            + " --resume`") in text
    assert "| `swftools.limits` | 1 | 1 | 0 | 0 | 0 | 100.0% |" in text
