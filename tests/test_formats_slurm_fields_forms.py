"""Every form of the sacct field grammars at its boundaries, and the message each refusal gives
(the reader shows it as what was expected)."""

from __future__ import annotations

import pytest

from swftools.formats.slurm import fields as fx


def _refused(parse, text, expected: str) -> None:
    with pytest.raises(ValueError) as info:
        parse(text)
    assert str(info.value) == expected


# ------------------------------------------------------------------------- times, durations

def test_time_forms_and_refusals():
    assert fx.parse_time("1970-01-02T00:00:01") == 86_401
    assert fx.format_time(None) == "Unknown" and fx.format_time(86_401) == "1970-01-02T00:00:01"
    for text in ("yesterday", "2023-02-30T00:00:00"):
        _refused(fx.parse_time, text, fx.TIME_EXPECTED)


@pytest.mark.parametrize("text,seconds", [
    ("0:00:00", 0), ("23:59:59", 86_399), ("1-00:00:00", 86_400), ("12-01:02:03", 12 * 86_400 + 3723),
])
def test_duration_forms(text, seconds):
    assert fx.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["24:00:00", "1-24:00:00", "1:60:00", "00:00:60", "1:00", "x"])
def test_bad_durations(text):
    _refused(fx.parse_duration, text, fx.DURATION_EXPECTED)


@pytest.mark.parametrize("seconds,text", [(0, "00:00:00"), (86_399, "23:59:59"),
                                          (86_400, "1-00:00:00"), (90_061, "1-01:01:01")])
def test_duration_text(seconds, text):
    assert fx.format_duration(seconds) == text


@pytest.mark.parametrize("text,seconds", [
    ("UNLIMITED", None), ("Partition_Limit", None), ("", None),
    ("90", 5400), ("1:59", 119), ("2:59:59", 10_799), ("2-3", 51 * 3600),
    ("2-3:04", (51 * 60 + 4) * 60), ("1-23:59:59", 172_799), ("0-0:0:0", 0),
])
def test_timelimit_forms(text, seconds):
    assert fx.parse_timelimit(text) == seconds


@pytest.mark.parametrize("text", ["1:60", "1:60:00", "1:00:60", "1-24", "1-0:60", "1-0:0:60",
                                  "1-1:1:1:1", "x-1", "1:2:3:4", "1-", "UNLIMITED "])
def test_timelimit_refusals(text):
    _refused(fx.parse_timelimit, text, fx.TIMELIMIT_EXPECTED)


def test_timelimit_text():
    assert fx.format_timelimit(None) == "UNLIMITED" and fx.format_timelimit(61) == "00:01:01"


# ------------------------------------------------------------------------- TRES, memory

def test_tres_sizes_only_on_size_keys():
    assert fx.parse_tres("mem=1.5G,vmem=2T,fs/disk=3M,cpu=2") == {
        "mem": "1.5G", "vmem": "2T", "fs/disk": "3M", "cpu": "2"}
    assert fx.parse_tres("gres/gpu:a100=2") == {"gres/gpu:a100": "2"}
    for text in ("cpu=4G", "node=1K", "cpu=1,cpu=1", "x"):
        _refused(fx.parse_tres, text, fx.TRES_EXPECTED)


def test_tres_counts():
    tres = {"gres/gpu:a100": "2", "gres/gpu:v100": "3", "gres/gpux": "7", "cpu": "4"}
    assert fx.tres_count(tres, "gres/gpu") == 5
    assert fx.tres_count(tres, "cpu") == 4 and fx.tres_count(tres, "node") is None
    assert fx.tres_count({"gres/gpu": "1", "gres/gpu:a": "5"}, "gres/gpu") == 1
    _refused(lambda t: fx.tres_count(t, "cpu"), {"cpu": "1.5"},
             fx.TRES_EXPECTED + " (a whole count)")


@pytest.mark.parametrize("value,kb", [("7K", 7), ("1.5", 1536), ("1500M", 1_536_000),
                                      ("2G", 2 * 1024 ** 2), ("3T", 3 * 1024 ** 3),
                                      ("2P", 2 * 1024 ** 4), ("0.0001K", 0)])
def test_memory_sizes(value, kb):
    assert fx.memory_kb(value) == kb


def test_memory_refusal_and_text():
    _refused(fx.memory_kb, "1X", fx.TRES_EXPECTED)
    assert [fx.format_memory(kb) for kb in (0, 1023, 1024, 1536, 1024 ** 2, 1024 ** 3,
                                            5 * 1024 ** 4)] == \
        ["0K", "1023K", "1M", "1536K", "1G", "1T", "5120T"]


# ------------------------------------------------------------------------- GRES

@pytest.mark.parametrize("text,gpus", [
    ("", None), ("gpu", 1), ("gpu:2", 2), ("gres/gpu:2", 2), ("gpu:v100:2", 2), ("gpu:v100", 1),
    ("gpu=3", 3), ("gpu:2(IDX:0-1)", 2), ("gpu:2(IDX:0,1),mps:100", 2), ("mps:100", 0),
    ("gpu:1,gpu:a100:2,shard:8", 3), ("gpu:12", 12), ("gpu:2:3", 3),
])
def test_gres_forms(text, gpus):
    assert fx.gres_gpus(text) == gpus


@pytest.mark.parametrize("text", ["gpu:2:3:4", "gpu:2(IDX:0", "gpu 2", "gpu:2,,mps"])
def test_gres_refusals(text):
    _refused(fx.gres_gpus, text, fx.GRES_EXPECTED)


# ------------------------------------------------------------------------- host lists

@pytest.mark.parametrize("text,hosts", [
    ("", []), ("n[a]", ["na"]), ("n[1,03-04]", ["n1", "n03", "n04"]), ("n[9-10]", ["n9", "n10"]),
    ("a[1-2]b,c", ["a1b", "a2b", "c"]), ("x-1.y_z", ["x-1.y_z"]), ("GPU-A[3-3]", ["GPU-A3"]),
])
def test_hostlist_more_forms(text, hosts):
    assert fx.expand_hostlist(text) == hosts
    assert fx.count_hosts(text) == len(hosts)


@pytest.mark.parametrize("text", ["a,,b", "a,", "n[1]]", "n[1", "n[[1]]", "n[a-b]", "n[]",
                                  "n[1-a]", "n[2-1]", "n[1-2-3]", "no de"])
def test_hostlist_refusals(text):
    _refused(fx.expand_hostlist, text, fx.HOSTLIST_EXPECTED)


@pytest.mark.parametrize("hosts,text", [
    ([], "None assigned"), (["a"], "a"), (["n1", "n3"], "n[1,3]"), (["n2", "n1"], "n2,n1"),
    (["n01", "n1"], "n01,n1"), (["n1", "n2", "m1"], "n[1-2],m1"), (["n1", "x", "n2"], "n1,x,n2"),
    (["n1", "n2", "n3", "n5", "n6", "n8"], "n[1-3,5-6,8]"), (["a[1]"], "a[1]"),
    (["n1", "n1"], "n1,n1"), (["n09", "n10"], "n[09-10]"), (["7", "8"], "[7-8]"), (["a[1]2", "a[1]3"], "a[1]2,a[1]3"),
])
def test_hostlist_compression(hosts, text):
    assert fx.compress_hostlist(hosts) == text


# ------------------------------------------------------------------------- states, exit codes

def test_state_forms_and_refusals():
    assert fx.parse_state("CANCELLED by 0") == ("CANCELLED", 0)
    assert fx.parse_state("OUT_OF_MEMORY") == ("OUT_OF_MEMORY", None)
    assert fx.format_state("CANCELLED", 0) == "CANCELLED by 0"
    for text in ("FAILED by 1", "cancelled"):
        _refused(fx.parse_state, text, "a sacct state such as COMPLETED or CANCELLED by 1234")


def test_exit_code_forms_and_refusals():
    assert fx.parse_exitcode("12:9") == (12, 9) and fx.format_exitcode((12, 9)) == "12:9"
    for text in ("0", "0:x", "-1:0"):
        _refused(fx.parse_exitcode, text, fx.EXITCODE_EXPECTED)
