"""Issue 29, privacy leak: a host name in a skipped line reached a release and the audit passed.

The attack: a Slurm log whose bad line holds ``secrethost[07-`` converted with
``--skip-bad-lines``, then anonymized and released. Anonymization must drop every raw string it
does not pseudonymize (skipped lines' values, free text, node names, file names), and the audit
must search hosts and job names too: in every file, file name, Parquet metadata (file level,
Arrow schema, fields), Parquet row group and tar member, reading within caps.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from swftools import table as jt
from swftools.cli import app
from swftools.formats import datapackage
from swftools.privacy.audit import audit
from swftools.privacy.match import Matcher, Term, archive_words
from swftools.privacy.pseudonyms import anonymize
from swftools.privacy.rawnames import host_names, raw_names

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "archive" / "release-settings.example.json"
KEY_FILE = ROOT / "archive" / "example-key.txt"
KEY = KEY_FILE.read_text().strip().encode()
SECRET = "secrethost"
SACCT = (
    "JobID|JobIDRaw|User|Group|Partition|Submit|Start|End|State|NNodes|NCPUS|AllocTRES|NodeList|"
    "JobName\n"
    "1|1|tanaka|physics|gpu|2023-01-01T00:00:00|2023-01-01T00:00:01|2023-01-01T01:00:02|COMPLETED|"
    "2|8|cpu=8,gres/gpu=8,node=2|gpu[01-02]|train_resnet50\n"
    "2|2|suzuki|physics|gpu|2023-01-01T00:10:00|2023-01-01T00:10:05|2023-01-01T02:00:02|COMPLETED|"
    "1|4|cpu=4,gres/gpu=4,node=1|gpu03|eval-run7\n"
    "3|3|kimura|chemlab|gpu|2023-01-01T00:20:00|2023-01-01T00:20:01|2023-01-01T03:00:02|COMPLETED|"
    "1|4|cpu=4,gres/gpu=4,node=1|secrethost[07-|secret_job42\n")
runner = CliRunner()


def _cli(*args) -> None:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output


def _every_byte(path: Path) -> list[tuple[str, bytes]]:
    """Every file below ``path`` (or the file), gzip decompressed, tar members opened: what a
    reader of the published output can see, with the file and member names themselves."""
    out: list[tuple[str, bytes]] = []

    def add(label: str, data: bytes) -> None:
        out.append((label + " (name)", label.encode()))
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        if label.endswith((".tar", ".tar.gz")) or data[257:262] == b"ustar":
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                for info in tar:
                    member = tar.extractfile(info)
                    add(f"{label}!{info.name}", member.read() if member else b"")
            return
        out.append((label, data))
        if label.endswith(".parquet"):
            pf = pq.ParquetFile(io.BytesIO(data))
            out.append((label + " (metadata)", repr(pf.metadata.metadata).encode()))
            out.append((label + " (schema)", repr(pf.schema_arrow).encode()))

    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for p in files:
        add(p.relative_to(path).as_posix() if p != path else p.name, p.read_bytes())
    return out


@pytest.fixture(scope="module")
def attack(tmp_path_factory) -> dict[str, Path]:
    """The reproduced attack, end to end through the CLI: convert, anonymize, release."""
    tmp = tmp_path_factory.mktemp("attack")
    raw = tmp / "raw.sacct"
    raw.write_text(SACCT)
    _cli("convert", raw, "--out", tmp / "pkg", "--skip-bad-lines", "--tz", "UTC")
    assert SECRET in (tmp / "pkg" / "datapackage.json").read_text()  # the bug's precondition
    _cli("anonymize", tmp / "pkg", "--out", tmp / "anon", "--key-file", KEY_FILE)
    _cli("release", tmp / "pkg", "--out", tmp / "release", "--version", "1.0.0", "--settings",
         SETTINGS, "--key-file", KEY_FILE, "--site", "aaic", "--accept-errors")
    return {"raw": raw, "pkg": tmp / "pkg", "anon": tmp / "anon", "release": tmp / "release"}


def test_raw_names_come_from_every_line_of_the_raw_log(attack):
    names = raw_names(attack["raw"], "slurm")
    assert names["user"] == ["kimura", "suzuki", "tanaka"]
    assert names["group"] == ["chemlab", "physics"]
    assert {"gpu01", "gpu02", "gpu03", SECRET} <= set(names["host"])
    assert names["job"] == ["eval-run7", "secret_job42", "train_resnet50"]
    # from the converted package: what its metadata kept of the bad line
    assert SECRET in raw_names(attack["pkg"])["host"]


@pytest.mark.parametrize("which", ["anon", "release"])
def test_the_host_of_a_skipped_line_is_published_nowhere(attack, which):
    for label, data in _every_byte(attack[which]):
        assert SECRET.encode() not in data.lower(), label
        assert b"secret_job42" not in data, label
        assert b"raw.sacct" not in data, label  # the source file name is dropped too
    assert any(label.endswith(".tar.gz!aaic-synthetic-sample-1.0.0/data/jobs.parquet")
               for label, _ in _every_byte(attack["release"]))


def test_anonymized_metadata_keeps_the_skipped_line_numbers_only(attack):
    skipped = jt.get_metadata(datapackage.read(attack["anon"]))["skipped_lines"]
    assert [e["line"] for e in skipped] == [4] and all(set(e) == {"line", "field"}
                                                       for e in skipped)


def test_the_released_archive_and_tarball_pass_the_full_audit(attack):
    names = raw_names(attack["raw"], "slurm")
    for target in (attack["release"], attack["release"] / "aaic-synthetic-sample-1.0.0.tar.gz"):
        report = audit(target, names=names, key=KEY)
        assert report.clean, report.render()
        assert {"user", "group", "host", "job"} <= set(report.searched)


# --- the audit fails when the host name is planted back, in each place ------------------------

def _copy(attack, tmp_path) -> Path:
    out = tmp_path / "release"
    shutil.copytree(attack["release"], out)
    return out


def _rewrite_parquet(path: Path, change) -> None:
    table = pq.read_table(path)
    pq.write_table(change(table), path, row_group_size=1)


def _plant_datapackage(root: Path) -> None:
    desc = json.loads((root / "datapackage.json").read_text())
    desc["swftools"]["metadata"]["jobs"]["note"] = "built on secrethost07"
    (root / "datapackage.json").write_text(json.dumps(desc))


def _plant_schema_metadata(root: Path) -> None:
    _rewrite_parquet(root / "data" / "jobs.parquet", lambda t: t.replace_schema_metadata(
        {**(t.schema.metadata or {}), b"swftools": b'{"skipped_lines": [{"value": "secrethost[07-"}]}'}))


def _plant_field_metadata(root: Path) -> None:
    def change(t: pa.Table) -> pa.Table:
        i = t.schema.get_field_index("queue")
        field = t.schema.field(i).with_metadata({b"comment": b"nodes secrethost07-12"})
        return t.cast(t.schema.set(i, field))
    _rewrite_parquet(root / "data" / "jobs.parquet", change)


def _plant_late_row_group(root: Path) -> None:
    def change(t: pa.Table) -> pa.Table:
        i = t.schema.get_field_index("queue")
        values = t.column(i).to_pylist()
        values[-1] = "secrethost07"
        return t.set_column(i, pa.field("queue", pa.string()), pa.array(values, pa.string()))
    _rewrite_parquet(root / "data" / "jobs.parquet", change)


def _plant_gzip_text(root: Path) -> None:
    path = root / "data" / "jobs.csv.gz"
    text = gzip.decompress(path.read_bytes()) + b"# secrethost07\n"
    path.write_bytes(gzip.compress(text))


def _plant_file_name(root: Path) -> None:
    (root / "notes-secrethost.txt").write_text("nothing to see\n")


def _retar(root: Path, extra: dict[str, bytes]) -> None:
    tarball = next(root.glob("*.tar.gz"))
    buffer = io.BytesIO()
    with tarfile.open(tarball) as old, tarfile.open(fileobj=buffer, mode="w:gz") as new:
        for info in old:
            new.addfile(info, old.extractfile(info) if info.isfile() else None)
        for name, data in extra.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            new.addfile(info, io.BytesIO(data))
    tarball.write_bytes(buffer.getvalue())


def _plant_tar_member(root: Path) -> None:
    _retar(root, {"aaic-synthetic-sample-1.0.0/NOTES.txt": b"ran on SecretHost07\n"})


def _plant_tar_member_name(root: Path) -> None:
    _retar(root, {"aaic-synthetic-sample-1.0.0/secrethost.log": b"\n"})


def _plant_parquet_in_tar(root: Path) -> None:
    scratch = root.parent / "scratch.parquet"
    table = pq.read_table(root / "data" / "jobs.parquet")
    pq.write_table(table.replace_schema_metadata({b"origin": b"secrethost[07-"}), scratch)
    _retar(root, {"aaic-synthetic-sample-1.0.0/data/more.parquet": scratch.read_bytes()})
    scratch.unlink()


def _plant_job_name(root: Path) -> None:
    (root / "README.md").write_text((root / "README.md").read_text() + "\nsee secret_job42\n")


PLANTS = {"datapackage.json": (_plant_datapackage, "datapackage.json"),
          "parquet schema metadata": (_plant_schema_metadata, "data/jobs.parquet"),
          "parquet field metadata": (_plant_field_metadata, "data/jobs.parquet"),
          "parquet late row group": (_plant_late_row_group, "data/jobs.parquet"),
          "gzip text": (_plant_gzip_text, "data/jobs.csv.gz"),
          "file name": (_plant_file_name, "notes-secrethost.txt"),
          "tar member": (_plant_tar_member, "aaic-synthetic-sample-1.0.0.tar.gz"),
          "tar member name": (_plant_tar_member_name, "aaic-synthetic-sample-1.0.0.tar.gz"),
          "parquet in tar": (_plant_parquet_in_tar, "aaic-synthetic-sample-1.0.0.tar.gz"),
          "job name": (_plant_job_name, "README.md")}


@pytest.mark.parametrize("place", sorted(PLANTS))
def test_the_audit_fails_when_the_host_is_planted_back(attack, tmp_path, place):
    root = _copy(attack, tmp_path)
    plant, file = PLANTS[place]
    plant(root)
    report = audit(root, names=raw_names(attack["raw"], "slurm"), key=KEY)
    assert not report.clean
    leaks = [leak for leak in report.leaks if leak.term.kind in ("host", "job")]
    assert leaks and {leak.file for leak in leaks} == {file}, report.render()
    if place == "parquet late row group":
        rows = pq.ParquetFile(root / "data" / "jobs.parquet").metadata.num_rows
        assert [leak.row for leak in leaks] == [rows - 1]


def test_the_cli_audit_of_the_raw_log_finds_a_planted_host(attack, tmp_path):
    root = _copy(attack, tmp_path)
    _plant_tar_member(root)
    result = runner.invoke(app, ["audit", str(root), "--raw", str(attack["raw"]),
                                 "--from", "slurm", "--key-file", str(KEY_FILE)])
    assert result.exit_code == 1
    assert "aaic-synthetic-sample-1.0.0.tar.gz!aaic-synthetic-sample-1.0.0/NOTES.txt:1: host " \
           "name 'secrethost' (substring)" in result.output


# --- bounded reading -------------------------------------------------------------------------

def test_parquet_is_read_by_row_group_never_whole(attack, tmp_path, monkeypatch):
    root = _copy(attack, tmp_path)
    _plant_late_row_group(root)

    def whole(*args, **kwargs):
        raise AssertionError("a whole-file Parquet read")
    monkeypatch.setattr(pq.ParquetFile, "read", whole)
    monkeypatch.setattr(pq, "read_table", whole)
    report = audit(root, names={"host": [SECRET]})
    assert any(leak.file == "data/jobs.parquet" and leak.column == "queue"
               for leak in report.leaks)


def test_out_of_memory_is_a_located_unreadable_entry(attack, tmp_path, monkeypatch):
    root = _copy(attack, tmp_path)

    def no_memory(*args, **kwargs):
        raise MemoryError
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", no_memory)
    report = audit(root, names={"host": [SECRET]})
    assert not report.clean
    places = {(f, m) for f, m, _ in report.unreadable}
    assert ("data/jobs.parquet", None) in places
    assert ("aaic-synthetic-sample-1.0.0.tar.gz",
            "aaic-synthetic-sample-1.0.0/data/jobs.parquet") in places
    assert "could not be scanned: out of memory" in report.render()
    result = runner.invoke(app, ["audit", str(root), "--names", str(_names_file(tmp_path))])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "data/jobs.parquet: could not be scanned: out of memory" in result.output


def _names_file(tmp_path: Path) -> Path:
    path = tmp_path / "names.txt"
    path.write_text(SECRET + "\n")
    return path


def test_an_oversized_tar_member_is_refused_with_its_location(attack):
    from swftools.limits import Limits

    small = Limits.from_env()
    import dataclasses

    small = dataclasses.replace(small, member_bytes=1024)
    tarball = attack["release"] / "aaic-synthetic-sample-1.0.0.tar.gz"
    report = audit(tarball, names={"host": [SECRET]}, limits=small)
    assert not report.clean and report.unreadable
    file, member, reason = report.unreadable[0]
    assert file == tarball.name
    assert "Traceback" not in report.render()


# --- anonymization removes every raw string ---------------------------------------------------

def test_host_lists_give_names_prefixes_and_the_rest_of_a_broken_list():
    assert host_names("secrethost[07-") == [SECRET]
    assert host_names("gpu[01-02],login7") == ["gpu01", "gpu02", "login7", "gpu"]
    assert host_names("n[1-999999999]") == []  # not expanded; a one-letter prefix is no name


def test_job_names_are_searched_as_tokens_unless_ordinary_words():
    matcher = Matcher([Term("train", "job"), Term("resnet50_lr1", "job"), Term("run.sh", "job")])
    assert [t.text for t in matcher.terms] == ["resnet50_lr1"]
    assert matcher.found_in("job resnet50_lr1 ran")
    assert not matcher.found_in("xresnet50_lr1")


def test_alibaba_node_names_are_pseudonymized_and_the_node_list_file_dropped(tmp_path):
    from swftools.formats import alibaba

    pods = ROOT / "tests" / "golden" / "alibaba" / "awkward_pod_list_small.csv"
    raw = raw_names(pods)
    assert "openb-node-0007" in raw["host"]
    result = anonymize(alibaba.read(pods), KEY)
    assert {e.name for e in result.mapping if e.namespace == "host"} == set(raw["host"])
    meta = jt.get_metadata(result.table)
    assert meta["site_settings"]["title"] == "Alibaba GPU cluster (openb node list)"
    datapackage.write(result.table, tmp_path / "pkg")
    for label, data in _every_byte(tmp_path / "pkg"):
        assert b"openb-node" not in data and b"awkward_node_list" not in data, label
    report = audit(tmp_path / "pkg", names=raw, key=KEY)
    assert report.clean, report.render()


_hosts = st.from_regex(r"\A[g-z][a-z]{3,7}[0-9]{2,3}\Z")
_jobs = st.from_regex(r"\A[g-z][a-z]{2,6}_[a-z0-9]{2,5}\Z")


def _place(meta: dict, where: str, text: str) -> None:
    if where == "skipped value":
        meta["skipped_lines"] = [{"line": 5, "field": "NodeList", "value": text,
                                  "message": f"{text!r} is not valid here", "expected": "x"}]
    elif where == "skipped message":
        meta["skipped_lines"] = [{"line": 9, "field": None, "value": "",
                                  "message": f"bad line mentioning {text}", "expected": None}]
    elif where == "swf header":
        meta["swf_header"] = [["Version", "2.2"], ["Computer", f"cluster {text}"],
                              ["Note", text]]
        meta["swf_header_lines"] = ["; Version: 2.2", f"; Computer: cluster {text}"]
    elif where == "swf comment":
        meta["swf_layout"] = {"widths": [1] * 18, "other_lines": [[0, f"; on {text}"]]}
    elif where == "source file":
        meta["source_file"] = f"sacct-{text}.log"
    elif where == "unknown key":
        meta["cluster_notes"] = {"text": f"login node {text}"}
    elif where == "slurm header":
        meta["slurm"] = {"header": ["JobID", f"x {text}"], "jobs": 1}


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(host=_hosts, job=_jobs,
       where=st.lists(st.sampled_from(["skipped value", "skipped message", "swf header",
                                       "swf comment", "source file", "unknown key",
                                       "slurm header"]), min_size=1, max_size=3, unique=True))
def test_random_raw_names_never_survive_and_are_caught_when_planted_back(tmp_path_factory, host,
                                                                         job, where):
    assume(not any(w in archive_words() for w in (host, job)))
    meta = {"time_zone": "UTC", "source_format": "slurm"}
    for i, place in enumerate(where):
        _place(meta, place, host if i % 2 == 0 else job)
    table = jt.from_columns({"job_id": [1, 2], "user": ["tanaka", "suzuki"],
                             "group": ["physics", "physics"], "queue": ["gpu", "gpu"],
                             "submit_time": [1_600_000_000, 1_600_000_100]}, meta)
    result = anonymize(table, KEY)
    published = json.dumps(jt.get_metadata(result.table)).lower()
    assert host not in published and job not in published
    out = tmp_path_factory.mktemp("pkg") / "pkg"
    datapackage.write(result.table, out)
    names = {"user": ["tanaka", "suzuki"], "host": [host], "job": [job]}
    report = audit(out, names=names, key=KEY)
    assert report.clean, report.render()
    # planted back into the Parquet metadata, the audit must fail
    _rewrite_parquet(out / "data" / "jobs.parquet", lambda t: t.replace_schema_metadata(
        {**(t.schema.metadata or {}), b"x": f"{host} {job}".encode()}))
    planted = audit(out, names=names, key=KEY)
    assert {leak.term.text for leak in planted.leaks} >= {host, job}


def test_pbs_records_name_hosts_users_and_jobs_even_when_malformed():
    from swftools.privacy.rawnames import Collector, pbs_line

    found = Collector()
    pbs_line("04/01/2023 10:00:00;E;123.pbsserver.example.org;user=alice group=lab "
             "jobname=run_7 exec_host=node01/0*8+node02/0-3 exec_vnode=(gpu5:ncpus=4) "
             "requestor=bob@login3", found)
    pbs_line("not a record exec_host=secrethost[07- user=carol", found)
    names = found.result()
    assert names["user"] == ["alice", "bob", "carol"] and names["job"] == ["run_7"]
    assert names["host"] == ["gpu5", "login3", "node01", "node02", "pbsserver.example.org",
                             SECRET]
