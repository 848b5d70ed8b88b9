"""The job table's metadata as a typed object: :class:`TableMetadata`.

A job table carries its metadata as one JSON object under the key ``swftools`` of its Arrow
schema metadata (and so in every Parquet file written from it; a data package also copies it into
its descriptor). ``schemas/table-metadata.schema.json`` describes that serialized form and is
checked on every :meth:`TableMetadata.from_dict` / :meth:`TableMetadata.from_table`.

Readers fill a ``TableMetadata``; writers and rules read it. The serialized bytes are exactly what
earlier versions wrote (``json.dumps(..., sort_keys=True, ensure_ascii=False)``, UTF-8): a field
that is ``None`` is left out, except that a key read as JSON ``null`` is written back as ``null``
and ``swf_time_origin`` is always written (``null`` when unknown) beside ``swf_first_line``, as the
SWF reader always did.

Unknown keys are **kept**, not rejected: they land in :attr:`TableMetadata.extra`, untyped and
uninterpreted, and are written back unchanged, so a table or package written by a later swftools
(or a caller's own annotations) survives a round trip through this one byte for byte.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa

from swftools.errors import InputError
from swftools.resources import load_json

if TYPE_CHECKING:
    import jsonschema

METADATA_KEY = b"swftools"  # the Arrow schema-metadata key holding the JSON object
SCHEMA_FILE = "table-metadata.schema.json"

ProcessorUnit = Literal["gpu", "processor"]
UNIT_WORDS = {"gpu": "GPUs", "processor": "processors"}  # plural, for messages

_GPU_SOURCES = ("nqsii", "synth")  # formats whose size column always counts GPUs


@dataclass(frozen=True)
class TableMetadata:
    """Everything swftools records beside the job table's columns (every field optional).

    Nested values are plain JSON values (lists and dicts) so that they serialize exactly as
    read; treat them as read-only and use :func:`dataclasses.replace` to change a field.
    """

    #: Base name of the file the table was read from.
    source_file: str | None = None
    #: Format the table was read from or made by: ``swf``, ``nqsii``, ``package``, ``synth``.
    source_format: str | None = None
    #: The swftools version that read the input.
    converter_version: str | None = None
    #: Site preset or site name the table belongs to (e.g. ``aaic``).
    site: str | None = None
    #: IANA time zone of the site's local times.
    time_zone: str | None = None
    #: What the ``gpus`` column counts when stated explicitly; None: derived (see :attr:`unit`).
    processor_unit: ProcessorUnit | None = None
    #: SWF header as ordered ``[key, value]`` pairs (repeated keys kept, continuations joined
    #: to the previous value with a newline).
    swf_header: list[list[str]] | None = None
    #: SWF header lines verbatim (byte-exact round trip).
    swf_header_lines: list[str] | None = None
    #: SWF job-line layout: ``widths``, ``decimals``, ``exact``, ``reasons``, ``n_rows``,
    #: ``other_lines`` (comment/blank lines among the jobs as ``[row before, text]``).
    swf_layout: dict[str, Any] | None = None
    #: SWF header UnixStartTime (epoch s) that field 2 counts from; None: relative times.
    swf_time_origin: int | None = None
    #: File line (1-based) of the first SWF job line (rows -> lines: ``swf.row_line_numbers``).
    swf_first_line: int | None = None
    #: SWF job lines with more than 18 fields: ``{count, lines, first_line}``.
    swf_extra_columns: dict[str, int] | None = None
    #: NQSII text layout for a lossless round trip (``form``, ``header``, ``fields``, ...).
    nqsii: dict[str, Any] | None = None
    #: How the table was anonymized (never the key, never the shift amount).
    anonymization: dict[str, Any] | None = None
    #: Parameters of a generated table (``seed``, ``n_jobs``, ``nodes``, ...).
    synth: dict[str, Any] | None = None
    #: On ``job_telemetry`` tables: interval, sources, metrics, sampling, description, ...
    telemetry: dict[str, Any] | None = None
    #: Inline site settings (``schemas/site.schema.json``) of a site that is no preset, e.g. the
    #: cluster of an Alibaba node list; ``swftools.site.resolve_site`` uses them.
    site_settings: dict[str, Any] | None = None
    #: Jobs the log holds that had not finished (pending, running, ...) and are not rows of the
    #: table (Slurm, PBS readers); ``convert`` says how many.
    unfinished_jobs: int | None = None
    #: Keys this version does not know, kept verbatim and written back unchanged.
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: Known keys that were read as JSON null (written back as null).
    nulls: frozenset[str] = frozenset()

    # -- reading -------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None,
                  checked: bool = False, fresh: bool = False) -> TableMetadata:
        """The typed form of a metadata dict, checked against the schema (``InputError`` if not;
        ``checked``: the caller knows it is well-formed; ``fresh``: ``data`` was just decoded
        and nothing else holds it, so its values are taken as they are, not deep-copied)."""
        if not checked:
            check(data, source=source)
        known = _known_fields()
        take = (lambda v: v) if fresh else copy.deepcopy
        values = {k: take(v) for k, v in data.items() if k in known}
        extra = {k: take(v) for k, v in data.items() if k not in known}
        nulls = frozenset(k for k, v in values.items() if v is None)
        return cls(**values, extra=extra, nulls=nulls)

    @classmethod
    def from_table(cls, table: pa.Table) -> TableMetadata:
        """The metadata a table carries (empty when none), checked against the schema, unless
        this process serialized those very bytes from a ``TableMetadata`` (``to_table``): a
        table a reader just built is not checked again (the check, with its jsonschema import,
        costs about 0.1 s of a short process; tests check every reader's metadata)."""
        raw = (table.schema.metadata or {}).get(METADATA_KEY)
        # decoded here, held by nothing else: no deep copy (Alibaba node lists make it large)
        return cls.from_dict(json.loads(raw) if raw else {}, checked=raw in _SERIALIZED,
                             fresh=True)

    # -- writing -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The serialized form: a fresh JSON-able dict (None fields left out, see module doc)."""
        return self._serial(copy.deepcopy)

    def _serial(self, take: Any) -> dict[str, Any]:
        """``to_dict`` with each value passed through ``take`` (a copy, or as it is)."""
        out: dict[str, Any] = {}
        for name in _known_fields():
            value = getattr(self, name)
            if value is not None or name in self.nulls or (
                    name == "swf_time_origin" and self.swf_first_line is not None):
                out[name] = take(value)
        for key, value in self.extra.items():
            out.setdefault(key, take(value))
        return out

    def to_json(self) -> bytes:
        """The exact bytes stored under ``swftools`` in the Arrow/Parquet schema metadata."""
        return encode(self._serial(lambda v: v))  # encoded at once: no copy needed

    def to_table(self, table: pa.Table) -> pa.Table:
        """``table`` carrying this metadata (replacing any earlier schema metadata)."""
        raw = self.to_json()
        _SERIALIZED[raw] = None
        while len(_SERIALIZED) > SERIALIZED_KEPT:
            del _SERIALIZED[next(iter(_SERIALIZED))]
        return table.replace_schema_metadata({METADATA_KEY: raw})

    # -- derived facts -------------------------------------------------------------------------

    @property
    def is_swf(self) -> bool:
        """Whether the table came from an SWF file (directly or through a package)."""
        return self.source_format == "swf" or self.swf_header is not None

    @property
    def unit(self) -> ProcessorUnit:
        """What the ``gpus`` column counts: ``gpu`` or ``processor``.

        The explicit ``processor_unit`` if stated; else GPUs for NQSII logs and synthetic
        tables; for an SWF trace, GPUs when its header says so (the ``Note: processors are GPUs``
        swftools writes for a GPU site), else processors; else GPUs (the job table's own unit).
        Derived, so not written: the serialized bytes stay what they were before the field.
        """
        if self.processor_unit is not None:
            return self.processor_unit
        if self.source_format in _GPU_SOURCES or self.nqsii is not None:
            return "gpu"
        if self.is_swf:
            return "gpu" if _header_says_gpus(self.swf_header or []) else "processor"
        return "gpu"

    @property
    def unit_word(self) -> str:
        """:attr:`unit` in plural words for messages: ``GPUs`` or ``processors``."""
        return UNIT_WORDS[self.unit]


def _header_says_gpus(header: list[Any]) -> bool:
    for entry in header:
        if isinstance(entry, (list, tuple)) and len(entry) >= 2 and \
                "processors are gpus" in str(entry[1]).lower():
            return True
    return False


# Metadata bytes this process serialized from the typed object (``to_table``), oldest first: the
# dataclass's own output, so reading them back skips the schema check.
_SERIALIZED: dict[bytes, None] = {}
SERIALIZED_KEPT = 64


@lru_cache(maxsize=1)
def _known_fields() -> tuple[str, ...]:
    return tuple(f.name for f in fields(TableMetadata) if f.name not in ("extra", "nulls"))


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    import jsonschema  # on first use: reading a table's metadata need not load it

    return jsonschema.Draft202012Validator(load_json(SCHEMA_FILE))


def check(data: Any, *, source: str | None = None) -> None:
    """Raise ``InputError`` unless ``data`` is valid table metadata (the schema file)."""
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first.absolute_path) or None
        name = source or (data.get("source_file") if isinstance(data, Mapping) else None)
        raise InputError(str(name or "table"), f"table metadata: {first.message}", field=where,
                         expected=f"metadata as {SCHEMA_FILE} describes")


def encode(metadata: Mapping[str, Any]) -> bytes:
    """Serialized metadata: sorted keys, non-ASCII kept, UTF-8 (the one encoding in use)."""
    return json.dumps(metadata, sort_keys=True, ensure_ascii=False).encode()


def decode(table: pa.Table) -> dict[str, Any]:
    """The raw metadata dict a table carries (empty when none), unchecked."""
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    return json.loads(raw) if raw else {}


__all__ = ["METADATA_KEY", "ProcessorUnit", "TableMetadata", "UNIT_WORDS", "check", "decode",
           "encode"]
