"""What-if benchmark: seven placement policies x the 460,000-job synthetic AAIC log (issue 14).

Run: ``.venv/bin/python benchmarks/bench_whatif.py [--jobs 459545] [--spread 0.05]``

The peer is swftools' own homogeneous replay (EASY, first-fit, AAIC preset) of the same table, in
the same process and the same run: target (issue 14) each policy's replay within 2x of it, peak
memory under 1.5 GiB. The what-if policies run on the engine's general path, which is Python;
the homogeneous replay runs on the fast path, compiled from 20,000 jobs on (``engine_gpu_jit``).
Both baselines are timed and printed: the ratio to the Python fast path (the same engine, the
cost of the placements) is the issue's target; the ratio to the compiled one is printed beside it. Each policy runs on the half-P100/half-V100 AAIC site
(``schemas/sites/aaic-v100-half.json``) with a variability profile of the given spread (seed 1,
4 classes), the MLPerf P100/V100 sensitivity preset and classes hashed from job ids. Printed per
policy: seconds, ratio to the homogeneous replay, total run time and the geometric-mean JCT
relative to ``packed``.
"""

from __future__ import annotations

import argparse
import sys
import time

from _harness import peak_rss_mb, synthetic_log

POLICIES = ("packed", "random", "even", "priority", "variability-first", "locality-first", "lxv")
TARGET_RATIO = 2.0
TARGET_MB = 1536


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=459_545)
    parser.add_argument("--spread", type=float, default=0.05)
    args = parser.parse_args()

    from swftools.formats import nqsii
    from swftools.replay import replay
    from swftools.site import load_site
    from swftools.whatif.profile import generate_profile
    from swftools.whatif.run import whatif

    from swftools.replay import engine_gpu

    table = nqsii.read(synthetic_log(args.jobs), site="aaic")
    replay(table.slice(0, 100), "aaic")  # warm caches untimed
    replay(table.slice(0, engine_gpu.COMPILED_MIN_JOBS), "aaic")  # load the compiled twin
    t0 = time.perf_counter()
    base = replay(table, "aaic")
    compiled_s = time.perf_counter() - t0
    threshold = engine_gpu.COMPILED_MIN_JOBS
    engine_gpu.COMPILED_MIN_JOBS = 1 << 62  # the fast path in Python
    try:
        t0 = time.perf_counter()
        replay(table, "aaic")
        base_s = time.perf_counter() - t0
    finally:
        engine_gpu.COMPILED_MIN_JOBS = threshold
    print(f"homogeneous EASY replay (aaic, first-fit): {base_s:6.2f} s in Python, "
          f"{compiled_s:6.2f} s compiled, {base.summary['jobs']} jobs", flush=True)
    site = load_site("aaic-v100-half")
    profile = generate_profile(site, spread=args.spread, seed=1, classes=4)
    first = None
    worst = 0.0
    for name in POLICIES:
        t0 = time.perf_counter()
        result = whatif(table, site, policies=[name], profile=profile)
        seconds = time.perf_counter() - t0
        figures = result.rows[0].figures
        first = first or figures
        ratio = seconds / base_s
        worst = max(worst, ratio)
        print(f"  {name:<18} {seconds:6.2f} s  x{ratio:4.2f} of homogeneous in Python "
              f"({'ok' if ratio <= TARGET_RATIO else 'MISSED'}), x{seconds / compiled_s:5.1f} "
              f"of compiled  total run "
              f"{figures['total_run_s'] / first['total_run_s']:.4f}  geo-mean JCT "
              f"{figures['geomean_jct_s'] / first['geomean_jct_s']:.4f} of packed", flush=True)
    peak = peak_rss_mb()
    print(f"slowest policy x{worst:.2f} of the homogeneous replay (target <= {TARGET_RATIO}); "
          f"peak memory {peak:.0f} MB (target < {TARGET_MB}: "
          f"{'ok' if peak < TARGET_MB else 'MISSED'})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
