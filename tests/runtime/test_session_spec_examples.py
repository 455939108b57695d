"""The code examples in specs/SESSIONS.md run as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

SPEC = Path(__file__).resolve().parents[2] / "specs" / "SESSIONS.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", SPEC.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_spec_has_examples() -> None:
    """The spec keeps its runnable examples (bus, retention, reducers, rollback, saving)."""
    assert len(EXAMPLES) == 5


@pytest.mark.parametrize(
    "source", EXAMPLES, ids=["bus", "retention", "reducers", "rollback", "saving"]
)
def test_spec_example_runs(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each example executes without error, so its assertions hold."""
    # A real module, so the classes an example stores are found again by name.
    module = types.ModuleType("sessions_spec_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(source, str(SPEC), "exec", dont_inherit=True), module.__dict__)
