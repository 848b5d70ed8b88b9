"""Alibaba GPU cluster trace v2023 (alibaba/clusterdata ``cluster-trace-gpu-v2023``): the openb
pod list with its node list, read into the job table and written for the Kubernetes Scheduler
Simulator (GPU sharing, Weng et al., USENIX ATC'23).

Modules by role: ``schema`` (columns, the phase table, the default epoch, from
``schemas/formats/alibaba-openb.schema.json``), ``pods`` (pod CSV <-> typed columns <-> job-table
columns), ``nodes`` (finding and reading the node list, the inline site it makes), ``reader`` and
``writer``.
"""

from swftools.formats.alibaba.nodes import find_node_list, node_list_path
from swftools.formats.alibaba.reader import read
from swftools.formats.alibaba.writer import CARRIED, write
from swftools.formats.formatinfo import FormatInfo

INFO = FormatInfo(
    name="alibaba", title="Alibaba GPU trace v2023 openb pod list (+ node list)", read=True,
    write=True, extensions=(".csv", ".csv.gz"), carries=frozenset(CARRIED), tables=("gpu",),
    cannot_carry="user, group, requested walltime and the SWF-only fields; a pod runs on one "
                 "node (multi-node jobs become one pod of all their GPUs); termcodes 2 and 4 "
                 "become Failed; times relative to the trace start",
    reference="https://github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2023")

__all__ = ["CARRIED", "INFO", "find_node_list", "node_list_path", "read", "write"]
