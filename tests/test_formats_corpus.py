"""The real-log corpus (tests/corpus, issue 24): every file converts, or is refused with one
located error line; none ends in a traceback; whatever is written validates with 0 errors.

The files are listed from ``tests/corpus/SOURCES.md`` (a file without its row there fails
``test_every_corpus_file_has_a_sources_row_and_an_expected_outcome``); the headerless Slurm
dumps' ``--columns`` come from its column lists. ``CASES`` records each file's options and
expected outcome: for a file that converts, the jobs written per output format (every writer of
the registry: SWF, data package and every export), or the text of the one error line a writer
refuses the table with (nothing written); for a refused file, the line the error names and its
text. The CLI runs in-process (``typer.testing.CliRunner``, as tests/test_cli_convert.py).
"""

from __future__ import annotations

import re
import warnings
from fnmatch import fnmatch
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swftools import formats
from swftools.cli import app
from swftools.validate import validate

CORPUS = Path(__file__).resolve().parent / "corpus"
SOURCES = CORPUS / "SOURCES.md"
runner = CliRunner()
# The Slurm dumps' zones are not known (anonymised or CI data): read as UTC, which they say.
pytestmark = pytest.mark.filterwarnings(
    "ignore::swftools.formats.localtime.AssumedTimeZoneWarning")

# Time zones of the PBS sites (their record stamps are local times; each source project says
# where its log is from): NCAR (Boulder), OSC (Columbus), UB CCR (Buffalo), WestGrid (the apel
# lines are mostly WestGrid's, Vancouver; its RAL lines are another site: --skip-bad-lines).
NCAR, OSC, CCR, WESTGRID = "America/Denver", "America/New_York", "America/New_York", \
    "America/Vancouver"

# Refusals a writer may answer a real table with (one error line, nothing written).
NQSII_QUEUE = "is not a queue of site aaic"
NQSII_UNKNOWN = "NQSII logs have no marker for unknown values"
NQSII_CPU = "an NQSII log counts GPUs"  # a CPU log (processors): refused before its queues
NEEDS_NODES = "a pod list needs its cluster's node list"
NEEDS_SUBMIT = "without a submit time: sacct output needs one for every job"



def converts(jobs: int, *, nqsii: str = NQSII_QUEUE, batsim: int | None = None,
             tiresias: int | None = None, slurm: int | str | None = None,
             alibaba: int | str = NEEDS_NODES) -> dict[str, int | str]:
    """Jobs written per format (``jobs`` where not given) or the writer's refusal text."""
    return {"swf": jobs, "nqsii": nqsii, "package": jobs,
            "batsim": jobs if batsim is None else batsim,
            "tiresias": jobs if tiresias is None else tiresias,
            "slurm": jobs if slurm is None else slurm, "pbs": jobs, "alibaba": alibaba}


# file -> (options, outcome). outcome: {format: jobs written | refusal text} for every writer,
# or ("refused", line or None, text) for the file itself.
CASES: dict[str, tuple[list[str], dict[str, int | str] | tuple[str, int | None, str]]] = {
    # Slurm (--columns from SOURCES.md for the headerless dumps)
    "slurm/xdmod-accounting-logs.log": ([], converts(4, nqsii=NQSII_UNKNOWN, batsim=0,
                                                     tiresias=1)),
    "slurm/xdmod-accounting-logs-with-job-arrays.log": ([], converts(6, nqsii=NQSII_CPU)),
    "slurm/xdmod-non-ended-job-state.log": (
        [], ("refused", None, "no finished jobs: every job is pending or running")),
    "slurm/xdmod-unknown-job-state.log": (
        [], ("refused", 1, "field 'state' (state): 'FOO' is not a valid state")),
    "slurm/xdmod-utf8-multibyte-chars.log": ([], converts(1, nqsii=NQSII_CPU)),
    "slurm/xdmod-robertson-filter-test.log": ([], converts(1, nqsii=NQSII_CPU)),
    "slurm/xdmod-phillips.log": ([], converts(556, batsim=1, tiresias=1)),
    "slurm/xdmod-pozidriv.log": ([], converts(546, nqsii=NQSII_CPU, batsim=491)),
    "slurm/slurm2sql-test-data1.csv": ([], converts(2, nqsii=NQSII_CPU)),
    "slurm/slurm2sql-test-data2.csv": ([], converts(2, nqsii=NQSII_CPU)),
    "slurm/slurm2sql-test-data3.csv": (
        ["--delimiter", ","], ("refused", 1, "header: missing sacct columns Submit, End, State")),
    "slurm/slurm-jobinfo-sacct.txt": (["--delimiter", "☃"], converts(20, nqsii=NQSII_CPU)),
    "slurm/hb-jobinfo-sacct.txt": (["--delimiter", "☃"],
                                   converts(90, nqsii=NQSII_UNKNOWN, batsim=7, tiresias=7)),
    # PBS / Torque: --tz the site's zone; mixed-site files --skip-bad-lines
    "pbs/xdmod-accounting-logs.log": (["--tz", CCR, "--skip-bad-lines"],
                                      converts(4, batsim=1, tiresias=1)),
    "pbs/pbs_accounting_parser-20180212": (["--tz", NCAR],
                                           converts(35, nqsii=NQSII_CPU, batsim=33,
                                                    tiresias=33)),
    "pbs/qhist-testdata": (["--tz", NCAR], converts(4, nqsii=NQSII_CPU)),
    "pbs/apel-test_pbs.log": (["--tz", WESTGRID, "--skip-bad-lines"],
                              converts(4, nqsii=NQSII_CPU)),
    "pbs/pbstools-pbsacct-test_tasks.log": (["--tz", OSC], converts(2, nqsii=NQSII_CPU)),
    # Alibaba pod lists (their node lists beside them)
    "alibaba/kubernetes-scheduler-simulator-openb_pod_list_default.csv": (
        [], converts(2698, nqsii=NQSII_UNKNOWN, batsim=2045, tiresias=2045, alibaba=2698)),
    "alibaba/kubernetes-scheduler-simulator-openb_pod_list_gpuspec33.csv": (
        [], converts(2647, nqsii=NQSII_UNKNOWN, batsim=2024, tiresias=2024, alibaba=2647)),
    "alibaba/kubernetes-scheduler-simulator-openb_pod_list_cpu050.csv": (
        [], converts(2697, nqsii=NQSII_UNKNOWN, batsim=2094, tiresias=2094, alibaba=2697)),
    "alibaba/kubernetes-scheduler-simulator-openb_pod_list_multigpu20.csv": (
        [], converts(5844, nqsii=NQSII_UNKNOWN, batsim=0, tiresias=0, slurm=NEEDS_SUBMIT,
                     alibaba=5844)),
}


def _sources() -> dict[str, str]:
    """Corpus file (path under tests/corpus) -> its SOURCES.md table row."""
    rows, folder = {}, None
    for line in SOURCES.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## .*\(`([a-z]+)/`\)", line)
        if heading:
            folder = heading.group(1)
        elif line.startswith("## "):
            folder = None
        row = re.match(r"^\| `([^`]+)` \|", line)
        if folder and row:
            rows[f"{folder}/{row.group(1)}"] = line
    return rows


def _columns() -> dict[str, str]:
    """File pattern -> the --columns list (SOURCES.md, "Column lists of the headerless Slurm
    dumps")."""
    part = SOURCES.read_text(encoding="utf-8").split("## Column lists")[1].split("\n## ")[0]
    blocks = re.findall(r"^- `([^`]+)` \((.*?)(?=^- |\Z)", part, re.MULTILINE | re.DOTALL)
    return {name: re.search(r"`([A-Za-z]+(?:,[A-Za-z]+)+)`", body).group(1)
            for name, body in blocks}


COMPANIONS = {name for name in _sources() if "_node_list_" in name}
"""The Alibaba node lists: read beside each pod list, not inputs of their own."""


def _options(name: str) -> list[str]:
    options, _ = CASES[name]
    options = list(options)
    pattern = next((p for p in _columns() if name.startswith("slurm/")
                    and fnmatch(Path(name).name, p)), None)
    if pattern is not None:
        options += ["--columns", _columns()[pattern]]
    return ["--from", name.split("/")[0], *options]


def test_every_corpus_file_has_a_sources_row_and_an_expected_outcome():
    on_disk = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*")
               if p.is_file() and p.name != "SOURCES.md"}
    listed = set(_sources())
    assert on_disk == listed, {"without a SOURCES.md row": sorted(on_disk - listed),
                               "listed but absent": sorted(listed - on_disk)}
    assert set(CASES) == listed - COMPANIONS
    assert len(listed) >= 15 and len({row.split("|")[2] for row in _sources().values()}) >= 5


def _out(tmp: Path, fmt: str) -> Path:
    ext = next((e for e in formats.info(fmt).extensions if e.startswith(".")), "")
    return tmp / (f"out_pod_list_{fmt}{ext}" if fmt == "alibaba" else f"out-{fmt}{ext}")


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("swftools: error:")]


def convert_everywhere(name: str, tmp: Path) -> dict[str, int | str]:
    """Convert a corpus file to every writer's format; per format the jobs written (the
    output validated with 0 errors, holding that many jobs) or the refusal's error line."""
    src = CORPUS / name
    options = _options(name)
    tz = options[options.index("--tz") + 1] if "--tz" in options else None
    outcome: dict[str, int | str] = {}
    for fmt in formats.FORMATS:
        if not formats.info(fmt).write:
            continue
        out = _out(tmp, fmt)
        result = runner.invoke(app, ["convert", str(src), *options, "--to", fmt, "--out", str(out)])
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            (fmt, result.output)
        assert "Traceback" not in result.output, (fmt, result.output)
        if result.exit_code:
            errors = _errors(result.output)
            assert len(errors) == 1 and result.exit_code in (1, 2), (fmt, result.output)
            assert not out.exists(), fmt
            outcome[fmt] = errors[0]
            continue
        wrote = re.search(r"^wrote (\d+) of (\d+) jobs?", result.output, re.MULTILINE)
        assert wrote, (fmt, result.output)
        written = int(wrote.group(1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an assumed zone: Slurm/PBS output is in --tz/UTC
            report = validate(out, fmt=fmt, allow_empty=written == 0,
                              tz=tz if fmt in ("slurm", "pbs") else None)
        errors = [f.render() for f in report.findings if f.severity == "error"]
        assert not errors, (fmt, errors[:5])
        assert report.rows == written, (fmt, report.rows, written)
        outcome[fmt] = written
    return outcome


@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_file(name, tmp_path):
    _, expected = CASES[name]
    src = CORPUS / name
    if isinstance(expected, tuple):  # refused: one located error line, exit 1, nothing written
        _, line, text = expected
        out = tmp_path / "out.swf"
        result = runner.invoke(app, ["convert", str(src), *_options(name), "--out", str(out)])
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "Traceback" not in result.output
        errors = _errors(result.output)
        where = f"{src}:{line}: " if line is not None else f"{src}: "
        assert len(errors) == 1 and errors[0].startswith(f"swftools: error: {where}"), \
            result.output
        assert text in errors[0], errors[0]
        assert not out.exists()
        return
    got = convert_everywhere(name, tmp_path)
    assert set(got) == set(expected)
    for fmt, want in expected.items():
        if isinstance(want, int):
            assert got[fmt] == want, (fmt, got[fmt])
        else:
            assert isinstance(got[fmt], str) and want in got[fmt], (fmt, got[fmt])
