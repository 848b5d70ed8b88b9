"""The openb reader's errors and metadata: the node list it needs (its errors name the way
out), the table's metadata with and without a site, the empty pod list."""

from __future__ import annotations

from pathlib import Path

import pytest

import swftools
from swftools.errors import NO_JOB_ROWS, NO_JOB_ROWS_EXPECTED, InputError
from swftools.formats import alibaba
from swftools.metadata import TableMetadata
from tests.strategies import OPENB_POD_HEADER

GOLDEN = Path(__file__).parent / "golden" / "alibaba"
PODS = (GOLDEN / "awkward_pod_list_small.csv").read_text()
NODES = (GOLDEN / "awkward_node_list_small.csv").read_text()


def _pods(tmp: Path, text: str = PODS, nodes: str | None = NODES) -> Path:
    path = tmp / "t_pod_list_x.csv"
    path.write_text(text, encoding="utf-8")
    if nodes is not None:
        (tmp / "t_node_list_x.csv").write_text(nodes, encoding="utf-8")
    return path


def _error(err: InputError) -> tuple:
    return err.path, err.message, err.line, err.field, err.value, err.expected


def test_a_node_list_given_but_absent_is_named(tmp_path):
    src = _pods(tmp_path, nodes=None)
    absent = tmp_path / "absent.csv"
    with pytest.raises(InputError) as info:
        alibaba.read(src, nodes=absent)
    assert _error(info.value) == (
        str(absent), "no such node list", None, "nodes", str(absent),
        "the openb node list CSV (sn,cpu_milli,memory_mib,gpu,model)")


def test_a_pod_list_alone_is_an_error_naming_the_node_list_looked_for(tmp_path):
    src = _pods(tmp_path, nodes=None)
    with pytest.raises(InputError) as info:
        alibaba.read(src)
    assert _error(info.value) == (
        str(src), "no node list beside the pod list", None, "nodes", "t_node_list_x.csv",
        "the node list as X_node_list_*.csv[.gz] beside X_pod_list_*.csv[.gz], or nodes=PATH "
        "(convert: --site SITE gives the capacity instead)")


def test_a_bad_node_line_names_the_node_list_file(tmp_path):
    src = _pods(tmp_path, nodes=NODES.replace("openb-node-0003,96000", "openb-node-0003,x"))
    with pytest.raises(InputError) as info:
        alibaba.read(src)
    assert (info.value.path, info.value.line, info.value.field) == (
        str(tmp_path / "t_node_list_x.csv"), 5, "cpu_milli")


def test_a_pod_list_of_a_header_alone_needs_allow_empty(tmp_path):
    src = _pods(tmp_path, OPENB_POD_HEADER + "\n")
    with pytest.raises(InputError) as info:
        alibaba.read(src)
    assert (info.value.message, info.value.expected) == (NO_JOB_ROWS, NO_JOB_ROWS_EXPECTED)
    assert alibaba.read(src, allow_empty=True).num_rows == 0


def test_the_metadata_of_a_pod_list_with_its_node_list(tmp_path):
    meta = TableMetadata.from_table(alibaba.read(_pods(tmp_path)))
    assert (meta.source_file, meta.source_format, meta.converter_version, meta.site,
            meta.time_zone, meta.processor_unit) == (
        "t_pod_list_x.csv", "alibaba", swftools.__version__, "alibaba-openb", "UTC", "gpu")
    assert meta.site_settings["name"] == "alibaba-openb"
    assert meta.extra["alibaba"]["nodes"]["file"] == "t_node_list_x.csv"


def test_a_site_given_instead_of_a_node_list_is_the_tables_site(tmp_path):
    """The site's name and time zone, no inline settings or inventory; written back, the node
    list comes from the site."""
    table = alibaba.read(_pods(tmp_path, nodes=None), site="aaic")
    meta = TableMetadata.from_table(table)
    assert (meta.site, meta.time_zone, meta.processor_unit, meta.site_settings) == (
        "aaic", "Asia/Tokyo", "gpu", None)
    assert "nodes" not in meta.extra["alibaba"]
    out = tmp_path / "w_pod_list_x.csv"
    alibaba.write(table, out)
    node_lines = (tmp_path / "w_node_list_x.csv").read_text().splitlines()
    assert len(node_lines) == 1 + 40 and node_lines[1] == "openb-node-0000,0,0,8,P100"


def test_a_pod_list_without_times_ends_at_zero(tmp_path):
    short = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nopenb-pod-0001,2500,1024,2,1000\n"
    layout = TableMetadata.from_table(alibaba.read(_pods(tmp_path, short))).extra["alibaba"]
    assert layout["trace_end_s"] == 0
