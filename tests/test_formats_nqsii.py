"""NQSII job logs: published and raw forms, golden files, lossless round trips, reading
options, writing (bad input: ``test_formats_nqsii_bad_input.py``)."""

from __future__ import annotations

import gzip
import json
import tempfile
import warnings
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import frictionless
import pytest
from hypothesis import given
from hypothesis import strategies as st

from .nqsii_support import (PUBLISHED_HEADER, PUBLISHED_ROWS, RAW_HEADER, RAW_ROWS, _as_published,
                            _error, _raw, _render_oracle, _with_field)
from .strategies import aaic_jobs, nqsii_layouts
import swftools
from swftools.formats import nqsii
from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.formats.nqsii.schema import form_schema
from swftools.resources import load_json, schemas_dir
from swftools.site import site_from_settings

GOLDEN = Path(__file__).parent / "golden" / "nqsii"


# ------------------------------------------------------------------------------ schema files

@pytest.mark.parametrize("form", ["published", "raw"])
def test_schema_files_are_valid_table_schemas(form):
    descriptor = load_json(f"nqsii-{form}.schema.json")
    report = frictionless.Schema.validate_descriptor(descriptor)
    assert report.valid, report.flatten(["message"])
    columns = {f["column"] for f in descriptor["fields"]}
    assert columns <= set(jt.column_names())


def test_both_forms_share_the_thirteen_attributes_in_order():
    published, raw = form_schema("published"), form_schema("raw")
    assert published.names == raw.names == [
        "job_id", "user", "group", "queue", "nodes", "gpus", "walltime_req", "termcode",
        "submit", "start", "finish", "wait", "walltime"]
    assert [f.column for f in published.fields] == [f.column for f in raw.fields]


@pytest.mark.parametrize("form", ["raw", "published"])
def test_files_we_write_conform_to_their_schema(tmp_path, form):
    """The real frictionless validator, with the schema file, accepts what the writer emits."""
    table = jt.from_columns(json.loads((GOLDEN / "raw.expected.json").read_text()))
    out = tmp_path / "log.csv"
    nqsii.write(table, out, form=form)
    schema = frictionless.Schema.from_descriptor(json.loads(
        (schemas_dir() / f"nqsii-{form}.schema.json").read_text()))
    dialect = frictionless.Dialect(controls=[frictionless.formats.CsvControl(skip_initial_space=True)])
    report = frictionless.Resource(path=out.name, basepath=str(tmp_path), schema=schema,
                                   dialect=dialect).validate()
    assert report.valid, report.flatten(["rowNumber", "fieldName", "message"])


# ------------------------------------------------------------------------------ golden files

@pytest.mark.parametrize("name, form", [("raw.csv", "raw"), ("raw-mixed.csv", "raw"),
                                        ("published.csv.gz", "published")])
def test_golden_files_read_as_expected(name, form):
    table = nqsii.read(GOLDEN / name)
    expected = json.loads((GOLDEN / name.replace(".csv.gz", ".csv").replace(
        ".csv", ".expected.json")).read_text())
    assert table.to_pydict() == {**{c: [None] * len(expected["job_id"]) for c in jt.column_names()},
                                 **expected}
    meta = jt.get_metadata(table)
    assert meta["source_file"] == name and meta["source_format"] == "nqsii"
    assert meta["site"] == "aaic" and meta["time_zone"] == "Asia/Tokyo"
    assert meta["nqsii"]["form"] == form
    assert meta["converter_version"] == swftools.__version__


def test_golden_raw_records_each_column_format():
    layout = jt.get_metadata(nqsii.read(GOLDEN / "raw.csv"))["nqsii"]
    assert layout["separator"] == ", "
    assert layout["gpus_column"] == "per_node"
    assert layout["header"][:3] == ["JobID", "User", "Group"]
    assert layout["formats"] == {
        "submit": {"format": "local"},
        "start": {"format": "iso", "separator": "T", "offset": "+09:00"},
        "finish": {"format": "epoch"},
        "walltime_req": {"format": "hms", "hour_width": 2},
        "wait": {"format": "seconds"},
        "walltime": {"format": "hms", "hour_width": 1},
    }
    assert layout["queue_spelling"] == {"Long": "long", "Middle": "middle", "Normal": "normal",
                                        "Short": "short"}


@pytest.mark.parametrize("name, form", [("raw.csv", "raw"), ("published.csv.gz", "published")])
def test_golden_files_round_trip_byte_for_byte(tmp_path, name, form):
    out = tmp_path / name
    assert nqsii.write(nqsii.read(GOLDEN / name), out, form=form) == []
    original = (GOLDEN / name).read_bytes()
    if name.endswith(".gz"):  # another compressor made the golden file: compare the text
        original, written = gzip.decompress(original), gzip.decompress(out.read_bytes())
    else:
        written = out.read_bytes()
    assert written == original


@pytest.mark.parametrize("form", ["raw", "published"])
def test_writer_defaults_match_golden(tmp_path, form):
    table = jt.from_columns(json.loads((GOLDEN / "raw.expected.json").read_text()))
    out = tmp_path / "out.csv"
    nqsii.write(table, out, form=form)
    assert out.read_bytes() == (GOLDEN / f"default-{form}.csv").read_bytes()


def test_gzip_output_is_deterministic(tmp_path):
    table = nqsii.read(GOLDEN / "raw.csv")
    first, second = tmp_path / "a.csv.gz", tmp_path / "b.csv.gz"
    nqsii.write(table, first)
    nqsii.write(table, second)
    data = first.read_bytes()
    assert data == second.read_bytes()
    assert data[3] & 0x08 == 0, "no file name in the gzip header"
    assert data[4:8] == b"\0\0\0\0", "gzip mtime is 0"
    assert gzip.decompress(data) == (GOLDEN / "raw.csv").read_bytes()


# ------------------------------------------------------------------------- round trips (hypothesis)

@given(aaic_jobs(min_size=1), st.sampled_from(["raw", "published"]), st.booleans())
def test_table_round_trip_through_each_form(table, form, gz):
    if form == "published":
        table = _as_published(table)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("log.csv.gz" if gz else "log.csv")
        assert nqsii.write(table, path, form=form) == []
        back = nqsii.read(path)
        assert jt.equal(back, table)
        assert jt.get_metadata(back)["nqsii"]["form"] == form
        again = Path(tmp) / ("again.csv.gz" if gz else "again.csv")
        nqsii.write(back, again, form=form)
        assert again.read_bytes() == path.read_bytes()


@given(aaic_jobs(min_size=1))
def test_published_and_raw_files_of_one_table_read_the_same(table):
    with tempfile.TemporaryDirectory() as tmp:
        published, raw = Path(tmp) / "p.csv.gz", Path(tmp) / "r.csv"
        losses = nqsii.write(table, published, form="published")
        assert all(loss.startswith(("user:", "group:")) for loss in losses)
        nqsii.write(table, raw, form="raw")
        from_published, from_raw = nqsii.read(published), nqsii.read(raw)
    keep = [c for c in jt.column_names() if c not in ("user", "group")]
    assert from_published.select(keep).equals(from_raw.select(keep))
    assert jt.equal(from_published, _as_published(table))



@given(aaic_jobs(min_size=1), nqsii_layouts())
def test_files_in_any_consistent_layout_round_trip_byte_for_byte(table, layout):
    if layout["form"] == "published":
        table = _as_published(table)
    text = _render_oracle(table, layout).encode()
    with tempfile.TemporaryDirectory() as tmp:
        path, out = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        path.write_bytes(text)
        back = nqsii.read(path)
        assert jt.equal(back, table)
        assert nqsii.write(back, out, form=layout["form"]) == []
        assert out.read_bytes() == text


# ------------------------------------------------------------------------------- reading options

def test_gpus_total_reads_the_gpu_column_as_a_total(tmp_path):
    rows = _with_field(2, "nodes", "2", rows=_with_field(2, "gpus", "16"))
    rows = _with_field(1, "gpus", "3", rows=_with_field(1, "nodes", "2", rows=rows))
    table = nqsii.read(_raw(tmp_path, rows), gpus_total=True)
    assert jt.get_metadata(table)["nqsii"]["gpus_column"] == "total"
    assert table.column("gpus").to_pylist() == [1, 3, 16]
    assert table.column("gpus_per_node").to_pylist() == [1, None, 8]
    out = tmp_path / "out.csv"
    nqsii.write(table, out)
    assert out.read_text() == (tmp_path / "log.csv").read_text()


def test_gpus_total_on_zero_nodes_leaves_gpus_per_node_unknown(tmp_path):
    rows = _with_field(0, "nodes", "0", rows=_with_field(0, "gpus", "4"))
    rows = _with_field(1, "nodes", "0", rows=_with_field(1, "gpus", "0", rows=rows))
    rows = _with_field(2, "gpus", str(2**53 + 1), rows=rows)  # exact beyond float precision
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy division warning either
        table = nqsii.read(_raw(tmp_path, rows), gpus_total=True)
    assert table.column("gpus").to_pylist() == [4, 0, 2**53 + 1]
    assert table.column("gpus_per_node").to_pylist() == [None, None, 2**53 + 1]


def test_site_time_zone_and_queue_numbers(tmp_path):
    settings = json.loads((schemas_dir() / "sites" / "aaic.json").read_text())
    settings.update(name="elsewhere", time_zone="America/New_York")
    settings["queues"][0]["number"] = 7
    site = site_from_settings(settings)
    table = nqsii.read(_raw(tmp_path), site=site)
    assert table.column("submit_time")[0].as_py() == int(
        datetime(2018, 1, 5, 9, 30, tzinfo=ZoneInfo("America/New_York")).timestamp())
    assert jt.get_metadata(table)["time_zone"] == "America/New_York"
    published = tmp_path / "p.csv"
    nqsii.write(table, published, form="published", site=site)
    assert published.read_text().splitlines()[1].split(", ")[3] == "7"
    assert nqsii.read(published, site=site).column("queue")[0].as_py() == "Normal"


def test_forms_are_detected_and_can_be_forced(tmp_path):
    published = tmp_path / "p.csv"
    published.write_text("\n".join([PUBLISHED_HEADER, *PUBLISHED_ROWS]) + "\n")
    assert jt.get_metadata(nqsii.read(published))["nqsii"]["form"] == "published"
    assert jt.get_metadata(nqsii.read(_raw(tmp_path)))["nqsii"]["form"] == "raw"
    assert _error(published, form="raw") == (
        f"{published}:2: field 'queue' (queue): '1' is not a queue of site aaic (expected a "
        "queue of site aaic: Normal, Short, Middle, Long (case-insensitive))")
    with pytest.raises(UsageError):
        nqsii.read(published, form="swf")


def test_crlf_bom_and_missing_final_newline_are_kept(tmp_path):
    text = "\ufeff" + "\r\n".join([RAW_HEADER, *RAW_ROWS])
    path = tmp_path / "log.csv"
    path.write_bytes(text.encode())
    out = tmp_path / "out.csv"
    nqsii.write(nqsii.read(path), out)
    assert out.read_bytes() == text.encode()


def test_progress_bar_does_not_change_the_result(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("swftools.progress.LARGE_INPUT_LINES", 0)
    path = _raw(tmp_path)
    assert jt.equal(nqsii.read(path, progress=True), nqsii.read(path))
    assert capsys.readouterr().out == ""


def _bars(monkeypatch) -> list[dict]:
    """The progress bars a read shows (label, total, shown, steps), recorded."""
    import contextlib

    bars: list[dict] = []

    @contextlib.contextmanager
    def bar(label, total, enabled, **_):
        bars.append({"label": label, "total": total, "shown": enabled, "steps": []})
        yield lambda n=1, description=None: bars[-1]["steps"].append((n, description))

    monkeypatch.setattr("swftools.progress.bar", bar)
    return bars


@pytest.mark.parametrize("large", [True, False])
def test_progress_bar_steps_through_the_columns_for_large_logs(tmp_path, monkeypatch, large):
    monkeypatch.setattr("swftools.progress.LARGE_INPUT_LINES", 0 if large else 10**9)
    bars = _bars(monkeypatch)
    path = _raw(tmp_path)
    nqsii.read(path, progress=True)
    assert [b["shown"] for b in bars] == [large]
    assert bars[0]["label"] == "reading log.csv" and bars[0]["total"] == 15
    names = form_schema("raw").names
    assert bars[0]["steps"] == [(1, f"reading log.csv: {d}")
                                for d in ["CSV parsed", *names, "checks"]]
    nqsii.read(path)  # no progress asked: none, however large
    assert not bars[1]["shown"]


# --------------------------------------------------------------------------------- writing

def test_writer_refuses_to_overwrite_without_force(tmp_path):
    table = nqsii.read(_raw(tmp_path))
    with pytest.raises(UsageError, match="already exists"):
        nqsii.write(table, tmp_path / "log.csv")
    nqsii.write(table, tmp_path / "log.csv", force=True)


def test_loss_report_names_what_nqsii_cannot_carry(tmp_path):
    table = nqsii.read(_raw(tmp_path))
    cols = table.to_pydict()
    cols["used_memory_kb"] = [1024, None, 2048]
    cols["gpus"] = [1, 1, 7]
    meta = {**jt.get_metadata(table), "swf_header": [["Version", "2.2"], ["Computer", "x"]]}
    losses = nqsii.write(jt.from_columns(cols, meta), tmp_path / "out.csv", form="published")
    assert losses == [
        "used_memory_kb (Used memory (KB)): 2 known values dropped; NQSII logs have no such column",
        "SWF header (2 entries) dropped; NQSII logs have no header comments",
        "gpus: 1 job with a total other than nodes x GPUs per node; the GPU column carries "
        "GPUs per node, so those totals are lost",
        "user: the published form holds integer ids; the 3 user names are numbered 1..3 by "
        "first appearance",
        "group: the published form holds integer ids; the 1 group names are numbered 1..1 by "
        "first appearance",
    ]


def test_unknown_values_are_derived_or_refused_and_nothing_is_written(tmp_path):
    cols = nqsii.read(_raw(tmp_path)).to_pydict()
    cols["gpus_per_node"] = [None, 1, None]
    cols["nodes"] = [None, 1, 1]
    losses = nqsii.write(jt.from_columns(cols), tmp_path / "ok.csv")
    assert losses == ["nodes: unknown for 1 job, derived as ceil(gpus / 8)",
                      "gpus_per_node: unknown for 2 jobs, derived as gpus / nodes"]
    assert nqsii.read(tmp_path / "ok.csv").column("gpus_per_node").to_pylist() == [1, 1, 8]
    cols["submit_time"] = [None, None, 1]
    out = tmp_path / "bad.csv"
    with pytest.raises(InputError) as info:
        nqsii.write(jt.from_columns(cols, {"source_file": "jobs.swf"}), out)
    assert str(info.value) == (
        "jobs.swf: column 'submit_time' (Submit time (UTC epoch s)): cannot write an NQSII log: "
        "unknown for 2 jobs (first: job 1); NQSII logs have no marker for unknown values")
    assert not out.exists() and not list(tmp_path.glob(".bad.csv*"))


def test_writer_refuses_a_queue_the_site_does_not_know(tmp_path):
    cols = nqsii.read(_raw(tmp_path)).to_pydict()
    cols["queue"] = ["Normal", "gpu-large", "1"]
    with pytest.raises(InputError, match="'gpu-large' is not a queue of site aaic"):
        nqsii.write(jt.from_columns(cols), tmp_path / "out.csv")
    cols["queue"] = ["Normal", "short", "4"]  # SWF tables hold queue numbers
    nqsii.write(jt.from_columns(cols), tmp_path / "out.csv")
    assert nqsii.read(tmp_path / "out.csv").column("queue").to_pylist() == ["Normal", "Short", "Long"]


def test_empty_table_is_written_with_a_warning(tmp_path):
    losses = nqsii.write(jt.empty(), tmp_path / "out.csv")
    assert losses == ["the table has no jobs: the file holds only a header, which read() "
                      "rejects as a log without job rows"]
    assert (tmp_path / "out.csv").read_text() == RAW_HEADER + "\n"
    with pytest.raises(InputError, match="no job rows: the file holds only a header"):
        nqsii.read(tmp_path / "out.csv")


def test_the_package_loads_its_reader_and_writer_on_first_use():
    import importlib

    reader = importlib.import_module("swftools.formats.nqsii.reader")
    writer = importlib.import_module("swftools.formats.nqsii.writer")
    assert (nqsii.read, nqsii.FORMS) == (reader.read, ("published", "raw"))
    assert (nqsii.render, nqsii.write, nqsii.write_chunks) == (
        writer.render, writer.write, writer.write_chunks)
    assert nqsii.write is nqsii.write is writer.write  # the same on every use
    with pytest.raises(AttributeError) as info:
        nqsii.reader_of_nothing  # noqa: B018
    assert str(info.value) == ("module 'swftools.formats.nqsii' has no attribute "
                               "'reader_of_nothing'")
