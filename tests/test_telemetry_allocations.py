"""Allocation tables: whole-node expansion, node sharing, contradictions as errors."""

from __future__ import annotations

from dataclasses import astuple

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools import table as jt
from swftools.errors import InputError
from swftools.telemetry.allocations import load_allocations, prepare_allocations
from swftools.telemetry.engine import register_jobs

from .strategies import examples

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


# --- an independent reference of prepare_allocations, on generated tables ---------------------

GPN = 2  # the site's GPUs per node in the generated cases


def _reference(jobs: list[dict], rows: list[tuple]):
    """What ``prepare_allocations`` makes of ``jobs`` and allocation ``rows`` (job, node, gpu or
    None, line), from the module docstring's rules: ``("error", candidates)`` or
    ``("ok", gpu_alloc, node_excl, jobinfo)``."""
    by_id = {j["job_id"]: j for j in jobs}
    for job, _, _, line in rows:
        if job not in by_id:
            return "error", {(f"job {job} is not in the job table", line, "job_id", str(job),
                              "a job_id of the jobs")}
    for _, _, gpu, line in rows:
        if gpu is not None and gpu >= GPN:
            return "error", {(f"gpu_index {gpu} does not exist on a {GPN}-GPU node", line,
                              "gpu_index", str(gpu), f"0..{GPN - 1}")}
    groups: dict[tuple, list] = {}
    for job, node, gpu, line in rows:
        groups.setdefault((job, node), []).append((gpu, line))
    mixed = sorted((min(ln for _, ln in g), job, node) for (job, node), g in groups.items()
                   if any(x is not None for x, _ in g) and any(x is None for x, _ in g))
    if mixed:
        line, job, node = mixed[0]
        return "error", {(f"job {job} on node {node} has rows with and without gpu_index", line,
                          "gpu_index", None,
                          "either every GPU listed or one row with gpu_index empty")}

    def timed(j):
        return j["start"] is not None and j["end"] is not None and j["end"] >= j["start"]

    gpus = {(job, node, gpu) for job, node, gpu, _ in rows if gpu is not None}
    gpus |= {(job, node, g) for job, node, gpu, _ in rows
             if gpu is None and by_id[job]["gpn"] == GPN for g in range(GPN)}
    gpu_rows = sorted((node, gpu, by_id[job]["start"], job, by_id[job]["end"])
                      for job, node, gpu in gpus if timed(by_id[job]))
    clashes = []
    for node, gpu in {(n, g) for n, g, *_ in gpu_rows}:
        held = sorted((s, job, e) for n, g, s, job, e in gpu_rows if (n, g) == (node, gpu) and e > s)
        for (_, a, a_end), (b_start, b, _) in zip(held, held[1:]):
            if a_end > b_start:
                clashes.append(((node, gpu, b_start), (
                    f"GPU {gpu} of node {node} is held by job {a} until {a_end} and by job {b} "
                    f"from {b_start}", None, "gpu_index", f"{node}/{gpu}",
                    "one job per GPU at a time")))
    if clashes:
        first = min(key for key, _ in clashes)
        return "error", {error for key, error in clashes if key == first}
    gpu_alloc = [(k + 1, job, node, gpu, s, e) for k, (node, gpu, s, job, e) in enumerate(gpu_rows)]
    node_rows = {(job, node, by_id[job]["start"], by_id[job]["end"])
                 for job, node, _, _ in rows if timed(by_id[job])}
    shared: dict[int, bool] = {}
    for job, node, s, e in node_rows:
        if e > s:
            others = [(s2, e2) for j2, n2, s2, e2 in node_rows
                      if n2 == node and j2 != job and e2 > s2]
            shared[job] = shared.get(job, False) or any(s2 < e and e2 > s for s2, e2 in others)
    excl = sorted((node, s, job, e) for job, node, s, e in node_rows if shared.get(job) is False)
    node_excl = [(-(k + 1), job, node, s, e) for k, (node, s, job, e) in enumerate(excl)]
    in_alloc = {job for job, *_ in rows}
    counts: dict[int, int] = {}
    for _, job, *_ in gpu_alloc:
        counts[job] = counts.get(job, 0) + 1
    in_nodes = {job for job, *_ in node_rows}
    info = [(j["job_id"], timed(j), j["job_id"] in in_alloc, counts.get(j["job_id"]),
             shared.get(j["job_id"], False if j["job_id"] in in_nodes else None)) for j in jobs]
    for job_id, _, _, n, _ in info:
        if n is not None and n != by_id[job_id]["gpus"]:
            return "error", {(f"job {job_id}: the allocation gives {n} GPU{'s' * (n != 1)} but "
                              f"the job table says gpus = {by_id[job_id]['gpus']}", None,
                              "gpu_index", str(job_id), "one row per allocated GPU")}
    return "ok", gpu_alloc, node_excl, info


@st.composite
def _allocation_cases(draw):
    """Jobs on nodes a and b, whole (no index) or by listed GPUs, mostly consistent with the
    job table; now and then an unknown job, an index past the node, a node with and without
    indices, a GPU count that does not match. Rows in any order."""
    jobs, rows = [], []
    for job_id in draw(st.lists(st.integers(1, 6), min_size=1, max_size=4, unique=True)):
        start = draw(st.sampled_from([0, 0, 10, 10, 20, None]))
        length = draw(st.sampled_from([10, 10, 20, 20, 0, -5, None]))
        gpn = draw(st.integers(1, GPN))
        held = 0
        for node in draw(st.lists(st.sampled_from(["a", "b"]), min_size=draw(st.sampled_from(
                [0, 1, 1, 1])), max_size=2, unique=True)):
            if draw(st.booleans()):
                rows.append((job_id, node, None))
                held += GPN if gpn == GPN else 0
            else:
                listed = draw(st.lists(st.integers(0, GPN - 1), min_size=1, max_size=GPN))
                rows += [(job_id, node, g) for g in listed]
                held += len(set(listed))
        jobs.append({"job_id": job_id, "gpn": gpn, "gpus": held or gpn,
                     "start": start, "end": None if None in (start, length) else start + length})
    if draw(st.integers(0, 9)) == 0:
        jobs[0]["gpus"] += 1
    ids, nodes = [j["job_id"] for j in jobs], st.sampled_from(["a", "b"])
    # an explicit choice: a list drawn with max_size=1 was empty nearly every time
    kind = draw(st.sampled_from(["none"] * 4 + ["unknown job", "past the node", "mixed", "any"]))
    extra = []
    if kind == "mixed" and rows:  # a job's node both whole and by listed GPUs
        job, node, gpu = draw(st.sampled_from(rows))
        extra = [(job, node, draw(st.integers(0, GPN - 1)) if gpu is None else None)]
    elif kind == "unknown job":
        extra = draw(st.lists(st.tuples(st.sampled_from([7, 8]), nodes,
                                        st.one_of(st.none(), st.integers(0, GPN - 1))),
                              min_size=1, max_size=2))
    elif kind == "past the node":
        extra = draw(st.lists(st.tuples(st.sampled_from(ids), nodes, st.integers(GPN, GPN + 2)),
                              min_size=1, max_size=2))
    elif kind == "any":
        extra = [draw(st.tuples(st.sampled_from(ids + [7]), nodes,
                                st.one_of(st.none(), st.integers(0, GPN))))]
    rows = draw(st.permutations(rows + extra))
    return jobs, [(job, node, gpu, k + 2) for k, (job, node, gpu) in enumerate(rows)]


@settings(max_examples=examples(70), deadline=None)
@given(_allocation_cases())
def test_prepare_allocations_equals_a_reference(case):
    jobs, rows = case
    table = jt.from_columns({
        "job_id": [j["job_id"] for j in jobs], "nodes": [1] * len(jobs),
        "gpus_per_node": [j["gpn"] for j in jobs], "gpus": [j["gpus"] for j in jobs],
        "start_time": [j["start"] for j in jobs], "finish_time": [j["end"] for j in jobs]})
    alloc = pa.table({"job_id": pa.array([r[0] for r in rows], pa.int64()),
                      "node": pa.array([r[1] for r in rows], pa.string()),
                      "gpu_index": pa.array([r[2] for r in rows], pa.int64())})
    con = duckdb.connect()
    register_jobs(con, table)
    assert load_allocations(con, alloc) == "<allocations>"
    want = _reference(jobs, rows)
    if want[0] == "error":
        with pytest.raises(InputError) as exc:
            prepare_allocations(con, "<allocations>", GPN)
        err = exc.value
        assert err.path == "<allocations>"
        assert (err.message, err.line, err.field, err.value, err.expected) in want[1]
        return
    prepare_allocations(con, "<allocations>", GPN)
    assert con.execute("SELECT * FROM gpu_alloc ORDER BY alloc_id").fetchall() == want[1]
    assert con.execute("SELECT alloc_id, job_id, node, start_s, end_s FROM node_excl "
                       "ORDER BY alloc_id DESC").fetchall() == want[2]
    assert con.execute("SELECT job_id, has_times, in_alloc, gpus_attributed, node_shared "
                       "FROM jobinfo ORDER BY row_order").fetchall() == want[3]
    assert sorted(con.execute("SELECT * FROM alloc_ids").fetchall(), key=str) == sorted(
        [(a, j, n, g) for a, j, n, g, _, _ in want[1]] + [(a, j, n, None) for a, j, n, _, _
                                                            in want[2]], key=str)


# --- reading the table: every source, every located error ----------------------------------

def _raw(con) -> list[tuple]:
    return con.execute("SELECT job_id, node, gpu_index, line FROM alloc_raw ORDER BY line").fetchall()


def test_no_table_is_an_empty_allocation():
    con = duckdb.connect()
    assert load_allocations(con, None) == "<no allocation table>"
    assert _raw(con) == []
    assert con.execute("DESCRIBE alloc_raw").fetchall()[0][:2] == ("job_id", "BIGINT")


def test_an_arrow_table_is_cast_and_numbered_like_a_csv_file():
    con = duckdb.connect()
    table = pa.table({"extra": ["x", "y"], "gpu_index": pa.array([3, None], pa.int8()),
                      "node": ["n1", "n2"], "job_id": ["12", "13"]})
    assert load_allocations(con, table) == "<allocations>"
    assert _raw(con) == [(12, "n1", 3, 2), (13, "n2", None, 3)]
    with pytest.raises(InputError) as exc:
        load_allocations(con, table.drop(["node"]))
    assert astuple(exc.value) == ("<allocations>", "missing column node", None, None, None,
                                  "job_id, node, gpu_index")
    with pytest.raises(InputError) as exc:
        load_allocations(con, table.select(["extra"]))
    assert exc.value.message == "missing columns job_id, node, gpu_index"


def test_csv_gz_and_parquet_files_read_alike(tmp_path):
    import gzip

    import pyarrow.parquet as pq

    text = "job_id,node,gpu_index\n12,n1,3\n13,n2,\n"
    plain, packed, misnamed = tmp_path / "a.csv", tmp_path / "a.csv.gz", tmp_path / "b.CSV.GZ"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    misnamed.write_text(text)  # a .gz name, plain content: read by content
    want = [(12, "n1", 3, 2), (13, "n2", None, 3)]
    whole = tmp_path / "w.csv"  # whole numbers written as floats read as integers
    whole.write_text("job_id,node,gpu_index\n12.0,n1,3.0\n13,n2,\n")
    for path in (plain, packed, misnamed, whole):
        con = duckdb.connect()
        assert load_allocations(con, path) == str(path)
        assert _raw(con) == want
    parquet = tmp_path / "a.Parquet"
    pq.write_table(pa.table({"job_id": [12, 13], "node": ["n1", "n2"],
                             "gpu_index": pa.array([3, None], pa.int32())}), parquet)
    con = duckdb.connect()
    assert load_allocations(con, parquet) == str(parquet)
    assert _raw(con) == [(12, "n1", 3, 1), (13, "n2", None, 2)]  # no header line


def test_files_that_are_no_allocation_table(tmp_path):
    con = duckdb.connect()
    other = tmp_path / "a.tsv"
    other.write_text("job_id\tnode\tgpu_index\n")
    with pytest.raises(InputError) as exc:
        load_allocations(con, other)
    assert astuple(exc.value) == (str(other), "not an allocation table", None, None, None,
                                  ".csv, .csv.gz or .parquet")
    broken = tmp_path / "a.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError) as exc:
        load_allocations(con, broken)
    assert exc.value.message.startswith("cannot read: ") and "\n" not in exc.value.message
    with pytest.raises(InputError) as exc:
        load_allocations(con, tmp_path)
    assert astuple(exc.value)[:3] == (str(tmp_path), "no such allocation file", None)
    header = tmp_path / "h.csv"
    header.write_text("job_id,gpu\n1,2\n")
    with pytest.raises(InputError) as exc:
        load_allocations(con, header)
    assert astuple(exc.value) == (str(header), "missing columns node, gpu_index", 1, "header",
                                  None, "job_id, node, gpu_index")


@pytest.mark.parametrize("row,want", [
    ("-3,a,1", ("job_id '-3' is not a job id", "job_id", "-3", "a non-negative integer")),
    ("x3,a,1", ("job_id 'x3' is not a job id", "job_id", "x3", "a non-negative integer")),
    (",a,1", ("job_id None is not a job id", "job_id", "None", "a non-negative integer")),
    ("3,,1", ("node is empty", "node", None, None)),
    ("3,a,-1", ("gpu_index '-1' is not a GPU index", "gpu_index", "-1",
                "a non-negative integer, or empty when unknown")),
    ("3,a,1.5", ("gpu_index '1.5' is not a GPU index", "gpu_index", "1.5",
                 "a non-negative integer, or empty when unknown")),
    ("3.7,a,1", ("job_id '3.7' is not a job id", "job_id", "3.7", "a non-negative integer")),
])
def test_a_bad_row_is_located_after_good_ones(tmp_path, row, want):
    """Fractions are refused, not rounded (DuckDB casts '1.5' to 2); negative ids too."""
    path = tmp_path / "alloc.csv"
    path.write_text("job_id,node,gpu_index\n1,a,0\n2,b,\n0,c,7\n" + row + "\n4,d,x\n")
    with pytest.raises(InputError) as exc:
        load_allocations(duckdb.connect(), path)
    assert astuple(exc.value) == (str(path), want[0], 5, *want[1:])


def test_a_job_overlapped_by_an_earlier_long_job_shares_its_node(tmp_path):
    """A holds GPU 0 over 0..30 s; B and C hold GPU 1 over 10..15 and 20..25. C's previous
    interval on the node (B) ended before it, but A is still running: all three share."""
    jobs = jt.from_columns({"job_id": [1, 2, 3, 4], "nodes": [1] * 4, "gpus_per_node": [1] * 4,
                            "gpus": [1] * 4, "start_time": [T, T + 10, T + 20, T + 40],
                            "finish_time": [T + 30, T + 15, T + 25, T + 50]})
    con = _prepare(tmp_path, "1,a,0\n2,a,1\n3,a,1\n4,a,1\n", jobs)
    shared = dict(con.execute("SELECT job_id, node_shared FROM jobinfo").fetchall())
    assert shared == {1: True, 2: True, 3: True, 4: False}


@pytest.mark.parametrize("row,field,value", [
    ("3.0,a,x", "gpu_index", "x"),  # a whole number written as a float is a job id
    ("+3,,1", "node", None),
    (" 0,a,-1", "gpu_index", "-1"),
    ("0,a,x", "gpu_index", "x"),  # job 0 is a job id
    ("1e0,a,1.5", "gpu_index", "1.5"),
])
def test_the_bad_cell_is_the_one_named(tmp_path, row, field, value):
    """A row is refused for the cell that is bad, not for a job id written another way."""
    path = tmp_path / "alloc.csv"
    path.write_text("job_id,node,gpu_index\n1,a,0\n" + row + "\n")
    with pytest.raises(InputError) as exc:
        load_allocations(duckdb.connect(), path)
    assert (exc.value.line, exc.value.field, exc.value.value) == (3, field, value)


def test_parquet_cells_are_checked_like_csv_cells(tmp_path):
    import pyarrow.parquet as pq

    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"job_id": [1, 2], "node": ["a", ""],
                             "gpu_index": pa.array([0, None], pa.int32())}), path)
    with pytest.raises(InputError) as exc:
        load_allocations(duckdb.connect(), path)
    assert astuple(exc.value) == (str(path), "node is empty", 2, "node", None, None)


def test_a_misnamed_gzip_file_is_read_with_a_warning(tmp_path):
    from swftools.formats.inputs import MisnamedGzipWarning

    path = tmp_path / "a.csv.gz"
    path.write_text("job_id,node,gpu_index\n12,n1,3\n")
    with pytest.warns(MisnamedGzipWarning, match="a.csv.gz: named .gz but the content is not gzip"):
        load_allocations(duckdb.connect(), path)


def test_an_unreadable_file_names_itself_and_duckdbs_first_line(tmp_path):
    path = tmp_path / "a.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError) as exc:
        load_allocations(duckdb.connect(), path)
    assert exc.value.path == str(path)
    assert exc.value.message == (f"cannot read: Invalid Input Error: No magic bytes found at end "
                                 f"of file '{path}'")


def test_one_missing_column_of_a_file_is_named(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("job_id,node\n1,a\n")
    with pytest.raises(InputError) as exc:
        load_allocations(duckdb.connect(), path)
    assert astuple(exc.value) == (str(path), "missing column gpu_index", 1, "header", None,
                                  "job_id, node, gpu_index")


def test_an_arrow_table_is_not_left_registered():
    con = duckdb.connect()
    load_allocations(con, pa.table({"job_id": [1], "node": ["a"], "gpu_index": [0]}))
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT * FROM alloc_arrow")


@pytest.mark.parametrize("columns,field,value", [
    ({"job_id": ["1", "x"], "node": ["a", "b"], "gpu_index": [0, 1]}, "job_id", "x"),
    ({"job_id": [1, -2], "node": ["a", "b"], "gpu_index": [0, 1]}, "job_id", "-2"),
    ({"job_id": [1, 2], "node": ["a", None], "gpu_index": [0, 1]}, "node", None),
    ({"job_id": [1, 2], "node": ["a", "b"], "gpu_index": [0, -1]}, "gpu_index", "-1"),
    ({"job_id": [1.0, 2.0], "node": ["a", "b"], "gpu_index": [0.0, 1.5]}, "gpu_index", "1.5"),
])
def test_arrow_cells_are_checked_like_file_cells(columns, field, value):
    """An Arrow table's bad cell is refused, at its row numbered as a file's line, like the same
    cell of a file (it was cast unchecked: a negative id or GPU index, an empty node, or a
    duckdb conversion error); the table is not left registered."""
    con = duckdb.connect()
    with pytest.raises(InputError) as exc:
        load_allocations(con, pa.table(columns))
    assert (exc.value.path, exc.value.line, exc.value.field, exc.value.value) == \
        ("<allocations>", 3, field, value)
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT * FROM alloc_arrow")
