"""render_transcript: the demo's transcript from a response, a session or a stored log.

One printer serves all of them: the live transcript of an evaluation (the demo's, from
the bus), the one rebuilt from the session that recorded it and the one read back
from the store's session log are the same text.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.adapters.conftest import OpenAILoopback, Reply, api_error
from weakincentives._cli._demo import DemoOptions, build_adapter
from weakincentives._cli._demo_agent import IncidentParams, build_triage_prompt
from weakincentives.adapters import (
    LoopSettings,
    OfflineAdapter,
    PromptResponse,
    ScriptedCall,
    ScriptedTurn,
    Transcript,
    render_transcript,
)
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.runtime import InProcessEventBus, Session
from weakincentives.store import SQLiteStore, SyncStore

PARAMS = IncidentParams(service="checkout-api", symptom="p99 latency alerts")


def _demo(store: SyncStore | None = None) -> tuple[str, Session, PromptResponse[object]]:
    """The offline demo agent, with its live transcript and the session that recorded it."""
    adapter = build_adapter(DemoOptions())
    bus = InProcessEventBus()
    session = Session(bus=bus)
    out = io.StringIO()
    Transcript(out).attach(bus)
    response = adapter.evaluate(
        build_triage_prompt(), PARAMS, bus=bus, session=session, store=store
    )
    return out.getvalue(), session, response


def test_a_session_renders_as_the_live_transcript() -> None:
    """Re-renders, nested calls, failures: the session gives back what the bus printed."""
    live, session, _ = _demo()
    assert "opened sections" in live
    assert "[ERR]" in live
    assert render_transcript(session) == live


def test_a_stored_session_log_renders_as_the_live_transcript(tmp_path: Path) -> None:
    """A durable evaluation's log (store.read) renders the same lines.

    A durable evaluation writes each call's event when its step ends, so the calls of
    one turn come in the order they finished: the same lines, possibly reordered
    within a turn.
    """
    with SyncStore(SQLiteStore(tmp_path / "demo.db")) as store:
        live, session, _ = _demo(store)
        rows = store.read(str(session.session_id))
    text = render_transcript(rows)
    assert sorted(text.splitlines()) == sorted(live.splitlines())
    headings = [line for line in live.splitlines() if line.startswith(("==", "  opened"))]
    assert [line for line in text.splitlines() if line.startswith(("==", "  opened"))] == headings
    assert text.splitlines()[-1] == live.splitlines()[-1]


def test_a_response_renders_its_last_render_calls_and_totals() -> None:
    """A response keeps its last render and its own calls (not the ones run inside them)."""
    live, _, response = _demo()
    text = render_transcript(response, show_prompt=False)
    usage = response.usage
    assert text.splitlines()[-1] == (
        f"  answered after 7 round(s), 9 tool call(s); tokens in {usage.input_tokens}, "
        f"out {usage.output_tokens}"
    )
    calls = [line for line in text.splitlines() if line.startswith("  [")]
    assert calls == [line for line in live.splitlines() if line.startswith("  [")]
    assert len(calls) == 9
    assert "  | " not in text


def test_a_loaded_response_names_the_tools_it_called() -> None:
    """A response read back from JSON has no render: the tools line lists what ran."""
    prompt = Prompt(ns="t", key="k", sections=[MarkdownSection(title="T", template="Go.")])
    adapter = OfflineAdapter(
        [ScriptedTurn(calls=(ScriptedCall(name="ghost"),)), ScriptedTurn(text="Done.")]
    )
    loaded = PromptResponse.from_json(adapter.evaluate(prompt).to_json())
    text = render_transcript(loaded)
    assert "  tools: ghost" in text.splitlines()
    assert "  | ## 1 T" in text.splitlines()


def test_retries_and_failures_are_shown(openai_loopback: OpenAILoopback) -> None:
    """A 429 retried, then a 500 that ends the evaluation: both lines, with their causes."""
    throttled = api_error("slow down", kind="requests")
    openai_loopback.reply(
        Reply(status=429, body=throttled, headers={"retry-after-ms": "250"}),
        Reply(status=400, body=api_error("bad request", kind="invalid")),
    )

    async def no_wait(seconds: float) -> None:
        del seconds

    adapter = openai_loopback.adapter(max_retries=1, settings=LoopSettings(sleep=no_wait))
    session = Session()
    prompt = Prompt(ns="t", key="k", sections=[MarkdownSection(title="T", template="Go.")])
    with pytest.raises(PromptEvaluationError):
        adapter.evaluate(prompt, session=session)
    lines = render_transcript(session, show_prompt=False).splitlines()
    assert "  [retry] round 1, attempt 1 failed (HTTP 429); sending again in 0.25s" in lines
    failed = lines.index(
        "  FAILED in phase request after 1 round(s), 0 tool call(s): ProviderError"
    )
    assert lines[failed + 1].startswith("        -> the provider answered with HTTP 400: bad")
    assert not any(line.startswith("  answered") for line in lines)


def test_anything_else_is_refused() -> None:
    """A source that is none of the three kinds is a ConfigValidationError naming it."""
    with pytest.raises(ConfigValidationError, match="got int") as caught:
        render_transcript(3)  # type: ignore[arg-type]
    assert caught.value.field_name == "source"
