"""The shared input layer (swftools.formats.inputs): gzip by content, never by name, for every reader."""

from __future__ import annotations

import gzip
import os
import tempfile
import warnings
from pathlib import Path

import pytest
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from swftools import fileio, progress
from swftools import table as jt
from swftools.errors import InputError
from swftools.fileio import GZIP_LEVEL, file_digest, gzip_writer, is_gzip, sha256_file
from swftools.formats import datapackage as dp
from swftools.formats import inputs, nqsii, swf
from swftools.limits import Limits
from swftools.telemetry.buffer import SampleBuffer
from swftools.telemetry.metric_map import load_metric_map
from swftools.telemetry.readers_exposition import read_exposition

from .strategies import trace_file_names, trace_file_texts
from .test_formats_datapackage import set_descriptor, tiny_table

GOLDEN = Path(__file__).resolve().parent / "golden"
TEXT = "".join(f"{i} line of a trace, ünïcode too\n" for i in range(2000))


# --------------------------------------------------------------------------------- the layer

def test_gzip_content_under_a_plain_name_is_read_transparently(tmp_path):
    path = tmp_path / "trace.swf"
    path.write_bytes(gzip.compress(TEXT.encode()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert is_gzip(path)
        assert inputs.read_bytes(path) == TEXT.encode()
        assert inputs.read_text(path) == TEXT
        with inputs.open_text(path) as fh:
            assert fh.readline() == "0 line of a trace, ünïcode too\n"


def test_gz_name_over_plain_content_reads_with_a_warning_naming_the_file(tmp_path):
    path = tmp_path / "trace.swf.gz"
    path.write_text(TEXT, encoding="utf-8")
    def through_open_text(p):
        with inputs.open_text(p) as fh:
            return fh.read()

    for read in (inputs.read_bytes, inputs.read_text, through_open_text):
        with pytest.warns(inputs.MisnamedGzipWarning) as record:
            data = read(path)
        assert data in (TEXT, TEXT.encode())
        assert len(record) == 1
        assert str(record[0].message) == (f"{path}: named .gz but the content is not gzip; "
                                          "reading it as plain text")


def test_declared_gzip_over_plain_content_warns_too(tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_text(TEXT)
    with pytest.warns(inputs.MisnamedGzipWarning, match="jobs.csv: declared gzip-compressed"):
        assert inputs.detect_gzip(path, declared=True) is False


@pytest.mark.parametrize("reader", ["read_bytes", "read_text", "open_text"])
def test_truncated_gzip_names_the_file_and_how_far_it_got(tmp_path, reader):
    path = tmp_path / "cut.log"
    whole = gzip.compress(TEXT.encode())
    path.write_bytes(whole[: len(whole) * 2 // 3])
    good, lines = inputs.how_far(path.read_bytes())
    assert 0 < good < len(TEXT.encode()) and lines == TEXT.encode()[:good].count(b"\n")
    with pytest.raises(InputError) as err:
        if reader == "open_text":
            with inputs.open_text(path) as fh:
                for _ in fh:
                    pass
        else:
            getattr(inputs, reader)(path)
    assert err.value.path == str(path)
    assert str(err.value) == (f"{path}: truncated gzip file: the compressed stream ends early, "
                              f"after {lines:,} complete lines ({good:,} bytes) decompressed "
                              "(expected a complete gzip file)")


def test_corrupt_gzip_names_the_file(tmp_path):
    path = tmp_path / "bad.swf"
    whole = bytearray(gzip.compress(TEXT.encode()))
    whole[-8:-4] = b"\0\0\0\0"  # wrong CRC in the trailer
    path.write_bytes(bytes(whole))
    with pytest.raises(InputError, match=r"bad\.swf: corrupt gzip data \(CRC check failed.*\), "
                                         r"after 2,000 complete lines"):
        inputs.read_bytes(path)


def test_multi_member_gzip_is_read_whole(tmp_path):
    path = tmp_path / "two.swf"
    path.write_bytes(gzip.compress(b"a\n") + gzip.compress(b"b\n"))
    assert inputs.read_bytes(path) == b"a\nb\n"
    assert inputs.read_text(path) == "a\nb\n"


@given(trace_file_texts, trace_file_names)
def test_plain_and_gzip_under_any_name_read_back_identical(text, name):
    data = text.encode("utf-8")  # UTF-8 never starts with 1f 8b: plain text is never "gzip"
    with tempfile.TemporaryDirectory() as tmp:
        plain, packed = Path(tmp) / "plain" / name, Path(tmp) / "gzip" / name
        plain.parent.mkdir()
        packed.parent.mkdir()
        plain.write_bytes(data)
        with open(packed, "wb") as raw, gzip_writer(raw) as gz:
            gz.write(data)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert inputs.read_bytes(packed) == data
            assert inputs.read_text(packed, newline="") == text
            assert not seen  # gzip content never warns, whatever the name
            assert inputs.read_bytes(plain) == data
            assert inputs.read_text(plain, newline="") == text
        misnamed = name.lower().endswith(".gz")
        assert len(seen) == (2 if misnamed else 0)
        assert all(str(plain) in str(w.message) for w in seen)


# ---------------------------------------------------------------- the shared write/digest core

def test_gzip_writer_is_deterministic(tmp_path):
    outs = []
    for name in ("a.gz", "b.gz"):
        with open(tmp_path / name, "wb") as raw, gzip_writer(raw) as gz:
            gz.write(TEXT.encode())
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]
    assert outs[0][3] & 0x08 == 0 and outs[0][4:8] == b"\0\0\0\0"  # no name, mtime 0
    assert gzip.decompress(outs[0]) == TEXT.encode()
    assert GZIP_LEVEL == 6 and outs[0][8] == 0  # XFL: 2 would mean level 9, 4 level 1


def test_one_file_digest(tmp_path):
    import hashlib

    path = tmp_path / "x"
    path.write_bytes(b"abc" * 1000)
    seen: list[int] = []
    assert sha256_file(path) == file_digest(path, advance=seen.append) == \
        hashlib.sha256(b"abc" * 1000).hexdigest()
    assert sum(seen) == 3000
    assert file_digest(path, "md5") == hashlib.md5(b"abc" * 1000).hexdigest()


def test_progress_estimates_gzip_by_content(tmp_path):
    plain = "x" * 89 + "\n"
    misnamed, hidden = tmp_path / "a.swf.gz", tmp_path / "b.swf"
    misnamed.write_text(plain * 1000)
    hidden.write_bytes(gzip.compress((plain * 1000).encode()))
    assert progress.estimated_lines(misnamed) == 1000
    assert progress.estimated_lines(hidden) == 1000


# ------------------------------------------------------------------------ every reader, end to end

def _both_ways(tmp_path: Path, content: bytes, plain_gz_name: str, gzip_plain_name: str):
    """(a plain file under a .gz name, a gzip file under a plain name) holding ``content``."""
    misnamed, hidden = tmp_path / plain_gz_name, tmp_path / gzip_plain_name
    misnamed.write_bytes(content)
    hidden.write_bytes(gzip.compress(content))
    return misnamed, hidden


@pytest.mark.parametrize("reader, golden, gz_name, plain_name", [
    (swf, "swf/aaic-small.swf", "trace.swf.gz", "trace.swf"),
    (nqsii, "nqsii/raw.csv", "jobs.log.gz", "jobs.log"),
], ids=["swf", "nqsii"])
def test_trace_readers(tmp_path, reader, golden, gz_name, plain_name):
    content = (GOLDEN / golden).read_bytes()
    expected = reader.read(GOLDEN / golden)
    misnamed, hidden = _both_ways(tmp_path, content, gz_name, plain_name)
    with pytest.warns(inputs.MisnamedGzipWarning, match=gz_name):
        assert jt.equal(reader.read(misnamed), expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jt.equal(reader.read(hidden), expected)


def _csv_only(pkg: Path, rel: str) -> None:
    """Point the jobs resource at ``rel``, forget its checksums and drop the Parquet twin."""
    (pkg / "data" / "jobs.parquet").unlink()

    def change(desc):
        desc["resources"] = [r for r in desc["resources"] if r["name"] == "jobs"]
        for key in ("hash", "bytes"):
            desc["resources"][0].pop(key, None)
        desc["resources"][0]["path"] = rel
        desc["swftools"]["files"] = {}
    set_descriptor(pkg, change)


def test_datapackage_csv_resource(tmp_path):
    table = tiny_table()
    misnamed = tmp_path / "misnamed"
    dp.write(table, misnamed)
    csv_gz = misnamed / "data" / "jobs.csv.gz"
    csv_gz.write_bytes(gzip.decompress(csv_gz.read_bytes()))  # plain CSV under the .gz name
    _csv_only(misnamed, "data/jobs.csv.gz")
    with pytest.warns(inputs.MisnamedGzipWarning, match="jobs.csv.gz"):
        assert jt.equal(dp.read(misnamed), table)

    hidden = tmp_path / "hidden"
    dp.write(table, hidden)
    (hidden / "data" / "jobs.csv.gz").rename(hidden / "data" / "jobs.csv")  # gzip, plain name
    _csv_only(hidden, "data/jobs.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jt.equal(dp.read(hidden), table)


PROM = """# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="g1"} 10 1700000000000
DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="g1"} 20 1700000060500
"""


def test_telemetry_exposition_reader(tmp_path):
    misnamed, hidden = _both_ways(tmp_path, PROM.encode(), "metrics.prom.gz", "metrics.prom")
    rows = []
    for path in (misnamed, hidden):
        buf = SampleBuffer(load_metric_map("dcgm"))
        if path is misnamed:
            with pytest.warns(inputs.MisnamedGzipWarning, match="metrics.prom.gz"):
                read_exposition(path, buf, 0)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                read_exposition(path, buf, 0)
        rows.append([(r["metric"], r["ts"], r["value"]) for r in buf.to_table().to_pylist()])
    assert rows[0] == rows[1] == [("gpu_util_pct", 1_700_000_000, 10.0),
                                  ("gpu_util_pct", 1_700_000_060.5, 20.0)]


def test_telemetry_long_table_reader(tmp_path):
    import duckdb

    from swftools.telemetry.readers_long import check_long_table

    text = ("ts,node,gpu_index,metric,value\n1700000000,g1,0,DCGM_FI_DEV_GPU_UTIL,10\n"
            "1700000060,g1,0,DCGM_FI_DEV_GPU_UTIL,20\n")
    misnamed, hidden = _both_ways(tmp_path, text.encode(), "long.csv.gz", "long.csv")
    con = duckdb.connect()
    with pytest.warns(inputs.MisnamedGzipWarning, match="long.csv.gz"):
        first = check_long_table(misnamed, load_metric_map("dcgm"), con)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = check_long_table(hidden, load_metric_map("dcgm"), con)
    assert first.stats.samples_read == second.stats.samples_read == 2


def test_cli_prints_the_warning_as_one_line(tmp_path):
    import subprocess
    import sys

    misnamed = tmp_path / "trace.swf.gz"
    misnamed.write_bytes((GOLDEN / "swf" / "aaic-small.swf").read_bytes())
    done = subprocess.run([sys.executable, "-m", "swftools.cli", "convert", str(misnamed),
                           "--out", str(tmp_path / "out.swf")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"swftools: warning: {misnamed}: named .gz but the content "
                                  "is not gzip; reading it as plain text\n")
    assert "MisnamedGzipWarning" not in done.stderr


@given(st.lists(st.integers(-5, 5), max_size=30))
def test_first_repeat_is_the_earliest_row_seen_before(values):
    from swftools.formats.inputs import first_repeat

    seen: dict[int, int] = {}
    expected = None
    for row, value in enumerate(values):
        if value in seen:
            expected = (row, seen[value])
            break
        seen[value] = row
    assert first_repeat(np.array(values, dtype=np.int64)) == expected


# What each entry point of the input layer promises, one behaviour at a time.
def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [w for w in caught if w.category is inputs.MisnamedGzipWarning]


def _gz(path: Path, data: bytes) -> Path:
    path.write_bytes(gzip.compress(data, mtime=0))
    return path


def test_plain_files_under_plain_names_are_read_without_a_word(tmp_path):
    plain = tmp_path / "log.txt"
    plain.write_bytes(b"a\r\nb\n")
    assert _caught(lambda: inputs.detect_gzip(plain)) == (False, [])
    assert _caught(lambda: inputs.read_bytes(plain))[1] == []
    opened, caught = _caught(lambda: inputs.open_binary(plain))
    with opened as fh:
        assert fh.read() == b"a\r\nb\n" and caught == []


def test_declared_gzip_over_plain_content_warns_on_every_path(tmp_path):
    plain = tmp_path / "log.txt"
    plain.write_bytes(b"x\n")
    expected = f"{plain}: declared gzip-compressed but the content is not gzip; reading it as plain text"
    for read in (lambda: inputs.read_bytes(plain, declared=True),
                 lambda: inputs.open_binary(plain, declared=True).close(),
                 lambda: inputs.open_text(plain, declared=True).close(),
                 lambda: (fileio.prefetch(plain), inputs.read_bytes(plain, declared=True))):
        _, caught = _caught(read)
        assert [str(w.message) for w in caught] == [expected]


def test_the_misnamed_gzip_warning_points_at_the_reader_s_caller(tmp_path):
    named = tmp_path / "log.gz"
    named.write_bytes(b"x\n")
    _, [warning] = _caught(lambda: inputs.read_bytes(named))
    assert not warning.filename.endswith("formats/inputs.py")
    if "mutmut" not in warning.filename:  # uninstrumented: exactly this file
        assert warning.filename == __file__


def test_open_text_honours_encoding_newline_and_an_earlier_detection(tmp_path):
    latin = tmp_path / "log.txt"
    latin.write_bytes(b"caf\xe9\r\nx\n")
    with inputs.open_text(latin, encoding="latin-1", newline="") as fh:
        assert fh.read() == "café\r\nx\n"
    assert inputs.read_text(latin, encoding="latin-1", newline="") == "café\r\nx\n"
    assert inputs.read_text(latin, encoding="latin-1") == "café\nx\n"
    gz = _gz(tmp_path / "log.bin", b"hello\n")
    with inputs.open_text(gz, compressed=False, encoding="latin-1") as fh:
        assert fh.read(2) == "\x1f\x8b"  # told it is plain: the bytes as they are
    with inputs.open_text(gz) as fh:
        assert fh.read() == "hello\n"


def test_every_entry_point_keeps_to_the_limits_it_is_given(tmp_path):
    gz = _gz(tmp_path / "bomb.gz", b"\n" * 100_000)
    tight = Limits(max_ratio=2.0, floor_bytes=1000)
    for read in (lambda: inputs.read_bytes(gz, limits=tight),
                 lambda: inputs.open_binary(gz, limits=tight).read(),
                 lambda: inputs.open_text(gz, limits=tight).read(),
                 lambda: inputs.read_text(gz, limits=tight)):
        with pytest.raises(InputError, match="expands"):
            read()
    assert inputs.read_text(gz) == "\n" * 100_000  # the defaults allow it


def test_a_gzip_stream_reads_forward_only(tmp_path):
    gz = _gz(tmp_path / "log.gz", b"x\n")
    with inputs.open_binary(gz) as fh:
        assert not fh.seekable()
        assert fh.read() == b"x\n"


def test_a_file_that_changes_while_read_is_named_with_what_was_expected(tmp_path):
    err = inputs._changed(tmp_path / "f.swf", 2000, 1000)
    assert err.path == str(tmp_path / "f.swf")
    assert err.expected == "a file no other program writes to while swftools reads it"
    assert str(err) == (f"{tmp_path / 'f.swf'}: the file changed while it was read: 2,000 bytes "
                        "at the start, 1,000 read (expected a file no other program writes to "
                        "while swftools reads it)")


def test_a_shrunk_file_is_reported_with_its_path(tmp_path, monkeypatch):
    path = tmp_path / "log.txt"
    path.write_bytes(b"0123456789")
    monkeypatch.setattr(inputs, "read_whole", lambda fh, size: b"01234")
    with pytest.raises(InputError) as err:
        inputs.read_bytes(path)
    assert err.value.path == str(path) and "10 bytes at the start, 5 read" in str(err.value)


def test_corrupt_gzip_error_says_what_was_expected(tmp_path):
    data = bytearray(gzip.compress(b"a\n" * 1000, mtime=0))
    data[20:30] = b"\xff" * 10
    bad = tmp_path / "bad.gz"
    bad.write_bytes(bytes(data))
    with pytest.raises(InputError) as err:
        inputs.read_bytes(bad)
    assert err.value.expected == "a valid gzip file"
    assert str(err.value).startswith(f"{bad}: corrupt gzip data (")


def test_how_far_counts_every_piece_and_stops_past_its_limit():
    text = b"".join(b"%d\n" % i for i in range(600_000))  # several MB: several pieces
    stream = gzip.compress(text + os.urandom(1 << 20).replace(b"\n", b"x"), mtime=0)
    cut = stream[: len(stream) - 1000]  # truncated within the random tail
    total, lines = inputs.how_far(cut)  # the default limit: the stream's budget
    assert lines == 600_000 and len(text) < total <= len(text) + (1 << 20)
    first, _ = inputs.how_far(cut, limit=0)  # past 0 after the first piece
    assert 0 < first < total
    assert inputs.how_far(cut, limit=first)[0] > first  # at the limit: one piece more


@pytest.mark.parametrize("floor", [0, 1])
def test_a_budget_of_zero_or_one_byte_still_refuses_the_stream(tmp_path, floor):
    """With limits that allow (almost) nothing, a gzip stream is refused, not read as empty."""
    gz = _gz(tmp_path / "log.gz", b"hello\n")
    with pytest.raises(InputError, match="expands"):
        inputs.read_bytes(gz, limits=Limits(max_ratio=0.001, floor_bytes=floor))


def test_how_far_stops_at_the_stream_budget_by_default(tmp_path, monkeypatch):
    """A damaged bomb is counted only up to its budget (the limits in force), not to the end."""
    monkeypatch.setenv("SWFTOOLS_MAX_EXPANSION", "2")
    monkeypatch.setenv("SWFTOOLS_MIN_EXPANSION_BYTES", "1M")
    stream = gzip.compress(b"\n" * (64 << 20), mtime=0)[:-100]
    total, lines = inputs.how_far(stream)
    assert (1 << 20) < total < (8 << 20) and lines == total
