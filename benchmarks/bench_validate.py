"""Benchmark ``swftools validate`` against ``frictionless validate`` on the same data package.

Builds (once, cached under benchmarks/.cache/) a 460,000-job synthetic AAIC package with
``swftools.synth.jobs.generate`` + ``swftools.formats.datapackage.package.write``, then, in the same run, times

* ``swftools validate PKG`` (every rule: descriptor, integrity, CSV cells, schema, semantics,
  capacity sweep and node packing), and
* ``frictionless validate PKG/datapackage.json`` (schema checks only),

each in its own process (wall time; peak RSS from ``os.wait4``), and prints both, the ratio and
the peak memory. Also times ``swftools validate`` on RICC-2010-2 (447,794 jobs) when
../shared/traces is present. Targets: >= 8x faster than frictionless, peak memory < 1 GB.

    python benchmarks/bench_validate.py [--jobs 460000] [--seed 1] [--skip-frictionless]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
TRACES = Path(os.environ.get("SWFTOOLS_SHARED", HERE.parent.parent / "shared")) / "traces"
BIN = Path(sys.executable).parent


def build_package(jobs: int, seed: int) -> Path:
    """The cached synthetic package (built on first use)."""
    target = CACHE / f"synth-{jobs}-seed{seed}"
    if (target / "datapackage.json").is_file():
        return target
    from swftools.formats import datapackage
    from swftools import synth
    CACHE.mkdir(exist_ok=True)
    started = time.perf_counter()
    table = synth.generate(jobs, seed=seed)
    datapackage.write(table, target, force=True)
    print(f"built {target} ({jobs} jobs) in {time.perf_counter() - started:.1f} s")
    return target


def timed(command: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MB, exit code) of a child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}):\n{err}")
    return wall, usage.ru_maxrss / 1024, proc.returncode


def swftools_cmd(path: Path) -> list[str]:
    exe = BIN / "swftools"
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "swftools.cli"]
    return base + ["validate", str(path), "--summary"]


def frictionless_cmd(path: Path) -> list[str]:
    exe = BIN / "frictionless"
    if not exe.exists() and shutil.which("frictionless") is None:
        raise SystemExit("frictionless is not installed")
    return [str(exe if exe.exists() else shutil.which("frictionless")), "validate",
            str(path / "datapackage.json")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=460_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-frictionless", action="store_true")
    args = parser.parse_args()

    package = build_package(args.jobs, args.seed)
    ours, ours_mb, code = timed(swftools_cmd(package))
    verdict = "valid" if code == 0 else "invalid"
    print(f"swftools validate      {args.jobs:>7} jobs: {ours:7.2f} s  peak {ours_mb:6.0f} MB  ({verdict})")
    if not args.skip_frictionless:
        theirs, theirs_mb, fcode = timed(frictionless_cmd(package))
        fverdict = "valid" if fcode == 0 else "invalid"
        print(f"frictionless validate  {args.jobs:>7} jobs: {theirs:7.2f} s  peak {theirs_mb:6.0f} MB  ({fverdict})")
        print(f"ratio: swftools is {theirs / ours:.1f}x faster (target >= 8x); "
              f"peak memory {ours_mb:.0f} MB (target < 1024 MB)")
    ricc = TRACES / "RICC-2010-2.swf.gz"
    if ricc.is_file():
        wall, mb, code = timed(swftools_cmd(ricc))
        print(f"swftools validate RICC-2010-2 (447794 jobs): {wall:.2f} s  peak {mb:.0f} MB  "
              f"({'valid' if code == 0 else 'invalid'})")
    else:
        print(f"RICC-2010-2 not timed: {ricc} is absent")


if __name__ == "__main__":
    main()
