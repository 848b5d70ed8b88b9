"""``swftools validate``: output forms, exit codes, options."""

from __future__ import annotations

import json

import jsonschema
from typer.testing import CliRunner

from swftools.cli import app
from swftools.resources import load_json
from swftools.validate import describe_rules

from .validate_support import swf_jobs, swf_line, write_swf

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, ["validate", *map(str, args)])


def test_valid_file_exits_0_with_a_summary_table(tmp_path):
    result = invoke(write_swf(tmp_path / "ok.swf", swf_jobs(3)))
    assert result.exit_code == 0, result.output
    assert "valid: 0 errors, 0 warnings" in result.output and "rule" in result.output


def test_invalid_file_exits_1_with_located_findings(tmp_path):
    lines = [swf_line(1, submit=100), swf_line(2, submit=50)]
    path = write_swf(tmp_path / "bad.swf", lines)
    result = invoke(path)
    assert result.exit_code == 1
    assert (f"{path}:21: job 2: submit_time: error [submit-order] submitted 50 s before the "
            "previous job (line 20)") in result.output
    assert "INVALID" in result.output


def test_json_output_follows_the_schema(tmp_path):
    good = write_swf(tmp_path / "ok.swf", swf_jobs(3), n=9)
    bad = write_swf(tmp_path / "bad.swf", [swf_line(1, status=9)])
    result = invoke("--json", good, bad)
    assert result.exit_code == 1
    document = json.loads(result.output)
    jsonschema.Draft202012Validator(load_json("validation-report.schema.json")).validate(document)
    assert [r["valid"] for r in document["reports"]] == [True, False]
    assert document["reports"][0]["counts"][0]["rule"] == "swf-header-counts"


def test_output_file_is_written_and_never_overwritten(tmp_path):
    path = write_swf(tmp_path / "ok.swf", swf_jobs(3))
    out = tmp_path / "report.json"
    assert invoke(path, "--out", out).exit_code == 0
    assert json.loads(out.read_text())["valid"] is True
    result = invoke(path, "--out", out)
    assert result.exit_code == 2 and "already exists" in result.output
    assert invoke(path, "--out", out, "--force").exit_code == 0


def test_summary_only(tmp_path):
    result = invoke("--summary", write_swf(tmp_path / "c.swf", swf_jobs(3), n=9))
    assert "swf-header-counts" in result.output and "[swf-header-counts]" not in result.output


def test_rule_selection_and_usage_errors(tmp_path):
    path = write_swf(tmp_path / "bad.swf", [swf_line(1, submit=100), swf_line(2, submit=50)])
    assert invoke(path, "--skip-rules", "submit-order").exit_code == 0
    assert invoke(path, "--rules", "missing-values,job-id-gaps").exit_code == 0
    result = invoke(path, "--rules", "bogus-rule")
    assert result.exit_code == 2 and "bogus-rule" in result.output
    assert invoke().exit_code == 2
    assert invoke(path, "--json", "--summary").exit_code == 2
    assert invoke(path, "--max-findings", "-3").exit_code == 2


def test_max_findings_makes_a_partial_report(tmp_path):
    lines = [swf_line(i + 1, submit=1000 - i) for i in range(8)]
    result = invoke(write_swf(tmp_path / "p.swf", lines), "--max-findings", "2", "--rules",
                    "submit-order")
    assert result.exit_code == 1
    assert result.output.count("[submit-order]") == 2
    assert "partial report: 2 of 7 findings shown" in result.output


def test_unreadable_input_is_one_error_not_a_traceback(tmp_path):
    path = tmp_path / "garbage.swf"
    path.write_bytes(b"\x89PNG\x00\x00binary")
    result = invoke(path)
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "error [unreadable-input] binary data" in result.output
    assert "Traceback" not in result.output


def test_list_rules_names_every_rule():
    result = runner.invoke(app, ["validate", "--list-rules"])
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.output.splitlines()]
    assert listed == [row[0] for row in describe_rules()]


def test_flurry_options(tmp_path):
    lines = [swf_line(i + 1, submit=i) for i in range(30)]
    path = write_swf(tmp_path / "f.swf", lines)
    assert "[flurry]" not in invoke(path).output
    result = invoke(path, "--flurry-jobs", "20", "--flurry-window", "60", "--flurry-share", "0.5")
    assert "[flurry] user 1 submitted 30 jobs" in result.output and result.exit_code == 0
