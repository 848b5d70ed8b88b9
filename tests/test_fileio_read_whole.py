"""``fileio.read_whole``: a large file read by several threads into one ``bytes`` object
(``swftools/_fileio.pyx``) gives exactly the file's bytes, a shorter file its prefix."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swftools import _fileio, fileio
from swftools.formats.inputs import read_bytes
from swftools.errors import InputError

FS = settings(max_examples=40, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def parallel(monkeypatch):
    """Every file read in parallel, by 3 threads (spans of a few bytes each)."""
    monkeypatch.setattr(fileio, "_PARALLEL_READ_BYTES", 0)
    monkeypatch.setattr(fileio, "usable_cores", lambda: 3)


@FS
@given(data=st.binary(max_size=200), extra=st.integers(0, 5))
def test_read_whole_is_the_file_or_its_prefix(tmp_path, parallel, data, extra):
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    with open(path, "rb") as fh:
        fh.read(1)  # wherever the file position is, the read starts at byte 0
        assert fileio.read_whole(fh, len(data)) == data
        # a size past the end (the file shrank since its size was taken): what is there
        assert fileio.read_whole(fh, len(data) + extra) == data


def test_read_whole_of_a_large_file_by_default(tmp_path):
    size = fileio._PARALLEL_READ_BYTES + 12_345
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    with open(path, "rb") as fh:
        assert fileio.read_whole(fh, size) == data


def test_fill_checks_its_span_and_reports_read_errors(tmp_path):
    data = _fileio.unfilled(4)
    with pytest.raises(ValueError):
        _fileio.fill(data, 0, 2, 5)
    path = tmp_path / "d"
    path.mkdir()
    import os

    fd = os.open(path, os.O_RDONLY)  # a folder: pread fails with EISDIR
    try:
        with pytest.raises(OSError):
            _fileio.fill(data, fd, 0, 4)
    finally:
        os.close(fd)


def test_a_file_that_shrank_is_an_input_error(tmp_path, parallel, monkeypatch):
    """The size was taken, then the file got shorter: the parallel read stops at its end and
    the reader says the file changed (never a silently cut trace)."""
    import os

    from swftools.formats import inputs

    path = tmp_path / "jobs.swf"
    path.write_bytes(b"1 0 0 5 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n")
    real = os.fstat

    def larger(fd):
        st = real(fd)
        fields = list(st)
        fields[6] = st.st_size + 10  # st_size, as it was before the file shrank
        return os.stat_result(fields)

    monkeypatch.setattr(inputs.os, "fstat", larger)
    with pytest.raises(InputError, match="changed while it was read"):
        read_bytes(path)


def test_read_whole_imports_no_format_package(tmp_path):
    """``prefetch`` runs ``read_whole`` in a second thread while the command imports its
    libraries: an import of ``swftools.formats`` there would wait for the main thread's (the
    read then starts only after it) or deadlock under an import hook."""
    import subprocess
    import sys

    path = tmp_path / "big.bin"
    path.write_bytes(b"x" * 1000)
    code = ("import sys; from swftools import fileio; fileio._PARALLEL_READ_BYTES = 0; "
            f"data = fileio.read_whole(open({str(path)!r}, 'rb'), 1000); assert len(data) == 1000; "
            "print(sorted(m for m in sys.modules if m.startswith('swftools.formats')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_prefetch_thread_imports_nothing(tmp_path):
    """The prefetch thread reads while the main thread imports the libraries. A first import
    in that thread (``concurrent.futures`` for the read's workers, once) could deadlock with
    the main thread's imports in CPython 3.11's module locks, as it did under the phases
    benchmark's import hook. A finder on ``sys.meta_path`` sees every first import and the
    thread that makes it."""
    import subprocess
    import sys

    path = tmp_path / "big.bin"
    path.write_bytes(b"y" * 5000)
    code = f"""
import sys, threading
from swftools import fileio
fileio._PARALLEL_READ_BYTES = 0
seen = []
class Spy:
    def find_spec(self, name, path=None, target=None):
        seen.append((threading.current_thread().name, name))
        return None
sys.meta_path.insert(0, Spy())
fileio.prefetch({str(path)!r})
data = fileio.take_prefetched({str(path)!r})
assert data == b"y" * 5000, data
print(sorted({{name for thread, name in seen if thread != "MainThread"}}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]", done.stdout
