"""The archive README, generated from the data, the schema, the reports and the settings."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from string import Template
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.compute as pc

from swftools import table as jt
from swftools.errors import count
from swftools.release.settings import License
from swftools.site import Site

TEMPLATES = Path(__file__).resolve().parent.parent.parent / "archive" / "templates"


def template_text(name: str) -> str:
    """A release template from ``archive/templates`` (or the installed copy)."""
    for base in (TEMPLATES, Path(__file__).resolve().parent / "_templates"):
        if (base / name).is_file():
            return (base / name).read_text(encoding="utf-8")
    raise FileNotFoundError(f"release template {name} not found")


def _unit(name: str) -> str:
    for suffix, unit in (("_time", "UTC epoch s"), ("_s", "s"), ("_kb", "KB"), ("_mib", "MiB"),
                         ("_gib", "GiB"), ("_w", "W"), ("_j", "J"), ("_pct", "%")):
        if name.endswith(suffix):
            return unit
    return ""


def fields_table(schema: dict[str, Any], table: pa.Table | None = None) -> str:
    """Markdown table of every field: name, type, unit, description (and if it is all empty)."""
    rows = ["| field | type | unit | description |", "|---|---|---|---|"]
    for field in schema["fields"]:
        note = ""
        if table is not None and field["name"] in table.column_names:
            if table.column(field["name"]).null_count == table.num_rows and table.num_rows:
                note = " *(unknown for every job in this release)*"
        enum = field.get("constraints", {}).get("enum")
        extra = f" Values: {', '.join(map(str, enum))}." if enum else ""
        rows.append(f"| `{field['name']}` | {field['type']} | {_unit(field['name'])} | "
                    f"{field.get('description', '')}{extra}{note} |")
    return "\n".join(rows)


def system_section(site: Site | None, table: pa.Table) -> str:
    """What the system was: nodes, GPUs, queues, capacity timeline, period covered."""
    meta = jt.get_metadata(table)
    tz = meta.get("time_zone") or (site.time_zone if site else "UTC")
    lines = []
    first = pc.min(table.column("submit_time")).as_py()
    last = pc.max(table.column("submit_time")).as_py()
    if first is not None and last is not None:
        fmt = lambda t: datetime.fromtimestamp(t, ZoneInfo(tz)).strftime("%Y-%m-%d")  # noqa: E731
        users, groups = (len(pc.unique(table.column(c).drop_null())) for c in ("user", "group"))
        lines.append(f"{count(table.num_rows, 'job', thousands=True)} submitted from "
                     f"{fmt(first)} to {fmt(last)} ({tz}), {count(users, 'user', thousands=True)}, "
                     f"{count(groups, 'group', thousands=True)}.")
    if site is None:
        return "\n\n".join(lines) or "No site description was given."
    # a site file may leave out the description and the GPU model: no gap is left for them
    gpus = " ".join(filter(None, (str(site.gpus_per_node), site.settings.get("gpu_model"), "GPUs")))
    lines.append(" ".join(filter(None, (
        f"**{site.title}**.", site.settings.get("description"),
        f"Each node has {gpus}; scheduler: {site.settings.get('scheduler', 'n/a')}."))))
    timeline = "; ".join(
        f"{count(n, 'node')} from {datetime.fromtimestamp(t, ZoneInfo(site.time_zone)).date()}"
        for t, n in zip(site.capacity_since, site.capacity_nodes))
    lines.append(f"Managed capacity over time: {timeline}.")
    queue_rows = ["| queue | SWF number | nodes per job | GPUs per node | walltime default / max (h) |",
                  "|---|---|---|---|---|"]
    for q in sorted(site.queues, key=lambda q: q.number):
        queue_rows.append(f"| {q.name} | {q.number} | {q.nodes_min}-{q.nodes_max} | "
                          f"{q.gpus_per_node_min}-{q.gpus_per_node_max} | "
                          f"{q.walltime_default_s / 3600:g} / {q.walltime_max_s / 3600:g} |")
    lines.append("\n".join(queue_rows))
    if site.multi_node_whole_nodes:
        lines.append("Multi-node jobs hold all GPUs of each of their nodes; single-node jobs share "
                     "nodes at GPU granularity.")
    lines.extend(f"Note: {n}" for n in site.settings.get("notes", []))
    return "\n\n".join(lines)


def license_text(lic: License) -> str:
    """Plain statement of the license for README and LICENSE."""
    if lic.text:
        return lic.text.strip()
    if lic.is_cc_by_sa:
        return (
            f"This dataset is licensed under the {lic.name} license (SPDX: `{lic.id}`), "
            f"{lic.url} (legal code: {lic.url}legalcode.en).\n\n"
            "You may share (copy and redistribute in any medium or format) and adapt (remix, "
            "transform and build upon) it for any purpose, even commercially, under these terms:\n\n"
            "- **Attribution**: give appropriate credit (keep the creators' credit and the "
            "citation above), provide a link to the license, and indicate if changes were made.\n"
            "- **ShareAlike**: if you remix, transform or build upon the data (for example a "
            "converted, cleaned, filtered or joined version), distribute your contribution under "
            "the same license (CC BY-SA 4.0 or a later or compatible one).\n"
            "- **No additional restrictions**: you may not apply legal terms or technological "
            "measures that legally restrict others from doing anything the license permits.\n\n"
            "The data are provided as-is, without warranties. The license does not cover the "
            "swftools software that produced this archive.")
    url = f" ({lic.url})" if lic.url else ""
    return f"This dataset is licensed under {lic.name}{url}."


def render_readme(values: dict[str, str]) -> str:
    """Fill the README template; every placeholder must be supplied."""
    return Template(template_text("README.md.tmpl")).substitute(values).rstrip() + "\n"
