"""Mutation testing of swftools' core modules with mutmut (``make mutate``; DEVELOPING.md).

Each module is mutated in a scratch copy of the checkout (tracked files plus the built
extensions), with the fast tier's tests that exercise it: its mirrored test files
(``swftools/formats/walltime.py`` -> ``tests/test_formats_walltime*.py``) and any test file
that imports it, unless ``--tests`` names others. mutmut runs, per mutant, only the tests that
reach the mutated function. The score and every surviving mutant go to a Markdown report;
survivors listed with a reason in ``tests/mutation-equivalent.txt`` are counted as equivalent.

    python tools/mutate.py swftools/formats/walltime.py swftools/limits.py --report out.md
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "tests" / "mutation-equivalent.txt"
# the modules issue 30 names; `make mutate` takes every .py below them
CORE = ("swftools/formats", "swftools/validate", "swftools/replay", "swftools/privacy",
        "swftools/release", "swftools/telemetry", "swftools/whatif")
PYTEST_ARGS = ["-n", "0", "-p", "no:cacheprovider", "-m", "not slow", "-q", "-x"]


def module_name(path: Path) -> str:
    """``swftools/formats/walltime.py`` -> ``swftools.formats.walltime``."""
    parts = path.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def tests_for(path: Path) -> list[str]:
    """The test files that exercise ``path``: mirrored names, then importers."""
    name = module_name(path)
    stem = "_".join(name.split(".")[1:])
    # validate/rules_time.py is tested in test_validate_time*.py
    stems = {stem, stem.replace("_rules_", "_")}
    found = {p for s in stems for p in (ROOT / "tests").rglob(f"test_{s}*.py")}
    short = name.rsplit(".", 1)
    pattern = re.compile(rf"(from {re.escape(short[0])} import [^\n]*\b{re.escape(short[-1])}\b"
                         rf"|import {re.escape(name)}\b|from {re.escape(name)} import)")
    for test in (ROOT / "tests").rglob("test_*.py"):
        if pattern.search(test.read_text(encoding="utf-8")):
            found.add(test)
    return sorted(str(p.relative_to(ROOT)) for p in found)


def equivalent() -> dict[str, str]:
    """``mutant name -> reason`` from ``tests/mutation-equivalent.txt`` (``name: reason``)."""
    out = {}
    if EQUIVALENT.exists():
        for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                name, _, reason = line.partition(":")
                out[name.strip()] = reason.strip()
    return out


def checkout_files() -> list[str]:
    """The checkout's files as git sees them: tracked ones and new ones not ignored (a test
    file written for a survivor counts before it is committed)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, check=True, capture_output=True).stdout.decode()
    return sorted(set(filter(None, listed.split("\0"))))


def scratch_copy(dest: Path) -> None:
    """The checkout's files and the built extension modules, copied into ``dest``."""
    files = checkout_files()
    files += [str(p.relative_to(ROOT)) for p in (ROOT / "swftools").rglob("*.so")]
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


# Copied beside the mutated package: what the tests read (schemas, samples, the docs pages and
# the top-level documents some tests check against the code).
ALSO_COPY = ["schemas/", "archive/", "samples/", "swftools/", "docs/", "benchmarks/", "tools/",
             "ARCHITECTURE.md", "README.md", "CHANGELOG.md", "DEVELOPING.md", "mkdocs.yml",
             "pyproject.toml"]


TIMEOUT_MULTIPLIER = 5.0

# Appended to the scratch copy's tests/conftest.py: a mutant that fails a property test fails at
# its first counterexample. Shrinking it (minutes per mutant on the writers' round trips) made
# such mutants time out, and timeouts are left out of the score.
NO_SHRINK = """

# tools/mutate.py: no shrinking under mutation testing (a failure is all that counts)
from hypothesis import Phase as _Phase

settings.register_profile("mutate", settings.default,
                          phases=[_Phase.explicit, _Phase.reuse, _Phase.generate])
settings.load_profile("mutate")
"""


def run_group(command: list[str], **kwargs) -> int:
    """Run ``command`` in its own process group and end the whole group if this process is
    stopped (Ctrl-C, ``kill``): ``mutmut run`` forks a worker per mutant, which would
    otherwise go on testing mutants after ``tools/mutate.py`` has gone."""
    child = subprocess.Popen(command, start_new_session=True, **kwargs)
    try:
        return child.wait()
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


def run_module(path: Path, tests: list[str], work: Path, jobs: int,
               only: list[str] | None = None, resume: bool = False) -> dict[str, str]:
    """mutmut on one module in a scratch copy; returns ``mutant -> status``.

    ``only`` names the mutants to (re)test, as mutant names or globs
    (``swftools.limits.x_check__mutmut_*``); ``resume`` keeps the mutants and results of an
    earlier run in ``work`` (the checkout's files are copied in afresh, so new tests count):
    mutmut tests the mutants that have no result yet (or the ``only`` ones), and those of a
    function that changed since."""
    if not (resume and (work / "mutants").is_dir()):
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    scratch_copy(work)
    conftest = work / "tests" / "conftest.py"
    conftest.write_text(conftest.read_text(encoding="utf-8") + NO_SHRINK, encoding="utf-8")
    text = (work / "pyproject.toml").read_text(encoding="utf-8")
    text = text.replace("-n auto --dist loadfile", "")
    text += ("\n[tool.mutmut]\n"
             f"source_paths = [{str(path)!r}]\n"
             f"also_copy = {ALSO_COPY!r}\n"
             f"pytest_add_cli_args = {PYTEST_ARGS!r}\n"
             f"pytest_add_cli_args_test_selection = {tests!r}\n"
             # mutmut's default (15 x the clean run) let one infinite-loop mutant hold a
             # worker for about ten minutes; timeouts are left out of the score either way.
             f"timeout_multiplier = {TIMEOUT_MULTIPLIER!r}\n")
    (work / "pyproject.toml").write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": ""}
    # the tests look for the real traces in ../shared beside the checkout: the scratch copy
    # has none there, so point them at the checkout's (unless the caller chose a folder)
    env.setdefault("SWFTOOLS_SHARED", str(ROOT.parent / "shared"))
    mutmut = [sys.executable, "-m", "mutmut"]
    run_group([*mutmut, "run", "--max-children", str(jobs), *(only or [])], cwd=work, env=env)
    done = subprocess.run([*mutmut, "results", "--all", "true"], cwd=work, env=env,
                          capture_output=True, text=True, check=False)
    statuses = {}
    for line in done.stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name:
            statuses[name] = status.strip()
    return statuses


def report(results: dict[str, dict[str, str]], tests: dict[str, list[str]],
           command: str = "python tools/mutate.py") -> str:
    """The Markdown report: score per module and overall, the lines for DEVELOPING.md's
    measured scores, then every survivor."""
    known = equivalent()
    lines = ["# Mutation score (mutmut, fast tier)", "", f"Command: `{command}`", "",
             "| module | mutants | killed | equivalent | survived | other | score |",
             "|---|---|---|---|---|---|---|"]
    total = {"n": 0, "killed": 0, "equivalent": 0, "survived": 0}
    survivors, measured = [], []
    for module, statuses in results.items():
        n = len(statuses)
        killed = sum(s == "killed" for s in statuses.values())
        surv = [m for m, s in statuses.items() if s == "survived"]
        equiv = [m for m in surv if m in known]
        left = [m for m in surv if m not in known]
        other = n - killed - len(surv)
        score = f"{(killed + len(equiv)) / (n - other):.1%}" if n - other else "n/a"
        lines.append(f"| `{module}` | {n} | {killed} | {len(equiv)} | {len(left)} | {other} | "
                     f"{score} |")
        if n - other:
            measured.append(f"- `{module}` {score} ({killed} of {n - other} killed, "
                            f"{len(equiv)} listed equivalent, {len(left)} surviving"
                            + (f", {other} left out" if other else "") + ")")
        total["n"] += n - other
        total["killed"] += killed
        total["equivalent"] += len(equiv)
        survivors += [(module, m) for m in left]
    overall = (total["killed"] + total["equivalent"]) / total["n"] if total["n"] else None
    lines += ["", (f"Overall: **{overall:.1%}** of {total['n']} mutants killed or equivalent "
                   "(timeouts and other outcomes left out)." if overall is not None else
                   "Overall: **no mutant ran**: see the mutmut output."), "",
              "Score = (killed + listed equivalent) / (mutants - timeouts/suspicious/skipped).",
              "", "## Measured scores (for DEVELOPING.md)", ""]
    lines += measured or ["none"]
    lines += ["", "## Surviving mutants", ""]
    lines += [f"- `{m}` (module `{mod}`): `mutmut show {m}`" for mod, m in survivors] or ["none"]
    lines += ["", "## Tests used", ""]
    lines += [f"- `{mod}`: {', '.join(t)}" for mod, t in tests.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="module files (default: every core module)")
    parser.add_argument("--tests", nargs="*", help="test files to use instead of the mirrored "
                        "and importing ones")
    parser.add_argument("--report", default="mutation-report.md")
    parser.add_argument("--work", default=None, help="scratch folder (default: a temporary one, "
                        "named in the report)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="mutants tested at once (default: the number of CPUs)")
    parser.add_argument("--only", nargs="*", help="mutants to test, as names or globs "
                        "(`mutmut run` NAMES); the report still counts every mutant with a result")
    parser.add_argument("--resume", action="store_true", help="reuse the scratch copies in "
                        "--work from an earlier run: mutants that have a result keep it")
    args = parser.parse_args(argv)
    # `kill` raises SystemExit like Ctrl-C raises KeyboardInterrupt, so run_group's cleanup runs
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.resume and not args.work:
        parser.error("--resume needs --work (the folder of the earlier run)")
    modules = [Path(m) for m in args.modules] or sorted(
        p.relative_to(ROOT) for d in CORE for p in (ROOT / d).rglob("*.py"))
    results, used = {}, {}
    base = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="swftools-mutate-"))
    for path in modules:
        tests = args.tests or tests_for(path)
        if not tests:
            print(f"{path}: no test file exercises it; skipped", file=sys.stderr)
            continue
        name = module_name(path)
        results[name] = run_module(path, tests, base / name, args.jobs, args.only, args.resume)
        used[name] = tests
    command = " ".join(["python tools/mutate.py", *map(str, modules),
                        *(["--tests", *args.tests] if args.tests else []), "--jobs",
                        str(args.jobs), *(["--only", *args.only] if args.only else []),
                        *(["--work", args.work, "--resume"] if args.resume else [])])
    text = report(results, used, command) + f"\nScratch folder (for `mutmut show`): `{base}`\n"
    Path(args.report).write_text(text, encoding="utf-8")
    print(f"wrote {args.report}")
    return 1 if "no mutant ran" in text else 0


if __name__ == "__main__":
    sys.exit(main())
