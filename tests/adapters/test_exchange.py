"""Sending a request: a retryable failure is resent, unless its text already reached the caller."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from weakincentives.adapters import (
    Adapter,
    LoopSettings,
    ModelTurn,
    OfflineAdapter,
    ScriptedTurn,
    TurnRequest,
)
from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.errors import ProviderError
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.runtime import InProcessEventBus, TextDelta


class DropsFirstAttempt:
    """A provider whose first attempt streams ``partial`` and then loses the connection."""

    name = "flaky"
    model = None
    retry_limit = 3
    hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] = {}

    def __init__(self, partial: str) -> None:
        self.partial = partial
        self.attempts: list[int] = []

    def build_request(self, turn: TurnRequest) -> TurnRequest:
        return turn

    async def send(self, request: TurnRequest, attempt: Attempt, on_text: TextSink) -> ModelTurn:
        self.attempts.append(attempt.number)
        if attempt.number == 1:
            if self.partial:
                on_text(self.partial)
            raise ProviderError(
                "the connection broke while the reply was read",
                prompt_name=attempt.prompt_name,
                retryable=True,
                phase="response",
            )
        on_text("Whole answer.")
        return ModelTurn(text="Whole answer.")

    def read_turn(self, reply: ModelTurn, request: TurnRequest, turn: TurnRequest) -> ModelTurn:
        return reply

    def close(self) -> None:
        """Nothing to release."""


PROMPT = Prompt(ns="t", key="x", sections=[MarkdownSection(title="T", template="Go.")])


def run(partial: str) -> tuple[DropsFirstAttempt, list[float], Adapter[DropsFirstAttempt]]:
    """The flaky provider, the back-offs the loop waited (recorded, not slept), the adapter."""
    provider = DropsFirstAttempt(partial)
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    return provider, waits, Adapter(provider, settings=LoopSettings(sleep=record))


def test_a_failure_after_streamed_text_is_not_retried() -> None:
    """The caller already saw 'Partly '; a resend would show the model's words twice."""
    provider, waits, adapter = run("Partly ")
    bus = InProcessEventBus()
    deltas: list[TextDelta] = []
    bus.subscribe(TextDelta, deltas.append)
    with pytest.raises(ProviderError, match="the connection broke") as caught:
        adapter.evaluate(PROMPT, bus=bus)
    assert (caught.value.phase, caught.value.retryable) == ("response", True)
    assert provider.attempts == [1]
    assert waits == []
    assert [delta.text for delta in deltas] == ["Partly "]


def test_a_failure_before_any_text_is_retried() -> None:
    """Nothing reached the caller, so the loop resends after the back-off."""
    provider, waits, adapter = run("")
    bus = InProcessEventBus()
    deltas: list[TextDelta] = []
    bus.subscribe(TextDelta, deltas.append)
    response = adapter.evaluate(PROMPT, bus=bus)
    assert response.text == "Whole answer."
    assert provider.attempts == [1, 2]
    assert len(waits) == 1
    assert [delta.text for delta in deltas] == ["Whole answer."]


def test_the_offline_model_never_resends() -> None:
    """Its retry limit is 0: a retryable failure its responder raises ends the evaluation."""
    asked: list[int] = []

    def responder(request: TurnRequest) -> ScriptedTurn:
        asked.append(request.round)
        raise ProviderError("scripted outage", prompt_name=request.prompt_name, retryable=True)

    with pytest.raises(ProviderError, match="scripted outage"):
        OfflineAdapter(responder=responder).evaluate(PROMPT)
    assert asked == [1]
