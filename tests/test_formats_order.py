"""Writers tell the truth (issue 24 item 6): every writer writes in submit order (stable, unknown
submit times last), an SWF header lists every queue number it writes, and the written count is
what the loss report says (``swftools.formats.order``, ``formats.ConversionResult``)."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swftools import formats
from swftools import table as jt
from swftools.formats.order import in_submit_order, submit_order
from swftools.validate import validate
from tests.strategies import aaic_jobs

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "aaic-sample.csv.gz"
CORPUS = ROOT / "tests" / "corpus"
QHIST = CORPUS / "pbs" / "qhist-testdata"
QHIST_TZ = "America/Denver"  # its stamps are local times of UTC-06:00 (March 2025: MDT)
CPU050 = CORPUS / "alibaba" / "kubernetes-scheduler-simulator-openb_pod_list_cpu050.csv"
# every writer; the options each needs (a site for a pod list's node list)
WRITERS = {"swf": {}, "batsim": {}, "tiresias": {}, "slurm": {}, "pbs": {},
           "alibaba": {"site": "aaic"}}
# Not here: the data package (the job table itself, in its own order) and NQSII (an accounting
# log, one record per finished job in the table's order, as the AAIC logs are).
EXPORTS = list(WRITERS)
SUFFIX = {"swf": ".swf", "batsim": ".json", "tiresias": ".csv", "slurm": ".sacct", "pbs": ".log",
          "alibaba": "_pod_list_x.csv"}


def _write(table: pa.Table, fmt: str, tmp: Path) -> tuple[Path, list[str]]:
    path = tmp / f"out-{fmt}{SUFFIX[fmt]}"
    return path, formats.write(table, path, fmt, force=True, **WRITERS[fmt])


def _shuffled(table: pa.Table, seed: int = 7) -> pa.Table:
    order = list(range(table.num_rows))
    random.Random(seed).shuffle(order)
    return table.take(pa.array(order, pa.int64()))


@pytest.fixture(scope="module")
def sample() -> pa.Table:
    return formats.read(SAMPLE).slice(0, 400)


# -- the order --------------------------------------------------------------------------------

def test_a_table_in_order_is_returned_as_it_is():
    for times in ([5, 5, None], [5, 5, 7], [-1, 0, 0, 3]):  # ties are in order
        table = jt.from_columns({"job_id": list(range(len(times))), "submit_time": times})
        assert submit_order(table) is None
        assert in_submit_order(table) is table


def test_ties_keep_row_order_and_unknown_submit_times_go_last():
    table = jt.from_columns({"job_id": [1, 2, 3, 4, 5], "submit_time": [9, None, 3, 9, 3]})
    assert submit_order(table).tolist() == [2, 4, 0, 3, 1]
    ordered = in_submit_order(table)
    assert ordered.column("job_id").to_pylist() == [3, 5, 1, 4, 2]
    assert ordered.schema.metadata == table.schema.metadata


def test_a_table_without_submit_times_keeps_its_order():
    table = jt.from_columns({"job_id": [3, 1, 2]}).drop_columns(["submit_time"])
    assert submit_order(table) is None
    assert in_submit_order(table) is table


@pytest.mark.parametrize("times,expected", [
    ([1, 2, 3, None, None], None),            # known times first, in order, unknown last
    ([5, 3, None], [1, 0, 2]),
    ([1, 3, 2, None], [0, 2, 1, 3]),          # out of order after the first time only
    ([1, 2, 4, 3, None, None], [0, 1, 3, 2, 4, 5]),
])
def test_known_times_before_unknown_ones_are_still_sorted(times, expected):
    table = jt.from_columns({"job_id": list(range(len(times))), "submit_time": times})
    order = submit_order(table)
    assert (None if order is None else order.tolist()) == expected


def test_many_ties_keep_row_order():
    """A stable sort on a large table (numpy's default sort is not stable past 16 rows)."""
    rng = random.Random(5)
    times = [rng.choice([30, 10, 20]) for _ in range(3000)]
    for nulls in (False, True):
        values = [None if nulls and i % 7 == 0 else t for i, t in enumerate(times)]
        table = jt.from_columns({"job_id": list(range(len(values))), "submit_time": values})
        expected = sorted(range(len(values)),
                          key=lambda i: (values[i] is None, values[i] or 0, i))
        assert submit_order(table).tolist() == expected


def test_submit_times_are_compared_as_integers():
    """Times a float64 cannot tell apart (2**62 and 2**62 + 1) are still ordered."""
    table = jt.from_columns({"job_id": [1, 2, 3], "submit_time": [2**62 + 1, 2**62, None]})
    assert submit_order(table).tolist() == [1, 0, 2]
    assert in_submit_order(table).column("job_id").to_pylist() == [2, 1, 3]


def test_a_table_in_several_chunks_with_unknown_times():
    """Streamed readers give chunked columns: an all-unknown chunk, a chunk with gaps."""
    parts = [jt.from_columns({"job_id": [1, 2], "submit_time": [None, None]}),
             jt.from_columns({"job_id": [3, 4, 5], "submit_time": [9, None, 4]}),
             jt.from_columns({"job_id": [6], "submit_time": [1]})]
    table = pa.concat_tables(parts)
    assert table.column("submit_time").num_chunks == 3
    assert in_submit_order(table).column("job_id").to_pylist() == [6, 5, 3, 1, 2, 4]


@given(st.lists(st.one_of(st.none(), st.integers(-3, 3)), max_size=25))
def test_submit_order_is_a_stable_sort_with_unknown_last(times):
    table = jt.from_columns({"job_id": list(range(len(times))), "submit_time": times})
    expected = sorted(range(len(times)), key=lambda i: (times[i] is None, times[i] or 0, i))
    order = submit_order(table)
    assert (list(range(len(times))) if order is None else order.tolist()) == expected
    assert (order is None) == (expected == list(range(len(times))))


# -- every writer: order and counts -----------------------------------------------------------

@pytest.mark.parametrize("fmt", EXPORTS)
def test_a_shuffled_table_is_written_in_submit_order(fmt, sample, tmp_path):
    path, _ = _write(_shuffled(sample), fmt, tmp_path)
    report = validate(path, fmt=fmt, allow_empty=True, site="aaic" if fmt == "alibaba" else None)
    assert not [f for f in report.findings if f.rule == "submit-order"], fmt


@pytest.mark.parametrize("fmt", EXPORTS)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_permutation_of_the_rows_gives_the_same_bytes(fmt, data):
    table = data.draw(aaic_jobs(min_size=1, max_size=12))
    # distinct submit times (ties keep row order, so they would depend on it)
    table = table.set_column(table.schema.get_field_index("submit_time"), "submit_time",
                             pa.array([1_500_000_000 + 100 * i for i in range(table.num_rows)],
                                      pa.int64()))
    for name, base in (("start_time", "submit_time"), ("finish_time", "start_time")):
        delta = {"start_time": "wait_s", "finish_time": "walltime_s"}[name]
        values = [None if b is None or d is None else b + d for b, d in
                  zip(table.column(base).to_pylist(), table.column(delta).to_pylist())]
        table = table.set_column(table.schema.get_field_index(name), name,
                                 pa.array(values, pa.int64()))
    order = data.draw(st.permutations(range(table.num_rows)))
    with tempfile.TemporaryDirectory() as tmp:
        first, _ = _write(table, fmt, Path(tmp))
        expected = first.read_bytes()
        again, _ = _write(table.take(pa.array(order, pa.int64())), fmt, Path(tmp))
        assert again.read_bytes() == expected


def _rows_written(path: Path, fmt: str) -> int:
    return formats.read(path, fmt, allow_empty=True, **({"tz": "UTC"} if fmt in ("slurm", "pbs")
                                                        else {})).num_rows


@pytest.mark.parametrize("fmt", EXPORTS)
def test_the_written_count_is_the_rows_in_the_file(fmt, tmp_path):
    table = formats.read(CPU050, "alibaba")  # CPU-only pods, pods that never ran: skipped
    path, losses = _write(table, fmt, tmp_path)
    result = formats.ConversionResult(table, "x", fmt, losses)
    assert result.written == _rows_written(path, fmt), (fmt, losses)
    if fmt in ("batsim", "tiresias"):
        assert 0 < result.written < result.jobs and result.skipped
        assert "wrote 2094 of 2697 jobs (603 skipped: 245 never ran" in result.headline("a", "b")


def test_an_export_that_writes_nothing_says_so(tmp_path):
    table = jt.from_columns({"job_id": [1], "submit_time": [10], "walltime_s": [0], "gpus": [1]})
    path, losses = _write(table, "batsim", tmp_path)
    result = formats.ConversionResult(table, "swf", "batsim", losses)
    assert json.loads(path.read_text())["jobs"] == [] and result.written == 0
    assert result.headline("in", "out") == (
        "wrote 0 of 1 job (1 skipped: run time 0 s: Batsim delay profiles must last more than "
        "0 s): in (swf) -> out (batsim)")


def test_a_table_written_back_to_its_own_format_keeps_its_order(sample, tmp_path):
    path, _ = _write(_shuffled(sample), "swf", tmp_path)
    table = _shuffled(formats.read(path, "swf"), seed=3)  # as an SWF file not in submit order
    (tmp_path / "again").mkdir()
    again, _ = _write(table, "swf", tmp_path / "again")
    back = formats.read(again, "swf")
    assert back.column("job_id").to_pylist() == table.column("job_id").to_pylist()


# -- real logs that failed submit-order ---------------------------------------------------------

@pytest.mark.parametrize("src,fmt,opts", [(QHIST, "pbs", {"tz": QHIST_TZ}),
                                          (CPU050, "alibaba", {})])
def test_real_logs_not_in_submit_order_give_valid_swf(src, fmt, opts, tmp_path):
    table = formats.read(src, fmt, **opts)
    if fmt == "alibaba":  # the pod list is not in creation order (the PBS reader orders rows)
        assert submit_order(table) is not None
    out = tmp_path / "out.swf"
    formats.write(table, out, "swf")
    report = validate(out)
    assert report.valid and not [f for f in report.findings if f.rule == "submit-order"]


# -- SWF queues --------------------------------------------------------------------------------

def _queued(queues: list[str | None]) -> pa.Table:
    n = len(queues)
    return jt.from_columns({"job_id": list(range(1, n + 1)), "queue": queues,
                            "submit_time": [100 * i for i in range(n)],
                            "gpus": [1] * n}, {"source_format": "slurm"})


def _header(table: pa.Table, site: str | None = None) -> list[str]:
    from swftools.formats.swf.writer import to_bytes

    text = to_bytes(table, site).decode()
    return [line for line in text.splitlines() if line.startswith(";")]


def test_the_header_lists_every_queue_number_written_without_a_site():
    header = _header(_queued(["gpu", "cpu", None, "gpu", "debug"]))
    assert "; MaxQueues: 3" in header
    assert [h for h in header if h.startswith("; Queue:")] == [
        "; Queue: 1 gpu", "; Queue: 2 cpu", "; Queue: 3 debug"]
    numeric = _header(_queued(["7", "2", "7"]))
    assert "; MaxQueues: 7" in numeric and "; Queue: 2" in numeric and "; Queue: 7" in numeric


def test_queues_a_site_does_not_have_are_listed_after_its_own(tmp_path):
    from swftools.site import resolve_site

    site = resolve_site("aaic")
    own = max(q.number for q in site.queues)
    table = _queued([site.queues[0].name, "partition_x", "partition_y"])
    header = _header(table, "aaic")
    assert f"; MaxQueues: {own + 2}" in header
    assert f"; Queue: {own + 1} partition_x (not a queue of site aaic)" in header
    assert f"; Queue: {own + 2} partition_y (not a queue of site aaic)" in header
    losses = formats.write(table, tmp_path / "q.swf", "swf", site="aaic")
    assert any("site aaic does not have" in loss and "partition_x" in loss
               for loss in losses), losses
    numbers = [int(line.split()[14]) for line in (tmp_path / "q.swf").read_text().splitlines()
               if not line.startswith(";")]
    assert max(numbers) <= own + 2


def test_the_order_check_fails_on_the_old_behaviour(monkeypatch, tmp_path):
    """Without the sort (rows in record order) the shuffled table fails submit-order: the
    writer tests above can fail."""
    from swftools.formats import order

    monkeypatch.setattr(order, "in_submit_order", lambda table: table)
    table = _shuffled(formats.read(SAMPLE).slice(0, 50))
    path, _ = _write(table, "swf", tmp_path)
    assert [f for f in validate(path).findings if f.rule == "submit-order"]
