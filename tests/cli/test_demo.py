"""The README's main job: `python -m weakincentives demo` runs offline and deterministically."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from weakincentives._cli import main
from weakincentives._cli._demo import DemoOptions, build_adapter
from weakincentives.errors import ConfigValidationError


def run(*argv: str) -> str:
    out = io.StringIO()
    assert main(["demo", *argv], out=out) == 0
    return out.getvalue()


def test_demo_recovers_opens_the_runbook_and_answers() -> None:
    """The transcript shows the failed call, recovery, opened section, re-render and report."""
    text = run()
    assert "[ERR] query_metrics" in text
    assert "expected a value >= 1, got integer 0 at" in text
    assert "  opened sections runbook; rendering again\n" in text
    assert "answered after 7 round(s), 9 tool call(s)" in text
    assert "### 3.1 Latency" in text
    assert '"severity": "sev2"' in text
    assert "catalogue of 291 tools" in text
    assert "[ok ] expand_tool" in text
    assert "[ok ] rollback_release" in text
    assert "[ok ] call_tool" in text
    assert "- Payments status: all systems operational" in text


def test_demo_is_deterministic() -> None:
    """Two runs print the same transcript."""
    assert run("--no-prompt") == run("--no-prompt")


def test_no_prompt_hides_the_rendered_markdown() -> None:
    """--no-prompt keeps the transcript to calls and results."""
    assert "  | ## 1 Task" not in run("--no-prompt")


def test_environment_selects_adapter_and_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """WINK_ADAPTER, WINK_MODEL and OPENAI_BASE_URL configure the run; flags win."""
    monkeypatch.setenv("WINK_ADAPTER", "openai")
    monkeypatch.setenv("WINK_MODEL", "gpt-x")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    options = DemoOptions.from_environment()
    assert (options.adapter, options.model, options.base_url) == (
        "openai",
        "gpt-x",
        "http://127.0.0.1:9/v1",
    )
    assert DemoOptions.from_environment(adapter="offline").adapter == "offline"


def test_unknown_adapter_is_refused() -> None:
    """Only offline and openai exist."""
    with pytest.raises(ConfigValidationError, match="unknown adapter 'other'"):
        build_adapter(DemoOptions(adapter="other"))


def test_openai_without_a_key_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Asking for OpenAI without credentials says what to set, with exit code 1."""
    assert main(["demo", "--adapter", "openai"], out=io.StringIO()) == 1
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_module_entry_point_runs() -> None:
    """`python -m weakincentives demo` works as a process."""
    completed = subprocess.run(
        [sys.executable, "-m", "weakincentives", "demo", "--no-prompt"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Structured answer (TriageReport)" in completed.stdout
