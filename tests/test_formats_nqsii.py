"""NQSII job logs: published and raw forms, golden files, lossless round trips, bad input."""

from __future__ import annotations

import gzip
import json
import tempfile
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import frictionless
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from .strategies import aaic_jobs, bad_integer_tokens, nqsii_layouts
import swftools
from swftools.formats import nqsii
from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.formats.nqsii.schema import form_schema
from swftools.resources import load_json, schemas_dir
from swftools.site import load_site, site_from_settings

GOLDEN = Path(__file__).parent / "golden" / "nqsii"
TOKYO = ZoneInfo("Asia/Tokyo")
EXPECTED_TIMESTAMP = ("UNIX seconds, YYYY-MM-DD HH:MM:SS local time, or ISO 8601 with offset")

# A small valid raw log; bad-input tests change one thing in it.
RAW_HEADER = ("job_id,user,group,queue,nodes,gpus,walltime_req,termcode,submit,start,finish,"
              "wait,walltime")
RAW_ROWS = [
    "1,alice,lab,Normal,1,1,01:00:00,0,2018-01-05 09:30:00,2018-01-05 09:31:40,"
    "2018-01-05 10:33:45,00:01:40,01:02:05",
    "2,bob,lab,Short,1,1,03:00:00,0,2018-01-05 09:40:00,2018-01-05 09:40:00,"
    "2018-01-05 09:50:00,00:00:00,00:10:00",
    "3,carol,lab,Long,1,8,336:00:00,1,2018-01-05 10:00:00,2018-01-05 11:00:00,"
    "2018-01-06 11:00:00,01:00:00,24:00:00",
]
PUBLISHED_HEADER = ("job_id, user, group, queue, nodes, gpus, walltime_req, termcode, submit, "
                    "start, finish, wait, walltime")
PUBLISHED_ROWS = [
    "1, 17, 3, 1, 1, 1, 3600, 0, 1500001000, 1500001030, 1500002030, 30, 1000",
    "2, 4, 1, 2, 1, 1, 10800, 2, 1500001500, 1500001500, 1500012305, 0, 10805",
]


def _raw(tmp_path: Path, rows: list[str] | None = None, header: str = RAW_HEADER,
         name: str = "log.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *(RAW_ROWS if rows is None else rows)]) + "\n")
    return path


def _with_field(row: int, column: str, value: str, rows: list[str] = RAW_ROWS,
                header: str = RAW_HEADER) -> list[str]:
    """Rows with field ``column`` of row ``row`` (0-based) replaced by ``value``."""
    names = [n.strip() for n in header.split(",")]
    out = list(rows)
    separator = ", " if ", " in rows[row] else ","
    fields = out[row].split(separator)
    fields[names.index(column)] = value
    out[row] = separator.join(fields)
    return out


def _error(path: Path | str, **options) -> str:
    with pytest.raises(InputError) as info:
        nqsii.read(path, **options)
    return str(info.value)


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

def _as_published(table: pa.Table) -> pa.Table:
    """The table as the published form holds it: user and group ids kept when all are integers,
    else numbered 1..N by first appearance."""
    cols = table.to_pydict()
    for key in ("user", "group"):
        if not all(v.isdigit() for v in cols[key]):
            order: dict[str, str] = {}
            cols[key] = [order.setdefault(v, str(len(order) + 1)) for v in cols[key]]
    return jt.from_columns(cols, jt.get_metadata(table))


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


def _instant_text(epoch: int, fmt: dict) -> str:
    """Independent formatter (datetime, one value at a time) for the oracle below."""
    if fmt["format"] == "epoch":
        return str(epoch)
    if fmt["format"] == "local":
        return datetime.fromtimestamp(epoch, TOKYO).strftime("%Y-%m-%d %H:%M:%S")
    offset = fmt["offset"]
    sign = -1 if offset.startswith("-") else 1
    digits = offset[1:].replace(":", "")
    delta = timedelta(0) if offset == "Z" else sign * timedelta(hours=int(digits[:2]),
                                                                minutes=int(digits[2:]))
    moment = datetime.fromtimestamp(epoch, timezone(delta))
    return moment.strftime(f"%Y-%m-%d{fmt['separator']}%H:%M:%S") + offset


def _duration_text(seconds: int, fmt: dict) -> str:
    if fmt["format"] == "seconds":
        return str(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours:0{fmt['hour_width']}d}:{rest // 60:02d}:{rest % 60:02d}"


def _render_oracle(table: pa.Table, layout: dict) -> str:
    """An NQSII file built row by row with Python, independently of swftools' writer."""
    rows = table.to_pylist()
    queue_numbers = {q.name: q.number for q in load_site("aaic").queues}
    columns = {f.name: f.column for f in form_schema(layout["form"]).fields}
    lines = [layout["separator"].join(layout["header"])]
    for row in rows:
        values = []
        for name in layout["fields"]:
            column = columns[name]
            value = row[column]
            if name in layout["formats"]:
                fmt = layout["formats"][name]
                text = (_instant_text(value, fmt) if column.endswith("_time")
                        else _duration_text(value, fmt))
            elif column == "queue":
                text = (str(queue_numbers[value]) if layout["form"] == "published"
                        else layout["queue_spelling"].get(value, value))
            else:
                text = str(value)
            values.append(text)
        lines.append(layout["separator"].join(values))
    text = layout["line_ending"].join(lines)
    return ("\ufeff" if layout["bom"] else "") + text + (
        layout["line_ending"] if layout["final_newline"] else "")


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


# ------------------------------------------------------------------------------- bad input

def test_wrong_field_count(tmp_path):
    rows = list(RAW_ROWS)
    rows[1] = rows[1].rsplit(",", 1)[0]
    path = _raw(tmp_path, rows)
    assert _error(path) == f"{path}:3: 12 fields, expected 13 (one per header column)"


def test_empty_line_in_the_middle(tmp_path):
    path = _raw(tmp_path, [RAW_ROWS[0], "", RAW_ROWS[1]])
    assert _error(path) == f"{path}:3: empty line, expected 13 (one per header column)"


@pytest.mark.parametrize("value, why", [("x7", "is not a number"), ("1.5", "is not an integer"),
                                        ("", "is empty"), ("99999999999999999999", "is out of range")])
def test_non_numeric_tokens(tmp_path, value, why):
    path = _raw(tmp_path, _with_field(1, "nodes", value))
    assert _error(path) == (f"{path}:3: field 'nodes' (nodes): '{value}' {why} "
                            "(expected a non-negative integer)")


def test_published_form_reports_non_numeric_tokens_with_the_path_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = _with_field(1, "submit", "2017-07-14 00:00:00", PUBLISHED_ROWS, PUBLISHED_HEADER)
    Path("log.csv.gz").write_bytes(gzip.compress(
        ("\n".join([PUBLISHED_HEADER, *rows]) + "\n").encode()))
    assert _error("log.csv.gz", form="published") == (
        "log.csv.gz:3: field 'submit' (submit time): '2017-07-14 00:00:00' is not a timestamp "
        "(expected UNIX seconds)")


@pytest.mark.parametrize("column, value, expected", [
    ("nodes", "-1", "a non-negative integer"),
    ("wait", "-5", "seconds or HH:MM:SS"),
    ("submit", "-5", EXPECTED_TIMESTAMP),
])
def test_negative_values_are_errors(tmp_path, column, value, expected):
    path = _raw(tmp_path, _with_field(0, column, value))
    title = {"nodes": "nodes", "wait": "wait time", "submit": "submit time"}[column]
    assert _error(path) == (f"{path}:2: field '{column}' ({title}): '{value}' is negative "
                            f"(expected {expected})")


@pytest.mark.parametrize("row, column, value, message", [
    pytest.param(0, "submit", "1970-01-01 08:59:59",
                 "field 'submit' (submit time): '1970-01-01 08:59:59' is before 1970-01-01 "
                 f"00:00:00 UTC (a negative UNIX time) (expected {EXPECTED_TIMESTAMP})",
                 id="local_time_before_1970_is_negative"),
    pytest.param(2, "queue", "Express",
                 "field 'queue' (queue): 'Express' is not a queue of site aaic (expected a "
                 "queue of site aaic: Normal, Short, Middle, Long (case-insensitive))",
                 id="unknown_queue_name"),
    pytest.param(0, "termcode", "7",
                 "field 'termcode' (termination code): '7' is not a termination code (expected "
                 "one of 0 success, 1 fail, 2 walltime exceeded, 3 cancelled by user, 4 cancelled "
                 "by system)", id="termcode_outside_its_codes"),
    pytest.param(1, "finish", "2018-01-05 09:39:59",
                 "field 'finish' (finish time): '2018-01-05 09:39:59' is before the start time "
                 "'2018-01-05 09:40:00' (expected a finish time at or after the start time)",
                 id="finish_before_start"),
    pytest.param(2, "job_id", "1",
                 "field 'job_id' (job id): '1' repeats the job id on line 2 "
                 "(expected job ids unique within the file)", id="duplicate_job_id"),
])
def test_one_bad_field(tmp_path, row, column, value, message):
    path = _raw(tmp_path, _with_field(row, column, value))
    assert _error(path) == f"{path}:{row + 2}: {message}"  # line 1 is the header


def test_unknown_queue_number(tmp_path):
    path = tmp_path / "log.csv"
    rows = _with_field(1, "queue", "5", PUBLISHED_ROWS, PUBLISHED_HEADER)
    path.write_text("\n".join([PUBLISHED_HEADER, *rows]) + "\n")
    assert _error(path) == (
        f"{path}:3: field 'queue' (queue): '5' is not a queue of site aaic (expected a queue "
        "number of site aaic: 1 (Normal), 2 (Short), 3 (Middle), 4 (Long))")


@pytest.mark.parametrize("value", ["2018-13-01 00:00:00", "2018-02-29 10:00:00",
                                   "2018-01-05 24:00:00", "2018-01-05T09:30:00",
                                   "2018-01-05T09:30:00+25:00", "yesterday", "2018/01/05 09:30:00"])
def test_unparseable_timestamp(tmp_path, value):
    path = _raw(tmp_path, _with_field(1, "start", value))
    assert _error(path) == (f"{path}:3: field 'start' (start time): '{value}' is not a timestamp "
                            f"(expected {EXPECTED_TIMESTAMP})")


def test_nonexistent_local_time_in_a_daylight_saving_zone(tmp_path):
    settings = json.loads((schemas_dir() / "sites" / "aaic.json").read_text())
    settings.update(name="ny", time_zone="America/New_York")
    rows = _with_field(2, "finish", "2018-03-11 02:30:00")
    path = _raw(tmp_path, rows)
    assert _error(path, site=site_from_settings(settings)) == (
        f"{path}:4: field 'finish' (finish time): '2018-03-11 02:30:00' is ambiguous or does not "
        "exist in America/New_York local time (a daylight-saving change) "
        f"(expected {EXPECTED_TIMESTAMP})")


@pytest.mark.parametrize("value", ["1:75:00", "01:00", "1h", "01:00:00.5"])
def test_unparseable_duration(tmp_path, value):
    path = _raw(tmp_path, _with_field(0, "walltime_req", value))
    assert _error(path) == (f"{path}:2: field 'walltime_req' (requested walltime): '{value}' is "
                            "not a duration (expected seconds or HH:MM:SS)")


def test_first_bad_line_is_reported_whatever_the_column(tmp_path):
    rows = _with_field(2, "nodes", "x", rows=_with_field(1, "walltime", "oops"))
    path = _raw(tmp_path, rows)
    assert _error(path).startswith(f"{path}:3: field 'walltime' (walltime): 'oops'")


def test_empty_file(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes(b"")
    assert _error(path) == (f"{path}: empty file: no header row and no job rows "
                            "(expected a header row and one job per line)")
    path.write_bytes(b"\n  \n")
    assert _error(path).startswith(f"{path}: empty file: no header row")


def test_header_without_job_rows(tmp_path):
    path = tmp_path / "log.csv.gz"
    path.write_bytes(gzip.compress((RAW_HEADER + "\n").encode()))
    assert _error(path) == (f"{path}:1: no job rows: the file holds only a header "
                            "(expected one job per line after the header, or --allow-empty for "
                            "an empty trace)")
    assert nqsii.read(path, allow_empty=True).num_rows == 0


@pytest.mark.parametrize("header, form", [(PUBLISHED_HEADER, "published"), (RAW_HEADER, "raw")])
def test_a_header_only_log_takes_its_form_from_the_separator(tmp_path, header, form):
    path = tmp_path / "log.csv"
    path.write_text(header + "\n")
    layout = jt.get_metadata(nqsii.read(path, allow_empty=True))["nqsii"]
    assert (layout["form"], layout["separator"]) == (form, ", " if form == "published" else ",")


def test_errors_with_a_forced_form_name_the_file(tmp_path):
    path = _raw(tmp_path, header=RAW_HEADER.replace("termcode", "exit_status"))
    assert _error(path, form="raw").startswith(f"{path}:1: header: unknown column 'exit_status'")
    path = _raw(tmp_path, [RAW_ROWS[0], RAW_ROWS[1].rsplit(",", 1)[0]])
    assert _error(path, form="raw") == f"{path}:3: 12 fields, expected 13 (one per header column)"


@pytest.mark.parametrize("column", ["user", "group"])
def test_published_user_and_group_are_integer_ids(tmp_path, column):
    path = tmp_path / "p.csv"
    rows = _with_field(1, column, "alice", PUBLISHED_ROWS, PUBLISHED_HEADER)
    path.write_text("\n".join([PUBLISHED_HEADER, *rows]) + "\n")
    with pytest.raises(InputError) as info:
        nqsii.read(path, form="published")
    assert (info.value.line, info.value.value) == (3, "alice")
    assert info.value.field.startswith(f"field {column!r}")


def test_binary_garbage(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes((RAW_HEADER + "\n").encode() + b"1,\x00\x01\x02\xff\n")
    assert _error(path) == (f"{path}:2: binary data: NUL byte, not a text file "
                            "(expected a CSV text file)")
    path.write_bytes((RAW_HEADER + "\n" + RAW_ROWS[0] + "\n").encode() + b"2,b\xe9b,lab\n")
    assert _error(path) == (f"{path}:3: not UTF-8 text: byte 0xe9 cannot be decoded "
                            "(expected a CSV text file in UTF-8)")


def test_truncated_gzip(tmp_path):
    path = tmp_path / "log.csv.gz"
    whole = gzip.compress(("\n".join([RAW_HEADER, *RAW_ROWS]) + "\n").encode())
    path.write_bytes(whole[: len(whole) // 2])
    message = _error(path)  # names the file and how far decompression got
    assert message.startswith(f"{path}: truncated gzip file: the compressed stream ends early, "
                              "after ")
    assert " complete line (" in message or " complete lines (" in message
    assert message.endswith(" bytes) decompressed (expected a complete gzip file)")


def test_missing_column(tmp_path):
    header = RAW_HEADER.replace(",start,", ",")
    rows = [",".join(r.split(",")[:9] + r.split(",")[10:]) for r in RAW_ROWS]
    path = _raw(tmp_path, rows, header=header)
    assert _error(path) == (
        f"{path}:1: header: missing column 'start' (start time) (expected the 13 columns job_id, "
        "user, group, queue, nodes, gpus, walltime_req, termcode, submit, start, finish, wait, "
        "walltime, or their aliases (see schemas/nqsii-raw.schema.json))")


def test_unknown_repeated_or_absent_header(tmp_path):
    path = _raw(tmp_path, header=RAW_HEADER.replace("termcode", "exit_status"))
    assert _error(path).startswith(f"{path}:1: header: unknown column 'exit_status' (expected")
    path = _raw(tmp_path, header=RAW_HEADER.replace("termcode", "end"))
    assert _error(path) == (f"{path}:1: header: column 'finish' repeats column 'end' "
                            "(finish time)")
    path = _raw(tmp_path, rows=RAW_ROWS[1:], header=",".join(str(i) for i in range(13)))
    assert _error(path).startswith(f"{path}:1: header: no header row: line 1 holds numbers "
                                   "(expected a header naming the 13 columns")


@pytest.mark.parametrize("old, new", [("termcode", "exit_status"), ("termcode", "end")])
def test_a_bad_header_column_is_the_error_value(tmp_path, old, new):
    with pytest.raises(InputError) as info:
        nqsii.read(_raw(tmp_path, header=RAW_HEADER.replace(old, new)))
    # unknown: the name itself; repeated: the later column ('finish' after 'end')
    assert info.value.value == ("finish" if new == "end" else new)


def test_header_names_ignore_case_spaces_and_hyphens(tmp_path):
    header = ("Job ID,USER,group-id, Queue ,Num  Nodes,gpus - per - node,Walltime Req,TermCode,"
              "Submit Time,start,finish,wait,walltime")
    table = nqsii.read(_raw(tmp_path, header=header))
    assert table.column("gpus_per_node").to_pylist() == [1, 1, 8]
    assert jt.get_metadata(table)["nqsii"]["header"][:3] == ["Job ID", "USER", "group-id"]


def test_header_case_folding_is_not_unicode_upper_case(tmp_path):
    """'ſ' (long s) upper-cases to 'S' but is no 's': the column is unknown, not 'user'."""
    path = _raw(tmp_path, header=RAW_HEADER.replace("user", "uſer"))
    assert _error(path).startswith(f"{path}:1: header: unknown column 'uſer' (expected")


# --- issue 13 sweep: a bad token in any number field is refused, located, and nothing written --

def _sample_lines(form: str) -> list[str]:
    from swftools import formats

    table = formats.read(Path(__file__).resolve().parent.parent / "samples" / "aaic-sample.csv.gz")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.csv"
        nqsii.write(table.slice(0, 4), path, form=form)
        return path.read_text().splitlines()


_FORMS = {form: _sample_lines(form) for form in ("published", "raw")}


@given(st.sampled_from(sorted(_FORMS)), st.data(), st.integers(0, 3),
       bad_integer_tokens | st.just(""))
def test_a_bad_token_in_any_number_field_names_line_and_field(form, data, row, token):
    from swftools import formats

    lines = _FORMS[form]
    separator = ", " if form == "published" else ","
    header = [h.strip() for h in lines[0].split(",")]
    names = {"user", "group"} if form == "raw" else set()  # raw user/group are names: any text
    column = data.draw(st.sampled_from([h for h in header if h not in names]))
    cells = [c.strip() for c in lines[1 + row].split(",")]
    cells[header.index(column)] = token
    body = lines[:1 + row] + [separator.join(cells)] + lines[2 + row:]
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "log.csv", Path(tmp) / "out.swf"
        src.write_text("\n".join(body) + "\n", encoding="utf-8")
        with pytest.raises(InputError):
            formats.convert(src, out)  # (the form detected from the first line may differ)
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["log.csv"]
        with pytest.raises(InputError) as err:
            nqsii.read(src, form=form)
    assert err.value.line == row + 2
    assert err.value.field.startswith(f"field {column!r}")
    assert err.value.value == token


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
