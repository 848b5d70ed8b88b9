"""The sacct reader's column rules, hand-worked (issue 30): states to termcode and status,
GPUs, CPUs, nodes and memory from TRES/GRES and the older columns, times and limits, names,
and the metadata of a read. Each expected table is worked out from the module docstring and
docs/formats/slurm-pbs.md, never from a previous read."""

from __future__ import annotations

import pytest

from swftools.errors import InputError
from swftools.formats import slurm
from swftools.formats.skipping import skipped_lines
from swftools.metadata import TableMetadata

from .sacct_support import NAMES, T0, T1, T2, col, sacct, slurm_meta

pytestmark = pytest.mark.filterwarnings("ignore::swftools.formats.localtime.AssumedTimeZoneWarning")


def test_states_give_termcode_and_status_and_unfinished_jobs_are_counted(tmp_path):
    """The schema's state table (docs/formats/slurm-pbs.md): COMPLETED 0/1, FAILED 1/0,
    TIMEOUT 2/0, CANCELLED 3/5, CANCELLED by 0 (root) 4/5, REQUEUED with an End 4/5; REQUEUED
    with End Unknown waits again: unfinished, like PENDING and RUNNING."""
    rows = [{"JobID": "1", "State": "COMPLETED"}, {"JobID": "2", "State": "FAILED"},
            {"JobID": "3", "State": "TIMEOUT"}, {"JobID": "4", "State": "CANCELLED by 1234"},
            {"JobID": "5", "State": "CANCELLED by 0"}, {"JobID": "6", "State": "REQUEUED"},
            {"JobID": "7", "State": "REQUEUED", "Start": "Unknown", "End": "Unknown"},
            {"JobID": "8", "State": "RUNNING", "End": "Unknown"},
            {"JobID": "9", "State": "PENDING", "Start": "Unknown", "End": "Unknown"},
            {"JobID": "10", "State": "PENDING", "Start": "Unknown", "End": "Unknown"},
            {"JobID": "11", "State": "COMPLETED"}]
    table = slurm.read(sacct(tmp_path, NAMES, *rows))
    assert col(table, "job_id") == [1, 2, 3, 4, 5, 6, 11]
    assert col(table, "termcode") == [0, 1, 2, 3, 4, 4, 0]
    assert col(table, "swf_status") == [1, 0, 0, 5, 5, 5, 1]
    meta = TableMetadata.from_table(table)
    assert list(meta.extra["slurm"]["unfinished"].items()) == [("PENDING", 2), ("REQUEUED", 1),
                                                               ("RUNNING", 1)]
    assert meta.unfinished_jobs == 4 and meta.extra["slurm"]["jobs"] == 7


def test_a_bad_state_names_every_state_and_is_skipped(tmp_path):
    path = sacct(tmp_path, NAMES, {}, {"JobID": "6", "State": "DONE"}, {"JobID": "7",
                                                                        "State": "RUNNING"})
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.line, e.value, e.field) == (3, "DONE", "field 'State' (state)")
    assert e.message == "'DONE' is not a valid state"
    # every state of the table in docs/formats/slurm-pbs.md, in its order, but CANCELLED by 0
    assert e.expected == (
        "a sacct state: COMPLETED, FAILED, OUT_OF_MEMORY, TIMEOUT, DEADLINE, CANCELLED, "
        "NODE_FAIL, BOOT_FAIL, PREEMPTED, REVOKED, REQUEUED, PENDING, RUNNING, SUSPENDED, "
        "REQUEUE_HOLD, REQUEUE_FED, RESIZING, COMPLETING (CANCELLED by UID too)")
    table = slurm.read(path, skip_bad_lines=True)
    assert col(table, "job_id") == [5]
    assert slurm_meta(table)["unfinished"] == {"RUNNING": 1}
    assert [(x["line"], x["value"]) for x in skipped_lines(table)] == [(3, "DONE")]


def test_gpus_cpus_nodes_and_memory_from_tres(tmp_path):
    """AllocTRES before ReqTRES for what ran, ReqTRES for what was asked; a TRES string without
    GPUs in a GPU file is 0 GPUs; memory per requested GPU, nodes from the node TRES."""
    names = [*NAMES, "ReqTRES", "AllocTRES"]
    rows = [{"ReqTRES": "cpu=8,gres/gpu=4,mem=16G,node=2", "AllocTRES": "cpu=8,gres/gpu=4,node=2"},
            {"JobID": "6", "ReqTRES": "cpu=2,mem=3000M,node=1", "AllocTRES": ""},
            {"JobID": "7", "ReqTRES": "cpu=4,gres/gpu:a100=1,gres/gpu:v100=2,mem=9M",
             "AllocTRES": "cpu=4,gres/gpu=2,node=1"},
            {"JobID": "8", "ReqTRES": "", "AllocTRES": ""}]
    table = slurm.read(sacct(tmp_path, names, *rows))
    assert TableMetadata.from_table(table).processor_unit == "gpu"
    assert col(table, "gpus") == [4, 0, 2, None]  # allocated 2 of the 3 asked for
    assert col(table, "requested_procs") == [4, 0, 3, None]
    assert col(table, "cpus") == [8, 2, 4, None]
    assert col(table, "nodes") == [2, None, 1, None]
    assert col(table, "gpus_per_node") == [2, None, 2, None]
    # 16G = 16 * 1024 * 1024 KiB over 4 GPUs; 0 GPUs divide nothing; 9M over 3 GPUs = 3 MiB
    assert col(table, "requested_memory_kb") == [4 * 1024 * 1024, None, 3 * 1024, None]


def test_a_file_without_gpus_counts_processors(tmp_path):
    names = [*NAMES, "ReqTRES", "AllocTRES", "NNodes"]
    rows = [{"ReqTRES": "cpu=6,mem=6K,node=2", "AllocTRES": "cpu=4,node=2", "NNodes": "2"},
            {"JobID": "6", "ReqTRES": "cpu=3,mem=2K", "AllocTRES": "cpu=3", "NNodes": "1"}]
    table = slurm.read(sacct(tmp_path, names, *rows))
    assert TableMetadata.from_table(table).processor_unit == "processor"
    assert col(table, "gpus") == [4, 3]  # the allocated CPUs
    assert col(table, "requested_procs") == [6, 3]
    assert col(table, "gpus_per_node") == [2, 3]
    assert col(table, "requested_memory_kb") == [1, None]  # 6 KiB / 6; 2 KiB / 3 is not whole


def test_per_node_and_per_processor_quotients_are_exact_past_2_to_53(tmp_path):
    """Counts and sizes have up to 18 digits: the quotients are integer divisions, exact where
    a float one is not (10**17 + 5 and 10**17 + 1 are both 10**17 as floats)."""
    names = [*NAMES, "NCPUS", "NNodes", "ReqTRES"]
    rows = [{"NCPUS": "100000000000000005", "NNodes": "5",
             "ReqTRES": "cpu=5,mem=100000000000000005K"},
            {"JobID": "6", "NCPUS": "100000000000000001", "NNodes": "5",
             "ReqTRES": "cpu=5,mem=100000000000000001K"}]
    table = slurm.read(sacct(tmp_path, names, *rows))
    assert col(table, "gpus") == [10 ** 17 + 5, 10 ** 17 + 1]  # the CPUs: no GPUs here
    # (10**17 + 5) / 5 = 2 * 10**16 + 1; 10**17 + 1 leaves 1 over 5: not whole
    assert col(table, "gpus_per_node") == [2 * 10 ** 16 + 1, None]
    assert col(table, "requested_memory_kb") == [2 * 10 ** 16 + 1, None]
    # a GPU file with a GRES column (its empty cells are 0 GPUs): the counts stay exact too
    gpu = slurm.read(sacct(tmp_path, [*NAMES, "AllocTRES", "ReqGRES"],
                           {"AllocTRES": "gres/gpu=100000000000000005,node=5", "ReqGRES": ""},
                           {"JobID": "6", "AllocTRES": "node=1", "ReqGRES": ""}, name="g.sacct"))
    assert col(gpu, "gpus") == [10 ** 17 + 5, 0]
    assert col(gpu, "gpus_per_node") == [2 * 10 ** 16 + 1, 0]


def test_ncpus_and_reqcpus_and_their_order(tmp_path):
    names = [*NAMES, "NCPUS", "ReqCPUS", "ReqTRES", "AllocTRES"]
    rows = [{"NCPUS": "16", "ReqCPUS": "1", "ReqTRES": "cpu=2", "AllocTRES": "cpu=4"},
            {"JobID": "6", "NCPUS": "", "ReqCPUS": "1", "ReqTRES": "cpu=2", "AllocTRES": "cpu=4"},
            {"JobID": "7", "NCPUS": "", "ReqCPUS": "1", "ReqTRES": "cpu=2", "AllocTRES": ""},
            {"JobID": "8", "NCPUS": "", "ReqCPUS": "1", "ReqTRES": "", "AllocTRES": ""},
            {"JobID": "9", "NCPUS": "", "ReqCPUS": "", "ReqTRES": "", "AllocTRES": ""}]
    table = slurm.read(sacct(tmp_path, names, *rows))
    assert col(table, "cpus") == [16, 4, 2, 1, None]
    assert col(table, "requested_procs") == [2, 2, 2, 1, None]  # ReqTRES, else ReqCPUS
    with pytest.raises(InputError) as err:
        slurm.read(sacct(tmp_path, names, {"ReqCPUS": "x"}, name="b.sacct"))
    assert (err.value.value, err.value.field) == ("x", "field 'ReqCPUS' (requested CPU count)")


@pytest.mark.parametrize("gres,gpus,unit", [
    ("gpu:2", 2, "gpu"), ("gres/gpu:v100:3", 3, "gpu"), ("mps:100,gpu", 1, "gpu"),
    ("gpu(IDX:0)", 1, "gpu"), ("gpu=2", 2, "gpu"), ("mps:100", None, "processor"),
    ("gpus:2", None, "processor"), ("mygpu:2", None, "processor")])
def test_older_gres_columns_count_gpus(tmp_path, gres, gpus, unit):
    names = [*NAMES, "ReqGRES", "AllocGRES", "NCPUS"]
    rows = [{"ReqGRES": gres, "AllocGRES": "", "NCPUS": "4"},
            {"JobID": "6", "ReqGRES": "", "AllocGRES": "", "NCPUS": "2"}]
    table = slurm.read(sacct(tmp_path, names, *rows))
    assert TableMetadata.from_table(table).processor_unit == unit
    if unit == "gpu":  # an empty GRES cell in a GPU file: no GPUs
        assert col(table, "gpus") == [gpus, 0]
        assert col(table, "requested_procs") == [gpus, 0]
    else:
        assert col(table, "gpus") == [4, 2]
        assert col(table, "requested_procs") == [None, None]


def test_alloc_gres_before_req_gres(tmp_path):
    names = [*NAMES, "ReqGRES", "AllocGRES"]
    rows = [{"ReqGRES": "gpu:4", "AllocGRES": "gpu:2"}, {"JobID": "6", "ReqGRES": "gpu:1"}]
    table = slurm.read(sacct(tmp_path, names, *rows))
    assert col(table, "gpus") == [2, 1]
    assert col(table, "requested_procs") == [4, 1]
    with pytest.raises(InputError) as err:
        slurm.read(sacct(tmp_path, names, {"AllocGRES": "gpu:x:y:z"}, name="b.sacct"))
    assert err.value.field == "field 'AllocGRES' (allocated GRES)"
    for one in ("ReqGRES", "AllocGRES"):  # one GRES column: its empty cells are 0 GPUs too
        table = slurm.read(sacct(tmp_path, [*NAMES, one], {one: "gpu:2"}, {"JobID": "6"},
                                  name="c.sacct"))
        assert col(table, "gpus") == [2, 0]


def test_node_counts_from_nnodes_else_counted_in_nodelist(tmp_path):
    names = [*NAMES, "NNodes", "NodeList", "AllocTRES"]
    rows = [{"NNodes": "", "NodeList": "a[1-3],b7", "AllocTRES": "node=9"},
            {"JobID": "6", "NNodes": "2", "NodeList": "x1", "AllocTRES": "node=9"},
            {"JobID": "7", "NNodes": "", "NodeList": "None assigned", "AllocTRES": "node=5"},
            {"JobID": "8", "NNodes": "", "NodeList": "None assigned", "AllocTRES": ""}]
    table = slurm.read(sacct(tmp_path, names, *rows))
    assert col(table, "nodes") == [4, 2, 5, None]
    only_list = slurm.read(sacct(tmp_path, [*NAMES, "NodeList"], {"NodeList": "g[01-02]"},
                                  name="b.sacct"))
    assert col(only_list, "nodes") == [2]
    with pytest.raises(InputError) as err:  # checked even when NNodes says the count
        slurm.read(sacct(tmp_path, names, {"NNodes": "1", "NodeList": "a b"}, name="c.sacct"))
    assert (err.value.value, err.value.message) == ("a b", "'a b' is not valid here")
    assert err.value.expected == ("a host list such as node01,node[02-04,07] or gpu[1-2]-[a,b], "
                                  "or None assigned")


def test_times_waits_walltimes_and_limits(tmp_path):
    """wait = Start - Submit (unknown when negative), walltime = End - Start, Elapsed kept
    where it differs (and only for jobs that started), Timelimit in seconds."""
    names = [*NAMES, "ElapsedRaw", "Timelimit", "Eligible", "ExitCode"]
    rows = [{"ElapsedRaw": "60", "Timelimit": "1-00:00:00", "Eligible": T0, "ExitCode": "0:0"},
            {"JobID": "6", "Submit": T2, "Start": T1, "End": "2023-01-01T00:03:00",
             "ElapsedRaw": "100", "Timelimit": "UNLIMITED", "Eligible": "Unknown",
             "ExitCode": "1:9"},
            {"JobID": "7", "State": "CANCELLED", "Start": "Unknown", "ElapsedRaw": "0",
             "Eligible": "None", "ExitCode": "0:15",
             "Timelimit": "05:00"},
            {"JobID": "8", "Submit": T1, "ElapsedRaw": "60", "Eligible": T1, "ExitCode": "0:0"}]
    table = slurm.read(sacct(tmp_path, names, *rows))
    assert col(table, "wait_s") == [60, None, None, 0]  # started the second it was submitted
    assert col(table, "walltime_s") == [60, 120, None, 60]
    assert col(table, "recorded_walltime_s") == [None, 100, None, None]
    assert col(table, "requested_walltime_s") == [86400, None, 300, None]
    assert slurm_meta(table)["walltime_largest_difference_s"] == 20
    with pytest.raises(InputError) as err:  # a job that ended was submitted: Submit is known
        slurm.read(sacct(tmp_path, names, {**rows[0], "Submit": "Unknown"}, name="c.sacct"))
    assert (err.value.line, err.value.message) == (2, "'Unknown' is unknown")
    assert err.value.expected == "YYYY-MM-DDTHH:MM:SS (local time)"
    for cells, field in (({"Eligible": "soon"}, "Eligible"), ({"ExitCode": "0"}, "ExitCode"),
                         ({"Timelimit": "later"}, "Timelimit")):
        with pytest.raises(InputError) as err:
            slurm.read(sacct(tmp_path, names, {**rows[0], **cells}, name="b.sacct"))
        assert f"'{field}'" in err.value.field and err.value.line == 2


def test_an_end_before_the_start_is_located(tmp_path):
    path = sacct(tmp_path, NAMES, {}, {"JobID": "6", "End": T0})
    with pytest.raises(InputError) as err:
        slurm.read(path)
    e = err.value
    assert (e.path, e.line, e.value, e.field) == (str(path), 3, T0, "field 'End' (end time)")
    assert e.message == f"{T0!r} is before the start time {T1!r}"
    assert e.expected == "an end time at or after the start time"
    assert col(slurm.read(path, skip_bad_lines=True), "job_id") == [5]


def test_names_are_null_when_empty_and_refused_with_control_characters(tmp_path):
    names = [*NAMES, "User", "Partition", "Account"]
    rows = [{"User": "ann", "Partition": "", "Account": "lab"},
            {"JobID": "6", "User": "", "Partition": "gpu", "Account": ""}]
    table = slurm.read(sacct(tmp_path, names, *rows))
    assert (col(table, "user"), col(table, "queue"), col(table, "group")) == (
        ["ann", None], [None, "gpu"], ["lab", None])
    with pytest.raises(InputError) as err:
        slurm.read(sacct(tmp_path, names, {"User": "a\x07b"}, name="b.sacct"))
    assert (err.value.line, err.value.value, err.value.field) == (2, "a\x07b",
                                                                  "field 'User' (user)")
    assert err.value.message == "'a\\x07b' holds a control character"
    assert err.value.expected == ("a name without control characters: no NUL, tab, line break, "
                                  "escape, DEL or other character of Unicode category Cc")


def test_the_metadata_of_a_read(tmp_path):
    from swftools import __version__

    names = [*NAMES, "Comment"]
    path = sacct(tmp_path, names, {}, {"JobID": "5.batch"}, {"JobID": "5.0"},
                  {"JobID": "6", "State": "PENDING", "Start": "Unknown", "End": "Unknown"},
                  name="my.sacct")
    table = slurm.read(str(path), site="aaic")
    meta = TableMetadata.from_table(table)
    assert (meta.source_file, meta.source_format, meta.converter_version, meta.site,
            meta.time_zone, meta.processor_unit, meta.unfinished_jobs) == (
        "my.sacct", "slurm", __version__, "aaic", "Asia/Tokyo", "processor", 1)
    assert meta.extra["slurm"] == {"header": names, "columns_from": "header", "jobs": 1,
                                   "steps": 2, "unfinished": {"PENDING": 1},
                                   "walltime_largest_difference_s": 0}
    # 00:01 in Tokyo (UTC+9) is 15:01 UTC the day before
    assert col(table, "start_time") == [1672498860]
    headerless = tmp_path / "noheader.sacct"
    headerless.write_text(path.read_text().split("\n", 1)[1])
    paris = slurm.read(headerless, columns=",".join(names), tz="Europe/Paris", site="aaic")
    other = TableMetadata.from_table(paris)
    assert (other.site, other.time_zone) == ("aaic", "Europe/Paris")  # tz before the site's
    assert col(paris, "start_time") == [1672527660]  # 00:01 in Paris (UTC+1): 23:01 UTC
    assert other.extra["slurm"]["columns_from"] == "--columns"
    assert other.extra["slurm"]["header"] == names
    commas = tmp_path / "commas.sacct"
    commas.write_text(path.read_text().replace("|", ","))
    assert col(slurm.read(commas, delimiter=",", tz="UTC"), "job_id") == [5]
