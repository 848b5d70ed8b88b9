"""What anonymization keeps of the table metadata: a rule for every key, nothing raw by default.

The job table's columns are pseudonymized or dropped by ``swftools.privacy.pseudonyms``; its
metadata (``swftools.metadata.TableMetadata``, copied into ``datapackage.json`` and the Parquet
files) also holds text from the raw input. Each key is handled here:

* kept: what swftools computed or a site settings file states (``source_format``, ``site``,
  ``time_zone``, ``processor_unit``, ``converter_version``, counts, ``nqsii`` layout, ``synth``);
* ``source_file`` dropped: a file name chosen at the site may name a user, host or project;
* ``skipped_lines``: line numbers and field names kept, the raw values and messages dropped;
* ``swf_header``: numeric and date entries and the queue/partition lines kept (dates shifted or
  dropped with a time shift), free text (``Computer``, ``Installation``, ``Note``, ...) dropped;
  the verbatim header lines and the comment lines between jobs dropped;
* ``slurm``: the header keeps only field-name-like words; ``pbs`` counts kept;
* ``alibaba``: node names pseudonymized (namespace ``host``), the pod-name table and the node list
  file name dropped; ``site_settings`` strings naming a raw name or file are replaced;
* any other key (a later swftools', a foreign package's) is dropped: it was never reviewed.

Last, any remaining entry whose JSON text names a raw user, group or host is dropped.

The ``job_telemetry`` table of a release (``clean_telemetry``) keeps the sampling interval, the
metrics, the thresholds and per-source counts and formats; sample and allocation file names
become ``source 1``, ``source 2``, ... (at sites they are often host names, ``node07.prom``),
Prometheus warnings are withheld, metric-map label matches on host labels are withheld, site map
names become ``site map 1``, ... (preset names are kept), and the resource description is written
again from what is kept.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from swftools.errors import count
from swftools.privacy.match import Matcher, Term
from swftools.privacy.rawnames import HOST_LABELS, expand_node_run

KEPT_KEYS = frozenset({"source_format", "converter_version", "site", "time_zone", "processor_unit",
                       "swf_time_origin", "swf_first_line", "swf_extra_columns", "nqsii", "synth",
                       "pbs", "anonymization"})
# SWF header keys whose values are numbers, dates or queue/partition descriptions.
SWF_STRUCTURED = frozenset(k.lower() for k in (
    "Version", "MaxJobs", "MaxRecords", "Preemption", "UnixStartTime", "TimeZone",
    "TimeZoneString", "StartTime", "EndTime", "MaxNodes", "MaxProcs", "MaxRuntime", "MaxMemory",
    "AllowOveruse", "MaxQueues", "Queues", "Queue", "MaxPartitions", "Partitions", "Partition"))
_SWF_DATE_KEYS = {"starttime", "endtime"}
_FIELD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.:/-]{0,63}")
WITHHELD = "(withheld by anonymization)"


def _as_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def clean_swf_header(meta: dict[str, Any], shift_s: int, leaks: Callable[[str], bool],
                     notes: list[str]) -> None:
    """Keep the structured SWF header entries (dates shifted with the times), drop the rest."""
    header = meta.get("swf_header")
    if not isinstance(header, list):
        meta.pop("swf_header_lines", None)
        return
    kept, free = [], []
    for entry in header:
        key, value = (list(entry) + ["", ""])[:2] if isinstance(entry, list) else (entry, "")
        low = str(key).lower()
        if leaks(f"{key}: {value}") or leaks(_as_text(entry)):  # an entry may hold more than 2
            notes.append(f"dropped SWF header entry {key!r}: it names a raw user, group or host")
        elif low not in SWF_STRUCTURED:
            free.append(str(key) or "(comment)")
        elif shift_s and low == "unixstarttime" and str(value).strip().isdigit():
            kept.append([key, str(int(value) + shift_s)])
        elif shift_s and low in _SWF_DATE_KEYS:
            notes.append(f"dropped SWF header entry {key!r}: it states an unshifted date")
        else:
            kept.append(entry)
    if free:
        notes.append(f"dropped free-text SWF header entries ({', '.join(dict.fromkeys(free))}): "
                     "text from the source may name hosts or people")
    if kept != header:
        meta["swf_header"] = kept
    if kept != header or shift_s:
        # the verbatim lines would restore the original header (and dates)
        if meta.pop("swf_header_lines", None) is not None:
            notes.append("dropped the verbatim SWF header lines: the header was changed")


def _clean_layout(meta: dict[str, Any], notes: list[str]) -> None:
    layout = meta.get("swf_layout")
    if isinstance(layout, dict) and layout.get("other_lines"):
        lines = count(len(layout["other_lines"]), "SWF comment line")
        notes.append(f"dropped {lines} between jobs: free text from the source")
        meta["swf_layout"] = {**layout, "other_lines": []}


def _clean_skipped(meta: dict[str, Any], notes: list[str]) -> None:
    from swftools.formats.skipping import METADATA_KEY, withhold

    entries = meta.get(METADATA_KEY)
    if isinstance(entries, list):
        meta[METADATA_KEY] = withhold(entries)
        if entries:
            notes.append(f"kept the line numbers of {count(len(entries), 'skipped line')}, "
                         "dropped their raw values and messages")


def _clean_slurm(meta: dict[str, Any]) -> None:
    slurm = meta.get("slurm")
    if isinstance(slurm, dict) and isinstance(slurm.get("header"), list):
        slurm = dict(slurm)
        slurm["header"] = [h if isinstance(h, str) and _FIELD_NAME.fullmatch(h) else WITHHELD
                           for h in slurm["header"]]
        meta["slurm"] = slurm


def _clean_alibaba(meta: dict[str, Any], rename: Callable[[str], str],
                   notes: list[str]) -> list[str]:
    """Pseudonymize the node names, drop the pod names and the node list's file name; returns
    the raw node names."""
    alibaba = meta.get("alibaba")
    if not isinstance(alibaba, dict):
        return []
    if alibaba.pop("names", None) is not None:
        notes.append("dropped the Alibaba pod names (job names): pods are named from job ids")
    raw: list[str] = []
    nodes = alibaba.get("nodes")
    if isinstance(nodes, dict):
        nodes.pop("file", None)
        for run in nodes.get("runs", []) if isinstance(nodes.get("runs"), list) else []:
            names = expand_node_run(run)
            if isinstance(run, dict) and names:
                raw.extend(names)
                run["names"] = [rename(n) for n in names]
        if raw:
            notes.append(f"pseudonymized {count(len(raw), 'node name')} of the Alibaba node list")
    return raw


def _replace_strings(value: Any, leaks: Callable[[str], bool], files: list[str]) -> Any:
    """Strings with the raw file names cut out; a string naming anything else raw, withheld."""
    if isinstance(value, str):
        for name in files:
            value = value.replace(f" {name}", "").replace(name, "")
        return WITHHELD if leaks(value) else value
    if isinstance(value, list):
        return [_replace_strings(v, leaks, files) for v in value]
    if isinstance(value, dict):
        return {k: _replace_strings(v, leaks, files) for k, v in value.items()}
    return value


def clean_metadata(meta: dict[str, Any], shift_s: int, raw_terms: list[Term],
                   rename_host: Callable[[str], str],
                   notes: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The metadata an anonymized table may carry (see the module docstring), and the raw node
    names that were pseudonymized. ``raw_terms``: the raw user, group and host names."""
    meta = copy.deepcopy(meta)
    files = [str(f) for f in (meta.get("source_file"),
                              ((meta.get("alibaba") or {}).get("nodes") or {}).get("file")
                              if isinstance(meta.get("alibaba"), dict) else None) if f]
    if meta.pop("source_file", None) is not None:
        notes.append("dropped metadata 'source_file': a file name may name a user or host")
    hosts = _clean_alibaba(meta, rename_host, notes)
    terms = [*raw_terms, *(Term(h, "host") for h in hosts),
             *(Term(f, "name") for f in files)]
    leaks = Matcher(terms).found_in
    clean_swf_header(meta, shift_s, leaks, notes)
    if shift_s and isinstance(meta.get("swf_time_origin"), int):
        meta["swf_time_origin"] += shift_s
    _clean_layout(meta, notes)
    _clean_skipped(meta, notes)
    _clean_slurm(meta)
    if isinstance(meta.get("site_settings"), dict):
        meta["site_settings"] = _replace_strings(meta["site_settings"], leaks, files)
    reviewed = KEPT_KEYS | {"swf_header", "swf_header_lines", "swf_layout", "skipped_lines",
                            "slurm", "alibaba", "site_settings"}
    for key in sorted(meta):
        if key not in reviewed:
            notes.append(f"dropped metadata {key!r}: not a key anonymization knows to be safe")
            del meta[key]
        elif key not in ("swf_header", "anonymization") and leaks(_as_text(meta[key])):
            notes.append(f"dropped metadata {key!r}: it names a raw user, group or host")
            del meta[key]
    return meta, hosts


TELEMETRY_KEPT = frozenset({"interval_s", "metrics", "sampling", "idle_threshold_pct",
                            "gpus_per_node", "energy"})
_SOURCE_KEPT = ("format", "samples_read", "rows_mapped", "non_finite_dropped", "sampling")
_MAP_ENTRY_KEPT = ("source", "canonical", "source_unit", "scale", "type")


def clean_telemetry(meta: dict[str, Any], leaks: Callable[[str], bool],
                    notes: list[str]) -> dict[str, Any]:
    """The ``job_telemetry`` metadata a release may publish (see the module docstring).

    ``leaks`` tells whether a text names a raw user, group, host or job (the telemetry hosts
    included); every string kept is checked with it last and withheld on a hit."""
    from swftools.telemetry import output
    from swftools.telemetry.metric_map import PRESETS

    tel = meta.get("telemetry")
    if not isinstance(tel, dict):
        return {}
    out: dict[str, Any] = {k: copy.deepcopy(tel[k]) for k in sorted(TELEMETRY_KEPT) if k in tel}
    renamed: dict[str, str] = {}

    def map_name(name: Any) -> str:
        name = str(name)
        return name if name in PRESETS else renamed.setdefault(name, f"site map {len(renamed) + 1}")

    out["metric_maps"] = [map_name(n) for n in tel.get("metric_maps") or []]
    entries = []
    for e in tel.get("metric_map") or []:
        if not isinstance(e, dict):
            continue
        entry = {k: e[k] for k in _MAP_ENTRY_KEPT if k in e}
        match = e.get("match") if isinstance(e.get("match"), dict) else {}
        entry["match"] = {str(k): (WITHHELD if str(k).lower() in HOST_LABELS or leaks(f"{k}={v}")
                                   else v) for k, v in sorted(match.items())}
        entry["map"] = map_name(e.get("map", ""))
        entries.append(entry)
    out["metric_map"] = entries
    sources, warnings = [], 0
    for i, s in enumerate(x for x in tel.get("sources") or [] if isinstance(x, dict)):
        entry = {"file": f"source {i + 1}", **{k: s[k] for k in _SOURCE_KEPT if k in s}}
        said = s.get("warnings") if isinstance(s.get("warnings"), list) else []
        entry["warnings"] = [WITHHELD] * len(said)
        warnings += len(said)
        sources.append(entry)
    out["sources"] = sources
    allocations = str(tel.get("allocations", "<no allocation table>"))
    out["allocations"] = allocations if allocations.startswith("<") else "allocation table"
    out["description"] = output.describe(int(out.get("interval_s", 0) or 0), sources,
                                         list(out.get("metrics") or []), out["metric_maps"])
    alloc = "" if allocations.startswith("<") else " and the allocation file name"
    notes.append(f"telemetry: the {count(len(sources), 'sample file name')}{alloc} replaced by "
                 "'source N' (file names may name hosts)")
    if warnings:
        notes.append(f"telemetry: withheld {count(warnings, 'Prometheus warning')} "
                     "(raw server text)")
    if renamed:
        notes.append(f"telemetry: {count(len(renamed), 'site metric map name')} replaced")
    dropped = sorted(set(tel) - TELEMETRY_KEPT - {"metric_maps", "metric_map", "sources",
                                                 "allocations", "description"})
    if dropped:
        notes.append(f"telemetry: dropped metadata {', '.join(dropped)}: not a key anonymization "
                     "knows to be safe")
    return {"telemetry": _replace_strings(out, leaks, [])}


def clean_telemetry_table(table: Any, names: dict[str, list[str]],
                          notes: list[str]) -> Any:
    """``table`` (``job_telemetry``) with its metadata cleaned by ``clean_telemetry``; ``names``:
    the raw names by kind (``rawnames.telemetry_names`` and the job log's)."""
    from swftools import table as jt

    leaks = Matcher(Term(v, kind) for kind, values in names.items() for v in values).found_in
    return jt.with_metadata(table, clean_telemetry(jt.get_metadata(table), leaks, notes))
