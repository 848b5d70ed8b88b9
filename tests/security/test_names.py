"""Issue 29: a NUL byte (or any control character) in a user, group, queue or node name is
refused by every reader with a located error, by one rule (``swftools.formats.names``)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from swftools.cli import app
from swftools.errors import InputError
from swftools.formats import alibaba, nqsii, pbs, slurm
import numpy as np

from swftools.formats.names import (NAME_EXPECTED, bad_names, check_name, first_bad_name,
                                   has_control)
from tests.strategies import CONTROL_CHARACTERS, sacct_user_names

runner = CliRunner()
FS = settings(max_examples=60, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

SACCT_HEAD = "JobID|JobIDRaw|User|Group|Account|Partition|Submit|Start|End|State|ElapsedRaw|AllocTRES"


def _sacct_line(user: str = "alice", group: str = "lab", account: str = "acct",
                partition: str = "gpu", job: int = 7) -> str:
    return (f"{job}|{job}|{user}|{group}|{account}|{partition}|2020-01-01T00:00:00|"
            f"2020-01-01T00:01:00|2020-01-01T00:02:00|COMPLETED|60|gres/gpu=1,node=1")


def _sacct(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "jobs.sacct"
    path.write_bytes(("\n".join((SACCT_HEAD,) + lines) + "\n").encode("utf-8"))
    return path


def _is_cc(text: str) -> bool:
    return any(unicodedata.category(c) == "Cc" for c in text)


# --- the rule ------------------------------------------------------------------------------

@given(st.text(max_size=20))
def test_the_rule_is_unicode_category_cc(text):
    assert has_control(text) == _is_cc(text)
    bad = first_bad_name(pa.array([text, None]))
    assert bad == (0 if _is_cc(text) else None)


@given(st.lists(st.text(max_size=6) | st.none(), max_size=12))
def test_first_bad_name_is_the_first_row_with_a_control(cells):
    expected = next((i for i, c in enumerate(cells) if c is not None and _is_cc(c)), None)
    assert first_bad_name(pa.array(cells, pa.string())) == expected


_NEAR_CONTROLS = st.sampled_from(["\x00", "\t", "\x1f", " ", "\x7f", "\x80", "\x85", "\x9f",
                                  "\xa0", "\xc2", "\u0100", "\U0001f600", "a"])


@given(st.lists(st.text(_NEAR_CONTROLS, max_size=4) | st.none(), min_size=1, max_size=10),
       st.integers(0, 9), st.integers(1, 3), st.booleans())
def test_bad_names_of_sliced_and_chunked_cells(cells, skip, parts, large):
    """The byte prefilter (no regex when no byte can start a control) gives the rule's answer on
    slices (non-zero offsets) and chunked columns, with the C1 controls (U+0080-U+009F, 0xC2 in
    UTF-8) and their neighbours U+00A0 and U+00C2."""
    kind = pa.large_string() if large else pa.string()
    whole = pa.array(cells, kind).slice(min(skip, len(cells) - 1))
    shown = cells[min(skip, len(cells) - 1):]
    expected = np.array([c is not None and _is_cc(c) for c in shown])
    assert bad_names(whole).tolist() == expected.tolist()
    cuts = sorted({len(shown) * k // parts for k in range(parts + 1)})
    chunked = pa.chunked_array([whole.slice(a, b - a) for a, b in zip(cuts, cuts[1:])], kind)
    assert bad_names(chunked).tolist() == expected.tolist()


def test_bad_names_is_a_boolean_mask_with_or_without_a_control():
    clean = pa.array(["alice", None, "bob"])
    for cells, expected in ((clean, [False, False, False]),
                            (pa.array(["a\x01", None, "b"]), [True, False, False])):
        bad = bad_names(cells)
        assert bad.dtype == np.bool_ and bad.tolist() == expected
        assert (~bad).tolist() == [not b for b in expected]  # usable as a mask


def test_bad_names_of_binary_cells_and_of_a_column_with_no_value():
    """Byte strings are checked too (the prefilter does not skip them), and an all-null
    column of Arrow's null type (what a CSV reader infers for an empty one) has no bad name."""
    assert bad_names(pa.array([b"ok", b"b\x00d", None], pa.binary())).tolist() == \
        [False, True, False]
    assert bad_names(pa.array([None, None], pa.null())).tolist() == [False, False]
    assert first_bad_name(pa.chunked_array([pa.array([None], pa.null())])) is None


def test_check_name_error_is_located_and_escaped():
    with pytest.raises(InputError) as info:
        check_name("a\x00b", "f.csv", 3, "user")
    err = info.value
    assert (err.path, err.line, err.field, err.value) == ("f.csv", 3, "user", "a\x00b")
    assert "\x00" not in str(err) and r"'a\x00b'" in str(err) and err.expected == NAME_EXPECTED


# --- Slurm (the reproduced attack) ------------------------------------------------------------

def test_nul_in_a_slurm_user_name_is_refused_with_a_located_error(tmp_path):
    path = _sacct(tmp_path, _sacct_line(), _sacct_line(user="al\x00ice", job=8))
    with pytest.raises(InputError) as info:
        slurm.read(path)
    err = info.value
    assert err.line == 3 and "'User'" in err.field and err.value == "al\x00ice"
    assert err.expected == NAME_EXPECTED
    assert r"'al\x00ice' holds a control character" in str(err) and "\x00" not in str(err)


@pytest.mark.parametrize("column", ["User", "Group", "Partition"])
@pytest.mark.parametrize("bad", ["\x00", "\t", "\x1b[31m", "\x7f", "\x85"])
def test_every_slurm_name_column_refuses_controls(tmp_path, column, bad):
    cells = {"User": "user", "Group": "group", "Partition": "partition"}
    line = _sacct_line(**{cells[column]: f"x{bad}y"})
    with pytest.raises(InputError) as info:
        slurm.read(_sacct(tmp_path, line))
    assert info.value.line == 2 and f"'{column}'" in info.value.field
    assert info.value.value == f"x{bad}y"


def test_slurm_account_is_checked_when_it_is_the_group(tmp_path):
    head = SACCT_HEAD.replace("|Group", "")
    line = _sacct_line(account="ac\x00ct").replace("|lab", "", 1)
    path = tmp_path / "acct.sacct"
    path.write_text(f"{head}\n{line}\n")
    with pytest.raises(InputError) as info:
        slurm.read(path)
    assert "'Account'" in info.value.field and info.value.value == "ac\x00ct"


@FS
@given(name=sacct_user_names())
def test_a_slurm_user_name_is_read_exactly_or_refused(tmp_path, name):
    path = _sacct(tmp_path, _sacct_line(user=name))
    if _is_cc(name):
        with pytest.raises(InputError) as info:
            slurm.read(path)
        assert (info.value.line, info.value.value) == (2, name)
    else:
        assert slurm.read(path).column("user").to_pylist() == [name]


def test_cli_convert_refuses_the_nul_name_and_writes_nothing(tmp_path):
    path = _sacct(tmp_path, _sacct_line(user="al\x00ice"))
    result = runner.invoke(app, ["convert", str(path), "--from", "slurm", "--out",
                                 str(tmp_path / "out.swf")])
    assert result.exit_code == 1, result.output
    assert "jobs.sacct:2: field 'User' (user): 'al\\x00ice' holds a control character" \
        in result.stderr
    assert "Traceback" not in result.output and not (tmp_path / "out.swf").exists()


# --- the other readers, same rule ------------------------------------------------------------

PBS_E = ("03/01/2023 10:00:00;E;5.s;user={user} group={group} queue={queue} qtime=100 "
         "start=200 end=300 Resource_List.walltime=01:00:00 Exit_status=0")


@pytest.mark.parametrize("key", ["user", "group", "queue"])
def test_pbs_names_refuse_controls(tmp_path, key):
    cells = {"user": "u", "group": "g", "queue": "q"} | {key: "a\x00b"}
    path = tmp_path / "acct.log"
    path.write_text(PBS_E.format(**cells) + "\n")
    with pytest.raises(InputError) as info:
        pbs.read(path)
    err = info.value
    assert (err.line, err.field, err.value, err.expected) == (1, f"key {key!r}", "a\x00b",
                                                              NAME_EXPECTED)


NQSII_RAW = ("job_id,user,group,queue,nodes,gpus,walltime_req,termcode,submit,start,finish,wait,"
             "walltime\n"
             "1,tanaka,lab-a,Normal,1,1,01:00:00,0,2017-07-14 09:00:00,2017-07-14 09:01:00,"
             "2017-07-14 09:31:00,00:01:00,00:30:00\n"
             "2,{user},{group},Short,1,1,00:30:00,0,2017-07-14 09:05:00,2017-07-14 09:05:00,"
             "2017-07-14 09:15:00,00:00:00,00:10:00\n")


@pytest.mark.parametrize("column", ["user", "group"])
def test_nqsii_raw_names_refuse_controls(tmp_path, column):
    cells = {"user": "sato", "group": "lab-b"} | {column: "sa\x1bto"}
    path = tmp_path / "raw.csv"
    path.write_text(NQSII_RAW.format(**cells))
    with pytest.raises(InputError) as info:
        nqsii.read(path, site="aaic")
    err = info.value
    assert err.line == 3 and f"'{column}'" in err.field and err.value == "sa\x1bto"
    assert err.expected == NAME_EXPECTED


PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
        "deletion_time,scheduled_time\n"
        "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,9000,0\n"
        "{name},6000,12288,1,460,,{qos},Running,100,9000,105\n")


@pytest.mark.parametrize("field, cells", [("qos", {"name": "openb-pod-0001", "qos": "B\x00E"}),
                                          ("name", {"name": "openb\x00pod-0001", "qos": "BE"})])
def test_alibaba_pod_names_refuse_controls(tmp_path, field, cells):
    path = tmp_path / "t_pod_list_x.csv"
    path.write_text(PODS.format(**cells))
    with pytest.raises(InputError) as info:
        alibaba.read(path)
    err = info.value
    assert (err.line, err.field, err.expected) == (3, field, NAME_EXPECTED) and "\x00" in err.value


@pytest.mark.parametrize("bad", CONTROL_CHARACTERS[:1] + ["\x7f", "\x9f"])
def test_alibaba_node_names_refuse_controls(tmp_path, bad):
    pods = tmp_path / "t_pod_list_x.csv"
    pods.write_text(PODS.format(name="openb-pod-0001", qos="BE"))
    (tmp_path / "t_node_list_x.csv").write_text(
        f"sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0001,96000,786432,8,V100M16\n"
        f"openb{bad}node-0002,96000,786432,8,V100M16\n")
    with pytest.raises(InputError) as info:
        alibaba.read(pods)
    assert (info.value.line, info.value.field) == (3, "sn")
