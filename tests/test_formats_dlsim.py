"""Tiresias job-trace export: checked by an independent loader written from the simulator's
description (SymbioticLab/Tiresias simulator/, commit b0ef8449), round trips, golden file,
the loss report, bad input."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from swftools import table as jt
from swftools.cli import app
from swftools.errors import InputError, UsageError
from swftools.formats import dlsim
from swftools.formats.formatinfo import skipped_jobs
from tests.strategies import aaic_jobs, swf_jobs
from . import goldens

GOLDEN = Path(__file__).parent / "golden" / "dlsim"
SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "aaic-sample.csv.gz"
SIMULATOR_MODELS = {"vgg19", "vgg16", "vgg11", "alexnet", "resnet152", "resnet101", "resnet50",
                    "inception4", "inception3"}


def tiresias_load(path: Path) -> list[dict]:
    """Load a trace as the simulator does: DictReader with ',', every all-digit value an int,
    duration int(float()), jobs sorted by submit_time; assert what its scheduler relies on."""
    jobs = []
    for row in csv.DictReader(io.StringIO(path.read_text()), delimiter=","):
        job = {k: (int(v) if v is not None and v.isdigit() else v) for k, v in row.items()}
        job["duration"] = int(float(job["duration"]))
        for key in ("job_id", "num_gpu", "submit_time"):
            assert isinstance(job[key], int), (key, job[key])
        assert job["num_gpu"] >= 1 and job["duration"] >= 0
        assert isinstance(job["model_name"], str) and job["model_name"]
        jobs.append(job)
    jobs.sort(key=lambda j: j["submit_time"])
    return jobs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aaic_jobs(max_size=20) | swf_jobs(max_size=20), st.sampled_from([None, "resnet50"]))
def test_the_simulator_reads_every_trace_we_write(table, model):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "jobs.csv"
        losses = dlsim.write(table, path, model_name=model)
        jobs = tiresias_load(path)
        assert len(jobs) == table.num_rows - skipped_jobs(losses)
        rows = {r["job_id"]: r for r in table.to_pylist()}
        submits = [rows[j["job_id"]]["submit_time"] for j in jobs]
        for job in jobs:
            row = rows[job["job_id"]]
            assert job["num_gpu"] == row["gpus"] and job["duration"] == row["walltime_s"]
            assert job["submit_time"] == row["submit_time"] - min(submits)
            assert job["model_name"] == (model or "unknown")
        back = dlsim.read(path, allow_empty=True)
        again = Path(tmp) / "again.csv"
        dlsim.write(back, again, model_name=model)
        assert again.read_bytes() == path.read_bytes()


def _hand_table():
    cols = {"job_id": [10, 11, 12, 13, 14, 15], "user": ["a", "b", "a", "c", "b", "a"],
            "gpus": [1, 8, 0, 4, 2, 2], "submit_time": [5000, 4000, 4500, 4000, 6000, None],
            "walltime_s": [60, 3600, 10, None, 0, 5], "requested_walltime_s": [600] * 6}
    return jt.from_columns(cols, {"source_format": "nqsii"})


def test_golden_hand_table(tmp_path):
    path = tmp_path / "hand.csv"
    losses = dlsim.write(_hand_table(), path)
    if goldens.updating():
        (GOLDEN / "hand.csv").write_bytes(path.read_bytes())
        (GOLDEN / "hand.losses.json").write_text(json.dumps(losses, indent=1) + "\n")
    assert path.read_bytes() == (GOLDEN / "hand.csv").read_bytes()
    assert losses == json.loads((GOLDEN / "hand.losses.json").read_text())
    assert path.read_text().splitlines()[0] == \
        "job_id,num_gpu,submit_time,iterations,model_name,duration,interval"  # as 60_job.csv
    assert [(j["job_id"], j["submit_time"]) for j in tiresias_load(path)] == \
        [(11, 0), (10, 1000), (14, 2000)]
    back = dlsim.read(path)
    assert back.column("walltime_s").to_pylist() == [3600, 60, 0]


def test_the_simulator_sample_reads(tmp_path):
    """The simulator's own sample rows (60_job.csv's first lines) read as the simulator reads them."""
    path = tmp_path / "60_job.csv"
    path.write_text("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                    "0,1,0,606,vgg19,164,30\n1,8,30,133,vgg11,147,23\n2,2,53,157,inception4,127,26\n")
    rows = dlsim.read(path).to_pylist()
    assert [(r["job_id"], r["gpus"], r["submit_time"], r["walltime_s"]) for r in rows] == \
        [(0, 1, 0, 164), (1, 8, 30, 147), (2, 2, 53, 127)]
    assert {j["model_name"] for j in tiresias_load(path)} <= SIMULATOR_MODELS


H = "job_id,num_gpu,submit_time,duration\n"
COLUMNS = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval"


@pytest.mark.parametrize("text,located", [
    (H + "1,2,3\n", ("3 fields, the header has 4", 2, None, "1,2,3", "4 comma-separated fields")),
    (H + "1,0,3,4\n", ("'0' is not a whole number of at least 1", 2, "num_gpu", "0",
                       "digits only, >= 1")),
    (H + "1,\u0662,3,4\n", ("'\u0662' is not a whole number of at least 1", 2, "num_gpu", "\u0662",
                            "digits only, >= 1")),
    (H + "x,2,3,4\n", ("'x' is not a whole number of at least 0", 2, "job_id", "x",
                       "digits only, >= 0")),
    (H + "1,2,-3,4\n", ("'-3' is not a whole number of at least 0", 2, "submit_time", "-3",
                        "digits only, >= 0")),
    (H + "1,2,3,4\n1,2,x,4\n", ("'x' is not a whole number of at least 0", 3, "submit_time", "x",
                                "digits only, >= 0")),
    (H + "1,2,3,inf\n", ("'inf' is not a duration in seconds", 2, "duration", "inf",
                         "a number of seconds >= 0")),
    (H + "1,2,3,-1\n", ("'-1' is not a duration in seconds", 2, "duration", "-1",
                        "a number of seconds >= 0")),
    (H + "1,2,3,abc\n", ("'abc' is not a duration in seconds", 2, "duration", "abc",
                         "a number of seconds >= 0")),
    (H + "1,2,3,\u0661\n", ("'\u0661' is not a duration in seconds", 2, "duration", "\u0661",
                            "a number of seconds >= 0")),
    ("job_id,num_gpu,submit,duration\n1,2,3,4\n",
     ("header lacks submit_time", 1, "header", "job_id,num_gpu,submit,duration", "the columns " + COLUMNS)),
    ("job_id,submit,duration\n1,3,4\n",
     ("header lacks num_gpu, submit_time", 1, "header", "job_id,submit,duration", "the columns " + COLUMNS)),
    (H, ("no job rows: the file holds only a header", 1, None, None,
         "one job per line after the header, or --allow-empty for an empty trace")),
    ("", ("empty file", 1, None, None, "a header row: " + COLUMNS)),
])
def test_bad_traces_are_located(tmp_path, text, located):
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        dlsim.read(path)
    e = info.value
    assert (e.path, (e.message, e.line, e.field, e.value, e.expected)) == (str(path), located)


def test_durations_are_cut_to_whole_seconds_and_columns_found_by_name(tmp_path):
    """As the simulator does (int(float(duration))); columns in any order, extra ones ignored."""
    path = tmp_path / "t.csv"
    path.write_text("model_name,duration,submit_time,num_gpu,job_id\nvgg19,2.9,7,3,4\n"
                    "vgg11,1e2,7,1,2\n")
    rows = dlsim.read(path).to_pylist()
    assert [(r["job_id"], r["gpus"], r["submit_time"], r["walltime_s"]) for r in rows] == \
        [(2, 1, 7, 100), (4, 3, 7, 2)]


def test_model_name_must_be_a_plain_name(tmp_path):
    with pytest.raises(UsageError, match="plain name"):
        dlsim.write(_hand_table(), tmp_path / "x.csv", model_name="a,b")
    assert not (tmp_path / "x.csv").exists()


def test_convert_sample_to_tiresias_prints_the_loss_report(tmp_path):
    out = tmp_path / "s.csv"
    result = CliRunner().invoke(app, ["convert", str(SAMPLE), "--to", "tiresias", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "note: the tiresias output cannot carry everything:" in result.output
    assert "submit_time: written as seconds after the first submission" in result.output
    jobs = tiresias_load(out)
    assert len(jobs) == 5000 and jobs[0]["submit_time"] == 0
    result = CliRunner().invoke(app, ["convert", str(out), "--from", "tiresias",
                                      "--out", str(tmp_path / "back.swf")])
    assert result.exit_code == 0, result.output


def test_a_model_column_beside_the_table_names_each_job(tmp_path):
    import pyarrow as pa

    table = _hand_table()
    models = pa.array(["resnet50", "vgg16", None, "x", "", "alexnet"])
    path = tmp_path / "m.csv"
    dlsim.write(table.append_column("app_class", models), path)
    assert [(j["job_id"], j["model_name"]) for j in tiresias_load(path)] == \
        [(11, "vgg16"), (10, "resnet50"), (14, "unknown")]  # an empty cell: the placeholder
    dlsim.write(table.append_column("app_class", models), path, force=True, model_name="vgg19")
    assert {j["model_name"] for j in tiresias_load(path)} == {"vgg19"}  # the option wins
    with pytest.raises(UsageError, match="plain name"):
        dlsim.write(table.append_column("model_name", pa.array(["a,b"] * 6)), tmp_path / "y.csv")


def test_a_null_model_cell_of_a_written_job_is_the_placeholder(tmp_path):
    import pyarrow as pa

    models = pa.array(["resnet50", "vgg16", "x", "x", None, "x"])
    path = tmp_path / "m.csv"
    dlsim.write(_hand_table().append_column("model_name", models), path)
    assert [(j["job_id"], j["model_name"]) for j in tiresias_load(path)] == \
        [(11, "vgg16"), (10, "resnet50"), (14, "unknown")]


def test_a_model_name_may_hold_any_letter(tmp_path):
    path = tmp_path / "x.csv"
    dlsim.write(_hand_table(), path, model_name="Xception")
    assert {j["model_name"] for j in tiresias_load(path)} == {"Xception"}


def test_an_existing_trace_is_kept_without_force(tmp_path):
    path = tmp_path / "k.csv"
    path.write_text("mine\n")
    with pytest.raises(UsageError, match="already exists"):
        dlsim.write(_hand_table(), path)
    assert path.read_text() == "mine\n"


def test_the_loss_report_counts_each_reason(tmp_path):
    table = jt.from_columns({"job_id": [1, 2, 3, 4, 5], "gpus": [1, 0, None, 2, 1],
                             "submit_time": [10, 20, 30, None, 40],
                             "walltime_s": [5, 5, 5, 5, None]}, {"source_format": "nqsii"})
    losses = dlsim.write(table, tmp_path / "l.csv")
    assert losses[:3] == [
        "1 job skipped: submit_time unknown",
        "1 job skipped: never ran (walltime_s unknown): the simulator needs a duration",
        "2 jobs skipped: requesting no GPUs or an unknown number (gpus): the simulator places "
        "num_gpu >= 1"]


def test_a_read_trace_names_its_format_file_and_unit(tmp_path):
    path = tmp_path / "60_job.csv"
    path.write_text("job_id,num_gpu,submit_time,duration\n0,1,0,5\n")
    meta = jt.get_metadata(dlsim.read(path))
    assert (meta["source_format"], meta["source_file"], meta["processor_unit"]) == \
        ("tiresias", "60_job.csv", "gpu")


def test_a_cell_is_quoted_in_an_error_as_the_file_holds_it(tmp_path):
    path = tmp_path / "q.csv"
    path.write_bytes(b'job_id,num_gpu,submit_time,duration\r\n"7\r\n",1,0,5\r\n')
    with pytest.raises(InputError) as info:
        dlsim.read(path)
    assert (info.value.line, info.value.field, info.value.value) == (2, "job_id", "7\r\n")
