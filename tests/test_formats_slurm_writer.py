"""The sacct writer, cell by cell: every column of a hand-made table, each line of the loss
report, the tables it refuses, and source ids as JobIDs."""

from __future__ import annotations

import warnings

import pytest

from swftools import table as jt
from swftools.errors import UsageError
from swftools.formats import slurm
from swftools.formats.slurm.writer import render, write

T0 = 1672531200  # 2023-01-01T00:00:00 UTC
HEADER = ("JobID|JobIDRaw|User|Group|Partition|Submit|Eligible|Start|End|Elapsed|ElapsedRaw|"
          "Timelimit|State|ExitCode|NNodes|NCPUS|ReqTRES|AllocTRES")


def _table(meta: dict | None = None, **columns):
    n = len(next(iter(columns.values())))
    base = {"job_id": list(range(1, n + 1)), "submit_time": [T0 + 10 * i for i in range(n)],
            "termcode": [0] * n, "swf_status": [1] * n}
    return jt.from_columns({**base, **columns}, meta or {"time_zone": "UTC", "processor_unit": "gpu"})


def _cells(text: str) -> list[dict[str, str]]:
    lines = text.splitlines()
    names = lines[0].split("|")
    return [dict(zip(names, line.split("|"))) for line in lines[1:]]


def test_every_cell_of_three_jobs():
    table = _table(
        user=["u", "", None], group=["g", None, "h"], queue=["q", None, ""],
        submit_time=[T0, T0 + 10, T0 + 20], start_time=[T0 + 60, None, T0 + 30],
        finish_time=[T0 + 120, T0 + 10, T0 + 90], wait_s=[60, None, 5],
        walltime_s=[60, 7, 60], requested_walltime_s=[3600, None, 59],
        termcode=[0, None, 4], swf_status=[1, 5, 5], nodes=[2, None, 0], gpus=[8, None, 3],
        gpus_per_node=[4, None, 1], requested_procs=[8, 4, None],
        requested_memory_kb=[1024, None, 5], cpus=[16, None, None])
    text, losses = render(table)
    assert text == "\n".join([
        HEADER,
        # 1024 KiB per requested GPU times 8 GPUs: 8 MiB
        "1|1|u|g|q|2023-01-01T00:00:00|2023-01-01T00:00:00|2023-01-01T00:01:00|"
        "2023-01-01T00:02:00|00:01:00|60|01:00:00|COMPLETED|0:0|2|16|gres/gpu=8,mem=8M|"
        "gres/gpu=8,cpu=16,node=2",
        # no termcode, SWF status 5: CANCELLED; never started: Unknown start, no run time
        "2|2||||2023-01-01T00:00:10|2023-01-01T00:00:10|Unknown|2023-01-01T00:00:10|00:00:00|0|"
        "UNLIMITED|CANCELLED|0:15|||gres/gpu=4|",
        "3|3||h||2023-01-01T00:00:20|2023-01-01T00:00:20|2023-01-01T00:00:30|"
        "2023-01-01T00:01:30|00:01:00|60|00:00:59|NODE_FAIL|0:9|0|||gres/gpu=3,node=0",
    ]) + "\n"
    assert losses == [
        "user: 1 empty value read back as unknown",
        "queue: 1 empty value read back as unknown",
        "gpus_per_node: 1 job whose GPUs per node is not their GPU total over their node count "
        "(read back as that quotient)",
        "wait_s: 1 job whose wait is not start - submit (sacct has no wait column; it is read "
        "back as start - submit)",
        "eligible time written as the submit time (the job table has none)",
        "1 job: termcode unknown: state written from the SWF status (else COMPLETED)",
        "1 job: requested_memory_kb without requested processors to multiply it by: dropped",
        "1 job: walltime_s of jobs without a start time: dropped",
        "1 job: gpus unknown but requested known: read back as the requested count",
    ]


def test_states_exit_codes_and_status_from_the_termcode():
    table = _table(termcode=[0, 1, 2, 3, 4, None, None, None],
                   swf_status=[1, 0, 0, 5, 5, 1, 0, None],
                   start_time=[T0 + 1] * 8, finish_time=[T0 + 2] * 8,
                   submit_time=[T0] * 8)
    text, losses = render(table)
    rows = _cells(text)
    assert [(r["State"], r["ExitCode"]) for r in rows] == [
        ("COMPLETED", "0:0"), ("FAILED", "1:0"), ("TIMEOUT", "0:15"), ("CANCELLED", "0:15"),
        ("NODE_FAIL", "0:9"), ("COMPLETED", "0:0"), ("FAILED", "1:0"), ("COMPLETED", "0:0")]
    assert "3 jobs: termcode unknown: state written from the SWF status (else COMPLETED)" in losses
    # the last job's status is unknown: it differs from the state table's
    assert ("1 job: swf_status unknown or other than the state table's for their termination "
            "code (read back from the state)") in losses


def test_a_status_other_than_the_state_tables_is_reported():
    table = _table(termcode=[0, 0, 1], swf_status=[1, 0, 1], start_time=[T0 + 1] * 3,
                   finish_time=[T0 + 2] * 3)
    _, losses = render(table)
    assert ("2 jobs: swf_status unknown or other than the state table's for their termination "
            "code (read back from the state)") in losses


def test_plural_loss_lines_and_dropped_columns():
    table = _table(user=["", "", "a"], group=["", "", ""], queue=["a", "b", "c"],
                   start_time=[None, None, T0 + 50], finish_time=[T0, T0 + 10, T0 + 60],
                   walltime_s=[5, 6, 10], requested_procs=[0, 0, None],
                   requested_memory_kb=[7, 8, 9], gpus=[None, None, 1],
                   avg_cpu_time_s=[1.0, None, 2.0], used_memory_kb=[5, None, None],
                   executable=[1, 2, 3], partition=[None, None, None],
                   preceding_job_id=[None, 1, None], think_time_s=[None, 4, None])
    _, losses = render(table)
    assert losses == [
        "user: 2 empty values read back as unknown",
        "group: 3 empty values read back as unknown",
        "avg_cpu_time_s: 2 known values dropped; sacct output has no such column",
        "used_memory_kb: 1 known value dropped; sacct output has no such column",
        "executable: 3 known values dropped; sacct output has no such column",
        "preceding_job_id: 1 known value dropped; sacct output has no such column",
        "think_time_s: 1 known value dropped; sacct output has no such column",
        "eligible time written as the submit time (the job table has none)",
        "3 jobs: requested_memory_kb without requested processors to multiply it by: dropped",
        "2 jobs: walltime_s of jobs without a start time: dropped",
        "2 jobs: gpus unknown but requested known: read back as the requested count",
    ]


def test_gpus_per_node_checked_against_the_quotient():
    # 8/2 = 4 matches; 7/2 is no whole number (so gpus_per_node must be unknown); 0 nodes and
    # unknown nodes give no quotient
    table = _table(nodes=[2, 2, 2, 0, None, 2, None],
                   gpus=[8, 7, 7, 4, 4, 8, None],
                   gpus_per_node=[4, None, 3, None, None, None, None],
                   start_time=[T0 + 1] * 7, finish_time=[T0 + 2] * 7)
    _, losses = render(table)
    assert losses[0] == ("gpus_per_node: 2 jobs whose GPUs per node is not their GPU total over "
                         "their node count (read back as that quotient)")


def test_run_times_limits_and_the_logs_own_elapsed():
    table = _table(submit_time=[T0, T0], start_time=[T0 + 10, T0 + 10],
                   finish_time=[T0 + 10 + 90061, T0 + 10], walltime_s=[90061, None],
                   recorded_walltime_s=[90000, None], requested_walltime_s=[0, 86400 * 3],
                   wait_s=[10, 10])
    rows = _cells(render(table)[0])
    assert [(r["Elapsed"], r["ElapsedRaw"], r["Timelimit"]) for r in rows] == [
        ("1-01:00:00", "90000", "00:00:00"), ("00:00:00", "", "3-00:00:00")]


def test_processor_unit_counts_cpus_and_ncpus_from_the_size():
    table = _table({"time_zone": "UTC", "processor_unit": "processor"},
                   start_time=[T0 + 1, T0 + 1], finish_time=[T0 + 2, T0 + 2],
                   gpus=[4, 6], cpus=[None, 12], nodes=[1, None], requested_procs=[4, 2],
                   requested_memory_kb=[1024 * 1024, 1536])
    rows = _cells(render(table)[0])
    assert [(r["NCPUS"], r["ReqTRES"], r["AllocTRES"]) for r in rows] == [
        ("4", "cpu=4,mem=4G", "cpu=4,node=1"), ("12", "cpu=2,mem=3M", "cpu=6")]


def test_memory_is_written_only_with_requested_processors():
    table = _table(start_time=[T0 + 1] * 3, finish_time=[T0 + 2] * 3,
                   requested_procs=[1, 0, 3], requested_memory_kb=[7, 7, None])
    rows = _cells(render(table)[0])
    assert [r["ReqTRES"] for r in rows] == ["gres/gpu=1,mem=7K", "gres/gpu=0", "gres/gpu=3"]


def test_rows_in_submit_order_and_read_back(tmp_path):
    table = _table(job_id=[7, 5, 6], submit_time=[T0 + 20, T0, T0 + 20],
                   start_time=[T0 + 30, T0 + 5, T0 + 25], finish_time=[T0 + 40, T0 + 6, T0 + 26],
                   gpus=[1, 2, 3])
    text, _ = render(table)
    assert [r["JobID"] for r in _cells(text)] == ["5", "7", "6"]
    path = tmp_path / "out.sacct"
    assert write(table, path)[-1] == "eligible time written as the submit time (the job table has none)"
    assert path.read_bytes() == text.encode()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = slurm.read(path)
    assert back.column("job_id").to_pylist() == [5, 7, 6]
    assert back.column("gpus").to_pylist() == [2, 1, 3]


def test_write_refuses_an_existing_file_without_force(tmp_path):
    table = _table(start_time=[T0 + 1], finish_time=[T0 + 2])
    path = tmp_path / "out.sacct"
    path.write_text("old")
    with pytest.raises(Exception, match="exists"):
        write(table, path)
    assert path.read_text() == "old"
    write(table, path, force=True)
    assert path.read_text().startswith(HEADER + "\n1|1|")


def test_local_times_in_a_zone_and_the_zone_note():
    table = _table(start_time=[T0 + 60], finish_time=[None])
    text, losses = render(table, tz="Asia/Tokyo")
    row = _cells(text)[0]
    assert (row["Submit"], row["Start"], row["End"]) == (
        "2023-01-01T09:00:00", "2023-01-01T09:01:00", "Unknown")
    assert losses[0].startswith("times written as Asia/Tokyo local times: the table's time zone "
                                "UTC")


@pytest.mark.parametrize("columns,message", [
    ({"submit_time": [T0, None]},
     "1 job without a submit time: sacct output needs one for every job"),
    ({"submit_time": [None, None]},
     "2 jobs without a submit time: sacct output needs one for every job"),
    ({"start_time": [T0 + 5, T0 + 9], "finish_time": [T0 + 6, T0 + 8]},
     "a job ends before it starts: sacct output cannot carry it"),
    ({"user": ["a", "b|c"]}, "user 'b|c' holds '|' or a line break: sacct output cannot carry it"),
    ({"group": ["a\nb", "c"]},
     "group 'a\\nb' holds '|' or a line break: sacct output cannot carry it"),
    ({"queue": [None, "x\ry"]},
     "queue 'x\\ry' holds '|' or a line break: sacct output cannot carry it"),
    ({"source_job_id": ["1", "2|3"]},
     "source_job_id '2|3' holds '|' or a line break: sacct output cannot carry it"),
])
def test_tables_sacct_cannot_carry_are_refused(columns, message):
    with pytest.raises(UsageError) as err:
        render(_table(**columns))
    assert str(err.value) == message


def test_times_in_a_daylight_saving_change_are_refused():
    # 2023-11-05 01:30 happens twice in New York: 05:30 and 06:30 UTC
    table = _table(submit_time=[1699162200, 1699165800, 1699165800 + 86400])
    with pytest.raises(UsageError, match="2 times fall in a daylight-saving change of "
                                         "America/New_York.*--tz UTC"):
        render(table, tz="America/New_York")
    render(table, tz="UTC")


LAST = 253402300799  # 9999-12-31T23:59:59 UTC


def test_times_past_year_9999_are_refused_not_a_traceback():
    """sacct's local times have four-digit years: the last second of 9999 is written in UTC,
    refused where the zone is already in 10000, and one second later refused in any zone
    (before, a ValueError traceback)."""
    ok = _table(submit_time=[T0, LAST - 60], start_time=[T0, LAST], finish_time=[T0, LAST])
    assert _cells(render(ok)[0])[1]["End"] == "9999-12-31T23:59:59"
    with pytest.raises(UsageError) as err:
        render(ok, tz="Asia/Tokyo")
    assert str(err.value) == (f"submit_time of job 2 ({LAST - 60}) is outside years 1..9999 in "
                              "Asia/Tokyo: sacct's local times cannot carry it")
    late = _table(submit_time=[T0, T0], start_time=[T0, None], finish_time=[T0, LAST + 1])
    with pytest.raises(UsageError, match=rf"^finish_time of job 2 \({LAST + 1}\) is outside "
                                         "years 1..9999 in UTC: "):
        render(late)


def test_source_ids_are_the_job_ids_when_sacct_has_their_form():
    table = _table(job_id=[1, 2, 3, 4, 5, 6],
                   source_job_id=["123_4", "9+0", "123.0", "a", None, "77"])
    text, losses = render(table)
    assert text.splitlines()[0] == HEADER.replace("|JobIDRaw", "")
    assert [r["JobID"] for r in _cells(text)] == ["123_4", "9+0", "3", "4", "5", "77"]
    assert losses[-2:] == [
        "source_job_id: 2 jobs whose source id is no sacct job id (123, 123_4, 123_[1-3], "
        "123+0): JobID holds their job_id",
        "job_id: JobID holds source_job_id (no JobIDRaw): read back, the jobs are numbered in "
        "submit order"]


def test_source_ids_all_of_sacct_form_report_only_the_numbering():
    table = _table(job_id=[1, 2], source_job_id=["10_[1-3]", "11"], user=["ann", None],
                   start_time=[T0 + 1, T0 + 11], finish_time=[T0 + 2, T0 + 12], walltime_s=[1, 1])
    text, losses = render(table)
    assert text.splitlines()[1:] == [
        "10_[1-3]|ann|||2023-01-01T00:00:00|2023-01-01T00:00:00|2023-01-01T00:00:01|"
        "2023-01-01T00:00:02|00:00:01|1|UNLIMITED|COMPLETED|0:0||||",
        "11||||2023-01-01T00:00:10|2023-01-01T00:00:10|2023-01-01T00:00:11|"
        "2023-01-01T00:00:12|00:00:01|1|UNLIMITED|COMPLETED|0:0||||"]
    assert losses == ["eligible time written as the submit time (the job table has none)",
                      "job_id: JobID holds source_job_id (no JobIDRaw): read back, the jobs are "
                      "numbered in submit order"]


def test_the_sites_zone_is_the_tables_when_it_has_none(tmp_path):
    table = _table({"processor_unit": "gpu"}, start_time=[T0 + 1], finish_time=[T0 + 2])
    losses = write(table, tmp_path / "out.sacct", site="aaic")
    assert losses[0].startswith("times written as UTC local times: the table's time zone "
                                "Asia/Tokyo is in no column of this format")
    assert not write(table, tmp_path / "out.sacct", force=True)[0].startswith("times written")


def test_a_table_read_from_sacct_keeps_its_row_order(tmp_path):
    rows = [f"{j}|{j}|2023-01-01T00:00:{s:02d}|2023-01-01T00:01:00|2023-01-01T00:02:00|COMPLETED"
            for j, s in ((9, 30), (3, 10), (5, 20))]
    src = tmp_path / "in.sacct"
    src.write_text("JobID|JobIDRaw|Submit|Start|End|State\n" + "\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = slurm.read(src)
    assert [r["JobID"] for r in _cells(render(table)[0])] == ["9", "3", "5"]
    # the same rows from another format are written in submit order
    other = jt.from_columns({c: table.column(c) for c in table.column_names},
                            {"time_zone": "UTC", "processor_unit": "gpu", "source_format": "swf"})
    assert [r["JobID"] for r in _cells(render(other)[0])] == ["3", "5", "9"]
