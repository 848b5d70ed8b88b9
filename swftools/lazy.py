"""Names a package loads from its modules on first access (PEP 562), so that importing the
package stays cheap (issue 15: lean start-up)."""

from __future__ import annotations

from typing import Any, Callable


def attributes(package: str, modules: dict[str, str],
               namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name of ``modules`` is imported from
    ``package.<its module>`` on first access and kept in ``namespace`` (the package's
    ``globals()``), so it is looked up once; any other name is an AttributeError."""

    def __getattr__(name: str) -> Any:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(f"{package}.{modules[name]}"), name)
        namespace[name] = value
        return value

    return __getattr__
