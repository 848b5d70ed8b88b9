"""The sacct field grammars: parse(format(x)) == x, every Slurm form, and bad text refused."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools.formats.slurm import fields as fx
from swftools.formats.slurm.reader import HOSTLIST_PATTERN

from .strategies import hostlists, slurm_timelimit_texts, slurm_tres

seconds = st.integers(0, 400 * 86_400)


@given(seconds)
def test_duration_round_trip(value):
    text = fx.format_duration(value)
    assert fx.parse_duration(text) == value
    assert ("-" in text) == (value >= 86_400)


@given(st.none() | seconds)
def test_timelimit_round_trip(value):
    assert fx.parse_timelimit(fx.format_timelimit(value)) == value


@given(slurm_timelimit_texts())
def test_every_timelimit_form(case):
    text, expected = case
    assert fx.parse_timelimit(text) == expected


def test_empty_timelimit_is_unknown():
    """Issue 24: XDMoD's real dumps leave Timelimit empty: unknown, not an error."""
    assert fx.parse_timelimit("") is None


@pytest.mark.parametrize("text", ["1-", "1-2:3:4:5", "-5", "1:2:3:4", "10:60", "1-24:00:00",
                                  "1:00:61", "unlimited", "INFINITE", "1.5", "١٢"])
def test_bad_timelimits(text):
    with pytest.raises(ValueError):
        fx.parse_timelimit(text)


@given(st.integers(0, 10 ** 10))
def test_time_round_trip(naive):
    assert fx.parse_time(fx.format_time(naive)) == naive


@pytest.mark.parametrize("text", ["2023-02-30T00:00:00", "2023-01-01 00:00:00", "2023-1-01T00:00:00",
                                  "2023-01-01T24:00:00", "yesterday"])
def test_bad_times(text):
    with pytest.raises(ValueError):
        fx.parse_time(text)


@pytest.mark.parametrize("text", ["Unknown", "None", ""])
def test_unknown_times(text):
    assert fx.parse_time(text) is None


@given(slurm_tres())
def test_tres_round_trip(tres):
    assert fx.parse_tres(fx.format_tres(tres)) == tres


@given(slurm_tres())
def test_gpu_count_prefers_plain_then_sums_typed(tres):
    count = fx.tres_count(tres, "gres/gpu")
    typed = [int(v) for k, v in tres.items() if k.startswith("gres/gpu:")]
    if "gres/gpu" in tres:
        assert count == int(tres["gres/gpu"])
    elif typed:
        assert count == sum(typed)
    else:
        assert count is None


@pytest.mark.parametrize("text", ["cpu", "cpu=", "cpu=4,,mem=1G", "cpu=4,cpu=4", "cpu=4G",
                                  "mem=1X", "CPU=4", "cpu=4 ,mem=1G"])
def test_bad_tres(text):
    with pytest.raises(ValueError):
        fx.parse_tres(text)


@given(st.integers(0, 2 ** 40))
def test_memory_round_trip(kb):
    assert fx.memory_kb(fx.format_memory(kb)) == kb


def test_memory_units():
    assert fx.memory_kb("4000") == 4000 * 1024  # no suffix: MiB
    assert fx.memory_kb("16G") == 16 * 1024 ** 2
    assert fx.memory_kb("1.50G") == 1_572_864
    assert fx.memory_kb("7K") == 7


@given(hostlists())
def test_hostlist_round_trip(hosts):
    text = fx.compress_hostlist(hosts)
    assert fx.expand_hostlist(text) == hosts
    assert re.search(HOSTLIST_PATTERN, text), text  # the reader's fast check agrees


def test_hostlist_forms():
    assert fx.expand_hostlist("node[01-04,07]") == ["node01", "node02", "node03", "node04", "node07"]
    assert fx.expand_hostlist("gpu[1-2]-[a,b]") == ["gpu1-a", "gpu1-b", "gpu2-a", "gpu2-b"]
    assert fx.expand_hostlist("a1,b[3-4],c") == ["a1", "b3", "b4", "c"]
    assert fx.expand_hostlist("None assigned") == []
    assert fx.compress_hostlist(["node01", "node02", "node03", "node07"]) == "node[01-03,07]"


@pytest.mark.parametrize("text", ["node[01-", "node[4-1]", "node[[1]]", "node]1[", "no de1", "n[1-a]"])
def test_bad_hostlists(text):
    with pytest.raises(ValueError):
        fx.expand_hostlist(text)
    # the reader's per-row check is syntactic: ranges are only expanded to count nodes
    syntactic = text not in ("node[4-1]", "n[1-a]")
    assert bool(re.search(HOSTLIST_PATTERN, text)) != syntactic


@given(st.sampled_from(["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"]),
       st.none() | st.integers(0, 10 ** 6))
def test_state_round_trip(name, uid):
    if uid is not None and name != "CANCELLED":
        return
    assert fx.parse_state(fx.format_state(name, uid)) == (name, uid)


@pytest.mark.parametrize("text", ["completed", "COMPLETED by 3", "CANCELLED by", "CANCELLED+", ""])
def test_bad_states(text):
    with pytest.raises(ValueError):
        fx.parse_state(text)


@given(st.integers(0, 255), st.integers(0, 64))
def test_exitcode_round_trip(code, signal):
    assert fx.parse_exitcode(fx.format_exitcode((code, signal))) == (code, signal)
