"""``swftools report`` on every real SWF trace in ../shared/traces (slow).

Each trace gets a complete report; the analyses its fields cannot support are skipped with the
reason, and exactly those (asserted per trace from SOURCES.md's notes on -1 fields).
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from swftools.report import report
from swftools.resources import load_json
from tests.conftest import SWF_TRACES, trace_path

NO_ORIGIN = "no UnixStartTime"
NO_REQUEST = "requested walltime is unknown"
NO_QUEUE = "no queue is recorded"
NO_START = "start_time, finish_time unknown"
NO_OUTCOME = "neither termination codes nor SWF status"
# trace -> {skipped section: part of the reason}
EXPECTED_SKIPS = {
    "CEA-Curie-2011-2.1-cln.swf.gz": {"queues": NO_QUEUE},
    "HPC2N-2002-2.1-cln.swf.gz": {"queues": NO_QUEUE},
    "KTH-SP2-1996-2.1-cln.swf.gz": {"queues": NO_QUEUE},
    "LLNL-Thunder-2007-1.1-cln.swf.gz": {"queues": NO_QUEUE, "utilization": NO_START},
    "METACENTRUM-2009-2.swf.gz": {"wra": NO_REQUEST, "arrivals": NO_ORIGIN,
                                  "per_quarter": NO_ORIGIN},
    "NASA-iPSC-1993-3-excerpt228.swf.gz": {"wra": NO_REQUEST, "outcomes": NO_OUTCOME,
                                           "utilization": NO_START},
    "NASA-iPSC-1993-3.1-cln.swf.gz": {"wra": NO_REQUEST, "queues": NO_QUEUE,
                                      "outcomes": NO_OUTCOME, "utilization": NO_START},
    "RICC-2010-2.swf.gz": {"arrivals": NO_ORIGIN, "per_quarter": NO_ORIGIN},
    "SDSC-BLUE-2000-4.2-cln.swf.gz": {},
    "lublin_256.swf.gz": {"wra": NO_REQUEST, "arrivals": NO_ORIGIN, "per_quarter": NO_ORIGIN,
                          "utilization": NO_START},
}


def test_every_shared_trace_has_expectations():
    assert set(SWF_TRACES) <= set(EXPECTED_SKIPS), set(SWF_TRACES) - set(EXPECTED_SKIPS)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED_SKIPS))
def test_report_on_real_trace(name, tmp_path):
    result = report(trace_path(name), tmp_path / "rep")
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    jsonschema.Draft202012Validator(load_json("report.schema.json")).validate(data)
    sections = {**data["analyses"], **data["context"]}
    skipped = {k: v["reason"] for k, v in sections.items() if v["status"] == "skipped"}
    assert set(skipped) == set(EXPECTED_SKIPS[name])
    for section, reason in EXPECTED_SKIPS[name].items():
        assert reason in skipped[section], (section, skipped[section])
    assert data["trace"]["processing_element"] == "processor"
    assert data["analyses"]["parallelism"]["status"] == "ok"
    assert data["analyses"]["walltime"]["status"] == "ok"
    for figure in result.figures:
        assert (tmp_path / "rep" / figure).stat().st_size > 1000
    # Every skip reason is also written in report.md.
    markdown = (tmp_path / "rep" / "report.md").read_text()
    for reason in skipped.values():
        assert reason in markdown
