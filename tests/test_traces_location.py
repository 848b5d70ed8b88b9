"""Every test finds the real traces through ``conftest`` (``SWFTOOLS_SHARED``, ``trace_path``),
never a path of its own (issue 30: one module ignored ``SWFTOOLS_SHARED``)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# a path built to ../shared: ``... / "shared"`` or a "../shared" literal
OWN_PATH = re.compile(r"""/\s*["']shared["']|["'](?:\.\./)+shared\b""")


def test_no_test_module_builds_its_own_path_to_the_traces():
    offenders = [f"{path.relative_to(TESTS)}:{n}: {line.strip()}"
                 for path in sorted(TESTS.rglob("*.py"))
                 if path.name not in ("conftest.py", Path(__file__).name)
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if OWN_PATH.search(line)]
    assert offenders == [], "use tests/conftest.py's trace_path / TRACES:\n" + "\n".join(offenders)
