"""The demo transcript shows each tool execution once, nested where it ran, and counts right."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime

from weakincentives._cli import main
from weakincentives._cli._demo import DemoOptions, build_adapter
from weakincentives._cli._demo_agent import IncidentParams, build_triage_prompt
from weakincentives.adapters import Transcript
from weakincentives.prompt import ToolResult
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    Session,
    TokenUsage,
    ToolInvoked,
)

_CALL = re.compile(r"^(?P<indent> +)\[(ok |ERR)\] (?P<name>[a-z_]+)\(")
_FOOTER = re.compile(
    r"^  (answered|halted to open sections) after \d+ round\(s\), (?P<calls>\d+) tool call\(s\)"
    r"( \(\+(?P<inner>\d+) run inside them\))?;"
)


def _evaluations(text: str) -> list[tuple[list[tuple[int, str]], re.Match[str]]]:
    """Per evaluation: the (depth, name) of every call line shown, and the footer."""
    found: list[tuple[list[tuple[int, str]], re.Match[str]]] = []
    calls: list[tuple[int, str]] = []
    for line in text.splitlines():
        call = _CALL.match(line)
        if call is not None:
            calls.append(((len(call["indent"]) - 2) // 6, call["name"]))
            continue
        footer = _FOOTER.match(line)
        if footer is not None:
            found.append((calls, footer))
            calls = []
    return found


def demo_transcript() -> str:
    out = io.StringIO()
    assert main(["demo", "--no-prompt"], out=out) == 0
    return out.getvalue()


def test_discovery_call_shows_the_tool_it_ran_nested_once() -> None:
    """call_tool(rollback_release) shows rollback_release under it, not as its own call."""
    ((calls, _),) = _evaluations(demo_transcript())
    assert calls[5:] == [
        (0, "query_metrics"),
        (0, "search_tool_by_category"),
        (0, "expand_tool"),
        (0, "call_tool"),
        (1, "rollback_release"),
    ]


def test_footer_counts_agree_with_the_lines_shown() -> None:
    """Each footer counts the model's calls and the runs nested in them, as printed above it."""
    evaluations = _evaluations(demo_transcript())
    assert len(evaluations) == 1  # one evaluation; opening the runbook re-renders inside it
    for calls, footer in evaluations:
        top = sum(1 for depth, _ in calls if depth == 0)
        inner = sum(1 for depth, _ in calls if depth > 0)
        assert int(footer["calls"]) == top
        assert int(footer["inner"] or 0) == inner
    assert [(int(f["calls"]), int(f["inner"] or 0)) for _, f in evaluations] == [(9, 1)]


def test_top_level_count_matches_the_evaluation_event() -> None:
    """The calls the transcript shows at the top level are the calls PromptExecuted counts."""
    bus = InProcessEventBus()
    executed: list[PromptExecuted] = []
    bus.subscribe(PromptExecuted, executed.append)
    out = io.StringIO()
    Transcript(out, show_prompt=False).attach(bus)
    build_adapter(DemoOptions()).evaluate(
        build_triage_prompt(),
        IncidentParams(service="checkout-api", symptom="p99 latency alerts"),
        bus=bus,
        session=Session(bus=bus),
    )
    shown = [int(footer["calls"]) for _, footer in _evaluations(out.getvalue())]
    assert shown == [event.tool_call_count for event in executed]


_AT = datetime(2026, 1, 1, tzinfo=UTC)


def invoked(call_id: str, name: str) -> ToolInvoked:
    return ToolInvoked(
        evaluation_id="e",
        prompt_name="p",
        adapter="offline",
        session_id=None,
        name=name,
        call_id=call_id,
        arguments={},
        params=None,
        result=ToolResult(message=f"{name} done", value=None),
        rendered_output="",
        started_at=_AT,
        finished_at=_AT,
    )


def executed(tool_call_count: int) -> PromptExecuted:
    return PromptExecuted(
        evaluation_id="e",
        prompt_name="p",
        adapter="offline",
        session_id=None,
        text="",
        output=None,
        tool_call_count=tool_call_count,
        rounds=1,
        halted=False,
        usage=TokenUsage(),
        started_at=_AT,
        finished_at=_AT,
    )


def test_runs_nest_at_any_depth() -> None:
    """A call run inside a nested call is shown one level deeper still."""
    out = io.StringIO()
    transcript = Transcript(out)
    transcript.on_tool(invoked("c1/b/a", "a"))
    transcript.on_tool(invoked("c1/b", "b"))
    transcript.on_tool(invoked("c1", "outer"))
    transcript.on_executed(executed(1))
    assert out.getvalue() == (
        "  [ok ] outer({})\n"
        "        -> outer done\n"
        "        [ok ] b({})\n"
        "              -> b done\n"
        "              [ok ] a({})\n"
        "                    -> a done\n"
        "  answered after 1 round(s), 1 tool call(s) (+2 run inside them); tokens in 0, out 0\n"
    )


def test_inner_calls_without_their_outer_call_are_still_shown() -> None:
    """An id that merely contains the separator is printed at the end, not dropped."""
    out = io.StringIO()
    transcript = Transcript(out)
    transcript.on_tool(invoked("provider/abc", "lookup"))
    transcript.on_executed(executed(1))
    assert out.getvalue() == (
        "  [ok ] lookup({})\n"
        "        -> lookup done\n"
        "  answered after 1 round(s), 1 tool call(s); tokens in 0, out 0\n"
    )
