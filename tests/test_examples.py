"""Every script in examples/ runs to completion (each ends with its own asserts)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))

EXPECTED = {
    "mcp_discovery.py": "called: call_tool -> Lisbon: sunny for 2 day(s)",
    "seed_000_open_sections.py": "model asked for: ['context']",
    "seed_001_hosted_tools.py": "- [Flu vaccines | CDC](https://www.cdc.gov/flu/vaccines/index.html)",
    "seed_002_tool_discovery.py": "called",
    "seed_003_tool_runtime.py": "lookup_entity ok: Fetched entity e-42.",
    "seed_004_tool_context.py": "storage: ('prefers tea',)",
    "temporal_worker.py": "Lisbon is 1,400 km (870 miles) away and booked a room in Lisbon.",
}


def test_there_is_an_example_per_seed() -> None:
    """Each of the five seeds has a runnable example (and the others are listed too)."""
    assert [path.name for path in EXAMPLES] == sorted(EXPECTED)


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_example_runs(
    path: Path,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The script runs as `python examples/<name>.py` would, and prints what it promises."""
    if path.name == "temporal_worker.py":  # against the suite's Temporal dev server
        monkeypatch.setenv("TEMPORAL_ADDRESS", request.getfixturevalue("temporal_address"))
    runpy.run_path(str(path), run_name="__main__")
    assert EXPECTED[path.name] in capsys.readouterr().out
