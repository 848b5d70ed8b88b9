"""The SimGrid platform written beside a Batsim workload: ``nb_res`` compute hosts and a master.

Shaped as Batsim's own examples (oar-team/batsim ``platforms/cluster_energy_128.xml``, SimGrid
platform version 4.1): one ``Full``-routed zone holding a cluster of compute hosts ``host0`` ..
``host<nb_res-1>`` and a one-host cluster ``master_host0`` with the property ``role=master``
(Batsim's ``-m master_host0`` is then optional), joined by a backbone. Delay profiles ignore
speeds and links, so the values are Batsim's example values.
"""

from __future__ import annotations

from pathlib import Path

_LINK = 'bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us" speed="1Gf"'


def platform_path(workload: Path) -> Path:
    """Where the platform of ``workload`` goes by default: ``<stem>.platform.xml`` beside it
    (``w.json`` -> ``w.platform.xml``)."""
    stem = workload.name[:-5] if workload.name.lower().endswith(".json") else workload.name
    return workload.with_name(f"{stem}.platform.xml")


def platform_xml(nb_res: int) -> str:
    """The platform text for ``nb_res`` compute hosts (deterministic)."""
    return "\n".join([
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">',
        '<zone id="AS0" routing="Full">',
        f'  <cluster id="compute" prefix="host" suffix="" radical="0-{nb_res - 1}" {_LINK}/>',
        f'  <cluster id="master" prefix="master_host" suffix="" radical="0-0" {_LINK}>',
        '    <prop id="role" value="master"/>',
        "  </cluster>",
        '  <link id="backbone" bandwidth="1.25GBps" latency="500us"/>',
        '  <zoneRoute src="compute" dst="master" gw_src="hostcompute_router"',
        '             gw_dst="master_hostmaster_router">',
        '    <link_ctn id="backbone"/>',
        "  </zoneRoute>",
        "</zone>",
        "</platform>",
        "",
    ])
