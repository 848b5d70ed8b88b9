"""Report benchmark: ``swftools report`` on the 460,000-job synthetic AAIC log, figures included.

Run: ``.venv/bin/python benchmarks/bench_report.py [--jobs 460000] [--repeat 1] [--ricc]``

The input is the synthetic NQSII log that ``bench_convert.py`` also uses (``swftools.synth.jobs``,
seed 460, cached under benchmarks/.cache/). Each measurement runs in a fresh process (reading the
log, every analysis, the figures and the writing of report.md/report.json), so its peak resident
memory is its own; the best of ``--repeat`` runs is reported with its stage timings. ``--ricc``
also reports on RICC-2010-2 (447,794 jobs) from ../shared/traces, for comparison.
Targets (issue 8): under 30 s and under 1 GB (1024 MB) for the synthetic log.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from _harness import best_of, peak_rss_mb, synthetic_log

ROOT = Path(__file__).resolve().parent.parent
RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"
TARGET_S, TARGET_MB = 30.0, 1024.0


def _measure(src: str) -> dict:
    """Report on ``src`` in this (fresh) process; seconds, stage timings and peak RSS in MB."""
    from swftools.report import report

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = report(src, Path(tmp) / "report")
        elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "peak_mb": peak_rss_mb(), "stages": result.timings_s,
            "jobs": result.data["trace"]["jobs"], "figures": len(result.figures)}


def measure(src: Path, repeat: int) -> dict:
    """Best of ``repeat`` fresh-process runs."""
    return best_of(repeat, "seconds", __file__, "--measure", str(src))


def _print(label: str, result: dict, check: bool) -> bool:
    print(f"{label}: {result['jobs']:,} jobs, {result['figures']} figures")
    for stage, seconds in result["stages"].items():
        print(f"  {stage:<12} {seconds:7.2f} s")
    ok = result["seconds"] < TARGET_S and result["peak_mb"] < TARGET_MB
    verdict = (" -> " + ("OK" if ok else "MISSED")) if check else ""
    print(f"  {'total':<12} {result['seconds']:7.2f} s (target < {TARGET_S:.0f} s), "
          f"peak RSS {result['peak_mb']:.0f} MB (target < {TARGET_MB:.0f} MB){verdict}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=460_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--ricc", action="store_true", help="also report on RICC-2010-2")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(_measure(args.measure)))
        return 0
    ok = _print(f"synthetic AAIC log ({synthetic_log(args.jobs).name})",
                measure(synthetic_log(args.jobs), args.repeat), check=True)
    if args.ricc:
        if RICC.exists():
            _print("RICC-2010-2 (SWF)", measure(RICC, args.repeat), check=False)
        else:
            print(f"RICC-2010-2 skipped: {RICC} is absent")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
