"""The archive README's generated parts: the fields table, the system section, the license text."""

from __future__ import annotations

from pathlib import Path

import pytest

from swftools import table as jt
from swftools.release import readme
from swftools.release.settings import License, license_of
from swftools.site import site_from_settings

TINY = {
    "name": "tiny", "title": "Tiny cluster", "description": "Two racks.", "scheduler": "Slurm",
    "time_zone": "Asia/Tokyo", "gpu_model": "NVIDIA A100", "gpus_per_node": 4,
    "capacity_timeline": [{"since": "2020-06-01T00:00:00+09:00", "nodes": 3},
                          {"since": "2020-01-01T00:00:00+09:00", "nodes": 1}],
    "queues": [
        {"name": "big", "number": 2, "nodes_min": 1, "nodes_max": 3, "gpus_per_node_min": 4,
         "gpus_per_node_max": 4, "walltime_default_s": 3600, "walltime_max_s": 86400},
        {"name": "small", "number": 1, "nodes_min": 1, "nodes_max": 1, "gpus_per_node_min": 1,
         "gpus_per_node_max": 2, "walltime_default_s": 1800, "walltime_max_s": 5400}],
    "notes": ["Node 3 came in June.", "Logs of May are lost."],
}
# 2020-01-31 15:30 UTC is 2020-02-01 in Tokyo; 2020-03-01 14:00 UTC is still 2020-03-01 there
FIRST, LAST = 1580484600, 1583071200


def jobs(n_users: int = 2, metadata: dict | None = None):
    users = ["u1", "u2", None][:n_users] + [None] * (3 - n_users)
    return jt.from_columns({"job_id": [1, 2, 3], "submit_time": [LAST, FIRST, FIRST + 60],
                            "user": users, "group": ["g", "g", None]}, metadata)


def test_system_section_describes_the_site_in_its_time_zone():
    text = readme.system_section(site_from_settings(TINY), jobs())
    assert text.split("\n\n") == [
        "3 jobs submitted from 2020-02-01 to 2020-03-01 (Asia/Tokyo), 2 users, 1 group.",
        "**Tiny cluster**. Two racks. Each node has 4 NVIDIA A100 GPUs; scheduler: Slurm.",
        "Managed capacity over time: 1 node from 2020-01-01; 3 nodes from 2020-06-01.",
        "| queue | SWF number | nodes per job | GPUs per node | walltime default / max (h) |\n"
        "|---|---|---|---|---|\n"
        "| small | 1 | 1-1 | 1-2 | 0.5 / 1.5 |\n"
        "| big | 2 | 1-3 | 4-4 | 1 / 24 |",
        "Multi-node jobs hold all GPUs of each of their nodes; single-node jobs share nodes at "
        "GPU granularity.",
        "Note: Node 3 came in June.",
        "Note: Logs of May are lost.",
    ]


def test_system_section_defaults_for_a_site_that_says_little():
    bare = {k: v for k, v in TINY.items() if k not in ("description", "scheduler", "gpu_model",
                                                       "notes")}
    text = readme.system_section(site_from_settings({**bare, "multi_node_whole_nodes": False}),
                                 jobs())
    parts = text.split("\n\n")
    assert parts[1] == "**Tiny cluster**. Each node has 4 GPUs; scheduler: n/a."
    assert len(parts) == 4 and not any("Multi-node" in p or "Note:" in p for p in parts)


def test_system_section_time_zone_comes_from_the_table_then_the_site_then_utc():
    utc = readme.system_section(None, jobs())
    assert utc == "3 jobs submitted from 2020-01-31 to 2020-03-01 (UTC), 2 users, 1 group."
    assert readme.system_section(None, jobs(n_users=1)).endswith(", 1 user, 1 group.")
    table = jobs(metadata={"time_zone": "America/New_York"})
    assert readme.system_section(site_from_settings(TINY), table).startswith(
        "3 jobs submitted from 2020-01-31 to 2020-03-01 (America/New_York),")


def test_system_section_without_submit_times_or_site():
    table = jt.from_columns({"job_id": [1], "submit_time": [None]})
    assert readme.system_section(None, table) == "No site description was given."
    text = readme.system_section(site_from_settings(TINY), table)
    assert text.startswith("**Tiny cluster**.")


def test_system_section_counts_with_thousands_separators():
    n = 1234
    table = jt.from_columns({"job_id": list(range(n)), "submit_time": [FIRST] * n,
                             "user": [f"u{i}" for i in range(n)],
                             "group": [f"g{i // 2}" for i in range(n - 1)] + [None]})
    assert readme.system_section(None, table) == (
        "1,234 jobs submitted from 2020-01-31 to 2020-01-31 (UTC), 1,234 users, 617 groups.")
    table = table.set_column(table.schema.get_field_index("group"), "group",
                             table.column("user"))
    assert readme.system_section(None, table).endswith(", 1,234 users, 1,234 groups.")


def test_fields_table_gives_units_enums_and_all_unknown_columns():
    schema = {"fields": [
        {"name": "submit_time", "type": "integer", "description": "When."},
        {"name": "wait_s", "type": "integer", "description": "Wait."},
        {"name": "mem_kb", "type": "number"},
        {"name": "gpu_mem_mib", "type": "number", "description": "d"},
        {"name": "host_mem_gib", "type": "number", "description": "d"},
        {"name": "power_w", "type": "number", "description": "d"},
        {"name": "energy_j", "type": "number", "description": "d"},
        {"name": "util_pct", "type": "number", "description": "d"},
        {"name": "queue", "type": "string", "description": "Queue.",
         "constraints": {"enum": ["a", "b"]}},
        {"name": "user", "type": "string", "description": "Who."},
    ]}
    table = jt.from_columns({"job_id": [1, 2], "submit_time": [FIRST, FIRST],
                             "user": ["u", None]})
    assert readme.fields_table(schema, table).splitlines() == [
        "| field | type | unit | description |", "|---|---|---|---|",
        "| `submit_time` | integer | UTC epoch s | When. |",
        "| `wait_s` | integer | s | Wait. *(unknown for every job in this release)* |",
        "| `mem_kb` | number | KB |  |",
        "| `gpu_mem_mib` | number | MiB | d |",
        "| `host_mem_gib` | number | GiB | d |",
        "| `power_w` | number | W | d |",
        "| `energy_j` | number | J | d |",
        "| `util_pct` | number | % | d |",
        "| `queue` | string |  | Queue. Values: a, b. *(unknown for every job in this release)* |",
        "| `user` | string |  | Who. |",
    ]
    empty = jt.from_columns({"job_id": []})
    assert "unknown for every job" not in readme.fields_table(schema, empty)
    assert "unknown for every job" not in readme.fields_table(schema)


def test_license_text_of_cc_by_sa_names_its_terms():
    text = readme.license_text(license_of({}))
    assert text.startswith(
        "This dataset is licensed under the Creative Commons Attribution-ShareAlike 4.0 "
        "International license (SPDX: `CC-BY-SA-4.0`), https://creativecommons.org/licenses/"
        "by-sa/4.0/ (legal code: https://creativecommons.org/licenses/by-sa/4.0/legalcode.en).\n\n")
    # the terms as the CC BY-SA 4.0 deed words them
    for term in ("\n\nYou may share (copy and redistribute in any medium or format) and adapt "
                 "(remix, transform and build upon) it for any purpose, even commercially, under "
                 "these terms:\n\n- **Attribution**: give appropriate credit",
                 "provide a link to the license, and indicate if changes were made.\n",
                 "\n- **ShareAlike**: if you remix, transform or build upon the data (for example "
                 "a converted, cleaned, filtered or joined version), distribute your contribution "
                 "under the same license (CC BY-SA 4.0 or a later or compatible one).\n",
                 "\n- **No additional restrictions**: you may not apply legal terms or "
                 "technological measures that legally restrict others from doing anything the "
                 "license permits.\n\nThe data are provided as-is, without warranties."):
        assert term in text
    assert text.endswith("The license does not cover the swftools software that produced "
                         "this archive.")


def test_license_text_of_other_licenses():
    assert readme.license_text(License("LicenseRef-X", "X terms", None, "  Be kind.\n")) == \
        "Be kind."
    assert readme.license_text(License("CC-BY-4.0", "CC BY 4.0", "https://example.org/by")) == \
        "This dataset is licensed under CC BY 4.0 (https://example.org/by)."
    assert readme.license_text(License("MIT", "MIT", None)) == \
        "This dataset is licensed under MIT."


def test_template_is_found_beside_the_package_when_the_checkout_has_none(tmp_path, monkeypatch):
    installed = tmp_path / "swftools" / "release"
    (installed / "_templates").mkdir(parents=True)
    (installed / "_templates" / "README.md.tmpl").write_text("# $title\n", encoding="utf-8")
    monkeypatch.setattr(readme, "TEMPLATES", tmp_path / "missing")
    monkeypatch.setattr(readme, "__file__", str(installed / "readme.py"))
    assert readme.template_text("README.md.tmpl") == "# $title\n"
    assert readme.render_readme({"title": "T"}) == "# T\n"
    with pytest.raises(FileNotFoundError, match="release template nope.tmpl not found"):
        readme.template_text("nope.tmpl")


def test_render_readme_needs_every_placeholder():
    with pytest.raises(KeyError):
        readme.render_readme({"title": "T"})
    text = Path(readme.TEMPLATES / "README.md.tmpl").read_text(encoding="utf-8")
    assert readme.template_text("README.md.tmpl") == text
