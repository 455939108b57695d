"""The library's logging stays quiet unless the application configures logging."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import weakincentives

# A soft tool failure, end to end through the offline adapter, in a fresh interpreter
# whose logging nobody configured (the state of a user's script).
SOFT_FAILURE = textwrap.dedent(
    """
    import logging
    import sys
    from dataclasses import dataclass

    from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
    from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult

    if sys.argv[1:] == ["--debug"]:
        logging.basicConfig(level=logging.DEBUG, format="%(name)s %(levelname)s %(message)s")


    @dataclass(frozen=True)
    class Restart:
        service: str


    def restart_service(params: Restart, *, context: ToolContext) -> ToolResult[None]:
        \"\"\"Restart a service.\"\"\"
        raise RuntimeError("db down")


    prompt = Prompt(
        ns="logging",
        key="soft-failure",
        sections=[
            MarkdownSection(title="Ops", template="Restart.", tools=[Tool.wrap(restart_service)])
        ],
    )
    adapter = OfflineAdapter(
        [
            ScriptedTurn(
                calls=(ScriptedCall(name="restart_service", arguments={"service": "api"}),)
            ),
            ScriptedTurn(text="It failed."),
        ]
    )
    response = adapter.evaluate(prompt)
    print(response.tool_results[0].message)
    """
)


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SOFT_FAILURE, *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_package_logger_has_a_null_handler() -> None:
    """Importing the package attaches a NullHandler to the `weakincentives` logger."""
    handlers = logging.getLogger(weakincentives.__name__).handlers
    assert [type(handler) for handler in handlers] == [logging.NullHandler]


def test_soft_tool_failure_prints_nothing_on_stderr_by_default() -> None:
    """A handler that raises is reported to the model, not to the user's terminal."""
    completed = _run()
    assert completed.returncode == 0
    assert completed.stdout == "Tool 'restart_service' failed: RuntimeError: db down\n"
    assert completed.stderr == ""


def test_configured_logging_shows_the_failure_with_its_traceback() -> None:
    """An application that turns on DEBUG logging sees the failure and its traceback."""
    completed = _run("--debug")
    assert completed.returncode == 0
    assert "weakincentives.runtime " in completed.stderr
    assert "'restart_service'" in completed.stderr
    assert "Traceback (most recent call last)" in completed.stderr
    assert "RuntimeError: db down" in completed.stderr
