"""Scale benchmark (issue 15): 1, 3 and 10 million synthetic ABCI-size jobs through every step.

Run: ``.venv/bin/python benchmarks/bench_scale.py [--sizes 1000000 3000000 10000000] [--seed 15]``

For each size N, the NQSII log comes from ``swftools synth --jobs N --site abci`` (streamed,
cached under benchmarks/.cache/scale-abci-N.csv; generated once, its time and memory printed
too), then each step runs in a fresh process (so its peak resident memory, VmHWM, is its own):

* ``convert``: NQSII -> data package (``swftools.formats.convert``, ``--site abci``);
* ``to-swf``: data package -> SWF (``swftools.formats.convert``);
* ``validate``: the data package (``swftools.validate.validate``, ``--site abci``);
* ``replay``: EASY backfilling of the package's jobs on the ABCI preset (1,088 nodes x 4 GPUs,
  ``swftools.replay.replay``): ``read`` (package -> table) and ``replay`` (the event loop and
  its result tables) timed apart.

Each line gives the step's work time (in the child, interpreter start and imports excluded),
its CPU time (every thread; less sensitive than wall time to other work on the machine), the
child's whole wall time and its peak memory. The last table prints the growth of each
step's time from 1M to 3M to 10M next to n log n's (3.24 and 3.60): O(n log n) or better shows
as ratios at or below those. Goal on a 2-core machine: each step < 60 s, peak < 4 GiB. Timings
taken while other work shares the machine are noisy (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _harness import CACHE, peak_rss_mb

SITE = "abci"
STEPS = ("convert", "to-swf", "validate", "read", "replay")
GOAL_S, GOAL_MIB = 60.0, 4096.0


def _paths(n: int) -> dict[str, Path]:
    work = CACHE / f"scale-{n}"
    return {"log": CACHE / f"scale-abci-{n}.csv", "package": work / "package",
            "swf": work / "jobs.swf", "work": work}


def _step(name: str, n: int) -> dict:
    """Run one step in this (fresh) process: seconds of work and peak memory."""
    from swftools import formats

    p = _paths(n)
    out: dict = {}
    t0, c0 = time.perf_counter(), _cpu_s()
    if name == "convert":
        formats.convert(p["log"], p["package"], site=SITE, force=True)
    elif name == "to-swf":
        formats.convert(p["package"], p["swf"], site=SITE, force=True)
    elif name == "validate":
        from swftools.validate import validate

        report = validate(p["package"], site=SITE, max_findings=1000)
        out["valid"], out["findings"] = report.valid, len(report.findings)
    elif name in ("read", "replay"):
        from swftools.replay import replay

        table = formats.read(p["package"], "package", site=SITE)
        t1, c1 = time.perf_counter(), _cpu_s()
        out["read_s"] = t1 - t0
        if name == "replay":
            result = replay(table, site=SITE, policy="easy")
            out["replayed"] = result.jobs.num_rows
            out["skipped"] = result.skipped.num_rows
            t0, c0 = t1, c1  # the replay step's time excludes the read (its own step)
    return {"step": name, "n": n, "seconds": time.perf_counter() - t0, "cpu_s": _cpu_s() - c0,
            "peak_mib": peak_rss_mb(), **out}


def _cpu_s() -> float:
    """CPU seconds of this process so far, every thread (user + system): less sensitive than
    wall time to other work on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _child(*args: str) -> tuple[dict, float]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"step {args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), wall


def _generate(n: int, seed: int) -> dict | None:
    """The cached log, generated (streamed) when missing; its time and peak memory if made."""
    log = _paths(n)["log"]
    if log.exists():
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"generating {n:,} jobs (swftools synth --site {SITE}) ...", flush=True)
    swftools = Path(sys.executable).with_name("swftools")
    t0 = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", str(swftools), "synth", "--jobs", str(n),
                           "--seed", str(seed), "--site", SITE, "--out", str(log)],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    return {"step": "synth", "n": n, "seconds": time.perf_counter() - t0,
            "peak_mib": int(done.stderr.strip().splitlines()[-1]) / 1024}


def _line(r: dict, wall: float | None) -> str:
    ok = "ok" if r["seconds"] < GOAL_S and r["peak_mib"] < GOAL_MIB else "MISSES GOAL"
    if r["step"] == "synth":  # the benchmark's input, made once: not one of the goal's steps
        ok = "input"
    extra = {k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()
             if k not in ("step", "n", "seconds", "cpu_s", "peak_mib")}
    wall_text = f"{wall:7.1f}" if wall is not None else "      -"
    cpu_text = f"{r['cpu_s']:7.1f}" if "cpu_s" in r else "      -"
    return (f"{r['step']:9s} {r['n']:>11,} {r['seconds']:8.1f} {cpu_text} {wall_text} "
            f"{r['peak_mib']:9.0f}  {ok}  {json.dumps(extra) if extra else ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000])
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--steps", nargs="+", default=list(STEPS), choices=STEPS)
    parser.add_argument("--keep", action="store_true", help="keep the package and SWF files")
    parser.add_argument("--step", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        print(json.dumps(_step(args.step, args.n)))
        return
    print(f"scale benchmark on site {SITE}; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f} at start (a shared machine makes these figures noisy)")
    print(f"{'step':9s} {'jobs':>11s} {'work s':>8s} {'cpu s':>7s} {'wall s':>7s} "
          f"{'peak MiB':>9s}")
    results: dict[tuple[str, int], dict] = {}
    for n in sorted(args.sizes):
        made = _generate(n, args.seed)
        if made:
            print(_line(made, None), flush=True)
        _paths(n)["work"].mkdir(parents=True, exist_ok=True)
        for step in args.steps:
            r, wall = _child("--step", step, "--n", str(n))
            results[step, n] = r
            print(_line(r, wall), flush=True)
        if not args.keep:
            shutil.rmtree(_paths(n)["work"], ignore_errors=True)
    sizes = sorted(args.sizes)
    if len(sizes) > 1:
        print("\ngrowth of the work time (and CPU time) between sizes (n log n would give "
              + ", ".join(f"{b / a * math.log(b) / math.log(a):.2f}"
                          for a, b in zip(sizes, sizes[1:])) + ")")
        for step in args.steps:
            ratios = [results[step, b]["seconds"] / results[step, a]["seconds"]
                      for a, b in zip(sizes, sizes[1:])]
            cpu = [results[step, b]["cpu_s"] / results[step, a]["cpu_s"]
                   for a, b in zip(sizes, sizes[1:])]
            memory = [results[step, b]["peak_mib"] / results[step, a]["peak_mib"]
                      for a, b in zip(sizes, sizes[1:])]
            print(f"{step:9s} time x " + ", ".join(f"{x:.2f}" for x in ratios)
                  + "   CPU x " + ", ".join(f"{x:.2f}" for x in cpu)
                  + "   peak memory x " + ", ".join(f"{x:.2f}" for x in memory))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
