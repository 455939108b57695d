"""The code examples in specs/SESSIONS.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SPEC = Path(__file__).resolve().parents[2] / "specs" / "SESSIONS.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", SPEC.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_spec_has_examples() -> None:
    """The spec keeps its four runnable examples (bus, retention, reducers, rollback)."""
    assert len(EXAMPLES) == 4


@pytest.mark.parametrize("source", EXAMPLES, ids=["bus", "retention", "reducers", "rollback"])
def test_spec_example_runs(source: str) -> None:
    """Each example executes without error, so its assertions hold."""
    exec(
        compile(source, str(SPEC), "exec", dont_inherit=True), {"__name__": "sessions_spec_example"}
    )
