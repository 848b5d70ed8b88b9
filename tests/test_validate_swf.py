"""SWF rules: header against data, field conventions; date(1) header times."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.validate.swf_times import parse_date

from .validate_support import (HEADER, aaic_table, assert_fires, assert_silent, run, swf_jobs,
                               swf_line, write_swf)

HEADER_RULES = ["swf-header-missing", "swf-header-recommended", "swf-header-unknown-key",
                "swf-header-value", "swf-header-counts", "swf-late-start", "swf-start-time",
                "swf-end-time", "swf-queue-ids", "swf-partition-ids", "swf-notes"]


def test_a_clean_file_passes_every_swf_rule(tmp_path):
    report = run(write_swf(tmp_path / "ok.swf", swf_jobs(5)))
    assert report.valid and not report.fired("warning"), [f.render() for f in report.findings]


def test_header_missing(tmp_path):
    report = run(write_swf(tmp_path / "h.swf", swf_jobs(3), header=""), *HEADER_RULES)
    found = assert_fires(report, "swf-header-missing", 1, severity="warning")
    assert found[0].line == 1
    assert report.fired() == {"swf-header-missing"}  # no cascade of missing-key findings


def test_recommended_keys(tmp_path):
    header = HEADER.replace("; Computer: test machine\n", "").replace("; Preemption: No\n", "")
    found = assert_fires(run(write_swf(tmp_path / "r.swf", swf_jobs(2), header=header.format(n=2)),
                             "swf-header-recommended"), "swf-header-recommended", 2, severity="info")
    assert {f.field for f in found} == {"Computer", "Preemption"}


def test_unknown_key_but_not_an_indented_continuation(tmp_path):
    header = HEADER.format(n=2) + "; Copyright: me\n; Note: see below\n;\tsee: http://x\n"
    found = assert_fires(run(write_swf(tmp_path / "u.swf", swf_jobs(2), header=header),
                             "swf-header-unknown-key"), "swf-header-unknown-key", 1)
    assert found[0].field == "Copyright" and found[0].line == 20


def test_header_values(tmp_path):
    header = (HEADER.format(n=2).replace("; MaxProcs: 16", "; MaxProcs: UNKNOWN")
              .replace("; Preemption: No", "; Preemption: Maybe")
              .replace("; TimeZoneString: UTC", "; TimeZoneString: Mars/Olympus")
              .replace("; EndTime:   Sun Sep 09 05:00:00 UTC 2001", "; EndTime: yesterday"))
    found = assert_fires(run(write_swf(tmp_path / "v.swf", swf_jobs(2), header=header),
                             "swf-header-value"), "swf-header-value")
    assert {f.field for f in found} == {"MaxProcs", "Preemption", "TimeZoneString", "EndTime"}


def test_header_counts_with_and_without_cleaning_notes(tmp_path):
    found = assert_fires(run(write_swf(tmp_path / "c.swf", swf_jobs(3), n=10), "swf-header-counts"),
                         "swf-header-counts", 2)
    assert found[0].field == "MaxJobs" and found[0].value == 10 and found[0].expected == "3"
    cleaned = HEADER.format(n=10) + "; Note: filters\n;   user=3 (7 jobs removed)\n"
    assert_silent(run(write_swf(tmp_path / "d.swf", swf_jobs(3), header=cleaned),
                      "swf-header-counts"), "swf-header-counts")


def test_late_start(tmp_path):
    lines = [swf_line(1, submit=90_000), swf_line(2, submit=90_100)]
    found = assert_fires(run(write_swf(tmp_path / "l.swf", lines), "swf-late-start"),
                         "swf-late-start", 1)
    assert found[0].value == 90_000 and found[0].job_id == 1
    assert_silent(run(write_swf(tmp_path / "m.swf", lines), "swf-late-start", late_start_s=100_000),
                  "swf-late-start")


def test_start_time_must_name_unix_start_time(tmp_path):
    header = HEADER.format(n=2).replace("01:46:40 UTC", "02:46:40 UTC")
    found = assert_fires(run(write_swf(tmp_path / "s.swf", swf_jobs(2), header=header),
                             "swf-start-time"), "swf-start-time", 1)
    assert "+3600 s" in found[0].message


def test_jobs_end_before_end_time(tmp_path):
    lines = swf_jobs(2) + [swf_line(3, submit=300, run=20_000)]  # ends past 05:00 UTC
    found = assert_fires(run(write_swf(tmp_path / "e.swf", lines), "swf-end-time"), "swf-end-time", 1)
    assert found[0].job_id == 3


def test_queue_and_partition_ids(tmp_path):
    lines = [swf_line(1, queue=1), swf_line(2, submit=10, queue=7)]
    header = HEADER.format(n=2) + "; MaxPartitions: 2\n; Partition: 1 a\n"
    found = assert_fires(run(write_swf(tmp_path / "q.swf", lines, header=header), "swf-queue-ids",
                             "swf-partition-ids"), "swf-queue-ids", 1)
    assert found[0].value == 7 and found[0].job_id == 2
    found = assert_fires(run(write_swf(tmp_path / "q.swf", lines, header=header),
                             "swf-partition-ids"), "swf-partition-ids", 1)
    assert "MaxPartitions is 2 but 1" in found[0].message


def test_extra_columns(tmp_path):
    lines = [swf_line(1) + " 99 98", swf_line(2, submit=10)]
    found = assert_fires(run(write_swf(tmp_path / "x.swf", lines), "swf-extra-columns"),
                         "swf-extra-columns", 1, severity="warning")
    assert found[0].line == 20 and found[0].value == 20


def test_notes(tmp_path):
    header = HEADER.format(n=2).replace("; Note: test file\n", "")
    assert_fires(run(write_swf(tmp_path / "n.swf", swf_jobs(2), header=header), "swf-notes"),
                 "swf-notes", 1, severity="info")


def test_negative_values_on_an_swf_table():
    table = aaic_table([{"wait_s": -5, "start_time": None}, {}],
                       metadata={"source_format": "swf", "swf_header": [["UnixStartTime", "0"]]})
    report = run(table, "swf-negative-value", "schema-range")
    found = assert_fires(report, "swf-negative-value", 1)
    assert found[0].field == "wait_s" and "field 3 (wait time) is -5" in found[0].message
    assert_silent(report, "schema-range")  # SWF columns are checked in SWF terms


def test_submit_before_the_time_origin():
    table = aaic_table([{"submit_time": 999}],
                       metadata={"source_format": "swf", "swf_time_origin": 1000,
                                 "swf_header": [["UnixStartTime", "1000"]]})
    found = assert_fires(run(table, "swf-negative-value"), "swf-negative-value", 1)
    assert found[0].value == -1 and "field 2 (submit time) is -1" in found[0].message


def test_status_codes():
    table = aaic_table([{"swf_status": 1}, {"swf_status": 7}])
    assert [f.job_id for f in assert_fires(run(table, "swf-status"), "swf-status", 1)] == [2]


def test_cpu_time_within_run_time(tmp_path):
    lines = [swf_line(1, run=100, cpu=100.5), swf_line(2, submit=10, run=100, cpu=150)]
    found = assert_fires(run(write_swf(tmp_path / "c.swf", lines), "swf-cpu-time"), "swf-cpu-time", 1)
    assert found[0].job_id == 2


def test_memory_overuse_only_when_forbidden(tmp_path):
    lines = [swf_line(1, mem=200, req_mem=100)]
    allowed = "; UnixStartTime: 0\n"
    report = run(write_swf(tmp_path / "a.swf", lines, header=allowed), "swf-memory-overuse")
    assert "swf-memory-overuse" in report.skipped
    forbidden = "; UnixStartTime: 0\n; AllowOveruse: No\n"
    assert_fires(run(write_swf(tmp_path / "b.swf", lines, header=forbidden), "swf-memory-overuse"),
                 "swf-memory-overuse", 1)


def test_allocated_below_requested_is_counted_once(tmp_path):
    lines = [swf_line(1, procs=2, req_procs=4), swf_line(2, submit=5, procs=2, req_procs=4),
             swf_line(3, submit=9, procs=2, req_procs=4, run=0)]
    found = assert_fires(run(write_swf(tmp_path / "r.swf", lines), "swf-allocated-below-requested"),
                         "swf-allocated-below-requested", 1, severity="info")
    assert found[0].value == 2


def test_partial_execution_lines(tmp_path):
    header = "; UnixStartTime: 0\n; Preemption: Double\n"
    lines = [swf_line(1, run=30, status=1), swf_line(1, run=10, status=2),
             swf_line(2, submit=5), swf_line(1, submit=-1, run=10, status=2)]
    found = assert_fires(run(write_swf(tmp_path / "p.swf", lines, header=header),
                             "swf-partial-execution"), "swf-partial-execution")
    messages = " | ".join(f.message for f in found)
    assert "not consecutive" in messages and "burst statuses [2, 2]" in messages
    assert "summary run time 30 s, bursts sum to 20 s" in messages
    no_preemption = "; UnixStartTime: 0\n; Preemption: No\n"
    found = assert_fires(run(write_swf(tmp_path / "q.swf", [swf_line(1, status=3)],
                                       header=no_preemption), "swf-partial-execution"),
                         "swf-partial-execution", 1)
    assert "Preemption: No" in found[0].message


@given(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2030, 12, 31)),
       st.sampled_from(["Europe/Paris", "US/Pacific", "Asia/Tokyo", "UTC"]))
def test_header_dates_parse_back_to_their_instant(naive, zone_name):
    moment = naive.replace(tzinfo=timezone.utc).astimezone(ZoneInfo(zone_name))
    text = moment.strftime("%a %b %d %H:%M:%S ") + moment.tzname() + moment.strftime(" %Y")
    assert parse_date(text, zone_name) == int(naive.replace(tzinfo=timezone.utc).timestamp())


def test_header_dates_without_a_zone():
    assert parse_date("Fri Jul 14 02:40:00 UTC 2017") == 1_500_000_000
    assert parse_date("Fri Jul 14 11:40:00 JST 2017", tz_offset_s=9 * 3600) == 1_500_000_000
    assert parse_date("Fri Jul 14 11:40:00 JST 2017") is None
    assert parse_date("July 14") is None


# 2017-11-05 01:30 happened twice in Chicago: 06:30 UTC (CDT) and 07:30 UTC (CST)
CDT_0130, CST_0130 = 1_509_863_400, 1_509_867_000


def test_a_header_date_in_the_hour_a_clock_goes_back_is_read_by_its_abbreviation():
    assert parse_date("Sun Nov  5 01:30:00 CDT 2017", "America/Chicago") == CDT_0130
    assert parse_date("Sun Nov  5 01:30:00 cst 2017", "America/Chicago") == CST_0130
    # an abbreviation the zone does not use: the first of the two readings
    assert parse_date("Sun Nov  5 01:30:00 XYZ 2017", "America/Chicago") == CDT_0130


@pytest.mark.parametrize("abbr", ["UTC", "GMT"])
def test_utc_and_gmt_header_dates_are_utc_whatever_the_zone(abbr):
    for zone_name in (None, "Asia/Tokyo"):
        assert parse_date(f"Fri Jul 14 02:40:00 {abbr} 2017", zone_name) == 1_500_000_000


def test_header_dates_do_not_depend_on_the_machine_time_zone(monkeypatch):
    import time

    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        assert parse_date("Fri Jul 14 02:40:00 UTC 2017") == 1_500_000_000
        assert parse_date("Fri Jul 14 11:40:00 JST 2017", tz_offset_s=9 * 3600) == 1_500_000_000
    finally:
        monkeypatch.undo()
        time.tzset()


def test_header_rules_say_why_they_do_not_apply(tmp_path):
    report = run(aaic_table([{}]), "swf-notes", "swf-queue-ids")
    assert report.skipped["swf-notes"] == "input is not SWF"
    report = run(write_swf(tmp_path / "h.swf", swf_jobs(2), header=""), "swf-notes")
    assert report.skipped["swf-notes"] == "the SWF file has no header"
    header = "; UnixStartTime: 0\n; MaxNodes: 4\n"
    report = run(write_swf(tmp_path / "n.swf", swf_jobs(2), header=header), "swf-queue-ids",
                 "swf-partition-ids")
    assert report.skipped == {"swf-queue-ids": "the header declares no queues",
                              "swf-partition-ids": "the header declares no partitions"}


def test_declared_ids_without_a_maximum(tmp_path):
    """'Queue:' lines alone declare the numbers; a job's null queue (-1) is not counted."""
    lines = [swf_line(1, queue=-1), swf_line(2, submit=10, queue=7), swf_line(3, submit=20, queue=1)]
    header = "; UnixStartTime: 0\n; Queue: 1 batch\n; Queue: 2 express\n"
    found = assert_fires(run(write_swf(tmp_path / "q.swf", lines, header=header), "swf-queue-ids"),
                         "swf-queue-ids", 1)
    assert (found[0].line, found[0].field, found[0].value, found[0].expected) == \
        (5, "queue", 7, "one of [1, 2]")
    assert found[0].message == "queue 7 is used by 1 jobs but no 'Queue:' line declares it"


def test_numbers_beyond_a_maximum_without_lines(tmp_path):
    """MaxPartitions alone bounds the numbers: 0..MaxPartitions is inside."""
    lines = [swf_line(1, partition=-1), swf_line(2, submit=1, partition=0),
             swf_line(3, submit=2, partition=3), swf_line(4, submit=3, partition=4)]
    header = "; UnixStartTime: 0\n; MaxPartitions: 3\n"
    found = assert_fires(run(write_swf(tmp_path / "p.swf", lines, header=header),
                             "swf-partition-ids"), "swf-partition-ids", 1)
    assert (found[0].job_id, found[0].field, found[0].value, found[0].expected) == \
        (4, "partition", 4, "0..3")
    assert found[0].message == "partition 4 is outside 0..MaxPartitions 3"


def test_a_maximum_that_miscounts_its_lines_points_at_its_header_line(tmp_path):
    header = HEADER.format(n=2).replace("MaxQueues: 2", "maxqueues: 3")
    found = assert_fires(run(write_swf(tmp_path / "m.swf", swf_jobs(2), header=header),
                             "swf-queue-ids"), "swf-queue-ids", 1)
    assert (found[0].line, found[0].field, found[0].value, found[0].expected) == \
        (16, "MaxQueues", 3, "2")
    table = aaic_table([{}], metadata={"source_format": "swf-table", "swf_header": [
        ["MaxQueues", "3"], ["Queue", "1 a"]], "swf_header_lines": ["; MaxQueues: 3", "; Queue: 1 a"]})
    found = assert_fires(run(table, "swf-queue-ids"), "swf-queue-ids")
    assert found[0].line is None  # no file line for a table


def test_the_time_origin_of_the_table_wins_over_the_header():
    meta = {"source_format": "swf", "swf_header": [["UnixStartTime", "0"]]}
    table = aaic_table([{"submit_time": 999}], metadata={**meta, "swf_time_origin": 1000})
    assert assert_fires(run(table, "swf-negative-value"), "swf-negative-value", 1)[0].value == -1
    table = aaic_table([{"submit_time": 999}],
                       metadata={**meta, "swf_header": [["UnixStartTime", "1000"]]})
    assert assert_fires(run(table, "swf-negative-value"), "swf-negative-value", 1)[0].value == -1


@pytest.mark.parametrize("zone_lines", ["; TimeZoneString: Asia/Tokyo\n", "; TimeZone: 32400\n"])
def test_header_times_without_an_abbreviation_read_in_the_header_zone(tmp_path, zone_lines):
    """StartTime 10:46:40 in Tokyo (UTC+9) is UnixStartTime 1000000000 (01:46:40 UTC)."""
    header = ("; UnixStartTime: 1000000000\n" + zone_lines
              + "; StartTime: Sun Sep 09 10:46:40 XYZ 2001\n")
    report = run(write_swf(tmp_path / "z.swf", swf_jobs(2), header=header),
                 "swf-start-time")
    assert report.rules_run == ["swf-start-time"] and not report.findings


def test_memory_overuse_finding_and_its_boundary(tmp_path):
    lines = [swf_line(1, mem=101, req_mem=100), swf_line(2, submit=5, mem=100, req_mem=100)]
    header = "; UnixStartTime: 0\n; AllowOveruse: No\n"
    found = assert_fires(run(write_swf(tmp_path / "m.swf", lines, header=header),
                             "swf-memory-overuse"), "swf-memory-overuse", 1)
    assert (found[0].job_id, found[0].field, found[0].value, found[0].expected) == \
        (1, "used_memory_kb", 101, "<= 100")
    assert found[0].message == "uses 101 KB of a 100 KB request"


@pytest.mark.parametrize("mem, req_mem, missing", [(-1, 100, "used_memory_kb"),
                                                   (100, -1, "requested_memory_kb")])
def test_memory_overuse_needs_both_columns(tmp_path, mem, req_mem, missing):
    lines = [swf_line(1, mem=mem, req_mem=req_mem)]
    header = "; UnixStartTime: 0\n; AllowOveruse: No\n"
    report = run(write_swf(tmp_path / "m.swf", lines, header=header), "swf-memory-overuse")
    assert report.skipped["swf-memory-overuse"] == f"no known values in {missing}"
