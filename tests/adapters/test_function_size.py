"""No function in ``adapters/`` is over 60 lines (STYLE.md): long ones are split by phase."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ADAPTERS = Path(__file__).parent.parent.parent / "src" / "weakincentives" / "adapters"
LIMIT = 60
MODULES = sorted(ADAPTERS.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ADAPTERS)) for p in MODULES])
def test_every_function_fits_in_sixty_lines(path: Path) -> None:
    """Each function and method, decorators excluded, spans at most 60 lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    long = [
        (node.name, node.lineno, (node.end_lineno or node.lineno) - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (node.end_lineno or node.lineno) - node.lineno + 1 > LIMIT
    ]
    assert long == []
