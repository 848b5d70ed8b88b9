"""``swftools replay``: options, outputs, exit codes."""

from __future__ import annotations

import json

import jsonschema
import pyarrow.csv as pacsv
import pytest
from typer.testing import CliRunner

from swftools.cli import app
from swftools.replay.result import summary_schema

from .conftest import trace_path

HEADER = "; Version: 2.2\n; UnixStartTime: 0\n; MaxNodes: 1\n; MaxProcs: 4\n"
# the first hand case: 1 node x 4 processors
JOBS = [(1, 0, 0, 100, 3, 3, 100), (2, 1, 99, 100, 4, 4, 100), (3, 2, 0, 500, 1, 1, 500)]


def swf_file(tmp_path, jobs=JOBS, header=HEADER, name="hand.swf"):
    lines = [" ".join(str(v) for v in (i, s, w, r, p, -1, -1, q, t, -1, 1, 1, 1, -1, 1, -1, -1, -1))
             for i, s, w, r, p, q, t in jobs]
    path = tmp_path / name
    path.write_text(header + "\n".join(lines) + "\n")
    return path


def run(*args):
    return CliRunner().invoke(app, ["replay", *map(str, args)])


def test_text_summary(tmp_path):
    res = run(swf_file(tmp_path))
    assert res.exit_code == 0, res.output
    assert "flat pool of 4 processors" in res.output
    assert "peak processors busy              4 of 4" in res.output


def test_json_summary_and_policy(tmp_path):
    res = run(swf_file(tmp_path), "--json", "--scheduler", "fcfs")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    jsonschema.validate(summary, summary_schema())
    assert summary["policy"] == "fcfs" and summary["jobs"] == 3 and summary["makespan_s"] == 700


def test_out_dir_and_compare(tmp_path):
    out = tmp_path / "out"
    res = run(swf_file(tmp_path), "--out", out, "--compare")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == [".swftools-output",  # the --force marker
        "compare.json", "compare.txt", "jobs.csv", "jobs.parquet", "skipped.csv", "summary.json"]
    starts = pacsv.read_csv(out / "jobs.csv").column("start_time").to_pylist()
    assert starts == [0, 100, 200]
    report = json.loads((out / "compare.json").read_text())
    # as recorded, job 3 jumped ahead at 2 and delayed job 2, which then had no room at 100
    assert report["impossible_starts"]["by_reason"] == {"before-submit": 0, "no-room": 1,
                                                        "delays-head": 1}
    assert "Consistency report" in res.output
    assert "Consistency report" in (out / "compare.txt").read_text()
    again = run(swf_file(tmp_path), "--out", out)
    assert again.exit_code == 2 and "already exists" in again.output
    forced = run(swf_file(tmp_path), "--out", out, "--force", "--procs", "8")
    assert forced.exit_code == 0
    assert json.loads((out / "summary.json").read_text())["capacity"] == 8
    assert not (out / "compare.json").exists()


def test_compare_json(tmp_path):
    res = run(swf_file(tmp_path), "--compare", "--json", "--kill-at-request")
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    assert set(payload) == {"summary", "compare"}
    assert payload["summary"]["kill_at_request"] is True


def test_gpu_model_from_site(tmp_path):
    res = run(swf_file(tmp_path), "--site", "aaic", "--allocation", "best-fit", "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["unit"] == "GPUs" and summary["allocation"] == "best-fit"
    assert summary["capacity"] == 320


@pytest.mark.parametrize("args,code,message", [
    (["--site", "aaic", "--procs", "4"], 2, "not both"),
    (["--scheduler", "sjf"], 2, "unknown policy"),
    (["--allocation", "worst-fit", "--site", "aaic"], 2, "unknown allocation"),
    (["--procs", "0"], 2, "positive processor count"),
])
def test_usage_errors(tmp_path, args, code, message):
    res = run(swf_file(tmp_path), *args)
    assert res.exit_code == code
    assert message in res.output


def test_missing_capacity_is_a_usage_error(tmp_path):
    res = run(swf_file(tmp_path, header="; Version: 2.2\n"))
    assert res.exit_code == 2
    assert "give --procs N" in res.output


def test_bad_input_exits_1_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text(HEADER + "1 0 0 x7 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    out = tmp_path / "out"
    res = run(bad, "--out", out)
    assert res.exit_code == 1
    assert "bad.swf:5" in res.output
    assert not out.exists()
    missing = run(tmp_path / "nope.swf")
    assert missing.exit_code == 1


@pytest.mark.slow
def test_real_trace_end_to_end(tmp_path):
    res = run(trace_path("NASA-iPSC-1993-3.1-cln.swf.gz"), "--compare", "--json")
    assert res.exit_code == 0, res.output[-2000:]
    payload = json.loads(res.output)
    assert payload["summary"]["jobs"] == 18239
    assert payload["summary"]["peak_busy"] <= 128
