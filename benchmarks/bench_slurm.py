"""Slurm reader against ``pandas.read_csv(sep="|")`` on a 1,000,000-job sacct fixture.

The fixture (seeded, written once to a temporary directory) is ``sacct --parsable2`` output
with the usual columns and job steps: every job has ``.batch`` and ``.extern`` lines, a third
also a ``.0`` step, so about 3.3 million lines. ``swftools.formats.slurm.read`` splits the cells
*and* parses times in a time zone, states, time limits, TRES, host lists and folds the steps;
pandas only splits the cells. Both run in the same process, best of ``--repeat``; CPU time
(all threads: the slurm reader splits and copies on every core) is printed beside the wall
time, as the steadier figure on a busy machine.

    .venv/bin/python benchmarks/bench_slurm.py [--jobs 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

HEADER = ("JobID|JobIDRaw|User|Group|Account|Partition|Submit|Eligible|Start|End|Elapsed|"
          "ElapsedRaw|Timelimit|State|ExitCode|NNodes|NCPUS|ReqTRES|AllocTRES|NodeList")
STATES = ["COMPLETED"] * 14 + ["FAILED"] * 3 + ["TIMEOUT", "CANCELLED by 1001", "NODE_FAIL",
                                                "OUT_OF_MEMORY", "PREEMPTED"]
LIMITS = ["01:00:00", "1-00:00:00", "2-00:00:00", "30:00", "120", "UNLIMITED", "12:00:00"]


def _elapsed(seconds: int) -> str:
    days, rest = divmod(seconds, 86_400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


def generate(path: Path, jobs: int, seed: int = 1) -> int:
    """Write the fixture; returns its line count."""
    rng = random.Random(seed)
    base = datetime(2023, 1, 1)
    fmt = "%Y-%m-%dT%H:%M:%S"
    lines = [HEADER]
    t = 0
    for i in range(jobs):
        job = 1000 + i
        t += rng.randint(0, 60)
        submit = base + timedelta(seconds=t)
        wait = rng.randint(0, 3600)
        run = rng.randint(1, 86_400 * 2)
        start, end = submit + timedelta(seconds=wait), submit + timedelta(seconds=wait + run)
        nodes = rng.choice((1, 1, 1, 2, 4))
        gpus = nodes * rng.choice((1, 2, 4, 8))
        first = rng.randint(1, 180)
        hosts = f"gpu{first:03d}" if nodes == 1 else f"gpu[{first:03d}-{first + nodes - 1:03d}]"
        tres = f"billing={gpus * 4},cpu={gpus * 4},gres/gpu={gpus},mem={gpus * 16}G,node={nodes}"
        user = f"user{rng.randint(1, 400)}"
        s, e, el = start.strftime(fmt), end.strftime(fmt), _elapsed(run)
        lines.append(f"{job}|{job}|{user}|grp{rng.randint(1, 40)}|acct{rng.randint(1, 60)}|gpu|"
                     f"{submit.strftime(fmt)}|{submit.strftime(fmt)}|{s}|{e}|{el}|{run}|"
                     f"{rng.choice(LIMITS)}|{rng.choice(STATES)}|0:0|{nodes}|{gpus * 4}|"
                     f"{tres}|{tres}|{hosts}")
        lines.append(f"{job}.batch|{job}.batch||||||{s}|{s}|{e}|{el}|{run}||COMPLETED|0:0|1|"
                     f"{gpus * 4 // nodes}||cpu={gpus * 4 // nodes},mem={gpus * 16 // nodes}G,"
                     f"node=1|gpu{first:03d}")
        lines.append(f"{job}.extern|{job}.extern||||||{s}|{s}|{e}|{el}|{run}||COMPLETED|0:0|"
                     f"{nodes}|{gpus * 4}||{tres}|{hosts}")
        if i % 3 == 0:
            lines.append(f"{job}.0|{job}.0||||||{s}|{s}|{e}|{el}|{run}||COMPLETED|0:0|{nodes}|"
                         f"{gpus * 4}||{tres}|{hosts}")
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def _best(fn, repeat: int) -> tuple[float, float, object]:
    """(best wall time, best CPU time of this process, all threads, the result) of ``repeat``
    runs; CPU time is the steadier figure on a busy machine."""
    best, best_cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        result = fn()
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best, best_cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fixture", type=Path, default=None,
                        help="Keep the fixture at this path (reused when it exists).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.fixture or Path(tmp) / "jobs.sacct"
        start = time.perf_counter()
        if not path.exists():
            generate(path, args.jobs)
        with open(path, "rb") as fh:
            n_lines = sum(1 for _ in fh)
        print(f"fixture: {path.name}, {n_lines:,} lines, {path.stat().st_size / 1e6:.0f} MB "
              f"({time.perf_counter() - start:.1f} s to write or count)")
        run(path, args.repeat)


def run(path: Path, repeat: int) -> None:
    """Time both readers on ``path`` in this process, best of ``repeat``, and print the figures."""
    import pandas as pd

    from swftools.formats import slurm

    t_pandas, c_pandas, frame = _best(lambda: pd.read_csv(path, sep="|"), repeat)
    del frame
    t_str, c_str, _ = _best(lambda: pd.read_csv(path, sep="|", dtype=str), repeat)
    t_slurm, c_slurm, table = _best(lambda: slurm.read(path, tz="Asia/Tokyo"), repeat)
    print(f"pandas.read_csv(sep='|')           : {t_pandas:6.2f} s, CPU {c_pandas:6.2f} s "
          "(cells only, types inferred)")
    print(f"pandas.read_csv(sep='|', dtype=str): {t_str:6.2f} s, CPU {c_str:6.2f} s "
          "(cells only, all text)")
    print(f"swftools slurm.read                : {t_slurm:6.2f} s, CPU {c_slurm:6.2f} s "
          f"({table.num_rows:,} jobs, parsed)")
    print(f"ratio slurm / pandas               : {t_slurm / t_pandas:6.2f}x (goal: <= 1.5x), "
          f"CPU {c_slurm / c_pandas:.2f}x; {t_slurm / t_str:.2f}x of the dtype=str read")

if __name__ == "__main__":
    main()
