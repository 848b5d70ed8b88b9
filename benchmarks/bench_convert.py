"""Convert benchmark: SWF read + write and NQSII -> data package, against a naive pandas round trip.

Run: ``.venv/bin/python benchmarks/bench_convert.py [--jobs 460000] [--repeat 3]``

Inputs: a 460,000-job synthetic AAIC log (``swftools.synth.jobs``, cached under benchmarks/.cache/)
and RICC-2010-2 (447,794 jobs) from ../shared/traces. Each measurement runs in a fresh process so
that its peak resident memory is its own; the best of ``--repeat`` runs is reported. The peer is
the naive pandas SWF round trip: ``read_csv(sep=r"\\s+", comment=";")`` + ``to_csv(sep=" ")``.
Targets (issue 3): at least 3x faster than the peer, peak memory under 600 MB.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _harness import CACHE, best_of, peak_rss_mb, synthetic_log

ROOT = Path(__file__).resolve().parent.parent
RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"


def _measure(kind: str, src: str, dst: str) -> dict:
    """Run one operation in this (fresh) process; return seconds and peak RSS in MB."""
    if kind == "pandas-swf":
        import pandas as pd

        start = time.perf_counter()
        df = pd.read_csv(src, sep=r"\s+", comment=";", header=None)
        df.to_csv(dst, sep=" ", header=False, index=False)
    else:
        from swftools.formats import datapackage
        from swftools.formats import nqsii
        from swftools.formats import swf

        if kind == "swftools-swf":
            # warm the compiled kernels on a tiny file so JIT/cache loading is not timed
            with tempfile.TemporaryDirectory() as tmp:
                tiny = Path(tmp) / "tiny.swf"
                tiny.write_text(" ".join(["1"] * 18) + "\n")
                swf.write(swf.read(tiny), Path(tmp) / "tiny-out.swf")
            start = time.perf_counter()
            swf.write(swf.read(src), dst, force=True)
        elif kind == "swftools-nqsii-package":
            start = time.perf_counter()
            datapackage.write(nqsii.read(src), dst, force=True)
        else:
            raise SystemExit(f"unknown measurement {kind}")
    elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "peak_mb": peak_rss_mb()}


def measure(kind: str, src: Path, dst: Path, repeat: int) -> dict:
    """Best of ``repeat`` fresh-process runs."""
    return best_of(repeat, "seconds", __file__, "--measure", kind, str(src), str(dst))


def synthetic_inputs(n_jobs: int) -> tuple[Path, Path]:
    """The cached synthetic NQSII log and its SWF conversion."""
    from swftools.formats import nqsii
    from swftools.formats import swf

    log = synthetic_log(n_jobs)
    swf_path = CACHE / f"synth-{n_jobs}.swf"
    if not swf_path.exists():
        swf.write(nqsii.read(log), swf_path, site="aaic", force=True)
    return log, swf_path


def report(label: str, ours: dict, peer: dict | None) -> None:
    line = f"{label:44s} swftools {ours['seconds']:6.2f} s  peak {ours['peak_mb']:5.0f} MB"
    if peer:
        ratio = peer["seconds"] / ours["seconds"]
        line += (f" | pandas {peer['seconds']:6.2f} s  peak {peer['peak_mb']:5.0f} MB"
                 f" | {ratio:4.1f}x faster (target >= 3x)")
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=460_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--measure", nargs=3, metavar=("KIND", "SRC", "DST"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(_measure(*args.measure)))
        return
    log, synth_swf = synthetic_inputs(args.jobs)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        cases = [(f"synthetic {args.jobs} jobs: SWF read + write", synth_swf)]
        if RICC.exists():
            cases.append(("RICC-2010-2 (447,794 jobs): SWF read + write", RICC))
        else:
            print(f"skipping RICC-2010-2: {RICC} is absent")
        for label, src in cases:
            ours = measure("swftools-swf", src, out / "ours.swf", args.repeat)
            peer = measure("pandas-swf", src, out / "pandas.swf", args.repeat)
            report(label, ours, peer)
        ours = measure("swftools-nqsii-package", log, out / "package", args.repeat)
        report(f"synthetic {args.jobs} jobs: NQSII -> data package", ours, None)


if __name__ == "__main__":
    main()
