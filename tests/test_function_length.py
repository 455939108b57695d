"""No function over 60 lines in ``adapters/`` and ``mcp/`` (STYLE.md): split by step instead."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "src" / "weakincentives"
LIMIT = 60
MODULES = sorted(
    path for folder in ("adapters", "mcp") for path in (PACKAGE / folder).rglob("*.py")
)


def _long_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > LIMIT
    ]


def test_the_walk_sees_both_packages() -> None:
    """An empty walk cannot pass by accident."""
    names = {path.parent.name for path in MODULES}
    assert {"adapters", "mcp"} <= names
    assert len(MODULES) > 20


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_functions_are_at_most_sixty_lines(path: Path) -> None:
    """Each function, docstring included, fits in 60 lines."""
    assert _long_functions(path) == []
