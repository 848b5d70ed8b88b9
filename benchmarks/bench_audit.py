"""Anonymize + leak-audit figures on a 460,000-job synthetic AAIC log, against two peers.

Peers for the scan: GNU ``grep -i -F -f names`` (a dedicated multi-pattern matcher) and the
naive Python loop (every name tested against every lowered line). Prints seconds and peak RSS.

    /tmp/venv/bin/python benchmarks/bench_audit.py [--jobs 460000]
"""

from __future__ import annotations

import argparse
import gzip
import resource
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from swftools import formats
from swftools import synth
from swftools.privacy.pseudonyms import anonymize
from swftools.privacy.audit import audit, names_from_table

KEY = b"benchmark-key-not-secret-0123456789"


def _timed(label: str, fn):
    start = time.perf_counter()
    value = fn()
    print(f"{label:<44} {time.perf_counter() - start:8.2f} s")
    return value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=460_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-audit-"))
    try:
        raw = _timed(f"synth {args.jobs} jobs", lambda: synth.generate(args.jobs, seed=1))
        names = names_from_table(raw)
        result = _timed("anonymize (table -> table)", lambda: anonymize(raw, KEY,
                                                                        time_shift_weeks=7))
        out = work / "release"
        out.mkdir()
        _timed("write package + swf.gz", lambda: (
            formats.write(result.table, out / "package", "package"),
            formats.write(result.table, out / "jobs.swf.gz", "swf")))
        tarball = work / "release.tar.gz"
        with tarfile.open(tarball, "w:gz") as tar:
            tar.add(out, arcname="release")
        report = _timed("audit directory", lambda: audit(out, names, key=KEY))
        print(f"  {report.files_scanned} files, {report.bytes_scanned / 1e6:.1f} MB scanned, "
              f"clean={report.clean}, {sum(len(v) for v in names.values())} names")
        report = _timed("audit tarball", lambda: audit(tarball, names, key=KEY))
        assert report.clean, report.render()
        text = gzip.decompress((out / "package" / "data" / "jobs.csv.gz").read_bytes())
        print(f"jobs.csv: {len(text) / 1e6:.1f} MB uncompressed")
        name_list = [n for v in names.values() for n in v]
        if shutil.which("grep"):
            patterns = work / "names.txt"
            patterns.write_text("\n".join(name_list) + "\n")
            plain = work / "jobs.csv"
            plain.write_bytes(text)
            _timed("peer: grep -i -F -f names jobs.csv", lambda: subprocess.run(
                ["grep", "-c", "-i", "-F", "-f", str(patterns), str(plain)],
                capture_output=True, check=False))
        from swftools.privacy.match import Matcher, Term
        matcher = Matcher([Term(n, "user") for n in name_list])
        _timed("ours: one compiled pattern over jobs.csv", lambda: list(matcher.scan_lines(text)))
        lowered = [n.lower() for n in name_list]

        def naive() -> int:
            hits = 0
            for line in text.decode().splitlines():
                low = line.lower()
                hits += sum(1 for n in lowered if n in low)
            return hits
        _timed("peer: naive per-name loop over jobs.csv", naive)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS {peak:.0f} MB")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
