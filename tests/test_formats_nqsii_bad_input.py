"""NQSII job logs: bad input is refused with the file, line, field, value and what was
expected; header names and their matching; the issue 13 sweep over every number field."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .nqsii_support import (PUBLISHED_HEADER, PUBLISHED_ROWS, RAW_HEADER, RAW_ROWS, _error, _raw,
                            _with_field)
from .strategies import bad_integer_tokens
from swftools.formats import nqsii
from swftools import table as jt
from swftools.errors import InputError
from swftools.resources import schemas_dir
from swftools.site import site_from_settings

EXPECTED_TIMESTAMP = ("UNIX seconds, YYYY-MM-DD HH:MM:SS local time, or ISO 8601 with offset")


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
