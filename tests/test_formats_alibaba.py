"""Alibaba GPU trace v2023 (openb pod + node lists): reader, writer, golden files, bad input, the
real trace, and an independent loader of the export."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import formats
from swftools import table as jt
from swftools.errors import InputError, UsageError
from swftools.formats import alibaba
from swftools.formats.alibaba.schema import phase_codes, pod_columns
from swftools.formats.formatinfo import skipped_jobs
from swftools.metadata import TableMetadata
from swftools.site import resolve_site
from tests.conftest import trace_path
from tests.strategies import (OPENB_POD_HEADER, aaic_jobs, openb_csv, openb_node_rows,
                              openb_pod_rows, swf_jobs)
from tests.test_formats_cross import check_round_trip

GOLDEN = Path(__file__).parent / "golden" / "alibaba"
POD_GOLDEN = GOLDEN / "awkward_pod_list_small.csv"
NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"
REAL_PODS = "gpu/alibaba-gpu-v2023-openb_pod_list_default.csv.gz"


def _write_pair(tmp: Path, pods: str, nodes: str | None, stem: str = "t") -> Path:
    path = tmp / f"{stem}_pod_list_x.csv"
    path.write_text(pods, encoding="utf-8")
    if nodes is not None:
        (tmp / f"{stem}_node_list_x.csv").write_text(nodes, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- golden files

def test_golden_pod_list_reads_to_the_expected_table():
    table = alibaba.read(POD_GOLDEN)
    with open(GOLDEN / "expected_jobs.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == table.column_names
    got = [["" if v is None else str(v) for v in r.values()] for r in table.to_pylist()]
    assert got == rows[1:]
    meta = TableMetadata.from_table(table)
    expected = json.loads((GOLDEN / "expected_metadata.json").read_text())
    assert {"site": meta.site, "site_settings": meta.site_settings,
            "alibaba": meta.extra["alibaba"]} == expected


def test_golden_awkward_cases_are_mapped_as_documented():
    rows = {r["job_id"]: r for r in alibaba.read(POD_GOLDEN).to_pylist()}
    assert rows[1]["gpus"] == 1 and rows[1]["wait_s"] == 5  # a GPU-sharing pod holds one GPU
    assert rows[2]["gpus"] == 0 and rows[2]["termcode"] == 0  # CPU-only, Succeeded
    assert rows[5]["start_time"] is None and rows[5]["termcode"] == 3  # Pending, never ran
    assert rows[6]["start_time"] is None and rows[6]["termcode"] == 1  # Failed before a start
    assert rows[0]["termcode"] is None and rows[0]["swf_status"] is None  # Running: no exit
    assert rows[7]["queue"] is None and rows[7]["finish_time"] is None  # no qos, not deleted
    assert rows[8]["submit_time"] is None  # creation unknown
    assert 12 in rows  # irregular name job-x12
    meta = TableMetadata.from_table(alibaba.read(POD_GOLDEN))
    layout = meta.extra["alibaba"]
    assert layout["gpu_milli"] == {"1": 460, "5": 220, "8": 50}
    assert layout["never_started"] == 4
    site = resolve_site(None, alibaba.read(POD_GOLDEN))
    assert site.name == "alibaba-openb" and site.gpus_per_node == 8
    assert site.max_gpus >= layout["nodes"]["gpus"] == 28


def test_golden_files_are_written_back_byte_for_byte(tmp_path):
    table = alibaba.read(POD_GOLDEN)
    out = tmp_path / "back_pod_list_small.csv"
    assert alibaba.write(table, out) == []
    assert out.read_bytes() == POD_GOLDEN.read_bytes()
    node_out = tmp_path / "back_node_list_small.csv"
    assert node_out.read_bytes() == (GOLDEN / "awkward_node_list_small.csv").read_bytes()


def test_gzip_output_is_deterministic_and_detected(tmp_path):
    table = alibaba.read(POD_GOLDEN)
    a, b = tmp_path / "a_pod_list_x.csv.gz", tmp_path / "b_pod_list_x.csv.gz"
    alibaba.write(table, a)
    alibaba.write(table, b)
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes()) == POD_GOLDEN.read_bytes()
    assert (tmp_path / "a_node_list_x.csv.gz").is_file()
    assert formats.detect_format(a) == "alibaba"
    assert formats.info("openb").name == "alibaba"


def test_phase_table_in_the_docs_matches_the_schema():
    """The phase table of the format's page (docs/formats/alibaba.md) is the reader's."""
    text = (Path(__file__).parent.parent / "docs" / "formats" / "alibaba.md").read_text(
        encoding="utf-8")
    for phase, (termcode, status) in phase_codes().items():
        cells = [phase, "-" if termcode is None else str(termcode),
                 "-" if status is None else str(status)]
        assert any(all(f"| {c} " in line or f"| `{c}` " in line for c in cells)
                   for line in text.splitlines() if line.startswith("|")), phase


# ------------------------------------------------------------------------ property tests

@settings(max_examples=40, deadline=None)
@given(pods=openb_pod_rows(), nodes=openb_node_rows())
def test_file_table_file_is_identical(tmp_path_factory, pods, nodes):
    """write(read(f)) == f for pod and node lists (every phase, sharing, never-ran pods)."""
    tmp = tmp_path_factory.mktemp("openb")
    pod_text, node_text = openb_csv(OPENB_POD_HEADER, pods), openb_csv(NODE_HEADER, nodes)
    path = _write_pair(tmp, pod_text, node_text)
    table = alibaba.read(path, allow_empty=True)
    assert table.num_rows == len(pods)
    out = tmp / "w_pod_list_x.csv"
    assert alibaba.write(table, out) == []
    assert out.read_text() == pod_text
    assert (tmp / "w_node_list_x.csv").read_text() == node_text
    back = alibaba.read(out, allow_empty=True)
    assert jt.equal(back, table)  # read(write(t)) == t on every column


@settings(max_examples=40, deadline=None)
@given(pods=openb_pod_rows(min_size=1), nodes=openb_node_rows())
def test_reader_columns_follow_the_cells(tmp_path_factory, pods, nodes):
    tmp = tmp_path_factory.mktemp("openb")
    path = _write_pair(tmp, openb_csv(OPENB_POD_HEADER, pods), openb_csv(NODE_HEADER, nodes))
    origin = 1_700_000_000
    table = alibaba.read(path, origin=origin)
    codes = phase_codes()
    for cells, row in zip(pods, table.to_pylist()):
        cell = dict(zip(OPENB_POD_HEADER.split(","), cells))
        assert row["gpus"] == row["gpus_per_node"] == row["requested_procs"] == int(cell["num_gpu"])
        assert row["nodes"] == 1
        assert (row["termcode"], row["swf_status"]) == codes[cell["pod_phase"]]
        for col, src in (("submit_time", "creation_time"), ("start_time", "scheduled_time"),
                         ("finish_time", "deletion_time")):
            assert row[col] == (int(cell[src]) + origin if cell[src] else None)
        assert row["queue"] == (cell["qos"] or None)
    meta = TableMetadata.from_table(table).extra["alibaba"]
    sharing = {c[0]: int(c[4]) for c in pods if c[3] == "1" and int(c[4]) < 1000}
    assert len(meta["gpu_milli"]) == len(sharing) == meta["gpu_sharing_pods"]


@settings(max_examples=25, deadline=None)
@given(table=aaic_jobs(max_size=15))
def test_foreign_tables_keep_what_the_pod_list_carries(table):
    """A GPU-site table: read(write(t)) equals t on the carried columns, the report names the
    rest (the cross-format property, here for this format alone)."""
    check_round_trip("alibaba", table)


@settings(max_examples=15, deadline=None)
@given(table=aaic_jobs(min_size=1, max_size=10), origin=st.integers(0, 1_600_000_000))
def test_times_come_back_with_the_origin_written(tmp_path_factory, table, origin):
    tmp = tmp_path_factory.mktemp("openb")
    out = tmp / "o_pod_list_x.csv"
    losses = alibaba.write(table, out)
    # multi-node jobs (16+ GPUs) do not fit AAIC's 8-GPU nodes as one pod: skipped
    fits = [g <= 8 for g in table.column("gpus").to_pylist()]
    assert skipped_jobs(losses) == fits.count(False)
    kept = table.filter(pa.array(fits, pa.bool_()))
    back = alibaba.read(out, origin=min(kept.column("submit_time").to_pylist(), default=0),
                        allow_empty=True)
    for c in ("submit_time", "start_time", "finish_time"):
        assert back.column(c).to_pylist() == kept.column(c).to_pylist()
    if kept.num_rows:
        first = min(kept.column("submit_time").to_pylist())
        assert any(line.startswith("submit_time:") and str(first) in line for line in losses)


def test_a_table_without_a_cluster_is_refused_and_nothing_written(tmp_path):
    table = jt.from_columns({"job_id": [1], "gpus": [2], "submit_time": [10]})
    out = tmp_path / "n_pod_list_x.csv"
    with pytest.raises(UsageError, match="node list"):
        alibaba.write(table, out)
    assert not list(tmp_path.iterdir())
    alibaba.write(table, out, site="aaic")  # a site gives the cluster
    assert alibaba.read(out).column("gpus").to_pylist() == [2]


def test_existing_output_is_kept_without_force(tmp_path):
    table = alibaba.read(POD_GOLDEN)
    out = tmp_path / "k_pod_list_x.csv"
    out.write_text("keep")
    with pytest.raises(UsageError, match="already exists"):
        alibaba.write(table, out)
    assert out.read_text() == "keep" and not (tmp_path / "k_node_list_x.csv").exists()
    alibaba.write(table, out, force=True)
    assert out.read_bytes() == POD_GOLDEN.read_bytes()


# ----------------------------------------------------------------------------- bad input

GOOD = POD_GOLDEN.read_text()
NODES = (GOLDEN / "awkward_node_list_small.csv").read_text()


def _bad(line3: str | None = None, header: str | None = None) -> str:
    lines = GOOD.splitlines()
    if line3 is not None:
        lines[2] = line3
    if header is not None:
        lines[0] = header
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text,line,field,value,expected", [
    (_bad("openb-pod-0001,6000,12288,1,460,,LS,Running,100,9000"), 3, None,
     "openb-pod-0001,6000,12288,1,460,,LS,Running,100,9000", "11 comma-separated fields"),
    (_bad("openb-pod-0001,6000,12288,1,half,,LS,Running,100,9000,105"), 3, "gpu_milli", "half",
     "a non-negative integer"),
    (_bad("openb-pod-0001,6000,12288,1,1460,,LS,Running,100,9000,105"), 3, "gpu_milli", "1460",
     "an integer 0..1000"),
    (_bad("openb-pod-0001,6000,12288,2,460,,LS,Running,100,9000,105"), 3, "gpu_milli", "460",
     "1000 when num_gpu is 2 (only a one-GPU pod shares its GPU)"),
    (_bad("openb-pod-0001,6000,12288,1,460,,LS,Running,100,90,105"), 3, "deletion_time", "90",
     ">= creation_time (100)"),
    (_bad("openb-pod-0001,6000,12288,1,460,,LS,Running,100,9000,99"), 3, "scheduled_time", "99",
     ">= creation_time (100)"),
    (_bad("openb-pod-0001,6000,12288,1,460,,LS,Evicted,100,9000,105"), 3, "pod_phase", "Evicted",
     "one of Succeeded, Failed, Running, Pending"),
    (_bad("openb-pod-0000,6000,12288,1,460,,LS,Running,100,9000,105"), 3, "name",
     "openb-pod-0000", "pod numbers unique in the file"),
    (_bad("openb-pod-x,6000,12288,1,460,,LS,Running,100,9000,105"), 3, "name", "openb-pod-x",
     "a name ending in the pod number, e.g. openb-pod-0017"),
    (_bad("openb-pod-0001,-6000,12288,1,460,,LS,Running,100,9000,105"), 3, "cpu_milli", "-6000",
     "a non-negative integer"),
    (_bad(header=OPENB_POD_HEADER.replace("gpu_milli", "gpu_mili")), 1, "header", None,
     "the columns " + ",".join(pod_columns()) + " (any order), or the 5 columns "
     "name,cpu_milli,memory_mib,num_gpu,gpu_milli"),
])
def test_bad_pod_lines_are_located_and_nothing_is_written(tmp_path, text, line, field, value,
                                                          expected):
    src = _write_pair(tmp_path, text, NODES)
    out = tmp_path / "out.swf"
    with pytest.raises(InputError) as info:
        formats.convert(src, out)
    err = info.value
    assert (err.path, err.line, err.field) == (str(src), line, field)
    if value is not None:
        assert err.value == value
    assert err.expected == expected
    assert f"{src}:{line}:" in str(err)
    assert not out.exists()


def test_missing_node_list_is_an_error_naming_the_way_out(tmp_path):
    src = _write_pair(tmp_path, GOOD, None)
    with pytest.raises(InputError) as info:
        alibaba.read(src)
    assert info.value.field == "nodes" and "nodes=PATH" in info.value.expected
    with pytest.raises(InputError, match="no such node list"):
        alibaba.read(src, nodes=tmp_path / "absent.csv")
    assert alibaba.read(src, site="aaic").num_rows == 10  # a site gives the capacity instead


def test_bad_node_lines_are_located(tmp_path):
    nodes = NODES.replace("openb-node-0004,64000,262144,2,T4", "openb-node-0004,64000,262144,2,")
    src = _write_pair(tmp_path, GOOD, nodes)
    with pytest.raises(InputError) as info:
        alibaba.read(src)
    assert (info.value.line, info.value.field, info.value.value) == (6, "model", "")
    nodes = NODES.replace("openb-node-0004,64000,262144,2,T4", "openb-node-0004,64000,2.5e5,2,T4")
    src = _write_pair(tmp_path, GOOD, nodes, stem="u")
    with pytest.raises(InputError) as info:
        alibaba.read(src)
    assert (info.value.line, info.value.field, info.value.value) == (6, "memory_mib", "2.5e5")


def test_node_list_is_found_by_name_or_given(tmp_path):
    src = tmp_path / "alibaba-openb_pod_list_default.csv"
    src.write_text(GOOD)
    (tmp_path / "alibaba-openb_node_list_gpu_node.csv").write_text(NODES)
    assert alibaba.find_node_list(src).name == "alibaba-openb_node_list_gpu_node.csv"
    (tmp_path / "alibaba-openb_node_list_all_node.csv").write_text(NODES)
    assert alibaba.find_node_list(src).name == "alibaba-openb_node_list_all_node.csv"
    elsewhere = tmp_path / "cluster.csv"
    elsewhere.write_text(NODES)
    other = tmp_path / "pods.csv"
    other.write_text(GOOD)
    assert alibaba.find_node_list(other) is None
    table = alibaba.read(other, nodes=elsewhere)
    assert TableMetadata.from_table(table).extra["alibaba"]["nodes"]["file"] == "cluster.csv"


# ------------------------------------------------------- an independent loader of the export

def _independent_load(pod_path: Path, node_path: Path) -> tuple[list[dict], list[dict]]:
    """Written from the public column description only (alibaba/clusterdata
    cluster-trace-gpu-v2023 README): what the simulator's YAML generator needs of each row."""
    pods = []
    with open(pod_path, newline="") as fh:
        for row in csv.DictReader(fh):
            num_gpu = int(row["num_gpu"])
            request = {"cpu": "%dm" % int(row["cpu_milli"]), "memory": "%dMi" % int(row["memory_mib"])}
            if num_gpu:
                milli = int(row["gpu_milli"])
                assert 0 < milli <= 1000
                request["gpu-milli"] = milli
                request["gpu-count"] = num_gpu
                request["models"] = [m for m in row["gpu_spec"].split("|") if m]
            assert row["pod_phase"] in ("Succeeded", "Running", "Pending", "Failed")
            for t in ("creation_time", "deletion_time", "scheduled_time"):
                assert row[t] == "" or int(row[t]) >= 0
            pods.append({"name": row["name"], **request})
    with open(node_path, newline="") as fh:
        nodes = [{"sn": r["sn"], "cpu": int(r["cpu_milli"]), "memory": int(r["memory_mib"]),
                  "gpu": int(r["gpu"]), "model": r["model"]} for r in csv.DictReader(fh)]
    return pods, nodes


@settings(max_examples=20, deadline=None)
@given(table=aaic_jobs(max_size=12) | swf_jobs(max_size=12))
def test_an_independent_loader_reads_the_export(tmp_path_factory, table):
    tmp = tmp_path_factory.mktemp("openb")
    out = tmp / "e_pod_list_x.csv"
    try:
        losses = alibaba.write(table, out, site="aaic")
    except UsageError as exc:  # times a pod list cannot hold (a finish before a start)
        assert "nothing written" in str(exc)
        assert not list(tmp.iterdir())
        return
    pods, nodes = _independent_load(out, tmp / "e_node_list_x.csv")
    # jobs of more GPUs than an 8-GPU node are skipped (a pod runs on one node)
    fits = [(g if g is not None else r or 0) <= 8 for g, r in
            zip(table.column("gpus").to_pylist(), table.column("requested_procs").to_pylist())]
    assert len(pods) == table.num_rows - skipped_jobs(losses) == fits.count(True)
    assert len(nodes) == 40 and all(n["gpu"] == 8 for n in nodes)
    kept = table.filter(pa.array(fits, pa.bool_()))
    gpus = kept.column("gpus").to_pylist()
    for pod, job, g in zip(pods, kept.column("job_id").to_pylist(), gpus):
        assert pod["name"].endswith(f"{job:04d}")
        assert pod.get("gpu-count", 0) == (g or 0) or g is None


def test_an_independent_loader_reads_the_golden_export(tmp_path):
    out = tmp_path / "g_pod_list_x.csv"
    alibaba.write(alibaba.read(POD_GOLDEN), out)
    pods, nodes = _independent_load(out, tmp_path / "g_node_list_x.csv")
    by_name = {p["name"]: p for p in pods}
    assert by_name["openb-pod-0005"]["models"] == ["V100M16", "V100M32"]
    assert by_name["openb-pod-0001"]["gpu-milli"] == 460
    assert "gpu-count" not in by_name["openb-pod-0002"]
    assert sum(n["gpu"] for n in nodes) == 28


# --------------------------------------------------------------------------- the real trace

@pytest.mark.slow
def test_real_trace_converts_to_swf_and_a_package_that_validates(tmp_path):
    from swftools.validate import validate

    src = trace_path(REAL_PODS)
    table = alibaba.read(src)
    assert table.num_rows == 8152
    layout = TableMetadata.from_table(table).extra["alibaba"]
    assert layout["nodes"]["nodes"] == 1523 and layout["nodes"]["gpus"] == 6212
    assert layout["never_started"] == 897 and layout["gpu_sharing_pods"] == 3078
    out = tmp_path / "back_pod_list_default.csv.gz"
    alibaba.write(table, out)
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(src.read_bytes())
    swf = formats.convert(src, tmp_path / "openb.swf")
    assert swf.table.num_rows == 8152 and (tmp_path / "openb.swf").stat().st_size > 0
    formats.convert(src, tmp_path / "pkg", to_format="package")
    report = validate(tmp_path / "pkg")
    assert report.rows == 8152
    assert {"capacity-gpus", "capacity-nodes", "queue-unknown"} <= set(report.rules_run)
    assert report.findings  # findings (missing users, unknown termcodes), not a crash
    assert report.total("error") == 0, [f for f in report.findings if f.severity == "error"][:5]


def test_pandas_reads_the_export_with_the_types_the_simulator_formats(tmp_path):
    """The simulator's generator reads the CSV with pandas and formats cpu_milli, memory_mib,
    num_gpu and gpu_milli with %d: they must come out as integer columns, never empty."""
    pd = pytest.importorskip("pandas")
    out = tmp_path / "p_pod_list_x.csv"
    alibaba.write(alibaba.read(POD_GOLDEN), out)
    frame = pd.read_csv(out)
    assert list(frame.columns) == list(pod_columns())
    for column in ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli"):
        assert str(frame[column].dtype) == "int64", column
    gpu = frame[frame.num_gpu != 0]
    assert ((gpu.gpu_milli > 0) & (gpu.gpu_milli <= 1000)).all()
    specs = frame.gpu_spec.fillna("")
    assert specs.tolist()[5].split("|") == ["V100M16", "V100M32"]
