"""The shared input layer (swftools.formats.inputs): gzip by content, never by name, for every reader."""

from __future__ import annotations

import gzip
import tempfile
import warnings
from pathlib import Path

import pytest
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from swftools import progress
from swftools import table as jt
from swftools.errors import InputError
from swftools.fileio import GZIP_LEVEL, file_digest, gzip_writer, is_gzip, sha256_file
from swftools.formats import datapackage as dp
from swftools.formats import inputs, nqsii, swf
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
