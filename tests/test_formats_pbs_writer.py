"""The PBS accounting log writer: records written out by hand, every loss-report line, record ids
checked against the reader."""

from __future__ import annotations

import warnings

import pytest

from swftools import table as jt
from swftools.errors import UsageError
from swftools.formats import pbs


def _table(rows: list[dict], **meta) -> object:
    return jt.from_columns({k: [r.get(k) for r in rows] for k in jt.column_names()}, meta)


def _job(i: int, **changes) -> dict:
    """Job ``i``: submitted at 100 i, started 10 s later, 50 s run, 1 node x 1 GPU."""
    row = dict(job_id=i, user="u", group="g", queue="q", nodes=1, gpus=1, gpus_per_node=1,
               termcode=0, swf_status=1, requested_walltime_s=3600, submit_time=100 * i,
               start_time=100 * i + 10, finish_time=100 * i + 60, wait_s=10, walltime_s=50)
    return {**row, **changes}


def _read_back(table, tmp_path, **options):
    path = tmp_path / "acct.log"
    losses = pbs.write(table, path, force=True, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # times without a zone: taken as UTC
        return pbs.read(path, **options), losses


E_TAIL = ("Exit_status=0 Resource_List.walltime=01:00:00 Resource_List.nodect=1 "
          "Resource_List.ngpus=1 Resource_List.select=1:ngpus=1")


def test_q_d_and_e_records_written_out_by_hand():
    table = _table([
        _job(1, user="alice", group="lab", queue="gpu", submit_time=1000, start_time=1100,
             finish_time=1700, wait_s=100, walltime_s=600, nodes=2, gpus=8, gpus_per_node=4,
             cpus=16),
        _job(2, user="bob", group="lab", queue="gpu", submit_time=900, start_time=1000,
             finish_time=1500, wait_s=100, walltime_s=500, requested_walltime_s=600, gpus=3,
             gpus_per_node=3, termcode=3, swf_status=5),
        _job(3, user="root", group="wheel", queue="cpu", submit_time=2000, start_time=None,
             finish_time=None, wait_s=None, walltime_s=None, requested_walltime_s=None,
             termcode=3, swf_status=5),
    ], processor_unit="gpu")
    text, losses = pbs.render(table)
    assert text.splitlines() == [  # submit order; stamps UTC; 900 s = 00:15:00
        "01/01/1970 00:15:00;Q;2.swftools;queue=gpu",
        "01/01/1970 00:25:00;D;2.swftools;requestor=bob@localhost",
        "01/01/1970 00:25:00;E;2.swftools;user=bob group=lab queue=gpu qtime=900 start=1000 "
        "end=1500 Exit_status=271 Resource_List.walltime=00:10:00 Resource_List.nodect=1 "
        "Resource_List.ngpus=3 Resource_List.select=1:ngpus=3 resources_used.walltime=00:08:20",
        "01/01/1970 00:16:40;Q;1.swftools;queue=gpu",
        "01/01/1970 00:28:20;E;1.swftools;user=alice group=lab queue=gpu qtime=1000 start=1100 "
        "end=1700 Exit_status=0 Resource_List.walltime=01:00:00 Resource_List.nodect=2 "
        "Resource_List.ngpus=8 Resource_List.select=2:ngpus=4 Resource_List.ncpus=16 "
        "resources_used.walltime=00:10:00",
        # cancelled by root (a system requestor): the D record names the owner
        "01/01/1970 00:33:20;Q;3.swftools;queue=cpu",
        "01/01/1970 00:33:20;D;3.swftools;requestor=owner@localhost",
        "01/01/1970 00:33:20;E;3.swftools;user=root group=wheel queue=cpu qtime=2000 "
        "Exit_status=271 Resource_List.nodect=1 Resource_List.ngpus=1 "
        "Resource_List.select=1:ngpus=1",
    ]
    assert text.endswith("\n")
    assert losses == ["1 job: finish_time unknown: read back as the E record's time"]


@pytest.mark.parametrize("term, status", [(1, "1"), (2, "-29"), (4, "265")])
def test_exit_status_of_each_termination_code(term, status):
    text, _ = pbs.render(_table([_job(1, termcode=term, swf_status=None)], processor_unit="gpu"))
    assert f" Exit_status={status} " in text and ";D;" not in text


def test_stamps_are_local_times_of_the_zone_given():
    table = _table([_job(1)], processor_unit="gpu", time_zone="Asia/Tokyo")
    text, losses = pbs.render(table, tz="Asia/Tokyo")
    assert text.splitlines() == [
        "01/01/1970 09:01:40;Q;1.swftools;queue=q",
        "01/01/1970 09:02:40;E;1.swftools;user=u group=g queue=q qtime=100 start=110 end=160 "
        f"{E_TAIL} resources_used.walltime=00:00:50"]
    assert losses == []
    _, losses = pbs.render(table)  # UTC, but the table's zone is Tokyo
    assert losses == ["times written as UTC local times: the table's time zone Asia/Tokyo is in "
                      "no column of this format (write with --tz Asia/Tokyo for site-local "
                      "times, and read back with the same --tz)"]


def _lossy(first: int) -> list[dict]:
    """Jobs ``first``..``first + 8``, each losing something on its way to a PBS log."""
    i = first
    return [
        _job(i),
        _job(i + 1, gpus=None, gpus_per_node=None),  # gpus unknown: back as 0 (and 0 per node)
        _job(i + 2, termcode=4, swf_status=5, requested_walltime_s=50),  # killed at its limit
        _job(i + 3, requested_procs=99, wait_s=7),
        _job(i + 4, swf_status=0, gpus=4, nodes=2, gpus_per_node=1),
        _job(i + 5, walltime_s=None, user="", group="", queue=""),
        _job(i + 6, submit_time=None, start_time=None, finish_time=None, wait_s=None,
             walltime_s=None),
        _job(i + 7, walltime_s=20),
        _job(i + 8, source_job_id="abc"),
    ]


LOSSES = [  # of _lossy(1), in the report's order
    "1 job: gpus unknown: read back as 0 (no GPUs requested)",
    "1 job: termcode 1 or 4 of jobs that ran to their walltime limit: read back as 2 "
    "(walltime exceeded)",
    "1 job: swf_status of jobs killed by the system at their walltime limit: read back as "
    "walltime exceeded",
    "1 job: requested_procs other than the allocation (PBS records one request; read back "
    "as the allocation)",
    "1 job: wait_s other than the start minus the submission (read back as that)",
    "1 job: swf_status unknown or other than their termination code's (read back from it)",
    "2 jobs: gpus_per_node other than the GPU total over the node count (read back as that)",
    "1 job: walltime_s unknown: read back as the end minus the start",
    "1 job: user: empty names read back as unknown",
    "1 job: group: empty names read back as unknown",
    "1 job: queue: empty names read back as unknown",
    "1 job: jobs without any time stamped 01/01/1970",
    "1 job: finish_time unknown: read back as the E record's time",
    "1 job: walltime_s other than the end minus the start: read back as that, the recorded "
    "figure as recorded_walltime_s",
    "1 job: source_job_id not a PBS job id of this job alone (NUMBER[INDEX][.SERVER], once "
    "in the log, not an array parent): written as JOB_ID.swftools",
    "1 job: source_job_id read back as unknown (the written ids are plain numbers, read "
    "back as job_id alone)",
]


def test_every_loss_kind_is_reported_once_in_order(tmp_path):
    table = _table(_lossy(1), processor_unit="gpu")
    text, losses = pbs.render(table)
    assert losses == LOSSES
    lines = text.splitlines()
    assert lines[-1] == f"01/01/1970 00:00:00;E;7.swftools;user=u group=g queue=q {E_TAIL}"
    assert "01/01/1970 00:10:00;Q;6.swftools;queue=default" in lines
    assert ("01/01/1970 00:11:00;E;6.swftools;qtime=600 start=610 end=660 " + E_TAIL) in lines
    assert any(line.startswith("01/01/1970 00:04:20;E;2.swftools;") and "ngpus" not in line
               for line in lines)
    assert any(line.startswith("01/01/1970 00:14:20;E;8.swftools;")
               and line.endswith(" resources_used.walltime=00:00:20") for line in lines)
    back, _ = _read_back(table, tmp_path)
    rows = {r["job_id"]: r for r in back.to_pylist()}
    assert rows[2]["gpus"] == 0 and rows[3]["termcode"] == 2 and rows[4]["wait_s"] == 10
    assert rows[6]["user"] is None and rows[6]["walltime_s"] == 50
    assert rows[8]["walltime_s"] == 50 and rows[8]["recorded_walltime_s"] == 20
    assert rows[9]["source_job_id"] is None


@pytest.mark.parametrize("walltime,recorded,back_term", [
    (40, 60, 2),    # the log's own run time reached the 50 s limit: read back as exceeded
    (60, 40, 1),    # the end minus the start did, the written run time did not: kept
    (40, None, 1),  # nothing recorded: the written run time is the end minus the start
    (50, None, 2),
])
def test_a_failure_is_read_back_as_exceeded_by_the_run_time_written(tmp_path, walltime,
                                                                      recorded, back_term):
    """The reader compares ``resources_used.walltime`` (the recorded run time when there is one)
    with the limit; the loss report names the termination code exactly when that turns it into
    2. Found by the round-trip property: the writer compared ``walltime_s`` instead."""
    job = _job(1, termcode=1, swf_status=0, requested_walltime_s=50, walltime_s=walltime,
               start_time=10, finish_time=10 + walltime, recorded_walltime_s=recorded)
    back, losses = _read_back(_table([job], processor_unit="gpu"), tmp_path)
    assert back.column("termcode").to_pylist() == [back_term]
    named = [line for line in losses if "termcode" in line]
    assert named == ([] if back_term == 1 else [
        "1 job: termcode 1 or 4 of jobs that ran to their walltime limit: read back as 2 "
        "(walltime exceeded)"])


def test_source_ids_of_a_log_read_back_with_plain_ids_are_reported_lost(tmp_path):
    """A kept record id ``5.s`` is read back as job 5 alone: the source id is unknown then,
    not the written id of a renumbered log (the report said so before)."""
    table = _table([_job(5, source_job_id="5.s"), _job(6)], processor_unit="gpu")
    back, losses = _read_back(table, tmp_path)
    assert back.column("source_job_id").to_pylist() == [None, None]
    assert losses == ["1 job: source_job_id read back as unknown (the written ids are plain "
                      "numbers, read back as job_id alone)"]


def test_record_ids_keep_source_ids_that_name_one_job(tmp_path):
    rows = [_job(1, job_id=11, source_job_id="7[0].s"), _job(2, source_job_id="7[1].s"),
            _job(3, source_job_id="8.s"), _job(4, source_job_id="8.t"),  # 8 twice
            _job(5, source_job_id="9[].s"),  # an array parent
            _job(6, source_job_id="3"),  # job 3's fallback id 3.swftools has the same number
            _job(7, source_job_id="6.s"),  # and then job 6's
            _job(8, source_job_id="20.s")]
    table = _table(rows, processor_unit="gpu")
    text, losses = pbs.render(table)
    assert [line.split(";")[2] for line in text.splitlines() if ";E;" in line] == [
        "7[0].s", "7[1].s", "3.swftools", "4.swftools", "5.swftools", "6.swftools",
        "7.swftools", "20.s"]
    assert losses == [
        "5 jobs: source_job_id not a PBS job id of this job alone (NUMBER[INDEX][.SERVER], "
        "once in the log, not an array parent): written as JOB_ID.swftools",
        "1 job: job_id renumbered 1..n in submit order on reading (source ids that are not "
        "plain numbers; the ids are kept as source_job_id)",
        "5 jobs: source_job_id read back as the written id (JOB_ID.swftools) in a log "
        "renumbered on reading",
    ]
    back, _ = _read_back(table, tmp_path)
    assert back.select(["job_id", "source_job_id"]).to_pylist() == [
        {"job_id": i + 1, "source_job_id": s} for i, s in enumerate(
            ["7[0].s", "7[1].s", "3.swftools", "4.swftools", "5.swftools", "6.swftools",
             "7.swftools", "20.s"])]


def test_cpu_logs_write_ncpus_and_report_other_cpu_counts():
    table = _table([_job(1, gpus=4, cpus=4, nodes=2, gpus_per_node=2),
                    _job(2, gpus=3, cpus=5, gpus_per_node=3), _job(3, gpus=2, cpus=2, gpus_per_node=2),
                    _job(4, cpus=None), _job(5, cpus=9)],
                   processor_unit="processor")
    text, losses = pbs.render(table)
    assert text.splitlines()[1] == (
        "01/01/1970 00:02:40;E;1.swftools;user=u group=g queue=q qtime=100 start=110 end=160 "
        "Exit_status=0 Resource_List.walltime=01:00:00 Resource_List.nodect=2 "
        "Resource_List.ncpus=4 Resource_List.select=2:ncpus=2 resources_used.walltime=00:00:50")
    assert "Resource_List.ncpus=3 Resource_List.select=1:ncpus=3 " in text
    assert losses == ["3 jobs: cpus other than the processor total of a CPU log (read back as gpus)"]


def test_a_gpu_log_without_gpus_reads_back_as_a_cpu_log(tmp_path):
    table = _table([_job(1, gpus=0, cpus=4, gpus_per_node=0),
                    _job(2, gpus=0, cpus=None, gpus_per_node=0)], processor_unit="gpu")
    text, losses = pbs.render(table)
    assert ("Resource_List.ngpus=0 Resource_List.select=1:ngpus=0 Resource_List.ncpus=4 "
            "resources_used") in text
    assert losses == [
        "1 job: gpus of a GPU log where no job uses a GPU: read back as a CPU log, gpus holding "
        "the processor counts where known",
        "1 job: gpus_per_node other than the GPU total over the node count (read back as that)"]
    back, _ = _read_back(table, tmp_path)
    assert back.column("gpus").to_pylist() == [4, 0]


@pytest.mark.parametrize("column", ["user", "group", "queue"])
@pytest.mark.parametrize("value", ["a b", "a;b", "a=b", "a\nb", "a\rb"])
def test_names_a_record_cannot_carry_are_refused(tmp_path, column, value):
    with pytest.raises(UsageError) as info:
        pbs.write(_table([_job(1, **{column: value})]), tmp_path / "acct.log")
    assert str(info.value) == (f"{column} {value!r} holds a space, ';', '=' or a line break: "
                               "PBS accounting records cannot carry it")
    assert not (tmp_path / "acct.log").exists()


def test_edge_rows_written_out_by_hand():
    table = _table([
        _job(1, termcode=1, swf_status=0, requested_walltime_s=50),  # ran to its limit
        _job(2, termcode=4, swf_status=None, requested_walltime_s=40),  # beyond it
        _job(3, nodes=2, gpus=3, gpus_per_node=None),  # no whole number per node: no select
        _job(4, nodes=0, gpus=0, gpus_per_node=None),
        _job(5, termcode=3, swf_status=5, user=None, finish_time=None, walltime_s=None),
        _job(6, submit_time=None, wait_s=None, recorded_walltime_s=45, avg_cpu_time_s=7,
             used_memory_kb=1, executable=3),
        _job(7, think_time_s=2, partition=1, preceding_job_id=1, requested_memory_kb=2,
             avg_cpu_time_s=1),
        _job(8, termcode=None, swf_status=None, requested_walltime_s=None, nodes=None,
             gpus=None, gpus_per_node=None),
    ], processor_unit="gpu")
    text, losses = pbs.render(table, site="aaic")
    head = "user=u group=g queue=q"
    assert text.splitlines() == [
        "01/01/1970 00:01:40;Q;1.swftools;queue=q",
        f"01/01/1970 00:02:40;E;1.swftools;{head} qtime=100 start=110 end=160 Exit_status=1 "
        "Resource_List.walltime=00:00:50 Resource_List.nodect=1 Resource_List.ngpus=1 "
        "Resource_List.select=1:ngpus=1 resources_used.walltime=00:00:50",
        "01/01/1970 00:03:20;Q;2.swftools;queue=q",
        f"01/01/1970 00:04:20;E;2.swftools;{head} qtime=200 start=210 end=260 Exit_status=265 "
        "Resource_List.walltime=00:00:40 Resource_List.nodect=1 Resource_List.ngpus=1 "
        "Resource_List.select=1:ngpus=1 resources_used.walltime=00:00:50",
        "01/01/1970 00:05:00;Q;3.swftools;queue=q",
        f"01/01/1970 00:06:00;E;3.swftools;{head} qtime=300 start=310 end=360 Exit_status=0 "
        "Resource_List.walltime=01:00:00 Resource_List.nodect=2 Resource_List.ngpus=3 "
        "resources_used.walltime=00:00:50",
        "01/01/1970 00:06:40;Q;4.swftools;queue=q",
        f"01/01/1970 00:07:40;E;4.swftools;{head} qtime=400 start=410 end=460 Exit_status=0 "
        "Resource_List.walltime=01:00:00 Resource_List.nodect=0 Resource_List.ngpus=0 "
        "resources_used.walltime=00:00:50",
        # no end: stamped at the start; cancelled by an unknown user: the owner
        "01/01/1970 00:08:20;Q;5.swftools;queue=q",
        "01/01/1970 00:08:30;D;5.swftools;requestor=owner@localhost",
        "01/01/1970 00:08:30;E;5.swftools;group=g queue=q qtime=500 start=510 Exit_status=271 "
        "Resource_List.walltime=01:00:00 Resource_List.nodect=1 Resource_List.ngpus=1 "
        "Resource_List.select=1:ngpus=1",
        "01/01/1970 00:11:40;Q;7.swftools;queue=q",
        f"01/01/1970 00:12:40;E;7.swftools;{head} qtime=700 start=710 end=760 Exit_status=0 "
        "Resource_List.walltime=01:00:00 Resource_List.nodect=1 Resource_List.ngpus=1 "
        "Resource_List.select=1:ngpus=1 resources_used.walltime=00:00:50",
        "01/01/1970 00:13:20;Q;8.swftools;queue=q",
        f"01/01/1970 00:14:20;E;8.swftools;{head} qtime=800 start=810 end=860 "
        "resources_used.walltime=00:00:50",
        # no submit time: no Q record, last in submit order; the recorded walltime
        f"01/01/1970 00:11:00;E;6.swftools;{head} start=610 end=660 Exit_status=0 "
        "Resource_List.walltime=01:00:00 Resource_List.nodect=1 Resource_List.ngpus=1 "
        "Resource_List.select=1:ngpus=1 resources_used.walltime=00:00:45",
    ]
    assert losses == [
        "times written as UTC local times: the table's time zone Asia/Tokyo is in no column of "
        "this format (write with --tz Asia/Tokyo for site-local times, and read back with the "
        "same --tz)",
        *[f"{name}: {n} known value{'s' if n > 1 else ''} dropped; PBS accounting records carry "
          "no such key" for name, n in [("avg_cpu_time_s", 2), ("used_memory_kb", 1),
                                        ("requested_memory_kb", 1), ("executable", 1),
                                        ("partition", 1), ("preceding_job_id", 1),
                                        ("think_time_s", 1)]],
        "1 job: gpus unknown: read back as 0 (no GPUs requested)",
        "2 jobs: termcode 1 or 4 of jobs that ran to their walltime limit: read back as 2 "
        "(walltime exceeded)",
        "1 job: swf_status unknown or other than their termination code's (read back from it)",
        "1 job: finish_time unknown: read back as the E record's time",
    ]


@pytest.mark.parametrize("source, order", [("pbs", [2, 1]), ("slurm", [1, 2])])
def test_a_table_read_from_pbs_keeps_its_row_order(source, order):
    """A PBS log's jobs are in record order, which need not be submit order; other sources
    are written in submit order."""
    table = _table([_job(2), _job(1)], processor_unit="gpu", source_format=source)
    text, _ = pbs.render(table)
    assert [line.split(";")[2] for line in text.splitlines() if ";E;" in line] == [
        f"{i}.swftools" for i in order]


def test_empty_names_are_counted_and_other_letters_kept():
    table = _table([_job(1, user="", group="Xg"), _job(2, user="", queue="X"),
                    _job(3, user="Xavier")], processor_unit="gpu")
    text, losses = pbs.render(table)
    assert losses == ["2 jobs: user: empty names read back as unknown"]
    assert "E;1.swftools;group=Xg queue=q " in text and "E;2.swftools;group=g queue=X " in text
    assert "E;3.swftools;user=Xavier group=g " in text


def test_loss_counts_add_up_over_jobs():
    _, losses = pbs.render(_table(_lossy(1) + _lossy(11), processor_unit="gpu"))
    assert losses == [line.replace("2 jobs:", "4 jobs:").replace("1 job:", "2 jobs:")
                      for line in LOSSES]


def test_losses_of_jobs_that_never_ran_or_lack_a_field():
    table = _table([
        _job(1, start_time=None, finish_time=None, walltime_s=None),  # a wait, but no start
        _job(2, termcode=None, swf_status=1),
        _job(3, walltime_s=None),
        _job(4, walltime_s=20), _job(5, walltime_s=30),
        _job(6, nodes=2, gpus=2**54 + 2, gpus_per_node=2**53 + 1),  # exact beyond floats
    ], processor_unit="gpu")
    text, losses = pbs.render(table)
    assert losses == [
        "1 job: wait_s other than the start minus the submission (read back as that)",
        "1 job: swf_status unknown or other than their termination code's (read back from it)",
        "1 job: walltime_s unknown: read back as the end minus the start",
        "1 job: finish_time unknown: read back as the E record's time",
        "2 jobs: walltime_s other than the end minus the start: read back as that, the "
        "recorded figure as recorded_walltime_s",
    ]
    lines = text.splitlines()
    assert lines[1] == ("01/01/1970 00:01:40;E;1.swftools;user=u group=g queue=q qtime=100 "
                        f"{E_TAIL}")
    assert lines[3].endswith(";E;2.swftools;user=u group=g queue=q qtime=200 start=210 end=260 "
                             "Resource_List.walltime=01:00:00 Resource_List.nodect=1 "
                             "Resource_List.ngpus=1 Resource_List.select=1:ngpus=1 "
                             "resources_used.walltime=00:00:50")
    assert lines[5].endswith(" end=360 " + E_TAIL)
    assert lines[7].endswith(" resources_used.walltime=00:00:20")
    assert lines[11].endswith(" Resource_List.ngpus=18014398509481986 "
                              "Resource_List.select=2:ngpus=9007199254740993 "
                              "resources_used.walltime=00:00:50")


def test_write_passes_the_site_and_zone_to_the_records_and_keeps_a_file_unless_forced(tmp_path):
    """``write`` is ``render``'s text, atomically: the zone given sets the stamps (09:01:40 in
    Tokyo for 100 s after the epoch), the site's zone the loss note of a table that records none;
    an existing file is kept without ``force``."""
    table = _table([_job(1)], processor_unit="gpu")
    path = tmp_path / "acct.log"
    assert pbs.write(table, path, tz="Asia/Tokyo") == []
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first == "01/01/1970 09:01:40;Q;1.swftools;queue=q"
    with pytest.raises(UsageError, match="already exists \\(use --force to overwrite\\)$"):
        pbs.write(table, path)
    assert path.read_text(encoding="utf-8").startswith("01/01/1970 09:01:40;Q;")
    assert pbs.write(table, path, force=True, site="aaic") == [
        "times written as UTC local times: the table's time zone Asia/Tokyo is in no column of "
        "this format (write with --tz Asia/Tokyo for site-local times, and read back with the "
        "same --tz)"]
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first == "01/01/1970 00:01:40;Q;1.swftools;queue=q"


def test_sizes_read_back_from_a_gpu_log_with_a_job_of_unknown_gpus(tmp_path):
    """In a GPU log a job without ngpus reads back with 0 GPUs: its unknown gpus is a loss, its
    requested 0 processors is not (the reader's 0 is the same)."""
    table = _table([_job(1, gpus=2, gpus_per_node=2, requested_procs=2),
                    _job(2, gpus=None, gpus_per_node=None, requested_procs=0)],
                   processor_unit="gpu")
    back, losses = _read_back(table, tmp_path)
    assert back.column("gpus").to_pylist() == [2, 0]
    assert back.column("requested_procs").to_pylist() == [2, 0]
    assert losses == ["1 job: gpus unknown: read back as 0 (no GPUs requested)",
                      "1 job: gpus_per_node other than the GPU total over the node count (read "
                      "back as that)"]


def test_a_gpu_log_without_gpus_reads_back_the_cpu_count_of_each_job_that_has_one(tmp_path):
    """Where no job uses a GPU the log is read back as a CPU log: gpus holds the processor
    count of the two jobs that have one (both losses), 0 for the third (no loss)."""
    table = _table([_job(1, gpus=0, cpus=4, gpus_per_node=0),
                    _job(2, gpus=0, cpus=2, gpus_per_node=0),
                    _job(3, gpus=0, cpus=None, gpus_per_node=0)], processor_unit="gpu")
    back, losses = _read_back(table, tmp_path)
    assert back.column("gpus").to_pylist() == [4, 2, 0]
    assert losses[0] == ("2 jobs: gpus of a GPU log where no job uses a GPU: read back as a CPU "
                         "log, gpus holding the processor counts where known")
