"""The replay consistency summary: the recorded schedule against FCFS + EASY on the site.

One-line findings (``findings``) that the HTML report page and a release's README both show.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from swftools.site import Site
from swftools.errors import count


def findings(table: pa.Table, site: Site | None) -> list[str]:
    """Replay ``table`` with EASY backfilling on ``site`` and compare it with the recorded schedule."""
    from swftools.replay import replay
    from swftools.replay.compare import compare

    result = replay(table, site=site, policy="easy")
    return lines(compare(table, result), result.skipped.num_rows)


def lines(report: dict[str, Any], skipped: int = 0) -> list[str]:
    """The findings of a ``replay.compare`` report as sentences."""
    out = [f"Model: {report['model']}; {report['recorded_jobs']:,} jobs with a recorded "
           f"schedule, {report['replayed_jobs']:,} replayed"
           + (f", {skipped:,} skipped (see the replay report)" if skipped else "") + "."]
    cv = report["capacity_violations"]
    out.append(f"Capacity violations in the recorded schedule: {count(cv['periods'], 'period')}"
               + (f", {cv['total_s']:,} s in total, at most {cv['max_excess']} "
                  f"{report['unit']} over capacity." if cv["periods"] else "."))
    imp = report["impossible_starts"]
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(imp["by_reason"].items()))
    out.append(f"Recorded starts impossible under FCFS + EASY: {imp['jobs']:,}"
               + (f" ({kinds})." if kinds else "."))
    overall = report["distributions"].get("(all)")
    if overall:
        wait, bsld = overall["wait_s"], overall["bounded_slowdown"]
        out.append(f"Mean wait recorded {wait['recorded']['mean']} s vs replayed "
                   f"{wait['replayed']['mean']} s (KS {wait['ks']['statistic']}); mean bounded "
                   f"slowdown {bsld['recorded']['mean']} vs {bsld['replayed']['mean']}.")
    return out
