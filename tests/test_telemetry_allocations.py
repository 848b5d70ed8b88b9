"""Allocation tables: whole-node expansion, node sharing, contradictions as errors."""

from __future__ import annotations

import duckdb
import pytest

from swftools import table as jt
from swftools.errors import InputError
from swftools.telemetry.allocations import load_allocations, prepare_allocations
from swftools.telemetry.engine import register_jobs

T = 1_700_006_400


def _jobs():
    # job: (gpus_per_node, start, finish)
    spec = {1: (8, 0, 600), 2: (2, 0, 600), 3: (1, 300, 900), 4: (1, 1000, 1100), 5: (1, None, None)}
    return jt.from_columns({
        "job_id": list(spec), "nodes": [1] * len(spec), "gpus_per_node": [s[0] for s in spec.values()],
        "gpus": [s[0] for s in spec.values()],
        "start_time": [None if s[1] is None else T + s[1] for s in spec.values()],
        "finish_time": [None if s[2] is None else T + s[2] for s in spec.values()]})


def _prepare(tmp_path, text, jobs=None):
    path = tmp_path / "alloc.csv"
    path.write_text("job_id,node,gpu_index\n" + text)
    con = duckdb.connect()
    register_jobs(con, jobs or _jobs())
    where = load_allocations(con, path)
    prepare_allocations(con, where, 8)
    return con


def test_whole_node_jobs_are_expanded_and_sharing_is_found(tmp_path):
    con = _prepare(tmp_path, "1,a,\n2,b,\n3,b,5\n4,b,5\n")
    assert con.execute("SELECT count(*), min(gpu_index), max(gpu_index) FROM gpu_alloc "
                       "WHERE job_id = 1").fetchone() == (8, 0, 7)
    info = dict(con.execute("SELECT job_id, gpus_attributed FROM jobinfo").fetchall())
    assert info == {1: 8, 2: None, 3: 1, 4: 1, 5: None}  # job 2: 2 of 8 GPUs, indices unknown
    shared = dict(con.execute("SELECT job_id, node_shared FROM jobinfo").fetchall())
    assert shared == {1: False, 2: True, 3: True, 4: False, 5: None}
    assert con.execute("SELECT job_id FROM node_excl ORDER BY job_id").fetchall() == [(1,), (4,)]


@pytest.mark.parametrize("text,message,line", [
    ("1,a,\n9,a,0\n", "job 9 is not in the job table", 3),
    ("3,a,8\n", "gpu_index 8 does not exist on a 8-GPU node", 2),
    ("3,a,x\n", "gpu_index 'x' is not a GPU index", 2),
    ("three,a,1\n", "job_id 'three' is not a job id", 2),
    ("3,,1\n", "node is empty", 2),
    ("1,a,\n1,a,3\n", "has rows with and without gpu_index", 2),
])
def test_bad_rows(tmp_path, text, message, line):
    with pytest.raises(InputError, match=message) as info:
        _prepare(tmp_path, text)
    assert info.value.line == line


def test_a_gpu_held_twice_at_once_names_both_jobs(tmp_path):
    with pytest.raises(InputError, match="GPU 0 of node a is held by job 1 until .* and by job 3"):
        _prepare(tmp_path, "1,a,\n3,a,0\n")


def test_gpu_count_must_match_the_job_table(tmp_path):
    with pytest.raises(InputError, match="job 2: the allocation gives 1 GPU but the job "
                                         "table says gpus = 2"):
        _prepare(tmp_path, "2,a,0\n")


def test_missing_columns_and_files(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("job,node\n1,a\n")
    con = duckdb.connect()
    with pytest.raises(InputError, match="missing columns job_id, gpu_index"):
        load_allocations(con, path)
    with pytest.raises(InputError, match="no such allocation file"):
        load_allocations(con, tmp_path / "nope.csv")
