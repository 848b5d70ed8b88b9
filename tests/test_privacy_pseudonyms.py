"""Anonymization: keyed pseudonyms, key loading, table -> table transform, mapping file, CLI."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import stat
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.privacy import pseudonyms as an
from swftools import table as jt
from swftools.errors import InputError, UsageError

from .strategies import EPOCH_2017, aaic_jobs, anon_keys, raw_user_names, shuffled_rows

KEY = b"0123456789abcdef-test-key-for-swftools"  # 32+ bytes (swftools.privacy.keys)
OTHER_KEY = b"fedcba9876543210-other-key-for-swftools"


def _table(users, groups=None, **extra):
    n = len(users)
    cols = {"job_id": list(range(1, n + 1)), "user": users,
            "group": groups if groups is not None else ["g"] * n,
            "queue": ["Normal"] * n, "nodes": [1] * n, "gpus_per_node": [1] * n,
            "submit_time": [EPOCH_2017 + 60 * i for i in range(n)]}
    cols.update(extra)
    return jt.from_columns(cols, {"time_zone": "Asia/Tokyo", "source_file": "raw.csv"})


# --- pseudonyms ----------------------------------------------------------------------------

def test_pseudonym_follows_the_documented_construction():
    digest = hmac.new(KEY, b"user\x00alice", hashlib.sha256).hexdigest()
    assert an.pseudonym("alice", KEY, "user") == "u" + digest[:16]
    digest = hmac.new(KEY, b"group\x00lab", hashlib.sha256).hexdigest()
    assert an.pseudonym("lab", KEY, "group") == "g" + digest[:16]


def test_pseudonym_is_stable_across_versions():
    # Golden values: changing them breaks the promise that re-releases line up.
    assert an.pseudonym("tanaka", b"swftools-golden-key-0001", "user") == "u23d0da029de21906"
    assert an.pseudonym("tanaka", b"swftools-golden-key-0001", "group") == "g14cebd1f3cc47822"


@given(raw_user_names, anon_keys)
def test_pseudonym_is_deterministic_and_well_formed(name, key):
    p = an.pseudonym(name, key, "user")
    assert p == an.pseudonym(name, key, "user")
    assert re.fullmatch(r"u[0-9a-f]{16}", p)
    assert re.fullmatch(r"g[0-9a-f]{16}", an.pseudonym(name, key, "group"))


@given(raw_user_names, anon_keys, anon_keys)
def test_pseudonyms_differ_between_keys(name, key1, key2):
    # HMAC pads short keys with zero bytes: keys differing only in trailing NULs are one key
    if key1.rstrip(b"\x00") != key2.rstrip(b"\x00"):
        assert an.pseudonym(name, key1, "user") != an.pseudonym(name, key2, "user")


@given(st.sets(raw_user_names, max_size=200), anon_keys)
def test_pseudonyms_are_injective_on_name_sets(name_set, key):
    for namespace in ("user", "group"):
        assert len({an.pseudonym(n, key, namespace) for n in name_set}) == len(name_set)


@given(raw_user_names)
def test_namespaces_are_separate(name):
    assert an.pseudonym(name, KEY, "user")[1:] != an.pseudonym(name, KEY, "group")[1:]


def test_unknown_namespace_is_refused():
    with pytest.raises(ValueError) as info:
        an.pseudonym("x", KEY, "queue")
    assert str(info.value) == "unknown namespace 'queue' (expected one of user, group, host)"


def test_a_name_with_an_undecodable_byte_has_a_pseudonym():
    """A raw byte kept as a lone surrogate (surrogateescape) is hashed as its UTF-8 form."""
    name = b"al\xe9x".decode("utf-8", "surrogateescape")
    digest = hmac.new(KEY, b"user\x00" + name.encode("utf-8", "surrogatepass"), hashlib.sha256)
    assert an.pseudonym(name, KEY, "user") == "u" + digest.hexdigest()[:16]


# --- key loading ---------------------------------------------------------------------------

def test_key_file_is_read_and_trimmed(tmp_path):
    path = tmp_path / "anon.key"
    path.write_bytes(KEY + b"\n")
    assert an.load_key(path) == KEY


def test_missing_key_file_is_a_clear_error(tmp_path):
    with pytest.raises(InputError) as err:
        an.load_key(tmp_path / "nope.key")
    assert str(err.value).startswith(f"{tmp_path / 'nope.key'}: key file does not exist")


@pytest.mark.parametrize("content", [b"", b"\n", b"  \r\n"])
def test_empty_key_file_is_a_clear_error(tmp_path, content):
    path = tmp_path / "anon.key"
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"anon\.key: the anonymization key is empty"):
        an.load_key(path)


def test_short_key_is_refused(tmp_path):
    path = tmp_path / "anon.key"
    path.write_bytes(b"secret")
    with pytest.raises(InputError, match=r"too short \(6 bytes, at least 32 needed\)"):
        an.load_key(path)


def test_key_from_environment(monkeypatch):
    monkeypatch.setenv("SWFTOOLS_ANON_KEY", KEY.decode() + "\n")
    assert an.load_key() == KEY
    monkeypatch.setenv("SWFTOOLS_ANON_KEY", "")
    with pytest.raises(InputError, match="environment variable SWFTOOLS_ANON_KEY"):
        an.load_key()


def test_no_key_is_refused(monkeypatch):
    monkeypatch.delenv("SWFTOOLS_ANON_KEY", raising=False)
    with pytest.raises(UsageError, match="no anonymization key"):
        an.load_key()


def test_ephemeral_key_warns_and_is_random(monkeypatch):
    monkeypatch.delenv("SWFTOOLS_ANON_KEY", raising=False)
    warnings: list[str] = []
    first = an.load_key(ephemeral=True, warn=warnings.append)
    second = an.load_key(ephemeral=True, warn=warnings.append)
    assert first != second and len(first) == 32
    assert len(warnings) == 2 and "NOT be stable" in warnings[0]


def test_key_file_and_ephemeral_contradict(tmp_path):
    with pytest.raises(UsageError, match="contradict"):
        an.load_key(tmp_path / "k", ephemeral=True)


# --- the table transform -------------------------------------------------------------------

IDENTIFYING = {"user", "group"}


@given(aaic_jobs())
def test_round_trip_keeps_every_non_identifying_column(table):
    result = an.anonymize(table, KEY)
    out = result.table
    assert out.column_names == table.column_names
    for name in table.column_names:
        if name not in IDENTIFYING:
            assert out.column(name).equals(table.column(name)), name
    # a consistent, injective replacement: the raw column is recoverable only via the mapping
    for column in IDENTIFYING:
        raw, new = table.column(column).to_pylist(), out.column(column).to_pylist()
        pairs = set(zip(raw, new))
        assert len(pairs) == len(set(raw)) == len(set(new))
        assert all(p == an.pseudonym(r, KEY, column) for r, p in pairs)
    assert {(e.namespace, e.name, e.pseudonym) for e in result.mapping} == {
        (c, r, p) for c in IDENTIFYING
        for r, p in zip(table.column(c).to_pylist(), out.column(c).to_pylist())}


@given(aaic_jobs(min_size=1), st.integers(-520, 520))
def test_time_shift_keeps_weekday_and_time_of_day(table, weeks):
    out = an.anonymize(table, KEY, time_shift_weeks=weeks).table
    tokyo = ZoneInfo("Asia/Tokyo")
    for column in an.TIME_COLUMNS:
        for before, after in zip(table.column(column).to_pylist(), out.column(column).to_pylist()):
            assert after - before == weeks * 7 * 86400
            b = datetime.fromtimestamp(before, timezone.utc).astimezone(tokyo)
            a = datetime.fromtimestamp(after, timezone.utc).astimezone(tokyo)
            assert (a.weekday(), a.time()) == (b.weekday(), b.time())
    for column in ("wait_s", "walltime_s", "requested_walltime_s"):
        assert out.column(column).equals(table.column(column))
    meta = jt.get_metadata(out)["anonymization"]
    assert meta["time_shifted"] is (weeks != 0)
    assert set(meta) == {"method", "pseudonymized_columns", "dense_ids",
                         "time_shifted", "dropped_columns", "kept_columns"}


def test_time_shift_must_be_whole_weeks():
    with pytest.raises(UsageError, match="whole number of weeks"):
        an.anonymize(_table(["a"]), KEY, time_shift_weeks=1.5)


def test_time_shift_moves_swf_header_times_and_drops_dates():
    meta = {"source_format": "swf", "swf_time_origin": 1000,
            "swf_header": [["Version", "2.2"], ["UnixStartTime", "1000"],
                           ["StartTime", "Thu Jan 01 1970"], ["Note", "from alice's account"]],
            "swf_header_lines": ["; Version: 2.2", "; UnixStartTime: 1000"]}
    table = jt.from_columns({"job_id": [1], "user": ["alice"], "submit_time": [1000]}, meta)
    result = an.anonymize(table, KEY, time_shift_weeks=2)
    out = jt.get_metadata(result.table)
    shift = 2 * an.WEEK_S
    assert out["swf_header"] == [["Version", "2.2"], ["UnixStartTime", str(1000 + shift)]]
    assert out["swf_time_origin"] == 1000 + shift
    assert "swf_header_lines" not in out
    assert any("'Note'" in n and "raw user" in n for n in result.notes)
    assert any("'StartTime'" in n for n in result.notes)


def test_metadata_naming_a_raw_user_is_dropped():
    table = jt.from_columns({"job_id": [1], "user": ["kobayashi"]},
                            {"source_file": "kobayashi-jobs.csv", "time_zone": "Asia/Tokyo"})
    result = an.anonymize(table, KEY)
    meta = jt.get_metadata(result.table)
    assert "source_file" not in meta and meta["time_zone"] == "Asia/Tokyo"
    assert "kobayashi" not in json.dumps(meta)


def test_numeric_swf_ids_do_not_scrub_the_header():
    header = [["Version", "2.2"], ["MaxNodes", "128"], ["MaxProcs", "1"]]
    table = jt.from_columns({"job_id": [1, 2], "user": ["1", "128"]}, {"swf_header": header})
    meta = jt.get_metadata(an.anonymize(table, KEY).table)
    assert meta["swf_header"] == header


def test_free_text_columns_are_dropped_unless_kept():
    base = _table(["a", "b"])
    table = (base.append_column("job_name", pa.array(["train-resnet", "alice-test"]))
             .append_column("exec_host", pa.array(["aaic-n01", "aaic-n02"]))
             .append_column("energy_j", pa.array([10.5, 20.0])))
    result = an.anonymize(table, KEY)
    assert result.table.column_names == base.column_names + ["energy_j"]
    assert result.notes[0] == "dropped free-text columns: job_name, exec_host"
    assert jt.get_metadata(result.table)["anonymization"]["dropped_columns"] == [
        "job_name", "exec_host"]
    kept = an.anonymize(table, KEY, keep_columns=["job_name"])
    assert kept.table.column("job_name").to_pylist() == ["train-resnet", "alice-test"]
    assert "exec_host" not in kept.table.column_names


@pytest.mark.parametrize("column, message", [("user", "always pseudonymized"),
                                             ("queue", "not a droppable text column"),
                                             ("nope", "not a droppable text column")])
def test_keep_refuses_what_it_cannot_keep(column, message):
    with pytest.raises(UsageError, match=message):
        an.anonymize(_table(["a"]), KEY, keep_columns=[column])


def test_table_without_user_column_is_refused():
    table = pa.table({"job_id": [1, 2], "queue": ["Normal", "Short"]})
    with pytest.raises(InputError, match="no user column"):
        an.anonymize(table, KEY)


def test_collision_among_observed_names_is_an_error(monkeypatch):
    monkeypatch.setattr(an, "PSEUDONYM_HEX_DIGITS", 1)  # 16 possible pseudonyms
    with pytest.raises(InputError, match=r"pseudonym collision: u[0-9a-f] is shared by"):
        an.anonymize(_table([f"user{i}" for i in range(17)]), KEY)


def test_nulls_stay_null():
    out = an.anonymize(_table(["a", None, "a"], groups=[None, None, "x"]), KEY).table
    assert out.column("user").null_count == 1 and out.column("group").null_count == 2


@given(aaic_jobs(min_size=1))
def test_dense_ids_number_by_first_appearance_in_submit_order(table):
    result = an.anonymize(table, KEY, dense_ids=True)
    out = result.table
    order = pc.sort_indices(out, sort_keys=[("submit_time", "ascending"),
                                            ("job_id", "ascending")])
    for column in IDENTIFYING:
        seen: list[str] = []
        for value in pc.take(out.column(column), order).to_pylist():
            if value not in seen:
                seen.append(value)
        assert seen == [str(i) for i in range(1, len(seen) + 1)]
        # the numbering is a function of the pseudonyms, recorded in the mapping
        by_pseudonym = {e.pseudonym: e.dense_id for e in result.mapping if e.namespace == column}
        pseudonymized = an.anonymize(table, KEY).table.column(column).to_pylist()
        assert [str(by_pseudonym[p]) for p in pseudonymized] == out.column(column).to_pylist()


@given(aaic_jobs())
def test_anonymize_is_deterministic(table):
    a = an.anonymize(table, KEY, time_shift_weeks=3, dense_ids=True)
    b = an.anonymize(table, KEY, time_shift_weeks=3, dense_ids=True)
    assert jt.equal(a.table, b.table, metadata=True) and a.mapping == b.mapping


def test_key_never_appears_in_the_output():
    table = _table(["alice", "bob"])
    meta = json.dumps(jt.get_metadata(an.anonymize(table, KEY).table))
    assert KEY.decode() not in meta and KEY.hex() not in meta


# --- mapping file --------------------------------------------------------------------------

def test_mapping_file_is_private_and_complete(tmp_path):
    result = an.anonymize(_table(["bob", "alice"], groups=["lab", "lab"]), KEY, dense_ids=True)
    warnings: list[str] = []
    path = an.write_mapping(result.mapping, tmp_path / "mapping.csv", warn=warnings.append)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    lines = path.read_text().splitlines()
    assert lines[0] == "namespace,name,pseudonym,dense_id"
    assert lines[1:] == [f"group,lab,{an.pseudonym('lab', KEY, 'group')},1",
                         f"user,alice,{an.pseudonym('alice', KEY, 'user')},2",
                         f"user,bob,{an.pseudonym('bob', KEY, 'user')},1"]
    assert "PRIVATE" in warnings[0] and "never publish" in warnings[0]
    with pytest.raises(UsageError, match="already exists"):
        an.write_mapping(result.mapping, path, warn=warnings.append)


# --- CLI -----------------------------------------------------------------------------------

RAW_LOG = """\
job_id,user,group,queue,nodes,gpus,walltime_req,termcode,submit,start,finish,wait,walltime
1,tanaka,lab-a,Normal,1,1,01:00:00,0,2017-07-14 09:00:00,2017-07-14 09:01:00,2017-07-14 09:31:00,00:01:00,00:30:00
2,sato,lab-b,Short,1,1,00:30:00,0,2017-07-14 09:05:00,2017-07-14 09:05:00,2017-07-14 09:15:00,00:00:00,00:10:00
3,tanaka,lab-a,Long,2,8,72:00:00,1,2017-07-14 10:00:00,2017-07-14 11:00:00,2017-07-14 12:00:00,01:00:00,01:00:00
"""


@pytest.fixture
def cli(monkeypatch):
    from typer.testing import CliRunner

    from swftools.cli import app

    monkeypatch.delenv("SWFTOOLS_ANON_KEY", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def raw_log(tmp_path):
    path = tmp_path / "raw.csv"
    path.write_text(RAW_LOG)
    key = tmp_path / "anon.key"
    key.write_bytes(KEY + b"\n")
    key.chmod(0o600)  # else every command warns that others can read it
    return path, key


def test_cli_anonymizes_and_the_audit_is_clean(cli, raw_log, tmp_path):
    raw, key = raw_log
    mapping = tmp_path / "mapping.csv"
    result = cli("anonymize", raw, "--out", tmp_path / "pkg", "--key-file", key, "--mapping-out", mapping,
                 "--time-shift-weeks", "4")
    assert result.exit_code == 0, result.output
    assert "PRIVATE" in result.stderr and "times shifted by whole weeks" in result.stderr
    assert stat.S_IMODE(os.stat(mapping).st_mode) == 0o600
    assert f"user,tanaka,{an.pseudonym('tanaka', KEY, 'user')}," in mapping.read_text()
    audited = cli("audit", tmp_path / "pkg", "--raw", raw, "--key-file", key)
    assert audited.exit_code == 0, audited.output
    assert "CLEAN" in audited.stdout and "re-identification report" in audited.stdout


def test_cli_output_is_deterministic(cli, raw_log, tmp_path):
    raw, key = raw_log
    for name in ("a.swf", "b.swf"):
        assert cli("anonymize", raw, "--out", tmp_path / name, "--key-file", key, "--dense-ids",
                   "--time-shift-weeks", "-3").exit_code == 0
    assert (tmp_path / "a.swf").read_bytes() == (tmp_path / "b.swf").read_bytes()


def test_cli_without_key_refuses_and_writes_nothing(cli, raw_log, tmp_path):
    raw, _ = raw_log
    result = cli("anonymize", raw, "--out", tmp_path / "out.swf")
    assert result.exit_code == 2 and "no anonymization key" in result.stderr
    assert not (tmp_path / "out.swf").exists()


@pytest.mark.parametrize("content, message", [(None, "key file does not exist"),
                                              (b"", "the anonymization key is empty")])
def test_cli_bad_key_file_writes_nothing(cli, raw_log, tmp_path, content, message):
    raw, _ = raw_log
    key = tmp_path / "bad.key"
    if content is not None:
        key.write_bytes(content)
    result = cli("anonymize", raw, "--out", tmp_path / "out.swf", "--key-file", key)
    assert result.exit_code == 1
    assert f"swftools: error: {key}: {message}" in result.stderr
    assert not (tmp_path / "out.swf").exists()


def test_cli_raw_log_without_user_column_writes_nothing(cli, raw_log, tmp_path):
    _, key = raw_log
    raw = tmp_path / "nouser.csv"
    raw.write_text("\n".join(",".join(f for i, f in enumerate(line.split(",")) if i != 1)
                             for line in RAW_LOG.splitlines()) + "\n")
    mapping = tmp_path / "mapping.csv"
    result = cli("anonymize", raw, "--out", tmp_path / "out.swf", "--key-file", key,
                 "--mapping-out", mapping)
    assert result.exit_code == 1 and "user" in result.stderr and "nouser.csv" in result.stderr
    assert not (tmp_path / "out.swf").exists() and not mapping.exists()


def test_cli_ephemeral_key_warns_loudly(cli, raw_log, tmp_path):
    raw, _ = raw_log
    result = cli("anonymize", raw, "--out", tmp_path / "out.swf", "--ephemeral-key")
    assert result.exit_code == 0 and "EPHEMERAL" in result.stderr


def test_cli_refuses_mapping_inside_output_and_existing_output(cli, raw_log, tmp_path):
    raw, key = raw_log
    result = cli("anonymize", raw, "--out", tmp_path / "pkg", "--key-file", key,
                 "--mapping-out", tmp_path / "pkg" / "mapping.csv")
    assert result.exit_code == 2 and "must not be written" in result.stderr
    (tmp_path / "out.swf").write_text("keep me")
    result = cli("anonymize", raw, "--out", tmp_path / "out.swf", "--key-file", key)
    assert result.exit_code == 2 and (tmp_path / "out.swf").read_text() == "keep me"


# --- real trace ----------------------------------------------------------------------------

@pytest.mark.parametrize("weeks", [0, 6])
def test_real_swf_trace_survives_anonymization(tmp_path, weeks):
    from swftools.formats import swf

    from .conftest import trace_path

    table = swf.read(trace_path("NASA-iPSC-1993-3-excerpt228.swf.gz"))
    result = an.anonymize(table, KEY, time_shift_weeks=weeks, dense_ids=True)
    swf.write(result.table, tmp_path / "out.swf")
    back = swf.read(tmp_path / "out.swf")
    for name in table.column_names:
        if name in an.TIME_COLUMNS:
            expected = pc.add(table.column(name), weeks * an.WEEK_S)
            assert back.column(name).equals(expected), name
        elif name not in IDENTIFYING:
            assert back.column(name).equals(table.column(name)), name
    assert back.column("user").equals(result.table.column("user"))
    header = dict((k, v) for k, v in jt.get_metadata(back)["swf_header"])
    original = dict((k, v) for k, v in jt.get_metadata(table)["swf_header"])
    assert int(header["UnixStartTime"]) == int(original["UnixStartTime"]) + weeks * an.WEEK_S
    assert ("StartTime" in header) == (weeks == 0 and "StartTime" in original)


def test_extra_timestamp_columns_move_with_the_shift():
    table = _table(["a"]).append_column(
        "sampled_at", pa.array([1_500_000_000_000], pa.timestamp("ms", tz="UTC")))
    out = an.anonymize(table, KEY, time_shift_weeks=-2).table
    assert out.column("sampled_at").cast(pa.int64()).to_pylist() == [
        1_500_000_000_000 - 2 * an.WEEK_S * 1000]


@given(st.data())
def test_dense_numbering_follows_submit_order_not_file_order(data):
    """Numbers go by first appearance in (submit, job id) order, whatever the rows' order."""
    table = data.draw(aaic_jobs(min_size=1))
    shuffled = data.draw(shuffled_rows(table))
    _, want = an.dense_numbering(table)
    _, got = an.dense_numbering(shuffled)
    assert got == want
    first = table.column("user")[0].as_py()  # the earliest job's user is number 1
    assert want["user"][first] == 1

