"""Bounded resources and error rendering (issue 29 items 4 and 8): gzip bombs refused early by
every reader, no SIGBUS on a file truncated under the SWF reader, disk-full / read-only /
out-of-memory as one located line, long values cut in messages."""

from __future__ import annotations

import errno
import gzip
import os
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swftools import formats
from swftools.cli import app
from swftools.errors import InputError, shorten
from swftools.formats import datapackage as dp
from swftools.formats import inputs
from swftools.limits import GIB, MIB, Limits, format_size, parse_size
from swftools.telemetry.buffer import SampleBuffer
from swftools.telemetry.metric_map import load_metric_map
from swftools.telemetry.readers_exposition import read_exposition
from swftools.validate import validate

from ..test_formats_datapackage import replace_csv, tiny_table

runner = CliRunner()
SWF = ("; UnixStartTime: 1500000000\n; MaxNodes: 1\n; MaxProcs: 4\n"
       "1 0 5 600 1 -1 -1 1 600 -1 1 1 1 -1 1 -1 -1 -1\n"
       "2 60 5 900 4 -1 -1 4 900 -1 1 2 1 -1 1 -1 -1 -1\n")
BOMB_BYTES = 24 * MIB  # expands ~1000x from ~24 KB: over 100x and the lowered 1 MiB floor


def bomb(path: Path, head: bytes, line: bytes) -> Path:
    """A gzip file: ``head``, then ``line`` repeated to BOMB_BYTES (a valid-looking trace)."""
    body = head + line * (BOMB_BYTES // len(line))
    path.write_bytes(gzip.compress(body, compresslevel=9, mtime=0))
    assert path.stat().st_size * 200 < BOMB_BYTES
    return path


@pytest.fixture
def low_floor(monkeypatch):
    """The defaults but a 1 MiB floor: a test bomb need not be hundreds of MB."""
    monkeypatch.setenv("SWFTOOLS_MIN_EXPANSION_BYTES", "1M")


def assert_bomb(err: BaseException, path: Path) -> None:
    text = str(err)
    assert text.startswith(str(path)), text
    assert "compression bomb" in text and "SWFTOOLS_MAX_EXPANSION" in text, text


SACCT = b"JobID|User|Group|Partition|Submit|Start|End|State|NNodes|AllocTRES|Timelimit\n"
CASES = {
    "swf": (b"; Version: 2.2\n", b"1 0 5 600 1 -1 -1 1 600 -1 1 1 1 -1 1 -1 -1 -1\n"),
    "nqsii": (b"", b"1,2,3,4,5,6,7,8\n"),
    "slurm": (SACCT, b"1|u|g|p|2020-01-01T00:00:00|2020-01-01T00:00:00|2020-01-01T00:01:00|"
                     b"COMPLETED|1|cpu=1|01:00:00\n"),
    "pbs": (b"", b"10/02/2011 06:41:44;E;1.host;user=u group=g queue=q start=1 end=2\n"),
    "alibaba": (b"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                b"creation_time,deletion_time,scheduled_time\n",
                b"openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"),
    "batsim": (b'{"nb_res": 4, "jobs": [', b'{"id": "1", "subtime": 0, "res": 1},'),
    "tiresias": (b"job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n",
                 b"1,1,0,1,resnet,60,1\n"),
}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_every_reader_refuses_a_gzip_bomb_early(tmp_path, low_floor, fmt):
    head, line = CASES[fmt]
    path = bomb(tmp_path / f"trace.{fmt}.gz", head, line)
    with pytest.raises(InputError) as err:
        formats.read(path, fmt)
    assert_bomb(err.value, path)


def test_the_package_csv_and_validate_refuse_a_gzip_bomb(tmp_path, low_floor):
    pkg = tmp_path / "pkg"
    dp.write(tiny_table(), pkg)
    (pkg / "data" / "jobs.parquet").unlink()
    csv_path = pkg / "data" / "jobs.csv.gz"
    lines = gzip.decompress(csv_path.read_bytes()).splitlines(keepends=True)
    replace_csv(pkg, lines[0] + lines[1] * (BOMB_BYTES // len(lines[1])))  # hash and size kept
    assert csv_path.stat().st_size * 200 < BOMB_BYTES
    with pytest.raises(InputError) as err:
        dp.read(pkg)
    assert_bomb(err.value, csv_path)
    findings = " ".join(f.render() for f in validate(pkg))
    assert "compression bomb" in findings


def test_telemetry_text_reader_refuses_a_gzip_bomb(tmp_path, low_floor):
    path = bomb(tmp_path / "metrics.prom.gz", b"# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n",
                b'DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="n1"} 1 1500000000000\n')
    with pytest.raises(InputError) as err:
        read_exposition(path, SampleBuffer(load_metric_map("dcgm")), 0)
    assert_bomb(err.value, path)


def test_a_bomb_is_stopped_before_it_is_decompressed_in_memory(tmp_path, low_floor):
    path = bomb(tmp_path / "trace.swf.gz", b"; Version: 2.2\n", bytes(4096))  # ~1000x
    tracemalloc.start()
    try:
        with pytest.raises(InputError):
            inputs.read_bytes(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the budget here is ~2.4 MB (100x): at most that and one read chunk, not the 24 MiB
    assert peak < 10 * MIB, f"peak {peak:,} bytes for a {BOMB_BYTES:,}-byte bomb"
    with pytest.raises(InputError), inputs.open_text(path) as fh:  # streamed readers too
        while fh.read(1 << 16):
            pass


def test_the_limits_are_overridable(tmp_path, monkeypatch):
    path = bomb(tmp_path / "trace.swf.gz", *CASES["swf"])
    assert len(inputs.read_bytes(path)) >= BOMB_BYTES - 64  # the 256 MiB default floor: fine
    with pytest.raises(InputError, match="SWFTOOLS_MAX_EXPANSION"):
        inputs.read_bytes(path, limits=Limits(floor_bytes=MIB))
    monkeypatch.setenv("SWFTOOLS_MAX_INPUT_BYTES", "2M")
    with pytest.raises(InputError, match="SWFTOOLS_MAX_INPUT_BYTES"):
        inputs.read_bytes(path)
    monkeypatch.setenv("SWFTOOLS_MAX_INPUT_BYTES", "64G")
    monkeypatch.setenv("SWFTOOLS_MIN_EXPANSION_BYTES", "1M")
    monkeypatch.setenv("SWFTOOLS_MAX_EXPANSION", "5000")
    assert len(inputs.read_bytes(path)) >= BOMB_BYTES - 64
    monkeypatch.setenv("SWFTOOLS_MAX_EXPANSION", "lots")
    result = runner.invoke(app, ["convert", str(path), "-o", str(tmp_path / "x.swf")])
    assert result.exit_code == 2 and "SWFTOOLS_MAX_EXPANSION='lots' is not" in result.output


def test_sizes_parse_and_print():
    assert parse_size("64G") == 64 * GIB and parse_size("1.5MiB") == 3 * MIB // 2
    assert parse_size("4096") == 4096 and format_size(256 * MIB) == "256 MiB"
    assert Limits().stream_budget(10 * MIB) == 1000 * MIB
    assert Limits().stream_budget(1000) == 256 * MIB
    assert Limits().stream_budget(10 * GIB) == 64 * GIB


def test_real_traces_are_far_from_the_limits():
    """Real traces expand 5-20x (the bundled SWF and Alibaba traces 5.2-11.6x)."""
    here = Path(__file__).resolve().parents[2] / "tests" / "golden"
    for path in sorted(here.rglob("*.gz"))[:20]:
        with inputs.open_binary(path) as fh:  # never refused
            while fh.read(1 << 20):
                pass


# ------------------------------------------------------------------------------ truncation

def test_a_file_truncated_under_the_reader_is_no_sigbus(tmp_path):
    """It was a memory map: touching its pages after a truncation killed Python (SIGBUS)."""
    path = tmp_path / "trace.swf"
    path.write_text(SWF * 20_000)
    code = textwrap.dedent(f"""
        import os
        from swftools.formats.inputs import read_bytes
        data = read_bytes({str(path)!r})
        os.truncate({str(path)!r}, 0)
        print(sum(memoryview(data)[::4096]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])


def test_a_file_truncated_while_it_is_read_is_a_located_error(tmp_path, monkeypatch):
    path = tmp_path / "trace.swf"
    path.write_text(SWF * 2000)
    real_open = open

    class Shrinking:
        """The file as open() gives it, truncated by another program before the read."""

        def __init__(self, *args, **kwargs):
            self._fh = real_open(*args, **kwargs)

        def read(self, n=-1):
            if n and n > 2:
                os.truncate(path, 1000)
            return self._fh.read(n)

        def __getattr__(self, name):
            return getattr(self._fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._fh.close()

    monkeypatch.setattr(inputs, "open", Shrinking, raising=False)
    with pytest.raises(InputError, match="changed while it was read"):
        formats.read(path, "swf")


# ------------------------------------------------------------------------- error rendering

def one_error_line(result) -> str:
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("swftools: error:")]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.fixture
def swf_file(tmp_path) -> Path:
    path = tmp_path / "in.swf"
    path.write_text(SWF)
    return path


def test_disk_full_is_one_located_line(tmp_path, swf_file, monkeypatch):
    from swftools.formats.swf import writer

    def full(chunks, write):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as a bare write(2) says it

    monkeypatch.setattr(writer, "write_behind", full)
    out = tmp_path / "out.swf"
    line = one_error_line(runner.invoke(app, ["convert", str(swf_file), "-o", str(out)]))
    assert line == (f"swftools: error: {out}: cannot write (disk full): "
                    f"{os.strerror(errno.ENOSPC)} [ENOSPC]")
    assert not out.exists()


def test_read_only_output_is_one_located_line(tmp_path, swf_file, monkeypatch):
    real = os.open
    out = tmp_path / "ro" / "out.swf"
    out.parent.mkdir()

    def read_only(name, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and str(out.parent) in str(name):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), name)
        return real(name, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    line = one_error_line(runner.invoke(app, ["convert", str(swf_file), "-o", str(out)]))
    assert line.startswith(f"swftools: error: {out.parent}/"), line
    assert line.endswith(f"cannot write (read-only file system): {os.strerror(errno.EROFS)} "
                         "[EROFS]"), line


def test_out_of_memory_is_one_line(tmp_path, swf_file, monkeypatch):
    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(formats, "read", no_memory)
    line = one_error_line(runner.invoke(app, ["convert", str(swf_file), "-o",
                                              str(tmp_path / "o.swf")]))
    assert "out of memory" in line


def test_a_huge_token_is_cut_in_the_error_line(tmp_path):
    token = "x" * (1 << 20)  # 1 MB here; 100 MB was echoed whole
    path = tmp_path / "big.swf"
    path.write_text(SWF + f"3 0 5 600 {token} -1 -1 1 600 -1 1 1 1 -1 1 -1 -1 -1\n")
    line = one_error_line(runner.invoke(app, ["convert", str(path), "-o", str(tmp_path / "o.swf")]))
    assert len(line) < 300 + len(str(path)), len(line)
    assert "x" * 40 + "..." in line and "(1,048,576 characters)" in line


def test_shorten_keeps_the_start_and_says_the_length():
    assert shorten("abc") == "abc"
    cut = shorten("y" * 1000)
    assert cut.startswith("y" * 60) and cut.endswith("... (1,000 characters)") and len(cut) < 90
    err = InputError("f", "bad " + "z" * 5000, line=2)
    assert len(str(err)) < 120
