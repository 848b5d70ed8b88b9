"""The leak scanner's walk: directories, text, gzip, tar, zip and Parquet, where each hit is."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.errors import InputError
from swftools.limits import Limits
from swftools.privacy import scan
from swftools.privacy.match import Matcher, Term
from swftools.privacy.scan import MAX_LOCATIONS, OUT_OF_MEMORY, Leak, Scanner

TANAKA = Term("tanaka", "user")
AB = Term("ab", "user")


def _scanner(*terms: Term, **kw) -> Scanner:
    return Scanner(Matcher(terms or (TANAKA, AB)), **kw)


def _where(result) -> list[str]:
    return [leak.where() for leak in result.leaks]


def _tar(members: dict[str, bytes], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buf.getvalue()


def _parquet(table: pa.Table, **kw) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **kw)
    return buf.getvalue()


# --- Leak ------------------------------------------------------------------------------------

def test_leak_where_says_where_each_kind_of_hit_is():
    assert Leak("a.csv", None, TANAKA, "token", line=3).where() == "a.csv:3"
    assert Leak("a.tar", "b/c.csv", TANAKA, "token", line=3).where() == "a.tar!b/c.csv:3"
    assert Leak("a.tar", None, TANAKA, "token", in_name=True).where() == "a.tar: file name"
    assert Leak("a.tar", "m", TANAKA, "token", in_name=True, line=1).where() == \
        "a.tar!m: member name"
    assert Leak("p", None, TANAKA, "token", metadata_key="k").where() == "p: metadata 'k'"
    assert Leak("p", None, TANAKA, "token", column="u", row=0).where() == "p: column 'u', row 0"
    assert Leak("p", None, TANAKA, "token", column="u", row=4, rows=1).where() == \
        "p: column 'u', row 4"
    assert Leak("p", None, TANAKA, "token", column="u", row=4, rows=2).where() == \
        "p: column 'u', row 4 (in 2 rows)"
    assert Leak("p", None, TANAKA, "token", column="u").where() == "p: column name 'u'"


def test_leak_to_dict_never_holds_the_key():
    key = Term(b"secret", "key", "the anonymization key (raw bytes)")
    d = Leak("f", "m", key, "substring", line=2, count=3).to_dict()
    assert d == {"file": "f", "member": "m", "kind": "key", "name": None,
                 "what": "the anonymization key (raw bytes)", "match": "substring", "line": 2,
                 "column": None, "row": None, "rows": None, "metadata_key": None,
                 "in_name": False, "count": 3}
    assert Leak("f", None, TANAKA, "token").to_dict()["name"] == "tanaka"


# --- walking ---------------------------------------------------------------------------------

def test_a_directory_is_walked_sorted_with_names_and_contents(tmp_path):
    (tmp_path / "tanaka_dir" / "sub").mkdir(parents=True)
    (tmp_path / "b.txt").write_text("x\ny tanaka\n")
    (tmp_path / "a-ab.txt").write_text("nothing\n")
    (tmp_path / "tanaka_dir" / "sub" / "c.txt").write_text("ab\n")
    result = _scanner().scan_path(tmp_path)
    assert _where(result) == ["tanaka_dir/: file name", "a-ab.txt: file name", "b.txt:2",
                              "tanaka_dir/sub/: file name", "tanaka_dir/sub/c.txt: file name",
                              "tanaka_dir/sub/c.txt:1"]
    assert result.files_scanned == 3
    assert result.bytes_scanned == len("x\ny tanaka\n") + len("nothing\n") + len("ab\n")


def test_a_single_file_is_labelled_by_its_name(tmp_path):
    path = tmp_path / "tanaka.txt"
    path.write_text("ab")
    assert _where(_scanner().scan_path(path)) == ["tanaka.txt: file name", "tanaka.txt:1"]


def test_a_missing_path_scans_its_name_only(tmp_path):
    result = _scanner().scan_path(tmp_path / "tanaka.txt")
    assert _where(result) == ["tanaka.txt: file name"] and result.files_scanned == 0


# --- text ------------------------------------------------------------------------------------

def test_lines_are_counted_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "CHUNK_BYTES", 8)
    path = tmp_path / "t.txt"
    path.write_text("1\n2 tanaka\n3\nlonger line 4 tanaka\n5\n6 tanaka")
    result = _scanner().scan_path(path)
    assert _where(result) == ["t.txt:2", "t.txt:4", "t.txt:6"]
    assert result.bytes_scanned == path.stat().st_size


def test_a_name_split_by_a_chunk_boundary_is_found(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "CHUNK_BYTES", 4)
    path = tmp_path / "t.txt"
    path.write_text("xx tanaka")  # no newline: the chunks are carried until the end
    assert _where(_scanner().scan_path(path)) == ["t.txt:1"]


def test_a_very_long_line_is_scanned_in_parts(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "CHUNK_BYTES", 4)
    path = tmp_path / "t.txt"
    path.write_text("tanaka" + "x" * 20 + "\nab")
    result = _scanner().scan_path(path)
    assert _where(result) == ["t.txt:1", "t.txt:2"]
    assert result.bytes_scanned == path.stat().st_size


def test_a_file_with_nul_bytes_reports_whole_tokens_only(tmp_path):
    path = tmp_path / "b.bin"
    path.write_bytes(b"\x00xtanakax tanaka")
    assert [(l.where(), l.match) for l in _scanner().scan_path(path).leaks] == [
        ("b.bin:1", "token")]
    text = tmp_path / "t.txt"
    text.write_bytes(b"xtanakax tanaka")
    assert len(_scanner().scan_path(text).leaks) == 2


def test_a_nul_byte_after_the_first_8_kib_does_not_make_a_file_binary(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"x" * 8192 + b"\x00 xtanakax")
    assert [l.match for l in _scanner().scan_path(path).leaks] == ["substring"]
    path.write_bytes(b"x" * 8191 + b"\x00 xtanakax")
    assert _scanner().scan_path(path).leaks == []


# --- compressed files and archives -------------------------------------------------------------

def test_gzip_is_read_by_its_inner_name(tmp_path):
    (tmp_path / "a.csv.GZ").write_bytes(gzip.compress(b"x\ntanaka\n"))
    (tmp_path / "t.parquet.gz").write_bytes(gzip.compress(_parquet(pa.table({"u": ["ab"]}))))
    assert _where(_scanner().scan_path(tmp_path)) == ["a.csv.GZ:2",
                                                      "t.parquet.gz: column 'u', row 0"]


def test_a_broken_gzip_is_unreadable(tmp_path):
    (tmp_path / "a.gz").write_bytes(b"not gzip")
    result = _scanner().scan_path(tmp_path)
    assert result.unreadable == [("a.gz", None, "BadGzipFile: Not a gzipped file (b'no')")]


@pytest.mark.parametrize("suffix, mode", [(".tar", "w"), (".tar.gz", "w:gz"), (".TGZ", "w:gz"),
                                          (".tar.bz2", "w:bz2"), (".tbz2", "w:bz2"),
                                          (".tar.xz", "w:xz"), (".txz", "w:xz")])
def test_tar_members_and_their_names_are_scanned(tmp_path, suffix, mode):
    (tmp_path / f"r{suffix}").write_bytes(_tar({"d/tanaka.txt": b"ab\n", "e.txt": b"\ntanaka"},
                                               mode))
    assert _where(_scanner().scan_path(tmp_path)) == [
        f"r{suffix}!d/tanaka.txt: member name", f"r{suffix}!d/tanaka.txt:1", f"r{suffix}!e.txt:2"]


def test_nested_archives_are_located_member_by_member(tmp_path):
    inner = _zip({"in/": b"", "in/x.txt": b"tanaka", "ab.txt": b""})
    (tmp_path / "r.tar").write_bytes(_tar({"z.zip": inner, "t.tar": _tar({"ab": b"tanaka"})}))
    assert _where(_scanner().scan_path(tmp_path)) == [
        "r.tar!z.zip!in/x.txt:1", "r.tar!z.zip!ab.txt: member name",
        "r.tar!t.tar!ab: member name", "r.tar!t.tar!ab:1"]


def test_a_zip_on_disk(tmp_path):
    (tmp_path / "r.ZIP").write_bytes(_zip({"tanaka/": b"", "a.txt": b"ab"}))
    assert _where(_scanner().scan_path(tmp_path)) == ["r.ZIP!tanaka/: member name", "r.ZIP!a.txt:1"]


@pytest.mark.parametrize("name, data, reason", [
    ("r.tar", b"not a tar" * 100, "ReadError"),
    ("r.zip", b"not a zip", "BadZipFile"),
    ("r.tar.xz", b"\xfd7zXZ\x00broken", "ReadError"),
])
def test_a_broken_archive_is_unreadable(tmp_path, name, data, reason):
    (tmp_path / name).write_bytes(data)
    [(file, member, why)] = _scanner().scan_path(tmp_path).unreadable
    assert (file, member) == (name, None) and why.startswith(reason + ": ")


def test_a_member_over_the_cap_is_unreadable_with_its_reason(tmp_path):
    (tmp_path / "r.tar").write_bytes(_tar({"big.txt": b"x" * 100}))
    result = _scanner(limits=Limits(member_bytes=10)).scan_path(tmp_path)
    [(file, member, why)] = result.unreadable
    assert file == "r.tar" and member is None and "per member" in why


def _unreadable_when_scans_raise(tmp_path, monkeypatch, exc, methods=("_scan_text",
                                                                      "_scan_parquet")):
    """What ``scan_path`` reports unreadable when the ``Scanner`` ``methods`` raise ``exc``."""
    def fail(*args, **kwargs):
        raise exc

    for name in methods:
        monkeypatch.setattr(Scanner, name, fail)
    return _scanner().scan_path(tmp_path).unreadable


def test_out_of_memory_and_os_errors_are_unreadable(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "b.parquet").write_bytes(_parquet(pa.table({"u": ["x"]})))
    assert _unreadable_when_scans_raise(tmp_path, monkeypatch, MemoryError()) == [
        ("a.txt", None, OUT_OF_MEMORY), ("b.parquet", None, OUT_OF_MEMORY)]
    denied = PermissionError(13, "Permission denied")
    assert _unreadable_when_scans_raise(tmp_path, monkeypatch, denied) == [
        ("a.txt", None, "PermissionError: [Errno 13] Permission denied"),
        ("b.parquet", None, "Permission denied")]


def test_an_input_error_is_unreadable_with_its_message_and_expectation(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "b.parquet").write_bytes(b"x")
    refused = InputError("a.txt", "too big", expected="a smaller file")
    assert _unreadable_when_scans_raise(tmp_path, monkeypatch, refused) == [
        ("a.txt", None, "too big (expected a smaller file)"),
        ("b.parquet", None, "too big (expected a smaller file)")]


def test_an_os_error_without_strerror_is_reported_by_its_text(tmp_path, monkeypatch):
    (tmp_path / "b.parquet").write_bytes(b"x")
    assert _unreadable_when_scans_raise(tmp_path, monkeypatch, OSError("disk gone"),
                                        ("_scan_parquet",)) == [("b.parquet", None, "disk gone")]


# --- parquet ---------------------------------------------------------------------------------

def test_parquet_metadata_field_metadata_column_names_and_cells(tmp_path):
    schema = pa.schema([pa.field("tanaka_col", pa.int64(), metadata={b"note": b"by ab"}),
                        pa.field("u", pa.string())], metadata={b"owner": b"tanaka"})
    table = pa.table({"tanaka_col": [1, 2, 3], "u": ["x", "ab", "ab"]}, schema=schema)
    (tmp_path / "t.parquet").write_bytes(_parquet(table))
    assert _where(_scanner().scan_path(tmp_path)) == [
        "t.parquet: metadata 'owner'", "t.parquet: metadata 'tanaka_col.note'",
        "t.parquet: metadata 'tanaka_col.note'",  # key and value: two names
        "t.parquet: column name 'tanaka_col'", "t.parquet: column 'u', row 1 (in 2 rows)"]


def test_parquet_rows_count_across_row_groups(tmp_path):
    table = pa.table({"u": ["a", "b", "c", "tanaka", "x", "tanaka"]})
    (tmp_path / "t.parquet").write_bytes(_parquet(table, row_group_size=2))
    result = _scanner().scan_path(tmp_path)
    assert _where(result) == ["t.parquet: column 'u', row 3", "t.parquet: column 'u', row 5"]
    assert [l.count for l in result.leaks] == [1, 1]


def test_parquet_dictionary_binary_and_nested_columns(tmp_path):
    table = pa.table({
        "d": pa.array(["tanaka", "x", "tanaka"]).dictionary_encode(),
        "b": pa.array([b"ab", None, b"zz"], pa.binary()),
        "l": pa.array([["x"], ["y", "tanaka"], None], pa.list_(pa.string())),
        "s": pa.array([{"k": "ab\nline"}, {"k": None}, {"k": "ab\nline"}],
                      pa.struct([("k", pa.string())])),
        "n": pa.array([1, 2, 3]),
    })
    (tmp_path / "t.parquet").write_bytes(_parquet(table))
    result = _scanner().scan_path(tmp_path)
    assert _where(result) == ["t.parquet: column 'd', row 0 (in 2 rows)",
                              "t.parquet: column 'b', row 0", "t.parquet: column 'l', row 1",
                              "t.parquet: column 's', row 0 (in 2 rows)"]
    assert [l.count for l in result.leaks] == [2, 1, 1, 2]


def test_a_name_twice_in_one_value_is_one_location(tmp_path):
    (tmp_path / "t.parquet").write_bytes(_parquet(pa.table({"u": ["tanaka tanaka", "ab"]})))
    assert _where(_scanner().scan_path(tmp_path)) == ["t.parquet: column 'u', row 0",
                                                      "t.parquet: column 'u', row 1"]


def test_parquet_arrow_schema_metadata_is_scanned_once(tmp_path):
    table = pa.table({"u": pa.array(["x"])}).replace_schema_metadata({b"who": b"tanaka"})
    path = tmp_path / "t.parquet"
    path.write_bytes(_parquet(table))
    assert _where(_scanner().scan_path(tmp_path)) == ["t.parquet: metadata 'who'"]


def test_parquet_with_a_broken_arrow_schema_is_unreadable(tmp_path):
    writer = pq.ParquetWriter(tmp_path / "t.parquet", pa.schema([("u", pa.string())]),
                              store_schema=False)
    writer.write_table(pa.table({"u": ["x"]}))
    writer.add_key_value_metadata({"ARROW:schema": "dGFuYWth"})
    writer.close()
    [(file, member, why)] = _scanner().scan_path(tmp_path).unreadable
    assert (file, member) == ("t.parquet", None) and why.startswith("ArrowInvalid: ")


def test_parquet_without_an_arrow_schema_scans_its_key_value_metadata(tmp_path):
    writer = pq.ParquetWriter(tmp_path / "t.parquet", pa.schema([("u", pa.string())]),
                              store_schema=False)
    writer.write_table(pa.table({"u": ["x"]}))
    writer.add_key_value_metadata({"b": "tanaka", "a": "ab"})
    writer.close()
    assert _where(_scanner().scan_path(tmp_path)) == ["t.parquet: metadata 'a'",
                                                      "t.parquet: metadata 'b'"]


def test_job_tables_are_collected_as_asked(tmp_path):
    table = pa.table({"user": ["a", "b", "c"], "n": [1, 2, 3]})
    (tmp_path / "t.parquet").write_bytes(_parquet(table, row_group_size=2))
    (tmp_path / "e.parquet").write_bytes(_parquet(table.slice(0, 0)))
    (tmp_path / "skip.parquet").write_bytes(_parquet(table))
    result = _scanner(want_table=lambda s: None if "n" not in s.names else ["user"]).scan_path(
        tmp_path)
    assert [(label, t.to_pydict()) for label, t in result.job_tables] == [
        ("e.parquet", {"user": []}), ("skip.parquet", {"user": ["a", "b", "c"]}),
        ("t.parquet", {"user": ["a", "b", "c"]})]
    assert _scanner().scan_path(tmp_path).job_tables == []


def test_a_row_group_over_the_cap_is_unreadable(tmp_path):
    (tmp_path / "t.parquet").write_bytes(_parquet(pa.table({"u": ["x" * 1000]})))
    result = _scanner(limits=Limits(member_bytes=100)).scan_path(tmp_path)
    [(file, member, why)] = result.unreadable
    assert (file, member) == ("t.parquet", None)
    assert why.startswith("row group 0 holds ") and "more than the cap of 100" in why
    assert why.endswith("(expected row groups within SWFTOOLS_MAX_MEMBER_BYTES)")


def test_parquet_inside_a_tar_is_read_within_the_member_cap(tmp_path):
    data = _parquet(pa.table({"u": ["tanaka"]}))
    (tmp_path / "r.tar.gz").write_bytes(_tar({"t.parquet": data}, "w:gz"))
    assert _where(_scanner().scan_path(tmp_path)) == ["r.tar.gz!t.parquet: column 'u', row 0"]
    (tmp_path / "r.tar.gz").write_bytes(_tar({"t.parquet.gz": gzip.compress(data)}, "w:gz"))
    assert _where(_scanner().scan_path(tmp_path)) == ["r.tar.gz!t.parquet.gz: column 'u', row 0"]
    (tmp_path / "r.tar.gz").write_bytes(_tar({"t.parquet": data}, "w:gz"))
    result = _scanner(limits=Limits(member_bytes=len(data))).scan_path(tmp_path)
    assert result.unreadable == [] and len(result.leaks) == 1
    result = _scanner(limits=Limits(member_bytes=len(data) - 1)).scan_path(tmp_path)
    assert result.leaks == [] and "per member" in result.unreadable[0][2]


def test_a_parquet_stream_at_the_cap_is_read(tmp_path):
    data = _parquet(pa.table({"u": ["tanaka"]}))
    (tmp_path / "p.parquet.gz").write_bytes(gzip.compress(data))
    result = _scanner(limits=Limits(member_bytes=len(data))).scan_path(tmp_path)
    assert result.unreadable == [] and _where(result) == ["p.parquet.gz: column 'u', row 0"]


def test_the_default_limits_come_from_the_environment(tmp_path, monkeypatch):
    (tmp_path / "r.tar").write_bytes(_tar({"t.parquet": _parquet(pa.table({"u": ["tanaka"]}))}))
    monkeypatch.setenv("SWFTOOLS_MAX_MEMBER_BYTES", "100")
    [(_, _, why)] = _scanner().scan_path(tmp_path).unreadable
    assert "per member" in why


# --- the location cap ------------------------------------------------------------------------

def test_locations_are_capped_per_file_and_term_and_the_rest_counted(tmp_path):
    (tmp_path / "a.txt").write_text("tanaka\n" * (MAX_LOCATIONS + 3) + "ab\n")
    (tmp_path / "b.txt").write_text("tanaka\n")
    rows = ["tanaka"] * 5 + [f"tanaka{i}" for i in range(MAX_LOCATIONS + 1)]
    (tmp_path / "c.parquet").write_bytes(_parquet(pa.table({"u": rows})))
    result = _scanner().scan_path(tmp_path)
    by_file = {}
    for leak in result.leaks:
        by_file.setdefault((leak.file, leak.term.text), []).append(leak)
    assert len(by_file[("a.txt", "tanaka")]) == MAX_LOCATIONS
    assert len(by_file[("a.txt", "ab")]) == 1 and len(by_file[("b.txt", "tanaka")]) == 1
    assert len(by_file[("c.parquet", "tanaka")]) == MAX_LOCATIONS
    assert result.omitted == {("a.txt", None, TANAKA): 3, ("c.parquet", None, TANAKA): 1 + 1}


def test_a_broken_parquet_file_on_disk_is_unreadable_not_a_traceback(tmp_path):
    (tmp_path / "t.parquet").write_bytes(b"garbage\n")
    (tmp_path / "u.parquet").write_bytes(_parquet(pa.table({"u": ["x"] * 100}))[:-30])
    result = _scanner().scan_path(tmp_path)
    assert [(f, m) for f, m, _ in result.unreadable] == [("t.parquet", None), ("u.parquet", None)]
    assert all(why.startswith(("ArrowInvalid: ", "OSError: ")) for _, _, why in result.unreadable)


# --- locations inside archives, names, boundaries --------------------------------------------

def test_member_name_hits_name_only_the_innermost_member(tmp_path):
    (tmp_path / "r.tar").write_bytes(_tar({"tanaka.zip": _zip({"x.txt": b"", "my ab.txt": b""})}))
    result = _scanner().scan_path(tmp_path)
    assert _where(result) == ["r.tar!tanaka.zip: member name",
                              "r.tar!tanaka.zip!my ab.txt: member name"]
    assert [(l.term, l.match, l.in_name) for l in result.leaks] == [
        (TANAKA, "token", True), (AB, "token", True)]


def test_a_file_name_that_is_not_utf8_is_searched(tmp_path):
    os_name = os.fsencode(tmp_path) + b"/tanaka\xff.txt"
    with open(os_name, "wb") as fh:
        fh.write(b"x")
    result = _scanner().scan_path(tmp_path)
    assert [(l.term, l.in_name) for l in result.leaks] == [(TANAKA, True)]


def test_parquet_hits_inside_an_archive_name_the_member(tmp_path):
    schema = pa.schema([pa.field("tanaka_c", pa.string(), metadata={b"k": b"ab"})],
                       metadata={b"who": b"tanaka"})
    data = _parquet(pa.table({"tanaka_c": ["ab"]}, schema=schema))
    (tmp_path / "r.tar").write_bytes(_tar({"t.parquet": data}))
    result = _scanner(want_table=lambda s: ["tanaka_c"]).scan_path(tmp_path)
    assert [(l.member, l.term, l.match, l.where()) for l in result.leaks] == [
        ("t.parquet", TANAKA, "token", "r.tar!t.parquet: metadata 'who'"),
        ("t.parquet", TANAKA, "substring", "r.tar!t.parquet: metadata 'tanaka_c.k'"),
        ("t.parquet", AB, "token", "r.tar!t.parquet: metadata 'tanaka_c.k'"),
        ("t.parquet", TANAKA, "substring", "r.tar!t.parquet: column name 'tanaka_c'"),
        ("t.parquet", AB, "token", "r.tar!t.parquet: column 'tanaka_c', row 0")]
    assert [label for label, _ in result.job_tables] == ["r.tar!t.parquet"]


def test_the_stored_arrow_schema_is_not_searched_as_text(tmp_path):
    pq.write_table(pa.table({"n": [1]}), tmp_path / "t.parquet")
    blob = pq.ParquetFile(tmp_path / "t.parquet").metadata.metadata[b"ARROW:schema"]
    assert b"AAAA" in blob
    assert _scanner(Term("aaaa", "user")).scan_path(tmp_path).leaks == []


def test_stored_schema_metadata_that_differs_from_the_file_is_searched_too(tmp_path):
    schema = pa.schema([("u", pa.string())], metadata={b"who": b"tanaka"})
    writer = pq.ParquetWriter(tmp_path / "t.parquet", schema)
    writer.write_table(pa.table({"u": ["x"]}, schema=schema))
    writer.add_key_value_metadata({"who": "other ab"})
    writer.close()
    assert _where(_scanner().scan_path(tmp_path)) == [
        "t.parquet: metadata 'who'", "t.parquet: metadata 'ARROW:schema.who'"]


def test_a_parquet_file_without_row_groups_gives_an_empty_job_table(tmp_path):
    pq.ParquetWriter(tmp_path / "t.parquet", pa.schema([("user", pa.string()),
                                                        ("n", pa.int64())])).close()
    result = _scanner(want_table=lambda s: ["user"]).scan_path(tmp_path)
    assert [(label, t.schema.names, t.num_rows) for label, t in result.job_tables] == [
        ("t.parquet", ["user"], 0)]


def test_a_row_group_exactly_at_the_cap_is_read(tmp_path):
    data = _parquet(pa.table({"u": ["tanaka"]}))
    (tmp_path / "t.parquet").write_bytes(data)
    size = pq.ParquetFile(tmp_path / "t.parquet").metadata.row_group(0).total_byte_size
    result = _scanner(limits=Limits(member_bytes=size)).scan_path(tmp_path)
    assert result.unreadable == [] and len(result.leaks) == 1
    result = _scanner(limits=Limits(member_bytes=size - 1)).scan_path(tmp_path)
    assert len(result.unreadable) == 1 and result.leaks == []


def test_the_archive_total_cap_applies(tmp_path):
    (tmp_path / "r.tar").write_bytes(_tar({"a.txt": b"x" * 60, "b.txt": b"x" * 60}))
    result = _scanner(limits=Limits(member_bytes=100, total_bytes=100)).scan_path(tmp_path)
    assert len(result.unreadable) == 1 and "per archive" in result.unreadable[0][2]


def test_bytes_scanned_counts_metadata_and_text_values_once(tmp_path):
    table = pa.table({"u": ["ab", "x", "ab"], "v": ["yy", "yy", None], "n": [1, 2, 3]})
    table = table.replace_schema_metadata({b"a": b"bb", b"cc": b"d"})
    (tmp_path / "t.parquet").write_bytes(_parquet(table))
    # metadata 1 + 2 and 2 + 1 bytes; values "ab\nx" and "yy"; numbers are not text
    assert _scanner().scan_path(tmp_path).bytes_scanned == 3 + 3 + 4 + 2


def test_metadata_keys_that_are_not_utf8_are_read(tmp_path):
    table = pa.table({"n": [1]}).replace_schema_metadata({b"\xfftanaka": b"v"})
    (tmp_path / "t.parquet").write_bytes(_parquet(table))
    assert _where(_scanner().scan_path(tmp_path)) == ["t.parquet: metadata '\ufffdtanaka'"]


def test_newlines_inside_a_value_do_not_shift_rows(tmp_path):
    table = pa.table({"u": ["x\ntanaka", "ab\nx", "zz"]})
    (tmp_path / "t.parquet").write_bytes(_parquet(table))
    result = _scanner().scan_path(tmp_path)
    assert [(l.where(), l.match) for l in result.leaks] == [
        ("t.parquet: column 'u', row 0", "token"), ("t.parquet: column 'u', row 1", "token")]


def test_nested_values_of_any_type_are_searched_and_nulls_are_no_text(tmp_path):
    struct = pa.struct([("t", pa.timestamp("s")), ("who", pa.string())])
    table = pa.table({
        "s": pa.array([{"t": 0, "who": "tanaka"}, None], struct),
        "l": pa.array([None, ["x"]], pa.list_(pa.string())),
    })
    (tmp_path / "t.parquet").write_bytes(_parquet(table))
    result = _scanner(TANAKA, Term("nul", "user")).scan_path(tmp_path)
    assert _where(result) == ["t.parquet: column 's', row 0"]


def test_columns_of_numbers_and_dates_are_not_searched(tmp_path):
    table = pa.table({"d": pa.array([0], pa.date32()), "f": [float("inf")]})
    (tmp_path / "t.parquet").write_bytes(_parquet(table))
    result = _scanner(Term("1970-01", "user"), Term("inf", "user")).scan_path(tmp_path)
    assert result.leaks == [] and result.bytes_scanned == 0


def test_large_string_and_binary_columns(tmp_path):
    table = pa.table({"s": pa.array(["x", "tanaka"], pa.large_string()),
                      "b": pa.array([b"ab", b"ab"], pa.large_binary())})
    (tmp_path / "t.parquet").write_bytes(_parquet(table))
    assert _where(_scanner().scan_path(tmp_path)) == ["t.parquet: column 's', row 1",
                                                      "t.parquet: column 'b', row 0 (in 2 rows)"]


def test_a_very_long_line_is_cut_every_four_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "CHUNK_BYTES", 4)
    path = tmp_path / "t.txt"
    path.write_text("x" * 16 + "tanaka" + "x" * 20)  # the second part starts at byte 16
    assert _where(_scanner().scan_path(path)) == ["t.txt:1"]


def test_a_name_across_the_cut_of_a_very_long_line_is_found_once(tmp_path, monkeypatch):
    """Chunks of 16 bytes: a line without a line end is cut once 64 bytes have gathered; the
    name at bytes 61-66 lies across that cut (it was missed), the one at 40-45 lies in the
    overlap the next part rescans (it must not count twice)."""
    monkeypatch.setattr(scan, "CHUNK_BYTES", 16)
    path = tmp_path / "t.txt"
    path.write_text("x" * 40 + "tanaka" + "x" * 15 + "tanaka" + "x" * 40)
    result = _scanner().scan_path(path)
    assert [(leak.where(), leak.count) for leak in result.leaks] == [("t.txt:1", 1)] * 2
    assert result.bytes_scanned == path.stat().st_size


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(st.sampled_from(["x", "xx", "xxx", "xxxxxxx", "xxxxxxxxxxxxxxxxxxxx", " ",
                                        "\n", "tanaka", "tanaka", "ab", "a", "b"]),
                       min_size=10, max_size=100),
       chunk=st.integers(16, 24))
def test_a_file_read_in_chunks_gives_what_it_gives_read_whole(pieces, chunk):
    """Whatever the chunk size, and wherever long lines are cut, the same leaks on the same
    lines as one read of the whole text, and every byte counted once."""
    data = "".join(pieces).encode()
    monkey = pytest.MonkeyPatch()
    try:
        monkey.setattr(scan, "CHUNK_BYTES", 1 << 20)
        whole, parts = _scanner(), _scanner()
        whole._scan_text(io.BytesIO(data), "t.txt", None)
        monkey.setattr(scan, "CHUNK_BYTES", chunk)
        parts._scan_text(io.BytesIO(data), "t.txt", None)
    finally:
        monkey.undo()
    assert [(leak.where(), leak.count) for leak in parts.result.leaks] == [
        (leak.where(), leak.count) for leak in whole.result.leaks]
    assert parts.result.bytes_scanned == whole.result.bytes_scanned == len(data)


def test_a_member_three_archives_deep_is_named_by_its_own_name(tmp_path):
    (tmp_path / "r.tar").write_bytes(_tar({"a.tar": _tar({"tanaka.zip": _zip({"x.txt": b""})})}))
    assert _where(_scanner().scan_path(tmp_path)) == ["r.tar!a.tar!tanaka.zip: member name"]


def test_stored_schema_metadata_inside_an_archive_names_the_member(tmp_path):
    schema = pa.schema([("u", pa.string())], metadata={b"who": b"tanaka"})
    buf = io.BytesIO()
    writer = pq.ParquetWriter(buf, schema)
    writer.write_table(pa.table({"u": ["x"]}, schema=schema))
    writer.add_key_value_metadata({"who": "other"})
    writer.close()
    (tmp_path / "r.tar").write_bytes(_tar({"t.parquet": buf.getvalue()}))
    assert _where(_scanner().scan_path(tmp_path)) == [
        "r.tar!t.parquet: metadata 'ARROW:schema.who'"]
