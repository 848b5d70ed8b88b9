"""swftools.release.pipeline.release: whole small releases, each made inside its test (so that a
mutation run attributes it), checked stage by stage: the result's fields, the telemetry branch,
the key and time-shift decisions, the audit's notes and refusals (each message whole), and that
a refused release leaves nothing on disk."""

from __future__ import annotations

import calendar
import csv
import dataclasses
import gzip
import hashlib
import json
import tarfile
from datetime import datetime
from pathlib import Path

import pytest

from swftools import formats
from swftools import table as jt
from swftools.atomic import MARKER
from swftools.errors import InputError, UsageError
from swftools.formats import datapackage
from swftools.privacy import rawnames
from swftools.privacy.audit import nothing_to_search
from swftools.release import pipeline
from swftools.release.pipeline import STAGES, release
from swftools.release.settings import load_settings
from swftools.release.tarball import write_tarball
from swftools.site import resolve_site

from tests.test_formats_slurm import GOOD as SLURM_GOOD, HEADER as SLURM_HEADER
from tests.test_release_pipeline import KEY, NAME, OVERSIZED, ROOT, SETTINGS, _all_files

SAMPLE = ROOT / "samples" / "aaic-sample.csv.gz"
WEEK = 7 * 86400
# two 8-processor jobs of users 1 and 2 (group 1), both running over [T0, T0 + 600) s
T0 = 1_500_000_000  # the traces' UnixStartTime: 2017-07-14 02:40:00 UTC
TWO_JOBS = (f"; Version: 2.2\n; MaxProcs: 16\n; UnixStartTime: {T0}\n"
            "1 0 0 600 8 -1 -1 8 3600 -1 1 1 1 -1 1 -1 -1 -1\n"
            "2 0 0 600 8 -1 -1 8 3600 -1 1 2 1 -1 1 -1 -1 -1\n")
# job 1 twice, the second submitted before the first: job-id-unique and submit-order errors
TWO_ERRORS = ("; Version: 2.2\n; MaxProcs: 16\n"
              "1 5 0 10 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n"
              "1 0 0 10 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n")


def _tiny_site():
    """One node of 8 GPUs, a site that is no preset and has no settings file."""
    return dataclasses.replace(resolve_site("aaic"), name="tiny", settings={}, gpus_per_node=8,
                               capacity_since=(0,), capacity_nodes=(1,))


def _telemetry(folder: Path, node: str, t0: int, other: str = "gpunode09", gpus: int = 8) -> dict:
    """GPU 0 of ``node`` at 10, 30 and 50 % a minute apart from ``t0``; job 1 holds ``gpus``
    GPUs of the node, job 2 as many of node ``other``, which sent nothing."""
    samples = folder / "s.csv"
    samples.write_text("ts,node,gpu_index,metric,value\n" + "".join(
        f"{t0 + 60 * m},{node},0,gpu_util_pct,{10 + 20 * m}\n" for m in range(3)))
    alloc = folder / "alloc.csv"
    alloc.write_text("job_id,node,gpu_index\n" + "".join(
        f"{job},{name},{gpu}\n" for job, name in ((1, node), (2, other)) for gpu in range(gpus)))
    return {"samples": [samples], "allocations": alloc, "metric_map": None}


def _telemetry_rows(out: Path) -> dict[str, dict[str, str]]:
    with gzip.open(out / "data" / "job_telemetry.csv.gz", "rt") as fh:
        return {row["job_id"]: row for row in csv.DictReader(fh)}


def _nqsii_head(path: Path, jobs: int = 5, *, queue: str = "Normal") -> Path:
    """The first ``jobs`` jobs of the AAIC sample (raw user and group names, queue Normal)."""
    lines = gzip.decompress(SAMPLE.read_bytes()).decode().splitlines(keepends=True)
    path.write_text("".join(lines[:jobs + 1]).replace(",Normal,", f",{queue},"))
    return path


def _mkdtemp_spy(monkeypatch) -> list:
    """Record the folder each ``tempfile.mkdtemp`` call creates its folder in."""
    import tempfile

    real, seen = tempfile.mkdtemp, []

    def spy(*args, **kwargs):
        path = real(*args, **kwargs)
        seen.append((kwargs.get("prefix"), Path(path).parent))
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", spy)
    return seen


def test_a_release_with_a_site_and_telemetry_in_full(tmp_path, monkeypatch, stub_figures):
    """No key, numeric ids, a site object and telemetry naming a host: every stage's part of the
    result, the telemetry resource (joined with the allocations), the audit of the host names."""
    trace = tmp_path / "two.swf"
    trace.write_text(TWO_JOBS)
    out, stages = tmp_path / "rel", []
    settings = load_settings(SETTINGS)  # a settings dict is used as it is
    spy = _mkdtemp_spy(monkeypatch)
    result = release(trace, out, version="2.1.0", settings=settings, site=_tiny_site(),
                     accept_errors=True, telemetry=_telemetry(tmp_path, "gpunode07", T0),
                     on_stage=stages.append)
    assert stages == list(STAGES)
    tarball = f"{NAME}-2.1.0.tar.gz"
    assert result.out_dir == out and result.tarball == out / tarball
    assert result.tarball_sha256 == hashlib.sha256((out / tarball).read_bytes()).hexdigest()
    assert result.files[-1] == tarball and sorted(result.files) == _all_files(out)
    assert "data/job_telemetry.csv.gz" in result.files
    # validated and replayed on the site: two 8-GPU jobs on its one 8-GPU node for the 600 s
    # both run (16 GPUs and 2 nodes held at once), an error each, published with accept_errors
    assert sorted(result.validation.fired("error")) == ["capacity-gpus", "capacity-nodes"]
    assert "x 8 GPUs" in result.replay_findings[0] and "2 replayed" in result.replay_findings[0]
    assert result.replay_findings[1] == ("Capacity violations in the recorded schedule: 1 period, "
                                         "600 s in total, at most 8 GPUs over capacity.")
    # the telemetry: job 1's three samples (mean 30 %, max 50 %); job 2's node sent nothing
    rows = _telemetry_rows(out)
    assert (rows["1"]["gpu_samples_observed"], rows["1"]["gpu_util_mean_pct"],
            rows["1"]["gpu_util_max_pct"]) == ("3", "30", "50")
    assert rows["2"]["gpu_samples_observed"] == "0" and rows["2"]["telemetry_null_reason"]
    # DuckDB's spill folder is made beside the output, not in the system's temporary folder
    assert (".swftools-telemetry.", tmp_path) in spy
    # the host names are sought (no key: none to seek); the ids are numbers, nothing else
    files = len(result.files) - 2  # the audit runs before SHA256SUMS and the tarball
    assert result.notes[0] == ("telemetry: the 1 sample file name and the allocation file name "
                               "replaced by 'source N' (file names may name hosts)")
    assert all(note.startswith("telemetry: ") for note in result.notes[1:-1])
    assert result.notes[-1] == f"audit: no raw name (host) in {files} files"
    assert result.nothing_to_search is None
    readme = (out / "README.md").read_text()
    assert all(f"- {text}" in readme for text in result.replay_findings)
    assert "8 in all" in readme and "keyed pseudonyms" not in readme
    desc = json.loads((out / "datapackage.json").read_text())
    assert desc["version"] == "2.1.0"
    assert "job_telemetry" in [r["name"] for r in desc["resources"]]
    with tarfile.open(out / tarball) as tar:
        assert {m.name.split("/")[0] for m in tar.getmembers()} == {f"{NAME}-2.1.0"}


def test_a_release_named_like_its_preset_counts_the_unsearchable_ids(tmp_path, monkeypatch,
                                                                      stub_figures):
    """``--site aaic`` into a folder named ``aaic``: a preset name is no input file. Nothing
    can be searched: users 1 and 2 and group 1 are numbers, and the one telemetry host, named by
    the site metric map's node label, is ``queue``, a word every archive holds (4 in all)."""
    (tmp_path / "two.swf").write_text(TWO_JOBS)
    site_map = {"name": "site-map", "node_label": "rack_slot", "gpu_label": "gpu",
                "metrics": [{"source": "site_util9", "canonical": "gpu_util_pct", "type": "gauge",
                             "unit": "%", "scale": 1}]}
    (tmp_path / "site-map.json").write_text(json.dumps(site_map))
    (tmp_path / "x.prom").write_text("".join(
        f'site_util9{{rack_slot="queue",gpu="0"}} {10 + 20 * m} {(T0 + 60 * m) * 1000}\n'
        for m in range(3)))
    monkeypatch.chdir(tmp_path)
    result = release("two.swf", "aaic", version="1.0.0", settings=SETTINGS, site="aaic",
                     telemetry={"samples": ["x.prom"], "metric_map": "site-map.json"})
    assert result.out_dir == Path("aaic") and result.tarball == Path("aaic") / f"{NAME}-1.0.0.tar.gz"
    assert result.nothing_to_search == nothing_to_search(4)
    assert not any(note.startswith("audit") for note in result.notes)
    assert "keyed pseudonyms" not in (tmp_path / "aaic" / "README.md").read_text()


def test_a_keyed_release_with_telemetry_seeks_every_raw_name(tmp_path, stub_figures):
    """Raw user and group names, a key, telemetry: the audit seeks the job log's names and the
    telemetry hosts, those only the allocation table names included (the sampled node is
    ``queue``, a word every archive holds: the host that can be sought is job 2's
    ``gpunode09``); the times stay as recorded (no shift asked for)."""
    source = _nqsii_head(tmp_path / "head.csv")
    raw = formats.read(source)
    telemetry = _telemetry(tmp_path, "queue", raw.column("start_time")[0].as_py(), gpus=1)
    out = tmp_path / "rel"
    result = release(source, out, version="1.0.0", settings=SETTINGS, key=KEY, telemetry=telemetry)
    files = len(result.files) - 2
    assert result.notes[-1] == f"audit: no raw name (group, host, user), nor the key, in {files} files"
    assert result.nothing_to_search is None
    assert _telemetry_rows(out)["1"]["gpu_samples_observed"] == "3"
    published = formats.read(out)
    assert published.column("submit_time").to_pylist() == raw.column("submit_time").to_pylist()
    readme = (out / "README.md").read_text()
    assert "keyed pseudonyms (HMAC-SHA256)" in readme and "all times shifted" not in readme


def test_a_site_file_reads_the_log_and_a_shift_moves_every_time(tmp_path, stub_figures):
    """A site file (AAIC with its clock on UTC and queue Normal renamed Standard) reads the
    log: the times are the log's wall-clock times as UTC, moved by the 2 weeks asked for. The
    archive released again without ``--site`` keeps that site (its metadata names it)."""
    site = json.loads((ROOT / "schemas" / "sites" / "aaic.json").read_text())
    site.pop("$schema")
    site.update(name="utc-site", time_zone="UTC")
    site["queues"][0]["name"] = "Standard"
    site_file = tmp_path / "utc-site.json"
    site_file.write_text(json.dumps(site))
    source = _nqsii_head(tmp_path / "head.csv", 2, queue="Standard")
    out = tmp_path / "rel"
    release(source, out, version="1.0.0", settings=SETTINGS, key=KEY, site=site_file,
            time_shift_weeks=2)
    # the first two jobs were submitted at 2017-07-14 00:16:32 and 00:49:33 (the log's text)
    recorded = [calendar.timegm(datetime(2017, 7, 14, 0, m, s).timetuple())
                for m, s in ((16, 32), (49, 33))]
    assert formats.read(out).column("submit_time").to_pylist() == [t + 2 * WEEK for t in recorded]
    assert "all times shifted by a whole number of weeks" in (out / "README.md").read_text()
    again = tmp_path / "again"
    release(out, again, version="1.0.1", settings=SETTINGS)
    assert f"{40 * 8} in all" in (again / "README.md").read_text()  # utc-site: 40 nodes x 8


def test_a_slurm_logs_node_names_are_sought_too(tmp_path, stub_figures):
    """The audit seeks the host names of a Slurm log's NodeList (read from its lines: the job
    table keeps no host column) besides its user and group."""
    log = tmp_path / "sacct.txt"
    log.write_text(f"{SLURM_HEADER}\n"
                   + SLURM_GOOD.replace("5|5|u|g|gpu|", "6|6|alice01|lab7|Normal|").replace(
                       "gpu01", "gpunode07") + "\n")
    result = release(log, tmp_path / "rel", version="1.0.0", settings=SETTINGS, key=KEY, site="aaic")
    files = len(result.files) - 2
    assert result.notes == [f"audit: no raw name (group, host, user), nor the key, in {files} files"]


def test_a_keyed_release_of_an_anonymized_package_seeks_the_node_names_it_renames(tmp_path,
                                                                                    stub_figures):
    """A package already anonymized, whose Alibaba node list holds (pseudonymous) node names:
    the job log's own names leave those out (they are published as they are without a key), but
    with a key anonymization renames them, so the audit seeks them as the hosts they were."""
    trace = tmp_path / "two.swf"
    trace.write_text(TWO_JOBS)
    table = formats.read(trace)
    meta = {**jt.get_metadata(table),
            "anonymization": {"method": "HMAC-SHA256, 16 hex digits", "time_shifted": False},
            "alibaba": {"nodes": {"runs": [{"nodes": 1, "names": ["h0123456789abcdef"]}]}}}
    datapackage.write(jt.with_metadata(table, meta), tmp_path / "package")
    result = release(tmp_path / "package", tmp_path / "rel", version="1.0.0", settings=SETTINGS,
                     key=KEY)
    files = len(result.files) - 2
    assert result.notes == [f"audit: no raw name (host), nor the key, in {files} files"]


def _leak_into_tarball(monkeypatch, text: str) -> None:
    """A tarball writer that adds a file holding ``text`` (after the folder was audited)."""
    def write(root, target, prefix, files):
        (root / "extra.txt").write_text(text)
        write_tarball(root, target, prefix, [*files, "extra.txt"])

    monkeypatch.setattr(pipeline, "write_tarball", write)


def test_the_key_or_a_raw_name_is_sought_in_the_archive_and_in_the_tarball(tmp_path, monkeypatch,
                                                                            stub_figures):
    """The key in the archive, and the key or a raw name in a tarball member written after the
    folder's audit: each stops the release, naming the source and what leaked where."""
    trace = tmp_path / "two.swf"
    trace.write_text(TWO_JOBS)
    out = tmp_path / "rel"
    settings = load_settings(SETTINGS)
    keyed = {**settings, "description": f"{settings['description']} {KEY.decode()}"}
    with pytest.raises(InputError) as info:
        release(trace, out, version="1.0.0", settings=keyed, key=KEY)
    assert info.value.path == str(trace)
    assert info.value.message.startswith("the archive leaks raw names:\n")
    assert "the anonymization key" in info.value.message
    _leak_into_tarball(monkeypatch, f"{KEY.decode()}\n")
    with pytest.raises(InputError) as info:
        release(trace, out, version="1.0.0", settings=SETTINGS, key=KEY)
    assert info.value.path == str(trace)
    assert info.value.message.startswith("the tarball leaks raw names:\n")
    assert "the anonymization key" in info.value.message
    monkeypatch.setattr(rawnames, "raw_names", lambda *a, **k: {"host": ["gpunode07"]})
    _leak_into_tarball(monkeypatch, "ran on gpunode07\n")
    with pytest.raises(InputError) as info:
        release(trace, out, version="1.0.0", settings=SETTINGS, key=KEY)
    assert info.value.path == str(trace)
    assert info.value.message.startswith("the tarball leaks raw names:\n")
    assert "gpunode07" in info.value.message and "extra.txt" in info.value.message
    assert not out.exists()


def test_refusals_name_what_is_wrong_and_write_nothing(tmp_path, monkeypatch, stub_figures):
    """Each refusal's message whole; none leaves anything behind or reaches a stage it should
    not have."""
    trace = tmp_path / "two.swf"
    trace.write_text(TWO_JOBS)
    out, stages = tmp_path / "rel", []
    # raw names and no key
    source = _nqsii_head(tmp_path / "head.csv", 2)
    with pytest.raises(UsageError) as usage:
        release(source, out, version="1.0.0", settings=SETTINGS)
    assert str(usage.value) == ("the source holds raw user/group names: give --key-file (or set "
                                "SWFTOOLS_ANON_KEY) so that they are pseudonymized or dropped")
    # validation errors, without --accept-errors (the default)
    errors = tmp_path / "errors.swf"
    errors.write_text(TWO_ERRORS)
    with pytest.raises(InputError) as info:
        release(errors, out, version="1.0.0", settings=SETTINGS)
    assert str(info.value) == (f"{errors}: validation found 2 errors (job-id-unique, submit-order); "
                               "fix the source or pass --accept-errors to publish them as known "
                               "issues")
    # warnings with --strict: job 1 holds and asks for 8 of 4 processors, 10 s over capacity
    big = tmp_path / "big.swf"
    big.write_text(OVERSIZED)
    with pytest.raises(InputError) as info:
        release(big, out, version="1.0.0", settings=SETTINGS, strict=True)
    assert str(info.value) == (f"{big}: validation found 3 warnings (capacity-gpus, "
                               "job-exceeds-machine) and --strict makes warnings fail; fix the "
                               "source or release without --strict to publish them as known issues")
    # a file where the output folder goes: refused before the source is read, even with --force
    out.write_text("a file")
    with pytest.raises(UsageError) as usage:
        release(trace, out, version="1.0.0", settings=SETTINGS, force=True, on_stage=stages.append)
    assert str(usage.value) == (f"{out}: already exists and is not a folder; not replacing it "
                                "with one, even with --force")
    assert stages == [] and out.read_text() == "a file"
    out.unlink()
    # an input inside the output it would replace (a folder swftools wrote, with --force)
    out.mkdir()
    (out / MARKER).write_text("")
    site_file = out / "tiny.json"
    site_file.write_text((ROOT / "schemas" / "sites" / "aaic.json").read_text())
    inside, outside = _telemetry(out, "gpunode07", T0), _telemetry(tmp_path, "gpunode07", T0)
    for item, options in ((site_file, {"site": site_file}),
                          (inside["samples"][0], {"telemetry": {"samples": inside["samples"]}}),
                          (inside["allocations"], {"telemetry": {
                              "samples": outside["samples"], "allocations": inside["allocations"]}})):
        with pytest.raises(UsageError) as usage:
            release(trace, out, version="1.0.0", settings=SETTINGS, force=True,
                    on_stage=stages.append, **options)
        assert str(usage.value) == (f"{item}: this input is inside the output {out}, which the "
                                    "output would replace; write the output elsewhere")
    assert stages == [] and sorted(p.name for p in out.iterdir()) == sorted(
        [MARKER, "tiny.json", "s.csv", "alloc.csv"])
    # a parent folder swftools may not write into
    monkeypatch.setattr(pipeline.os, "access", lambda path, mode: False)
    with pytest.raises(UsageError) as usage:
        release(trace, tmp_path / "new", version="1.0.0", settings=SETTINGS)
    assert str(usage.value) == f"{tmp_path}: output parent directory is not writable"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["two.swf", "head.csv", "errors.swf", "big.swf", "s.csv", "alloc.csv", "rel"])
