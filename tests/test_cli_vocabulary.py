"""One CLI vocabulary: ``--out/-o`` (old spellings kept one release with a warning), ``--json``
results, and the one ``--site`` rule."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from swftools import formats
from swftools.cli import app
from swftools.table import get_metadata

from .validate_support import swf_jobs, write_swf

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "aaic-sample.csv.gz"
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_positional_output_still_works_with_a_warning(tmp_path):
    result = invoke("convert", SAMPLE, tmp_path / "a.swf")
    assert result.exit_code == 0, result.output
    assert "swftools: warning: the positional OUT is deprecated, use --out" in result.stderr
    assert (tmp_path / "a.swf").is_file()
    result = invoke("synth", "--jobs", "20", tmp_path / "s.csv")
    assert result.exit_code == 0 and "deprecated, use --out" in result.stderr


def test_output_given_twice_or_never_is_a_usage_error(tmp_path):
    both = invoke("convert", SAMPLE, tmp_path / "a.swf", "--out", tmp_path / "b.swf")
    assert both.exit_code == 2 and "give the output once" in both.stderr
    assert not (tmp_path / "a.swf").exists() and not (tmp_path / "b.swf").exists()
    neither = invoke("convert", SAMPLE)
    assert neither.exit_code == 2 and "--out" in neither.stderr


def test_validate_output_and_format_aliases_warn(tmp_path):
    path = write_swf(tmp_path / "ok.swf", swf_jobs(3))
    result = invoke("validate", path, "--output", tmp_path / "r.json", "--format", "swf")
    assert result.exit_code == 0, result.output
    assert "swftools: warning: --output is deprecated, use --out" in result.stderr
    assert "swftools: warning: --format is deprecated, use --from" in result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["valid"] is True
    result = invoke("validate", path, "-o", tmp_path / "s.json")
    assert result.exit_code == 0 and "warning" not in result.stderr


def test_json_results(tmp_path):
    result = invoke("synth", "--jobs", "30", "--seed", "2", "-o", tmp_path / "s.csv", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["jobs"] == 30
    result = invoke("convert", tmp_path / "s.csv", "-o", tmp_path / "s.swf", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["jobs"] == 30 and doc["to_format"] == "swf" and doc["site"] == "aaic"


def test_site_rule_convert_follows_the_trace(tmp_path):
    """No --site: an NQSII log gets the AAIC preset (its reader's default) and keeps it; an SWF
    trace naming no site gets none (convert used to force aaic)."""
    assert invoke("convert", SAMPLE, "-o", tmp_path / "p").exit_code == 0
    assert get_metadata(formats.read(tmp_path / "p"))["site"] == "aaic"
    swf = write_swf(tmp_path / "t.swf", swf_jobs(3))
    result = invoke("convert", swf, "-o", tmp_path / "t-pkg", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["site"] is None
