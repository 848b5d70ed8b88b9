"""The openb writer (issue 30): another log's jobs written as pods, each cell re-derived from the
table by the module docstring's rules and read back with csv.DictReader; the loss report's
counts; the time origin; what is refused."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings

from swftools import table as jt
from swftools.errors import InputError, UsageError, count
from swftools.formats.alibaba import writer as W
from swftools.formats.alibaba.schema import default_origin, phase_codes
from swftools.site import Site
from tests.strategies import openb_foreign_columns

PHASE = {0: "Succeeded", 1: "Failed", 2: "Failed", 4: "Failed", 3: "Pending"}


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _submit_order(cols: dict[str, list]) -> list[int]:
    n = len(cols["job_id"])
    known = sorted((cols["submit_time"][i], i) for i in range(n)
                   if cols["submit_time"][i] is not None)
    return [i for _, i in known] + [i for i in range(n) if cols["submit_time"][i] is None]


@settings(max_examples=60, deadline=None)
@given(cols=openb_foreign_columns())
def test_foreign_jobs_become_pods_cell_by_cell(tmp_path_factory, cols):
    tmp = tmp_path_factory.mktemp("w")
    out = tmp / "f_pod_list_x.csv"
    losses = W.write(jt.from_columns(cols), out, site="aaic")
    n = len(cols["job_id"])
    num = [g if g is not None else (r if r is not None else 0)
           for g, r in zip(cols["gpus"], cols["requested_procs"])]
    kept = [i for i in _submit_order(cols) if num[i] <= 8]
    times = [cols[c][i] for c in ("submit_time", "start_time", "finish_time") for i in kept
             if cols[c][i] is not None]
    first = min(times, default=None)
    origin = default_origin() if first is None or first >= default_origin() else first
    rel = lambda t: "" if t is None else str(t - origin)  # noqa: E731
    want = [{"name": f"openb-pod-{cols['job_id'][i]:04d}",
             "cpu_milli": str(1000 * (cols["cpus"][i] or 0)), "memory_mib": "0",
             "num_gpu": str(num[i]), "gpu_milli": "0" if num[i] == 0 else "1000",
             "gpu_spec": "", "qos": cols["queue"][i] or "",
             "pod_phase": PHASE.get(cols["termcode"][i], "Running"),
             "creation_time": rel(cols["submit_time"][i]),
             "deletion_time": rel(cols["finish_time"][i]),
             "scheduled_time": rel(cols["start_time"][i])} for i in kept]
    assert _rows(out) == want
    nodes = _rows(tmp / "f_node_list_x.csv")
    assert [r["sn"] for r in nodes] == [f"openb-node-{k:04d}" for k in range(40)]
    assert {(r["cpu_milli"], r["memory_mib"], r["gpu"], r["model"]) for r in nodes} == {
        ("0", "0", "8", "P100")}

    skipped = n - len(kept)
    expect = []
    if skipped:
        expect.append(f"{count(skipped, 'job')} skipped: more GPUs than the largest node of the "
                      "node list has (8); a pod runs on one node")
    no_cpus = sum(1 for i in kept if cols["cpus"][i] is None)
    if no_cpus:
        expect.append(f"{count(no_cpus, 'pod')} without CPU and memory requests in the table "
                      "(cpu_milli, memory_mib written as 0)")
    assert losses[:len(expect)] == expect
    assert losses[-1] == ("node list made from site aaic (40 machines of 8 GPUs): their CPU and "
                          "memory sizes are unknown, written as 0")
    lines = {line.split(":")[0]: line for line in losses}
    term = sum(1 for i in kept if cols["termcode"][i] in (2, 4, 5))
    status = sum(1 for i in kept if phase_codes()[PHASE.get(cols["termcode"][i], "Running")][1]
                 is not None)
    for name, changed in (("termcode", term), ("swf_status", status)):
        if changed:
            assert lines[name].startswith(f"{name}: {count(changed, 'job')} read back otherwise")
        else:
            assert name not in lines
    for c in ("submit_time", "start_time", "finish_time"):
        known = sum(1 for i in kept if cols[c][i] is not None)
        if origin != default_origin() and known:
            assert lines[c] == (f"{c}: {count(known, 'job')} read back otherwise (written as "
                                f"seconds since epoch second {origin}; a read takes 0 as "
                                f"2022-01-01T00:00:00Z unless given origin={origin})")
        else:
            assert c not in lines


@pytest.mark.parametrize("own,times,want", [
    (None, [], default_origin()), (None, [default_origin()], default_origin()),
    (None, [default_origin() - 1, default_origin() + 9], default_origin() - 1),
    (500, [500, 900], 500), (500, [499, 900], 499), (500, [], 500),
    (2 * default_origin(), [default_origin(), 5 * default_origin()], default_origin()),
    # the earliest time at the table's own origin is not before it: the own origin stays
    (2 * default_origin(), [2 * default_origin(), 3 * default_origin()], 2 * default_origin())])
def test_time_origin(own, times, want):
    layout = {} if own is None else {"time_origin": own}
    assert W.time_origin(layout, times) == want


def test_gpus_come_from_gpus_then_requested_procs():
    assert [W._num_gpu(g, r) for g, r in ((3, 5), (0, 5), (None, 5), (None, 0), (None, None))] == [
        3, 0, 5, 0, 0]


def _table(**cols) -> jt.pa.Table:
    return jt.from_columns(cols)


def test_fitting_keeps_jobs_of_the_largest_node_and_counts_the_rest():
    table = _table(job_id=[1, 2, 3, 4], gpus=[8, 9, None, None], requested_procs=[None, 1, 8, 20])
    kept, lines = W._fitting(table, 8)
    assert kept.column("job_id").to_pylist() == [1, 3]
    assert lines == ["2 jobs skipped: more GPUs than the largest node of the node list has (8); "
                     "a pod runs on one node"]
    kept, lines = W._fitting(table, 9)
    assert kept.column("job_id").to_pylist() == [1, 2, 3] and lines[0].startswith("1 job skipped")
    same, lines = W._fitting(table, 20)
    assert same is table and lines == []


def test_a_site_without_gpu_models_writes_unknown(tmp_path):
    site = Site(name="s", time_zone="UTC", gpus_per_node=4, capacity_since=(0,),
                capacity_nodes=(3,), queues=())
    out = tmp_path / "s_pod_list_x.csv.gz"
    losses = W.write(_table(job_id=[7], gpus=[4], cpus=[2], submit_time=[10]), out, site=site)
    assert losses[-2:] == [
        "node list made from site s (3 machines of 4 GPUs): their CPU and memory sizes are "
        "unknown, written as 0",
        "the site names no GPU model for some nodes: written as 'unknown' (a GPU node's model "
        "cannot be empty)"]
    nodes = gzip.decompress((tmp_path / "s_node_list_x.csv.gz").read_bytes()).decode()
    assert nodes.splitlines() == ["sn,cpu_milli,memory_mib,gpu,model"] + [
        f"openb-node-{k:04d},0,0,4,unknown" for k in range(3)]
    pods = gzip.decompress(out.read_bytes()).decode().splitlines()
    assert pods[1] == "openb-pod-0007,2000,0,4,1000,,,Running,0,,"
    assert not any("without CPU" in line for line in losses)


def test_the_node_list_goes_where_nodes_says(tmp_path):
    out = tmp_path / "plain.csv"
    elsewhere = tmp_path / "sub_nodes.csv"
    W.write(_table(job_id=[1], gpus=[1]), out, site="aaic", nodes=elsewhere)
    assert elsewhere.read_text().startswith("sn,cpu_milli")
    assert not (tmp_path / "plain.nodes.csv").exists()
    assert out.read_bytes()[:4] == b"name"


def test_an_existing_node_list_stops_the_write(tmp_path):
    out = tmp_path / "e_pod_list_x.csv"
    (tmp_path / "e_node_list_x.csv").write_text("keep")
    with pytest.raises(UsageError, match="already exists"):
        W.write(_table(job_id=[1], gpus=[1]), out, site="aaic")
    assert not out.exists() and (tmp_path / "e_node_list_x.csv").read_text() == "keep"
    W.write(_table(job_id=[1], gpus=[1]), out, site="aaic", force=True)
    assert (tmp_path / "e_node_list_x.csv").read_text().count("\n") == 41


@pytest.mark.parametrize("submit,start,finish,what", [
    (10, 9, None, "starts before its submission"), (10, None, 9, "finishes before its submission"),
    (None, 10, 9, "finishes before it starts"), (5, 10, 9, "finishes before it starts")])
def test_times_a_pod_list_cannot_hold_are_refused(tmp_path, submit, start, finish, what):
    table = _table(job_id=[3, 42], gpus=[1, 1], submit_time=[1, submit], start_time=[2, start],
                   finish_time=[3, finish])
    with pytest.raises(UsageError) as info:
        W.write(table, tmp_path / "t_pod_list_x.csv", site="aaic")
    assert str(info.value) == (f"job 42 {what}: a pod list cannot hold it (fix the times or drop "
                               "the job; nothing written)")
    assert not list(tmp_path.iterdir())


def test_repeated_job_ids_are_refused(tmp_path):
    with pytest.raises(UsageError) as err:
        W.write(_table(job_id=[4, 4], gpus=[1, 1]), tmp_path / "r_pod_list_x.csv", site="aaic")
    assert str(err.value) == ("job ids repeat: pod names are made from job ids, which must be "
                              "unique (nothing written)")
    assert not list(tmp_path.iterdir())


def test_layout_of_an_openb_table_gives_names_resources_and_sharing():
    layout = {"pods": {"job_id": [5, 6], "cpu_milli": [1500, 2500], "memory_mib": [77, 88]},
              "names": {"prefix": "q-", "width": 2, "other": {"6": "special6"}},
              "gpu_milli": {"5": 250, "9": 10, "6": 300}, "gpu_spec": {"6": "A|B"},
              "time_origin": 100}
    # job 6 now has 2 GPUs: a share is of one GPU, so its pod is written with 1000 (whole GPUs)
    table = _table(job_id=[5, 6, 9, 123], gpus=[1, 2, 1, 0], cpus=[None, 3, None, 4],
                   submit_time=[100, 150, None, 130])
    pods, losses = W.from_table(table, layout)
    assert pods.name == ["q-05", "special6", "q-09", "q-123"]
    assert (pods.cpu_milli, pods.memory_mib) == ([1500, 2500, 0, 4000], [77, 88, 0, 0])
    assert (pods.num_gpu, pods.gpu_milli) == ([1, 2, 1, 0], [250, 1000, 10, 0])
    assert pods.gpu_spec == ["", "A|B", "", ""]
    assert pods.creation_time == [0, 50, None, 30]
    assert losses[0] == ("1 pod without CPU and memory requests in the table (cpu_milli, "
                         "memory_mib written as 0)")


def test_site_inventory_describes_the_site():
    # three nodes of 2 GPUs, models V100, none, T4: CPU and memory unknown (0), the unnamed
    # model written as 'unknown'; the inventory names the site as its source
    site = Site(name="s3", time_zone="UTC", gpus_per_node=2, capacity_since=(0,),
                capacity_nodes=(3,), queues=(), gpu_model_of_node=("V100", "", "T4"))
    inv = W.site_inventory(site)
    assert inv["file"] == "site s3"
    assert (inv["nodes"], inv["gpu_nodes"], inv["gpus"], inv["cpu_milli"], inv["memory_mib"],
            inv["largest_node_gpus"]) == (3, 3, 6, 0, 0, 2)
    assert inv["models"] == {"T4": {"nodes": 1, "gpus": 2}, "V100": {"nodes": 1, "gpus": 2},
                             "unknown": {"nodes": 1, "gpus": 2}}


def test_no_node_list_and_no_site_is_refused_with_the_remedy(tmp_path):
    # a table of another log with no site in its metadata: no cluster to describe
    out = tmp_path / "x_pod_list_x.csv"
    with pytest.raises(UsageError) as err:
        W.write(_table(job_id=[1], gpus=[1], submit_time=[10]), out)
    assert str(err.value) == (
        "a pod list needs its cluster's node list: the table has none (it was not read from an "
        "openb trace) and no site gives one; pass --site SITE (nothing written)")
    assert list(tmp_path.iterdir()) == []


def test_a_pod_list_its_own_reader_would_refuse_is_not_written(tmp_path):
    # a negative GPU count: the written text is read back before anything is written, and the
    # refusal names that text and its line (the header is line 1)
    out = tmp_path / "q_pod_list_x.csv"
    with pytest.raises(InputError) as err:
        W.write(_table(job_id=[5], gpus=[-2]), out, site="aaic")
    assert str(err.value).startswith("<written pod list>:2: num_gpu: ")
    assert list(tmp_path.iterdir()) == []


def test_columns_the_pod_list_has_not_are_reported_with_their_known_values():
    # user: two known values and a null; group: one known value
    table = _table(job_id=[1, 2, 3], gpus=[1, 1, 1], user=["u", None, "v"],
                   group=[None, "g", None])
    _, losses = W.from_table(table, {})
    assert "user: 2 known values dropped; the pod list has no such column" in losses
    assert "group: 1 known value dropped; the pod list has no such column" in losses
