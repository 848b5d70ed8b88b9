"""Alibaba pod lists as published (issue 24): the five-column multi-GPU form, cpus beside GPUs.
(Every pod list of the real corpus converting and validating: tests/test_formats_corpus.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from swftools import formats
from swftools.errors import InputError
from swftools.formats import alibaba
from swftools.formats.alibaba.schema import pod_forms
from tests.strategies import OPENB_POD_HEADER, openb_csv, openb_node_rows, openb_pod_rows

NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"
SHORT = ",".join(pod_forms()[1])


def _pair(tmp: Path, header: str, rows: list[list[str]], nodes: list[list[str]]) -> Path:
    path = tmp / "t_pod_list_x.csv"
    path.write_text(openb_csv(header, rows), encoding="utf-8")
    (tmp / "t_node_list_x.csv").write_text(openb_csv(NODE_HEADER, nodes), encoding="utf-8")
    return path


@settings(max_examples=40, deadline=None)
@given(openb_pod_rows(min_size=1), openb_node_rows())
def test_the_five_column_form_reads_as_the_full_form_without_times(tmp_path_factory, rows, nodes):
    """A five-column list is the full list without model, QoS, phase and times: the same jobs,
    GPUs and CPUs, every time, queue and outcome unknown."""
    tmp = tmp_path_factory.mktemp("forms")
    full = alibaba.read(_pair(tmp, OPENB_POD_HEADER, rows, nodes))
    short = alibaba.read(_pair(tmp, SHORT, [r[:5] for r in rows], nodes))
    for column in ("job_id", "gpus", "gpus_per_node", "cpus", "nodes", "requested_procs"):
        assert short.column(column).to_pylist() == full.column(column).to_pylist(), column
    for column in ("queue", "termcode", "swf_status", "submit_time", "start_time",
                   "finish_time", "wait_s", "walltime_s"):
        assert short.column(column).null_count == short.num_rows, column
    assert full.column("cpus").to_pylist() == [-(-int(r[1]) // 1000) for r in rows]


def test_the_five_column_form_is_detected_and_written_as_the_full_form(tmp_path):
    src = _pair(tmp_path, SHORT, [["openb-pod-0001", "2500", "1024", "2", "1000"],
                                  ["openb-pod-0002", "8000", "1024", "0", "0"]],
                [["openb-node-0001", "32000", "262144", "8", "V100"]])
    assert formats.sniff_format(src) == "alibaba"
    table = alibaba.read(src)
    assert table.column("cpus").to_pylist() == [3, 8]
    out = tmp_path / "w_pod_list_x.csv"
    alibaba.write(table, out, force=True)
    header, first, second = out.read_text().splitlines()
    assert header == OPENB_POD_HEADER
    assert first.startswith("openb-pod-0001,2500,1024,2,1000,,,Running,,,")
    assert second.startswith("openb-pod-0002,8000,1024,0,0,")


def test_a_header_of_neither_form_names_both(tmp_path):
    src = _pair(tmp_path, "name,cpu_milli,memory_mib,num_gpu", [["openb-pod-1", "1", "1", "0"]],
                [["openb-node-0001", "32000", "262144", "8", "V100"]])
    with pytest.raises(InputError) as info:
        alibaba.read(src)
    assert info.value.line == 1 and "or the 5 columns " + SHORT in str(info.value)


def test_the_phase_written_for_each_termcode():
    from swftools.formats.alibaba.schema import phase_of

    assert [phase_of(t, True) for t in (0, 1, 2, 3, 4, 5, None)] == [
        "Succeeded", "Failed", "Failed", "Pending", "Failed", "Running", "Running"]
    assert phase_of(4, False) == "Failed"
