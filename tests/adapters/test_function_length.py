"""No function over 60 lines in adapters/ and mcp/: the loop and its seams stay readable."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "weakincentives"
LIMIT = 60


def _long_functions(package: str) -> list[str]:
    found: list[str] = []
    for path in sorted((SRC / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                if length > LIMIT:
                    found.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name} ({length})")
    return found


@pytest.mark.parametrize("package", ["adapters", "mcp"])
def test_no_function_is_longer_than_sixty_lines(package: str) -> None:
    assert _long_functions(package) == []
