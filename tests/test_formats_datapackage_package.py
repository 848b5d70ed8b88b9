"""Reading a data package (``datapackage/package.py``): descriptor checks and their lines,
the CSV and its Parquet twin, declared hashes, other resources' schemas and packages older
than the job table; each rule worked out by hand from the docstrings and the Table Schema
specification. Writing is in ``test_formats_datapackage_package_write.py``."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from swftools import table as jt
from swftools.errors import InputError
from swftools.formats import datapackage as dp
from swftools.formats.datapackage.package import unsafe_path
from swftools.formats.inputs import MisnamedGzipWarning

from .test_formats_datapackage import pkg  # noqa: F401 (fixture)
from .test_formats_datapackage import TELEMETRY_SCHEMA, set_descriptor, telemetry, tiny_table


def jobs_csv_only(pkg: Path) -> dict:
    """Drop the jobs Parquet twin (file and resource), so that ``read`` parses the CSV."""
    (pkg / "data" / "jobs.parquet").unlink(missing_ok=True)

    def change(desc):
        desc["resources"] = [r for r in desc["resources"] if r["name"] == "jobs"]
    set_descriptor(pkg, change)
    return dp.descriptor(pkg)


def error_of(call, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as err:
        call(*args, **kwargs)
    return err.value


# ------------------------------------------------------------------------- error lines

def test_unsafe_path_line_is_the_first_occurrence(pkg):
    """Two resources with the same bad path: the first (the one reported) is on the earlier line."""
    def change(desc):
        for res in desc["resources"]:
            res["path"] = "../x.csv"
    desc_path = set_descriptor(pkg, change)
    lines = desc_path.read_text().splitlines()
    first = 1 + next(i for i, line in enumerate(lines) if '"../x.csv"' in line)
    err = error_of(dp.descriptor, pkg)
    assert str(err) == (f"{desc_path}:{first}: resource 'jobs': path '../x.csv' climbs out of "
                        "the package with '..' (expected a relative path inside the package)")


def test_unsafe_path_line_counts_a_leading_newline(pkg):
    desc_path = pkg / "datapackage.json"
    desc = json.loads(desc_path.read_text())
    desc["resources"][0]["path"] = "/etc/jobs.csv"
    text = "\n" + json.dumps(desc, indent=2) + "\n"
    desc_path.write_text(text)
    line = 1 + next(i for i, line in enumerate(text.split("\n")) if "/etc/jobs.csv" in line)
    assert line > 2
    assert error_of(dp.descriptor, pkg).line == line


def test_unsafe_path_written_with_escapes_is_found_at_its_line(pkg):
    """The value as written ("..\\/x") is not its JSON form ("../x"): the line is still its own;
    a bad path written twice is named at the resource that is reported."""
    desc_path = pkg / "datapackage.json"
    text = desc_path.read_text().replace('"data/jobs.csv.gz"', '"..\\/x.csv"', 1)
    desc_path.write_text(text)
    line = 1 + next(i for i, t in enumerate(text.splitlines()) if '"..\\/x.csv"' in t)
    err = error_of(dp.descriptor, pkg)
    assert err.line == line
    assert str(err) == (f"{desc_path}:{line}: resource 'jobs': path '../x.csv' climbs out of the "
                        "package with '..' (expected a relative path inside the package)")
    desc_path.write_text('{"resources": [{"name": "a", "path": ["data/x.csv"]},\n'
                         ' {"name": "jobs", "path": ["data/y.csv",\n "/abs.csv"]},\n'
                         ' {"name": "b", "path": "/abs.csv"}]}')
    err = error_of(dp.descriptor, pkg)
    assert (err.line, err.message) == (3, "resource 'jobs': path '/abs.csv' is an absolute path")


# ----------------------------------------------------------------------- reading the CSV

def test_a_resource_without_format_is_csv(pkg):
    def change(desc):
        del desc["resources"][0]["format"]
    jobs_csv_only(pkg)
    set_descriptor(pkg, change)
    assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)


@pytest.mark.parametrize("key, value, message", [
    ("format", "json", "resource 'jobs': format 'json' is not supported (expected csv or parquet)"),
    ("path", ["data/jobs.csv.gz", "data/more.csv.gz"],
     "resource 'jobs' has a list of files (expected one file path)"),
])
def test_csv_resource_refusals_name_the_descriptor(pkg, key, value, message):
    """An unsupported format, or a list of files (the reader takes one file)."""
    jobs_csv_only(pkg)
    desc_path = set_descriptor(pkg, lambda desc: desc["resources"][0].update({key: value}))
    assert str(error_of(dp.read, pkg)) == f"{desc_path}: {message}"


def test_csv_without_hash_is_checked_against_the_recorded_sha256(pkg):
    """No ``hash`` nor ``bytes`` on the resource: the swftools record still catches a change."""
    def change(desc):
        del desc["resources"][0]["hash"], desc["resources"][0]["bytes"]
    desc = jobs_csv_only(pkg)
    recorded = desc["swftools"]["files"]["data/jobs.csv.gz"]["sha256"]
    set_descriptor(pkg, change)
    csv_path = pkg / "data" / "jobs.csv.gz"
    text = gzip.decompress(csv_path.read_bytes()).replace(b"alice", b"carol")
    csv_path.write_bytes(gzip.compress(text, mtime=0))
    err = error_of(dp.read, pkg)
    assert str(err).startswith(f"{csv_path}: sha256 checksum mismatch: the file has ")
    assert str(err).endswith(f", datapackage.json declares {recorded} (changed or damaged file)")


@pytest.mark.parametrize("resource, read_file", [("jobs", "jobs.csv.gz"), ("jobs", "jobs.parquet"),
                                                  ("jobs-parquet", "jobs.parquet")])
def test_reading_advances_the_progress_bar_by_the_bytes_read(pkg, monkeypatch, resource,
                                                             read_file):
    """The file read (the CSV when the Parquet twin is gone; the Parquet file when it is the
    resource asked for) is counted once, in bytes."""
    if read_file == "jobs.csv.gz":
        jobs_csv_only(pkg)
    told = []

    @contextlib.contextmanager
    def bar(*args, **kwargs):
        yield told.append
    monkeypatch.setattr(dp.package.progress_mod, "bar", bar)
    dp.read(pkg, progress=True, resource=resource)
    assert sum(told) == (pkg / "data" / read_file).stat().st_size


@pytest.mark.parametrize("declared, warned", [(True, True), (False, False)])
def test_plain_csv_declared_gzip_warns(pkg, declared, warned):
    """A plain ``data/jobs.csv`` reads; ``compression: gz`` on it is a misnamed-gzip warning."""
    plain = pkg / "data" / "jobs.csv"
    plain.write_bytes(gzip.decompress((pkg / "data" / "jobs.csv.gz").read_bytes()))

    def change(desc):
        res = desc["resources"][0]
        res["path"] = "data/jobs.csv"
        del res["hash"], res["bytes"]
        if not declared:
            del res["compression"]
    jobs_csv_only(pkg)
    set_descriptor(pkg, change)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)
    misnamed = [str(w.message) for w in caught if issubclass(w.category, MisnamedGzipWarning)]
    assert misnamed == ([f"{plain}: declared gzip-compressed but the content is not gzip; "
                         "reading it as plain text"] if warned else [])


def test_jobs_read_with_the_canonical_schema_even_if_theirs_is_remote(pkg):
    """The job table is always read with the canonical schema; a remote schema is not fetched."""
    def change(desc):
        desc["resources"][0]["schema"] = "https://example.org/jobs.json"
    jobs_csv_only(pkg)
    set_descriptor(pkg, change)
    assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)


def test_other_resource_without_schema_names_the_descriptor(pkg):
    dp.add_resource(pkg, "job_telemetry", telemetry([101]), TELEMETRY_SCHEMA)
    (pkg / "data" / "job_telemetry.parquet").unlink()

    def change(desc):
        del desc["resources"][2]["schema"]
    desc_path = set_descriptor(pkg, change)
    assert str(error_of(dp.read, pkg, resource="job_telemetry")) == \
        f"{desc_path}: resource 'job_telemetry' has no Table Schema"


# ----------------------------------------------------------------- other resources' schemas

def telemetry_package(pkg: Path, csv: bool = True) -> None:
    """``pkg`` with a ``job_telemetry`` resource; ``csv``: its Parquet file removed."""
    dp.add_resource(pkg, "job_telemetry", telemetry([101, 102]), TELEMETRY_SCHEMA)
    if csv:
        (pkg / "data" / "job_telemetry.parquet").unlink()


@pytest.mark.parametrize("csv", [True, False], ids=["csv", "parquet"])
def test_remote_schema_of_another_resource_is_refused(pkg, csv):
    telemetry_package(pkg, csv)

    def change(desc):
        for res in desc["resources"][2:]:
            res["schema"] = "https://example.org/t.json"
    desc_path = set_descriptor(pkg, change)
    name = "job_telemetry" if csv else "job_telemetry-parquet"
    assert str(error_of(dp.read, pkg, resource="job_telemetry")) == (
        f"{desc_path}: resource {name!r}: remote schema 'https://example.org/t.json' is not "
        "supported (expected a schema inside the package)")


@pytest.mark.parametrize("csv", [True, False], ids=["csv", "parquet"])
def test_missing_schema_of_another_resource_names_the_descriptor(pkg, csv):
    telemetry_package(pkg, csv)

    def change(desc):
        for res in desc["resources"][2:]:
            del res["schema"]
    desc_path = set_descriptor(pkg, change)
    name = "job_telemetry" if csv else "job_telemetry-parquet"
    assert str(error_of(dp.read, pkg, resource="job_telemetry")) == \
        f"{desc_path}: resource {name!r} has no Table Schema"


def test_schema_file_of_another_resource_missing_or_bad(pkg):
    telemetry_package(pkg)
    schema_path = pkg / "schemas" / "job_telemetry.json"
    schema_path.write_text('{\n  "fields": [\n    oops\n')
    err = error_of(dp.read, pkg, resource="job_telemetry")
    assert (err.path, err.line) == (str(schema_path), 3)
    assert str(err).startswith(f"{schema_path}:3: not valid JSON: Expecting value (column 5)")
    schema_path.unlink()
    assert str(error_of(dp.read, pkg, resource="job_telemetry")) == \
        f"{schema_path}: resource 'job_telemetry': schema file not found"


def test_schema_file_is_read_as_utf8_under_any_locale(pkg):
    from .conftest import text_under_c_locale

    schema = json.loads(json.dumps(TELEMETRY_SCHEMA))
    schema["fields"][1]["description"] = "Moyenne d'utilisation, en % (été)"
    dp.add_resource(pkg, "job_telemetry", telemetry([101, 102]), schema)
    (pkg / "data" / "job_telemetry.parquet").unlink()
    code = ("import sys; from swftools.formats import datapackage as dp; "
            "t = dp.read(sys.argv[1], resource='job_telemetry'); "
            "print(repr(t.to_pydict()).encode().hex())")
    assert text_under_c_locale(code, str(pkg)) == repr(telemetry([101, 102]).to_pydict())


# --------------------------------------------------------------------------- the Parquet twin

def test_parquet_twin_without_a_checksum_is_not_trusted(pkg):
    """No recorded checksum for the twin: the CSV (whose hash is declared) is read instead."""
    pq.write_table(pq.read_table(pkg / "data" / "jobs.parquet").slice(0, 1),
                   pkg / "data" / "jobs.parquet")
    set_descriptor(pkg, lambda desc: desc["swftools"]["files"].pop("data/jobs.parquet"))
    assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)
    # named directly, the Parquet resource is read as it is
    assert dp.read(pkg, resource="jobs-parquet")["job_id"].to_pylist() == [101]


def test_parquet_named_directly_checksum_error_in_full(pkg):
    path = pkg / "data" / "jobs.parquet"
    recorded = dp.descriptor(pkg)["swftools"]["files"]["data/jobs.parquet"]["sha256"]
    pq.write_table(pq.read_table(path).slice(0, 1), path)
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    assert str(error_of(dp.read, pkg, resource="jobs-parquet")) == (
        f"{path}: sha256 checksum mismatch: the file has {actual}, datapackage.json declares "
        f"{recorded} (changed or damaged file)")


def test_parquet_named_directly_with_a_list_of_files(pkg):
    def change(desc):
        desc["resources"][1]["path"] = ["data/jobs.parquet", "data/more.parquet"]
    desc_path = set_descriptor(pkg, change)
    assert str(error_of(dp.read, pkg, resource="jobs-parquet")) == (
        f"{desc_path}: resource 'jobs-parquet' has a list of files (expected one file path)")


def test_checksum_warning_points_at_the_caller(pkg):
    path = pkg / "data" / "jobs.parquet"
    pq.write_table(pq.read_table(path).slice(0, 1), path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)
    [warning] = [w for w in caught if issubclass(w.category, dp.package.ParquetChecksumWarning)]
    assert not warning.filename.endswith("datapackage/package.py")
    if "mutmut" not in warning.filename:  # uninstrumented: exactly this file
        assert warning.filename == __file__


def test_jobs_parquet_read_with_the_canonical_schema_even_if_theirs_is_remote(pkg):
    def change(desc):
        desc["resources"][1]["schema"] = "https://example.org/jobs-parquet.json"
    set_descriptor(pkg, change)
    assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)
    assert jt.equal(dp.read(pkg, resource="jobs-parquet"), tiny_table(), metadata=True)


def test_inline_data_is_refused(pkg):
    def change(desc):
        res = desc["resources"][0]
        del res["path"]
        res["data"] = [{"job_id": 1}]
    jobs_csv_only(pkg)
    desc_path = set_descriptor(pkg, change)
    assert str(error_of(dp.read, pkg)) == (f"{desc_path}: resource 'jobs' has inline data or no "
                                           "path (expected one file path)")


# ------------------------------------------------------------------------- declared hashes

def declare_hash(pkg: Path, value: str) -> Path:
    """The jobs CSV's ``hash`` set to ``value`` (Parquet twin dropped); the CSV's path."""
    def change(desc):
        desc["resources"][0]["hash"] = value
    jobs_csv_only(pkg)
    set_descriptor(pkg, change)
    return pkg / "data" / "jobs.csv.gz"


@pytest.mark.parametrize("algorithm", ["md5", "sha1", "sha256", "sha512"])
@pytest.mark.parametrize("form", ["prefixed", "upper case"])
def test_declared_hash_algorithms(pkg, algorithm, form):
    """Table Schema's ``algorithm:hex`` (any case) is checked, for each algorithm it names."""
    csv_path = pkg / "data" / "jobs.csv.gz"
    hexdigest = hashlib.new(algorithm, csv_path.read_bytes()).hexdigest()
    value = f"{algorithm}:{hexdigest}"
    declare_hash(pkg, value.upper() if form == "upper case" else value)
    assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)
    wrong = f"{algorithm}:{'0' * len(hexdigest)}"
    declare_hash(pkg, wrong.upper() if form == "upper case" else wrong)
    assert str(error_of(dp.read, pkg)).startswith(
        f"{csv_path}: {algorithm} checksum mismatch: the file has {hexdigest}, "
        f"datapackage.json declares {'0' * len(hexdigest)} ")


def test_declared_hash_without_algorithm_is_md5(pkg):
    csv_path = pkg / "data" / "jobs.csv.gz"
    md5 = hashlib.md5(csv_path.read_bytes()).hexdigest()
    declare_hash(pkg, md5)
    assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)
    declare_hash(pkg, "f" * 32)
    assert str(error_of(dp.read, pkg)).startswith(f"{csv_path}: md5 checksum mismatch: ")


@pytest.mark.parametrize("value", ["", "crc32:0000", "sha256:v2:" + "0" * 64])
def test_undeclared_or_unknown_hash_falls_back_to_the_record(pkg, value):
    """An empty hash, or one whose algorithm part is not md5/sha1/sha256/sha512, is not checked;
    the recorded SHA-256 is: the file reads, and a changed file is caught by the record."""
    csv_path = declare_hash(pkg, value)
    assert jt.equal(dp.read(pkg), tiny_table(), metadata=True)
    text = gzip.decompress(csv_path.read_bytes()).replace(b"alice", b"carol")
    csv_path.write_bytes(gzip.compress(text, mtime=0))
    set_descriptor(pkg, lambda desc: desc["resources"][0].pop("bytes"))
    assert "sha256 checksum mismatch" in str(error_of(dp.read, pkg))


# ------------------------------------------------------------------------- progress and names

@pytest.mark.parametrize("progress", [None, True, False])
def test_read_progress_bar_is_labelled_in_bytes_and_off_by_default(pkg, monkeypatch, progress):
    calls = []

    @contextlib.contextmanager
    def bar(*args, **kwargs):
        calls.append((args, kwargs))
        yield lambda n: None
    monkeypatch.setattr(dp.package.progress_mod, "bar", bar)
    dp.read(pkg) if progress is None else dp.read(pkg, progress=progress)
    dp.read(pkg, resource="jobs-parquet", progress=True)
    assert calls == [(("reading jobs", None, bool(progress)), {"unit": "bytes"}),
                     (("reading jobs-parquet", None, True), {"unit": "bytes"})]


def test_a_csv_resource_named_like_a_twin_keeps_its_own_metadata(pkg):
    """Only a Parquet resource's name loses ``-parquet`` to find its table's metadata."""
    dp.add_resource(pkg, "tele", telemetry([101], {"interval_s": 5}), TELEMETRY_SCHEMA)
    (pkg / "data" / "tele.parquet").unlink()

    def change(desc):
        desc["resources"] = [r for r in desc["resources"] if r["name"] != "tele-parquet"]
        desc["resources"][-1]["name"] = "tele-parquet"
        desc["swftools"]["metadata"]["tele-parquet"] = {"interval_s": 7}
    set_descriptor(pkg, change)
    assert jt.get_metadata(dp.read(pkg, resource="tele-parquet")) == {"interval_s": 7}


# --------------------------------------------------------------------- descriptor checks

@pytest.mark.parametrize("bad_path", ["C:\\data\\jobs.csv", "c:/data/jobs.csv",
                                      "\\\\host\\share\\jobs.csv"])
def test_windows_absolute_paths_are_refused(pkg, bad_path):
    def change(desc):
        desc["resources"][0]["path"] = bad_path
    desc_path = set_descriptor(pkg, change)
    rows = desc_path.read_text().split("\n")
    jobs = rows.index('      "name": "jobs",')  # the jobs resource's path is the next path
    line = 1 + next(i for i in range(jobs, len(rows)) if rows[i].strip().startswith('"path": '))
    assert str(error_of(dp.descriptor, pkg)) == (
        f"{desc_path}:{line}: resource 'jobs': path {bad_path!r} is an absolute path (expected "
        "a relative path inside the package)")


def test_non_ascii_bad_path_is_located(pkg):
    """The descriptor is written with UTF-8 text (not \\u escapes): the line is still found."""
    desc_path = pkg / "datapackage.json"
    desc = json.loads(desc_path.read_text())
    desc["resources"][1]["path"] = "../données.parquet"
    text = json.dumps(desc, indent=2, ensure_ascii=False) + "\n"
    desc_path.write_text(text, encoding="utf-8")
    line = 1 + next(i for i, row in enumerate(text.split("\n")) if "données" in row)
    err = error_of(dp.descriptor, pkg)
    assert (err.line, err.message) == (line, "resource 'jobs-parquet': path '../données.parquet' "
                                             "climbs out of the package with '..'")


def test_a_bad_part_of_a_listed_path_is_located(pkg):
    def change(desc):
        desc["resources"][0]["path"] = ["data/jobs.csv.gz", "../more.csv.gz"]
    desc_path = set_descriptor(pkg, change)
    rows = desc_path.read_text().split("\n")
    line = 1 + rows.index('        "../more.csv.gz"')
    assert str(error_of(dp.descriptor, pkg)) == (
        f"{desc_path}:{line}: resource 'jobs': path '../more.csv.gz' climbs out of the package "
        "with '..' (expected a relative path inside the package)")


def test_descriptor_that_is_not_an_object(pkg):
    desc_path = pkg / "datapackage.json"
    desc_path.write_text('[{"resources": []}]\n')
    assert str(error_of(dp.descriptor, pkg)) == (f"{desc_path}: not a data package descriptor "
                                                 "(expected a JSON object with 'resources')")


def test_descriptor_not_utf8(pkg):
    desc_path = pkg / "datapackage.json"
    desc_path.write_bytes(desc_path.read_bytes().replace(b'"Job trace', b'"\xc9t\xe9 trace'))
    assert str(error_of(dp.descriptor, pkg)) == f"{desc_path}: not UTF-8 text"


def test_descriptor_is_read_as_utf8_under_any_locale(pkg):
    from .conftest import text_under_c_locale

    desc_path = pkg / "datapackage.json"
    desc = json.loads(desc_path.read_text(encoding="utf-8"))
    desc["title"] = "Traces d'été — 2018"
    desc_path.write_text(json.dumps(desc, ensure_ascii=False), encoding="utf-8")
    assert "été — 2018".encode() in desc_path.read_bytes()  # not escaped to ASCII
    code = ("import sys; from swftools.formats import datapackage as dp; "
            "print(dp.descriptor(sys.argv[1])['title'].encode().hex())")
    assert text_under_c_locale(code, str(pkg)) == "Traces d'été — 2018"


def test_bad_table_metadata_names_the_descriptor(pkg):
    desc_path = set_descriptor(pkg, lambda desc: desc["swftools"]["metadata"]["jobs"]
                               .update(site=5))
    assert str(error_of(dp.read, pkg)) == (
        f"{desc_path}: site: table metadata: 5 is not of type 'string' (expected metadata as "
        "table-metadata.schema.json describes)")


# ------------------------------------------------------------------------------ no job rows

def test_no_job_rows_messages(tmp_path):
    pkg = tmp_path / "pkg"
    dp.write(jt.empty(), pkg)
    assert str(error_of(dp.read, pkg, resource="jobs-parquet")) == (
        f"{pkg}/data/jobs.parquet: no job rows: the Parquet table has none (expected one job "
        "per row, or --allow-empty for an empty trace)")
    assert str(error_of(dp.read, pkg)) == (
        f"{pkg}/data/jobs.csv.gz:1: no job rows: the file holds only a header (expected one "
        "job per line after the header, or --allow-empty for an empty trace)")


def test_no_job_rows_read_through_the_twin_of_a_listed_csv(tmp_path):
    """The CSV resource lists several files, so the rows come from its Parquet twin: with
    none, the error names the descriptor (there is no one CSV file to name)."""
    pkg = tmp_path / "pkg"
    dp.write(jt.empty(), pkg)

    def change(desc):
        desc["resources"][0]["path"] = ["data/jobs.csv.gz", "data/more.csv.gz"]
    set_descriptor(pkg, change)
    assert str(error_of(dp.read, pkg)).startswith(
        f"{pkg}/datapackage.json:1: no job rows: the file holds only a header")


# ------------------------------------------------------- packages older than the job table

NEWER = ("source_job_id", "cpus", "recorded_walltime_s")


def older_package(tmp_path: Path, schema_place: str) -> Path:
    """A package whose jobs CSV and schema lack the columns added since (``NEWER``), its schema
    ``inline`` in the descriptor or in its ``file``."""
    import csv
    import io

    pkg = tmp_path / "old"
    dp.write(tiny_table(), pkg)
    jobs_csv_only(pkg)
    csv_path = pkg / "data" / "jobs.csv.gz"
    rows = list(csv.reader(io.StringIO(gzip.decompress(csv_path.read_bytes()).decode())))
    keep = [i for i, name in enumerate(rows[0]) if name not in NEWER]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([[r[i] for i in keep] for r in rows])
    csv_path.write_bytes(gzip.compress(out.getvalue().encode(), mtime=0))
    schema_path = pkg / "schemas" / "jobs.json"
    schema = json.loads(schema_path.read_text())
    schema["fields"] = [f for f in schema["fields"] if f["name"] not in NEWER]
    schema_path.write_text(json.dumps(schema, indent=2) + "\n")

    def change(desc):
        res = desc["resources"][0]
        del res["hash"], res["bytes"]
        desc["swftools"]["files"].pop("data/jobs.csv.gz")
        if schema_place == "inline":
            res["schema"] = schema
    set_descriptor(pkg, change)
    return pkg


@pytest.mark.parametrize("schema_place", ["inline", "file"])
def test_an_older_package_reads_the_newer_columns_as_unknown(tmp_path, schema_place):
    table = dp.read(older_package(tmp_path, schema_place))
    assert table.column_names == [f["name"] for f in jt.table_schema()["fields"]]
    for name in NEWER:
        assert table.column(name).null_count == table.num_rows
    expected = tiny_table()
    for name in (n for n in expected.column_names if n not in NEWER):
        assert table.column(name).to_pylist() == expected.column(name).to_pylist(), name


def test_an_older_package_with_a_column_the_job_table_lacks_is_read_as_canonical(tmp_path):
    """A declared column the job table does not know: not an older package, so the canonical
    schema applies and the read names the first canonical column the header lacks."""
    pkg = older_package(tmp_path, "file")
    schema_path = pkg / "schemas" / "jobs.json"
    schema = json.loads(schema_path.read_text())
    schema["fields"].append({"name": "note", "type": "string"})
    schema_path.write_text(json.dumps(schema))
    err = error_of(dp.read, pkg)
    assert str(err) == (f"{pkg}/data/jobs.csv.gz:1: column 'source_job_id' missing from the "
                        f"header (expected the {len(jt.table_schema()['fields'])} columns of the "
                        "Table Schema)")


def test_an_older_package_schema_is_read_as_utf8_under_any_locale(tmp_path):
    from .conftest import text_under_c_locale

    pkg = older_package(tmp_path, "file")
    schema_path = pkg / "schemas" / "jobs.json"
    schema = json.loads(schema_path.read_text())
    schema["description"] = "Tâches du cluster"
    schema_path.write_text(json.dumps(schema, ensure_ascii=False), encoding="utf-8")
    code = ("import sys; from swftools.formats import datapackage as dp; "
            "t = dp.read(sys.argv[1]); print(repr(t['cpus'].null_count).encode().hex())")
    assert text_under_c_locale(code, str(pkg)) == str(tiny_table().num_rows)


@pytest.mark.parametrize("value, why", [
    ("http://x/jobs.csv", "is a URL (remote data is not supported)"),
    ("s3+x.y-z://b/k", "is a URL (remote data is not supported)"),
    ("/etc/jobs.csv", "is an absolute path"),
    ("C:\\jobs.csv", "is an absolute path"),
    ("c:/jobs.csv", "is an absolute path"),
    ("\\\\server\\jobs.csv", "is an absolute path"),
    ("data/../../x.csv", "climbs out of the package with '..'"),
    ("data\\..\\x.csv", "climbs out of the package with '..'"),
    ("..", "climbs out of the package with '..'"),
    ("data/jobs.csv", None), ("data/a..b.csv", None), ("C:jobs.csv", None),
    ("1http://x", None), ("data/C:/x", None), ("x\\y.csv", None),
])
def test_unsafe_path_names_each_kind_of_unsafe_path(value, why):
    """The one path rule of read() and of validate's package-descriptor."""
    assert unsafe_path(value) == why
