"""``swftools whatif profile``: exit codes, --force, --json."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from swftools.cli import app
from swftools.site import load_site
from swftools.whatif.profile import generate_profile


def _run(*args):
    return CliRunner().invoke(app, ["whatif", "profile", *args])


def test_profile_writes_the_generated_file(tmp_path):
    out = tmp_path / "scores.csv"
    result = _run("--site", "aaic", "--spread", "0.05", "--seed", "1", "--classes", "4",
                  "--out", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == generate_profile(load_site("aaic"), spread=0.05, seed=1).to_csv()
    assert "320 GPUs" in result.output and "class 3" in result.output


def test_existing_output_needs_force(tmp_path):
    out = tmp_path / "scores.csv"
    out.write_text("keep")
    result = _run("--site", "aaic", "--seed", "2", "-o", str(out))
    assert result.exit_code == 2 and "already exists" in result.output
    assert out.read_text() == "keep"
    result = _run("--site", "aaic", "--seed", "2", "-o", str(out), "--force")
    assert result.exit_code == 0 and out.read_text().startswith("node,gpu_index,score,class\n")


def test_json_result(tmp_path):
    out = tmp_path / "p.csv"
    result = _run("--site", "aaic-v100-half", "--spread", "0.1", "--seed", "3", "--classes", "2",
                  "--distribution", "uniform", "-o", str(out), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["out"] == str(out) and doc["site"] == "aaic-v100-half" and doc["gpus"] == 320
    assert doc["distribution"] == "uniform" and [c["class"] for c in doc["classes"]] == [0, 1]
    assert doc["classes"][0]["min"] >= doc["classes"][1]["max"]


def test_usage_and_input_errors_write_nothing(tmp_path):
    out = tmp_path / "p.csv"
    assert _run("--site", "aaic", "--spread", "0.5", "-o", str(out)).exit_code == 2
    assert _run("--site", "aaic", "--distribution", "zipf", "-o", str(out)).exit_code == 2
    assert _run("--site", "aaic").exit_code == 2  # no --out
    bad = tmp_path / "site.json"
    bad.write_text(json.dumps({**load_site("aaic").settings, "racks": [0] * 41}))
    result = _run("--site", str(bad), "-o", str(out))
    assert result.exit_code == 1 and "racks/40" in result.output
    assert not out.exists()
