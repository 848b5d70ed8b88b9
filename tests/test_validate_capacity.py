"""Capacity rules: utilisation sweep, node packing (bounds, FFD, exact search), per-job size."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swftools.site import load_site, site_from_settings
from swftools.validate import rules_capacity
from swftools.validate.rules_capacity import ffd_nodes, packs

from .validate_support import T0, aaic_table, assert_fires, assert_silent, run, swf_line, write_swf


def small_site(timeline=((("2017-07-01T00:00:00+09:00"), 2),)):
    """The AAIC preset with a capacity timeline of a few nodes."""
    settings_ = dict(load_site("aaic").settings)
    settings_["capacity_timeline"] = [{"since": since, "nodes": n} for since, n in timeline]
    return site_from_settings(settings_)


def together(sizes, nodes=None, start=T0, run_s=600):
    """Jobs all running over [start, start + run_s): single-node of ``sizes`` GPUs, plus
    multi-node jobs of ``nodes`` nodes."""
    jobs = [{"submit_time": start, "wait_s": 0, "walltime_s": run_s, "gpus_per_node": g}
            for g in sizes]
    jobs += [{"submit_time": start, "wait_s": 0, "walltime_s": run_s, "nodes": n,
              "gpus_per_node": 8} for n in nodes or []]
    return aaic_table(jobs)


def test_capacity_gpus_reports_the_interval_and_the_jobs_running():
    table = aaic_table([{"submit_time": T0, "wait_s": 0, "walltime_s": 1000, "gpus_per_node": 8},
                        {"submit_time": T0 + 100, "wait_s": 0, "walltime_s": 300, "gpus_per_node": 8},
                        {"submit_time": T0 + 200, "wait_s": 0, "walltime_s": 50, "gpus_per_node": 1}])
    found = assert_fires(run(table, "capacity-gpus", site=small_site()), "capacity-gpus", 1)
    # 17 GPUs on 16 during [T0+200, T0+250): started by job 3, all three running
    assert found[0].job_id == 3 and "for 50 s: 17 GPUs busy at peak, 16 available" in found[0].message
    assert "3 jobs running at 2017-07-14T02:43:20Z: 1, 2, 3" in found[0].message
    site1 = small_site(((("2017-07-01T00:00:00+09:00"), 1),))
    found = assert_fires(run(table, "capacity-gpus", site=site1), "capacity-gpus", 1,
                         severity="error")
    # over 8 GPUs from T0+100 to T0+400: one interval, started by job 2, peak 17
    assert found[0].job_id == 2 and "for 300 s: 17 GPUs busy at peak, 8 available" in found[0].message
    assert "2 jobs running" in found[0].message and found[0].value == 17


def test_capacity_follows_the_timeline():
    site = small_site((("2017-07-01T00:00:00+09:00", 2),
                       ("2017-07-14T02:45:00+00:00", 1)))  # T0 + 300: down to one node
    table = together([8, 8], run_s=1000)
    found = assert_fires(run(table, "capacity-gpus", site=site), "capacity-gpus", 1)
    assert "from 2017-07-14T02:45:00Z for 700 s" in found[0].message


def test_capacity_gpus_against_the_swf_header_is_a_warning(tmp_path):
    lines = [swf_line(1, procs=10, req_procs=10), swf_line(2, submit=10, procs=10, req_procs=10)]
    found = assert_fires(run(write_swf(tmp_path / "c.swf", lines), "capacity-gpus"),
                         "capacity-gpus", 1, severity="warning")
    assert "20 processors busy at peak, 16 available (SWF header MaxProcs)" in found[0].message


def test_capacity_without_site_or_header_is_skipped_with_a_reason(tmp_path):
    path = write_swf(tmp_path / "n.swf", [swf_line(1)], header="")
    report = run(path, "capacity-gpus")
    assert "MaxProcs" in assert_fires(report, "rule-skipped", 1)[0].message


def test_violation_intervals_are_capped_with_a_summary():
    jobs = []
    for k in range(30):  # 30 separate overloads of one node
        jobs += [{"submit_time": T0 + 1000 * k, "wait_s": 0, "walltime_s": 10, "gpus_per_node": 8}] * 2
    site = small_site(((("2017-07-01T00:00:00+09:00"), 1),))
    report = run(aaic_table(jobs), "capacity-gpus", site=site, max_intervals=5)
    found = assert_fires(report, "capacity-gpus", 6)
    assert found[-1].message.startswith("25 more violation intervals")


def test_packing_lower_bound_proves_a_violation():
    site = small_site()  # 2 nodes of 8 GPUs
    report = run(together([5, 5, 5]), "capacity-nodes", "capacity-gpus", site=site)
    assert_silent(report, "capacity-gpus")  # 15 GPUs of 16
    found = assert_fires(report, "capacity-nodes", 1, severity="error")
    assert "at least 3 nodes needed" in found[0].message


def test_multi_node_jobs_take_whole_nodes():
    site = small_site()
    found = assert_fires(run(together([1], nodes=[2]), "capacity-nodes", site=site),
                         "capacity-nodes", 1)
    assert "(2 for multi-node jobs)" in found[0].message


def test_packable_sets_pass():
    site = small_site()
    report = run(together([3, 3, 3, 3, 2, 2]), "capacity-nodes", site=site)  # FFD: 2 nodes
    assert_silent(report, "capacity-nodes")
    report = run(together([2, 2, 2, 3, 3, 4]), "capacity-nodes", site=site)  # FFD 3, exact 2
    assert_silent(report, "capacity-nodes")


def test_exact_search_proves_what_the_bounds_cannot():
    site = small_site()
    # 7+7: lower bound 2 nodes, but 2+2 no longer fit beside them
    found = assert_fires(run(together([7, 7, 2]), "capacity-nodes", site=site), "capacity-nodes", 1)
    assert found[0].severity == "error"


def test_ffd_and_exact_search():
    counts = np.zeros(9, int)
    for s in (2, 2, 2, 3, 3, 4):
        counts[s] += 1
    assert ffd_nodes(counts, 8) == 3 and packs(counts, 2, 8) is True and packs(counts, 1, 8) is False
    big = np.zeros(9, int)
    big[3] = 200
    assert packs(big, 75, 8, budget=50) is None  # budget exhausted: no answer


def optimum(sizes, size=8):
    """Fewest nodes for single-node jobs of ``sizes`` (exhaustive; tiny inputs only)."""
    for bins in range(len(sizes) + 1):
        for assignment in itertools.product(range(bins), repeat=len(sizes)):
            load = [0] * bins
            for s, b in zip(sizes, assignment):
                load[b] += s
            if all(x <= size for x in load):
                return bins
    return len(sizes)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 8), min_size=1, max_size=6), st.integers(1, 4))
def test_packing_verdict_agrees_with_exhaustive_search(sizes, nodes):
    site = small_site(((("2017-07-01T00:00:00+09:00"), nodes),))
    report = run(together(sizes), "capacity-nodes", site=site)
    fits = optimum(sizes) <= nodes
    severities = {f.severity for f in report.findings if f.rule == "capacity-nodes"}
    assert severities == (set() if fits else {"error"}), (sizes, nodes, report.flatten())


def test_job_exceeds_machine():
    table = aaic_table([{"nodes": 41, "gpus_per_node": 8}, {"gpus_per_node": 9}, {}])
    report = run(table, "job-exceeds-machine", site="aaic")
    found = assert_fires(report, "job-exceeds-machine")
    assert {(f.job_id, f.field) for f in found} == {(1, "gpus"), (1, "nodes"), (2, "gpus_per_node")}


def test_job_exceeds_machine_against_maxprocs(tmp_path):
    lines = [swf_line(1, procs=4, req_procs=20), swf_line(2, submit=10, procs=17, req_procs=17)]
    found = assert_fires(run(write_swf(tmp_path / "b.swf", lines), "job-exceeds-machine"),
                         "job-exceeds-machine", 3, severity="warning")
    assert {(f.job_id, f.field) for f in found} == {(1, "requested_procs"), (2, "gpus"),
                                                    (2, "requested_procs")}


def test_undecided_packing_is_a_warning():
    # 200 jobs of 3 GPUs on 75 nodes: the GPU count fits exactly, FFD needs 100 nodes and the
    # exact search runs out of budget: the rule cannot prove either way
    site = small_site(((("2017-07-01T00:00:00+09:00"), 75),))
    found = assert_fires(run(together([3] * 200), "capacity-nodes", site=site), "capacity-nodes",
                         1, severity="warning")
    assert "first-fit decreasing needs 100 nodes (lower bound 75), 75 in force" in found[0].message


# --- the trace's processor unit in the findings ----------------------------------------------

CPU_HEADER = """; Version: 2.2
; Computer: a CPU cluster (like RICC: 8 cores per node)
; UnixStartTime: 1000000000
; TimeZoneString: UTC
; MaxNodes: 2
; MaxProcs: 16
"""


def test_capacity_findings_on_a_cpu_swf_trace_say_processors(tmp_path):
    """A plain SWF trace of a CPU machine: its field 5 counts processors, never GPUs."""
    lines = [swf_line(1, procs=10, req_procs=10), swf_line(2, submit=10, procs=12, req_procs=20)]
    path = write_swf(tmp_path / "cpu.swf", lines, header=CPU_HEADER)
    report = run(path, "capacity-gpus", "job-exceeds-machine")
    over = assert_fires(report, "capacity-gpus", 1, severity="warning")
    assert "22 processors busy at peak, 16 available (SWF header MaxProcs)" in over[0].message
    big = assert_fires(report, "job-exceeds-machine", 1, severity="warning")
    assert big[0].message.startswith("20 requested processors exceed the 16 processors")
    for finding in report.findings:
        assert "GPU" not in finding.message, finding.render()


def test_capacity_findings_on_an_aaic_table_say_gpus():
    """An NQSII (AAIC) table counts GPUs: the same over-capacity finding says GPUs."""
    table = aaic_table([{"submit_time": T0, "wait_s": 0, "walltime_s": 600, "gpus_per_node": 8},
                        {"submit_time": T0, "wait_s": 0, "walltime_s": 600, "gpus_per_node": 8},
                        {"submit_time": T0, "wait_s": 0, "walltime_s": 600, "gpus_per_node": 4}])
    report = run(table, "capacity-gpus", "job-exceeds-machine", site=small_site())
    over = assert_fires(report, "capacity-gpus", 1)
    assert "20 GPUs busy at peak, 16 available (site aaic)" in over[0].message
    assert "processor" not in over[0].message
    one = aaic_table([{"nodes": 3, "gpus_per_node": 8}])
    big = assert_fires(run(one, "job-exceeds-machine", site=small_site()), "job-exceeds-machine")
    assert any(f.message.startswith("24 allocated GPUs exceed the 16 GPUs") for f in big)


def test_an_swf_trace_whose_header_says_processors_are_gpus_counts_gpus(tmp_path):
    """swftools writes 'Note: processors are GPUs' for a GPU site: read back, findings say GPUs."""
    header = CPU_HEADER + "; Note: processors are GPUs; nodes = ceil(GPUs/8)\n"
    lines = [swf_line(1, procs=10, req_procs=10), swf_line(2, submit=10, procs=10, req_procs=10)]
    found = assert_fires(run(write_swf(tmp_path / "gpu.swf", lines, header=header),
                             "capacity-gpus"), "capacity-gpus", 1, severity="warning")
    assert "20 GPUs busy at peak, 16 available (SWF header MaxProcs)" in found[0].message


# --- boundaries and message details (mutation testing) ---------------------------------------

def sized_site(gpus_per_node, nodes):
    """A site of ``nodes`` nodes of ``gpus_per_node`` GPUs (the AAIC preset otherwise)."""
    settings_ = dict(load_site("aaic").settings)
    settings_["gpus_per_node"] = gpus_per_node
    settings_.pop("node_groups", None)
    settings_["capacity_timeline"] = [{"since": "2017-07-01T00:00:00+09:00", "nodes": nodes}]
    return site_from_settings(settings_)


def test_the_first_capacity_entry_also_covers_the_time_before_it():
    site = small_site((("2017-07-14T03:00:00+00:00", 1), ("2017-07-14T04:00:00+00:00", 2)))
    found = assert_fires(run(together([8, 8], run_s=100), "capacity-gpus", site=site),
                         "capacity-gpus", 1)  # before 03:00 the first entry (1 node) holds
    assert "16 GPUs busy at peak, 8 available" in found[0].message


def test_capacity_finding_fields():
    found = assert_fires(run(together([8, 8, 1]), "capacity-gpus", site=small_site()),
                         "capacity-gpus", 1)
    assert (found[0].field, found[0].value, found[0].expected) == ("gpus", 17, "<= 16")


def test_each_interval_reports_its_own_peak():
    site = small_site(((("2017-07-01T00:00:00+09:00"), 1),))
    table = aaic_table([{"submit_time": T0, "wait_s": 0, "walltime_s": 10, "gpus_per_node": 8},
                        {"submit_time": T0, "wait_s": 0, "walltime_s": 10, "gpus_per_node": 1},
                        {"submit_time": T0 + 100, "wait_s": 0, "walltime_s": 10,
                         "gpus_per_node": 8},
                        {"submit_time": T0 + 100, "wait_s": 0, "walltime_s": 10,
                         "gpus_per_node": 8}])
    found = assert_fires(run(table, "capacity-gpus", site=site), "capacity-gpus", 2)
    assert [f.value for f in found] == [9, 16]


def test_a_job_that_ended_at_the_instant_is_not_listed_as_running():
    site = small_site(((("2017-07-01T00:00:00+09:00"), 1),))
    table = aaic_table([{"submit_time": T0, "wait_s": 0, "walltime_s": 100, "gpus_per_node": 8},
                        {"submit_time": T0 + 100, "wait_s": 0, "walltime_s": 100,
                         "gpus_per_node": 8},
                        {"submit_time": T0 + 100, "wait_s": 0, "walltime_s": 100,
                         "gpus_per_node": 1}])
    found = assert_fires(run(table, "capacity-gpus", site=site), "capacity-gpus", 1)
    assert "2 jobs running at 2017-07-14T02:41:40Z: 2, 3" in found[0].message


def test_jobs_starting_together_are_listed_in_row_order():
    site = small_site(((("2017-07-01T00:00:00+09:00"), 4),))
    found = assert_fires(run(together([1] * 40), "capacity-gpus", site=site), "capacity-gpus", 1)
    assert found[0].job_id == 40
    assert ": 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ... (+30 more)" in found[0].message


def test_jobs_without_times_size_or_duration_hold_nothing():
    site = small_site(((("2017-07-01T00:00:00+09:00"), 1),))
    base = {"submit_time": T0 + 1000, "wait_s": 0, "walltime_s": 600, "gpus_per_node": 8}
    table = aaic_table([
        {"submit_time": T0, "wait_s": 0, "walltime_s": 0, "gpus_per_node": 8},  # zero length
        {"submit_time": T0, "wait_s": None, "gpus_per_node": 8},  # never started
        {"submit_time": T0, "wait_s": None, "finish_time": T0 + 500, "gpus_per_node": 8},
        {"submit_time": T0, "wait_s": 0, "walltime_s": None, "gpus_per_node": 8},  # no finish
        base, dict(base, gpus_per_node=0, gpus=0)])  # a job holding no GPU beside a full node
    assert_silent(run(table, "capacity-gpus", site=site), "capacity-gpus")
    over = aaic_table([base, dict(base, gpus_per_node=0, gpus=0), dict(base, gpus_per_node=1)])
    found = assert_fires(run(over, "capacity-gpus", site=site), "capacity-gpus", 1)
    assert "2 jobs running" in found[0].message  # the job of no GPU is not one of them


def _overloads(k, length=10):
    jobs = []
    for i in range(k):  # k separate overloads of one node, 1000 s apart
        jobs += [{"submit_time": T0 + 1000 * i, "wait_s": 0, "walltime_s": length,
                  "gpus_per_node": 8}] * 2
    return aaic_table(jobs)


def test_exactly_max_intervals_has_no_summary():
    site = small_site(((("2017-07-01T00:00:00+09:00"), 1),))
    assert_fires(run(_overloads(5), "capacity-gpus", site=site, max_intervals=5),
                 "capacity-gpus", 5)


def test_the_summary_of_further_intervals():
    site = small_site(((("2017-07-01T00:00:00+09:00"), 1),))
    report = run(_overloads(30), "capacity-gpus", site=site, max_intervals=5)
    last = assert_fires(report, "capacity-gpus", 6)[-1]
    # the 6th overload starts at T0 + 5000 s; 25 of 10 s each
    assert last.message == ("25 more violation intervals (about 250 s in all), the first from "
                            "2017-07-14T04:03:20Z")
    assert (last.field, last.value, last.severity) == ("gpus", 25, "error")


def test_the_summary_against_an_swf_header_is_a_warning(tmp_path):
    lines = [swf_line(2 * i + j + 1, submit=1000 * i, procs=10, req_procs=10)
             for i in range(3) for j in range(2)]
    report = run(write_swf(tmp_path / "s.swf", lines), "capacity-gpus", max_intervals=1)
    assert_fires(report, "capacity-gpus", 2, severity="warning")


def test_times_in_messages_are_utc_whatever_the_local_zone(monkeypatch):
    import time
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        found = assert_fires(run(together([8, 8, 1]), "capacity-gpus", site=small_site()),
                             "capacity-gpus", 1)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert "from 2017-07-14T02:40:00Z" in found[0].message


def test_times_of_an_swf_trace_without_origin_are_offsets(tmp_path):
    lines = [swf_line(1, submit=5, procs=10, req_procs=10),
             swf_line(2, submit=5, procs=10, req_procs=10)]
    with_origin = assert_fires(run(write_swf(tmp_path / "o.swf", lines), "capacity-gpus"),
                               "capacity-gpus", 1)
    assert "from 2001-09-09T01:46:45Z for 100 s" in with_origin[0].message
    header = "\n".join(x for x in CPU_HEADER.splitlines() if "UnixStartTime" not in x) + "\n"
    bare = assert_fires(run(write_swf(tmp_path / "b.swf", lines, header=header),
                            "capacity-gpus"), "capacity-gpus", 1)
    assert "from t=5 s for 100 s" in bare[0].message and "running at t=5 s" in bare[0].message


def test_maxprocs_boundaries(tmp_path):
    for max_procs, fires in ((0, False), (1, True)):
        header = CPU_HEADER.replace("MaxProcs: 16", f"MaxProcs: {max_procs}")
        lines = [swf_line(1, procs=2, req_procs=2)]
        report = run(write_swf(tmp_path / f"m{max_procs}.swf", lines, header=header),
                     "capacity-gpus")
        if fires:
            assert_fires(report, "capacity-gpus", 1, severity="warning")
        else:
            skipped = assert_fires(report, "rule-skipped", 1)[0]
            assert skipped.message == ("capacity-gpus skipped: no site settings and no MaxProcs "
                                       "in an SWF header (pass --site to give the capacity)")


def test_packing_on_nodes_whose_size_is_not_a_power_of_two():
    # five 2-GPU jobs on two 5-GPU nodes: 10 GPUs, but two per node at most
    assert_fires(run(together([2] * 5), "capacity-nodes", site=sized_site(5, 2)),
                 "capacity-nodes", 1, severity="error")
    # five 4-GPU jobs on two 10-GPU nodes: 20 GPUs, but two per node at most
    assert_fires(run(together([4] * 5), "capacity-nodes", site=sized_site(10, 2)),
                 "capacity-nodes", 1, severity="error")


def _counts(sizes, length=9):
    counts = np.zeros(length, int)
    for s in sizes:
        counts[s] += 1
    return counts


def test_ffd_counts_every_size():
    assert ffd_nodes(_counts([1] * 8), 8) == 1
    assert ffd_nodes(_counts([8, 8]), 8) == 2
    assert ffd_nodes(_counts([4, 4]), 8) == 1  # an exact fit fills the node


def test_packs_edges():
    assert packs(_counts([8] * 3), 2, 8) is False
    assert packs(_counts([1] * 17), 2, 8) is False
    assert packs(_counts([]), 0, 8) is True  # nothing fits on no node
    assert packs(_counts([8]), 1, 8) is True
    assert packs(_counts([9], length=10), 2, 8) is False  # larger than a node
    assert packs(_counts([4, 4]), 1, 8, budget=2) is True  # two placements, none retried
    assert packs(_counts([4, 4]), 1, 8, budget=1) is None
    assert packs(_counts([5, 5, 5]), 2, 8, budget=3) is False  # equal nodes are tried once


def test_capacity_lists_the_jobs_running_by_start_then_row():
    """Jobs running at a violation are listed by start time, jobs that started together in
    table order, and the finding is on the last of them (40 jobs: past numpy's insertion-sort
    size, where an unstable sort reorders ties)."""
    jobs = [{"submit_time": T0, "wait_s": 10 * (i % 2), "walltime_s": 600, "gpus_per_node": 1}
            for i in range(40)]
    site = small_site(((("2017-07-01T00:00:00+09:00"), 3),))  # 24 GPUs: over at T0 + 10
    found = assert_fires(run(aaic_table(jobs), "capacity-gpus", site=site), "capacity-gpus", 1)
    assert "40 jobs running at 2017-07-14T02:40:10Z: 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, ... " \
           "(+30 more)" in found[0].message
    assert found[0].job_id == 40


@pytest.mark.parametrize(("gpus_per_node", "sizes"),
                         [(8, [4, 4, 2, 2, 1, 1, 1, 1]), (8, [8, 4, 2, 1, 1]),
                          (6, [2, 2, 2, 2, 2, 2]), (6, [6, 1, 2, 1, 2])])
def test_divisible_chain_sizes_are_decided_by_the_bound_alone(monkeypatch, gpus_per_node, sizes):
    """Sizes in the divisible chain (powers of two dividing the node size, and the node size
    itself) always pack when their GPUs fit: the upper bound says so with no search, so that
    they stay decided past ``FFD_MAX_CASES`` distinct cases (here 0: none is searched)."""
    monkeypatch.setattr(rules_capacity, "FFD_MAX_CASES", 0)
    settings_ = dict(small_site().settings)
    settings_["gpus_per_node"] = gpus_per_node
    settings_["queues"] = [dict(q, gpus_per_node_max=min(q["gpus_per_node_max"], gpus_per_node))
                           for q in settings_["queues"]]
    site = site_from_settings(settings_)  # 2 nodes, all GPUs busy
    assert sum(sizes) == 2 * gpus_per_node
    assert_silent(run(together(sizes), "capacity-nodes", site=site), "capacity-nodes")
    # a size outside the chain (3 of 8) needs the search, not run here: a warning, not an error
    found = assert_fires(run(together([3, 3, 2]), "capacity-nodes", site=small_site()),
                         "capacity-nodes", 1, severity="warning")
    assert "not solved" in found[0].message
