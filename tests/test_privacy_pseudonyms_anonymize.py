"""Anonymization in detail (``swftools.privacy.pseudonyms``): which columns hold free text, times
of every unit, the dense numbering's order, collisions, the metadata it keeps and says, the
mapping file's bytes; the cases mutation testing found untested."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.privacy import pseudonyms as an

from .strategies import EPOCH_2017
from .test_privacy_pseudonyms import KEY, _table

# --- what counts as free text, times of every unit, the numbering's order ---------------------

@pytest.mark.parametrize("dtype, text", [
    (pa.large_string(), True), (pa.binary(), True), (pa.large_binary(), True),
    (pa.string_view(), True), (pa.dictionary(pa.int32(), pa.string()), True),
    (pa.list_(pa.string()), True), (pa.large_list(pa.string()), True),
    (pa.list_(pa.string(), 2), True), (pa.list_(pa.int64()), False),
    (pa.struct([("n", pa.int64()), ("host", pa.string())]), True),
    (pa.struct([("a", pa.int64()), ("b", pa.float64())]), False),
    (pa.map_(pa.string(), pa.int64()), True), (pa.map_(pa.int64(), pa.string()), True),
    (pa.map_(pa.int64(), pa.int64()), False), (pa.float64(), False)])
def test_every_column_that_can_hold_text_is_dropped(dtype, text):
    out = an.anonymize(_table(["a"]).append_column("extra", pa.nulls(1, dtype)), KEY)
    assert ("extra" not in out.table.column_names) == text
    assert ("dropped free-text columns: extra" in out.notes) == text


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_timestamp_columns_of_every_unit_move_by_whole_weeks(unit):
    scale = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    table = _table(["a"]).append_column(
        "sampled_at", pa.array([1_500_000_000 * scale], pa.timestamp(unit)))
    out = an.anonymize(table, KEY, time_shift_weeks=3).table
    assert out.column("sampled_at").cast(pa.int64()).to_pylist() == [
        (1_500_000_000 + 3 * an.WEEK_S) * scale]
    assert out.column("submit_time").to_pylist() == [EPOCH_2017 + 3 * an.WEEK_S]


def test_dense_numbering_goes_by_submit_time_then_job_id():
    table = _table(["b", "a", "c"], submit_time=[30, 10, 10], job_id=[1, 3, 2])
    _, numbers = an.dense_numbering(table)
    assert numbers["user"] == {"c": 1, "a": 2, "b": 3}
    by_id = table.drop_columns(["submit_time"])  # no submit times: job ids
    assert an.dense_numbering(by_id)[1]["user"] == {"b": 1, "c": 2, "a": 3}
    bare = pa.table({"user": ["b", "a", "b"]})  # neither: row order
    renumbered, numbers = an.dense_numbering(bare)
    assert numbers == {"user": {"b": 1, "a": 2}}
    assert renumbered.column("user").to_pylist() == ["1", "2", "1"]


def test_raw_names_lists_each_observed_name_once():
    result = an.AnonymizeResult(
        pa.table({}), [an.MappingEntry("user", "alice", "u1"), an.MappingEntry("host", "n1", "h1")],
        raw_strings={"host": ["n1", "n2"], "job": ["train"]})
    assert result.raw_names() == {"user": ["alice"], "host": ["n1", "n2"], "job": ["train"]}


def test_the_mapping_bytes_and_its_warning(tmp_path, capsys):
    result = an.anonymize(_table(["bob"], groups=["lab"]), KEY)
    path = an.write_mapping(result.mapping, tmp_path / "mapping.csv")
    assert path.read_bytes() == (
        "namespace,name,pseudonym,dense_id\n"
        f"group,lab,{an.pseudonym('lab', KEY, 'group')},\n"
        f"user,bob,{an.pseudonym('bob', KEY, 'user')},\n").encode()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == an.MAPPING_WARNING.format(path=path) + "\n"
    assert str(path) in captured.err
    users = [e for e in result.mapping if e.namespace == "user"]
    an.write_mapping(users, path, force=True)  # --force replaces it
    assert b"group,lab" not in path.read_bytes()


def test_a_collision_names_the_smallest_shared_pseudonym_and_how_many_share_it(monkeypatch):
    monkeypatch.setattr(an, "PSEUDONYM_HEX_DIGITS", 1)  # 16 possible pseudonyms
    names = [f"user{i}" for i in range(18)]
    counts: dict[str, int] = {}
    for name in names:
        p = an.pseudonym(name, KEY, "user")
        counts[p] = counts.get(p, 0) + 1
    shared = sorted(p for p, c in counts.items() if c > 1)
    # the case is one where a wrong count or a wrong pick shows: the smallest pseudonym is
    # nobody else's, the first shared one has 2 names and the next one more
    assert counts[min(counts)] == 1 and counts[shared[0]] == 2 < counts[shared[1]]
    with pytest.raises(InputError) as info:
        an.anonymize(_table(names), KEY)
    error = info.value
    assert (error.path, error.field, error.expected) == (
        "raw.csv", "user", "distinct pseudonyms; use another key")
    assert error.message == f"pseudonym collision: {shared[0]} is shared by 2 different user names"


def test_errors_name_the_source_file_or_the_input_table():
    with pytest.raises(InputError) as info:
        an.anonymize(pa.table({"job_id": [1]}), KEY)
    assert (info.value.path, info.value.field, info.value.expected) == (
        "input table", "user", "a job table with a 'user' column")
    assert info.value.message == "no user column: cannot anonymize a table without users"
    named = jt.with_metadata(pa.table({"job_id": [1]}), {"source_file": "raw.swf"})
    with pytest.raises(InputError) as info:
        an.anonymize(named, KEY)
    assert info.value.path == "raw.swf"


def test_dense_numbering_skips_a_missing_column_and_numbers_the_rest():
    table = _table(["b", "a"], groups=["y", "x"]).drop_columns(["user"])
    _, numbers = an.dense_numbering(table)
    assert numbers == {"group": {"y": 1, "x": 2}}


@pytest.mark.parametrize("key", [KEY[:31], KEY.decode(), None])
def test_anonymize_takes_only_a_key_of_32_bytes_or_more(key):
    with pytest.raises(ValueError, match="^key must be at least 32 bytes$"):
        an.anonymize(_table(["a"]), key)
    assert an.anonymize(_table(["a"]), KEY[:32]).table.num_rows == 1


def test_hosts_and_jobs_named_by_skipped_lines_are_scrubbed_and_reported():
    """A node list and a job name only a skipped line held: the audit gets them, and the host
    is searched for in the rest of the metadata (here the SWF header)."""
    table = _table(["alice"])
    meta = jt.get_metadata(table)
    meta["skipped_lines"] = [
        {"line": 5, "field": "NodeList", "value": "gpuhost07", "message": "bad", "expected": "x"},
        {"line": 6, "field": "JobName", "value": "resnet_lr1", "message": "bad", "expected": "x"}]
    meta["swf_header"] = [["Version", "2.2"], ["Queue", "1 gpuhost07-batch"]]  # kept if clean
    result = an.anonymize(jt.with_metadata(table, meta), KEY)
    assert result.raw_strings == {"host": ["gpuhost07"], "job": ["resnet_lr1"]}
    assert result.raw_names() == {"user": ["alice"], "group": ["g"], "host": ["gpuhost07"],
                                  "job": ["resnet_lr1"]}
    assert "gpuhost07" not in json.dumps(jt.get_metadata(result.table))
    assert "dropped SWF header entry 'Queue': it names a raw user, group or host" in result.notes


def test_alibaba_node_names_become_their_host_pseudonyms():
    from pathlib import Path

    from swftools.formats import alibaba

    pods = Path(__file__).parent / "golden" / "alibaba" / "awkward_pod_list_small.csv"
    result = an.anonymize(alibaba.read(pods), KEY)
    hosts = [e for e in result.mapping if e.namespace == "host"]
    assert hosts and all(e.pseudonym == an.pseudonym(e.name, KEY, "host") for e in hosts)
    meta = json.dumps(jt.get_metadata(result.table))
    assert all(e.pseudonym in meta and e.name not in meta for e in hosts)


def test_the_notes_and_refusals_of_keep():
    table = _table(["a"]).append_column("job_name", pa.array(["x"])).append_column(
        "exec_host", pa.array(["n1"]))
    kept = an.anonymize(table, KEY, keep_columns=["job_name"])
    assert "kept free-text column 'job_name' as requested: audit it before publishing" in kept.notes
    with pytest.raises(UsageError) as info:
        an.anonymize(table, KEY, keep_columns=["queue"])
    assert str(info.value) == ("--keep queue: not a droppable text column of this table "
                               "(droppable: job_name, exec_host)")
    with pytest.raises(UsageError) as info:
        an.anonymize(_table(["a"]), KEY, keep_columns=["queue"])
    assert str(info.value).endswith("(droppable: none)")


@pytest.mark.parametrize("users", [
    pa.array(["b", "a", "b"]).dictionary_encode(), pa.array(["b", "a", "b"], pa.large_string()),
    pa.array([2, 1, 2])])
def test_user_columns_of_other_types_get_the_pseudonyms_of_their_text(users):
    """Dictionary-encoded, large strings, numeric user ids: pseudonyms of the text form."""
    table = _table(["b", "a", "b"])
    table = table.set_column(table.column_names.index("user"), "user", users)
    out = an.anonymize(table, KEY).table.column("user")
    text = [str(v) for v in (users.dictionary_decode() if pa.types.is_dictionary(users.type)
                             else users).to_pylist()]
    assert out.type == pa.string()
    assert out.to_pylist() == [an.pseudonym(v, KEY, "user") for v in text]


def test_a_user_column_without_names_stays_a_string_column():
    out = an.anonymize(_table([None, None], groups=[None, None]), KEY)
    assert out.table.column("user").type == out.table.column("group").type == pa.string()
    assert out.table.column("user").null_count == 2 and out.mapping == []


def test_the_anonymization_metadata_says_what_was_done():
    table = _table(["a"]).drop_columns(["group"]).append_column("job_name", pa.array(["x"]))
    meta = jt.get_metadata(an.anonymize(table, KEY, time_shift_weeks=1,
                                        dense_ids=True).table)["anonymization"]
    assert meta == {"method": "HMAC-SHA256, 16 hex digits", "pseudonymized_columns": ["user"],
                    "dense_ids": True, "time_shifted": True, "dropped_columns": ["job_name"],
                    "kept_columns": []}
