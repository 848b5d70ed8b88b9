"""PBS records grouped by job (``swftools/formats/pbs/records.py``): which record of a job
counts, what is counted of the log, and the located errors of bad records."""

from __future__ import annotations

from pathlib import Path

import pytest

from swftools.errors import InputError
from swftools.formats import pbs
from swftools.formats.pbs import fields as fx
from swftools.metadata import TableMetadata

E_OK = "03/01/2023 10:00:00;E;5.s;qtime=100 start=200 end=300 Exit_status=0"
TEN = 1677664800  # 03/01/2023 10:00:00 UTC


def _log(tmp_path: Path, *lines: str, end: str = "\n") -> Path:
    path = tmp_path / "acct.log"
    path.write_bytes("".join(line + end for line in lines).encode("utf-8"))
    return path


def _read(path: Path):
    return pbs.read(path, tz="UTC")


def _pbs(table) -> dict:
    return TableMetadata.from_table(table).extra["pbs"]


def _error(path: Path) -> InputError:
    with pytest.raises(InputError) as info:
        _read(path)
    return info.value


# ------------------------------------------------------------------------------ located errors

def test_a_line_that_is_no_record_is_located_with_the_record_grammar(tmp_path):
    path = _log(tmp_path, E_OK, "03/01/2023 10:00:00 E 6.s user=u")
    assert _error(path) == InputError(str(path), "not a PBS accounting record", line=2,
                                      field="record", value="03/01/2023 10:00:00 E 6.s user=u",
                                      expected="MM/DD/YYYY HH:MM:SS;TYPE;JOBID;key=value ...")


@pytest.mark.parametrize("line,field,value,expected", [
    ("13/45/2023 10:00:00;E;6.s;user=u", "record time", "13/45/2023 10:00:00",
     fx.RECORD_TIME_EXPECTED),
    ("03/01/2023 10:00:00;E;6[x].s;user=u", "job id", "6[x].s", fx.JOBID_EXPECTED),
    ("03/01/2023 10:00:00;E;6.s;=x", "message", "=x", "key=value pairs separated by spaces"),
])
def test_a_bad_part_of_a_record_is_named_with_what_its_grammar_expects(tmp_path, line, field,
                                                                       value, expected):
    path = _log(tmp_path, E_OK, line)
    assert _error(path) == InputError(str(path), f"{value!r} is not valid here", line=2,
                                      field=f"key {field!r}", value=value, expected=expected)


# ------------------------------------------------------------------------------ lines

def test_crlf_line_ends_are_not_part_of_the_last_value(tmp_path):
    path = _log(tmp_path, E_OK + " user=BOXX", end="\r\n")
    table = _read(path)
    assert table.select(["user", "termcode"]).to_pylist() == [{"user": "BOXX", "termcode": 0}]


def test_only_carriage_returns_are_stripped_a_trailing_tab_is_part_of_the_name(tmp_path):
    err = _error(_log(tmp_path, E_OK + " user=amy\t"))
    assert (err.line, err.field, err.value) == (1, "key 'user'", "amy\t")


def test_every_record_type_is_counted_when_no_job_ended(tmp_path):
    path = _log(tmp_path, "03/01/2023 10:00:00;L;license;floating license hour:0/10",
                "03/01/2023 10:00:00;L;license;floating license hour:1/10",
                "03/01/2023 10:00:00;Q;5.s;queue=q")
    with pytest.raises(InputError, match=r": 3 records \(2 L, 1 Q\); 1 job queued"):
        _read(path)


def test_every_grep_prefixed_line_is_counted(tmp_path):
    path = _log(tmp_path, "03/01/2023 09:00:00;Q;5.s;queue=q", "20230301:" + E_OK,
                "20230301:" + E_OK.replace(";5.s;", ";6.s;"))
    assert _pbs(_read(path))["prefixed_lines"] == 2


def test_every_array_parent_is_counted(tmp_path):
    path = _log(tmp_path, "03/01/2023 10:00:00;Q;7[].s;queue=q", "03/01/2023 10:00:00;Q;8[].s;queue=q",
                E_OK.replace(";5.s;", ";7[1].s;"))
    assert _pbs(_read(path))["array_parents_left_out"] == 2


# ------------------------------------------------------------------------------ which record counts

def test_a_job_deleted_before_it_ran_keeps_the_id_of_its_d_record(tmp_path):
    path = _log(tmp_path, "03/01/2023 09:00:00;Q;7[1].s;queue=q",
                "03/01/2023 10:00:00;D;7[1].s;requestor=amy@login", E_OK)
    table = _read(path)
    assert table.select(["source_job_id", "termcode", "finish_time"]).to_pylist()[-1] == \
        {"source_job_id": "7[1].s", "termcode": 3, "finish_time": TEN}


def test_the_start_comes_from_the_s_record_when_the_e_record_has_none(tmp_path):
    path = _log(tmp_path, "03/01/2023 09:00:00;S;5.s;start=150",
                "03/01/2023 10:00:00;E;5.s;qtime=100 end=300 Exit_status=0")
    table = _read(path)
    assert table.select(["start_time", "walltime_s"]).to_pylist() == \
        [{"start_time": 150, "walltime_s": 150}]
    assert _pbs(table)["requeued_jobs"] == 0


@pytest.mark.parametrize("lines,requeued", [
    ([E_OK], 0),
    (["03/01/2023 09:00:00;S;5.s;start=150", E_OK], 0),
    ([E_OK, E_OK.replace("10:00:00", "10:05:00")], 1),
    (["03/01/2023 09:00:00;R;5.s;requestor=root@s", E_OK], 1),
])
def test_a_job_is_requeued_when_it_has_an_r_record_or_a_second_e_record(tmp_path, lines,
                                                                         requeued):
    assert _pbs(_read(_log(tmp_path, *lines)))["requeued_jobs"] == requeued


@pytest.mark.parametrize("first,second,termcode", [("root", "amy", 3), ("amy", "root", 4)])
def test_of_d_records_at_one_time_the_last_line_counts(tmp_path, first, second, termcode):
    path = _log(tmp_path, f"03/01/2023 10:00:00;D;5.s;requestor={first}@s",
                f"03/01/2023 10:00:00;D;5.s;requestor={second}@s")
    assert _read(path).column("termcode").to_pylist() == [termcode]


def test_a_d_record_without_requestor_is_a_cancellation(tmp_path):
    path = _log(tmp_path, "03/01/2023 10:00:00;D;5.s;Job deleted")
    assert _read(path).select(["termcode", "swf_status"]).to_pylist() == \
        [{"termcode": 3, "swf_status": 5}]


def test_of_a_records_the_latest_counts_not_the_last_in_the_file(tmp_path):
    path = _log(tmp_path, "03/01/2023 10:00:00;A;5.s;Job aborted",
                "03/01/2023 09:00:00;A;5.s;Job aborted")
    assert _read(path).select(["finish_time", "termcode"]).to_pylist() == \
        [{"finish_time": TEN, "termcode": 4}]


def test_of_a_records_at_one_time_the_last_line_orders_the_row(tmp_path):
    # jobs of one submit time are in the order of the record their row comes from
    path = _log(tmp_path, "03/01/2023 09:00:00;Q;5.s;queue=q", "03/01/2023 10:00:00;A;5.s;x=1",
                "03/01/2023 09:00:00;Q;6.s;queue=q", "03/01/2023 10:00:00;A;6.s;x=1",
                "03/01/2023 10:00:00;A;5.s;x=2")
    assert _read(path).column("job_id").to_pylist() == [6, 5]
