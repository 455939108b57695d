"""Every Python code block in the README, llms.md, docs/ and specs/ runs as written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _documents() -> list[Path]:
    candidates = [
        ROOT / "README.md",
        ROOT / "llms.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "specs").glob("*.md")),
    ]
    return [path for path in candidates if path.exists()]


def _blocks() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for path in _documents():
        for index, match in enumerate(_BLOCK.finditer(path.read_text())):
            found.append((f"{path.relative_to(ROOT)}#{index + 1}", match.group(1)))
    return found


@pytest.mark.parametrize(("name", "source"), _blocks(), ids=[name for name, _ in _blocks()])
def test_code_block_runs(name: str, source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block executes without raising; its own asserts check the claims it makes."""
    module = types.ModuleType(f"docs_{re.sub(r'[^a-z0-9]', '_', name.lower())}")
    # Registered so dataclasses and type-hint resolution can find the block's module.
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(source, name, "exec"), module.__dict__)


def test_the_readme_opens_with_the_two_commands() -> None:
    """A new user sees how to run the demo and the full check before anything else."""
    first_block = (ROOT / "README.md").read_text().split("```")[1]
    lines = first_block.strip().splitlines()
    # The measured durations change with the suite; the commands and what they do do not.
    patterns = [
        r"sh",
        r"make demo    # run the main job: the demo agent on the offline adapter \(about \d+ s\)",
        r"make check   # run the full check: ruff, mypy --strict, "
        r"pytest with branch coverage >= 95 % \(about \d+ min\)",
    ]
    assert len(lines) == len(patterns), lines
    for line, pattern in zip(lines, patterns, strict=True):
        assert re.fullmatch(pattern, line), (line, pattern)


def test_ci_runs_both_readme_commands() -> None:
    """`.ci/run` runs every command of the README's first block, in order; CI calls it."""
    first_block = (ROOT / "README.md").read_text().split("```")[1]
    readme = [line.split("#")[0].strip() for line in first_block.strip().splitlines()[1:]]
    script = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip().startswith("make ")
    ]
    assert script == readme == ["make demo", "make check"]
    assert "run: .ci/run" in (ROOT / ".github" / "workflows" / "ci.yml").read_text()


def test_the_tracing_set_up_runs_in_a_process_of_its_own(tmp_path: Path) -> None:
    """docs/tracing.md's `py` block sets the global tracer provider, so it runs in a subprocess.

    Its own asserts check the spans it wrote; the file is read here once more.
    """
    blocks = re.findall(
        r"^```py\n(.*?)^```", (ROOT / "docs" / "tracing.md").read_text(), re.S | re.M
    )
    assert len(blocks) == 1
    script = tmp_path / "setup.py"
    script.write_text(blocks[0])
    completed = subprocess.run(
        [sys.executable, "-W", "error", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    spans = [json.loads(line) for line in (tmp_path / "spans.jsonl").read_text().splitlines()]
    (call,) = [span for span in spans if span["name"] == "execute_tool forecast"]
    assert [event["name"] for event in call["events"]] == ["cache miss"]
    assert spans[-1]["resource"]["attributes"]["service.name"] == "my-agent"
