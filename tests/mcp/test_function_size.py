"""No function in ``mcp/`` is over 60 lines (STYLE.md): long ones are split by step."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

MCP = Path(__file__).parent.parent.parent / "src" / "weakincentives" / "mcp"
LIMIT = 60
MODULES = sorted(MCP.rglob("*.py"))


def _long_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > LIMIT
    ]


def test_the_walk_sees_the_package() -> None:
    """An empty walk cannot pass by accident."""
    assert {path.name for path in MODULES} >= {"_toolbox.py", "_executor.py", "_serve.py"}


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(MCP)) for p in MODULES])
def test_functions_are_at_most_sixty_lines(path: Path) -> None:
    """Each function, docstring included, fits in 60 lines."""
    assert _long_functions(path) == []
