"""Replay benchmark: EASY backfilling on 460,000 synthetic AAIC jobs and on RICC-2010-2, against AccaSim.

Run: ``.venv/bin/python benchmarks/bench_replay.py [--jobs 460000] [--repeat 3] [--setup-accasim]``

Measurements (each in a fresh process, so its peak resident memory is its own; best of
``--repeat``):

* the synthetic AAIC log (``swftools.synth.jobs``, seed 460, cached under benchmarks/.cache/) on the
  AAIC GPU node model (``--site aaic``: 40 nodes x 8 GPUs, first-fit);
* the same trace as SWF in SWF mode on 304 processors (38 nodes x 8 GPUs, the synthetic
  schedule's machine);
* RICC-2010-2 (447,794 jobs, SWF mode, 8,192 processors; ../shared/traces) — a deep queue.

Each line gives the read time, the replay time (``swftools.replay.replay`` on the table in
memory) and the peak memory. The peer is AccaSim 1.1.3, ``EASYBackfilling(FirstFit())``, on the
same synthetic SWF (38 nodes x 8 cores, one SWF processor = one core, as AccaSim's SWF reader
maps it), run by ``benchmarks/accasim_runner.py`` in AccaSim's own virtual environment; the ratio
compares AccaSim's whole simulation with our read + replay. ``--accasim-ricc`` also runs AccaSim
on RICC (slow).

AccaSim setup (``--setup-accasim`` does it): ``python3 -m venv VENV && VENV/bin/pip install
accasim==1.1.3``, then patch ``accasim/utils/misc.py``, whose ``from collections import Mapping``
fails on Python >= 3.10 (``Mapping`` moved to ``collections.abc``). Without that environment the
AccaSim runs are skipped with a message. Targets (issue 5): SWF mode < 4 s, GPU model < 10 s,
RICC < 10 s, peak memory < 1 GB, at least 20x faster than AccaSim.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import CACHE, best_of, peak_rss_mb, synthetic_log

ROOT = Path(__file__).resolve().parent.parent
RICC = ROOT.parent / "shared" / "traces" / "RICC-2010-2.swf.gz"
ACCASIM_VENV = Path(tempfile.gettempdir()) / "accasim-venv"
ACCASIM_VERSION = "1.1.3"
TARGETS = {"gpu": 10.0, "swf": 4.0, "ricc": 10.0}


def _measure(kind: str, src: str) -> dict:
    """Read ``src`` and replay it in this (fresh) process; seconds and peak RSS in MB."""
    from swftools.formats import nqsii
    from swftools.formats import swf
    from swftools.replay import replay

    with tempfile.TemporaryDirectory() as tmp:  # load the reader's compiled kernels untimed
        tiny = Path(tmp) / "tiny.swf"
        tiny.write_text(" ".join(["1"] * 18) + "\n")
        replay(swf.read(tiny), procs=1)
    t0 = time.perf_counter()
    if kind == "gpu":
        table = nqsii.read(src, site="aaic")
        options = {"site": "aaic"}
    else:
        table = swf.read(src)
        options = {"procs": 304 if kind == "swf" else 8192}
    read_s = time.perf_counter() - t0
    t1, c1 = time.perf_counter(), time.process_time()
    result = replay(table, policy="easy", **options)
    replay_s, replay_cpu_s = time.perf_counter() - t1, time.process_time() - c1
    return {"read_s": read_s, "replay_s": replay_s, "replay_cpu_s": replay_cpu_s,
            "peak_mb": peak_rss_mb(),
            "jobs": result.summary["jobs"], "mean_wait_s": result.summary["mean_wait_s"]}


def measure(kind: str, src: Path, repeat: int) -> dict:
    """Best (by replay time) of ``repeat`` fresh-process runs."""
    return best_of(repeat, "replay_s", __file__, "--measure", kind, str(src))


def synthetic_inputs(n_jobs: int) -> tuple[Path, Path]:
    """The cached synthetic NQSII log (shared with bench_convert) and its SWF conversion."""
    from swftools.formats import nqsii
    from swftools.formats import swf

    log = synthetic_log(n_jobs)
    swf_path = CACHE / f"replay-synth-{n_jobs}.swf"
    if not swf_path.exists():
        swf.write(nqsii.read(log, site="aaic"), swf_path, site="aaic", force=True)
    return log, swf_path


def setup_accasim(venv: Path) -> None:
    """Create AccaSim's environment and apply the Python >= 3.10 import patch."""
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"accasim=={ACCASIM_VERSION}"],
                   check=True)
    patch_accasim(venv)


def patch_accasim(venv: Path) -> bool:
    """Replace ``from collections import Mapping`` in accasim/utils/misc.py (CRLF file)."""
    found = list(venv.glob("lib/python*/site-packages/accasim/utils/misc.py"))
    if not found:
        return False
    data = found[0].read_bytes()
    fixed = data.replace(b"from collections import Mapping", b"from collections.abc import Mapping")
    if fixed != data:
        found[0].write_bytes(fixed)
    return True


def run_accasim(venv: Path, swf_path: Path, nodes: int, cores: int) -> dict | None:
    """AccaSim EASYBackfilling(FirstFit()) on ``swf_path``; None (with a message) if absent."""
    python = venv / "bin" / "python"
    if not python.exists() or not patch_accasim(venv):
        print(f"skipping AccaSim: no AccaSim {ACCASIM_VERSION} environment at {venv} "
              "(create it with --setup-accasim)", flush=True)
        return None
    with tempfile.TemporaryDirectory() as work:
        out = subprocess.run([str(python), str(ROOT / "benchmarks" / "accasim_runner.py"),
                              str(swf_path), str(nodes), str(cores), work],
                             capture_output=True, text=True)
    if out.returncode != 0:
        print(f"skipping AccaSim: it failed:\n{out.stderr[-2000:]}", flush=True)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(label: str, kind: str, ours: dict, peer: dict | None) -> None:
    total = ours["read_s"] + ours["replay_s"]
    ok = "ok" if ours["replay_s"] < TARGETS[kind] else "MISSED"
    print(f"{label}\n  swftools: read {ours['read_s']:5.2f} s, replay {ours['replay_s']:5.2f} s "
          f"(cpu {ours['replay_cpu_s']:5.2f} s; target < {TARGETS[kind]:.0f} s: {ok}), "
          f"peak {ours['peak_mb']:4.0f} MB (target < 1024: "
          f"{'ok' if ours['peak_mb'] < 1024 else 'MISSED'}); {ours['jobs']} jobs, "
          f"mean wait {ours['mean_wait_s']:.0f} s", flush=True)
    if peer:
        ratio = peer["wall_s"] / total
        print(f"  AccaSim {ACCASIM_VERSION} EASYBackfilling(FirstFit()): {peer['wall_s']:6.2f} s "
              f"(cpu {peer['cpu_s']:6.2f} s), peak {peer['peak_mb']:4.0f} MB, "
              f"{peer['dispatched']} jobs dispatched\n"
              f"  ratio: {ratio:5.1f}x faster, read + replay vs AccaSim (target >= 20x: "
              f"{'ok' if ratio >= 20 else 'MISSED'}); "
              f"replay alone {peer['wall_s'] / ours['replay_s']:5.1f}x",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=460_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--accasim-venv", type=Path, default=ACCASIM_VENV)
    parser.add_argument("--setup-accasim", action="store_true",
                        help="create AccaSim's virtual environment (network) and patch it")
    parser.add_argument("--skip-accasim", action="store_true")
    parser.add_argument("--accasim-ricc", action="store_true", help="also run AccaSim on RICC")
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "SRC"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(_measure(*args.measure)))
        return
    if args.setup_accasim:
        setup_accasim(args.accasim_venv)
    log, synth_swf = synthetic_inputs(args.jobs)
    n = f"{args.jobs:,}"
    report(f"synthetic AAIC, {n} jobs, GPU model (40 nodes x 8 GPUs, EASY, first-fit)", "gpu",
           measure("gpu", log, args.repeat), None)
    peer = None if args.skip_accasim else run_accasim(args.accasim_venv, synth_swf, 38, 8)
    report(f"synthetic AAIC, {n} jobs, SWF mode (304 processors, EASY)", "swf",
           measure("swf", synth_swf, args.repeat), peer)
    if not RICC.exists():
        print(f"skipping RICC-2010-2: {RICC} is absent")
        return
    ricc_peer = None
    if args.accasim_ricc and not args.skip_accasim:
        plain = CACHE / "RICC-2010-2.swf"
        if not plain.exists():
            with gzip.open(RICC, "rb") as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst)
        ricc_peer = run_accasim(args.accasim_venv, plain, 1024, 8)
    report("RICC-2010-2, 447,794 jobs, SWF mode (8,192 processors, EASY; deep queue)", "ricc",
           measure("ricc", RICC, args.repeat), ricc_peer)


if __name__ == "__main__":
    main()
