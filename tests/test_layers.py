"""Layers import downwards only: serde <- prompt <- runtime <- adapters (DESIGN.md).

Imports inside ``if TYPE_CHECKING:`` blocks count too: a type-only import upwards is
still a dependency upwards (``ToolContext`` names its collaborators through protocols
declared in ``prompt`` instead).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "src" / "weakincentives"

# Private modules at the package root are shared utilities below every layer.
_BASE = {
    "errors",
    "_json_value",
    "_bounded",
    "_closing",
    "_exports",
    "_direct",
    "_codegen",
    "_tracing",
}

ALLOWED: dict[str, set[str]] = {
    "_json_value": set(),
    "_tracing": set(),
    "_codegen": set(),
    "_direct": {"_codegen"},
    "_bounded": set(),
    "_portal": set(),
    "_closing": set(),
    "_exports": set(),
    "errors": {"_json_value"},
    "serde": _BASE,
    "prompt": _BASE | {"serde"},
    "runtime": _BASE | {"serde", "prompt"},
    "tools": _BASE | {"serde", "prompt"},
    "discovery": _BASE | {"serde", "prompt", "runtime", "_portal"},
    "adapters": _BASE | {"serde", "prompt", "runtime", "tools", "store", "_portal"},
    "mcp": _BASE | {"serde", "prompt", "runtime", "discovery", "_portal"},
    "store": _BASE | {"serde", "_portal"},
    # Above adapters: the loop as a Temporal workflow, its steps as activities.
    "temporal": _BASE | {"serde", "prompt", "runtime", "adapters", "store", "_portal"},
}


def _layer(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py")


def _imports(tree: ast.Module) -> set[str]:
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets.add(node.module)
    return {target for target in targets if target.startswith("weakincentives.")}


MODULES = sorted(path for path in PACKAGE.rglob("*.py") if _layer(path) in ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_module_imports_only_lower_layers(path: Path) -> None:
    """A module may import its own layer and the layers below it, nothing above."""
    layer = _layer(path)
    imported = {target.split(".")[1] for target in _imports(ast.parse(path.read_text()))}
    upward = sorted(imported - ALLOWED[layer] - {layer})
    assert upward == [], f"{path.relative_to(PACKAGE)} ({layer}) imports {upward}"


def _private_reach(path: Path) -> list[str]:
    """Imports of another package's private modules (``weakincentives.pkg._module``)."""
    own = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
    reached = []
    for target in _imports(ast.parse(path.read_text())):
        parts = target.split(".")
        if len(parts) >= 3 and parts[1] != own and any(p.startswith("_") for p in parts[2:]):
            reached.append(target)
    return sorted(reached)


ALL_MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize(
    "path", ALL_MODULES, ids=[str(p.relative_to(PACKAGE)) for p in ALL_MODULES]
)
def test_no_module_reaches_into_another_packages_private_modules(path: Path) -> None:
    """Packages talk through each other's public faces (``__init__``), never ``_`` modules."""
    assert _private_reach(path) == [], f"{path.relative_to(PACKAGE)} imports private modules"
