"""The format registry (``swftools.formats``): which format a path is, the one-call ``convert``
with every option passed through, and its headline."""

from __future__ import annotations

import gzip
import types
from pathlib import Path

import pyarrow as pa
import pytest

from swftools import formats
from swftools.errors import InputError, UsageError
from swftools.formats import ConversionResult
from swftools.metadata import TableMetadata

SWF = ("; Version: 2.2\n; MaxProcs: 8\n"
       + "".join(f"{j} {10 * j} 0 50 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n" for j in (1, 2, 3)))


@pytest.mark.parametrize(("name", "fmt"), [
    ("trace.swf", "swf"), ("TRACE.SWF.GZ", "swf"), ("jobs.sacct", "slurm"),
    ("jobs.SACCT.gz", "slurm"), ("log.csv", "nqsii"), ("log.log", "nqsii"), ("log.TXT", "nqsii"),
    ("acct.nqsii", "nqsii"), ("x.LOG.gz", "nqsii"), ("openb_pod_list_default.csv", "alibaba"),
    ("sim.json", "batsim"), ("datapackage.json", "package"), ("bundle", "package")])
def test_detect_format_by_name(tmp_path, name, fmt):
    assert formats.detect_format(tmp_path / name) == fmt


def test_detect_format_of_a_directory_and_an_unknown_name(tmp_path):
    assert formats.detect_format(tmp_path) == "package"
    with pytest.raises(UsageError) as err:
        formats.detect_format(tmp_path / "trace.xyz")
    assert str(err.value) == (f"{tmp_path / 'trace.xyz'}: cannot tell the format from the name; "
                              "use --from/--to (swf, nqsii, package, batsim, tiresias, slurm, "
                              "pbs, alibaba)")


def test_unknown_format_name_lists_the_choices():
    with pytest.raises(UsageError) as err:
        formats.module_for("csv")
    assert str(err.value) == ("unknown format 'csv' (choose from swf, nqsii, package, batsim, "
                              "tiresias, slurm, pbs, alibaba)")


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(("first", "fmt"), [
    ("JobID|User|State", "slurm"), ("User|jobid|State\r", "slurm"),
    ("JobID", None),  # one column, no separator: not sacct --parsable2
    ("01/02/2023 10:00:00;E;1.host;user=a", "pbs"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli", "alibaba"),
    ("gpu_milli,num_gpu,name,memory_mib,cpu_milli", "alibaba"),  # any order
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
     "deletion_time,scheduled_time", "alibaba"),
    ("name,cpu_milli,gpu_milli", None),  # some openb columns only
    ("name;cpu_milli;memory_mib;num_gpu;gpu_milli", None),
    ("cpu_milli,memory_mib,num_gpu,name", None),  # no gpu_milli
])
def test_sniff_format_reads_the_first_line(tmp_path, first, fmt, gz):
    path = tmp_path / "trace.dat"
    data = (first + "\nsecond line\n").encode()
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    assert formats.sniff_format(path) == fmt


def test_sniff_format_of_bytes_that_are_no_text_and_of_no_file(tmp_path):
    path = tmp_path / "trace.swf"
    path.write_bytes(b"\xff\xfe\x00|JobID\n1 2 3\n")
    assert formats.sniff_format(path) is None
    assert formats.detect_format(path) == "swf"
    assert formats.sniff_format(tmp_path / "missing.log") is None
    assert formats.sniff_format(tmp_path) is None
    broken = tmp_path / "broken.log"
    broken.write_bytes(gzip.compress(b"JobID|User\n" * 100, mtime=0)[:15])
    assert formats.sniff_format(broken) is None  # a damaged stream: no verdict


def test_sniffing_wins_over_the_name(tmp_path):
    path = tmp_path / "jobs.log"
    path.write_text("JobID|State\n1|COMPLETED\n", encoding="utf-8")
    assert formats.detect_format(path) == "slurm"


def test_convert_detects_both_formats_and_returns_what_it_did(tmp_path):
    src = tmp_path / "in.swf"
    src.write_text(SWF, encoding="ascii")
    dst = tmp_path / "out.swf"
    result = formats.convert(src, dst)
    assert (result.source_format, result.target_format) == ("swf", "swf")
    assert result.jobs == 3 and result.table.num_rows == 3
    assert result.losses == formats.write(formats.read(src), tmp_path / "again.swf")
    assert dst.read_bytes() == (tmp_path / "again.swf").read_bytes()


def test_convert_uses_the_formats_it_is_given(tmp_path):
    src = tmp_path / "in.dat"  # no name says SWF
    src.write_text(SWF, encoding="ascii")
    result = formats.convert(src, tmp_path / "out.dat", from_format="swf", to_format="swf")
    assert (result.source_format, result.target_format) == ("swf", "swf")
    assert (tmp_path / "out.dat").read_text(encoding="ascii") == SWF  # unchanged, byte for byte


def test_convert_never_overwrites_unless_forced(tmp_path):
    src = tmp_path / "in.swf"
    src.write_text(SWF, encoding="ascii")
    dst = tmp_path / "out.swf"
    dst.write_text("mine\n", encoding="ascii")
    with pytest.raises(Exception, match="exists"):
        formats.convert(src, dst)
    assert dst.read_text(encoding="ascii") == "mine\n"
    formats.convert(src, dst, force=True)
    assert dst.read_text(encoding="ascii") != "mine\n"


def test_convert_refuses_an_empty_trace_unless_allowed(tmp_path):
    src = tmp_path / "in.swf"
    src.write_text("; Version: 2.2\n", encoding="ascii")
    with pytest.raises(InputError):
        formats.convert(src, tmp_path / "out.swf")
    assert not (tmp_path / "out.swf").exists()
    assert formats.convert(src, tmp_path / "out.swf", allow_empty=True).jobs == 0


def test_convert_passes_the_site_to_the_reader_and_the_writer(tmp_path):
    sample = Path(__file__).resolve().parents[1] / "samples" / "aaic-sample.csv.gz"
    read_with = formats.convert(sample, tmp_path / "a.swf", site="aaic-v100-half")
    assert TableMetadata.from_table(read_with.table).site == "aaic-v100-half"  # the reader's
    assert any(line.startswith("user names replaced") for line in read_with.losses)
    src = tmp_path / "in.swf"  # an SWF table names no site: the writer's own use shows
    src.write_text(SWF, encoding="ascii")
    formats.convert(src, tmp_path / "plain.json")
    formats.convert(src, tmp_path / "sited.json", site="aaic")
    assert (tmp_path / "sited.json").read_bytes() != (tmp_path / "plain.json").read_bytes()


def test_convert_shows_progress_only_when_asked(tmp_path, capsys, monkeypatch):
    seen = []
    real_read = formats.read

    def spy(path, fmt=None, **options):
        seen.append(options["progress"])
        return real_read(path, fmt, **options)

    monkeypatch.setattr(formats, "read", spy)
    src = tmp_path / "in.swf"
    src.write_text(SWF, encoding="ascii")
    formats.convert(src, tmp_path / "a.swf")
    formats.convert(src, tmp_path / "b.swf", progress=True)
    assert seen == [False, True]


def _result(losses, rows=5):
    return ConversionResult(pa.table({"job_id": list(range(rows))}), "swf", "batsim", losses)


def test_headline_with_one_and_with_several_skip_reasons():
    one = _result(["2 jobs skipped: no GPUs", "user names replaced"])
    assert one.headline("a.swf", "b.json") == ("wrote 3 of 5 jobs (2 skipped: no GPUs): a.swf "
                                               "(swf) -> b.json (batsim)")
    assert one.notes() == ["user names replaced"]
    two = _result(["1 job skipped: no GPUs", "2 jobs skipped: no start"])
    assert two.headline("a", "b") == ("wrote 2 of 5 jobs (3 skipped: 1 no GPUs; 2 no start): a "
                                      "(swf) -> b (batsim)")
    assert _result([], 1).headline("a", "b") == "wrote 1 of 1 job: a (swf) -> b (batsim)"


def test_info_of_a_format_without_a_descriptor(monkeypatch):
    bare = types.ModuleType("swftools.formats.bare")
    monkeypatch.setattr(formats, "module_for", lambda fmt: bare)
    with pytest.raises(UsageError) as err:
        formats.info("bare")
    assert str(err.value) == "format 'bare' (swftools.formats.bare) declares no INFO descriptor"
