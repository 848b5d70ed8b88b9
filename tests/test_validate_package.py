"""Data-package checks: descriptor profile, unsafe or missing paths, integrity, CSV cells."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from swftools.formats import datapackage
from swftools.validate.package_checks import load_package

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


def _csv_only_with_cells(package, index, **cells):
    """The package without its Parquet file, CSV line ``index + 1`` with ``cells`` replaced."""
    (package / "data" / "jobs.parquet").unlink()
    edit_descriptor(package, lambda d: d["resources"].pop(1))

    def change(lines):
        header = [h.strip("\"") for h in lines[0].split(",")]
        row = lines[index].split(",")
        for name, value in cells.items():
            row[header.index(name)] = value
        lines[index] = ",".join(row)
        return lines
    rewrite_csv(package, change)


def test_semantic_rules_still_run_when_the_reader_refuses(package):
    _csv_only_with_cells(package, 3, gpus="lots", queue='"Galaxy"')
    report = run(package, site="aaic")
    assert report.rows == 40  # the fallback table's, read from the CSV cells
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


# --- issue 30: each descriptor, integrity and cell finding, word for word ---------------------

def _descriptor_findings(package, text: bytes | str, display=None):
    data = text if isinstance(text, bytes) else text.encode()
    (package / "datapackage.json").unlink()
    (package / "datapackage.json").write_bytes(data)
    report = run(display or package, "package-descriptor")
    return [(f.path, f.line, f.message, f.expected) for f in report.findings]


def test_an_unreadable_descriptor_is_one_located_finding(package):
    where, exp = str(package / "datapackage.json"), "a JSON data package descriptor"
    assert _descriptor_findings(package, '{\n "a": 1,\n "b": ]}') == [
        (where, 3, "not valid JSON: Expecting value (column 7)", exp)]
    assert _descriptor_findings(package, "[1, 2]") == [
        (where, 1, "not a data package descriptor (expected a JSON object)", exp)]
    found = _descriptor_findings(package, b'{"name": "\xff"}')
    assert [(p, line, m[:12], e) for p, line, m, e in found] == [(where, None, "cannot read:", exp)]
    (package / "datapackage.json").unlink()
    (package / "datapackage.json").mkdir()
    found = [(f.line, f.message[:12]) for f in run(package, "package-descriptor").findings]
    assert found == [(None, "cannot read:")]


def test_findings_show_paths_as_the_package_was_named(package, monkeypatch):
    monkeypatch.chdir(package.parent)
    pkg = load_package(package / "datapackage.json", "p/datapackage.json")
    assert pkg.root == package and pkg.shown("data/x.csv") == "p/data/x.csv"
    assert load_package(package, "p").shown("a") == "p/a"
    monkeypatch.chdir(package)
    pkg = load_package(package / "datapackage.json", "datapackage.json")
    assert pkg.display_root == "" and pkg.shown("data/x.csv") == "data/x.csv"
    assert load_package(package.parent / "none", "none").load_error == \
        ("no datapackage.json (not a data package)", None)


def test_descriptor_findings_point_at_the_line_of_the_path(package):
    def change(desc):
        desc["resources"][0]["path"] = "../jobs.csv.gz"
        desc["resources"][1]["path"] = ["data/jobs.parquet", 7, "data/gone.parquet"]
    edit_descriptor(package, change)
    lines = (package / "datapackage.json").read_text().split("\n")
    line_of = {v: next(i for i, t in enumerate(lines, 1) if f'"{v}"' in t)
               for v in ("../jobs.csv.gz", "data/gone.parquet")}
    found = [(f.line, f.message, f.value, f.expected)
             for f in run(package, "package-descriptor").findings if f.value is not None]
    assert found == [
        (line_of["../jobs.csv.gz"], "resource 'jobs': path '../jobs.csv.gz' climbs out of the "
         "package with '..'", "../jobs.csv.gz", "a relative path inside the package"),
        (line_of["data/gone.parquet"], "resource 'jobs-parquet': file 'data/gone.parquet' does "
         "not exist", "data/gone.parquet", "an existing file")]


def _integrity(package, hash_value, drop_recorded=False):
    def change(desc):
        if hash_value is None:
            desc["resources"][0].pop("hash")
        else:
            desc["resources"][0]["hash"] = hash_value
        if drop_recorded:
            desc["swftools"]["files"].pop("data/jobs.csv.gz")
    edit_descriptor(package, change)
    report = run(package, "package-integrity")
    return [(f.field, f.message.split(": ", 1)[1], f.expected) for f in report.findings]


def test_declared_hashes_are_checked_by_their_algorithm(package):
    import hashlib
    data = (package / "data" / "jobs.csv.gz").read_bytes()
    digests = {a: getattr(hashlib, a)(data).hexdigest() for a in ("md5", "sha1", "sha256")}
    differs = "{} checksum differs from the descriptor's {} (changed or damaged file)"
    assert _integrity(package, f"SHA1:{digests['sha1'].upper()}") == []
    assert _integrity(package, digests["md5"]) == []  # no prefix: md5
    assert _integrity(package, "md5:" + "0" * 32) == [("hash", differs.format("md5", "hash"),
                                                       "0" * 32)]
    assert _integrity(package, "crc32:00000000") == []  # an algorithm not checked
    assert _integrity(package, "sha256:" + "0" * 64) == [
        ("hash", differs.format("sha256", "hash"), "0" * 64)]  # not twice (swftools.files)
    edit_descriptor(package, lambda d: d["swftools"]["files"]["data/jobs.csv.gz"].update(
        {"sha256": "A" * 64}))
    assert _integrity(package, None) == [
        ("hash", differs.format("sha256", "swftools.files"), "a" * 64)]
    assert _integrity(package, "", drop_recorded=True) == []
    edit_descriptor(package, lambda d: d["resources"][0].update({"bytes": 1}))
    size = (package / "data" / "jobs.csv.gz").stat().st_size
    found = run(package, "package-integrity").findings
    assert [(f.field, f.message, f.value, f.expected) for f in found if f.field == "bytes"] == [
        ("bytes", f"resource 'jobs': {size} bytes, the descriptor declares 1", size, "1")]


def test_an_empty_csv_cannot_be_parsed(package):
    (package / "data" / "jobs.csv.gz").write_bytes(gzip.compress(b"", mtime=0))
    found = assert_fires(run(package, "schema-structure"), "schema-structure", 1)
    assert found[0].message == "the CSV cannot be parsed: empty file (no header row)"


def test_missing_values_of_the_schema_are_not_bad_cells(package):
    def change(lines):
        header = [h.strip("\"") for h in lines[0].split(",")]
        for n, value in ((2, "NA"), (3, "n/a"), (4, "x7")):
            cells = lines[n - 1].split(",")
            cells[header.index("gpus")] = value
            lines[n - 1] = ",".join(cells)
        return lines
    rewrite_csv(package, change)
    schema_path = package / "schemas" / "jobs.json"
    schema = json.loads(schema_path.read_text())
    schema["missingValues"] = ["", "NA", {"value": "n/a"}]
    schema_path.write_text(json.dumps(schema))
    found = run(package, "schema-type").findings
    assert [(f.line, f.value) for f in found] == [(4, "x7")]


def _structure(package, schema):
    edit_descriptor(package, lambda d: d["resources"][0].update({"schema": schema}))
    report = run(package, "schema-structure")
    return [f.message for f in report.findings], report.skipped.get("schema-structure")


def test_the_table_schema_comes_from_the_descriptor_file_or_the_canonical_one(package):
    schema = json.loads((package / "schemas" / "jobs.json").read_text())
    fewer = dict(schema, fields=[f for f in schema["fields"] if f["name"] != "gpus"])
    col = 1 + [f["name"] for f in schema["fields"]].index("gpus")
    extra = [f"column {col} 'gpus' is not in the Table Schema"]
    assert _structure(package, fewer) == (extra, None)  # inline
    (package / "schemas" / "fewer.json").write_text(json.dumps(fewer))
    assert _structure(package, "schemas/fewer.json") == (extra, None)  # a file of the package
    (package / "schemas" / "list.json").write_text(json.dumps([fewer]))
    (package / "schemas" / "bad.json").write_text("{")
    (package.parent / "fewer.json").write_text(json.dumps(fewer))
    assert _structure(package, "../fewer.json") == (
        ["resource 'jobs': schema '../fewer.json' climbs out of the package with '..'"], None)
    for fallback in ("https://example.org/fewer.json", "schemas/list.json",
                     "schemas/bad.json", "schemas/none.json", {"fields": "gpus"}):
        assert _structure(package, fallback) == ([], None), fallback  # the canonical schema


def test_a_jobs_resource_that_is_not_a_csv_file_skips_the_cell_rules(package):
    edit_descriptor(package, lambda d: d["resources"][0].update({"format": "parquet"}))
    report = run(package, "schema-structure", "schema-type")
    assert report.rules_run == [] and set(report.skipped) == {"schema-structure", "schema-type"}


def test_the_fallback_table_is_built_from_the_csv_cells(package):
    """When the reader refuses, the job table comes from the cells: bad cells unknown, rows
    without an id left out (their lines skipped), the descriptor's metadata kept."""
    from swftools import table as jt
    from swftools.validate.package_checks import table_from_cells

    def change(lines):
        header = [h.strip("\"") for h in lines[0].split(",")]
        rows = [line.split(",") for line in lines[1:6]]
        rows[1][header.index("job_id")] = ""                   # line 3: no id
        rows[2][header.index("gpus")] = "x7"                   # line 4: not an integer
        rows[2][header.index("user")] = ""                     # unknown user
        rows[3][header.index("avg_cpu_time_s")] = "12.5"       # line 5: a number
        rows[4][header.index("avg_cpu_time_s")] = "1e"         # line 6: not a number
        lines[1:6] = [",".join(r) for r in rows]
        return lines
    rewrite_csv(package, change)
    table, lines = table_from_cells(load_package(package, str(package)))
    assert lines.tolist()[:5] == [2, 4, 5, 6, 7] and table.num_rows == 39
    assert table.column("job_id").to_pylist()[:4] == [1, 3, 4, 5]
    assert table.column("gpus").to_pylist()[:3] == [1, None, 1]
    assert table.column("user").to_pylist()[:3] == ["u0", None, "u0"]
    assert table.column("avg_cpu_time_s").to_pylist()[:4] == [None, None, 12.5, None]
    meta = jt.get_metadata(table)
    assert (meta["time_zone"], meta["source_format"], meta["site"]) == ("Asia/Tokyo", "package",
                                                                         "aaic")


def test_a_descriptor_finding_names_the_line_of_a_path_on_the_first_line(package):
    (package / "datapackage.json").write_text(
        '{"resources": [{"name": "jobs", "path": "../x.csv"}, {"name": "ü",\n'
        '"path": "/ü.csv"}]}', encoding="utf-8")  # non-ASCII as written, not escaped
    found = [(f.line, f.value) for f in run(package, "package-descriptor").findings
             if f.value is not None]
    assert found == [(1, "../x.csv"), (2, "/ü.csv")]
    (package / "datapackage.json").write_text(  # a leading newline; a path written twice
        '\n{"resources": [{"name": "jobs", "path": "../x.csv"},\n'
        '{"name": "b", "path": "../x.csv"}, {"name": "c", "path": "\\/abs.csv"}]}')
    found = [(f.line, f.value) for f in run(package, "package-descriptor").findings
             if f.value is not None]
    # each at its own resource's line (a text search found the first "../x.csv" twice), and a
    # path written with escapes at its line too (its JSON form is not the text as written)
    assert found == [(2, "../x.csv"), (3, "../x.csv"), (3, "/abs.csv")]


def test_each_supported_hash_algorithm_is_checked(package):
    differs = "{} checksum differs from the descriptor's {} (changed or damaged file)"
    for value, algorithm in (("sha1:" + "0" * 40, "sha1"), ("sha512:" + "0" * 128, "sha512"),
                             ("0" * 32, "md5")):
        assert [m for _, m, _ in _integrity(package, value)] == [differs.format(algorithm, "hash")]
    edit_descriptor(package, lambda d: d["swftools"]["files"]["data/jobs.csv.gz"].update(
        {"sha256": "b" * 64}))
    import hashlib
    md5 = hashlib.md5((package / "data" / "jobs.csv.gz").read_bytes()).hexdigest()
    assert [m for _, m, _ in _integrity(package, f"md5:{md5}")] == [
        differs.format("sha256", "swftools.files")]  # recorded sha256 checked beside an md5
    assert [m for _, m, _ in _integrity(package, "sha256:" + "0" * 64)] == [
        differs.format("sha256", "hash")]  # not twice: the declared sha256 wins


def test_without_missing_values_an_empty_cell_is_unknown(package):
    schema = json.loads((package / "schemas" / "jobs.json").read_text())
    schema.pop("missingValues", None)
    edit_descriptor(package, lambda d: d["resources"][0].update({"schema": schema}))
    assert run(package, "schema-type").findings == []  # the CSV has empty cells (unknowns)


# --- issue 30: the CSV as the package names it, malformed schemas and extensions -------------

def _plain_csv(package, name, declared):
    """The jobs CSV rewritten as plain text in ``data/name`` (declared gzip or not), its size and
    checksums dropped from the descriptor."""
    old = package / "data" / "jobs.csv.gz"
    text = gzip.decompress(old.read_bytes())
    old.unlink()
    (package / "data" / name).write_bytes(text)

    def change(desc):
        res = desc["resources"][0]
        for key in ("bytes", "hash", "compression"):
            res.pop(key, None)
        res.update({"path": f"data/{name}", **({"compression": "gz"} if declared else {})})
        desc["swftools"]["files"].pop("data/jobs.csv.gz")
    edit_descriptor(package, change)


@pytest.mark.parametrize("name, declared, warned", [
    ("jobs.csv", True, "declared gzip-compressed but the content is not gzip"),
    ("jobs.csv.gz", False, "named .gz but the content is not gzip"),
    ("jobs.csv", False, None)])
def test_a_plain_csv_said_to_be_gzip_is_read_with_one_warning(package, name, declared, warned):
    import warnings

    from swftools.formats.inputs import MisnamedGzipWarning
    _plain_csv(package, name, declared)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = run(package)
    assert report.valid and report.rows == 40, [f.render() for f in report.findings]
    said = [str(w.message) for w in caught if issubclass(w.category, MisnamedGzipWarning)]
    assert said == ([f"{package / 'data' / name}: {warned}; reading it as plain text"]
                    if warned else [])


def test_a_cell_may_span_lines_and_a_parse_error_is_reported_on_one_line(package):
    def change(lines):
        header = [h.strip("\"") for h in lines[0].split(",")]
        cells = lines[2].split(",")
        cells[header.index("user")] = '"u\r\nv"'
        lines[2] = ",".join(cells)
        return lines
    rewrite_csv(package, change)
    assert run(package, "schema-structure", "schema-type").findings == []
    rewrite_csv(package, lambda lines: lines[:5] + [lines[5] + ',"x\ny"'] + lines[6:])
    found = run(package, "schema-structure").findings
    columns = len(gzip.decompress((package / "data" / "jobs.csv.gz").read_bytes()).decode()
                  .split("\n")[0].split(","))
    assert len(found) == 1 and found[0].message.startswith(
        f"the CSV cannot be parsed: CSV parse error: Expected {columns} columns, got {columns + 1}: ")
    assert found[0].message.endswith(',"x')  # the first line of pyarrow's message


def test_a_header_label_keeps_its_line_break(package):
    path = package / "data" / "jobs.csv.gz"
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    lines[0] += b',"extra\r\nlabel"'
    lines[1:] = [line + b",1" for line in lines[1:] if line]
    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n", mtime=0))
    found = run(package, "schema-structure").findings
    assert [f.value for f in found] == ["extra\r\nlabel"]


@pytest.mark.parametrize("broken", [
    {"missingValues": [5]}, {"missingValues": "NA"}, {"missingValues": [{"value": 5}]},
    {"fields": [1]}, {"fields": [{"type": "integer"}]}, {"fields": [{"name": 5}]},
    {"fields": [{"name": "gpus", "type": ["integer"]}]}])
def test_a_table_schema_the_cell_rules_cannot_follow_gives_way_to_the_canonical_one(
        package, broken):
    """A malformed schema is the package reader's finding; the cell rules then check the CSV
    against the canonical schema instead of failing."""
    schema = json.loads((package / "schemas" / "jobs.json").read_text())
    fewer = dict(schema, fields=[f for f in schema["fields"] if f["name"] != "gpus"])
    if "fields" in broken:
        broken = {"fields": fewer["fields"] + broken["fields"]}
    for where in ("inline", "file"):
        bad = dict(fewer, **broken)
        if where == "file":
            (package / "schemas" / "bad.json").write_text(json.dumps(bad))
            bad = "schemas/bad.json"
        assert _structure(package, bad) == ([], None), where
        assert run(package, "schema-type").findings == []


def test_a_missing_value_without_its_value_is_the_empty_cell(package):
    schema = json.loads((package / "schemas" / "jobs.json").read_text())
    fewer = dict(schema, fields=[f for f in schema["fields"] if f["name"] != "gpus"],
                 missingValues=[{"label": "unknown"}])
    col = 1 + [f["name"] for f in schema["fields"]].index("gpus")
    assert _structure(package, fewer) == ([f"column {col} 'gpus' is not in the Table Schema"],
                                          None)  # the schema is followed
    assert run(package, "schema-type").findings == []  # its empty cells are unknown
    fewer.pop("missingValues")
    assert _structure(package, fewer)[0] == [f"column {col} 'gpus' is not in the Table Schema"]


@pytest.mark.parametrize("change", [
    lambda d: d.update(swftools=[1]), lambda d: d["swftools"].update(files=[1]),
    lambda d: d["swftools"].update(metadata=[1]),
    lambda d: d["swftools"].update(metadata={"jobs": [1]})])
def test_an_extension_of_the_wrong_shape_is_a_finding_not_a_crash(package, change):
    edit_descriptor(package, change)
    report = run(package)
    found = assert_fires(report, "unreadable-input", 1)
    assert "is not of type 'object'" in found[0].message
    assert_silent(report, "package-integrity")


def test_a_hash_with_an_unknown_algorithm_is_not_checked(package):
    import hashlib
    md5 = hashlib.md5((package / "data" / "jobs.csv.gz").read_bytes()).hexdigest()
    assert _integrity(package, "md5:v2:" + "0" * 32) == []  # algorithm 'md5:v2'
    assert _integrity(package, f"md5:{md5}") == []


def test_the_fallback_table_reads_every_cell_it_can(package):
    """Signed integers, cells that span lines, columns after a missing one, a descriptor
    without recorded job metadata."""
    from swftools import table as jt
    from swftools.validate.package_checks import table_from_cells

    def change(lines):
        header = [h.strip("\"") for h in lines[0].split(",")]
        rows = [line.split(",") for line in lines[1:4]]
        rows[0][header.index("gpus")] = "+7"
        rows[1][header.index("user")] = '"a\nb"'
        rows[2][header.index("nodes")] = "lots"  # the reader refuses
        drop = header.index("group")
        lines[0] = ",".join(h for i, h in enumerate(lines[0].split(",")) if i != drop)
        lines[1:4] = [",".join(c for i, c in enumerate(r) if i != drop) for r in rows]
        lines[4:] = [",".join(c for i, c in enumerate(line.split(",")) if i != drop)
                     for line in lines[4:] if line]
        return lines
    rewrite_csv(package, change)
    edit_descriptor(package, lambda d: d["swftools"].pop("metadata"))
    table, lines = table_from_cells(load_package(package, str(package)))
    assert table.column("gpus").to_pylist()[:2] == [7, 1]
    assert table.column("user").to_pylist()[:3] == ["u0", "a\nb", "u2"]
    assert table.column("group").null_count == 40 and table.column("queue").null_count == 0
    assert jt.get_metadata(table)["time_zone"] == "Asia/Tokyo" and lines.tolist()[:2] == [2, 3]


def test_fallback_findings_name_lines_as_integers(package):
    # line 5 repeats line 3's id; "lots" of nodes makes the reader refuse
    _csv_only_with_cells(package, 4, job_id="2", nodes="lots")
    found = assert_fires(run(package, "job-id-unique"), "job-id-unique", 1)
    assert (found[0].line, found[0].message) == (5, "job id 2 already used on line 3")


def test_a_package_is_read_as_utf8_whatever_the_locale(package):
    """Descriptor, schema file and CSV header are UTF-8 (a non-ASCII column name here)."""
    from .conftest import text_under_c_locale

    desc = json.loads((package / "datapackage.json").read_text())
    desc["description"] = "Tōkyō"
    (package / "datapackage.json").write_text(json.dumps(desc, ensure_ascii=False),
                                              encoding="utf-8")
    schema = json.loads((package / "schemas" / "jobs.json").read_text())
    for f in schema["fields"]:
        if f["name"] == "queue":
            f["name"] = "queüe"
    (package / "schemas" / "jobs.json").write_text(json.dumps(schema, ensure_ascii=False),
                                                   encoding="utf-8")
    rewrite_csv(package, lambda lines: [lines[0].replace("queue", "queüe")] + lines[1:])
    code = ("import sys; from swftools.validate import validate; "
            "r = validate(sys.argv[1], rules=['package-descriptor', 'schema-structure']); "
            "print(repr([f.message for f in r.findings]).encode('utf-8').hex())")
    assert text_under_c_locale(code, str(package)) == "[]"
    assert run(package, "schema-structure").findings == []


def test_a_header_label_past_the_csv_modules_field_limit_is_a_finding(package):
    """pyarrow reads a label of 200,000 characters; the csv module (131,072 at most, its
    default: the limit is process-wide and frictionless raises it on import) does not. The
    header is reported as unreadable, never as csv's own exception."""
    import csv

    import frictionless.formats.csv.parser  # noqa: F401 (it raises the limit on import: first)

    def change(lines):
        lines[0] = lines[0].replace("gpus_per_node", "g" * 200_000)
        return lines
    rewrite_csv(package, change)
    previous = csv.field_size_limit(131_072)
    try:
        report = run(package)
    finally:
        csv.field_size_limit(previous)
    [found] = [f for f in report.findings if f.rule == "schema-structure"]
    assert found.path.endswith("data/jobs.csv.gz")
    assert found.message == ("the CSV cannot be parsed: cannot read the header: field larger "
                             "than field limit (131072)")
