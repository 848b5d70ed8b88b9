"""k-anonymity figures of a job table: classes, nulls, ties, the report's text and JSON form.

The brute-force check on generated tables is in ``test_privacy_audit.py``; here the figures of
small hand-made tables are written out in full."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from swftools import table as jt
from swftools.errors import UsageError
from swftools.privacy.kanon import recorded_quasi_identifiers, reidentification_report

T0 = 1_500_000_000  # 2017-07-14T02:40:00Z


def _jobs(rows: list[tuple], metadata: dict | None = None) -> pa.Table:
    """A job table from (user, queue, gpus) rows, one job a minute."""
    return jt.from_columns({"job_id": list(range(1, len(rows) + 1)),
                            "user": [r[0] for r in rows], "queue": [r[1] for r in rows],
                            "gpus": [r[2] for r in rows],
                            "submit_time": [T0 + 60 * i for i in range(len(rows))]},
                           metadata or {})


# classes over (queue, gpus), in sorted order with nulls last:
# (A,1) 3 jobs of 2 users; (B,2) 1 job of u3; (B,null) 2 jobs of u3 and an unknown user;
# (C,8) 1 job of an unknown user; (null,4) 1 job of u4
ROWS = [("u1", "A", 1), ("u1", "A", 1), ("u2", "A", 1), ("u3", "B", 2), ("u3", "B", None),
        (None, "B", None), ("u4", None, 4), (None, "C", 8)]


def test_figures_of_a_table_with_nulls_and_ties():
    report = reidentification_report(_jobs(ROWS), ("queue", "gpus"))
    assert report.to_dict() == {
        "quasi_identifiers": ["queue", "gpus"], "jobs": 8, "users": 4, "classes": 5, "k": 1,
        "jobs_in_classes_below": {"1": 3, "2": 5, "5": 8},
        "single_user_classes": 3, "identifiable_users": 2,
        "smallest": [  # by size, then in the classes' sorted order
            {"jobs": 1, "users": 1, "values": {"queue": "B", "gpus": 2}},
            {"jobs": 1, "users": 0, "values": {"queue": "C", "gpus": 8}},
            {"jobs": 1, "users": 1, "values": {"queue": None, "gpus": 4}},
            {"jobs": 2, "users": 1, "values": {"queue": "B", "gpus": None}},
            {"jobs": 3, "users": 2, "values": {"queue": "A", "gpus": 1}}],
        "hour_time_zone": None}
    # JSON-ready: plain Python numbers and None, no numpy scalars or NaN
    text = json.dumps(report.to_dict(), allow_nan=False)
    assert '"gpus": null' in text


def test_the_rendered_summary():
    report = reidentification_report(_jobs(ROWS), ("queue", "gpus"))
    assert report.render().splitlines() == [
        "re-identification report (information, not a failure) over queue, gpus:",
        "  8 jobs, 4 users, 5 equivalence classes, smallest class k = 1",
        "  jobs in classes of size <= 1: 3 (37.5 %)",
        "  jobs in classes of size <= 2: 5 (62.5 %)",
        "  jobs in classes of size <= 5: 8 (100.0 %)",
        "  classes whose jobs all belong to one user: 3; users identifiable from such a class: "
        "2 of 4",
        "  smallest classes:",
        "    1 job, 1 user: queue=B, gpus=2",
        "    1 job, 0 users: queue=C, gpus=8",
        "    1 job, 1 user: queue=None, gpus=4",
        "    2 jobs, 1 user: queue=B, gpus=None",
        "    3 jobs, 2 users: queue=A, gpus=1"]


def test_an_empty_table():
    report = reidentification_report(_jobs([]), ("queue", "submit_hour"))
    assert report.to_dict() == {
        "quasi_identifiers": ["queue", "submit_hour"], "jobs": 0, "users": 0, "classes": 0,
        "k": 0, "jobs_in_classes_below": {"1": 0, "2": 0, "5": 0}, "single_user_classes": 0,
        "identifiable_users": 0, "smallest": [], "hour_time_zone": "UTC"}
    assert report.render().splitlines()[2:5] == [
        "  jobs in classes of size <= 1: 0 (0 %)", "  jobs in classes of size <= 2: 0 (0 %)",
        "  jobs in classes of size <= 5: 0 (0 %)"]


def test_at_most_ten_smallest_classes_are_shown():
    rows = [(f"u{i}", "A", i) for i in range(12)] + [("u0", "A", 0)]
    report = reidentification_report(_jobs(rows), ("gpus",))
    assert [s["values"]["gpus"] for s in report.smallest] == list(range(1, 11))
    assert report.k == 1 and report.classes == 12


def test_without_a_user_column_no_user_is_identifiable():
    table = _jobs(ROWS).drop_columns(["user"])
    report = reidentification_report(table, ("queue",))
    assert (report.users, report.single_user_classes, report.identifiable_users) == (0, 0, 0)
    assert [(s["jobs"], s["users"]) for s in report.smallest] == [(1, 0), (1, 0), (3, 0), (3, 0)]


@pytest.mark.parametrize("zone, shown, hours", [
    ("Asia/Tokyo", "Asia/Tokyo", [11, 12]),  # 02:40 and 03:40 UTC
    (None, "UTC", [2, 3]),
    ("Mars/Olympus_Mons", "UTC", [2, 3])])  # a zone Arrow does not know: UTC, and says so
def test_submit_hour_in_the_recorded_zone_else_utc(zone, shown, hours):
    table = jt.from_columns({"job_id": [1, 2], "user": ["a", "b"],
                             "submit_time": [T0, T0 + 3600]},
                            {"time_zone": zone} if zone else {})
    report = reidentification_report(table, ("submit_hour",))
    assert report.hour_time_zone == shown
    assert sorted(s["values"]["submit_hour"] for s in report.smallest) == hours
    assert report.render().splitlines()[-4] == f"  submit_hour is the hour of day in {shown}"


def test_quasi_identifiers_are_needed():
    with pytest.raises(UsageError, match="^at least one quasi-identifier is needed$"):
        reidentification_report(_jobs(ROWS), ())
    with pytest.raises(UsageError, match=r"^quasi-identifier 'submit_hour' is not a column of "
                                         r"the table \(columns: job_id, user\)$"):
        reidentification_report(pa.table({"job_id": [1], "user": ["a"]}), ("submit_hour",))


def test_recorded_quasi_identifiers_are_columns_with_a_known_value():
    table = _jobs([("u1", "A", None), ("u2", "B", None)])
    assert recorded_quasi_identifiers(table) == ("queue", "submit_hour")
    assert recorded_quasi_identifiers(table, ("gpus", "user", "submit_hour")) == (
        "user", "submit_hour")
    # in an empty table every present column counts; a missing one never does
    empty = table.slice(0, 0).drop_columns(["cpus"])
    assert recorded_quasi_identifiers(empty) == ("queue", "nodes", "gpus_per_node", "gpus",
                                                 "requested_walltime_s", "submit_hour")
    no_times = table.drop_columns(["submit_time"])
    assert recorded_quasi_identifiers(no_times) == ("queue",)
    unknown_times = jt.from_columns({"job_id": [1], "queue": ["A"]})
    assert recorded_quasi_identifiers(unknown_times) == ("queue",)


def test_a_class_shows_the_values_of_its_first_job():
    """NaN and null group together (pandas): the class shows its first job's value, which keeps
    the JSON form valid."""
    table = jt.from_columns({"job_id": [1, 2], "user": ["a", "b"],
                             "avg_cpu_time_s": pa.array([None, float("nan")], pa.float64())})
    report = reidentification_report(table, ("avg_cpu_time_s",))
    assert report.smallest == [{"jobs": 2, "users": 2, "values": {"avg_cpu_time_s": None}}]
    json.dumps(report.to_dict(), allow_nan=False)
