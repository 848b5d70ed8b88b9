"""The leak audit's report (status, JSON, text), its inputs (names files, raw tables) and the choice
of the job table for the re-identification figures."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from swftools import table as jt
from swftools.errors import InputError
from swftools.privacy.audit import (
    SHOWN_PER_TERM,
    AuditReport,
    audit,
    names_from_table,
    nothing_to_search,
    read_names_file,
    searchable,
)
from swftools.privacy.match import Term
from swftools.privacy.scan import Leak

from .conftest import text_under_c_locale

TANAKA = Term("tanaka", "user")
SATO = Term("sato", "group")


def _report(**kw) -> AuditReport:
    base = dict(path="rel", leaks=[], omitted={}, unreadable=[], files_scanned=2,
                bytes_scanned=30, searched={"user": 1}, unsearchable=[], key_searched=False)
    return AuditReport(**{**base, **kw})


def _leaks(n: int, term: Term = TANAKA, file: str = "a.txt", member=None, count: int = 1):
    return [Leak(file, member, term, "token", line=i + 1, count=count) for i in range(n)]


# --- sentences and inputs --------------------------------------------------------------------

def test_nothing_to_search_sentences():
    assert nothing_to_search() == ("nothing to search for: the raw input holds no user, group, "
                                   "host or job name; the audit proves nothing about names")
    assert nothing_to_search(1) == (
        "nothing to search for: no raw user, group, host or job name can be searched "
        "(1 unsearchable: numbers or common words, check them by hand); "
        "the audit proves nothing about names")


def test_searchable_counts_names_and_hosts():
    assert searchable(["tanaka", "17", "user"], ["gpu07"]) == (2, 2)
    assert searchable({"user": ["tanaka"], "job": ["analysis"]}) == (1, 1)
    assert searchable() == (0, 0)


def test_read_names_file_refuses_text_that_is_not_utf8(tmp_path):
    path = tmp_path / "names.txt"
    path.write_bytes(b"tanaka\n\xff\n")
    with pytest.raises(InputError) as info:
        read_names_file(path)
    assert (info.value.path, info.value.message, info.value.expected) == (
        str(path), "not UTF-8 text (byte 7)", "one name per line")


def test_read_names_file_skips_blank_and_comment_lines(tmp_path):
    path = tmp_path / "names.txt"
    path.write_text("  # a comment\n\n \t\nsato # not a comment\n#x\n")
    assert read_names_file(path) == ["sato # not a comment"]


def test_names_from_table():
    table = pa.table({"user": [3, None, 1, 3], "group": ["b", "a", None, "a"]})
    assert names_from_table(table) == {"user": ["1", "3"], "group": ["a", "b"]}
    assert names_from_table(pa.table({"user": ["x"]})) == {"user": ["x"]}
    with pytest.raises(InputError) as info:
        names_from_table(pa.table({"group": ["a"]}))
    assert (info.value.path, info.value.field, info.value.expected) == (
        "raw log", "user", "a raw job log with user and group names")


# --- status ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, status, failed", [
    ({}, "clean", False),
    ({"leaks": _leaks(1)}, "leaks", True),
    ({"leaks": _leaks(1), "unreadable": [("x", None, "bad")]}, "leaks", True),
    ({"unreadable": [("x", None, "bad")]}, "unreadable", True),
    ({"searched": {}}, "nothing-to-search", False),
    ({"searched": {"user": 0}}, "nothing-to-search", False),
    ({"searched": {"user": 0, "host": 2}}, "clean", False),
])
def test_status(kw, status, failed):
    report = _report(**kw)
    assert (report.status, report.failed, report.clean) == (status, failed, status == "clean")
    assert (report.nothing_to_search is None) == (status != "nothing-to-search")


def test_nothing_to_search_property_counts_the_unsearchable_names():
    report = _report(searched={}, unsearchable=[(Term("17", "user"), "numeric-only")])
    assert report.nothing_to_search == nothing_to_search(1)


def test_hit_count_adds_listed_counts_and_unlisted_hits():
    report = _report(leaks=_leaks(2, count=3), omitted={("a.txt", None, TANAKA): 4})
    assert report.hit_count == 3 + 3 + 4


# --- JSON ------------------------------------------------------------------------------------

def test_to_dict_and_to_json():
    report = _report(
        leaks=_leaks(1), omitted={("a.tar", "m", SATO): 5},
        unreadable=[("b.gz", "in", "BadGzipFile: x")], searched={"user": 1, "group": 2},
        unsearchable=[(Term("17", "user"), "numeric-only")], key_searched=True,
        notes=["田中 note"])
    d = report.to_dict()
    assert list(d["searched"]) == ["group", "user"]
    assert {k: d[k] for k in ("path", "status", "clean", "hits", "files_scanned",
                              "bytes_scanned", "key_searched", "reidentification", "notes")} == {
        "path": "rel", "status": "leaks", "clean": False, "hits": 6, "files_scanned": 2,
        "bytes_scanned": 30, "key_searched": True, "reidentification": None,
        "notes": ["田中 note"]}
    assert d["unsearchable"] == [{"kind": "user", "name": "17", "reason": "numeric-only"}]
    assert d["leaks"] == [_leaks(1)[0].to_dict()]
    assert d["unlisted"] == [{"file": "a.tar", "member": "m", "what": "group name 'sato'",
                              "count": 5}]
    assert d["unreadable"] == [{"file": "b.gz", "member": "in", "reason": "BadGzipFile: x"}]
    text = report.to_json()
    assert text.endswith("}\n") and "田中" in text and text.startswith('{\n  "path"')
    assert json.loads(text) == d


# --- text ------------------------------------------------------------------------------------

def test_render_a_clean_report():
    assert _report().render() == (
        "audit rel: CLEAN; scanned 2 files, 30 bytes for 1 user name and no key (give --key-file)")
    one = _report(files_scanned=1, bytes_scanned=1, key_searched=True,
                  searched={"user": 2, "group": 1, "host": 1, "job": 3})
    assert one.render() == ("audit rel: CLEAN; scanned 1 file, 1 byte for 2 user names, "
                            "1 group name, 1 host name, 3 job names and the key")


def test_render_groups_hits_and_shows_ten_per_file_and_term():
    leaks = (_leaks(SHOWN_PER_TERM + 2, count=2) + _leaks(1, SATO)
             + _leaks(SHOWN_PER_TERM, file="b.tar", member="in.txt"))
    report = _report(leaks=leaks, omitted={("a.txt", None, TANAKA): 5})
    lines = report.render().splitlines()
    assert lines[:SHOWN_PER_TERM] == [f"a.txt:{i + 1}: user name 'tanaka' (token)"
                                      for i in range(SHOWN_PER_TERM)]
    assert lines[SHOWN_PER_TERM] == ("a.txt: ... and 9 more occurrences of user name 'tanaka' "
                                     "(--json lists up to 100 locations)")
    assert lines[SHOWN_PER_TERM + 1] == "a.txt:1: group name 'sato' (token)"
    assert lines[SHOWN_PER_TERM + 2:2 * SHOWN_PER_TERM + 2] == [
        f"b.tar!in.txt:{i + 1}: user name 'tanaka' (token)" for i in range(SHOWN_PER_TERM)]
    hits = (SHOWN_PER_TERM + 2) * 2 + 5 + 1 + SHOWN_PER_TERM
    assert lines[-1] == (f"audit rel: LEAKS FOUND: {hits} occurrences; scanned 2 files, 30 bytes "
                         "for 1 user name and no key (give --key-file)")


def test_render_names_a_member_of_hidden_hits_and_one_more():
    report = _report(leaks=_leaks(1, member="m"), omitted={("a.txt", "m", TANAKA): 1})
    assert report.render().splitlines()[1] == (
        "a.txt!m: ... and 1 more occurrence of user name 'tanaka' (--json lists up to 100 "
        "locations)")


def test_render_unreadable_files():
    report = _report(unreadable=[("a.gz", None, "bad"), ("b.tar", "x.txt", "worse")])
    assert report.render().splitlines() == [
        "a.gz: could not be scanned: bad", "b.tar!x.txt: could not be scanned: worse",
        "audit rel: INCOMPLETE, 2 unreadable files; scanned 2 files, 30 bytes for 1 user name "
        "and no key (give --key-file)"]
    one = _report(leaks=_leaks(1), unreadable=[("a.gz", None, "bad")])
    assert one.render().splitlines()[-1].startswith(
        "audit rel: LEAKS FOUND: 1 occurrence, 1 unreadable file; ")


def test_render_nothing_to_search_unsearchable_names_and_notes():
    unsearchable = [(Term(str(i), "user"), "numeric-only") for i in range(12)]
    report = _report(searched={}, unsearchable=unsearchable, notes=["note one"])
    lines = report.render().splitlines()
    assert lines[0] == ("audit rel: NOTHING TO SEARCH; scanned 2 files, 30 bytes for no raw name "
                        "and no key (give --key-file)")
    assert lines[1] == nothing_to_search(12)
    assert lines[2] == ("not searchable, check by hand: "
                        + ", ".join(f"'{i}' (numeric-only)" for i in range(10)) + " and 2 more")
    assert lines[3:] == ["note one"]
    ten = _report(unsearchable=unsearchable[:10]).render().splitlines()
    assert ten[1].endswith("'9' (numeric-only)")


# --- the job table ---------------------------------------------------------------------------

def _jobs(n: int = 4, **extra) -> pa.Table:
    columns = {"job_id": list(range(1, n + 1)), "user": ["u"] * n,
               "submit_time": [1_500_000_000 + i for i in range(n)], "queue": ["q"] * n,
               "nodes": [1] * n, **extra}
    return jt.from_columns(columns, {"time_zone": "UTC"})


def test_the_job_table_is_jobs_parquet_first_then_by_name(tmp_path):
    (tmp_path / "data").mkdir()
    pq.write_table(_jobs(3), tmp_path / "data" / "a.parquet")
    pq.write_table(_jobs(5), tmp_path / "data" / "jobs.parquet")
    pq.write_table(_jobs(2), tmp_path / "b.parquet")
    pq.write_table(pa.table({"x": [1]}), tmp_path / "0.parquet")  # no job_id: no job table
    report = audit(tmp_path, ["tanaka"])
    assert report.reidentification.jobs == 5
    assert "re-identification report from data/jobs.parquet" in report.notes
    (tmp_path / "data" / "jobs.parquet").unlink()
    report = audit(tmp_path, ["tanaka"])
    assert report.reidentification.jobs == 2
    assert "re-identification report from b.parquet" in report.notes


def test_a_given_table_is_used_and_missing_quasi_identifiers_are_noted(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    report = audit(tmp_path, ["tanaka"], table=_jobs(6),
                   quasi_identifiers=("queue", "nodes", "cpus", "submit_hour"))
    assert report.reidentification.jobs == 6
    assert report.notes == ["quasi-identifiers the table does not record: cpus"]
    assert report.reidentification.quasi_identifiers == ("queue", "nodes", "submit_hour")


def test_the_job_table_keeps_only_the_columns_it_needs(tmp_path):
    pq.write_table(_jobs(3, cpus=[1, 2, 3]), tmp_path / "jobs.parquet")
    report = audit(tmp_path, ["tanaka"], quasi_identifiers=("cpus",))
    assert report.reidentification.quasi_identifiers == ("cpus",)
    assert report.reidentification.classes == 3
    report = audit(tmp_path, ["tanaka"], quasi_identifiers=("submit_hour",))
    assert report.reidentification.quasi_identifiers == ("submit_hour",)


def test_no_usable_quasi_identifier_gives_no_report(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    report = audit(tmp_path, ["tanaka"], table=_jobs(2), quasi_identifiers=("cpus",))
    assert report.reidentification is None
    assert report.notes == ["quasi-identifiers the table does not record: cpus"]


def test_a_directory_without_a_job_table_says_so(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    assert audit(tmp_path, ["tanaka"]).notes == ["no job table found: no re-identification report"]


def test_a_single_file_that_is_no_trace_says_why(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("x\n")
    notes = audit(path, ["tanaka"]).notes
    assert notes[0].startswith("notes.txt is not a readable trace (")
    assert notes[1:] == ["no job table found: no re-identification report"]


def test_processor_counts_are_noted(tmp_path):
    table = jt.with_metadata(_jobs(3, gpus=[1, 2, 4]),
                             {"time_zone": "UTC", "processor_unit": "processor"})
    (tmp_path / "a.txt").write_text("x")
    report = audit(tmp_path, ["tanaka"], table=table, quasi_identifiers=("gpus",))
    assert report.notes == ["gpus counts processors in this trace"]
    gpu = audit(tmp_path, ["tanaka"], table=_jobs(3, gpus=[1, 2, 4]), quasi_identifiers=("gpus",))
    assert gpu.notes == []


def test_searched_counts_by_kind_and_the_key(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    report = audit(tmp_path, {"user": ["tanaka", "sato", "17"], "group": ["lab9"]},
                   hosts=["gpu07"], key=b"k" * 32)
    assert report.searched == {"user": 2, "group": 1, "host": 1}
    assert report.key_searched and [t.text for t, _ in report.unsearchable] == ["17"]
    assert not audit(tmp_path, ["tanaka"], key=b"").key_searched
    assert audit(tmp_path, ["tanaka"]).searched == {"name": 1}


def test_unreadable_table_metadata_is_not_read_as_processor_counts(tmp_path):
    table = jt.with_metadata(_jobs(3, gpus=[1, 2, 4]),
                             {"time_zone": "UTC", "processor_unit": "bogus"})
    (tmp_path / "a.txt").write_text("x")
    report = audit(tmp_path, ["tanaka"], table=table, quasi_identifiers=("gpus",))
    assert report.notes == [] and report.reidentification.classes == 3


def test_a_single_trace_file_names_itself_as_the_job_table(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("1 0 10 100 1 -1 -1 1 100 -1 1 7 -1 -1 -1 -1 -1 -1\n")
    report = audit(path, ["tanaka"])
    assert report.notes[0] == "re-identification report from t.swf"
    assert report.reidentification.jobs == 1


def test_names_from_table_says_what_is_missing():
    with pytest.raises(InputError) as info:
        names_from_table(pa.table({"group": ["a"]}), "raw.csv")
    assert (info.value.path, info.value.message) == (
        "raw.csv", "no user column to take the raw names from")


def test_render_puts_user_names_first_and_counts_eleven_unsearchable():
    unsearchable = [(Term(str(i), "user"), "numeric-only") for i in range(11)]
    lines = _report(searched={"group": 1, "user": 2}, unsearchable=unsearchable).render()
    assert "for 2 user names, 1 group name and" in lines
    assert lines.endswith("'9' (numeric-only) and 1 more")


def test_a_missing_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError) as info:
        audit(tmp_path / "gone", ["tanaka"])
    assert (info.value.path, info.value.message, info.value.expected) == (
        str(tmp_path / "gone"), "no such file or directory", "an archive to audit")


def test_the_report_holds_what_the_scan_found(tmp_path):
    import gzip
    import tarfile

    from swftools.limits import Limits
    from swftools.privacy.scan import MAX_LOCATIONS

    (tmp_path / "a.txt").write_text("tanaka\n" * (MAX_LOCATIONS + 2))
    (tmp_path / "b.gz").write_bytes(b"not gzip")
    with tarfile.open(tmp_path / "c.tar", "w") as tar:
        info = tarfile.TarInfo("big.txt")
        info.size = 100
        tar.addfile(info, io.BytesIO(b"x" * 100))
    (tmp_path / "d.txt").write_bytes(gzip.compress(b""))
    report = audit(tmp_path, ["tanaka"], limits=Limits(member_bytes=50))
    assert report.path == str(tmp_path)
    assert len(report.leaks) == MAX_LOCATIONS
    assert report.omitted == {("a.txt", None, Term("tanaka", "name")): 2}
    assert [(f, m) for f, m, _ in report.unreadable] == [("b.gz", None), ("c.tar", None)]
    assert report.files_scanned == 3  # a.txt, d.txt and b.gz (counted before it failed)
    assert report.bytes_scanned == len("tanaka\n") * (MAX_LOCATIONS + 2) + len(
        gzip.compress(b""))


def test_the_reidentification_report_is_in_the_json_and_the_text(tmp_path):
    table = _jobs(4, nodes=[1, 1, 2, 4])
    table = table.set_column(table.schema.get_field_index("user"), "user",
                             pa.array(["a", "a", "b", "c"]))
    pq.write_table(table, tmp_path / "jobs.parquet")
    report = audit(tmp_path, ["tanaka"], quasi_identifiers=("nodes", "cpus", "gpus"))
    from swftools.privacy.kanon import reidentification_report

    expected = reidentification_report(table, ("nodes",))
    assert report.reidentification.to_dict() == expected.to_dict()
    assert report.to_dict()["reidentification"] == expected.to_dict()
    assert report.render().endswith(expected.render())
    assert "quasi-identifiers the table does not record: cpus, gpus" in report.notes


def test_the_summary_counts_names_by_kind_in_words():
    """Names from a names file are "names", the others "<kind> names"; users first."""
    text = _report(searched={"name": 1, "host": 3, "user": 2}).render()
    assert "30 bytes for 2 user names, 1 name, 3 host names and no key (give --key-file)" in text


def test_a_names_file_is_utf8_under_any_locale(tmp_path):
    """Raw names such as ``田中`` or ``müller`` are read as UTF-8 also under the C locale (ASCII),
    in a fresh interpreter; the same file reads the same here."""
    path = tmp_path / "names.txt"
    path.write_text("田中\nmüller\n", encoding="utf-8")
    assert read_names_file(path) == ["田中", "müller"]
    code = ("import sys; from swftools.privacy.audit import read_names_file; "
            "print(','.join(read_names_file(sys.argv[1])).encode('utf-8').hex())")
    assert text_under_c_locale(code, str(path)) == "田中,müller"
