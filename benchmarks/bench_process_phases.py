"""Where the time of a ``swftools convert`` (SWF) and ``swftools replay`` process goes (issue 15).

Run: ``.venv/bin/python benchmarks/bench_process_phases.py [--repeat 5] [--only convert,replay]``

Each run is a fresh interpreter that runs the command through the console entry point
(``swftools.cli.main``), as ``bench_process.py`` does, with timers between its phases: the
CLI's import, typer's argument parsing (typer builds a pydantic adapter per option), pyarrow
with the job table module, the SWF kernels (the Cython module built at install), reading, the metadata
check (jsonschema), writing or replaying, and what is left (printing, exit). The
phases are forced in that order (importing a module a moment early changes nothing else), so
that each figure is one cost; the sum is the process minus the interpreter's own start. Prints
the median wall and CPU (process) time of every phase. Inputs: RICC-2010-2 decompressed into
benchmarks/.cache/ (``bench_process.ricc_plain``) and the 100,000-job synthetic SWF of
``bench_replay.py``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

_DRIVER = r"""
import json, sys, time
marks = []
def mark(label):
    marks.append((label, time.perf_counter(), time.process_time()))
mark("start")

class FirstHeavyImport:
    # The command's first import of the SWF format or the replay package ends the argument
    # parsing; the heavy libraries are then loaded one at a time, each in its own phase.
    done = False
    def find_spec(self, name, path=None, target=None):
        if not self.done and name in ("swftools.formats.swf", "swftools.replay"):
            self.done = True
            mark("argument parsing (typer, pydantic)")
            import swftools.table
            mark("import pyarrow, numpy, job table")
            import swftools.formats.swf.reader
            mark("import SWF reader")
            from swftools.formats.swf import kernels
            kernels.native()
            mark("SWF kernels (compiled module)")
        return None

import swftools.cli as cli
mark("import swftools.cli (typer)")
finder = FirstHeavyImport()
sys.meta_path.insert(0, finder)
import swftools.formats as formats
read, write = formats.read, formats.write

def wrap(module, name, before, after):
    original = getattr(module, name)
    def wrapper(*args, **kwargs):
        if before:
            mark(before)
        result = original(*args, **kwargs)
        mark(after)
        return result
    setattr(module, name, wrapper)

def timed_read(*args, **kwargs):
    if finder.done:  # replay: its package was imported before reading
        mark("command set-up (replay package, site)")
    table = read(*args, **kwargs)
    mark("read (kernel cache load, tokenize, table)")
    replay = sys.modules.get("swftools.replay")
    if replay is not None:  # globals that replay() looks up when it runs
        wrap(replay, "prepare", "", "prepare (resource model, workload)")
        wrap(replay, "run_flat", "", "event loop (compiled twin: load, run)")
        wrap(replay, "summarize", "jobs and skipped tables", "summary")
    return table

def timed_write(table, *args, **kwargs):
    from swftools.metadata import TableMetadata
    TableMetadata.from_table(table)
    mark("metadata check (jsonschema)")
    losses = write(table, *args, **kwargs)
    mark("write (map, format, file)")
    return losses

formats.read, formats.write = timed_read, timed_write
sys.argv = ["swftools", *sys.argv[1:]]
try:
    cli.main()
except SystemExit as exc:
    assert not exc.code, exc.code
mark("print, exit")
out = []
for (label, wall, cpu), (_, wall0, cpu0) in zip(marks[1:], marks[:-1]):
    out.append([label, wall - wall0, cpu - cpu0])
print(json.dumps(out))
"""


def run_phases(args: list[str]) -> list[list]:
    """[label, wall s, CPU s] of every phase of one fresh ``swftools ARGS`` process."""
    done = subprocess.run([sys.executable, "-c", _DRIVER, *args], capture_output=True,
                          text=True, check=True, cwd=tempfile.gettempdir())
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(name: str, args: list[str], repeat: int) -> None:
    run_phases(args)  # warm-up: file cache
    runs = [run_phases(args) for _ in range(repeat)]
    print(f"{name} (median of {repeat} fresh processes; wall / CPU seconds):", flush=True)
    total_wall = total_cpu = 0.0
    for i, (label, _, _) in enumerate(runs[0]):
        wall = statistics.median(r[i][1] for r in runs)
        cpu = statistics.median(r[i][2] for r in runs)
        total_wall, total_cpu = total_wall + wall, total_cpu + cpu
        print(f"  {label:<50} {wall:6.3f}  {cpu:6.3f}", flush=True)
    print(f"  {'sum (process minus interpreter start)':<50} {total_wall:6.3f}  {total_cpu:6.3f}",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per command")
    parser.add_argument("--only", default="convert,replay", help="convert, replay or both")
    args = parser.parse_args()
    wanted = {w.strip() for w in args.only.split(",") if w.strip()}
    with tempfile.TemporaryDirectory(prefix="swftools-bench-phases-") as tmp:
        if "convert" in wanted:
            from bench_process import ricc_plain

            src = ricc_plain()
            if src is None:
                print("convert: skipped, ../shared/traces/RICC-2010-2.swf.gz is absent")
            else:
                report(f"convert {src.name} --out OUT.swf",
                       ["convert", str(src), "--out", str(Path(tmp) / "out.swf"), "--force"],
                       args.repeat)
        if "replay" in wanted:
            from bench_process import REPLAY_JOBS
            from bench_replay import synthetic_inputs

            _, swf = synthetic_inputs(REPLAY_JOBS)
            report(f"replay ({REPLAY_JOBS:,} jobs) --procs 304 --scheduler easy",
                   ["replay", str(swf), "--procs", "304", "--scheduler", "easy"], args.repeat)


if __name__ == "__main__":
    main()
