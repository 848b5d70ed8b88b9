"""Issue 29, privacy leak through telemetry: a release with ``--telemetry`` published the sample
files' base names (often host names: ``node07.prom``) in the ``job_telemetry`` metadata and its
resource description, and the audit never searched the telemetry's machines.

The attack: a small Slurm log released with a text exposition named after a secret host whose
samples carry a secret ``instance`` label, and a Prometheus JSON export with another one. No
output file, Parquet metadata or tar member may name them; planted back, the audit must fail.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from swftools import table as jt
from swftools.errors import InputError
from swftools.formats import datapackage
from swftools.privacy import scrub
from swftools.privacy.audit import audit
from swftools.privacy.rawnames import (file_stem_names, host_of_label, raw_names,
                                       telemetry_names)
from swftools.release.pipeline import _merge_names, release
from swftools.telemetry import DEFAULT_MAPS, load_metric_map
from tests.security.test_privacy_leaks import _every_byte, _retar

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "archive" / "release-settings.example.json"
KEY = (ROOT / "archive" / "example-key.txt").read_text().strip().encode()
FILE_HOST = "secretnode07"  # the text exposition's base name
INSTANCE_HOST = "secretinst42"  # instance="secretinst42.lab:9400" in its samples
JSON_FILE_HOST = "gpu-host-12"  # the JSON export's base name
JSON_INSTANCE_HOST = "secretjson3"  # "instance": "secretjson3:9400" in the JSON export
SECRETS = (FILE_HOST, INSTANCE_HOST, JSON_FILE_HOST, JSON_INSTANCE_HOST)
SACCT = (
    "JobID|JobIDRaw|User|Group|Partition|Submit|Start|End|State|NNodes|NCPUS|AllocTRES|NodeList|"
    "JobName\n"
    "1|1|tanaka|physics|Short|2023-01-01T00:00:00|2023-01-01T00:00:30|2023-01-01T00:20:30|COMPLETED|"
    "1|4|cpu=4,gres/gpu=4,node=1|gpu01|train_resnet50\n"
    "2|2|suzuki|physics|Short|2023-01-01T00:05:00|2023-01-01T00:05:30|2023-01-01T00:25:30|COMPLETED|"
    "1|4|cpu=4,gres/gpu=4,node=1|gpu01|eval-run7\n")
T0 = 1672531200 - 9 * 3600  # 2023-01-01T00:00 in Asia/Tokyo (the aaic site's time zone)


def _inputs(tmp: Path) -> dict:
    """The raw log, the two exports and the allocation table; returns the release arguments."""
    (tmp / "raw.sacct").write_text(SACCT)
    exports = tmp / "exports"
    exports.mkdir()
    lines = ["# TYPE DCGM_FI_DEV_GPU_UTIL gauge"]
    for i in range(30):
        lines += [f'DCGM_FI_DEV_GPU_UTIL{{gpu="{g}",Hostname="gpu01",'
                  f'instance="{INSTANCE_HOST}.lab:9400"}} {10 * g} {(T0 + 60 * i) * 1000}'
                  for g in range(8)]
    (exports / f"{FILE_HOST}.prom").write_text("\n".join(lines) + "\n")
    result = [{"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "gpu": str(g), "Hostname": "gpu01",
                          "instance": f"{JSON_INSTANCE_HOST}:9400"},
               "values": [[T0 + 60 * i, "100"] for i in range(30)]} for g in range(8)]
    (exports / f"{JSON_FILE_HOST}.json").write_text(json.dumps(
        {"status": "success", "data": {"resultType": "matrix", "result": result}}))
    (tmp / "alloc.csv").write_text("job_id,node,gpu_index\n"
                                   + "".join(f"{1 + g // 4},gpu01,{g}\n" for g in range(8)))
    return {"source": tmp / "raw.sacct", "samples": [exports], "allocations": tmp / "alloc.csv"}


def _release(args: dict, out: Path) -> None:
    release(args["source"], out, version="1.0.0", settings=SETTINGS, key=KEY, site="aaic",
            accept_errors=True,
            telemetry={"samples": args["samples"], "allocations": args["allocations"]})


def _names(args: dict) -> dict[str, list[str]]:
    """What the release's audit searches: the job log's names and the telemetry's hosts."""
    return _merge_names(raw_names(args["source"], "slurm"), telemetry_names(
        args["samples"], args["allocations"], load_metric_map(DEFAULT_MAPS)))


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("telemetry")
    args = _inputs(tmp)
    _release(args, tmp / "release")
    return {**args, "release": tmp / "release", "tmp": tmp}


def test_telemetry_names_are_file_names_host_labels_and_allocation_nodes(released):
    hosts = set(telemetry_names(released["samples"], released["allocations"])["host"])
    assert {FILE_HOST, JSON_FILE_HOST, f"{INSTANCE_HOST}.lab", INSTANCE_HOST,
            JSON_INSTANCE_HOST, "gpu01"} <= hosts
    assert not any(":9400" in h for h in hosts)  # ports cut


@pytest.mark.parametrize("which", ["release", "tarball"])
def test_no_telemetry_host_is_published(released, which):
    target = released["release"]
    if which == "tarball":
        target = next(target.glob("*.tar.gz"))
    seen = _every_byte(target)
    assert any("job_telemetry.parquet" in label for label, _ in seen)
    for label, data in seen:
        for secret in SECRETS:
            assert secret.encode() not in data.lower(), (label, secret)


def test_telemetry_is_still_attached_and_described_without_file_names(released):
    table = datapackage.read(released["release"], resource="job_telemetry")
    assert table.column("gpu_util_mean_pct").to_pylist() == [15.0, 55.0]
    assert table.column("gpu_power_mean_w").to_pylist() == [100.0, 100.0]
    meta = jt.get_metadata(table)["telemetry"]
    assert [(s["file"], s["format"]) for s in meta["sources"]] == [
        ("source 1", "prometheus-json"), ("source 2", "prometheus-text")]
    assert meta["allocations"] == "allocation table"
    assert meta["metric_maps"] == ["dcgm", "node_exporter", "ipmi_exporter"]
    desc = json.loads((released["release"] / "datapackage.json").read_text())
    resource = next(r for r in desc["resources"] if r["name"] == "job_telemetry")
    assert "Sources: source 1 (prometheus-json, resampled), source 2 (prometheus-text, raw)." \
        in resource["description"]


def test_the_telemetry_metadata_does_not_depend_on_where_the_inputs_lie(released, tmp_path):
    args = _inputs(tmp_path)
    _release(args, tmp_path / "again")
    for rel in ("datapackage.json", "data/job_telemetry.parquet", "data/job_telemetry.csv.gz"):
        assert (tmp_path / "again" / rel).read_bytes() == (released["release"] / rel).read_bytes()


# --- planted back, the audit fails ------------------------------------------------------------

def _plant_parquet_metadata(root: Path) -> str:
    path = root / "data" / "job_telemetry.parquet"
    table = pq.read_table(path)
    meta = jt.get_metadata(table)
    meta["telemetry"]["sources"][1]["file"] = f"{FILE_HOST}.prom"
    pq.write_table(jt.with_metadata(table, meta), path)
    return "data/job_telemetry.parquet"


def _plant_description(root: Path) -> str:
    path = root / "datapackage.json"
    desc = json.loads(path.read_text())
    resource = next(r for r in desc["resources"] if r["name"] == "job_telemetry")
    resource["description"] += f" Scraped from {INSTANCE_HOST}.lab:9400."
    path.write_text(json.dumps(desc))
    return "datapackage.json"


def _plant_tar_member(root: Path) -> str:
    _retar(root, {"aaic-synthetic-sample-1.0.0/data/gpu-host-12.json": b"{}\n"})
    return "aaic-synthetic-sample-1.0.0.tar.gz"


def _plant_json_instance(root: Path) -> str:
    (root / "README.md").write_text((root / "README.md").read_text()
                                    + f"\nexporter at {JSON_INSTANCE_HOST}:9400\n")
    return "README.md"


PLANTS = {"parquet metadata": _plant_parquet_metadata, "description": _plant_description,
          "tar member": _plant_tar_member, "json instance": _plant_json_instance}


@pytest.mark.parametrize("place", sorted(PLANTS))
def test_the_audit_fails_when_a_telemetry_host_is_planted_back(released, tmp_path, place):
    root = tmp_path / "release"
    shutil.copytree(released["release"], root)
    assert audit(root, names=_names(released), key=KEY).clean
    file = PLANTS[place](root)
    report = audit(root, names=_names(released), key=KEY)
    leaks = [leak for leak in report.leaks if leak.term.kind == "host"]
    assert not report.clean and leaks, report.render()
    assert {leak.file for leak in leaks} == {file}, report.render()


def test_a_release_that_kept_the_telemetry_names_fails_its_own_audit(released, tmp_path,
                                                                     monkeypatch):
    # the bug: the telemetry metadata published as attach() made it
    monkeypatch.setattr(scrub, "clean_telemetry_table", lambda table, names, notes: table)
    with pytest.raises(InputError, match="leaks raw names") as caught:
        _release(released, tmp_path / "leaky")
    assert f"host name {FILE_HOST!r}" in str(caught.value)
    assert not (tmp_path / "leaky").exists()


# --- the rules, one by one --------------------------------------------------------------------

def test_clean_telemetry_keeps_figures_and_withholds_raw_text():
    meta = {"telemetry": {
        "interval_s": 30, "metrics": ["gpu_util_pct"], "sampling": ["raw"], "gpus_per_node": 8,
        "idle_threshold_pct": 0.0, "energy": "sum", "allocations": "node07-alloc.csv",
        "metric_maps": ["dcgm", "node07-map"], "future_key": "node07",
        "metric_map": [{"source": "m", "match": {"instance": "10.0.0.7:9100", "mode": "idle"},
                        "canonical": "gpu_util_pct", "source_unit": "%", "scale": 1,
                        "type": "gauge", "map": "node07-map"}],
        "sources": [{"file": "node07.prom", "format": "prometheus-text", "samples_read": 3,
                     "rows_mapped": 3, "non_finite_dropped": 0, "sampling": "raw",
                     "warnings": ["node07 is down"]}],
        "description": "Sources: node07.prom"}}
    notes: list[str] = []
    out = scrub.clean_telemetry(meta, lambda text: "node07" in text, notes)["telemetry"]
    assert "node07" not in json.dumps(out)
    assert "future_key" not in out
    assert out["metric_maps"] == ["dcgm", "site map 1"]
    assert out["metric_map"][0]["match"] == {"instance": scrub.WITHHELD, "mode": "idle"}
    assert out["sources"][0]["file"] == "source 1" and out["sources"][0]["samples_read"] == 3
    assert out["sources"][0]["warnings"] == [scrub.WITHHELD]
    assert out["interval_s"] == 30 and "Sources: source 1 (prometheus-text, raw)" in \
        out["description"]
    assert any("future_key" in n for n in notes)


@pytest.mark.parametrize("value, host", [
    ("node07:9100", "node07"), ("http://node07.lab:9100/metrics", "node07.lab"),
    ("[fe80::1]:9100", "fe80::1"), ("node07", "node07"), ("user@node07:22", "node07")])
def test_host_of_label_cuts_scheme_port_and_path(value, host):
    assert host_of_label(value) == host


def test_file_stems_skip_words_every_archive_holds():
    assert file_stem_names("node07.lab.prom.gz") == ["node07.lab", "node07"]
    assert file_stem_names("telemetry.prom") == []  # a word every release contains
    assert file_stem_names("DCGM_FI_DEV_GPU_UTIL.000.json") == ["DCGM_FI_DEV_GPU_UTIL.000"]
    assert file_stem_names("mysite_util.003.json", ["mysite_util"]) == ["mysite_util.003"]
    assert file_stem_names("2023-01-01.json") == []  # no letters: dates are everywhere
    assert file_stem_names("export.json") == []  # a plain word (the description says exporter)


_HOST = st.from_regex(r"[a-z][a-z0-9-]{2,12}[a-z0-9](\.[a-z]{2,5}){0,2}", fullmatch=True)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(host=_HOST, port=st.integers(1, 65535), label=st.sampled_from(
    ["instance", "Hostname", "exported_instance", "nodename"]), as_json=st.booleans())
def test_a_host_label_is_found_in_text_and_json_exports(tmp_path, host, port, label, as_json):
    assume(host.split(".")[0] not in ("none", "unknown"))  # read as "no host"
    path = tmp_path / ("x.json" if as_json else "x.prom")
    if as_json:
        path.write_text(json.dumps({"data": {"result": [
            {"metric": {"__name__": "up", "job": "a", label: f"{host}:{port}"},
             "values": [[T0, "1"]]}]}}, indent=None if port % 2 else 1))
    else:
        path.write_text(f'up{{job="a",{label}="{host}:{port}"}} 1 {T0 * 1000}\n')
    hosts = set(telemetry_names([path]).get("host", []))
    assert host in hosts and host.split(".")[0] in hosts


def test_the_cli_audit_searches_the_telemetry_hosts(released, tmp_path):
    from typer.testing import CliRunner

    from swftools.cli import app

    root = tmp_path / "release"
    shutil.copytree(released["release"], root)
    args = ["audit", str(root), "--raw", str(released["source"]),
            *[a for p in released["samples"] for a in ("--telemetry", str(p))],
            "--allocations", str(released["allocations"])]
    result = CliRunner().invoke(app, args, env={"SWFTOOLS_ANON_KEY": None})
    assert result.exit_code == 0, result.output
    _plant_parquet_metadata(root)
    result = CliRunner().invoke(app, args, env={"SWFTOOLS_ANON_KEY": None})
    assert result.exit_code == 1, result.output
    assert f"host name {FILE_HOST!r}" in result.output


def test_long_tables_and_allocation_tables_give_their_node_names(tmp_path):
    import pyarrow as pa

    long = tmp_path / "export.csv"
    long.write_text(f"ts,node,gpu_index,metric,value\n{T0},secretlong9,0,gpu_util_pct,1\n"
                    f"{T0},10.1.2.3,0,gpu_util_pct,1\n")
    allocations = pa.table({"job_id": [1], "node": ["secretalloc5.lab"], "gpu_index": [0]})
    hosts = telemetry_names([long], allocations)["host"]
    assert {"secretlong9", "10.1.2.3", "secretalloc5.lab", "secretalloc5"} <= set(hosts)
    assert "export" not in hosts  # a plain word: the archive's own text may hold it
