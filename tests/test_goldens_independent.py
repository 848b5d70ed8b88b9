"""Golden files checked by hand-written expectations, not by the code that wrote them (issue 30:
a golden file records the code's own output, so each also gets assertions a reader can check
against the format's definition).

* ``swf/aaic-small.swf``: every field of the three job lines from the hand table by the SWF
  definitions (times relative to ``UnixStartTime``, -1 unknown, users and groups numbered by
  first appearance, queues by the header's ``Queue`` lines, status by the header's note), and
  the header's counts and times worked out by hand;
* ``datapackage/``: the CSV read with the ``csv`` module is the hand table, its header is the
  schema's field list, and the descriptor points at the files that exist.

(The PBS, Slurm, Alibaba and NQSII goldens are hand-written expectations already; the Batsim
and DLSim goldens are read back through their simulators' own loaders in their test modules.)"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from .test_formats_datapackage import tiny_table
from .test_formats_swf import small_aaic_table

GOLDEN = Path(__file__).resolve().parent / "golden"


def _swf(path: Path) -> tuple[dict[str, list[str]], list[list[int]]]:
    header: dict[str, list[str]] = {}
    jobs = []
    for line in path.read_text().splitlines():
        if line.startswith(";"):
            key, _, value = line[1:].partition(":")
            header.setdefault(key.strip(), []).append(value.strip())
        elif line.strip():
            jobs.append([int(f) for f in line.split()])
    return header, jobs


def test_swf_golden_fields_follow_the_format_by_hand():
    header, jobs = _swf(GOLDEN / "swf" / "aaic-small.swf")
    table = small_aaic_table().to_pydict()
    t0 = 1500000000  # the earliest submit time
    assert header["UnixStartTime"] == [str(t0)]
    assert header["MaxJobs"] == header["MaxRecords"] == ["3"]
    assert header["StartTime"] == ["Fri Jul 14 11:40:00 JST 2017"]  # 02:40 UTC + 9 h
    assert header["EndTime"] == ["Fri Jul 14 14:42:05 JST 2017"]  # last finish, 1500010925
    assert header["MaxProcs"] == ["320"] and header["MaxNodes"] == ["40"]  # 40 nodes x 8 GPUs
    queues = {m.group(2): int(m.group(1)) for m in
              (re.match(r"(\d+) (\w+)", q) for q in header["Queue"])}
    assert queues == {"Normal": 1, "Short": 2, "Middle": 3, "Long": 4}
    status = {0: 1, 1: 0, 2: 0, 3: 5, 4: 5}  # the header's note, and the SWF definition
    assert any("0->1, 1->0, 2->0, 3->5, 4->5" in note for note in header["Note"])
    users = {"alice": 1, "bob": 2, "carol": 3}  # by first appearance in submit order
    groups = {"vision": 1, "speech": 2}
    for k, fields in enumerate(jobs):
        assert len(fields) == 18
        assert fields == [
            table["job_id"][k], table["submit_time"][k] - t0, table["wait_s"][k],
            table["walltime_s"][k], table["gpus"][k], -1, -1, table["gpus"][k],
            table["requested_walltime_s"][k], -1, status[table["termcode"][k]],
            users[table["user"][k]], groups[table["group"][k]], -1, queues[table["queue"][k]],
            1, -1, -1], k
        # start = submit + wait; finish = start + run
        assert table["submit_time"][k] + fields[2] == table["start_time"][k]
        assert table["start_time"][k] + fields[3] == table["finish_time"][k]


def test_datapackage_golden_csv_is_the_hand_table():
    root = GOLDEN / "datapackage"
    with open(root / "data" / "jobs.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    schema = json.loads((root / "schemas" / "jobs.json").read_text())
    assert rows[0] == [f["name"] for f in schema["fields"]]
    hand = tiny_table().to_pydict()
    assert len(rows) == 1 + len(hand["job_id"])
    for k, row in enumerate(rows[1:]):
        cells = dict(zip(rows[0], row))
        for name, values in hand.items():
            value = values[k]
            assert cells[name] == ("" if value is None else str(value)), (k, name)
        others = set(rows[0]) - set(hand)
        assert all(cells[name] == "" for name in others), k  # nothing the table lacks
    desc = json.loads((root / "datapackage.json").read_text())
    assert desc["licenses"][0]["name"] == "CC-BY-SA-4.0"
    paths = {r["name"]: (r["path"], r["schema"]) for r in desc["resources"]}
    assert paths["jobs"] == ("data/jobs.csv.gz", "schemas/jobs.json")
    assert paths["jobs-parquet"][1] == "schemas/jobs-parquet.json"
    parquet = json.loads((root / "schemas" / "jobs-parquet.json").read_text())
    assert [f["name"] for f in parquet["fields"]] == rows[0]  # the same columns, in order
