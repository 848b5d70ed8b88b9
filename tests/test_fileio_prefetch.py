"""``fileio.prefetch``: a command's input read in a second thread while it imports, handed to
``inputs.read_bytes`` once, never stale, never for gzip content; and the same table either way."""

from __future__ import annotations

import gzip
import os

import pytest

from swftools import fileio
from swftools.formats import inputs, swf

JOB = "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 1 -1 -1\n"


@pytest.fixture(autouse=True)
def _nothing_left():
    yield
    fileio._prefetched.clear()


def test_the_prefetched_bytes_are_handed_over_once(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(JOB)
    fileio.prefetch(path)
    assert fileio.take_prefetched(path) == JOB.encode()
    assert fileio.take_prefetched(path) is None  # once: the next read reads the file


def test_read_bytes_uses_the_prefetch_and_gives_what_a_read_gives(tmp_path, monkeypatch):
    path = tmp_path / "t.swf"
    path.write_text(JOB * 3)
    fileio.prefetch(path)
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    assert inputs.read_bytes(path) == (JOB * 3).encode()
    assert opened == []  # handed over, not read again


def test_a_file_changed_after_the_prefetch_is_read_again(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(JOB)
    fileio.prefetch(path)
    fileio._prefetched[os.fspath(path)][0].join()
    path.write_text(JOB * 2)  # another size (and modification time)
    assert inputs.read_bytes(path) == (JOB * 2).encode()


def test_gzip_content_and_non_files_are_not_prefetched(tmp_path):
    packed = tmp_path / "t.swf.gz"
    packed.write_bytes(gzip.compress(JOB.encode()))
    fileio.prefetch(packed)
    assert fileio.take_prefetched(packed) is None
    assert inputs.read_bytes(packed) == JOB.encode()  # decompressed as always
    fileio.prefetch(tmp_path)  # a folder
    fileio.prefetch(tmp_path / "missing.swf")
    assert fileio._prefetched == {}


def test_a_misnamed_gzip_still_warns_when_prefetched(tmp_path):
    path = tmp_path / "plain.swf.gz"
    path.write_text(JOB)
    fileio.prefetch(path)
    with pytest.warns(inputs.MisnamedGzipWarning):
        assert inputs.read_bytes(path) == JOB.encode()


def test_convert_reads_the_same_table_with_the_prefetch(tmp_path):
    from typer.testing import CliRunner

    from swftools.cli import app

    src = tmp_path / "in.swf"
    src.write_text("; UnixStartTime: 1500000000\n" + JOB + JOB.replace("1 0 10", "2 5 10", 1))
    result = CliRunner().invoke(app, ["convert", str(src), "--out", str(tmp_path / "out.swf")])
    assert result.exit_code == 0, result.output
    assert fileio._prefetched == {}  # taken by the reader
    assert swf.read(tmp_path / "out.swf").equals(swf.read(src))


@pytest.mark.parametrize("name,from_format,expected", [
    ("t.swf", None, True), ("T.SWF.gz", None, True), ("x.sacct", None, True),
    ("acct.log", "pbs", True), ("x.txt", "slurm", True), ("jobs.csv", None, False),
    ("jobs.csv", "nqsii", False), ("trace.swf", "nqsii", False), ("pod_list.csv", None, False)])
def test_convert_prefetches_only_what_its_reader_reads_whole(name, from_format, expected):
    """Readers that read the whole file (SWF, Slurm, PBS) take the prefetch; the others would
    leave it unread, so none is started for them."""
    from pathlib import Path

    from swftools.cli.convert import _reads_whole

    assert _reads_whole(Path(name), from_format) is expected
