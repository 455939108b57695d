"""The README's main job: `python -m weakincentives demo` runs offline and deterministically."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from weakincentives._cli import main
from weakincentives._cli._demo import DemoOptions, build_adapter, native_summary
from weakincentives.errors import ConfigValidationError
from weakincentives.serde import JSONValue


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


class _LeftReader(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_leaves_stops_the_command_quietly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The output's reader went away: no error message, status 141 (as after SIGPIPE)."""
    assert main(["demo", "--no-prompt"], out=_LeftReader()) == 141
    assert capsys.readouterr().err == ""


def test_a_closed_stdout_pipe_gives_no_traceback() -> None:
    """`wink demo | head -1`: the pipe closes before the demo has written it all."""
    process = subprocess.Popen(
        [sys.executable, "-m", "weakincentives", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.close()  # the reader leaves before the first line
    error = process.stderr.read()
    process.stderr.close()
    assert process.wait(timeout=60) == 141
    assert error == b""


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


def test_demo_runs_with_native_tool_search() -> None:
    """--tool-search client: the search loads the rollback tool, called without expansion."""
    text = run("--tool-search", "client", "--no-prompt")
    assert "[ok ] expand_tool" not in text
    assert '[ok ] call_tool({"tool_id": "rollback_release"' in text
    assert "        [ok ] rollback_release(" in text
    assert "== Native tool search" in text
    assert "shown 291 catalogue tools deferred in 10 groups" in text
    assert "its searches loaded: rollback_release, " in text
    assert '"severity": "sev2"' in text


@pytest.mark.parametrize(
    ("adapter", "mode", "expected"),
    [("openai", "server", "server"), ("anthropic", "bm25", "bm25"), ("openai", None, "off")],
)
def test_tool_search_reaches_the_provider(
    adapter: str, mode: str | None, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flag sets the provider's mode; without it the demo keeps the discovery tools."""
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    options = DemoOptions(
        adapter=adapter, model="m", base_url="http://127.0.0.1:9", tool_search=mode
    )
    built = build_adapter(options)
    assert built.provider.tool_search == expected
    built.close()


def test_native_summary_of_a_provider_request_counts_deferred_tools() -> None:
    """A real provider's body shows how many catalogue tools were declared deferred."""
    body: dict[str, JSONValue] = {"tools": [{"name": "a", "defer_loading": True}, {"name": "b"}]}
    assert native_summary(body) == "the request declared 1 catalogue tools deferred"
    assert native_summary(None) == "no request was recorded"
