"""Both OpenAI clients, both entry points, streaming and deadlines, over real HTTP.

The loopback server speaks the Responses API, including its server-sent event stream
(``response.created`` ... ``response.output_text.delta`` ... ``response.completed``).
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest

from tests.adapters.conftest import (
    HANG,
    Body,
    OpenAILoopback,
    Reply,
    load_output,
    load_response,
    ok,
    response_body,
)
from tests.adapters.openai.test_responses import TRIP, WEATHER, trip_prompt
from weakincentives.adapters import Adapter, LoopSettings, PromptResponse
from weakincentives.adapters.openai import OpenAIAdapter, OpenAIResponses
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptFailed,
    Session,
    TextDelta,
)
from weakincentives.serde import JSONValue

openai = pytest.importorskip("openai")

type ClientKind = Literal["sync", "async"]
type Entry = Literal["evaluate", "evaluate_async"]

ANSWER = "Lisbon will be sunny at 24 °C, and 200 EUR is about 216 USD."


def client_for(loopback: OpenAILoopback, kind: ClientKind, *, max_retries: int = 0) -> Any:
    factory = openai.OpenAI if kind == "sync" else openai.AsyncOpenAI
    return factory(base_url=loopback.base_url, api_key="test-key", max_retries=max_retries)


def evaluate(
    adapter: Adapter[OpenAIResponses], entry: Entry, **kwargs: Any
) -> PromptResponse[None]:
    if entry == "evaluate":
        return adapter.evaluate(trip_prompt((WEATHER,)), TRIP, **kwargs)
    return asyncio.run(adapter.evaluate_async(trip_prompt((WEATHER,)), TRIP, **kwargs))


def stream_of(body: Body, chunks: list[str]) -> bytes:
    """A Responses API event stream that writes ``chunks`` then completes with ``body``."""
    item = {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant"}
    events: list[dict[str, JSONValue]] = [
        {"type": "response.created", "response": {**body, "status": "in_progress", "output": []}},
        {"type": "response.in_progress", "response": {**body, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {
            "type": "response.content_part.added",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
    ]
    events.extend(
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": chunk,
            "logprobs": [],
        }
        for chunk in chunks
    )
    events.append(
        {
            "type": "response.output_text.done",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "text": "".join(chunks),
            "logprobs": [],
        }
    )
    events.append({"type": "response.completed", "response": body})
    return sse(events)


def sse(events: list[dict[str, JSONValue]]) -> bytes:
    lines = []
    for number, event in enumerate(events):
        payload = json.dumps({**event, "sequence_number": number})
        lines.append(f"event: {event['type']}\ndata: {payload}\n\n")
    return "".join(lines).encode()


def streamed(data: bytes) -> Reply:
    return Reply(raw=data, headers={"content-type": "text/event-stream"})


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("entry", ["evaluate", "evaluate_async"])
class TestBothClientsBothEntries:
    def test_a_tool_round_trip_works(
        self, openai_loopback: OpenAILoopback, kind: ClientKind, entry: Entry
    ) -> None:
        """OpenAI and AsyncOpenAI clients both serve evaluate and evaluate_async."""
        openai_loopback.reply(ok(load_response("weather_call")), ok(load_response("final_answer")))
        adapter = OpenAIAdapter(model="gpt-test", client=client_for(openai_loopback, kind))
        response = evaluate(adapter, entry)
        assert response.text == ANSWER
        assert [e.call.name for e in response.tool_executions] == ["get_weather"]
        second = openai_loopback.bodies[1]["input"]
        assert second[-1]["type"] == "function_call_output"

    def test_streaming_publishes_the_deltas(
        self, openai_loopback: OpenAILoopback, kind: ClientKind, entry: Entry
    ) -> None:
        """With stream=True the text arrives as TextDelta events that join to the answer."""
        body = load_response("final_answer")
        chunks = ["Lisbon will be sunny", " at 24 °C, and 200 EUR", " is about 216 USD."]
        openai_loopback.reply(streamed(stream_of(body, chunks)))
        adapter = OpenAIAdapter(
            model="gpt-test", client=client_for(openai_loopback, kind), stream=True
        )
        bus = InProcessEventBus()
        deltas: list[str] = []
        bus.subscribe(TextDelta, lambda event: deltas.append(event.text))
        response = evaluate(adapter, entry, bus=bus)
        assert deltas == chunks
        assert response.text == ANSWER
        assert openai_loopback.bodies[0]["stream"] is True
        assert response.usage.input_tokens == 520


class TestAsyncClientAcrossCalls:
    def test_one_async_client_serves_several_sync_evaluations(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Sync evaluate keeps one background loop, so an async client's pool stays valid."""
        openai_loopback.reply(ok(load_response("final_answer")), ok(load_response("final_answer")))
        adapter = OpenAIAdapter(model="gpt-test", client=client_for(openai_loopback, "async"))
        first = adapter.evaluate(trip_prompt((WEATHER,)), TRIP)
        second = adapter.evaluate(trip_prompt((WEATHER,)), TRIP)
        assert first.text == second.text == ANSWER


class TestBrokenStreams:
    @pytest.mark.parametrize(
        ("data", "reason"),
        [
            (
                sse(
                    [
                        {"type": "response.created", "response": {"id": "r", "output": []}},
                        {"type": "response.output_text.delta", "delta": "Lisbon will"},
                    ]
                ),
                "the stream ended before the response completed",
            ),
            (
                sse(
                    [
                        {"type": "response.output_text.delta", "delta": "Lisbon"},
                        {"type": "error", "code": "server_error", "message": "overloaded"},
                    ]
                ),
                "the provider reported an error mid-stream: overloaded (server_error)",
            ),
            (
                b"event: response.output_text.delta\ndata: {not json\n\n",
                "a stream event is not a JSON object",
            ),
        ],
        ids=["cut-off", "error-event", "garbage"],
    )
    @pytest.mark.parametrize("kind", ["sync", "async"])
    def test_a_stream_that_breaks_is_a_response_error_and_not_a_success(
        self, openai_loopback: OpenAILoopback, kind: ClientKind, data: bytes, reason: str
    ) -> None:
        """Phase response, PromptFailed recorded, nothing recorded as executed."""
        openai_loopback.reply(streamed(data))
        adapter = OpenAIAdapter(
            model="gpt-test", client=client_for(openai_loopback, kind), stream=True
        )
        bus = InProcessEventBus()
        session = Session(bus=bus)
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(trip_prompt((WEATHER,)), TRIP, bus=bus, session=session)
        assert caught.value.phase == "response"
        assert caught.value.reason.startswith(reason)
        assert session.select(PromptExecuted) == ()
        (failed,) = session.select(PromptFailed)
        assert failed.phase == "response"


class TestDeadlines:
    @pytest.mark.parametrize("kind", ["sync", "async"])
    def test_a_server_that_never_answers_fails_within_the_deadline(
        self, openai_loopback: OpenAILoopback, kind: ClientKind
    ) -> None:
        """Even with SDK retries allowed, the error comes at the deadline, not after them."""
        openai_loopback.reply(HANG, HANG, HANG, HANG)
        adapter = OpenAIAdapter(
            model="gpt-test", client=client_for(openai_loopback, kind, max_retries=3)
        )
        started = time.monotonic()
        deadline = datetime.now(UTC) + timedelta(seconds=0.6)
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(trip_prompt((WEATHER,)), TRIP, deadline=deadline)
        elapsed = time.monotonic() - started
        assert caught.value.phase == "request"
        assert "deadline" in caught.value.reason
        assert elapsed < 0.6 + 1.5  # the deadline plus a margin for a loaded machine
        assert len(openai_loopback.requests) == 1

    def test_retries_stop_when_the_back_off_would_pass_the_deadline(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A Retry-After longer than the time left ends the evaluation instead of waiting."""
        openai_loopback.reply(Reply(status=503, body={}, headers={"retry-after": "30"}))
        sleeps: list[float] = []

        async def record(seconds: float) -> None:
            sleeps.append(seconds)

        provider = OpenAIResponses(
            model="gpt-test", client=client_for(openai_loopback, "sync", max_retries=5)
        )
        adapter = Adapter(provider, settings=LoopSettings(sleep=record))
        deadline = datetime.now(UTC) + timedelta(seconds=5)
        with pytest.raises(PromptEvaluationError, match="deadline") as caught:
            adapter.evaluate(trip_prompt((WEATHER,)), TRIP, deadline=deadline)
        assert sleeps == []
        assert isinstance(caught.value.__cause__, PromptEvaluationError)


class TestUntrustedReplies:
    @pytest.mark.parametrize(
        ("raw", "problem"),
        [
            (b"[" * 10_000 + b"]" * 10_000, "nested more than 128 levels deep"),
            (b'{"id": ' + b"7" * 5_000 + b"}", "an integer of 5,000 digits"),
            (b'{"output": [], "usage": {"input_tokens": NaN}}', "NaN is not a JSON number"),
        ],
        ids=["deep", "huge-int", "nan"],
    )
    def test_a_reply_body_that_would_crash_a_decoder_is_a_response_error(
        self, openai_loopback: OpenAILoopback, raw: bytes, problem: str
    ) -> None:
        """A hostile body becomes phase response with the reason, never a raw exception."""
        openai_loopback.reply(Reply(raw=raw, headers={"content-type": "application/json"}))
        with pytest.raises(PromptEvaluationError) as caught:
            openai_loopback.adapter().evaluate(trip_prompt((WEATHER,)), TRIP)
        assert caught.value.phase == "response"
        assert caught.value.reason.startswith("the reply is not valid JSON: ")
        assert problem in caught.value.reason


class TestRequestShape:
    def test_the_output_token_cap_can_come_from_request_options(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """max_output_tokens in request_options wins over the loop's default cap."""
        openai_loopback.reply(ok(response_body(*load_output("final_answer"))))
        adapter = openai_loopback.adapter(request_options={"max_output_tokens": 77})
        adapter.evaluate(trip_prompt((WEATHER,)), TRIP)
        assert openai_loopback.bodies[0]["max_output_tokens"] == 77

    def test_a_client_of_the_wrong_type_is_refused(self) -> None:
        """Only the SDK's own clients are accepted."""
        with pytest.raises(ConfigValidationError, match=r"openai\.OpenAI or openai\.AsyncOpenAI"):
            OpenAIAdapter(model="gpt-test", client=object())  # type: ignore[arg-type]  # the wrong type is the point
