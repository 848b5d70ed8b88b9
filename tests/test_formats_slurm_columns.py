"""Slurm dumps as they come (issue 24): headerless with --columns, aliases, repeated columns,
--parsable and other delimiters, blank lines, empty files, array ids without a unique JobIDRaw,
mixed CPU/GPU sites, the walltime rule, and the real corpus files."""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from swftools.cli import app
from swftools.errors import InputError, UsageError
from swftools.formats import slurm
from swftools.formats.sacct_command import RECOMMENDED_COMMAND, RECOMMENDED_FORMAT
from swftools.formats.skipping import skipped_lines
from swftools.formats.slurm.fields import TIME_EXPECTED, TIMELIMIT_EXPECTED
from swftools.metadata import TableMetadata

from .strategies import sacct_layouts

CORPUS = Path(__file__).resolve().parent / "corpus" / "slurm"
runner = CliRunner()
FS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.function_scoped_fixture])
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

HEADER = "JobID|JobIDRaw|User|Partition|Submit|Start|End|Elapsed|Timelimit|State|NNodes|NCPUS|AllocTRES"


def _row(job: str = "5", raw: str = "5", **cells: str) -> str:
    base = dict(zip(HEADER.split("|"), [
        job, raw, "u", "p", "2023-01-01T00:00:00", "2023-01-01T00:01:00", "2023-01-01T00:02:00",
        "00:01:00", "01:00:00", "COMPLETED", "1", "4", "cpu=4,node=1"]))
    base.update(cells)
    return "|".join(base.values())


def _write(tmp_path: Path, text: str, name: str = "jobs.sacct") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------- layouts (property)

@FS
@given(case=sacct_layouts())
def test_any_layout_reads_as_the_plain_file(tmp_path, case):
    """Headerless + --columns, any column order, aliases, any case, a column given twice,
    --parsable's trailing '|', another --delimiter, blank lines anywhere: the same table."""
    plain, laid_out, options = case
    a, b = _write(tmp_path, plain, "a.sacct"), _write(tmp_path, laid_out, "b.sacct")
    try:
        expected = slurm.read(a, tz="Asia/Tokyo")
    except InputError as exc:
        assert "no finished jobs" in str(exc)
        with pytest.raises(InputError, match="no finished jobs"):
            slurm.read(b, tz="Asia/Tokyo", **options)
        return
    got = slurm.read(b, tz="Asia/Tokyo", **options)
    assert got.equals(expected)
    assert TableMetadata.from_table(got).unit == TableMetadata.from_table(expected).unit


# ------------------------------------------------------------------------- cells (columns.py)

def _first_error(tmp_path: Path, *rows: str, header: str = HEADER, **options) -> InputError:
    with pytest.raises(InputError) as info:
        slurm.read(_write(tmp_path, "\n".join([header, *rows]) + "\n"), **options)
    return info.value


@pytest.mark.parametrize("cells,field,message,expected", [
    ({"Submit": "Unknown"}, "Submit", "'Unknown' is unknown", "YYYY-MM-DDTHH:MM:SS (local time)"),
    ({"Submit": "yesterday"}, "Submit", "'yesterday' is not a time",
     "YYYY-MM-DDTHH:MM:SS (local time)"),
    ({"Start": "yesterday"}, "Start", "'yesterday' is not a time", TIME_EXPECTED),
    ({"Start": "2023-01-01 00:01:00"}, "Start", "'2023-01-01 00:01:00' is not a time",
     TIME_EXPECTED),
    ({"Start": "2023-01-01X00:01:00"}, "Start", "'2023-01-01X00:01:00' is not a time",
     TIME_EXPECTED),
    ({"JobIDRaw": ""}, "JobIDRaw", "'' is empty", "a non-negative integer"),
    ({"NNodes": "two"}, "NNodes", "'two' is not a non-negative integer", "a non-negative integer"),
    ({"Timelimit": "soon"}, "Timelimit", "'soon' is not a valid time limit", TIMELIMIT_EXPECTED),
])
def test_a_bad_cell_says_what_it_is_and_what_was_expected(tmp_path, cells, field, message,
                                                          expected):
    """Only the second job line is bad: the error names its line, its column, why and the
    form the column takes (a required Submit is a time; Start may be Unknown)."""
    err = _first_error(tmp_path, _row(), _row("6", "6", **cells))
    assert (err.line, err.message, err.expected) == (3, message, expected), str(err)
    assert err.field.startswith(f"field {field!r} ("), str(err)


def test_times_with_a_space_for_the_t_are_refused_even_in_every_row(tmp_path):
    """sacct writes ``YYYY-MM-DDTHH:MM:SS``; a column of ``YYYY-MM-DD HH:MM:SS`` is no sacct
    output (not read as times)."""
    spaced = {name: f"2023-01-01 00:0{i}:00" for i, name in enumerate(("Submit", "Start", "End"))}
    err = _first_error(tmp_path, _row(**spaced), _row("6", "6", **spaced))
    assert (err.line, err.value, err.message) == (2, "2023-01-01 00:02:00",  # End: read first
                                                  "'2023-01-01 00:02:00' is not a time")


def test_a_time_that_does_not_exist_in_the_zone_is_located(tmp_path):
    """2023-03-26 02:30 is skipped by Berlin's spring change: refused, not shifted."""
    times = dict(Submit="2023-03-26T01:00:00", End="2023-03-26T04:00:00")
    err = _first_error(tmp_path, _row(Start="2023-03-26T01:30:00", **times),
                       _row("6", "6", Start="2023-03-26T02:30:00", **times), tz="Europe/Berlin")
    assert (err.line, err.value, err.expected) == (3, "2023-03-26T02:30:00",
                                                   "a local time that exists once")
    assert err.message == ("'2023-03-26T02:30:00' is ambiguous or does not exist in Europe/Berlin "
                           "local time (a daylight-saving change)")
    assert err.field.startswith("field 'Start' (")


def test_the_first_bad_time_is_reported_whatever_its_length(tmp_path):
    """A cell of the wrong length before a 19-character one that is no date: the first is
    reported; with --skip-bad-lines both lines are left out."""
    rows = [_row("6", "6", Start="yesterday"), _row("7", "7", Start="2023-13-01T00:00:00"),
            _row()]
    assert _first_error(tmp_path, *rows).line == 2
    table = slurm.read(_write(tmp_path, "\n".join([HEADER, *rows]) + "\n"),
                       skip_bad_lines=True)
    assert table.column("job_id").to_pylist() == [5]
    assert [s["line"] for s in skipped_lines(table)] == [2, 3]


def test_a_cell_against_a_pattern_is_not_valid_here(tmp_path):
    header = HEADER + "|ExitCode"
    err = _first_error(tmp_path, _row() + "|0:0", _row("6", "6") + "|0", header=header)
    assert (err.line, err.message, err.expected) == (3, "'0' is not valid here",
                                                     "EXIT:SIGNAL such as 0:0")


# ------------------------------------------------------------------------- header or --columns

def test_headerless_needs_columns_and_says_how(tmp_path):
    path = _write(tmp_path, _row() + "\n")
    with pytest.raises(InputError) as info:
        slurm.read(path)
    err = info.value
    assert err.line == 1 and "no header line" in str(err) and "--noheader" in str(err)
    assert "--columns" in err.expected and RECOMMENDED_COMMAND in err.expected
    table = slurm.read(path, columns=HEADER.replace("|", ",").lower())
    assert table.column("job_id").to_pylist() == [5]
    assert TableMetadata.from_table(table).extra["slurm"]["columns_from"] == "--columns"


def test_columns_and_a_header_that_differs(tmp_path):
    path = _write(tmp_path, f"{HEADER}\n{_row()}\n")
    same = slurm.read(path, columns=HEADER.replace("|", ", "))  # the header is skipped
    assert same.equals(slurm.read(path))
    with pytest.raises(InputError, match="header differs from --columns") as info:
        slurm.read(path, columns=HEADER.replace("|", ",").replace("NCPUS", "ReqCPUS"))
    assert info.value.line == 1


def test_columns_with_the_wrong_count_and_bad_lists(tmp_path):
    path = _write(tmp_path, _row() + "\n")
    with pytest.raises(InputError, match="13 fields, --columns names 12") as info:
        slurm.read(path, columns=",".join(HEADER.split("|")[:-1]))
    assert info.value.line == 1
    with pytest.raises(InputError, match="missing sacct column.*State") as info:
        slurm.read(path, columns=HEADER.replace("|", ",").replace("State", "Status"))
    assert info.value.line is None and info.value.field == "--columns"
    with pytest.raises(UsageError, match="--columns"):
        slurm.read(path, columns="JobID,,State")
    wide = slurm.read(path, columns=HEADER.replace("|", ",").replace("User", "User%20"))
    assert wide.column("user").to_pylist() == ["u"]


def test_the_recommended_command_reads_as_it_is(tmp_path):
    names = RECOMMENDED_FORMAT.split(",")
    cells = {"JobIDRaw": "7", "JobID": "7", "User": "u", "Group": "g", "Partition": "p",
             "Submit": "2023-01-01T00:00:00", "Start": "2023-01-01T00:01:00",
             "End": "2023-01-01T00:02:00", "ElapsedRaw": "60", "Timelimit": "01:00:00",
             "State": "COMPLETED", "NNodes": "1", "NCPUS": "4", "ReqTRES": "cpu=4,mem=4G,node=1",
             "AllocTRES": "cpu=4,mem=4G,node=1", "NodeList": "n01"}
    text = "|".join(names) + "\n" + "|".join(cells[n] for n in names) + "\n"
    table = slurm.read(_write(tmp_path, text))
    assert table.select(["job_id", "cpus", "gpus", "walltime_s", "nodes"]).to_pylist() == [
        {"job_id": 7, "cpus": 4, "gpus": 4, "walltime_s": 60, "nodes": 1}]
    assert "--noheader" not in RECOMMENDED_COMMAND and "--parsable2" in RECOMMENDED_COMMAND


# ------------------------------------------------------------------------- delimiters, blanks

def test_other_delimiters_are_named_and_read(tmp_path):
    path = _write(tmp_path, (HEADER + "\n" + _row() + "\n").replace("|", "☃"))
    with pytest.raises(InputError) as info:
        slurm.read(path)
    assert info.value.line == 1 and "'☃'" in str(info.value) and "--delimiter" in str(info.value)
    assert slurm.read(path, delimiter="☃").equals(
        slurm.read(_write(tmp_path, HEADER + "\n" + _row() + "\n", "plain.sacct")))
    comma = _write(tmp_path, "JobID,JobName,ReqTRES,Start\n1,job1,cpu=1,1970-01-01T03:00:00\n",
                   "c.csv")
    with pytest.raises(InputError, match="seems to use ','"):
        slurm.read(comma)
    mixed = _write(tmp_path, (HEADER + "\n" + _row() + "\n").replace("|", ";").replace("u;p", "u|x;p"),
                   "m.sacct")
    with pytest.raises(InputError, match="a '\\|' in a file delimited by ';'") as info:
        slurm.read(mixed, delimiter=";")
    assert info.value.line == 2


def test_parsable_trailing_bar(tmp_path):
    lines = [HEADER, _row(), _row("6", "6")]
    plain = slurm.read(_write(tmp_path, "\n".join(lines) + "\n", "a.sacct"))
    assert slurm.read(_write(tmp_path, "|\n".join(lines) + "|\n", "b.sacct")).equals(plain)
    with pytest.raises(InputError, match="a field after the last column") as info:
        slurm.read(_write(tmp_path, "|\n".join(lines) + "|x\n", "c.sacct"))
    assert info.value.line == 3
    with pytest.raises(InputError, match="13 fields, the header names 13 and a final") as info:
        slurm.read(_write(tmp_path, "|\n".join(lines) + "\n", "d.sacct"))
    assert info.value.line == 3


def test_blank_lines_are_skipped_and_lines_still_counted(tmp_path):
    text = f"\n{HEADER}\n\n{_row()}\r\n\n{_row('6', '6', NNodes='two')}\n\n"
    with pytest.raises(InputError) as info:
        slurm.read(_write(tmp_path, text))
    assert (info.value.line, info.value.value) == (6, "two")
    good = slurm.read(_write(tmp_path, text.replace("two", "1"), "g.sacct"))
    assert good.column("job_id").to_pylist() == [5, 6]


@pytest.mark.parametrize("text", ["", "\n\n", "\r\n"])
def test_an_empty_file_is_called_empty(tmp_path, text):
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match="the file is empty") as info:
        slurm.read(path)
    assert "sacct" in info.value.expected
    assert slurm.read(path, allow_empty=True).num_rows == 0


# ------------------------------------------------------------------------- columns and aliases

def test_alloc_nodes_without_nnodes_or_nodelist_does_not_crash(tmp_path):
    """The reported crash (TypeError in table.py): AllocNodes, AllocCPUS, no NNodes/NodeList."""
    header = "JobID|JobIDRaw|User|Partition|Submit|Start|End|Elapsed|State|AllocNodes|AllocCPUS|ReqTRES"
    row = ("7|7|u|p|2023-01-01T00:00:00|2023-01-01T00:01:00|2023-01-01T00:02:00|00:01:00|"
           "COMPLETED|2|8|cpu=8,gres/gpu=2")
    path = _write(tmp_path, f"{header}\n{row}\n")
    table = slurm.read(path)
    assert table.select(["nodes", "cpus", "gpus", "gpus_per_node"]).to_pylist() == [
        {"nodes": 2, "cpus": 8, "gpus": 2, "gpus_per_node": 1}]
    no_nodes = _write(tmp_path, f"{header}\n{row}\n".replace("|AllocNodes", "").replace("|2|8|", "|8|"),
                      "n.sacct")
    assert slurm.read(no_nodes).select(["nodes", "gpus", "gpus_per_node"]).to_pylist() == [
        {"nodes": None, "gpus": 2, "gpus_per_node": None}]
    result = runner.invoke(app, ["convert", str(no_nodes), "--out", str(tmp_path / "o.swf")])
    assert result.exit_code == 0, result.output


def test_a_column_given_twice(tmp_path):
    header = HEADER + "|AllocNodes|User"
    same = _write(tmp_path, f"{header}\n{_row()}|1|u\n")
    assert slurm.read(same).column("nodes").to_pylist() == [1]
    differ = _write(tmp_path, f"{header}\n{_row()}|1|u\n{_row('6', '6')}|3|u\n", "d.sacct")
    with pytest.raises(InputError, match="differs from column 'NNodes'") as info:
        slurm.read(differ)
    assert (info.value.line, info.value.value) == (3, "3") and "AllocNodes" in info.value.field


def test_empty_and_unlimited_timelimits_are_unknown(tmp_path):
    rows = [_row(Timelimit=""), _row("6", "6", Timelimit="UNLIMITED"),
            _row("7", "7", Timelimit="Partition_Limit"), _row("8", "8", Timelimit="2")]
    table = slurm.read(_write(tmp_path, "\n".join([HEADER, *rows]) + "\n"))
    assert table.column("requested_walltime_s").to_pylist() == [None, None, None, 120]


def test_array_tasks_sharing_one_jobidraw_are_numbered(tmp_path):
    rows = [_row("40_100", "40", Submit="2023-01-01T00:00:10"), _row("40_[1-3]", "40"),
            _row("40_5", "40"), _row("41+1", "43")]
    table = slurm.read(_write(tmp_path, "\n".join([HEADER, *rows]) + "\n"))
    assert table.column("source_job_id").to_pylist() == ["40_100", "40_[1-3]", "40_5", "41+1"]
    assert table.column("job_id").to_pylist() == [4, 1, 2, 3]  # submit order, then line order
    unique = slurm.read(_write(tmp_path, "\n".join([HEADER, _row("40_1", "41"),
                                                    _row("40_2", "42")]) + "\n", "u.sacct"))
    assert unique.column("job_id").to_pylist() == [41, 42]
    assert "source_job_id" not in unique.column_names or \
        unique.column("source_job_id").null_count == 2


def test_gres_columns_count_gpus(tmp_path):
    header = HEADER.replace("AllocTRES", "ReqGRES|AllocGRES")
    rows = [_row(AllocTRES="gpu:2|gpu:v100:2(IDX:0-1)"), _row("6", "6", AllocTRES="|"),
            _row("7", "7", AllocTRES="gpu:1|")]
    table = slurm.read(_write(tmp_path, "\n".join([header, *rows]) + "\n"))
    assert table.select(["gpus", "requested_procs", "cpus"]).to_pylist() == [
        {"gpus": 2, "requested_procs": 2, "cpus": 4}, {"gpus": 0, "requested_procs": 0, "cpus": 4},
        {"gpus": 1, "requested_procs": 1, "cpus": 4}]
    with pytest.raises(InputError, match="not a valid allocated GRES") as info:
        slurm.read(_write(tmp_path, "\n".join([header, _row(AllocTRES="|gpu:x:y:z")]) + "\n", "b.sacct"))
    assert info.value.line == 2


def test_one_gpu_job_keeps_the_cpu_jobs_processors(tmp_path):
    """xdmod-phillips: one gres/gpu job among CPU jobs turned 555 of 556 into 0-processor jobs."""
    rows = [_row(AllocTRES="cpu=12,gres/gpu=2,node=1", NCPUS="12"),
            _row("6", "6", AllocTRES="cpu=64,node=8", NCPUS="64", NNodes="8")]
    table = slurm.read(_write(tmp_path, "\n".join([HEADER, *rows]) + "\n"))
    assert table.select(["gpus", "cpus", "nodes"]).to_pylist() == [
        {"gpus": 2, "cpus": 12, "nodes": 1}, {"gpus": 0, "cpus": 64, "nodes": 8}]
    assert TableMetadata.from_table(table).unit == "gpu"


def test_walltime_is_end_minus_start_and_elapsed_kept(tmp_path):
    rows = [_row(), _row("6", "6", Elapsed="00:00:40")]  # suspended for 20 s
    table = slurm.read(_write(tmp_path, "\n".join([HEADER, *rows]) + "\n"))
    assert table.column("walltime_s").to_pylist() == [60, 60]
    assert table.column("recorded_walltime_s").to_pylist() == [None, 40]
    meta = TableMetadata.from_table(table)
    assert meta.extra["slurm"]["walltime_largest_difference_s"] == 20
    back = tmp_path / "back.sacct"
    slurm.write(table, back, force=True)
    again = slurm.read(back)
    for name in ("walltime_s", "recorded_walltime_s", "cpus", "job_id"):
        assert again.column(name).to_pylist() == table.column(name).to_pylist(), name


def test_source_job_ids_round_trip(tmp_path):
    rows = [_row("40_2", "40", Submit="2023-01-01T00:00:10"), _row("40_1", "40")]
    table = slurm.read(_write(tmp_path, "\n".join([HEADER, *rows]) + "\n"))
    back = tmp_path / "back.sacct"
    losses = slurm.write(table, back, force=True)
    assert any("source_job_id" in loss for loss in losses)
    again = slurm.read(back)
    for name in ("job_id", "source_job_id", "cpus", "submit_time"):
        assert sorted(again.column(name).to_pylist()) == sorted(table.column(name).to_pylist())


# ------------------------------------------------------------------------- CLI

def test_cli_columns_and_delimiter(tmp_path):
    src = _write(tmp_path, (_row() + "\n").replace("|", "☃"), "dump.log")
    out = tmp_path / "o.swf"
    columns = HEADER.replace("|", ",")
    result = runner.invoke(app, ["convert", str(src), "--columns", columns, "--delimiter", "☃",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["convert", str(src), "--from", "slurm", "--out", str(out),
                                 "--force"])
    assert result.exit_code == 1 and "'☃'" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["convert", str(src), "--from", "pbs", "--columns", columns,
                                 "--out", str(out), "--force"])
    assert result.exit_code == 2 and "--columns applies to slurm input only" in result.output
    result = runner.invoke(app, ["convert", "--help"])
    assert "--columns" in result.output and "--delimiter" in result.output


# ------------------------------------------------------------------------- the real corpus

def _corpus_columns() -> dict[str, str]:
    """The headerless dumps' column lists, from tests/corpus/SOURCES.md."""
    text = (CORPUS.parent / "SOURCES.md").read_text()
    blocks = re.findall(r"^- `([^`]+)` \((.*?)(?=^- |\Z)", text.split("## Column lists")[1],
                        re.M | re.S)
    return {name: re.search(r"`([A-Za-z]+(?:,[A-Za-z]+)+)`", body).group(1)
            for name, body in blocks}


CORPUS_OUTCOMES = {
    # file: (delimiter, jobs or the error's text)
    "hb-jobinfo-sacct.txt": ("☃", 90),
    "slurm-jobinfo-sacct.txt": ("☃", 20),
    "slurm2sql-test-data1.csv": (None, 2),
    "slurm2sql-test-data2.csv": (None, 2),
    "slurm2sql-test-data3.csv": (None, ":1: line: the fields are not '|'-separated: the file "
                                       "seems to use ','"),
    "xdmod-accounting-logs-with-job-arrays.log": (None, 6),
    "xdmod-accounting-logs.log": (None, 4),
    "xdmod-non-ended-job-state.log": (None, ": no finished jobs: every job is pending or running"),
    "xdmod-phillips.log": (None, 556),
    "xdmod-pozidriv.log": (None, 546),
    "xdmod-robertson-filter-test.log": (None, 1),
    "xdmod-unknown-job-state.log": (None, ":1: field 'state' (state): 'FOO' is not a valid state"),
    "xdmod-utf8-multibyte-chars.log": (None, 1),
}


def test_the_corpus_lists_every_file():
    assert sorted(CORPUS_OUTCOMES) == sorted(p.name for p in CORPUS.iterdir())
    assert sorted(_corpus_columns()) == ["hb-jobinfo-sacct.txt", "slurm-jobinfo-sacct.txt",
                                         "xdmod-*.log"]


@pytest.mark.parametrize("name", sorted(CORPUS_OUTCOMES))
def test_corpus_file_converts_or_is_refused_with_one_located_line(tmp_path, name):
    src = CORPUS / name
    delimiter, outcome = CORPUS_OUTCOMES[name]
    prefix = next((p for p in _corpus_columns() if fnmatch(name, p)), None)
    args = ["convert", str(src), "--from", "slurm"]
    if prefix is not None:
        args += ["--columns", _corpus_columns()[prefix]]
    if delimiter:
        args += ["--delimiter", delimiter]
    result = runner.invoke(app, args + ["--out", str(tmp_path / "o.swf")])
    assert "Traceback" not in result.output
    if isinstance(outcome, str):
        assert result.exit_code == 1, result.output
        errors = [line for line in result.output.splitlines() if f"{src}:" in line]
        assert len(errors) == 1 and outcome in errors[0], result.output
        assert not (tmp_path / "o.swf").exists()
        return
    assert result.exit_code == 0, result.output
    table = slurm.read(src, columns=_corpus_columns()[prefix] if prefix else None,
                       delimiter=delimiter)
    assert table.num_rows == outcome
    rows = table.select(["gpus", "cpus"]).to_pylist()
    started = table.column("start_time").is_valid().to_pylist()
    # no 0-processor job that ran (one cancelled before it started was allocated nothing)
    assert not [r for r, ran in zip(rows, started) if ran and r["cpus"] == 0 and not r["gpus"]]
    check = runner.invoke(app, ["validate", str(tmp_path / "o.swf")])
    assert check.exit_code == 0, check.output
    pkg = tmp_path / "pkg"
    result = runner.invoke(app, args + ["--out", str(pkg), "--to", "package"])
    assert result.exit_code == 0, result.output
    check = runner.invoke(app, ["validate", str(pkg)])
    assert check.exit_code == 0, check.output
