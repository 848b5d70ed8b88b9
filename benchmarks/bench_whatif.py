"""What-if benchmark: the placement policies x the 460,000-job synthetic AAIC log (issues 14, 15).

Run: ``.venv/bin/python benchmarks/bench_whatif.py [--jobs 459545] [--spread 0.05]
[--no-python]``

Each policy runs ``swftools.whatif.run.whatif`` (EASY, the MLPerf P100/V100 sensitivity preset,
classes hashed from job ids) on the half-P100/half-V100 AAIC site
(``schemas/sites/aaic-v100-half.json``) with a variability profile of the given spread (seed 1,
4 classes), twice: on the engine's compiled general path (``replay/_engine_general.pyx``, what a what-if
replay of 20,000 jobs or more runs on) and on the Python general path, the reference (skipped
with ``--no-python``); both must give the same figures (checked: "same" per line). The peer is
swftools' own homogeneous replay (EASY, first-fit, AAIC preset) of the same table in the same
process, on the fast path, in Python and compiled (``engine_gpu_jit``). Targets:

* issue 14: each policy's what-if replay within 2x of the homogeneous replay in Python (the
  ratio of the Python general path is printed beside it, as the reference);
* issue 15: each policy's compiled what-if replay within 2x of the compiled homogeneous replay
  (the whole ``whatif()`` call: factor bounds, classes and the comparison figures included);
* peak memory under 1.5 GiB.

Printed per policy: seconds compiled and in Python with their ratios, total run time and
geometric-mean JCT relative to ``packed``. The compiled engines are extension modules built at
install (nothing compiles at run time); the homogeneous engine is loaded untimed before the runs.
"""

from __future__ import annotations

import argparse
import sys
import time

from _harness import peak_rss_mb, synthetic_log

POLICIES = ("packed", "best-fit", "random", "even", "priority", "variability-first",
            "locality-first", "lxv")
TARGET_RATIO = 2.0  # issue 14: what-if (Python general path) / homogeneous replay in Python
TARGET_COMPILED_RATIO = 2.0  # issue 15: compiled what-if / compiled homogeneous replay
TARGET_MB = 1536


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=459_545)
    parser.add_argument("--spread", type=float, default=0.05)
    parser.add_argument("--no-python", action="store_true",
                        help="skip the Python general path (the reference)")
    args = parser.parse_args()

    from swftools.formats import nqsii
    from swftools.replay import engine_gpu, replay
    from swftools.site import load_site
    from swftools.whatif.profile import generate_profile
    from swftools.whatif.run import whatif

    table = nqsii.read(synthetic_log(args.jobs), site="aaic")
    site = load_site("aaic-v100-half")
    profile = generate_profile(site, spread=args.spread, seed=1, classes=4)
    replay(table.slice(0, 100), "aaic")  # warm caches untimed
    replay(table.slice(0, engine_gpu.COMPILED_MIN_JOBS), "aaic")  # load the compiled twin
    for name in ("packed", "lxv"):  # load the compiled general path (its kernels) untimed
        whatif(table.slice(0, engine_gpu.COMPILED_MIN_JOBS), site, policies=[name],
               profile=profile)
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
    first = None
    worst = worst_compiled = 0.0
    for name in POLICIES:
        t0 = time.perf_counter()
        result = whatif(table, site, policies=[name], profile=profile)
        seconds = time.perf_counter() - t0
        figures = result.rows[0].figures
        first = first or figures
        ratio = seconds / compiled_s
        worst_compiled = max(worst_compiled, ratio)
        line = (f"  {name:<18} compiled {seconds:6.2f} s x{ratio:4.2f} of compiled homogeneous "
                f"({'ok' if ratio <= TARGET_COMPILED_RATIO else 'MISSED'}), "
                f"x{seconds / base_s:4.2f} of Python homogeneous "
                f"({'ok' if seconds / base_s <= TARGET_RATIO else 'MISSED'})")
        if not args.no_python:
            engine_gpu.COMPILED_MIN_JOBS = 1 << 62
            try:
                t0 = time.perf_counter()
                reference = whatif(table, site, policies=[name], profile=profile)
                python_s = time.perf_counter() - t0
            finally:
                engine_gpu.COMPILED_MIN_JOBS = threshold
            worst = max(worst, python_s / base_s)
            same = reference.to_json() == result.to_json()
            line += (f"; Python {python_s:6.2f} s x{python_s / base_s:4.2f} of Python "
                     f"homogeneous, x{python_s / seconds:4.1f} the compiled time, "
                     f"{'same' if same else 'DIFFERENT'}")
        line += (f"; total run {figures['total_run_s'] / first['total_run_s']:.4f}  geo-mean "
                 f"JCT {figures['geomean_jct_s'] / first['geomean_jct_s']:.4f} of packed")
        print(line, flush=True)
    peak = peak_rss_mb()
    print(f"slowest policy compiled x{worst_compiled:.2f} of the compiled homogeneous replay "
          f"(target <= {TARGET_COMPILED_RATIO})"
          + ("" if args.no_python else f", in Python x{worst:.2f} of the Python homogeneous "
             f"replay (target <= {TARGET_RATIO})")
          + f"; peak memory {peak:.0f} MB (target < {TARGET_MB}: "
          f"{'ok' if peak < TARGET_MB else 'MISSED'})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
