"""The sacct reader's located errors and metadata: lines with the wrong field count, invalid
UTF-8, empty files (and what --allow-empty gives)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swftools.errors import InputError
from swftools.formats import slurm
from swftools.formats.skipping import skipped_lines
from swftools.formats.sacct_command import RECOMMENDED_COMMAND
from swftools.metadata import TableMetadata

pytestmark = pytest.mark.filterwarnings("ignore::swftools.formats.localtime.AssumedTimeZoneWarning")

HEADER = "JobID|Submit|Start|End|State"
ROW = "5|2023-01-01T00:00:00|2023-01-01T00:01:00|2023-01-01T00:02:00|COMPLETED"


def _error(path: Path, data: bytes, **opts) -> InputError:
    path.write_bytes(data)
    with pytest.raises(InputError) as err:
        slurm.read(path, **opts)
    return err.value


def test_a_line_with_an_extra_field_is_located_past_blank_lines(tmp_path):
    path = tmp_path / "jobs.sacct"
    bad = ROW.replace("5|", "6|").encode() + b"|\xff"
    e = _error(path, f"{HEADER}\n{ROW}\n\n".encode() + bad + b"\n")
    assert (e.path, e.line, e.field) == (str(path), 4, "line")
    assert e.message == "6 fields, the header names 5"
    assert e.value == ROW.replace("5|", "6|") + "|\ufffd"  # the bad byte shown replaced
    assert e.expected == "5 '|'-separated fields, as the header has"


def test_a_short_line_of_a_parsable_file_names_the_final_bar(tmp_path):
    path = tmp_path / "jobs.sacct"
    e = _error(path, f"{HEADER}|\n{ROW}|\n{ROW}\n".encode())
    assert (e.line, e.field, e.value) == (3, "line", ROW)
    assert e.message == "5 fields, the header names 5 and a final '|'"
    assert e.expected == "6 '|'-separated fields, as the header has"


def test_a_line_against_columns_names_the_columns(tmp_path):
    path = tmp_path / "jobs.sacct"
    e = _error(path, f"{ROW}\n{ROW}|x\n".encode(), columns=HEADER.replace("|", ","))
    assert (e.line, e.message) == (2, "6 fields, --columns names 5")
    assert e.expected == "5 '|'-separated fields, as --columns has"


@pytest.mark.parametrize("column", [0, 4])
def test_invalid_utf8_names_the_column_even_the_first(tmp_path, column):
    names = ["User", "JobID", "Submit", "Start", "End", "State"]
    cells = ["u", *ROW.split("|")]
    row = "|".join(cells).encode().split(b"|")
    row[column] = b"\xff" + row[column]
    path = tmp_path / "jobs.sacct"
    e = _error(path, "|".join(names).encode() + b"\n" + b"|".join(row) + b"\n")
    assert e.path == str(path)
    assert e.message == ("cannot read as sacct --parsable2 output: invalid UTF-8 in column "
                         f"#{column} ({names[column]!r})")
    assert e.expected == "UTF-8 text with '|'-separated fields"


def test_an_empty_file_says_how_to_make_one_or_to_allow_it(tmp_path):
    path = tmp_path / "empty.sacct"
    e = _error(path, b"\n")
    assert (e.path, e.line, e.message) == (str(path), None, "the file is empty")
    assert e.expected == f"sacct output, such as that of {RECOMMENDED_COMMAND} (or --allow-empty)"


def test_an_allowed_empty_file_has_the_metadata_of_a_read(tmp_path):
    path = tmp_path / "empty.sacct"
    path.write_text("")
    table = slurm.read(path, allow_empty=True, site="aaic")
    meta = TableMetadata.from_table(table)
    assert table.num_rows == 0
    assert (meta.source_file, meta.source_format, meta.site, meta.time_zone,
            meta.processor_unit, meta.unfinished_jobs) == (
        "empty.sacct", "slurm", "aaic", "Asia/Tokyo", "processor", 0)
    assert meta.extra == {"slurm": {"header": []}}
    utc = TableMetadata.from_table(slurm.read(path, allow_empty=True, tz="UTC"))
    assert (utc.site, utc.time_zone) == (None, "UTC")


# ------------------------------------------------------------------ hand-worked reads (issue 30)
# Each file below is small and its expected table is worked out by hand from the sacct rules
# the module docstring and docs/formats/slurm-pbs.md state (End - Start, steps filling empty
# cells, JobIDRaw/JobID identity, the state table), never from a previous read.

T0 = "2023-01-01T00:00:00"
T1 = "2023-01-01T00:01:00"
T2 = "2023-01-01T00:02:00"
BASE = {"JobID": "5", "Submit": T0, "Start": T1, "End": T2, "State": "COMPLETED"}


def _sacct(tmp_path: Path, names: list[str], *rows: dict, name: str = "jobs.sacct",
           eol: str = "\n") -> Path:
    """A --parsable2 file with header ``names``; each row: BASE's cells updated by the dict
    (a step line: give its JobID; cells not named are empty)."""
    lines = ["|".join(names)]
    for row in rows:
        cells = {**BASE, **row} if "." not in row.get("JobID", "") else dict(row)
        lines.append("|".join(str(cells.get(n, "")) for n in names))
    path = tmp_path / name
    path.write_bytes((eol.join(lines) + eol).encode("utf-8", "surrogateescape"))
    return path


def _col(table, name: str) -> list:
    return table.column(name).to_pylist()


def _slurm_meta(table) -> dict:
    return TableMetadata.from_table(table).extra["slurm"]


NAMES = ["JobID", "Submit", "Start", "End", "State"]


def test_elapsed_and_account_are_not_read_when_elapsedraw_and_group_say_it(tmp_path):
    """The unused column of a pair is not read, so its cells are not checked: a bad Elapsed
    beside ElapsedRaw, a control character in Account beside Group, and when given twice,
    not even whether the two agree."""
    names = [*NAMES, "Elapsed", "ElapsedRaw", "Account", "Group", "Elapsed", "Account"]
    row = {"Elapsed": "soon", "ElapsedRaw": "90", "Account": "a\x01", "Group": "grp"}
    path = _sacct(tmp_path, names, row)
    text = path.read_text().rstrip("\n")
    path.write_text(text[:text.rindex("|soon|")] + "|later|b\n")  # the repeats differ
    table = slurm.read(path)
    assert _col(table, "walltime_s") == [60]  # End - Start
    assert _col(table, "recorded_walltime_s") == [90]  # ElapsedRaw, which differs
    assert _col(table, "group") == ["grp"]
    alone = slurm.read(_sacct(tmp_path, [*NAMES, "Account", "Elapsed"],
                              {"Account": "acct", "Elapsed": "1-00:00:00"}, name="b.sacct"))
    assert _col(alone, "group") == ["acct"]
    assert _col(alone, "recorded_walltime_s") == [86400]  # 1-00:00:00 is a day
    with pytest.raises(InputError) as err:
        slurm.read(_sacct(tmp_path, [*NAMES, "Elapsed"], {"Elapsed": "soon"}, name="c.sacct"))
    assert (err.value.line, err.value.value) == (2, "soon")
    assert "'Elapsed'" in err.value.field


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_blank_lines_of_any_line_break_are_left_out_and_counted(tmp_path, eol):
    row = "|".join(BASE.values())
    lines = ["|".join(NAMES), row, "", row.replace("5", "6", 1), "",
             row.replace("5", "7", 1).replace(T2, "Unknown").replace("COMPLETED", "RUNNING"),
             row.replace("5", "8", 1).replace(T2, "x")]
    path = tmp_path / "jobs.sacct"
    path.write_text(eol.join(lines) + eol, newline="")
    with pytest.raises(InputError) as err:  # the blank lines 3 and 5 still count
        slurm.read(path)
    assert (err.value.line, err.value.value) == (7, "x")
    path.write_text(eol.join(lines).replace("|x|", f"|{T2}|") + eol, newline="")
    table = slurm.read(path)
    assert _col(table, "job_id") == [5, 6, 8]
    assert _slurm_meta(table)["jobs"] == 3 and _slurm_meta(table)["unfinished"] == {"RUNNING": 1}


def test_a_header_with_only_line_breaks_after_it_has_no_job_rows(tmp_path):
    for tail in (b"\r\n\r\n", b"\n\n\n", b"\r"):
        path = tmp_path / "jobs.sacct"
        path.write_bytes("|".join(NAMES).encode() + b"\n" + tail)
        with pytest.raises(InputError) as err:
            slurm.read(path)
        assert err.value.message == "no job rows: the file holds only a header"
        assert err.value.expected == ("one job per line after the header, or --allow-empty for "
                                      "an empty trace")
        table = slurm.read(path, allow_empty=True)
        assert table.num_rows == 0
        assert (_slurm_meta(table)["jobs"], _slurm_meta(table)["steps"]) == (0, 0)
    path.write_bytes("|".join(NAMES).encode() + b"\n\n \n")  # a space is data: a bad line
    with pytest.raises(InputError) as err:
        slurm.read(path)
    assert (err.value.line, err.value.field) == (3, "line")


def test_a_field_after_the_last_column_of_a_parsable_file(tmp_path):
    path = tmp_path / "jobs.sacct"
    row = "|".join(BASE.values())
    path.write_text("|".join(NAMES) + "|\n" + row + "|\n" + row.replace("5", "6", 1) + "|x\n")
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.path, e.line, e.field, e.value) == (str(path), 3, "line", "x")
    assert e.message == "a field after the last column: x"
    assert e.expected == "lines ending with '|' (sacct --parsable), as the first"
    table = slurm.read(path, skip_bad_lines=True)
    assert _col(table, "job_id") == [5]
    assert _slurm_meta(table)["header"] == NAMES  # the final '|' names no column


def test_invalid_utf8_in_a_step_line_is_found_and_unread_columns_are_not_checked(tmp_path):
    names = [*NAMES, "Comment", "NodeList"]
    bad_step = {"JobID": "5.batch", "NodeList": "n\udcff"}
    with pytest.raises(InputError) as err:
        slurm.read(_sacct(tmp_path, names, {"NodeList": "n1"}, bad_step))
    assert err.value.message == ("cannot read as sacct --parsable2 output: invalid UTF-8 in "
                                 "column #6 ('NodeList')")
    table = slurm.read(_sacct(tmp_path, names, {"Comment": "\udcff", "NodeList": "n1"},
                              {"JobID": "5.batch", "Comment": "\udcfe"}, name="b.sacct"))
    assert _col(table, "nodes") == [1]  # Comment is no column swftools reads


@pytest.mark.parametrize("job_first", [True, False])
def test_the_first_bad_job_id_is_reported_whether_on_a_job_or_a_step_line(tmp_path, job_first):
    rows = [{}, {"JobID": "5.batch"}, {"JobID": "6"}, {"JobID": "6.b@d"}, {"JobID": "7x"}]
    if not job_first:
        rows = [{}, {"JobID": "5.b@d"}, {"JobID": "6"}, {"JobID": "6.0"}, {"JobID": "7x"}]
    rows.insert(1 if job_first else 4, {"JobID": "x7"} if job_first else {})
    with pytest.raises(InputError) as err:
        slurm.read(_sacct(tmp_path, NAMES, *rows))
    want = (3, "x7") if job_first else (3, "5.b@d")
    assert (err.value.line, err.value.value) == want
    assert err.value.path == str(tmp_path / "jobs.sacct")
    assert err.value.message == f"{want[1]!r} is not valid here"
    assert err.value.field == "field 'JobID' (job id)"
    assert err.value.expected == "123, 123_4, 123+0, or a step 123.batch, 123.extern, 123.0"


def test_bad_job_ids_of_job_and_step_lines_are_all_skipped(tmp_path, monkeypatch):
    path = _sacct(tmp_path, NAMES, {}, {"JobID": "x6"}, {"JobID": "5.b@d"}, {"JobID": "7"},
                  {"JobID": "7.0"})
    table = slurm.read(path, skip_bad_lines=True)
    assert _col(table, "job_id") == [5, 7]
    report = skipped_lines(table)
    assert [(e["line"], e["value"]) for e in report] == [(3, "x6"), (4, "5.b@d")]
    for e in report:
        assert (e["field"], e["message"]) == ("field 'JobID' (job id)",
                                              f"{e['value']!r} is not valid here")
        assert e["expected"] == "123, 123_4, 123+0, or a step 123.batch, 123.extern, 123.0"
    assert _slurm_meta(table)["steps"] == 1  # the bad step line is left out with the others
    # a bad step in the second half of the steps and a bad Submit: both noted in one pass
    from swftools.formats.slurm import reader

    path = _sacct(tmp_path, NAMES, {}, {"JobID": "5.0"}, {"JobID": "5.1"}, {"JobID": "5.b@d"},
                  {"JobID": "6", "Submit": "x"}, name="b.sacct")
    calls = []
    real = reader._read_data
    monkeypatch.setattr(reader, "_read_data", lambda *a, **k: calls.append(1) or real(*a, **k))
    table = slurm.read(path, skip_bad_lines=True)
    assert [(e["line"], e["value"]) for e in skipped_lines(table)] == [(5, "5.b@d"), (6, "x")]
    assert len(calls) == 2


def test_a_step_with_no_job_line_is_located_and_skipped(tmp_path):
    path = _sacct(tmp_path, NAMES, {"JobID": "6.batch"}, {}, {"JobID": "5.0"}, {"JobID": "6"},
                  {"JobID": "8.extern"}, {"JobID": "9"})
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.path, e.line, e.value, e.field) == (str(path), 6, "8.extern",
                                                  "field 'JobID' (job id)")
    assert e.message == "'8.extern' is a step of a job with no job line"
    assert e.expected == "each step after the line of its job"
    table = slurm.read(path, skip_bad_lines=True)
    assert _col(table, "job_id") == [5, 6, 9]
    assert [entry["line"] for entry in skipped_lines(table)] == [6]


def test_steps_fill_only_the_cells_their_job_line_leaves_empty_first_step_first(tmp_path):
    names = [*NAMES, "NNodes", "NCPUS", "AllocTRES", "NodeList", "Partition"]
    rows = [{"NNodes": "", "NCPUS": "", "AllocTRES": "", "NodeList": "", "Partition": ""},
            {"JobID": "5.batch", "NCPUS": "", "NodeList": "", "Partition": "p"},
            {"JobID": "5.extern", "NNodes": "3", "NCPUS": "6", "AllocTRES": "cpu=6,node=3",
             "NodeList": "n[1-3]"},
            {"JobID": "5.0", "NNodes": "9", "NCPUS": "9", "AllocTRES": "cpu=9", "NodeList": "m"},
            {"JobID": "6", "NNodes": "1", "NCPUS": "2", "AllocTRES": "", "NodeList": "k1"},
            {"JobID": "6.0", "NNodes": "4", "NCPUS": "8", "AllocTRES": "cpu=8,node=4",
             "NodeList": "z[1-4]"},
            {"JobID": "7", "NNodes": "", "NCPUS": "", "NodeList": ""}]
    table = slurm.read(_sacct(tmp_path, names, *rows))
    assert _col(table, "job_id") == [5, 6, 7]
    assert _col(table, "nodes") == [3, 1, None]  # 6 keeps its own 1; 7 has no step
    assert _col(table, "cpus") == [6, 2, None]
    assert _col(table, "queue") == [None, None, None]  # Partition is not filled from steps
    assert _slurm_meta(table)["steps"] == 4


def test_job_ids_from_jobidraw_else_plain_jobids_else_numbered(tmp_path):
    names = [*NAMES, "JobIDRaw"]
    early = "2022-12-31T00:00:00"
    raw = slurm.read(_sacct(tmp_path, names, {"JobID": "5_1", "JobIDRaw": "11"},
                            {"JobID": "5_2", "JobIDRaw": "12"}))
    assert (_col(raw, "job_id"), _col(raw, "source_job_id")) == ([11, 12], [None, None])
    shared = slurm.read(_sacct(tmp_path, names, {"JobID": "5_1", "JobIDRaw": "5"},
                               {"JobID": "5_2", "JobIDRaw": "5", "Submit": early},
                               name="b.sacct"))
    assert _col(shared, "job_id") == [2, 1]  # numbered in submit order
    assert _col(shared, "source_job_id") == ["5_1", "5_2"]
    plain = slurm.read(_sacct(tmp_path, NAMES, {"JobID": "40"}, {"JobID": "30"}, name="c.sacct"))
    assert (_col(plain, "job_id"), _col(plain, "source_job_id")) == ([40, 30], [None, None])
    again = slurm.read(_sacct(tmp_path, NAMES, {"JobID": "40"}, {"JobID": "40", "Submit": early},
                              name="d.sacct"))  # sacct --duplicates
    assert (_col(again, "job_id"), _col(again, "source_job_id")) == ([2, 1], ["40", "40"])
    long = "1" * 19  # more than 18 digits: not read as a number
    big = slurm.read(_sacct(tmp_path, NAMES, {"JobID": long}, name="e.sacct"))
    assert (_col(big, "job_id"), _col(big, "source_job_id")) == ([1], [long])
    arrays = slurm.read(_sacct(tmp_path, NAMES, {"JobID": "5_1"}, {"JobID": "5_2",
                                                                    "Submit": early},
                               name="f.sacct"))
    assert (_col(arrays, "job_id"), _col(arrays, "source_job_id")) == ([2, 1], ["5_1", "5_2"])


def test_a_column_given_under_two_names_must_agree(tmp_path):
    path = _sacct(tmp_path, [*NAMES, "NNodes", "AllocNodes"], {"NNodes": "2", "AllocNodes": "2"},
                  {"JobID": "6", "NNodes": "1", "AllocNodes": "3"})
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.line, e.value, e.field) == (3, "3", "field 'AllocNodes' (node count)")
    assert e.message == "'3' differs from column 'NNodes' on the same line ('1')"
    assert e.expected == ("a column given twice (or under two names) to hold the same value on "
                          "every line")
    assert _col(slurm.read(path, skip_bad_lines=True), "nodes") == [2]


def test_states_give_termcode_and_status_and_unfinished_jobs_are_counted(tmp_path):
    """The schema's state table (docs/formats/slurm-pbs.md): COMPLETED 0/1, FAILED 1/0,
    TIMEOUT 2/0, CANCELLED 3/5, CANCELLED by 0 (root) 4/5, REQUEUED with an End 4/5; REQUEUED
    with End Unknown waits again: unfinished, like PENDING and RUNNING."""
    rows = [{"JobID": "1", "State": "COMPLETED"}, {"JobID": "2", "State": "FAILED"},
            {"JobID": "3", "State": "TIMEOUT"}, {"JobID": "4", "State": "CANCELLED by 1234"},
            {"JobID": "5", "State": "CANCELLED by 0"}, {"JobID": "6", "State": "REQUEUED"},
            {"JobID": "7", "State": "REQUEUED", "Start": "Unknown", "End": "Unknown"},
            {"JobID": "8", "State": "RUNNING", "End": "Unknown"},
            {"JobID": "9", "State": "PENDING", "Start": "Unknown", "End": "Unknown"},
            {"JobID": "10", "State": "PENDING", "Start": "Unknown", "End": "Unknown"},
            {"JobID": "11", "State": "COMPLETED"}]
    table = slurm.read(_sacct(tmp_path, NAMES, *rows))
    assert _col(table, "job_id") == [1, 2, 3, 4, 5, 6, 11]
    assert _col(table, "termcode") == [0, 1, 2, 3, 4, 4, 0]
    assert _col(table, "swf_status") == [1, 0, 0, 5, 5, 5, 1]
    meta = TableMetadata.from_table(table)
    assert list(meta.extra["slurm"]["unfinished"].items()) == [("PENDING", 2), ("REQUEUED", 1),
                                                               ("RUNNING", 1)]
    assert meta.unfinished_jobs == 4 and meta.extra["slurm"]["jobs"] == 7


def test_a_bad_state_names_every_state_and_is_skipped(tmp_path):
    path = _sacct(tmp_path, NAMES, {}, {"JobID": "6", "State": "DONE"}, {"JobID": "7",
                                                                        "State": "RUNNING"})
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.line, e.value, e.field) == (3, "DONE", "field 'State' (state)")
    assert e.message == "'DONE' is not a valid state"
    listed = e.expected.removeprefix("a sacct state: ").removesuffix(" (CANCELLED by UID too)")
    assert listed.split(", ")[:3] == ["COMPLETED", "FAILED", "OUT_OF_MEMORY"]
    assert {"CANCELLED", "REQUEUED", "PENDING", "RUNNING"} <= set(listed.split(", "))
    assert "CANCELLED by 0" not in listed and e.expected.startswith("a sacct state: ")
    table = slurm.read(path, skip_bad_lines=True)
    assert _col(table, "job_id") == [5]
    assert _slurm_meta(table)["unfinished"] == {"RUNNING": 1}
    assert [(x["line"], x["value"]) for x in skipped_lines(table)] == [(3, "DONE")]


def test_gpus_cpus_nodes_and_memory_from_tres(tmp_path):
    """AllocTRES before ReqTRES for what ran, ReqTRES for what was asked; a TRES string without
    GPUs in a GPU file is 0 GPUs; memory per requested GPU, nodes from the node TRES."""
    names = [*NAMES, "ReqTRES", "AllocTRES"]
    rows = [{"ReqTRES": "cpu=8,gres/gpu=4,mem=16G,node=2", "AllocTRES": "cpu=8,gres/gpu=4,node=2"},
            {"JobID": "6", "ReqTRES": "cpu=2,mem=3000M,node=1", "AllocTRES": ""},
            {"JobID": "7", "ReqTRES": "cpu=4,gres/gpu:a100=1,gres/gpu:v100=2,mem=9M",
             "AllocTRES": "cpu=4,gres/gpu=2,node=1"},
            {"JobID": "8", "ReqTRES": "", "AllocTRES": ""}]
    table = slurm.read(_sacct(tmp_path, names, *rows))
    assert TableMetadata.from_table(table).processor_unit == "gpu"
    assert _col(table, "gpus") == [4, 0, 2, None]  # allocated 2 of the 3 asked for
    assert _col(table, "requested_procs") == [4, 0, 3, None]
    assert _col(table, "cpus") == [8, 2, 4, None]
    assert _col(table, "nodes") == [2, None, 1, None]
    assert _col(table, "gpus_per_node") == [2, None, 2, None]
    # 16G = 16 * 1024 * 1024 KiB over 4 GPUs; 0 GPUs divide nothing; 9M over 3 GPUs = 3 MiB
    assert _col(table, "requested_memory_kb") == [4 * 1024 * 1024, None, 3 * 1024, None]


def test_a_file_without_gpus_counts_processors(tmp_path):
    names = [*NAMES, "ReqTRES", "AllocTRES", "NNodes"]
    rows = [{"ReqTRES": "cpu=6,mem=6K,node=2", "AllocTRES": "cpu=4,node=2", "NNodes": "2"},
            {"JobID": "6", "ReqTRES": "cpu=3,mem=2K", "AllocTRES": "cpu=3", "NNodes": "1"}]
    table = slurm.read(_sacct(tmp_path, names, *rows))
    assert TableMetadata.from_table(table).processor_unit == "processor"
    assert _col(table, "gpus") == [4, 3]  # the allocated CPUs
    assert _col(table, "requested_procs") == [6, 3]
    assert _col(table, "gpus_per_node") == [2, 3]
    assert _col(table, "requested_memory_kb") == [1, None]  # 6 KiB / 6; 2 KiB / 3 is not whole


def test_ncpus_and_reqcpus_and_their_order(tmp_path):
    names = [*NAMES, "NCPUS", "ReqCPUS", "ReqTRES", "AllocTRES"]
    rows = [{"NCPUS": "16", "ReqCPUS": "1", "ReqTRES": "cpu=2", "AllocTRES": "cpu=4"},
            {"JobID": "6", "NCPUS": "", "ReqCPUS": "1", "ReqTRES": "cpu=2", "AllocTRES": "cpu=4"},
            {"JobID": "7", "NCPUS": "", "ReqCPUS": "1", "ReqTRES": "cpu=2", "AllocTRES": ""},
            {"JobID": "8", "NCPUS": "", "ReqCPUS": "1", "ReqTRES": "", "AllocTRES": ""},
            {"JobID": "9", "NCPUS": "", "ReqCPUS": "", "ReqTRES": "", "AllocTRES": ""}]
    table = slurm.read(_sacct(tmp_path, names, *rows))
    assert _col(table, "cpus") == [16, 4, 2, 1, None]
    assert _col(table, "requested_procs") == [2, 2, 2, 1, None]  # ReqTRES, else ReqCPUS
    with pytest.raises(InputError) as err:
        slurm.read(_sacct(tmp_path, names, {"ReqCPUS": "x"}, name="b.sacct"))
    assert (err.value.value, err.value.field) == ("x", "field 'ReqCPUS' (requested CPU count)")


@pytest.mark.parametrize("gres,gpus,unit", [
    ("gpu:2", 2, "gpu"), ("gres/gpu:v100:3", 3, "gpu"), ("mps:100,gpu", 1, "gpu"),
    ("gpu(IDX:0)", 1, "gpu"), ("gpu=2", 2, "gpu"), ("mps:100", None, "processor"),
    ("gpus:2", None, "processor"), ("mygpu:2", None, "processor")])
def test_older_gres_columns_count_gpus(tmp_path, gres, gpus, unit):
    names = [*NAMES, "ReqGRES", "AllocGRES", "NCPUS"]
    rows = [{"ReqGRES": gres, "AllocGRES": "", "NCPUS": "4"},
            {"JobID": "6", "ReqGRES": "", "AllocGRES": "", "NCPUS": "2"}]
    table = slurm.read(_sacct(tmp_path, names, *rows))
    assert TableMetadata.from_table(table).processor_unit == unit
    if unit == "gpu":  # an empty GRES cell in a GPU file: no GPUs
        assert _col(table, "gpus") == [gpus, 0]
        assert _col(table, "requested_procs") == [gpus, 0]
    else:
        assert _col(table, "gpus") == [4, 2]
        assert _col(table, "requested_procs") == [None, None]


def test_alloc_gres_before_req_gres(tmp_path):
    names = [*NAMES, "ReqGRES", "AllocGRES"]
    rows = [{"ReqGRES": "gpu:4", "AllocGRES": "gpu:2"}, {"JobID": "6", "ReqGRES": "gpu:1"}]
    table = slurm.read(_sacct(tmp_path, names, *rows))
    assert _col(table, "gpus") == [2, 1]
    assert _col(table, "requested_procs") == [4, 1]
    with pytest.raises(InputError) as err:
        slurm.read(_sacct(tmp_path, names, {"AllocGRES": "gpu:x:y:z"}, name="b.sacct"))
    assert err.value.field == "field 'AllocGRES' (allocated GRES)"
    for one in ("ReqGRES", "AllocGRES"):  # one GRES column: its empty cells are 0 GPUs too
        table = slurm.read(_sacct(tmp_path, [*NAMES, one], {one: "gpu:2"}, {"JobID": "6"},
                                  name="c.sacct"))
        assert _col(table, "gpus") == [2, 0]


def test_node_counts_from_nnodes_else_counted_in_nodelist(tmp_path):
    names = [*NAMES, "NNodes", "NodeList", "AllocTRES"]
    rows = [{"NNodes": "", "NodeList": "a[1-3],b7", "AllocTRES": "node=9"},
            {"JobID": "6", "NNodes": "2", "NodeList": "x1", "AllocTRES": "node=9"},
            {"JobID": "7", "NNodes": "", "NodeList": "None assigned", "AllocTRES": "node=5"},
            {"JobID": "8", "NNodes": "", "NodeList": "None assigned", "AllocTRES": ""}]
    table = slurm.read(_sacct(tmp_path, names, *rows))
    assert _col(table, "nodes") == [4, 2, 5, None]
    only_list = slurm.read(_sacct(tmp_path, [*NAMES, "NodeList"], {"NodeList": "g[01-02]"},
                                  name="b.sacct"))
    assert _col(only_list, "nodes") == [2]
    with pytest.raises(InputError) as err:  # checked even when NNodes says the count
        slurm.read(_sacct(tmp_path, names, {"NNodes": "1", "NodeList": "a b"}, name="c.sacct"))
    assert (err.value.value, err.value.message) == ("a b", "'a b' is not valid here")
    assert err.value.expected == ("a host list such as node01,node[02-04,07] or gpu[1-2]-[a,b], "
                                  "or None assigned")


def test_times_waits_walltimes_and_limits(tmp_path):
    """wait = Start - Submit (unknown when negative), walltime = End - Start, Elapsed kept
    where it differs (and only for jobs that started), Timelimit in seconds."""
    names = [*NAMES, "ElapsedRaw", "Timelimit", "Eligible", "ExitCode"]
    rows = [{"ElapsedRaw": "60", "Timelimit": "1-00:00:00", "Eligible": T0, "ExitCode": "0:0"},
            {"JobID": "6", "Submit": T2, "Start": T1, "End": "2023-01-01T00:03:00",
             "ElapsedRaw": "100", "Timelimit": "UNLIMITED", "Eligible": "Unknown",
             "ExitCode": "1:9"},
            {"JobID": "7", "State": "CANCELLED", "Start": "Unknown", "ElapsedRaw": "0",
             "Eligible": "None", "ExitCode": "0:15",
             "Timelimit": "05:00"},
            {"JobID": "8", "Submit": T1, "ElapsedRaw": "60", "Eligible": T1, "ExitCode": "0:0"}]
    table = slurm.read(_sacct(tmp_path, names, *rows))
    assert _col(table, "wait_s") == [60, None, None, 0]  # started the second it was submitted
    assert _col(table, "walltime_s") == [60, 120, None, 60]
    assert _col(table, "recorded_walltime_s") == [None, 100, None, None]
    assert _col(table, "requested_walltime_s") == [86400, None, 300, None]
    assert _slurm_meta(table)["walltime_largest_difference_s"] == 20
    with pytest.raises(InputError) as err:  # a job that ended was submitted: Submit is known
        slurm.read(_sacct(tmp_path, names, {**rows[0], "Submit": "Unknown"}, name="c.sacct"))
    assert (err.value.line, err.value.message) == (2, "'Unknown' is unknown")
    assert err.value.expected == "YYYY-MM-DDTHH:MM:SS (local time)"
    for cells, field in (({"Eligible": "soon"}, "Eligible"), ({"ExitCode": "0"}, "ExitCode"),
                         ({"Timelimit": "later"}, "Timelimit")):
        with pytest.raises(InputError) as err:
            slurm.read(_sacct(tmp_path, names, {**rows[0], **cells}, name="b.sacct"))
        assert f"'{field}'" in err.value.field and err.value.line == 2


def test_an_end_before_the_start_is_located(tmp_path):
    path = _sacct(tmp_path, NAMES, {}, {"JobID": "6", "End": T0})
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.path, e.line, e.value, e.field) == (str(path), 3, T0, "field 'End' (end time)")
    assert e.message == f"{T0!r} is before the start time {T1!r}"
    assert e.expected == "an end time at or after the start time"
    assert _col(slurm.read(path, skip_bad_lines=True), "job_id") == [5]


def test_names_are_null_when_empty_and_refused_with_control_characters(tmp_path):
    names = [*NAMES, "User", "Partition", "Account"]
    rows = [{"User": "ann", "Partition": "", "Account": "lab"},
            {"JobID": "6", "User": "", "Partition": "gpu", "Account": ""}]
    table = slurm.read(_sacct(tmp_path, names, *rows))
    assert (_col(table, "user"), _col(table, "queue"), _col(table, "group")) == (
        ["ann", None], [None, "gpu"], ["lab", None])
    with pytest.raises(InputError) as err:
        slurm.read(_sacct(tmp_path, names, {"User": "a\x07b"}, name="b.sacct"))
    assert (err.value.line, err.value.value, err.value.field) == (2, "a\x07b",
                                                                  "field 'User' (user)")
    assert err.value.message == "'a\\x07b' holds a control character"
    assert err.value.expected == ("a name without control characters: no NUL, tab, line break, "
                                  "escape, DEL or other character of Unicode category Cc")


def test_the_metadata_of_a_read(tmp_path):
    from swftools import __version__

    names = [*NAMES, "Comment"]
    path = _sacct(tmp_path, names, {}, {"JobID": "5.batch"}, {"JobID": "5.0"},
                  {"JobID": "6", "State": "PENDING", "Start": "Unknown", "End": "Unknown"},
                  name="my.sacct")
    table = slurm.read(str(path), site="aaic")
    meta = TableMetadata.from_table(table)
    assert (meta.source_file, meta.source_format, meta.converter_version, meta.site,
            meta.time_zone, meta.processor_unit, meta.unfinished_jobs) == (
        "my.sacct", "slurm", __version__, "aaic", "Asia/Tokyo", "processor", 1)
    assert meta.extra["slurm"] == {"header": names, "columns_from": "header", "jobs": 1,
                                   "steps": 2, "unfinished": {"PENDING": 1},
                                   "walltime_largest_difference_s": 0}
    # 00:01 in Tokyo (UTC+9) is 15:01 UTC the day before
    assert _col(table, "start_time") == [1672498860]
    headerless = tmp_path / "noheader.sacct"
    headerless.write_text(path.read_text().split("\n", 1)[1])
    paris = slurm.read(headerless, columns=",".join(names), tz="Europe/Paris", site="aaic")
    other = TableMetadata.from_table(paris)
    assert (other.site, other.time_zone) == ("aaic", "Europe/Paris")  # tz before the site's
    assert _col(paris, "start_time") == [1672527660]  # 00:01 in Paris (UTC+1): 23:01 UTC
    assert other.extra["slurm"]["columns_from"] == "--columns"
    assert other.extra["slurm"]["header"] == names
    commas = tmp_path / "commas.sacct"
    commas.write_text(path.read_text().replace("|", ","))
    assert _col(slurm.read(commas, delimiter=",", tz="UTC"), "job_id") == [5]


def test_only_unfinished_jobs_is_an_error_unless_allowed(tmp_path):
    path = _sacct(tmp_path, NAMES, {"State": "RUNNING", "End": "Unknown"})
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.path, e.line, e.message) == (str(path), None,
                                           "no finished jobs: every job is pending or running")
    assert e.expected == "one job per line after the header, or --allow-empty for an empty trace"
    table = slurm.read(path, allow_empty=True)
    assert table.num_rows == 0
    assert TableMetadata.from_table(table).unfinished_jobs == 1
    assert _slurm_meta(table)["unfinished"] == {"RUNNING": 1}


def test_every_line_with_a_wrong_field_count_is_noted_in_one_pass(tmp_path, monkeypatch):
    """While --skip-bad-lines collects, the field-count scan notes every such line at once
    (the docstring of ``_field_count_errors``): one pass that notes them, one clean pass."""
    from swftools.formats.slurm import reader

    row = "|".join(BASE.values())
    lines = ["|".join(NAMES), row, "6|x", row.replace("5", "7", 1) + "|y", "",
             row.replace("5", "8", 1), "9"]
    path = tmp_path / "jobs.sacct"
    path.write_text("\n".join(lines) + "\n")
    calls = []
    real = reader._read_data
    monkeypatch.setattr(reader, "_read_data", lambda *a, **k: calls.append(1) or real(*a, **k))
    table = slurm.read(path, skip_bad_lines=True)
    assert _col(table, "job_id") == [5, 8]
    assert [(e["line"], e["value"]) for e in skipped_lines(table)] == [
        (3, "6|x"), (4, lines[3]), (7, "9")]
    assert len(calls) == 2


def test_a_column_given_twice_is_filled_from_steps_in_both_places(tmp_path):
    names = [*NAMES, "NCPUS", "AllocTRES", "NNodes", "NodeList", "AllocNodes"]
    table = slurm.read(_sacct(tmp_path, names, {"NCPUS": "4", "NNodes": "", "NodeList": "",
                                                "AllocNodes": ""},
                              {"JobID": "5.0", "NCPUS": "1", "NNodes": "2", "NodeList": "a[1-2]",
                               "AllocNodes": "2"}))
    assert _col(table, "nodes") == [2]  # NNodes and its alias AllocNodes agree: 2
    # NCPUS: the job line's own; AllocTRES: empty on every line, before the columns filled
    assert _col(table, "cpus") == [4]


def test_the_first_data_line_with_a_wrong_field_count_is_reported(tmp_path):
    path = tmp_path / "jobs.sacct"
    path.write_text("|".join(NAMES) + "\n5|x\n" + "|".join(BASE.values()) + "\n")
    with pytest.raises(InputError) as err:
        slurm.read(path)
    assert (err.value.line, err.value.field, err.value.value) == (2, "line", "5|x")
    assert err.value.message == "2 fields, the header names 5"
    path.write_text("|".join(NAMES) + "\nXX\n")  # a line of X's is data, not a line break
    with pytest.raises(InputError) as err:
        slurm.read(path)
    assert (err.value.line, err.value.value) == (2, "XX")
    path.write_text("JobID|Submit|Start|End\n")  # a header without State
    with pytest.raises(InputError) as err:
        slurm.read(path)
    assert (err.value.path, err.value.line, err.value.message) == (
        str(path), 1, "missing sacct column State")
    path.write_text("|".join(NAMES) + "\n" + "|".join(BASE.values()))  # no final line break
    assert _col(slurm.read(path), "job_id") == [5]


def test_checks_that_could_run_side_by_side_note_every_bad_line_in_one_pass(tmp_path, monkeypatch):
    """While --skip-bad-lines collects, the column checks run one by one even for many job
    lines (``_together``): each notes its bad lines, so one pass notes both, then a clean one."""
    from swftools.formats.slurm import reader

    monkeypatch.setattr(reader, "_THREADED_ROWS", 0)
    monkeypatch.setattr(reader.kernels, "workers", lambda: 2)
    names = [*NAMES, "NCPUS"]
    path = _sacct(tmp_path, names, {"NCPUS": "1"}, {"JobID": "6", "Submit": "x", "NCPUS": "2"},
                  {"JobID": "7", "NCPUS": "y"}, {"JobID": "8", "NCPUS": "3"})
    calls = []
    real = reader._read_data
    monkeypatch.setattr(reader, "_read_data", lambda *a, **k: calls.append(1) or real(*a, **k))
    table = slurm.read(path, skip_bad_lines=True)
    assert (_col(table, "job_id"), _col(table, "cpus")) == ([5, 8], [1, 3])
    assert [(e["line"], e["value"]) for e in skipped_lines(table)] == [(3, "x"), (4, "y")]
    assert len(calls) == 2


@pytest.mark.parametrize("bad", ["x{}", "5.b@d{}"])
def test_more_bad_job_ids_than_the_limit_name_the_file_and_the_last(tmp_path, bad):
    """More than 1000 bad lines stop --skip-bad-lines; the message names the last one in full
    (``file:line: field: ...``), for job lines and step lines alike."""
    rows = [{}] + [{"JobID": bad.format(k)} for k in range(1001)]
    path = _sacct(tmp_path, NAMES, *rows)
    with pytest.raises(InputError) as err:
        slurm.read(path, skip_bad_lines=True)
    last = bad.format(1000)
    assert err.value.path == str(path)
    assert err.value.message == (
        f"more than 1000 bad lines; the last: {path}:1003: field 'JobID' (job id): {last!r} is "
        "not valid here (expected 123, 123_4, 123+0, or a step 123.batch, 123.extern, 123.0)")


def test_a_read_without_zone_says_once_which_file_was_taken_as_utc(tmp_path):
    from swftools.formats.localtime import AssumedTimeZoneWarning

    path = _sacct(tmp_path, NAMES, {})
    with pytest.warns(AssumedTimeZoneWarning) as caught:
        table = slurm.read(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: times have no zone; taken as UTC (use --tz ZONE)"]
    assert _col(table, "start_time") == [1672531260]  # 2023-01-01T00:01:00 UTC


def test_steps_away_from_their_job_in_a_file_read_in_parts(tmp_path, monkeypatch):
    """Read in parts, the job ids come in chunks: a step far from its job line is still
    matched to it, and a step of no job is still found."""
    from swftools.formats.slurm import kernels

    monkeypatch.setattr(kernels, "_MIN_PART_BYTES", 1)
    monkeypatch.setattr(kernels, "workers", lambda: 3)
    rows = [{"JobID": "5.0"}, {"JobID": "6"}, {}, {"JobID": "7"}, {"JobID": "6.batch"},
            {"JobID": "7.0"}]
    table = slurm.read(_sacct(tmp_path, NAMES, *rows))
    assert _col(table, "job_id") == [6, 5, 7] and _slurm_meta(table)["steps"] == 3
    with pytest.raises(InputError) as err:
        slurm.read(_sacct(tmp_path, NAMES, *rows, {"JobID": "9.0"}, name="b.sacct"))
    assert (err.value.line, err.value.value) == (8, "9.0")
