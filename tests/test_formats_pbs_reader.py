"""The PBS reader (``swftools/formats/pbs/reader.py``) at its edges: located errors with what
was expected, the fallbacks of each quantity, the exit-status boundaries, row order, text that
is not UTF-8 or holds no job, and the table metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

import swftools
from swftools.errors import InputError
from swftools.formats import pbs
from swftools.formats.pbs import fields as fx
from swftools.formats.pbs.reader import MAX_NOTED
from swftools.metadata import TableMetadata

E_OK = "03/01/2023 10:00:00;E;5.s;qtime=100 start=200 end=300 Exit_status=0"
TEN = 1677664800  # 03/01/2023 10:00:00 UTC
NO_JOBS_EXPECTED = "PBS accounting records of jobs (E, D or A), or --allow-empty for a log without jobs"


def _log(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "acct.log"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _read(path: Path, **opts):
    return pbs.read(path, **{"tz": "UTC", **opts})


def _meta(table) -> TableMetadata:
    return TableMetadata.from_table(table)


def _error(path: Path, **opts) -> InputError:
    with pytest.raises(InputError) as info:
        _read(path, **opts)
    return info.value


def _bad(path: Path, value: str, key: str, expected: str, line: int = 1) -> InputError:
    return InputError(str(path), f"{value!r} is not valid here", line=line, field=f"key {key!r}",
                      value=value, expected=expected)


# ------------------------------------------------------------------------------ sizes

@pytest.mark.parametrize("value", ["4x", "\uff14", "1" * 19])
def test_a_count_that_is_no_whole_number_of_at_most_18_digits_is_refused(tmp_path, value):
    path = _log(tmp_path, f"03/01/2023 10:00:00;E;5.s;start=200 end=300 Resource_List.ngpus={value}")
    assert _error(path) == _bad(path, value, "Resource_List.ngpus", "a non-negative integer")


def test_a_count_of_18_digits_reads(tmp_path):
    path = _log(tmp_path, f"03/01/2023 10:00:00;E;5.s;start=200 end=300 Resource_List.ngpus={'1' * 18}")
    assert _read(path).column("gpus").to_pylist() == [int("1" * 18)]


def test_a_select_that_does_not_parse_says_what_a_select_is(tmp_path):
    path = _log(tmp_path, "03/01/2023 10:00:00;E;5.s;start=200 end=300 Resource_List.select=2:ncpus")
    assert _error(path) == _bad(path, "2:ncpus", "Resource_List.select", fx.SELECT_EXPECTED)


@pytest.mark.parametrize("spec,resource", [("2:ngpus=4gb", "ngpus"), ("2:ncpus=4gb", "ncpus")])
def test_a_select_count_that_is_no_whole_number_is_located(tmp_path, spec, resource):
    path = _log(tmp_path, E_OK, f"03/01/2023 10:00:00;E;6.s;start=200 end=300 Resource_List.select={spec}")
    assert _error(path) == _bad(path, spec, "Resource_List.select", f"{resource}: a whole number",
                                line=2)


def test_cpus_fall_back_to_the_used_cpus(tmp_path):
    path = _log(tmp_path, "03/01/2023 10:00:00;E;5.s;start=200 end=300 resources_used.ncpus=6")
    assert _read(path).column("cpus").to_pylist() == [6]


def test_at_most_max_noted_unreadable_values_are_noted(tmp_path):
    lines = [f"03/01/2023 10:00:00;E;{i}.s;start=200 end=300 exec_host=n1/0 Resource_List.nodect=x"
             for i in range(1, MAX_NOTED + 2)]
    table = _read(_log(tmp_path, *lines))
    assert table.num_rows == MAX_NOTED + 1
    assert len(_meta(table).extra["pbs"]["unreadable_values"]) == MAX_NOTED


def test_whole_numbers_stay_exact_in_gpus_per_node(tmp_path):
    gpus = 2 ** 53 + 1  # not a float
    path = _log(tmp_path, f"03/01/2023 10:00:00;E;5.s;start=200 end=300 Resource_List.ngpus={gpus} "
                          "Resource_List.nodect=1")
    assert _read(path).column("gpus_per_node").to_pylist() == [gpus]


# ------------------------------------------------------------------------------ times and codes

@pytest.mark.parametrize("status,termcode", [(255, 1), (256, 4)])
def test_exit_statuses_of_a_signal_are_not_failures(tmp_path, status, termcode):
    path = _log(tmp_path, E_OK.replace("Exit_status=0", f"Exit_status={status}"))
    assert _read(path).column("termcode").to_pylist() == [termcode]


def test_the_submit_time_falls_back_to_ctime(tmp_path):
    path = _log(tmp_path, "03/01/2023 10:00:00;E;5.s;ctime=150 start=200 end=300")
    assert _read(path).select(["submit_time", "wait_s"]).to_pylist() == \
        [{"submit_time": 150, "wait_s": 50}]


@pytest.mark.parametrize("key", ["ctime", "etime"])
def test_a_bad_epoch_key_is_located(tmp_path, key):
    path = _log(tmp_path, E_OK, f"03/01/2023 10:00:00;E;6.s;{key}=12x start=200 end=300")
    assert _error(path) == _bad(path, "12x", key, fx.EPOCH_EXPECTED, line=2)


def test_a_bad_start_of_an_s_record_is_located_on_its_line(tmp_path):
    path = _log(tmp_path, "03/01/2023 09:00:00;S;5.s;start=12x",
                "03/01/2023 10:00:00;E;5.s;qtime=100 end=300")
    assert _error(path) == _bad(path, "12x", "start", fx.EPOCH_EXPECTED)


def test_a_record_time_before_the_start_is_refused(tmp_path):
    path = _log(tmp_path, f"03/01/2023 10:00:00;E;5.s;qtime=100 start={TEN + 100}")
    assert _error(path) == InputError(str(path), "the record time is before the start time",
                                      line=1, field="record time", value=str(TEN),
                                      expected="an end at or after the start")


def test_a_time_zone_error_names_the_end_key(tmp_path):
    path = _log(tmp_path, "03/01/2023 09:00:00;E;5.s;start=1677661100 end=1677661200")
    assert _error(path, tz="Asia/Tokyo").field == "end"


def test_unknown_submit_times_sort_last_and_submit_zero_first(tmp_path):
    path = _log(tmp_path, "03/01/2023 10:00:00;E;5.s;start=200 end=300",
                "03/01/2023 10:00:00;E;6.s;qtime=1 start=200 end=300",
                "01/01/1970 00:00:00;Q;7.s;queue=q", "03/01/2023 10:00:00;E;7.s;start=200 end=300")
    table = _read(path)
    assert table.select(["job_id", "submit_time"]).to_pylist() == [
        {"job_id": 7, "submit_time": 0}, {"job_id": 6, "submit_time": 1},
        {"job_id": 5, "submit_time": None}]


# ------------------------------------------------------------------------------ text

def test_a_line_that_is_not_utf8_is_located(tmp_path):
    path = tmp_path / "acct.log"
    path.write_bytes(E_OK.encode() + b"\n\xff\xfe\n" + E_OK.encode() + b"\n")
    assert _error(path) == InputError(str(path), "is not UTF-8 text", line=2, expected="UTF-8 text")


def test_lines_that_are_not_utf8_are_skipped_each_reported(tmp_path):
    path = tmp_path / "acct.log"
    path.write_bytes(b"\xff\n" + E_OK.encode() + b"\n\xe2\x82\n")
    table = _read(path, skip_bad_lines=True)
    assert table.column("job_id").to_pylist() == [5]
    assert [(s["line"], s["message"]) for s in _meta(table).extra["skipped_lines"]] == \
        [(1, "is not UTF-8 text"), (3, "is not UTF-8 text")]


def test_a_byte_order_mark_is_not_part_of_the_first_record(tmp_path):
    path = tmp_path / "acct.log"
    path.write_bytes(b"\xef\xbb\xbf" + E_OK.encode() + b"\n")
    assert _read(path).column("job_id").to_pylist() == [5]
    assert _error(_log(tmp_path, "XX" + E_OK)).line == 1


@pytest.mark.parametrize("content,message", [
    (b"", "is empty"),
    (b"\xef\xbb\xbf", "holds no job that ended, no E, D or A record of a job: no records"),
    (b"03/01/2023 10:00:00;Q;7[].s;queue=q\n03/01/2023 10:00:00;Q;8[].s;queue=q\n",
     "holds no job that ended, no E, D or A record of a job: 2 records (2 Q); 2 array parents, "
     "left out as its subjobs are the jobs"),
])
def test_a_log_without_jobs_says_what_it_holds(tmp_path, content, message):
    path = tmp_path / "acct.log"
    path.write_bytes(content)
    assert _error(path) == InputError(str(path), message, expected=NO_JOBS_EXPECTED)
    assert _read(path, allow_empty=True, skip_bad_lines=True).num_rows == 0


def test_too_many_bad_lines_name_the_file(tmp_path):
    path = _log(tmp_path, E_OK, *["bad"] * 1001)
    err = _error(path, skip_bad_lines=True)
    assert err.path == str(path) and err.message.startswith("more than 1000 bad lines")


# ------------------------------------------------------------------------------ metadata

def test_the_metadata_of_a_read(tmp_path):
    path = _log(tmp_path, "03/01/2023 09:00:00;Q;6.s;queue=q", "03/01/2023 09:00:00;Q;7.s;queue=q",
                E_OK)
    meta = _meta(_read(path, tz="Asia/Tokyo"))
    assert (meta.source_file, meta.source_format, meta.converter_version, meta.time_zone,
            meta.site, meta.unfinished_jobs) == ("acct.log", "pbs", swftools.__version__,
                                                 "Asia/Tokyo", None, 2)
    assert meta.extra["pbs"]["jobs"] == 1


@pytest.mark.parametrize("skip", [False, True])
def test_a_site_gives_its_name_and_zone(tmp_path, skip):
    path = _log(tmp_path, "03/01/2023 19:00:00;E;5.s;start=200 end=1677664800")
    meta = _meta(pbs.read(path, site="aaic", skip_bad_lines=skip))
    assert (meta.site, meta.time_zone) == ("aaic", "Asia/Tokyo")


def test_the_time_zone_warning_names_the_file(tmp_path):
    path = _log(tmp_path, E_OK)
    with pytest.warns(UserWarning, match=str(path)):
        pbs.read(path)


# ------------------------------------------------------------------------------ keys of the E record

@pytest.mark.parametrize("key,value,expected", [
    ("end", "12x", fx.EPOCH_EXPECTED),
    ("resources_used.walltime", "1:99:00", fx.DURATION_EXPECTED),
    ("Exit_status", "ok", fx.EXIT_EXPECTED),
])
def test_a_bad_value_of_the_e_record_is_located(tmp_path, key, value, expected):
    path = _log(tmp_path, E_OK, f"03/01/2023 10:00:00;E;6.s;start=200 {key}={value}")
    assert _error(path) == _bad(path, value, key, expected, line=2)


def test_an_end_before_the_start_is_refused(tmp_path):
    path = _log(tmp_path, "03/01/2023 10:00:00;E;5.s;start=200 end=100")
    assert _error(path) == InputError(str(path), "'100' is before the start time 200", line=1,
                                      field="key 'end'", value="100",
                                      expected="an end time at or after the start time")


@pytest.mark.parametrize("key", ["user", "group", "queue"])
def test_a_name_with_a_control_character_is_refused(tmp_path, key):
    path = _log(tmp_path, E_OK + f" {key}=a\x01b")
    err = _error(path)
    assert (err.path, err.line, err.field) == (str(path), 1, f"key {key!r}")


def test_qtime_is_the_submit_time_not_the_q_record(tmp_path):
    path = _log(tmp_path, "03/01/2023 09:00:00;Q;5.s;queue=q", E_OK)
    assert _read(path).column("submit_time").to_pylist() == [100]
