"""Queue limits (site settings) and termcode consistency, each with a planted defect."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from swftools.site import load_site

from .strategies import aaic_jobs
from .validate_support import aaic_table, assert_fires, assert_silent, run, swf_line, write_swf

QUEUE_RULES = ["queue-unknown", "queue-nodes", "queue-gpus-per-node", "queue-walltime",
               "multi-node-whole-nodes", "gpus-total"]


def test_unknown_queue():
    table = aaic_table([{}, {"queue": "Huge"}, {"queue": "short"}])
    found = assert_fires(run(table, "queue-unknown"), "queue-unknown", 1)
    assert found[0].job_id == 2 and found[0].value == "Huge"
    assert "Normal, Short, Middle, Long" in found[0].expected


def test_numeric_queues_map_through_the_site_numbers():
    table = aaic_table([{"queue": "1"}, {"queue": "2", "gpus_per_node": 2}, {"queue": "9"}])
    report = run(table, "queue-unknown", "queue-gpus-per-node")
    assert [f.job_id for f in assert_fires(report, "queue-unknown", 1)] == [3]
    assert [f.job_id for f in assert_fires(report, "queue-gpus-per-node", 1)] == [2]  # Short: 1 GPU


def test_short_middle_long_take_one_node():
    table = aaic_table([{"queue": "Short", "nodes": 2, "gpus_per_node": 8},
                        {"queue": "Middle", "nodes": 3, "gpus_per_node": 8},
                        {"queue": "Normal", "nodes": 3, "gpus_per_node": 8}])
    found = assert_fires(run(table, "queue-nodes"), "queue-nodes", 2)
    assert [f.job_id for f in found] == [1, 2] and found[0].expected == "1..1"


def test_short_takes_one_gpu():
    table = aaic_table([{"queue": "Short", "gpus_per_node": 4}, {"queue": "Long", "gpus_per_node": 4}])
    assert [f.job_id for f in assert_fires(run(table, "queue-gpus-per-node"),
                                           "queue-gpus-per-node", 1)] == [1]


def test_requested_walltime_within_the_queue_maximum():
    table = aaic_table([{"queue": "Short", "requested_walltime_s": 10_801},
                        {"queue": "Short", "requested_walltime_s": 10_800}])
    found = assert_fires(run(table, "queue-walltime"), "queue-walltime", 1)
    assert found[0].job_id == 1 and found[0].expected == "<= 10800"


def test_multi_node_jobs_hold_whole_nodes():
    table = aaic_table([{"nodes": 2, "gpus_per_node": 4}, {"nodes": 2, "gpus_per_node": 8}])
    found = assert_fires(run(table, "multi-node-whole-nodes"), "multi-node-whole-nodes", 1)
    assert found[0].job_id == 1 and found[0].expected == "8"


def test_a_cpu_job_of_a_mixed_site_holds_no_gpu_of_its_nodes():
    """Issue 24: a CPU job on a GPU site has 0 GPUs (its processors in cpus, where the format
    carries them); spread over nodes, it holds none of their GPUs."""
    table = aaic_table([{"nodes": 2, "gpus_per_node": 0, "gpus": 0},
                        {"nodes": 2, "gpus_per_node": 1, "gpus": 2}])
    found = assert_fires(run(table, "multi-node-whole-nodes"), "multi-node-whole-nodes", 1)
    assert found[0].job_id == 2


def test_gpus_total_is_nodes_times_gpus_per_node():
    table = aaic_table([{"nodes": 2, "gpus_per_node": 8, "gpus": 8}, {}])
    found = assert_fires(run(table, "gpus-total"), "gpus-total", 1)
    assert found[0].value == 8 and found[0].expected == "16"


def test_queue_rules_need_a_site_and_say_so(tmp_path):
    path = write_swf(tmp_path / "t.swf", [swf_line(1)])
    report = run(path, *QUEUE_RULES)
    skipped = assert_fires(report, "rule-skipped", 1, severity="info")[0]
    assert "queue-unknown" in skipped.message and "--site" in skipped.message
    report = run(path, "queue-unknown", site="aaic")  # SWF queue 1 = Normal
    assert report.rules_run == ["queue-unknown"] and not report.findings


def test_swf_with_a_site_derives_nodes_from_processors(tmp_path):
    lines = [swf_line(1, procs=12, req_procs=12, queue=1), swf_line(2, submit=100, procs=16,
                                                                    req_procs=16, queue=3)]
    report = run(write_swf(tmp_path / "t.swf", lines), "multi-node-whole-nodes", "queue-nodes",
                 site="aaic")
    # 12 processors = 2 nodes (whole nodes); 16 in queue Middle = 2 nodes, beyond its 1
    assert [f.job_id for f in assert_fires(report, "queue-nodes", 1)] == [2]


def test_termcode_walltime_exceeded_runs_its_request():
    table = aaic_table([{"termcode": 2, "walltime_s": 3600 + 200},
                        {"termcode": 2, "walltime_s": 1000},
                        {"termcode": 2, "walltime_s": 9000}])
    found = assert_fires(run(table, "termcode-walltime"), "termcode-walltime", 2)
    assert [f.job_id for f in found] == [2, 3] and found[0].expected == "3300..3900"


def test_walltime_overrun_spares_walltime_exceeded_jobs():
    table = aaic_table([{"walltime_s": 3901}, {"walltime_s": 3900}, {"termcode": 2, "walltime_s": 5000}])
    found = assert_fires(run(table, "walltime-overrun"), "walltime-overrun", 1)
    assert found[0].job_id == 1 and "301 s past" in found[0].message


def test_walltime_overrun_grace_option():
    table = aaic_table([{"walltime_s": 3700}])
    assert_fires(run(table, "walltime-overrun", walltime_grace_s=60), "walltime-overrun", 1)
    assert_silent(run(table, "walltime-overrun"), "walltime-overrun")


def test_walltime_overrun_honours_allow_overuse(tmp_path):
    header = "; UnixStartTime: 0\n; AllowOveruse: Yes\n"
    path = write_swf(tmp_path / "o.swf", [swf_line(1, run=9000, req_time=3600)], header=header)
    report = run(path, "walltime-overrun")
    assert report.skipped["walltime-overrun"].endswith("AllowOveruse: Yes")
    path = write_swf(tmp_path / "p.swf", [swf_line(1, run=9000, req_time=3600)],
                     header="; UnixStartTime: 0\n")
    assert_fires(run(path, "walltime-overrun"), "walltime-overrun", 1)


def test_never_started_jobs_were_cancelled_and_did_not_run():
    table = aaic_table([{"termcode": 3, "wait_s": None, "walltime_s": None},
                        {"termcode": 0, "wait_s": None, "walltime_s": None},
                        {"termcode": 4, "wait_s": None, "walltime_s": 50}])
    found = assert_fires(run(table, "never-started"), "never-started", 2)
    assert [(f.job_id, f.field) for f in found] == [(2, "termcode"), (3, "walltime_s")]


def test_termcode_swf_status_follows_the_site_mapping():
    table = aaic_table([{"termcode": 0, "swf_status": 1}, {"termcode": 3, "swf_status": 1}])
    found = assert_fires(run(table, "termcode-swf-status"), "termcode-swf-status", 1)
    assert found[0].job_id == 2 and found[0].expected == "5"


@given(aaic_jobs(min_size=1, max_size=25))
def test_strategy_tables_respect_the_aaic_queue_shapes(table):
    report = run(table, "queue-unknown", "queue-nodes", "multi-node-whole-nodes", "gpus-total",
                 site=load_site("aaic"))
    assert not report.fired(), [f.render() for f in report.findings]


@given(st.sampled_from(["Short", "Middle", "Long"]), st.integers(2, 38))
def test_any_multi_node_job_outside_normal_is_flagged(queue, nodes):
    table = aaic_table([{"queue": queue, "nodes": nodes, "gpus_per_node": 8}])
    assert_fires(run(table, "queue-nodes"), "queue-nodes", 1)


def test_a_queue_finding_names_the_field_the_value_and_the_range():
    table = aaic_table([{"queue": "Normal", "nodes": 39, "gpus_per_node": 8},
                        {"queue": "Normal", "nodes": 38, "gpus_per_node": 8}])
    found = assert_fires(run(table, "queue-nodes"), "queue-nodes", 1)
    assert (found[0].job_id, found[0].field, found[0].value, found[0].expected) == \
        (1, "nodes", 39, "1..38")
    assert found[0].message == "39 nodes outside queue Normal's range 1..38"
    table = aaic_table([{"queue": "Short", "gpus_per_node": 2}])
    found = assert_fires(run(table, "queue-gpus-per-node"), "queue-gpus-per-node", 1)
    assert (found[0].field, found[0].value, found[0].message) == \
        ("gpus_per_node", 2, "2 GPUs per node outside queue Short's range 1..1")


def test_queue_names_that_only_look_like_numbers_are_unknown():
    table = aaic_table([{"queue": q} for q in ("2-", "X2", "-2", " 2 ", "02")])
    found = assert_fires(run(table, "queue-unknown"), "queue-unknown", 3)
    assert [f.value for f in found] == ["2-", "X2", "-2"]


def test_jobs_without_a_queue_meet_no_queue_limit():
    table = aaic_table([{"queue": None, "nodes": 3, "gpus_per_node": 8,
                         "requested_walltime_s": 10**6}, {"queue": "Short"}])
    report = run(table, "queue-unknown", "queue-nodes", "queue-gpus-per-node", "queue-walltime")
    assert not report.findings, [f.render() for f in report.findings]


def test_an_unknown_gpus_per_node_is_not_out_of_range():
    table = aaic_table([{"queue": "Short", "nodes": 1, "gpus_per_node": None, "gpus": 1},
                        {"queue": "Short", "nodes": None, "gpus_per_node": 1, "gpus": 1}])
    report = run(table, "queue-nodes", "queue-gpus-per-node")
    assert not report.findings, [f.render() for f in report.findings]


def test_nodes_derive_from_gpus_when_the_table_lacks_gpus_per_node():
    """Known nodes alone are not a shape: both node columns, or the GPU count and the site."""
    table = aaic_table([{"queue": "Middle", "nodes": 1, "gpus_per_node": None, "gpus": 16}])
    found = assert_fires(run(table, "queue-nodes"), "queue-nodes", 1)
    assert found[0].value == 2 and found[0].message.startswith("2 nodes outside queue Middle's")


def test_swf_node_shapes_from_processor_counts(tmp_path):
    """AAIC (8 GPUs per node): 4 or 1 processors are one node using that many GPUs, 12 are
    two whole nodes, 0 one node using none (below Middle's 1 GPU per node)."""
    lines = [swf_line(1, procs=4, req_procs=4, queue=3), swf_line(2, procs=1, req_procs=1, queue=2),
             swf_line(3, procs=12, req_procs=12, queue=1), swf_line(4, procs=4, req_procs=4, queue=2),
             swf_line(5, procs=12, req_procs=12, queue=3), swf_line(6, procs=0, req_procs=0, queue=3)]
    report = run(write_swf(tmp_path / "t.swf", lines), "queue-nodes", "queue-gpus-per-node",
                 "multi-node-whole-nodes", site="aaic")
    assert [(f.rule, f.job_id, f.value) for f in report.findings] == [
        ("queue-nodes", 5, 2), ("queue-gpus-per-node", 4, 4), ("queue-gpus-per-node", 6, 0)]


def test_a_negative_termcode_maps_to_no_swf_status():
    """Termcode -1 is not termcode 0: no termcode-swf-status finding claims it maps to 1."""
    table = aaic_table([{"termcode": -1, "swf_status": 0}, {"termcode": 0, "swf_status": 0}])
    found = assert_fires(run(table, "termcode-swf-status"), "termcode-swf-status", 1)
    assert found[0].job_id == 2
