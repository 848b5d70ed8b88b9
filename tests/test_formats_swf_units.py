"""SWF field 5 follows the site's unit (issue 24 item 4): the header says which, and the loss
report names the jobs whose other unit (cpus on a GPU site, GPUs on a processor site) and whose
recorded run time were dropped."""

from __future__ import annotations

from hypothesis import given, settings

from swftools import table as jt
from swftools.formats import swf
from swftools.metadata import TableMetadata
from tests.strategies import swf_jobs, with_cpus_and_recorded_walltime

T0 = 1_600_000_000


def _table(unit: str, gpus: list, cpus: list, recorded: list | None = None):
    n = len(gpus)
    return jt.from_columns({
        "job_id": list(range(101, 101 + n)), "submit_time": [T0 + i for i in range(n)],
        "start_time": [T0 + 10 + i for i in range(n)], "finish_time": [T0 + 70 + i for i in range(n)],
        "wait_s": [10] * n, "walltime_s": [60] * n, "gpus": gpus, "cpus": cpus,
        "recorded_walltime_s": recorded or [None] * n,
    }, {"source_format": "slurm", "time_zone": "UTC", "processor_unit": unit})


def test_gpu_site_writes_gpus_says_so_and_names_the_cpu_jobs(tmp_path):
    table = _table("gpu", [2, 0, 0, 1], [16, 8, 4, None])
    losses = swf.write(table, tmp_path / "t.swf")
    text = (tmp_path / "t.swf").read_text()
    assert "; Note: processors are GPUs" in text
    back = swf.read(tmp_path / "t.swf")
    assert TableMetadata.from_table(back).unit == "gpu"
    assert back.column("gpus").to_pylist() == [2, 0, 0, 1]  # field 5: GPUs, CPU-only jobs 0
    cpus = [line for line in losses if line.startswith("cpus:")]
    assert cpus and "3 jobs (job ids 101, 102, 103)" in cpus[0]
    cpu_only = [line for line in losses if "are CPU-only" in line]
    assert cpu_only and cpu_only[0].startswith("2 jobs (job ids 102, 103)")
    assert "skip them" in cpu_only[0]


def test_processor_site_writes_cpus_and_names_the_gpu_jobs(tmp_path):
    table = _table("processor", [2, 0, None], [16, 8, 4])
    losses = swf.write(table, tmp_path / "t.swf")
    assert "processors are GPUs" not in (tmp_path / "t.swf").read_text()
    back = swf.read(tmp_path / "t.swf")
    assert back.column("gpus").to_pylist() == [16, 8, 4]  # field 5: processors
    gpus = [line for line in losses if line.startswith("gpus:")]
    assert gpus and "for 3 jobs (job ids 101, 102, 103)" in gpus[0]
    assert "the GPUs of 1 job (job id 101) are dropped" in gpus[0]
    assert any(line.startswith("cpus: written as field 5") for line in losses)


def test_a_processor_table_without_cpus_keeps_field_5_from_gpus(tmp_path):
    table = _table("processor", [5, 6], [None, None])
    losses = swf.write(table, tmp_path / "t.swf")
    assert swf.read(tmp_path / "t.swf").column("gpus").to_pylist() == [5, 6]
    assert not [line for line in losses if line.startswith(("cpus", "gpus"))]


def test_the_recorded_run_time_is_named_with_the_largest_difference(tmp_path):
    table = _table("gpu", [1, 1, 1], [None] * 3, recorded=[None, 62, 59])
    losses = swf.write(table, tmp_path / "t.swf")
    line = next(x for x in losses if x.startswith("recorded_walltime_s"))
    assert "2 jobs (job ids 102, 103)" in line and "largest difference 2 s" in line
    assert swf.read(tmp_path / "t.swf").column("walltime_s").to_pylist() == [60, 60, 60]


@settings(max_examples=30, deadline=None)
@given(with_cpus_and_recorded_walltime(swf_jobs(max_size=12)))
def test_field_5_is_cpus_where_known_on_a_processor_site(table):
    """SWF traces are processor tables: field 5 is cpus where known, else gpus."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        swf.write(table, Path(tmp) / "t.swf")
        back = swf.read(Path(tmp) / "t.swf", allow_empty=True)
    want = [c if c is not None else g for c, g in
            zip(table.column("cpus").to_pylist(), table.column("gpus").to_pylist())]
    assert back.column("gpus").to_pylist() == want
