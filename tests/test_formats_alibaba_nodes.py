"""The node list (issue 30): where it is found, its cells, the inventory re-derived from the rows
by plain sums, written back line for line, and the inline site it makes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import InputError
from swftools.formats.alibaba import nodes as N
from swftools.formats.alibaba.schema import phase_codes
from tests.strategies import openb_csv, openb_node_rows_irregular

HEADER = "sn,cpu_milli,memory_mib,gpu,model"


@pytest.mark.parametrize("pods,nodes", [
    ("a_pod_list_b.csv", "a_node_list_b.csv"), ("a_pod_list_b.CSV.GZ", "a_node_list_b.CSV.GZ"),
    ("x_pod_list.gz", "x_node_list.gz"), ("pods.csv", "pods.nodes.csv"),
    ("pods.csv.gz", "pods.nodes.csv.gz"), ("pods.Gz", "pods.nodes.Gz"), ("pods", "pods.nodes.csv"),
    ("p.txt", "p.txt.nodes.csv")])
def test_node_list_path(pods, nodes):
    assert N.node_list_path(Path("d") / pods) == Path("d") / nodes


def test_find_node_list(tmp_path):
    pods = tmp_path / "c_pod_list_default.csv.gz"
    assert N.find_node_list(pods) is None
    (tmp_path / "c_node_list_gpu_node.csv").write_text("x")
    (tmp_path / "c_node_list_dir").mkdir()
    assert N.find_node_list(pods) == tmp_path / "c_node_list_gpu_node.csv"
    (tmp_path / "c_node_list_cpu_node.csv").write_text("x")
    assert N.find_node_list(pods) is None  # two candidates, none all_node
    (tmp_path / "c_node_list_all_node.csv").write_text("x")
    assert N.find_node_list(pods) == tmp_path / "c_node_list_all_node.csv"
    (tmp_path / "c_node_list_all_node_old.csv").write_text("x")
    assert N.find_node_list(pods) is None  # two all_node lists
    (tmp_path / "c_node_list_default.csv.gz").write_text("x")
    assert N.find_node_list(pods) == tmp_path / "c_node_list_default.csv.gz"  # the writer's name
    other = tmp_path / "trace.csv"
    (tmp_path / "trace_node_list.csv").write_text("x")
    assert N.find_node_list(other) is None
    (tmp_path / "trace.nodes.csv").write_text("x")
    assert N.find_node_list(other) == tmp_path / "trace.nodes.csv"


def _plain_inventory(rows: list[list[str]]) -> dict:
    gpus = [int(r[3]) for r in rows]
    models: dict[str, dict[str, int]] = {}
    for r in rows:
        if int(r[3]):
            models.setdefault(r[4], {"nodes": 0, "gpus": 0})
            models[r[4]]["nodes"] += 1
            models[r[4]]["gpus"] += int(r[3])
    return {"nodes": len(rows), "gpu_nodes": sum(g > 0 for g in gpus), "gpus": sum(gpus),
            "cpu_milli": sum(int(r[1]) for r in rows), "memory_mib": sum(int(r[2]) for r in rows),
            "largest_node_gpus": max(gpus), "models": {m: models[m] for m in sorted(models)}}


@settings(max_examples=60, deadline=None)
@given(rows=openb_node_rows_irregular())
def test_inventory_sums_the_rows_and_renders_them_back(rows):
    text = openb_csv(HEADER, rows)
    nodes = N.parse_nodes(text, "n.csv")
    assert nodes == [(r[0], int(r[1]), int(r[2]), int(r[3]), "" if r[4] == "nan" else r[4])
                     for r in rows]
    inv = N.inventory(nodes, "n.csv")
    assert {k: inv[k] for k in _plain_inventory(rows)} == _plain_inventory(rows)
    assert inv["file"] == "n.csv"
    assert sum(run["nodes"] for run in inv["runs"]) == len(rows)
    assert N.render(inv) == text.replace(",nan\n", ",\n")


def test_runs_compress_consecutive_names_only():
    def runs(names: list[str]) -> list:
        inv = N.inventory([(n, 1, 2, 8, "T4") for n in names], "f")
        return [(r["names"], r["nodes"]) for r in inv["runs"]]

    assert runs(["n-08", "n-09", "n-10"]) == [({"prefix": "n-", "width": 2, "first": 8}, 3)]
    assert runs(["n9", "n10"]) == [({"prefix": "n", "width": 1, "first": 9}, 2)]
    assert runs(["n09", "n010"]) == [(["n09", "n010"], 2)]
    assert runs(["n1", "n3"]) == [(["n1", "n3"], 2)]
    assert runs(["a", "b"]) == [(["a", "b"], 2)]
    assert runs(["n1", "m2"]) == [(["n1", "m2"], 2)]
    inv = N.inventory([("a1", 1, 2, 0, ""), ("a2", 1, 2, 0, ""), ("a3", 1, 3, 0, ""),
                       ("a4", 2, 3, 0, ""), ("a5", 2, 3, 1, "G"), ("a6", 2, 3, 1, "H")], "f")
    assert [r["nodes"] for r in inv["runs"]] == [2, 1, 1, 1, 1]
    assert inv["runs"][0] == {"names": {"prefix": "a", "width": 1, "first": 1}, "nodes": 2,
                              "cpu_milli": 1, "memory_mib": 2, "gpu": 0, "model": ""}
    assert N.render(inv).splitlines()[1:3] == ["a1,1,2,0,", "a2,1,2,0,"]


@pytest.mark.parametrize("row,message,field,value,expected", [
    (" ,1,2,0,", "empty node name", "sn", "", "a node name such as openb-node-0227"),
    ("n1,1,2,4,nan", "a node with 4 GPUs has no GPU model", "model", "",
     "a GPU model such as T4 or G2"),
    ("n1,1,2,4, ", "a node with 4 GPUs has no GPU model", "model", "",
     "a GPU model such as T4 or G2"),
    ("n0,1,2,0,", "node 'n0' repeats line 2", "sn", "n0", "node names unique in the file"),
    ("n1,1,x,0,", "'x' is not a non-negative integer", "memory_mib", "x",
     "a non-negative integer"),
    ("n1,1,2,-1,G", "'-1' is not a non-negative integer", "gpu", "-1", "a non-negative integer"),
    ("n1,1,2,1,G\x00", None, "model", "G\x00", None),
    ("n\x1b1,1,2,1,G", None, "sn", "n\x1b1", None),
    ("n1,1,2", "3 fields, the header has 5", None, "n1,1,2", "5 comma-separated fields")])
def test_bad_node_rows_are_located(row, message, field, value, expected):
    with pytest.raises(InputError) as info:
        N.parse_nodes(f"{HEADER}\nn0,1,2,0,\n{row}\n", "n.csv")
    e = info.value
    assert (e.path, e.line, e.field, e.value) == ("n.csv", 3, field, value)
    if message is not None:
        assert (e.message, e.expected) == (message, expected)


def test_node_cells_are_stripped_and_nan_is_empty():
    assert N.parse_nodes(f"{HEADER}\n n1 ,1,2,0, NaN \n n2,3,4,2, T4 \n", "n.csv") == [
        ("n1", 1, 2, 0, ""), ("n2", 3, 4, 2, "T4")]
    with pytest.raises(InputError) as info:
        N.parse_nodes(HEADER + "\n", "n.csv")
    assert info.value.message == "no rows: the node list holds only a header"


@settings(max_examples=60, deadline=None)
@given(rows=openb_node_rows_irregular(), qos=st.lists(st.sampled_from(
    ("LS", "BE", "Burstable", "Guaranteed", "zz", "Abc", "", None)), max_size=8),
       origin=st.integers(0, 2_000_000_000), span=st.integers(0, 10**7))
def test_site_settings_follow_the_docstring(rows, qos, origin, span):
    inv = N.inventory(N.parse_nodes(openb_csv(HEADER, rows), "n.csv"), "n.csv")
    site = N.site_settings(inv, qos, origin, span)
    gpus = [int(r[3]) for r in rows]
    size = max(max(gpus), 1)
    units = max(math.ceil(sum(gpus) / size), 1)
    assert site["gpus_per_node"] == size
    timeline = site["capacity_timeline"]
    assert len(timeline) == 1 and timeline[0]["nodes"] == units
    assert timeline[0]["since"].startswith("19") or timeline[0]["since"].startswith("20")
    assert timeline[0]["note"] == (
        f"{sum(gpus)} GPUs counted in nodes of the largest size ({size} GPUs), rounded up: "
        f"{units} x {size} = {units * size} GPUs. The real nodes hold 0 to {size} GPUs "
        "(alibaba.nodes in the table metadata).")
    assert units * size >= sum(gpus)
    extra = sorted({q for q in qos if q} - {"LS", "BE", "Burstable", "Guaranteed"})
    queues = site["queues"]
    assert [q["name"] for q in queues] == ["LS", "BE", "Burstable", "Guaranteed"] + extra
    assert [q["number"] for q in queues] == list(range(1, len(queues) + 1))
    for q in queues:
        assert (q["nodes_min"], q["nodes_max"], q["gpus_per_node_min"], q["gpus_per_node_max"],
                q["walltime_default_s"], q["walltime_max_s"]) == (1, 1, 0, size, max(span, 1),
                                                                   max(span, 1))
    models = ", ".join(f"{m} {v['gpus']} GPUs on {v['nodes']} nodes"
                       for m, v in _plain_inventory(rows)["models"].items()) or "none"
    assert site["description"] == (
        f"{len(rows)} nodes, {sum(g > 0 for g in gpus)} with GPUs, {sum(gpus)} GPUs ({models}); "
        "Kubernetes pods, one node each.")
    assert site["title"] == "Alibaba GPU cluster (openb node list n.csv)"
    assert (site["name"], site["time_zone"], site["multi_node_whole_nodes"]) == (
        "alibaba-openb", "UTC", True)


def test_site_settings_of_a_cpu_only_cluster():
    inv = N.inventory([("c1", 1, 1, 0, "")], "c.csv")
    site = N.site_settings(inv, [], 86_400, 0)
    assert (site["gpus_per_node"], site["capacity_timeline"][0]["nodes"]) == (1, 1)
    assert site["capacity_timeline"][0]["since"] == "1970-01-02T00:00:00+00:00"
    assert site["queues"][0]["walltime_max_s"] == 1
    assert "(none)" in site["description"]
    codes = {str(t): s for t, s in phase_codes().values() if t is not None}
    assert site["termcode_to_swf_status"] == codes


def test_a_cpu_node_naming_a_model_is_no_gpu_node():
    inv = N.inventory(N.parse_nodes(f"{HEADER}\nc1,1,1,0,T4\ng1,1,1,2,T4\n", "n.csv"), "n.csv")
    assert (inv["gpu_nodes"], inv["gpus"], inv["models"]) == (1, 2, {"T4": {"nodes": 1, "gpus": 2}})


def test_the_prefix_is_cut_at_the_first_pod_list(tmp_path):
    (tmp_path / "x_node_list_all.csv").write_text("x")
    assert N.find_node_list(tmp_path / "x_pod_list_pod_list_y.csv") == tmp_path / "x_node_list_all.csv"


def test_a_bad_header_names_the_node_list_file():
    with pytest.raises(InputError) as info:
        N.parse_nodes("sn,cpu,memory_mib,gpu,model\n", "n.csv")
    assert (info.value.path, info.value.line, info.value.field) == ("n.csv", 1, "header")
    assert info.value.message == "the header is not the node list header (no column 'cpu_milli')"
