"""Leak audit: matching policy, every file kind, the report, k-anonymity figures, the CLI."""

from __future__ import annotations

import base64
import gzip
import io
import json
import tarfile
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

import jsonschema
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from swftools import table as jt
from swftools.privacy.pseudonyms import anonymize, pseudonym
from swftools.privacy.audit import audit, names_from_table, read_names_file
from swftools.privacy.kanon import reidentification_report
from swftools.privacy.match import Matcher, Term, key_terms
from swftools.privacy.scan import MAX_LOCATIONS
from swftools.errors import InputError, UsageError
from swftools.resources import load_json

from .strategies import aaic_jobs, hex_like_names, plain_names, raw_user_names

KEY = b"audit-test-key-0123456789abcdef-swftools"  # 32+ bytes
USERS = ["tanaka", "sato", "ab", "Kobayashi"]
GROUPS = ["lab-vision", "lab-nlp"]


def _raw_table(n: int = 12) -> pa.Table:
    return jt.from_columns({
        "job_id": list(range(1, n + 1)),
        "user": [USERS[i % len(USERS)] for i in range(n)],
        "group": [GROUPS[i % len(GROUPS)] for i in range(n)],
        "queue": [("Normal", "Short", "Middle", "Long")[i % 4] for i in range(n)],
        "nodes": [1] * n, "gpus_per_node": [1 + i % 2 for i in range(n)],
        "requested_walltime_s": [3600 * (1 + i % 3) for i in range(n)],
        "submit_time": [1_500_000_000 + 3600 * i for i in range(n)],
    }, {"time_zone": "Asia/Tokyo", "source_file": "raw.csv"})


def _names() -> dict[str, list[str]]:
    return names_from_table(_raw_table())


def _hits(text: str | bytes, *terms: Term, **kw) -> list[tuple[str, str]]:
    data = text.encode() if isinstance(text, str) else text
    return [(str(h.term.text), h.match) for h in Matcher(terms).scan(data, **kw)]


# --- matching policy -----------------------------------------------------------------------

def test_long_names_match_as_substrings_case_insensitively():
    term = Term("tanaka", "user")
    assert _hits("owner: Tanaka\n", term) == [("tanaka", "token")]
    assert _hits("/home/TANAKAlab/run.sh", term) == [("tanaka", "substring")]


def test_short_names_match_only_as_whole_tokens():
    term = Term("ab", "user")
    assert _hits("user ab ran", term) == [("ab", "token")]
    assert _hits("table about labs ab_x 1ab", term) == []


def test_numeric_and_vocabulary_names_are_unsearchable():
    matcher = Matcher([Term("1017", "user"), Term("user", "user"), Term("Normal", "group"),
                       Term("test", "user"), Term("ito", "user")])
    assert [t.text for t in matcher.terms] == ["ito"]
    assert {t.text: r.split(":")[0] for t, r in matcher.unsearchable} == {
        "1017": "numeric-only", "user": "a word every archive contains",
        "Normal": "a word every archive contains", "test": "a word every archive contains"}


@given(st.lists(hex_like_names, min_size=1, max_size=20, unique=True),
       st.lists(raw_user_names, min_size=1, max_size=30, unique=True))
def test_pseudonyms_and_digests_are_never_flagged(raw_names, published):
    matcher = Matcher([Term(n, "user") for n in raw_names])
    lines = [f"{i},{pseudonym(p, KEY, 'user')},{pseudonym(p, KEY, 'group')}"
             for i, p in enumerate(published)]
    lines.append("3f" * 32 + "  data/jobs.csv.gz")  # a SHA256SUMS line
    assert [h for h in matcher.scan("\n".join(lines).encode())
            if not str(h.term.text).isdigit()] == []


def test_hex_only_name_is_still_found_in_prose():
    assert _hits("a babel: abe was here", Term("abe", "user")) == [
        ("abe", "substring"), ("abe", "token")]


def test_a_name_inside_a_word_of_the_archive_text_is_not_a_hit():
    # "label" and "schemas" are words every archive's schemas and templates contain
    assert _hits("a label, schemas/jobs.json", Term("abe", "user"), Term("chem", "group")) == []
    assert _hits("chem-lab", Term("chem", "group")) == [("chem", "token")]


@given(st.lists(plain_names, min_size=1, max_size=15, unique=True),
       st.integers(0, 50), st.data())
def test_a_planted_name_is_found_on_its_line(raw_names, line_no, data):
    matcher = Matcher([Term(n, "user") for n in raw_names])
    name = data.draw(st.sampled_from([t.text for t in matcher.terms])) if matcher.terms else None
    lines = ["1,2,3,Normal"] * 51
    if name is not None:
        lines[line_no] = f"7,{name.upper()},x"
    found = {(line, str(h.term.text)) for line, h in matcher.scan_lines("\n".join(lines).encode())}
    if name is not None:
        assert (line_no + 1, name) in found


def test_non_ascii_names_are_found_raw_and_json_escaped():
    term = Term("田中", "user")
    assert _hits("担当: 田中さん".replace("さん", " "), term) == [("田中", "token")]
    assert _hits(json.dumps({"owner": "田中"}), term) == [("田中", "token")]


def test_key_is_found_in_every_form_and_never_printed():
    terms = key_terms(KEY)
    for form in (KEY, KEY.hex().upper().encode(), base64.b64encode(KEY),
                 base64.urlsafe_b64encode(KEY).rstrip(b"=")):
        hits = Matcher(terms).scan(b"x=" + form + b"\n")
        assert hits and all(h.term.kind == "key" for h in hits)
        assert all(KEY.decode() not in h.term.describe() for h in hits)


def test_binary_files_report_whole_tokens_only():
    assert _hits(b"\x00\x01xtanakax\x00", Term("tanaka", "user"), tokens_only=True) == []
    assert _hits(b"\x00\x01 tanaka\x00", Term("tanaka", "user"), tokens_only=True) == [
        ("tanaka", "token")]


# --- every file kind -----------------------------------------------------------------------

def _clean_release(root: Path) -> Path:
    """A release-like folder built from the anonymized table, with every file kind."""
    table = anonymize(_raw_table(), KEY).table
    out = root / "release"
    (out / "data").mkdir(parents=True)
    pq.write_table(table, out / "data" / "jobs.parquet")
    pcsv.write_csv(table, out / "data" / "jobs.csv")
    csv_bytes = (out / "data" / "jobs.csv").read_bytes()
    (out / "data" / "jobs.csv.gz").write_bytes(gzip.compress(csv_bytes, mtime=0))
    (out / "README.md").write_text("# Example trace\n\nUsers are pseudonyms (HMAC-SHA256).\n"
                                   "Table with labels; see the user and group columns.\n")
    (out / "meta.json").write_text(json.dumps(jt.get_metadata(table), indent=1))
    (out / "SHA256SUMS").write_text("".join(
        f"{'ab' * 32}  {p}\n" for p in ("README.md", "data/jobs.csv")))
    return out


def _tar(source: Path, target: Path, extra: dict[str, bytes] | None = None) -> Path:
    with tarfile.open(target, "w:gz") as tar:
        tar.add(source, arcname=source.name)
        for name, data in (extra or {}).items():
            info = tarfile.TarInfo(f"{source.name}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return target


def _zip(source: Path, target: Path, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                archive.write(path, f"{source.name}/{path.relative_to(source)}")
        for name, data in (extra or {}).items():
            archive.writestr(f"{source.name}/{name}", data)
    return target


def test_clean_release_has_no_hits(tmp_path):
    out = _clean_release(tmp_path)
    _tar(out, out / "release.tar.gz")
    _zip(out, tmp_path / "release.zip")
    for target in (out, tmp_path / "release.zip"):
        report = audit(target, _names(), key=KEY)
        assert report.clean, report.render()
        assert report.reidentification is not None and report.reidentification.jobs == 12
    assert audit(out, _names(), key=KEY).files_scanned == 6 + 6  # 6 files + the 6 members of the tarball


def _only_hit(report, kind="user"):
    assert not report.clean
    return [leak for leak in report.leaks if leak.term.kind == kind]


def test_name_in_a_csv_cell(tmp_path):
    out = _clean_release(tmp_path)
    path = out / "data" / "jobs.csv"
    lines = path.read_text().splitlines()
    at = lines[0].split(",").index('"user"')
    lines[3] = lines[3].replace(lines[3].split(",")[at], '"sato"')
    path.write_text("\n".join(lines) + "\n")
    [leak] = _only_hit(audit(out, _names(), key=KEY))
    assert (leak.file, leak.line, leak.term.text, leak.match) == (
        "data/jobs.csv", 4, "sato", "token")


def test_name_in_gzip(tmp_path):
    out = _clean_release(tmp_path)
    text = gzip.decompress((out / "data" / "jobs.csv.gz").read_bytes()) + b"9,Kobayashi,x\n"
    (out / "data" / "jobs.csv.gz").write_bytes(gzip.compress(text))
    [leak] = _only_hit(audit(out, _names(), key=KEY))
    assert (leak.file, leak.line, leak.term.text) == ("data/jobs.csv.gz", 14, "Kobayashi")
    assert "data/jobs.csv.gz:14: user name 'Kobayashi' (token)" in audit(out, _names()).render()


def test_name_in_a_parquet_string_column_and_metadata(tmp_path):
    out = _clean_release(tmp_path)
    table = pq.read_table(out / "data" / "jobs.parquet")
    users = table.column("user").to_pylist()
    users[5] = users[7] = "tanaka"
    table = table.set_column(table.schema.get_field_index("user"), "user", pa.array(users))
    table = table.append_column("comment", pa.array([None] * 11 + ["ask Sato-san"]))
    meta = dict(table.schema.metadata)
    meta[b"origin"] = b"exported by lab-nlp"
    pq.write_table(table.replace_schema_metadata(meta), out / "data" / "jobs.parquet")
    leaks = {(l.column, l.row, l.rows, l.metadata_key, str(l.term.text))
             for l in audit(out, _names()).leaks}
    assert leaks == {("user", 5, 2, None, "tanaka"), ("comment", 11, 1, None, "sato"),
                     (None, None, None, "origin", "lab-nlp")}


def test_name_in_readme_prose(tmp_path):
    out = _clean_release(tmp_path)
    with open(out / "README.md", "a") as fh:
        fh.write("\nThanks to the Vision lab (lab-vision) for the data.\n")
    [leak] = _only_hit(audit(out, _names()), kind="group")
    assert (leak.file, leak.line, leak.term.text) == ("README.md", 6, "lab-vision")


@pytest.mark.parametrize("pack", [_tar, _zip])
def test_name_in_an_archive_member(tmp_path, pack):
    out = _clean_release(tmp_path)
    suffix = ".tar.gz" if pack is _tar else ".zip"
    nested = gzip.compress(b"line one\nrun by tanaka\n")
    archive = pack(out, tmp_path / f"release{suffix}", {"notes/log.txt.gz": nested})
    [leak] = _only_hit(audit(archive, _names()))
    assert (leak.file, leak.member, leak.line) == (archive.name, "release/notes/log.txt.gz", 2)
    assert leak.where() == f"{archive.name}!release/notes/log.txt.gz:2"


def test_key_leak_in_json_is_found(tmp_path):
    out = _clean_release(tmp_path)
    (out / "config.json").write_text(json.dumps({"secret": base64.b64encode(KEY).decode()}))
    report = audit(out, _names(), key=KEY)
    [leak] = _only_hit(report, kind="key")
    assert leak.file == "config.json" and leak.line == 1
    rendered = report.render() + report.to_json()
    assert KEY.decode() not in rendered and base64.b64encode(KEY).decode() not in rendered


def test_hosts_are_searched(tmp_path):
    out = _clean_release(tmp_path)
    (out / "extra.txt").write_text("ran on aaic-n07.example.jp\n")
    [leak] = _only_hit(audit(out, _names(), hosts=["aaic-n07"]), kind="host")
    assert leak.file == "extra.txt"


def test_many_hits_are_counted_and_capped(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("tanaka,1\n" * (MAX_LOCATIONS + 50))
    report = audit(path, _names())
    assert len(report.leaks) == MAX_LOCATIONS and report.hit_count == MAX_LOCATIONS + 50
    assert "... and 140 more occurrences" in report.render()


def test_unreadable_file_is_not_clean(tmp_path):
    out = _clean_release(tmp_path)
    data = (out / "data" / "jobs.csv.gz").read_bytes()
    (out / "data" / "jobs.csv.gz").write_bytes(data[: len(data) // 2])
    report = audit(out, _names())
    assert not report.clean and not report.leaks
    assert report.unreadable[0][0] == "data/jobs.csv.gz"


def test_json_report_follows_its_schema(tmp_path):
    out = _clean_release(tmp_path)
    (out / "README.md").write_text("by tanaka\n")
    document = json.loads(audit(out, _names(), key=KEY).to_json())
    jsonschema.validate(document, load_json("audit-report.schema.json"))
    assert document["clean"] is False and document["leaks"][0]["line"] == 1


def test_names_file_and_raw_table_inputs(tmp_path):
    path = tmp_path / "names.txt"
    path.write_text("# users\ntanaka\n\n  sato  \n")
    assert read_names_file(path) == ["tanaka", "sato"]
    with pytest.raises(InputError, match="no user column"):
        names_from_table(pa.table({"job_id": [1]}), "raw.csv")


def test_missing_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        audit(tmp_path / "nothing", _names())


# --- re-identification report --------------------------------------------------------------

@given(aaic_jobs())
def test_reidentification_figures_match_brute_force(table):
    qis = ("queue", "nodes", "gpus_per_node", "requested_walltime_s")
    report = reidentification_report(table, qis)
    rows = table.to_pylist()
    classes: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        classes[tuple(row[q] for q in qis)].append(row)
    sizes = Counter({k: len(v) for k, v in classes.items()})
    assert report.jobs == len(rows) and report.classes == len(classes)
    assert report.k == (min(sizes.values()) if rows else 0)
    assert report.jobs_in_classes_below[1] == sum(1 for v in classes.values() if len(v) == 1)
    single = [v for v in classes.values() if len({r["user"] for r in v}) == 1]
    assert report.single_user_classes == len(single)
    assert report.identifiable_users == len({v[0]["user"] for v in single})
    if rows:
        assert report.smallest[0]["jobs"] == report.k


def test_submit_hour_is_local_to_the_site():
    table = jt.from_columns({"job_id": [1, 2], "user": ["a", "b"], "queue": ["Normal"] * 2,
                             "submit_time": [1_500_000_000, 1_500_000_000 + 3600]},
                            {"time_zone": "Asia/Tokyo"})
    report = reidentification_report(table, ("queue", "submit_hour"))
    assert report.hour_time_zone == "Asia/Tokyo"
    assert sorted(s["values"]["submit_hour"] for s in report.smallest) == [11, 12]  # UTC 02, 03


def test_unknown_quasi_identifier_is_refused():
    with pytest.raises(UsageError, match="'color' is not a column"):
        reidentification_report(_raw_table(), ("queue", "color"))


# --- CLI -----------------------------------------------------------------------------------

@pytest.fixture
def cli(monkeypatch):
    from typer.testing import CliRunner

    from swftools.cli import app

    monkeypatch.delenv("SWFTOOLS_ANON_KEY", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, [str(a) for a in args])


def test_cli_audit_reports_every_hit_and_exits_1(cli, tmp_path):
    out = _clean_release(tmp_path)
    (out / "README.md").write_text("by tanaka\nand Sato\n")
    names = tmp_path / "names.txt"
    names.write_text("tanaka\nsato\n")
    result = cli("audit", out, "--names", names)
    assert result.exit_code == 1
    assert "README.md:1: name 'tanaka' (token)" in result.stdout
    assert "README.md:2: name 'sato' (token)" in result.stdout
    as_json = cli("audit", out, "--names", names, "--json")
    assert as_json.exit_code == 1
    jsonschema.validate(json.loads(as_json.stdout), load_json("audit-report.schema.json"))


def test_cli_audit_clean_exits_0_and_key_from_environment(cli, tmp_path, monkeypatch):
    out = _clean_release(tmp_path)
    names = tmp_path / "names.txt"
    names.write_text("\n".join(USERS + GROUPS))
    monkeypatch.setenv("SWFTOOLS_ANON_KEY", KEY.decode())
    result = cli("audit", out, "--names", names)
    assert result.exit_code == 0 and "and the key" in result.stdout
    (out / "leak.txt").write_text(KEY.hex())
    assert cli("audit", out, "--names", names).exit_code == 1


def test_cli_audit_needs_names(cli, tmp_path):
    result = cli("audit", tmp_path)
    assert result.exit_code == 2 and "--raw RAWLOG or --names FILE" in result.stderr


def test_line_numbers_survive_chunked_reading(tmp_path, monkeypatch):
    import swftools.privacy.scan as scan

    monkeypatch.setattr(scan, "CHUNK_BYTES", 16)
    lines = ["x" * 5, "y" * 40 + " tanaka", "z", "sato" + "w" * 70, "", "end tanaka"]
    path = tmp_path / "notes.txt"
    path.write_text("\n".join(lines))  # no final newline
    found = [(leak.line, leak.term.text) for leak in audit(path, _names()).leaks]
    assert found == [(2, "tanaka"), (4, "sato"), (6, "tanaka")]


def test_nothing_searchable_is_never_clean(tmp_path):
    """Issue 27: no searchable name is a report that says so, not a usage error nor CLEAN."""
    (tmp_path / "a.txt").write_text("1 2 3\n")
    report = audit(tmp_path, {"user": ["17", "user"]})
    assert report.status == "nothing-to-search" and not report.clean and not report.failed
    assert "(2 unsearchable" in report.nothing_to_search
    assert "NOTHING TO SEARCH" in report.render() and "CLEAN" not in report.render()


def test_single_swf_file_gets_a_reidentification_report(tmp_path):
    from swftools.formats import swf

    table = anonymize(_raw_table(), KEY, dense_ids=True).table
    swf.write(table, tmp_path / "jobs.swf")
    report = audit(tmp_path / "jobs.swf", _names(), key=KEY)
    assert report.clean, report.render()
    assert report.reidentification is not None and report.reidentification.jobs == 12
