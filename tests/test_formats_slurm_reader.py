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

from .sacct_support import BASE, NAMES, T2, col, sacct, slurm_meta

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
# cells, JobIDRaw/JobID identity, the state table), never from a previous read; the columns'
# own rules (states, TRES/GRES, nodes, times, names, metadata) are in
# test_formats_slurm_reader_columns.py.



def test_elapsed_and_account_are_not_read_when_elapsedraw_and_group_say_it(tmp_path):
    """The unused column of a pair is not read, so its cells are not checked: a bad Elapsed
    beside ElapsedRaw, a control character in Account beside Group, and when given twice,
    not even whether the two agree."""
    names = [*NAMES, "Elapsed", "ElapsedRaw", "Account", "Group", "Elapsed", "Account"]
    row = {"Elapsed": "soon", "ElapsedRaw": "90", "Account": "a\x01", "Group": "grp"}
    path = sacct(tmp_path, names, row)
    text = path.read_text().rstrip("\n")
    path.write_text(text[:text.rindex("|soon|")] + "|later|b\n")  # the repeats differ
    table = slurm.read(path)
    assert col(table, "walltime_s") == [60]  # End - Start
    assert col(table, "recorded_walltime_s") == [90]  # ElapsedRaw, which differs
    assert col(table, "group") == ["grp"]
    alone = slurm.read(sacct(tmp_path, [*NAMES, "Account", "Elapsed"],
                              {"Account": "acct", "Elapsed": "1-00:00:00"}, name="b.sacct"))
    assert col(alone, "group") == ["acct"]
    assert col(alone, "recorded_walltime_s") == [86400]  # 1-00:00:00 is a day
    with pytest.raises(InputError) as err:
        slurm.read(sacct(tmp_path, [*NAMES, "Elapsed"], {"Elapsed": "soon"}, name="c.sacct"))
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
    assert col(table, "job_id") == [5, 6, 8]
    assert slurm_meta(table)["jobs"] == 3 and slurm_meta(table)["unfinished"] == {"RUNNING": 1}


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
        assert (slurm_meta(table)["jobs"], slurm_meta(table)["steps"]) == (0, 0)
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
    assert col(table, "job_id") == [5]
    assert slurm_meta(table)["header"] == NAMES  # the final '|' names no column


def test_invalid_utf8_in_a_step_line_is_found_and_unread_columns_are_not_checked(tmp_path):
    names = [*NAMES, "Comment", "NodeList"]
    bad_step = {"JobID": "5.batch", "NodeList": "n\udcff"}
    with pytest.raises(InputError) as err:
        slurm.read(sacct(tmp_path, names, {"NodeList": "n1"}, bad_step))
    assert err.value.message == ("cannot read as sacct --parsable2 output: invalid UTF-8 in "
                                 "column #6 ('NodeList')")
    table = slurm.read(sacct(tmp_path, names, {"Comment": "\udcff", "NodeList": "n1"},
                              {"JobID": "5.batch", "Comment": "\udcfe"}, name="b.sacct"))
    assert col(table, "nodes") == [1]  # Comment is no column swftools reads


@pytest.mark.parametrize("ids,want", [
    (["5", "x7", "5.batch", "6", "6.b@d", "7x"], (3, "x7")),
    (["5", "5.b@d", "6", "6.0", "7", "7x"], (3, "5.b@d")),
    # a good step before the bad job line, a bad one after it: the job line is first
    (["5", "5.batch", "x7", "6", "6.b@d"], (4, "x7"))])
def test_the_first_bad_job_id_is_reported_whether_on_a_job_or_a_step_line(tmp_path, ids, want):
    with pytest.raises(InputError) as err:
        slurm.read(sacct(tmp_path, NAMES, *({"JobID": i} for i in ids)))
    assert (err.value.line, err.value.value) == want
    assert err.value.path == str(tmp_path / "jobs.sacct")
    assert err.value.message == f"{want[1]!r} is not valid here"
    assert err.value.field == "field 'JobID' (job id)"
    assert err.value.expected == "123, 123_4, 123+0, or a step 123.batch, 123.extern, 123.0"


def test_bad_job_ids_of_job_and_step_lines_are_all_skipped(tmp_path, monkeypatch):
    path = sacct(tmp_path, NAMES, {}, {"JobID": "x6"}, {"JobID": "5.b@d"}, {"JobID": "7"},
                  {"JobID": "7.0"})
    table = slurm.read(path, skip_bad_lines=True)
    assert col(table, "job_id") == [5, 7]
    report = skipped_lines(table)
    assert [(e["line"], e["value"]) for e in report] == [(3, "x6"), (4, "5.b@d")]
    for e in report:
        assert (e["field"], e["message"]) == ("field 'JobID' (job id)",
                                              f"{e['value']!r} is not valid here")
        assert e["expected"] == "123, 123_4, 123+0, or a step 123.batch, 123.extern, 123.0"
    assert slurm_meta(table)["steps"] == 1  # the bad step line is left out with the others
    # a bad step in the second half of the steps and a bad Submit: both noted in one pass
    from swftools.formats.slurm import reader

    path = sacct(tmp_path, NAMES, {}, {"JobID": "5.0"}, {"JobID": "5.1"}, {"JobID": "5.b@d"},
                  {"JobID": "6", "Submit": "x"}, name="b.sacct")
    calls = []
    real = reader._read_data
    monkeypatch.setattr(reader, "_read_data", lambda *a, **k: calls.append(1) or real(*a, **k))
    table = slurm.read(path, skip_bad_lines=True)
    assert [(e["line"], e["value"]) for e in skipped_lines(table)] == [(5, "5.b@d"), (6, "x")]
    assert len(calls) == 2


def test_a_step_with_no_job_line_is_located_and_skipped(tmp_path):
    path = sacct(tmp_path, NAMES, {"JobID": "6.batch"}, {}, {"JobID": "5.0"}, {"JobID": "6"},
                  {"JobID": "8.extern"}, {"JobID": "9"})
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.path, e.line, e.value, e.field) == (str(path), 6, "8.extern",
                                                  "field 'JobID' (job id)")
    assert e.message == "'8.extern' is a step of a job with no job line"
    assert e.expected == "each step after the line of its job"
    table = slurm.read(path, skip_bad_lines=True)
    assert col(table, "job_id") == [5, 6, 9]
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
    table = slurm.read(sacct(tmp_path, names, *rows))
    assert col(table, "job_id") == [5, 6, 7]
    assert col(table, "nodes") == [3, 1, None]  # 6 keeps its own 1; 7 has no step
    assert col(table, "cpus") == [6, 2, None]
    assert col(table, "queue") == [None, None, None]  # Partition is not filled from steps
    assert slurm_meta(table)["steps"] == 4


def test_job_ids_from_jobidraw_else_plain_jobids_else_numbered(tmp_path):
    names = [*NAMES, "JobIDRaw"]
    early = "2022-12-31T00:00:00"
    raw = slurm.read(sacct(tmp_path, names, {"JobID": "5_1", "JobIDRaw": "11"},
                            {"JobID": "5_2", "JobIDRaw": "12"}))
    assert (col(raw, "job_id"), col(raw, "source_job_id")) == ([11, 12], [None, None])
    shared = slurm.read(sacct(tmp_path, names, {"JobID": "5_1", "JobIDRaw": "5"},
                               {"JobID": "5_2", "JobIDRaw": "5", "Submit": early},
                               name="b.sacct"))
    assert col(shared, "job_id") == [2, 1]  # numbered in submit order
    assert col(shared, "source_job_id") == ["5_1", "5_2"]
    plain = slurm.read(sacct(tmp_path, NAMES, {"JobID": "40"}, {"JobID": "30"}, name="c.sacct"))
    assert (col(plain, "job_id"), col(plain, "source_job_id")) == ([40, 30], [None, None])
    again = slurm.read(sacct(tmp_path, NAMES, {"JobID": "40"}, {"JobID": "40", "Submit": early},
                              name="d.sacct"))  # sacct --duplicates
    assert (col(again, "job_id"), col(again, "source_job_id")) == ([2, 1], ["40", "40"])
    long = "1" * 19  # more than 18 digits: not read as a number
    big = slurm.read(sacct(tmp_path, NAMES, {"JobID": long}, name="e.sacct"))
    assert (col(big, "job_id"), col(big, "source_job_id")) == ([1], [long])
    arrays = slurm.read(sacct(tmp_path, NAMES, {"JobID": "5_1"}, {"JobID": "5_2",
                                                                    "Submit": early},
                               name="f.sacct"))
    assert (col(arrays, "job_id"), col(arrays, "source_job_id")) == ([2, 1], ["5_1", "5_2"])


def test_a_column_given_under_two_names_must_agree(tmp_path):
    path = sacct(tmp_path, [*NAMES, "NNodes", "AllocNodes"], {"NNodes": "2", "AllocNodes": "2"},
                  {"JobID": "6", "NNodes": "1", "AllocNodes": "3"})
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.line, e.value, e.field) == (3, "3", "field 'AllocNodes' (node count)")
    assert e.message == "'3' differs from column 'NNodes' on the same line ('1')"
    assert e.expected == ("a column given twice (or under two names) to hold the same value on "
                          "every line")
    assert col(slurm.read(path, skip_bad_lines=True), "nodes") == [2]


def test_only_unfinished_jobs_is_an_error_unless_allowed(tmp_path):
    path = sacct(tmp_path, NAMES, {"State": "RUNNING", "End": "Unknown"})
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.path, e.line, e.message) == (str(path), None,
                                           "no finished jobs: every job is pending or running")
    assert e.expected == "one job per line after the header, or --allow-empty for an empty trace"
    table = slurm.read(path, allow_empty=True)
    assert table.num_rows == 0
    assert TableMetadata.from_table(table).unfinished_jobs == 1
    assert slurm_meta(table)["unfinished"] == {"RUNNING": 1}


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
    assert col(table, "job_id") == [5, 8]
    assert [(e["line"], e["value"]) for e in skipped_lines(table)] == [
        (3, "6|x"), (4, lines[3]), (7, "9")]
    assert len(calls) == 2


def test_a_column_given_twice_is_filled_from_steps_in_both_places(tmp_path):
    names = [*NAMES, "NCPUS", "AllocTRES", "NNodes", "NodeList", "AllocNodes"]
    table = slurm.read(sacct(tmp_path, names, {"NCPUS": "4", "NNodes": "", "NodeList": "",
                                                "AllocNodes": ""},
                              {"JobID": "5.0", "NCPUS": "1", "NNodes": "2", "NodeList": "a[1-2]",
                               "AllocNodes": "2"}))
    assert col(table, "nodes") == [2]  # NNodes and its alias AllocNodes agree: 2
    # NCPUS: the job line's own; AllocTRES: empty on every line, before the columns filled
    assert col(table, "cpus") == [4]


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
    assert col(slurm.read(path), "job_id") == [5]


def test_checks_that_could_run_side_by_side_note_every_bad_line_in_one_pass(tmp_path, monkeypatch):
    """While --skip-bad-lines collects, the column checks run one by one even for many job
    lines (``_together``): each notes its bad lines, so one pass notes both, then a clean one."""
    from swftools.formats.slurm import reader

    monkeypatch.setattr(reader, "_THREADED_ROWS", 0)
    monkeypatch.setattr(reader.kernels, "workers", lambda: 2)
    names = [*NAMES, "NCPUS"]
    path = sacct(tmp_path, names, {"NCPUS": "1"}, {"JobID": "6", "Submit": "x", "NCPUS": "2"},
                  {"JobID": "7", "NCPUS": "y"}, {"JobID": "8", "NCPUS": "3"})
    calls = []
    real = reader._read_data
    monkeypatch.setattr(reader, "_read_data", lambda *a, **k: calls.append(1) or real(*a, **k))
    table = slurm.read(path, skip_bad_lines=True)
    assert (col(table, "job_id"), col(table, "cpus")) == ([5, 8], [1, 3])
    assert [(e["line"], e["value"]) for e in skipped_lines(table)] == [(3, "x"), (4, "y")]
    assert len(calls) == 2


@pytest.mark.parametrize("bad", ["x{}", "5.b@d{}"])
def test_more_bad_job_ids_than_the_limit_name_the_file_and_the_last(tmp_path, bad):
    """More than 1000 bad lines stop --skip-bad-lines; the message names the last one in full
    (``file:line: field: ...``), for job lines and step lines alike."""
    rows = [{}] + [{"JobID": bad.format(k)} for k in range(1001)]
    path = sacct(tmp_path, NAMES, *rows)
    with pytest.raises(InputError) as err:
        slurm.read(path, skip_bad_lines=True)
    last = bad.format(1000)
    assert err.value.path == str(path)
    assert err.value.message == (
        f"more than 1000 bad lines; the last: {path}:1003: field 'JobID' (job id): {last!r} is "
        "not valid here (expected 123, 123_4, 123+0, or a step 123.batch, 123.extern, 123.0)")


def test_a_read_without_zone_says_once_which_file_was_taken_as_utc(tmp_path):
    from swftools.formats.localtime import AssumedTimeZoneWarning

    path = sacct(tmp_path, NAMES, {})
    with pytest.warns(AssumedTimeZoneWarning) as caught:
        table = slurm.read(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: times have no zone; taken as UTC (use --tz ZONE)"]
    assert col(table, "start_time") == [1672531260]  # 2023-01-01T00:01:00 UTC


def test_steps_away_from_their_job_in_a_file_read_in_parts(tmp_path, monkeypatch):
    """Read in parts, the job ids come in chunks: a step far from its job line is still
    matched to it, and a step of no job is still found."""
    from swftools.formats.slurm import kernels

    monkeypatch.setattr(kernels, "_MIN_PART_BYTES", 1)
    monkeypatch.setattr(kernels, "workers", lambda: 3)
    rows = [{"JobID": "5.0"}, {"JobID": "6"}, {}, {"JobID": "7"}, {"JobID": "6.batch"},
            {"JobID": "7.0"}]
    table = slurm.read(sacct(tmp_path, NAMES, *rows))
    assert col(table, "job_id") == [6, 5, 7] and slurm_meta(table)["steps"] == 3
    with pytest.raises(InputError) as err:
        slurm.read(sacct(tmp_path, NAMES, *rows, {"JobID": "9.0"}, name="b.sacct"))
    assert (err.value.line, err.value.value) == (8, "9.0")
