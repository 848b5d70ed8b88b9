"""The synthetic generator's figures against the AAIC paper's (Takizawa, Ogawa, Takano 2019).

    python benchmarks/calibration.py [--jobs 40000] [--seeds 0 1 2] [--time-jobs 460000]

For each seed, generates a trace, measures the paper's headline figures with the filters of
``swftools.synth.calibration`` (jobs of at least 60 s; successful jobs where the paper says so),
and prints them next to the targets and tolerances (±10 % relative, correlations ±0.05
absolute). ``--time-jobs`` also times the generation of a large trace (0 to skip).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from swftools.synth.jobs import generate  # noqa: E402
from swftools.synth.calibration import TARGETS, compare, measure  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=40_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-jobs", type=int, default=460_000)
    args = parser.parse_args()

    runs = []
    for seed in args.seeds:
        t0 = time.perf_counter()
        table = generate(args.jobs, seed)
        elapsed = time.perf_counter() - t0
        runs.append((seed, elapsed, measure(table)))

    seeds = "  ".join(f"{'seed ' + str(s):>9}" for s, _, _ in runs)
    print(f"{args.jobs:,} jobs per trace; generation " +
          ", ".join(f"{e:.1f} s" for _, e, _ in runs))
    print(f"{'figure':42} {'paper':>8} {'tolerance':>10}  {seeds}  within")
    all_ok = True
    for name, (target, tol, kind) in TARGETS.items():
        rows = [dict((r[0], r) for r in compare(f))[name] for _, _, f in runs]
        ok = all(r[5] for r in rows)
        all_ok &= ok
        tol_text = f"±{tol:.0%}" if kind == "rel" else f"±{tol:.2f}"
        values = "  ".join(f"{r[1]:9.4f}" for r in rows)
        print(f"{name:42} {target:8.3f} {tol_text:>10}  {values}  {'yes' if ok else 'NO'}")
    print("context (not calibrated):")
    for name in ("single_node_share", "spearman_all", "pearson_log_all", "users"):
        print(f"  {name:40} " + "  ".join(f"{f[name]:9.4f}" for _, _, f in runs))
    for _, _, f in runs[:1]:
        shares = ", ".join(f"{q} {v:.1%}" for q, v in f["queue_shares"].items())
        print(f"  queue shares (seed {runs[0][0]}): {shares}")

    if args.time_jobs:
        t0, c0 = time.perf_counter(), time.process_time()
        big = generate(args.time_jobs, 0)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        frame = big.select(["submit_time", "wait_s"]).to_pandas()
        days = (frame["submit_time"].max() - frame["submit_time"].min()) / 86400
        print(f"generate({args.time_jobs:,}): {wall:.1f} s wall, {cpu:.1f} s CPU; spans "
              f"{days:.0f} days; wait median {frame['wait_s'].median() / 60:.1f} min, "
              f"mean {frame['wait_s'].mean() / 60:.1f} min")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
