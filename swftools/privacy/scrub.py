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
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from swftools.privacy.match import Matcher, Term
from swftools.privacy.rawnames import expand_node_run

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
        if leaks(f"{key}: {value}"):
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
        notes.append(f"dropped {len(layout['other_lines'])} SWF comment line(s) between jobs: "
                     "free text from the source")
        meta["swf_layout"] = {**layout, "other_lines": []}


def _clean_skipped(meta: dict[str, Any], notes: list[str]) -> None:
    from swftools.formats.skipping import METADATA_KEY, withhold

    entries = meta.get(METADATA_KEY)
    if isinstance(entries, list):
        meta[METADATA_KEY] = withhold(entries)
        if entries:
            notes.append(f"kept the line numbers of {len(entries)} skipped line(s), dropped their "
                         "raw values and messages")


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
            notes.append(f"pseudonymized {len(raw)} node name(s) of the Alibaba node list")
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
