"""swftools.formats.swf.mapping (issue 30): SWF field values, queue numbering, the generated
header and the loss report, against hand-worked cases and brute-force recomputations."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from swftools import table as jt
from swftools.formats.swf import mapping as m
from swftools.formats.swf.fields import FIELDS, SwfField
from swftools.site import Queue, Site

T0 = 1_600_000_000  # 2020-09-13 12:26:40 UTC


def _site(**kw) -> Site:
    queues = (Queue("short", 3, 1, 2, 1, 4, 3600, 7200),
              Queue("long", 5, 1, 4, 1, 4, 7200, 36000))
    args = dict(name="testsite", time_zone="UTC", gpus_per_node=4,
                capacity_since=(T0,), capacity_nodes=(10,), queues=queues, title="Test Site")
    args.update(kw)
    return Site(**args)


def _table(meta=None, **columns):
    n = len(next(iter(columns.values())))
    columns.setdefault("job_id", list(range(1, n + 1)))
    return jt.from_columns(columns, {"source_format": "slurm", "time_zone": "UTC",
                                     **(meta or {})})


def _field(table, field, site=None):
    return m.swf_field_values(table, site)[FIELDS.index(field)].to_pylist()


# --- queue numbering ------------------------------------------------------------------------

def test_queue_numbers_by_site_names_case_blind_and_unknown_after_the_highest():
    col = pa.chunked_array([["LONG", "short", "gpu", None, "cpu", "gpu"]])
    # site queues 3 and 5: unknown names 'gpu', 'cpu' numbered 6, 7 by first appearance
    assert m.queue_numbers(col, _site()).to_pylist() == [5, 3, 6, None, 7, 6]


def test_queue_numbers_all_known_and_numeric_and_without_site():
    assert m.queue_numbers(pa.chunked_array([["short", None, "long"]]), _site()).to_pylist() \
        == [3, None, 5]
    assert m.queue_numbers(pa.chunked_array([["9", "2"]]), _site()).to_pylist() == [9, 2]
    assert m.queue_numbers(pa.chunked_array([["b", "a", "b"]]), None).to_pylist() == [1, 2, 1]


def test_queue_names_first_name_per_number_sorted():
    col = pa.chunked_array([["gpu", "Long", "long", None, "short"]])
    assert m.queue_names(col, _site()) == [(3, "short"), (5, "Long"), (6, "gpu")]
    assert m.queue_names(pa.chunked_array([["4", None, "2", "4"]]), _site()) == [(2, "2"), (4, "4")]
    assert m.queue_names(pa.chunked_array([pa.array([None, None], pa.string())]), _site()) == []


def test_queue_header_with_site_lists_site_queues_then_the_others():
    table = _table(queue=["gpu", "long", "gpu"])
    pairs = m._queue_header(table, _site())
    assert pairs[0] == ["MaxQueues", "6"]
    assert pairs[1] == ["Queue", "3 short (1-2 nodes, 1-4 GPUs per node, "
                                 "walltime default/max 1/2 h)"]
    assert pairs[2] == ["Queue", "5 long (1-4 nodes, 1-4 GPUs per node, "
                                 "walltime default/max 2/10 h)"]
    assert pairs[3] == ["Queue", "6 gpu (not a queue of site testsite)"]
    assert len(pairs) == 4


def test_queue_header_without_site_and_numeric_queues():
    assert m._queue_header(_table(queue=["b", "a"]), None) == [
        ["MaxQueues", "2"], ["Queue", "1 b"], ["Queue", "2 a"]]
    assert m._queue_header(_table(queue=["7", "3"]), None) == [
        ["MaxQueues", "7"], ["Queue", "3"], ["Queue", "7"]]
    assert m._queue_header(_table(queue=pa.array([None], pa.string())), None) == []


def test_max_queues_counts_site_queues_when_numbers_are_small():
    # site queues numbered 1 and 2 -> MaxQueues is the count / highest number, 2
    site = _site(queues=(Queue("a", 1, 1, 1, 1, 1, 60, 60), Queue("b", 2, 1, 1, 1, 1, 60, 60)))
    assert m._queue_header(_table(queue=["a"]), site)[0] == ["MaxQueues", "2"]


# --- field values ---------------------------------------------------------------------------

def test_times_shifted_and_differences_when_durations_unknown():
    table = _table(submit_time=[T0 + 5, T0, None], start_time=[T0 + 8, None, T0 + 1],
                   finish_time=[T0 + 20, T0 + 9, T0 + 4], wait_s=[None, None, 7],
                   walltime_s=[None, 2, None])
    assert _field(table, SwfField.SUBMIT_TIME) == [5, 0, -1]       # origin: first submit T0
    assert _field(table, SwfField.WAIT_TIME) == [3, -1, 7]         # start - submit, else wait_s
    assert _field(table, SwfField.RUN_TIME) == [12, 2, 3]          # walltime_s, else finish-start


def test_time_origin_from_metadata_and_empty():
    table = _table({"swf_time_origin": T0 - 100}, submit_time=[T0, T0 + 1])
    assert m.time_origin(table) == T0 - 100
    assert _field(table, SwfField.SUBMIT_TIME) == [100, 101]
    assert m.time_origin(_table(submit_time=pa.array([None], pa.int64()))) == 0


def test_status_from_termcode_with_default_and_site_mapping():
    table = _table(termcode=[0, 1, 2, 3, 4, 9, None, 0], swf_status=[None] * 7 + [7])
    assert _field(table, SwfField.STATUS) == [1, 0, 0, 5, 5, -1, -1, 7]
    site = _site(termcode_to_swf_status={0: 1, 9: 4})
    assert _field(table, SwfField.STATUS, site) == [1, -1, -1, -1, -1, 4, -1, 7]
    only_status = _table(termcode=pa.array([None, None], pa.int64()), swf_status=[0, None])
    assert _field(only_status, SwfField.STATUS) == [0, -1]


def test_status_termcode_above_every_code_is_unknown():
    table = _table(termcode=[100, -3], swf_status=pa.array([None, None], pa.int64()))
    assert _field(table, SwfField.STATUS) == [-1, -1]


def test_requested_procs_and_partition_fall_back_on_derived_tables():
    table = _table(gpus=[4, 2, None], requested_procs=[None, 8, None],
                   partition=[None, 3, None])
    assert _field(table, SwfField.REQUESTED_NUMBER_OF_PROCESSORS) == [4, 8, -1]
    assert _field(table, SwfField.PARTITION_ID, _site()) == [1, 3, 1]
    assert _field(table, SwfField.PARTITION_ID) == [-1, 3, -1]        # no site: no partition
    swf = _table({"source_format": "swf"}, gpus=[4, 2], requested_procs=[None, 8],
                 partition=[None, 3])
    assert _field(swf, SwfField.REQUESTED_NUMBER_OF_PROCESSORS) == [-1, 8]
    assert _field(swf, SwfField.PARTITION_ID, _site()) == [-1, 3]


def test_allocated_processor_count_by_unit():
    cols = dict(gpus=[4, 2, 1], cpus=[16, None, 8])
    assert _field(_table({"processor_unit": "gpu"}, **cols),
                  SwfField.ALLOCATED_PROCESSOR_COUNT) == [4, 2, 1]
    assert _field(_table({"processor_unit": "processor"}, **cols),
                  SwfField.ALLOCATED_PROCESSOR_COUNT) == [16, 2, 8]


def test_user_group_queue_numbered_and_avg_cpu_float():
    table = _table(user=["bob", "al", "bob"], group=["9", "9", None], queue=["x", "y", "x"],
                   avg_cpu_time_s=[1.5, None, 2.0])
    vals = m.swf_field_values(table, _site())
    assert vals[FIELDS.index(SwfField.USER_ID)].to_pylist() == [1, 2, 1]
    assert vals[FIELDS.index(SwfField.GROUP_ID)].to_pylist() == [9, 9, -1]
    assert vals[FIELDS.index(SwfField.QUEUE_ID)].to_pylist() == [6, 7, 6]
    avg = vals[FIELDS.index(SwfField.AVERAGE_CPU_TIME_USED)]
    assert avg.type == pa.float64() and avg.to_pylist() == [1.5, -1.0, 2.0]
    assert all(v.type == pa.int64() for f, v in zip(FIELDS, vals)
               if f is not SwfField.AVERAGE_CPU_TIME_USED)


@pytest.mark.parametrize("per_slice", [1, 2, 3, 7])
def test_slices_cover_the_table_in_order(per_slice):
    n = 7
    table = _table(submit_time=[T0 + 3 * i for i in range(n)],
                   wait_s=[i if i % 2 else None for i in range(n)],
                   start_time=[T0 + 3 * i + 1 for i in range(n)],
                   walltime_s=[None if i % 3 else 5 for i in range(n)],
                   finish_time=[T0 + 3 * i + 10 for i in range(n)],
                   termcode=[i % 5 for i in range(n)])
    slices = list(m.iter_field_values(table, None, per_slice))
    assert len(slices) == -(-n // per_slice)
    assert [len(s[0]) for s in slices] == [min(per_slice, n - b) for b in range(0, n, per_slice)]
    for k, field in enumerate(FIELDS):
        joined = [v for s in slices for v in s[k].to_pylist()]
        assert joined == _field(table, field), field
    assert [v for s in slices for v in s[FIELDS.index(SwfField.WAIT_TIME)].to_pylist()] \
        == [1 if i % 2 == 0 else i for i in range(n)]


def test_empty_table_gives_one_empty_slice():
    table = _table(submit_time=pa.array([], pa.int64()))
    slices = list(m.iter_field_values(table))
    assert len(slices) == 1 and len(slices[0]) == 18 and all(len(a) == 0 for a in slices[0])


def test_field_dtype():
    assert m.field_dtype(SwfField.AVERAGE_CPU_TIME_USED) == np.float64
    assert m.field_dtype(SwfField.JOB_ID) == np.int64


# --- header ---------------------------------------------------------------------------------

def _header_dict(pairs):
    out: dict[str, list[str]] = {}
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return out


def test_header_without_site():
    table = _table({"processor_unit": "gpu"}, job_id=[5, 5, 6], submit_time=[T0, T0 + 60, T0 + 1],
                   finish_time=[T0 + 3600, None, T0 + 7200], user=["a", "b", "a"],
                   termcode=[0, None, 3])
    h = _header_dict(m.build_header(table))
    assert h["Version"] == ["2.2"]
    assert h["MaxJobs"] == ["2"] and h["MaxRecords"] == ["3"]
    assert h["UnixStartTime"] == [str(T0)] and h["TimeZoneString"] == ["UTC"]
    assert h["StartTime"] == ["Sun Sep 13 12:26:40 UTC 2020"]
    assert h["EndTime"] == ["Sun Sep 13 14:26:40 UTC 2020"]
    assert h["Preemption"] == ["No"]
    assert "Computer" not in h and "MaxNodes" not in h
    assert h["Conversion"][0].endswith("(converted from slurm)")
    notes = h["Note"]
    assert any(n.startswith("processors are GPUs (field 5") for n in notes)
    assert "status from termcode (0 success, 1 fail, 2 walltime exceeded, 3 cancelled by user, " \
           "4 killed by system): 0->1, 1->0, 2->0, 3->5, 4->5" in notes
    assert "users and groups numbered 1..N by first appearance in submit order" in notes


def test_header_with_site():
    site = _site(time_zone="Asia/Tokyo", settings={"gpu_model": "P100"},
                 capacity_since=(T0, T0 + 86400 * 30), capacity_nodes=(8, 10),
                 termcode_to_swf_status={0: 1, 1: 0})
    table = jt.from_columns({"job_id": [1, 2], "submit_time": [T0, T0 + 1],
                             "finish_time": pa.array([None, None], pa.int64()),
                             "user": ["1", "2"], "queue": ["short", "other"],
                             "termcode": pa.array([None, None], pa.int64())},
                            {"source_format": "slurm"})
    pairs = m.build_header(table, site)
    h = _header_dict(pairs)
    assert h["Computer"] == ["10 nodes x 4 P100 GPUs"] and h["Installation"] == ["Test Site"]
    assert h["TimeZoneString"] == ["Asia/Tokyo"]
    assert h["StartTime"] == ["Sun Sep 13 21:26:40 JST 2020"]
    assert "EndTime" not in h
    assert h["MaxNodes"] == ["10"] and h["MaxProcs"] == ["40"] and h["MaxRuntime"] == ["36000"]
    assert h["AllowOveruse"] == ["No"]
    keys = [k for k, _ in pairs]
    i = keys.index("MaxQueues")
    assert pairs[i] == ["MaxQueues", "6"] and keys[i + 1] == "Queues" and keys[i + 2] == "Queue"
    assert h["Queue"][-1] == "6 other (not a queue of site testsite)"
    assert h["MaxPartitions"] == ["1"]
    notes = h["Note"]
    assert "processors are GPUs; nodes = ceil(GPUs/4) (multi-node jobs hold every GPU of their " \
           "nodes); requested time is wall-clock seconds" in notes
    assert "managed capacity over time: 8 nodes from 2020-09-13, 10 nodes from 2020-10-13" \
        in notes
    assert not any(n.startswith("status from termcode") for n in notes)
    assert not any(n.startswith("users and groups") for n in notes)
    assert not any(n.startswith("processors are GPUs (field 5") for n in notes)


# --- loss report ----------------------------------------------------------------------------

def test_no_losses_for_a_plain_numeric_table():
    table = _table(user=["1"], group=["2"], queue=["3"], submit_time=[T0], start_time=[T0 + 1],
                   wait_s=[1], finish_time=[T0 + 5], walltime_s=[4], swf_status=[1], termcode=[0])
    assert m.describe_losses(table) == []


def test_losses_names_and_queues():
    table = _table(user=["a", "b", "a", None], group=["g", "g", "h", "i"],
                   queue=["short", "q1", "q2", "q1"])
    losses = m.describe_losses(table, _site())
    assert "user names replaced by numbers 1..2 in order of first appearance" in losses
    assert "group names replaced by numbers 1..3 in order of first appearance" in losses
    assert "queue names replaced by queue numbers (listed in the Queue: header lines)" in losses
    assert "queue: 2 queues site testsite does not have, numbered after its queues: 6 q1, 7 q2 " \
           "(MaxQueues and the Queue: header lines list them)" in losses


def test_losses_more_than_ten_other_queues_are_cut():
    names = [f"q{i:02d}" for i in range(12)]
    losses = m.describe_losses(_table(queue=names), _site())
    line = [x for x in losses if x.startswith("queue: ")][0]
    assert line.startswith("queue: 12 queues site testsite")
    assert "6 q00, 7 q01, 8 q02, 9 q03, 10 q04, 11 q05, 12 q06, 13 q07, 14 q08, 15 q09, ... (" \
        in line
    few = m.describe_losses(_table(queue=["zz"]), _site())
    assert "queue: 1 queue site testsite does not have, numbered after its queues: 6 zz " \
           "(MaxQueues and the Queue: header lines list them)" in few


def test_losses_shape_termcode_disagreement_sources_layout():
    table = _table({"processor_unit": "gpu"},
                   nodes=[1, None, None], gpus_per_node=pa.array([None] * 3, pa.int64()),
                   termcode=[0, 1, None], swf_status=[None, 1, None],
                   submit_time=[T0, T0, T0], start_time=[T0 + 5, T0 + 5, None],
                   wait_s=[4, 5, 9], finish_time=[T0 + 10, T0 + 20, T0 + 30],
                   walltime_s=[5, 14, 1], source_job_id=["a", None, "c"])
    losses = m.describe_losses(table, _site())
    assert "nodes have no SWF field: field 5 holds total GPUs (nodes = ceil(GPUs/4) under the " \
           "whole-node policy)" in losses
    assert "termcode mapped to SWF status: failed and walltime-exceeded both become 0, user and " \
           "system cancels both become 5" in losses
    assert "1 jobs: start_time disagrees with submit_time + wait_s; SWF keeps the recorded " \
           "wait only" in losses
    assert "1 jobs: finish_time disagrees with start_time + walltime_s; SWF keeps the recorded " \
           "walltime only" in losses
    assert "source_job_id: 2 source job ids not carried (SWF holds job numbers only)" in losses
    no_site = m.describe_losses(table)
    assert "nodes have no SWF field: field 5 holds total GPUs" in no_site


def test_losses_both_shape_columns_and_no_termcode_loss_when_status_known():
    table = _table({"processor_unit": "gpu"}, nodes=[1], gpus_per_node=[2], termcode=[1],
                   swf_status=[0])
    losses = m.describe_losses(table)
    assert "nodes and gpus_per_node have no SWF field: field 5 holds total GPUs" in losses
    assert not any(x.startswith("termcode") for x in losses)


def test_termcode_loss_when_status_all_unknown_and_termcode_partly():
    table = _table(termcode=[None, 2], swf_status=pa.array([None, None], pa.int64()))
    assert any(x.startswith("termcode mapped") for x in m.describe_losses(table))
    none = _table(termcode=pa.array([None, None], pa.int64()), swf_status=[None, None])
    assert not any(x.startswith("termcode mapped") for x in m.describe_losses(none))


def test_layout_reasons_only_when_the_rows_are_the_read_ones():
    layout = {"reasons": ["spacing differs", "comments"], "n_rows": 2}
    table = _table({"swf_layout": layout}, submit_time=[T0, T0])
    assert "not byte-identical to the SWF input: spacing differs; comments" \
        in m.describe_losses(table)
    fewer = _table({"swf_layout": layout}, submit_time=[T0])
    assert not any(x.startswith("not byte-identical") for x in m.describe_losses(fewer))


def test_disagreement_counted_across_check_slices(monkeypatch):
    monkeypatch.setattr(m, "_CHECK_ROWS", 2)
    n = 5
    table = _table(submit_time=[T0] * n, start_time=[T0 + 3] * n, wait_s=[3, 4, 4, None, 4])
    assert "3 jobs: start_time disagrees with submit_time + wait_s; SWF keeps the recorded " \
           "wait only" in m.describe_losses(table)


# --- job lists and unit losses --------------------------------------------------------------

def test_job_list_words():
    table = _table(job_id=[10, 11, 12, 13, 14, 15, 16])
    assert m.job_list(table, np.array([0, 1, 0, 0, 0, 0, 0], bool)) == "1 job (job id 11)"
    assert m.job_list(table, np.ones(7, bool)) == \
        "7 jobs (job ids 10, 11, 12, 13, 14, ...)"
    assert m.job_list(table, np.ones(7, bool), first=7) == \
        "7 jobs (job ids 10, 11, 12, 13, 14, 15, 16)"
    assert m.job_list(table, np.array([1, 1, 0, 0, 0, 0, 0], bool)) == "2 jobs (job ids 10, 11)"


def test_unit_losses_processor_site():
    table = _table({"processor_unit": "processor"}, cpus=[8, 4, 4, None], gpus=[8, 2, None, 1])
    from swftools.metadata import TableMetadata
    losses = m.unit_losses(table, TableMetadata.from_table(table))
    assert losses[0].startswith("cpus: written as field 5")
    # rows whose gpus differ from cpus or are unknown: job 2 (2 != 4), job 3 (gpus unknown)
    assert losses[1] == "gpus: field 5 holds cpus (processors, the site's unit) for 2 jobs " \
                        "(job ids 2, 3); the GPUs of 1 job (job id 2) are dropped"
    same = _table({"processor_unit": "processor"}, cpus=[8], gpus=[8])
    assert len(m.unit_losses(same, TableMetadata.from_table(same))) == 1
    zero = _table({"processor_unit": "processor"}, cpus=[8], gpus=[0])
    assert m.unit_losses(zero, TableMetadata.from_table(zero))[1] == \
        "gpus: field 5 holds cpus (processors, the site's unit) for 1 job (job id 1)"


def test_unit_losses_gpu_site_and_recorded_walltime():
    from swftools.metadata import TableMetadata
    table = _table({"processor_unit": "gpu"}, cpus=[8, 4, None, 2], gpus=[1, 0, 0, None],
                   recorded_walltime_s=[100, None, 50, 7], walltime_s=[90, 5, 58, None])
    losses = m.unit_losses(table, TableMetadata.from_table(table))
    assert losses[0] == "cpus: no SWF field on a GPU site (field 5 holds GPUs): the processor " \
                        "count of 3 jobs (job ids 1, 2, 4) dropped"
    assert losses[1] == "1 job (job id 2) are CPU-only (cpus, no GPUs): field 5 is 0; exports " \
                        "that need GPUs (Batsim, Tiresias) skip them"
    assert losses[2] == "recorded_walltime_s: the log's own run time of 3 jobs (job ids 1, 3, 4) " \
                        "dropped (largest difference 10 s); field 4 holds finish - start"
    plain = _table({"processor_unit": "gpu"}, recorded_walltime_s=[3], walltime_s=[None])
    assert m.unit_losses(plain, TableMetadata.from_table(plain)) == [
        "recorded_walltime_s: the log's own run time of 1 job (job id 1) dropped; field 4 holds "
        "finish - start"]
    cpu_zero = _table({"processor_unit": "gpu"}, cpus=[0], gpus=[0])
    assert len(m.unit_losses(cpu_zero, TableMetadata.from_table(cpu_zero))) == 1


@pytest.mark.parametrize("n, per_slice, expected", [(1, 1, [1]), (0, 1, [0]), (2, 1, [1, 1]),
                                                    (3, 2, [2, 1])])
def test_slice_lengths_hand_worked(n, per_slice, expected):
    """ceil(n / per_slice) slices (one, empty, for an empty table): no trailing empty slice."""
    table = _table(submit_time=pa.array([T0] * n, pa.int64()))
    assert [len(s[0]) for s in m.iter_field_values(table, None, per_slice)] == expected
    assert [len(a) for a in m.swf_field_values(table)] == [n] * 18


def test_losses_take_the_site_named_in_the_table_metadata():
    """No site given: the preset the table's metadata names is the site (``resolve_site``), so
    the queue it lacks and its node size are in the report."""
    table = _table({"processor_unit": "gpu", "site": "aaic"}, queue=["Short", "gpu"],
                   nodes=[1, 1])
    losses = m.describe_losses(table)
    assert "queue: 1 queue site aaic does not have, numbered after its queues: 5 gpu " \
           "(MaxQueues and the Queue: header lines list them)" in losses
    assert "nodes have no SWF field: field 5 holds total GPUs (nodes = ceil(GPUs/8) under the " \
           "whole-node policy)" in losses


# --- survivors of the full mutation run (issue 30) ------------------------------------------

def test_swf_field_values_is_one_slice_past_the_default_slice_size():
    """All rows in one list, also past ``iter_field_values``' default 2**18 rows per slice."""
    n = (1 << 18) + 1
    table = _table(job_id=pa.array(np.arange(1, n + 1, dtype=np.int64)))
    job_ids = m.swf_field_values(table)[FIELDS.index(SwfField.JOB_ID)]
    assert len(job_ids) == n and job_ids[n - 1].as_py() == n


def test_header_without_source_format_and_gpu_unit_note():
    table = jt.from_columns({"job_id": [1], "submit_time": [T0]}, {"processor_unit": "gpu"})
    h = _header_dict(m.build_header(table))
    from swftools import __version__
    assert h["Conversion"] == [f"swftools {__version__} (converted from a job table)"]
    assert "processors are GPUs (field 5 counts the GPUs allocated; CPU-only jobs hold 0)" \
        in h["Note"]


def test_header_site_without_gpu_model_and_its_termcode_mapping():
    """No ``gpu_model`` in the site settings: no model word ('4 GPUs'); the status
    note shows the site's own termcode mapping, not the default one."""
    site = _site(termcode_to_swf_status={0: 1, 9: 4})
    table = _table(submit_time=[T0, T0 + 1], termcode=[0, None])
    h = _header_dict(m.build_header(table, site))
    assert h["Computer"] == ["10 nodes x 4 GPUs"]  # no model: no word for it
    assert "status from termcode (0 success, 1 fail, 2 walltime exceeded, 3 cancelled by user, " \
           "4 killed by system): 0->1, 9->4" in h["Note"]


def test_header_takes_the_site_named_in_the_table_metadata():
    """No site given: the preset the metadata names (schemas/sites/aaic.json: 40 nodes of 8
    'NVIDIA Tesla P100', title 'AIST AI Cloud (AAIC)') is the site."""
    table = _table({"site": "aaic"}, submit_time=[T0])
    h = _header_dict(m.build_header(table))
    assert h["Computer"] == ["40 nodes x 8 NVIDIA Tesla P100 GPUs"]
    assert h["Installation"] == ["AIST AI Cloud (AAIC)"]


def test_losses_numeric_queues_the_site_lacks_keep_their_numbers():
    """Numeric queues are written as they are: queue 7 (not a site queue) is listed as 7."""
    losses = m.describe_losses(_table(queue=["7", "3"]), _site())
    assert "queue: 1 queue site testsite does not have, numbered after its queues: 7 7 " \
           "(MaxQueues and the Queue: header lines list them)" in losses


@pytest.mark.parametrize("n, more", [(10, ""), (11, ", ...")])
def test_losses_other_queues_cut_after_ten(n, more):
    names = [f"q{i:02d}" for i in range(n)]
    line = [x for x in m.describe_losses(_table(queue=names), _site())
            if x.startswith("queue: ")][0]
    listed = ", ".join(f"{6 + i} q{i:02d}" for i in range(10))  # numbered 6.. after queue 5
    assert line == f"queue: {n} queues site testsite does not have, numbered after its " \
                   f"queues: {listed}{more} (MaxQueues and the Queue: header lines list them)"


def test_losses_include_the_unit_losses():
    table = _table({"processor_unit": "processor"}, cpus=[8], gpus=[8])
    assert "cpus: written as field 5 (processors, the site's unit); SWF has no separate column, " \
           "so a read gives them back as gpus" in m.describe_losses(table)


def test_no_termcode_loss_for_rows_without_termcode_or_with_status():
    """Job 1 keeps its recorded status, job 2 has neither: nothing is mapped from a termcode."""
    table = _table(termcode=[0, None], swf_status=[1, None])
    assert not any(x.startswith("termcode mapped") for x in m.describe_losses(table))
    mapped = _table(termcode=[0, None, 2], swf_status=[1, None, None])
    assert any(x.startswith("termcode mapped") for x in m.describe_losses(mapped))


def _chunked(meta, *parts):
    """A job table in several record batches (as readers build them): one chunk per part."""
    return pa.concat_tables([_table(meta, **part) for part in parts])


def test_losses_of_a_table_in_several_chunks_with_unknowns():
    table = _chunked(
        {"processor_unit": "processor"},
        dict(job_id=[1, 2], submit_time=[T0, T0], start_time=[T0 + 5, T0 + 5], wait_s=[5, None],
             cpus=[8, None], gpus=[8, 1]),
        dict(job_id=[3, 4], submit_time=[T0, T0], start_time=[T0 + 5, None], wait_s=[4, 6],
             cpus=[4, 4], gpus=[4, None]))
    assert table.column("wait_s").num_chunks == 2
    losses = m.describe_losses(table)
    # job 3: 5 s between submit and start, 4 recorded; job 2 (no wait), job 4 (no start) unknown
    assert "1 jobs: start_time disagrees with submit_time + wait_s; SWF keeps the recorded " \
           "wait only" in losses
    # cpus known for jobs 1, 3, 4; gpus differ or unknown for job 4 only
    assert "gpus: field 5 holds cpus (processors, the site's unit) for 1 job (job id 4)" \
        in losses


def test_disagreement_exact_beyond_float_precision():
    """2**53 + 1 - 0 != 2**53: integer arithmetic, where float64 would round the two equal."""
    table = _table(submit_time=[0], start_time=[2 ** 53 + 1], wait_s=[2 ** 53])
    assert "1 jobs: start_time disagrees with submit_time + wait_s; SWF keeps the recorded " \
           "wait only" in m.describe_losses(table)


def test_disagreement_signed_for_unsigned_time_columns():
    """A table not conformed to the job table's int64: start - submit is signed (job started
    5 s before its submit, wait_s -5: they agree, no loss)."""
    table = _table(submit_time=[105], start_time=[100], wait_s=[-5])
    for name in ("submit_time", "start_time"):
        table = table.set_column(table.schema.get_field_index(name), name,
                                 table.column(name).cast(pa.uint32()))
    assert not any("disagrees" in x for x in m.describe_losses(table))


def test_known_values_are_int64_and_absent_columns_unknown():
    values, known = m._known(pa.table({"job_id": [1, 2]}), "cpus")
    assert values.dtype == np.int64 and known.tolist() == [False, False]
    values, known = m._known(pa.table({"cpus": pa.array([None, None], pa.int32())}), "cpus")
    assert values.dtype == np.int64 and known.tolist() == [False, False]
    values, known = m._known(pa.table({"cpus": pa.array([3, None, 7], pa.uint32())}), "cpus")
    assert values.dtype == np.int64 and known.tolist() == [True, False, True]
    assert values[known].tolist() == [3, 7]
    chunked = pa.table({"cpus": pa.chunked_array([[8, None], [4, 4]], pa.int64())})
    values, known = m._known(chunked, "cpus")
    assert known.tolist() == [True, False, True, True] and values[known].tolist() == [8, 4, 4]


def test_unit_losses_of_a_table_with_few_and_unsigned_columns():
    """No cpus column (all unknown), uint32 run times: |3 - 10| = 7, not a wrapped difference."""
    table = pa.table({"job_id": [1], "recorded_walltime_s": pa.array([3], pa.uint32()),
                      "walltime_s": pa.array([10], pa.uint32())})
    from swftools.metadata import TableMetadata
    assert m.unit_losses(table, TableMetadata()) == [
        "recorded_walltime_s: the log's own run time of 1 job (job id 1) dropped (largest "
        "difference 7 s); field 4 holds finish - start"]


def test_unit_losses_one_cpu_and_one_gpu_thresholds():
    from swftools.metadata import TableMetadata
    gpu_site = _table({"processor_unit": "gpu"}, cpus=[1], gpus=[0])
    assert m.unit_losses(gpu_site, TableMetadata.from_table(gpu_site))[1] == \
        "1 job (job id 1) are CPU-only (cpus, no GPUs): field 5 is 0; exports that need GPUs " \
        "(Batsim, Tiresias) skip them"
    proc_site = _table({"processor_unit": "processor"}, cpus=[4], gpus=[1])
    assert m.unit_losses(proc_site, TableMetadata.from_table(proc_site)) == [
        "cpus: written as field 5 (processors, the site's unit); SWF has no separate column, so "
        "a read gives them back as gpus",
        "gpus: field 5 holds cpus (processors, the site's unit) for 1 job (job id 1); the GPUs "
        "of 1 job (job id 1) are dropped"]
