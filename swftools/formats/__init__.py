"""Trace formats, one subpackage each (``swf``, ``nqsii``, ``datapackage``), and their registry.

The registry picks a reader/writer from a path or a ``--from/--to`` name, and ``convert`` goes
through the canonical job table. Each format subpackage exposes ``read(path, **opts) -> Table``
and ``write(table, path, *, force=False, **opts) -> list[str]`` (the loss report).

Each format module also declares ``INFO = FormatInfo(...)`` (``swftools/formats/formatinfo.py``:
name, read/write, extensions, the job-table columns it ``carries``, what it cannot carry), read by
``info``/``formats_info`` for ``convert --list-formats`` and by ``tests/test_formats_cross.py``,
which fails for a registered format without one. Loss lines name the job-table columns they
concern; jobs left out are reported as ``"N jobs skipped: why"`` (see ``formatinfo``).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swftools.errors import UsageError

if TYPE_CHECKING:  # pyarrow loads with the format modules, not with the registry (CLI start-up)
    import pyarrow as pa

FORMATS = ("swf", "nqsii", "package", "batsim", "tiresias", "slurm", "pbs", "alibaba")
_MODULES = {"swf": "swftools.formats.swf", "nqsii": "swftools.formats.nqsii",
            "package": "swftools.formats.datapackage",
            "batsim": "swftools.formats.batsim", "tiresias": "swftools.formats.dlsim",
            "slurm": "swftools.formats.slurm", "pbs": "swftools.formats.pbs",
            "alibaba": "swftools.formats.alibaba", "openb": "swftools.formats.alibaba"}
# First-line sniffing (cheap: 4 KiB, gzip by content): sacct --parsable2 and PBS accounting.
_SACCT_HEAD = re.compile(r"^\ufeff?(?:[A-Za-z]+\|)*JobID(?:\|[A-Za-z]+)*\r?$", re.IGNORECASE)
_PBS_RECORD = re.compile(r"^[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2};[A-Za-z];")


def sniff_format(path: str | Path) -> str | None:
    """``slurm`` or ``pbs`` when the first line of an existing file says so, else None."""
    p = Path(path)
    if not p.is_file():
        return None
    try:
        with open(p, "rb") as fh:
            head = fh.read(4096)
        if head.startswith(b"\x1f\x8b"):
            import gzip

            with gzip.open(p, "rb") as fh:
                head = fh.read(4096)
    except (OSError, EOFError):
        return None
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    if "|" in first and _SACCT_HEAD.match(first):
        return "slurm"
    if _PBS_RECORD.match(first):
        return "pbs"
    if "gpu_milli" in first and _is_openb_header(first):
        return "alibaba"
    return None


def _is_openb_header(first: str) -> bool:
    """Whether a first line is the Alibaba openb pod list header (columns in any order)."""
    from swftools.resources import load_json

    pods = load_json("formats/alibaba-openb.schema.json")["pods"]
    columns = {f["name"] for f in pods["fields"]}
    return set(first.strip().split(",")) in (columns, set(pods["short_form"]))


def detect_format(path: str | Path) -> str:
    """Guess a format from a path: ``*.swf[.gz]``, ``datapackage.json`` or a directory, else NQSII."""
    p = Path(path)
    name = p.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name == "datapackage.json" or p.is_dir() or (not p.suffix and not p.exists()):
        return "package"
    if name.endswith(".sacct"):
        return "slurm"
    sniffed = sniff_format(p)
    if sniffed:
        return sniffed
    if name.endswith(".swf"):
        return "swf"
    if name.endswith(".json"):
        return "batsim"
    if "pod_list" in name and name.endswith(".csv"):  # Alibaba openb: X_pod_list_Y.csv
        return "alibaba"
    if name.endswith((".csv", ".log", ".txt", ".nqsii")):
        return "nqsii"
    raise UsageError(f"{path}: cannot tell the format from the name; use --from/--to "
                     f"({', '.join(FORMATS)})")


def module_for(fmt: str) -> Any:
    """The module implementing format ``fmt`` (exposes ``read`` and ``write``)."""
    if fmt not in _MODULES:
        raise UsageError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    return importlib.import_module(_MODULES[fmt])


def read(path: str | Path, fmt: str | None = None, **options: Any) -> pa.Table:
    """Read any supported trace into the canonical job table."""
    return module_for(fmt or detect_format(path)).read(path, **options)


def write(table: pa.Table, path: str | Path, fmt: str | None = None, **options: Any) -> list[str]:
    """Write the job table in a format; returns the loss report (what the format cannot carry)."""
    return module_for(fmt or detect_format(path)).write(table, path, **options) or []


@dataclass
class ConversionResult:
    """What ``convert`` did: the table it went through and what the output could not carry.

    How many jobs were written comes from the loss report: a writer reports every job it leaves
    out on a line ``"N job(s) skipped: why"`` (``formatinfo.SKIPPED``, checked for every format by
    ``tests/test_formats_cross.py``), so ``write`` keeps returning a plain list of lines."""

    table: pa.Table
    source_format: str
    target_format: str
    losses: list[str] = field(default_factory=list)

    @property
    def jobs(self) -> int:
        """Jobs read (rows of the table)."""
        return self.table.num_rows

    @property
    def skipped(self) -> list[tuple[int, str]]:
        """(count, why) of each kind of job the writer left out."""
        from swftools.formats.formatinfo import SKIPPED

        return [(int(m.group(1)), line[m.end():]) for line in self.losses
                if (m := SKIPPED.match(line))]

    @property
    def written(self) -> int:
        """Jobs in the output: those read minus those the writer skipped."""
        return self.jobs - sum(n for n, _ in self.skipped)

    @property
    def unfinished(self) -> int:
        """Jobs of the input that had not finished (pending, running): not read, not written."""
        from swftools.metadata import TableMetadata

        return TableMetadata.from_table(self.table).unfinished_jobs or 0

    def notes(self) -> list[str]:
        """The loss report without its skipped-job lines (the headline has those)."""
        from swftools.formats.formatinfo import SKIPPED

        return [line for line in self.losses if not SKIPPED.match(line)]

    def headline(self, src: str | Path, dst: str | Path) -> str:
        """``wrote N of M jobs (K skipped: reasons): SRC (from) -> DST (to)``; the part in
        parentheses only when jobs were skipped, each reason after its count when there are
        several."""
        from swftools.errors import count

        line = f"wrote {self.written} of {count(self.jobs, 'job')}"
        if self.skipped:
            reasons = "; ".join(why if len(self.skipped) == 1 else f"{n} {why}"
                                for n, why in self.skipped)
            line += f" ({self.jobs - self.written} skipped: {reasons})"
        return f"{line}: {src} ({self.source_format}) -> {dst} ({self.target_format})"


def convert(src: str | Path, dst: str | Path, *, from_format: str | None = None,
            to_format: str | None = None, site: Any = None, force: bool = False,
            progress: bool = False, allow_empty: bool = False) -> ConversionResult:
    """Convert a trace between formats through the canonical job table; a trace without jobs
    is an error unless ``allow_empty``."""
    src_fmt = from_format or detect_format(src)
    dst_fmt = to_format or detect_format(dst)
    table = read(src, src_fmt, site=site, progress=progress, allow_empty=allow_empty)
    losses = write(table, dst, dst_fmt, site=site, force=force)
    return ConversionResult(table, src_fmt, dst_fmt, losses)


def info(fmt: str) -> Any:
    """The descriptor (``FormatInfo``) format ``fmt`` declares as ``INFO``; a format without
    one is an error (every format must say what it carries)."""
    module = module_for(fmt)
    descriptor = getattr(module, "INFO", None)
    if descriptor is None:
        raise UsageError(f"format {fmt!r} ({module.__name__}) declares no INFO descriptor")
    return descriptor


def formats_info() -> list[Any]:
    """Every registered format's descriptor, in registry order (``convert --list-formats``)."""
    return [info(fmt) for fmt in FORMATS]
