"""Shared benchmark helpers: fresh-process measurements, peak memory, the cached synthetic log.

Standard library only at import time: ``accasim_runner.py`` imports it under AccaSim's own
interpreter, where swftools is not installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
SYNTH_SEED = 460  # seed of the synthetic AAIC log shared by bench_convert, bench_replay, bench_report


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss it does not inherit the
    parent's peak across fork + exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run_child(script: str, *args: str) -> dict:
    """Run ``python script args...`` in a fresh process; the JSON object of its last output line."""
    out = subprocess.run([sys.executable, script, *args], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def best_of(repeat: int, key: str, script: str, *args: str) -> dict:
    """The result with the smallest ``key`` among ``repeat`` fresh-process runs (``run_child``)."""
    best = None
    for _ in range(repeat):
        result = run_child(script, *args)
        if best is None or result[key] < best[key]:
            best = result
    return best


def synthetic_log(n_jobs: int) -> Path:
    """The cached synthetic NQSII log (raw form, seed 460), generated on first use."""
    from swftools.formats import nqsii
    from swftools import synth

    CACHE.mkdir(parents=True, exist_ok=True)
    log = CACHE / f"synth-{n_jobs}.csv.gz"
    if not log.exists():
        print(f"generating a {n_jobs}-job synthetic log (cached in {CACHE}) ...", flush=True)
        nqsii.write(synth.generate(n_jobs, seed=SYNTH_SEED), log, form="raw", force=True)
    return log
