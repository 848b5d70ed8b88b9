"""Data-package checks: descriptor profile, unsafe or missing paths, integrity, CSV cells."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from swftools.formats import datapackage

from .validate_support import aaic_table, assert_fires, assert_silent, run


@pytest.fixture(scope="module")
def package_template(tmp_path_factory):
    root = tmp_path_factory.mktemp("pkg") / "p"
    jobs = [{"user": f"u{i % 3}", "walltime_s": 100 + i} for i in range(40)]
    datapackage.write(aaic_table(jobs), root)
    return root


@pytest.fixture
def package(package_template, tmp_path):
    root = tmp_path / "p"
    shutil.copytree(package_template, root)
    return root


def edit_descriptor(root, change):
    path = root / "datapackage.json"
    desc = json.loads(path.read_text())
    change(desc)
    path.write_text(json.dumps(desc, indent=2))


def rewrite_csv(root, change):
    path = root / "data" / "jobs.csv.gz"
    lines = gzip.decompress(path.read_bytes()).decode().split("\n")
    path.write_bytes(gzip.compress("\n".join(change(lines)).encode(), mtime=0))


def test_a_written_package_is_valid(package):
    report = run(package)
    assert report.valid and report.rows == 40, [f.render() for f in report.findings]
    assert {"package-descriptor", "package-integrity", "schema-structure", "schema-type",
            "capacity-nodes"} <= set(report.rules_run)


def test_bad_json_is_one_finding(package):
    (package / "datapackage.json").write_text('{"resources": [\n  {"name": "jobs",,}\n]}')
    report = run(package)
    assert report.rule_counts() == {"package-descriptor": 1}
    found = report.findings[0]
    assert found.line == 2 and "not valid JSON" in found.message
    assert found.path.endswith("datapackage.json") and not report.valid


def test_absolute_and_missing_paths(package):
    def change(desc):
        desc["resources"][0]["path"] = "/etc/jobs.csv.gz"
        desc["resources"][1]["path"] = "data/gone.parquet"
    edit_descriptor(package, change)
    report = run(package)
    found = assert_fires(report, "package-descriptor")
    messages = " | ".join(f.message for f in found)
    assert "'/etc/jobs.csv.gz'" in messages and "absolute" in messages
    assert "'data/gone.parquet' does not exist" in messages
    assert "unreadable-input" not in report.fired()  # the descriptor findings explain it


def test_profile_violations_come_from_frictionless(package):
    edit_descriptor(package, lambda d: d.update({"name": 5}))
    found = assert_fires(run(package, "package-descriptor"), "package-descriptor")
    assert any("'name'" in f.message for f in found)


def test_missing_jobs_resource(package):
    edit_descriptor(package, lambda d: d["resources"][0].update({"name": "tasks"}))
    found = assert_fires(run(package, "package-descriptor"), "package-descriptor")
    assert any(f.message == "no 'jobs' resource" for f in found)


def test_every_bad_cell_is_reported_with_its_line(package):
    def change(lines):
        header = [h.strip("\"") for h in lines[0].split(",")]
        col = header.index("gpus")
        for n in (5, 9):
            cells = lines[n - 1].split(",")
            cells[col] = "x7"
            lines[n - 1] = ",".join(cells)
        return lines
    rewrite_csv(package, change)
    report = run(package)
    found = assert_fires(report, "schema-type", 2)
    assert [(f.line, f.field, f.value) for f in found] == [(5, "gpus", "x7"), (9, "gpus", "x7")]
    assert found[0].path.endswith("data/jobs.csv.gz") and found[0].message == "'x7' is not an integer"
    integrity = assert_fires(report, "package-integrity")
    assert {f.field for f in integrity} == {"bytes", "hash"}


def test_semantic_rules_still_run_when_the_reader_refuses(package):
    (package / "data" / "jobs.parquet").unlink()
    edit_descriptor(package, lambda d: d["resources"].pop(1))

    def change(lines):
        header = [h.strip("\"") for h in lines[0].split(",")]
        cells = lines[3].split(",")
        cells[header.index("gpus")] = "lots"
        cells[header.index("queue")] = '"Galaxy"'
        lines[3] = ",".join(cells)
        return lines
    rewrite_csv(package, change)
    report = run(package, site="aaic")
    assert_fires(report, "schema-type", 1)
    found = assert_fires(report, "queue-unknown", 1)
    assert found[0].line == 4 and found[0].path.endswith("data/jobs.csv.gz")


def test_header_must_match_the_table_schema(package):
    def change(lines):
        lines[0] = lines[0].replace("gpus_per_node", "gpn")
        return lines
    rewrite_csv(package, change)
    found = assert_fires(run(package, "schema-structure"), "schema-structure", 2)
    assert {f.field for f in found} == {"gpus_per_node", "gpn"} and found[0].line == 1


def test_integrity_of_parquet_too(package):
    with open(package / "data" / "jobs.parquet", "ab") as fh:
        fh.write(b"junk")
    found = assert_fires(run(package, "package-integrity"), "package-integrity", 1)
    assert found[0].path.endswith("jobs.parquet") and "swftools.files" in found[0].message


def test_not_a_package(tmp_path):
    report = run(tmp_path)
    assert report.rule_counts() == {"package-descriptor": 1}
    assert_silent(report, "unreadable-input")


def test_bad_cells_across_record_batches_keep_their_lines(package, monkeypatch):
    # issue 15: the cell checks stream the CSV in record batches; lines count across batches
    from swftools.validate import package_checks

    monkeypatch.setattr(package_checks, "SCAN_BLOCK_BYTES", 600)  # a few rows per batch

    def change(lines):
        header = [h.strip("\"") for h in lines[0].split(",")]
        for n, column in ((3, "gpus"), (17, "nodes"), (40, "gpus")):
            cells = lines[n - 1].split(",")
            cells[header.index(column)] = "x7"
            lines[n - 1] = ",".join(cells)
        return lines
    rewrite_csv(package, change)
    found = assert_fires(run(package), "schema-type", 3)
    assert sorted((f.line, f.field) for f in found) == [(3, "gpus"), (17, "nodes"), (40, "gpus")]
