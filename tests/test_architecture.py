"""The package layout that ARCHITECTURE.md describes: no import cycles, and who may import whom.

The import graph is read from the source (``ast``), module-level imports only: imports inside a
function run late, on first use, and cannot form a cycle at import time. ``from a import b``
counts as importing ``a.b`` when that is a module, else ``a``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "swftools"

# The core at the package root: shared by everything, importing no subpackage.
CORE = {"swftools.atomic", "swftools.errors", "swftools.extensions", "swftools.fileio",
        "swftools.fingerprint", "swftools.lazy",
        "swftools.limits", "swftools.metadata", "swftools.progress", "swftools.resources", "swftools.site",
        "swftools.table", "swftools.urls"}

# Subpackage -> the subpackages it may import at module level (the core is always allowed).
ALLOWED = {
    "formats": set(),
    "privacy": {"formats"},
    "synth": {"formats", "telemetry"},
    "validate": {"formats"},
    "replay": {"formats"},
    "whatif": {"formats", "replay"},
    "report": {"formats", "validate", "replay", "synth", "whatif"},
    "telemetry": {"formats"},
    "release": {"formats", "privacy", "validate", "replay", "report", "telemetry"},
    "cli": {"formats", "privacy", "synth", "validate", "replay", "whatif", "report", "telemetry",
            "release"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def _top_level_imports(path: Path, name: str, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in tree.body:  # module level only
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                full = f"{origin}.{alias.name}"
                found.add(full if full in known else origin)
    return {m for m in found if m in known}


def import_graph() -> dict[str, set[str]]:
    """Module -> the swftools modules it imports at module level."""
    modules = _modules()
    known = set(modules)
    return {name: _top_level_imports(path, name, known) for name, path in modules.items()}


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def _subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and module not in CORE and module != "swftools.__main__" else None


def test_no_import_cycles():
    cycle = _find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _find_cycle(graph) == ["a", "b", "c", "a"]


def test_core_imports_no_subpackage():
    graph = import_graph()
    for module in sorted(CORE & set(graph)):
        outside = {m for m in graph[module] if m not in CORE and m != "swftools"}
        assert not outside, f"{module} (core) imports {sorted(outside)}"


def test_subpackages_import_only_what_architecture_allows():
    problems = []
    for module, imports in sorted(import_graph().items()):
        own = _subpackage(module)
        if own is None:
            continue
        assert own in ALLOWED, f"{own}/ is not described in ARCHITECTURE.md (tests/test_architecture.py)"
        for target in sorted(imports):
            other = _subpackage(target)
            if other and other != own and other not in ALLOWED[own]:
                problems.append(f"{module} -> {target}")
    assert not problems, "imports ARCHITECTURE.md does not allow:\n" + "\n".join(problems)


def test_package_root_holds_only_the_core():
    root = {p.stem for p in PACKAGE_DIR.glob("*.py")}
    assert root <= {"__init__", "__main__"} | {m.rpartition(".")[2] for m in CORE}, sorted(root)


from swftools.formats import _MODULES as _FORMAT_MODULES  # noqa: E402  (every registered format)


@pytest.mark.parametrize("fmt", sorted({m.rpartition(".")[2] for m in _FORMAT_MODULES.values()}))
def test_each_format_exposes_read_and_write(fmt):
    import importlib

    module = importlib.import_module(f"swftools.formats.{fmt}")
    assert callable(module.read) and callable(module.write)


def test_architecture_md_names_every_subpackage():
    text = (PACKAGE_DIR.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    for sub in sorted(p.name for p in PACKAGE_DIR.iterdir()
                      if p.is_dir() and (p / "__init__.py").is_file()):
        assert f"`swftools/{sub}/`" in text, f"ARCHITECTURE.md does not describe swftools/{sub}/"
