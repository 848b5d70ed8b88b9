"""Issue 27: an audit with no raw name to search for (an SWF trace's numeric user ids) says so in
the same words and with the same exit code in ``audit``, ``release`` and ``verify --raw``, never
CLEAN; the re-identification report uses the job-size columns the trace records."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from swftools.cli import app
from swftools.cli.common import EXIT_NOTHING_TO_SEARCH
from swftools.privacy.audit import audit, nothing_to_search
from swftools.resources import load_json

from .validate_support import swf_line, write_swf

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "archive" / "release-settings.example.json"
runner = CliRunner()


def _cli(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def swf_release(tmp_path_factory):
    """An SWF trace with numeric user and group ids, released without a key."""
    tmp = tmp_path_factory.mktemp("nothing")
    lines = [swf_line(i + 1, submit=600 * i, procs=(1, 4, 16)[i % 3], req_procs=(1, 4, 16)[i % 3],
                      user=1 + i % 3, group=1 + i % 2) for i in range(12)]
    trace = write_swf(tmp / "numeric.swf", lines)
    result = _cli("release", trace, "-o", tmp / "rel", "--version", "1.0.0", "--settings",
                  SETTINGS)
    assert result.exit_code == EXIT_NOTHING_TO_SEARCH, result.output
    return trace, tmp / "rel", result


def _warning(stderr: str) -> str:
    lines = [l for l in stderr.splitlines() if l.startswith("swftools: warning: nothing to search")]
    assert len(lines) == 1, stderr
    return lines[0]


def test_audit_release_and_verify_say_the_same(swf_release):
    trace, archive, released = swf_release
    audited = _cli("audit", archive, "--raw", trace)
    verified = _cli("verify", archive, "--raw", trace)
    for result in (audited, verified):
        assert result.exit_code == EXIT_NOTHING_TO_SEARCH, result.output
    said = {_warning(r.stderr) for r in (released, audited, verified)}
    assert said == {f"swftools: warning: {nothing_to_search(5)}"}  # users 1-3, groups 1-2
    assert "CLEAN" not in audited.stdout and "NOTHING TO SEARCH" in audited.stdout
    assert "no raw name found" not in verified.stdout


def test_audit_json_status_is_nothing_to_search(swf_release):
    trace, archive, _ = swf_release
    result = _cli("audit", archive, "--raw", trace, "--json")
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, load_json("audit-report.schema.json"))
    assert doc["status"] == "nothing-to-search" and doc["clean"] is False
    verified = json.loads(_cli("verify", archive, "--raw", trace, "--json").stdout)
    assert verified["ok"] is True and verified["nothing_to_search"] == nothing_to_search(5)


def test_a_found_key_still_fails(tmp_path):
    """No raw name, but the key is searched for: finding it is a leak (exit 1), not nothing."""
    key = b"nothing-to-search-test-key-0123456789"
    (tmp_path / "a.txt").write_bytes(b"1 2 3 " + key.hex().encode() + b"\n")
    report = audit(tmp_path, {"user": ["17"]}, key=key)
    assert report.failed and report.status == "leaks" and report.nothing_to_search is None
    clean = tmp_path / "b"
    clean.mkdir()
    (clean / "a.txt").write_text("1 2 3\n")
    report = audit(clean, {"user": ["17"]}, key=key)
    assert report.status == "nothing-to-search" and not report.clean
    assert report.nothing_to_search == nothing_to_search(1)


def test_reidentification_uses_the_recorded_size_columns(swf_release):
    """An SWF trace records no nodes or GPUs per node: its processors (the gpus column) are the
    job size; columns of unknowns are left out and named."""
    _, archive, _ = swf_release
    report = audit(archive, {"user": ["1"]})
    kanon = report.reidentification
    assert kanon is not None
    assert "gpus" in kanon.quasi_identifiers
    assert not {"nodes", "gpus_per_node", "cpus"} & set(kanon.quasi_identifiers)
    assert all(entry["values"]["gpus"] in (1, 4, 16) for entry in kanon.smallest)
    assert any("does not record: nodes, gpus_per_node" in note for note in report.notes)
    assert "gpus counts processors in this trace" in report.notes
