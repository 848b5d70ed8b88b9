"""Where the compiled replay engines start to pay: ``COMPILED_MIN_JOBS`` (engine_gpu, engine_flat).

Run: ``.venv/bin/python benchmarks/bench_compiled_threshold.py [--repeat 5]``

Replays the first n jobs of the bundled AAIC sample (GPU node model, ``--site aaic``: plain,
``packed`` and ``random`` placement) and of KTH-SP2 (flat pool, plain; ../shared/traces, skipped
when absent), once with the Python engines forced (the threshold above n) and once with the
compiled twins forced (the threshold at 1), in this process after one warm-up replay, best of
``--repeat``. The peer is the Python reference engine; the two give the same schedule (tested).
The threshold should sit above the cross-over, where the Python engine costs a few ms at most.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "aaic-sample.csv.gz"
KTH = ROOT.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
SIZES = (100, 300, 1_000, 5_000)


def _best(table, threshold: int, repeat: int, **options) -> float:
    from swftools.replay import engine_flat, engine_gpu, replay

    best = float("inf")
    with mock.patch.object(engine_gpu, "COMPILED_MIN_JOBS", threshold), \
            mock.patch.object(engine_flat, "COMPILED_MIN_JOBS", threshold):
        replay(table, **options)
        for _ in range(repeat):
            t0 = time.perf_counter()
            replay(table, **options)
            best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from swftools import formats
    from swftools.replay import engine_gpu

    cases = [("AAIC sample", formats.read(SAMPLE), {"site": "aaic"},
              ("plain", "packed", "random"))]
    if KTH.is_file():
        cases.append(("KTH-SP2", formats.read(KTH), {}, ("plain",)))
    else:
        print(f"KTH-SP2 skipped: {KTH} is absent")
    print(f"COMPILED_MIN_JOBS = {engine_gpu.COMPILED_MIN_JOBS:,}")
    print(f"{'trace':12} {'placement':9} {'jobs':>6} {'python ms':>10} {'compiled ms':>12} "
          f"{'ratio':>6}")
    for name, table, options, placements in cases:
        for placement in placements:
            extra = {} if placement == "plain" else {"placement": placement}
            for n in SIZES:
                part = table.slice(0, n)
                python = _best(part, 10**12, args.repeat, **options, **extra)
                compiled = _best(part, 1, args.repeat, **options, **extra)
                print(f"{name:12} {placement:9} {n:>6,} {python * 1e3:>10.1f} "
                      f"{compiled * 1e3:>12.1f} {python / compiled:>5.1f}x")


if __name__ == "__main__":
    main()
