"""One behaviour, three wires: the loop's provider-independent behaviour on every adapter.

Each test runs against the Responses API, Chat Completions and Anthropic Messages,
through the official SDKs and a loopback server answering in each wire's documented
shapes, with sync and async clients and both entry points. The assertions are the
same for all three; only the wire encoding differs (``wires.py``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest

from tests.adapters.conftest import HANG, OpenAILoopback, Reply
from tests.adapters.openai.test_responses import (
    CURRENCY,
    HOTEL,
    LISBON_OUTPUT,
    TRIP,
    WEATHER,
    trip_prompt,
)
from tests.adapters.wires import WIRES, Call, ClientKind, Turn, Wire, WireName, wire
from weakincentives.adapters import Adapter, LoopSettings, PromptResponse
from weakincentives.errors import PromptEvaluationError, ProviderError, ResponseTruncatedError
from weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    SectionVisibility,
)
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptFailed,
    Session,
    TextDelta,
    ToolInvoked,
)
from weakincentives.tools import WebSearchConfig, web_search_tool

pytest.importorskip("openai")
pytest.importorskip("anthropic")

type Entry = Literal["evaluate", "evaluate_async"]

LISBON = Call("call_1", "get_weather", {"city": "Lisbon"})
CONVERT = Call("call_2", "convert_currency", {"amount": 200, "source": "EUR", "target": "USD"})
HOTEL_CALL = Call("call_3", "book_hotel", {"city": "Lisbon", "nights": 2})
ANSWER = "Lisbon will be sunny, and 200 EUR is about 216 USD."


def run(
    adapter: Adapter[Any], entry: Entry, prompt: Any, *params: object, **kwargs: Any
) -> PromptResponse[Any]:
    if entry == "evaluate":
        return adapter.evaluate(prompt, *params, **kwargs)
    return asyncio.run(adapter.evaluate_async(prompt, *params, **kwargs))


@pytest.fixture(params=WIRES)
def wired(request: pytest.FixtureRequest) -> Wire:
    """Each wire in turn."""
    name: WireName = request.param
    return wire(name)


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("entry", ["evaluate", "evaluate_async"])
class TestToolLoop:
    def test_a_tool_round_trip(
        self, openai_loopback: OpenAILoopback, wired: Wire, kind: ClientKind, entry: Entry
    ) -> None:
        """The call runs, its output goes back under its id, the answer is the text."""
        openai_loopback.reply(wired.reply(Turn(calls=(LISBON,))), wired.reply(Turn(text=ANSWER)))
        adapter = wired.adapter(openai_loopback, kind)
        response = run(adapter, entry, trip_prompt((WEATHER,)), TRIP)
        assert response.text == ANSWER
        assert [e.call.call_id for e in response.tool_executions] == ["call_1"]
        assert response.rounds == 2
        assert response.usage.input_tokens == 200
        assert [r.path for r in openai_loopback.requests] == [wired.path, wired.path]
        (output,) = wired.outputs(openai_loopback.bodies[1])
        assert (output.call_id, output.content) == ("call_1", LISBON_OUTPUT)

    def test_several_calls_in_one_turn_answer_in_order(
        self, openai_loopback: OpenAILoopback, wired: Wire, kind: ClientKind, entry: Entry
    ) -> None:
        """Both calls of the turn run; their outputs go back in the model's order."""
        openai_loopback.reply(
            wired.reply(Turn(text="Checking.", calls=(LISBON, CONVERT))),
            wired.reply(Turn(text=ANSWER)),
        )
        adapter = wired.adapter(openai_loopback, kind)
        response = run(adapter, entry, trip_prompt((WEATHER, CURRENCY)), TRIP)
        assert [e.call.name for e in response.tool_executions] == [
            "get_weather",
            "convert_currency",
        ]
        outputs = wired.outputs(openai_loopback.bodies[1])
        assert [o.call_id for o in outputs] == ["call_1", "call_2"]
        assert outputs[1].content == 'Converted\n\n{"amount":216,"currency":"USD"}'

    def test_streamed_text_arrives_as_deltas(
        self, openai_loopback: OpenAILoopback, wired: Wire, kind: ClientKind, entry: Entry
    ) -> None:
        """With stream=True, calls still run and the answer arrives as joined deltas."""
        openai_loopback.reply(
            wired.reply(Turn(calls=(LISBON,)), stream=True),
            wired.reply(Turn(text=ANSWER), stream=True),
        )
        bus = InProcessEventBus()
        deltas: list[str] = []
        bus.subscribe(TextDelta, lambda event: deltas.append(event.text))
        adapter = wired.adapter(openai_loopback, kind, stream=True)
        response = run(adapter, entry, trip_prompt((WEATHER,)), TRIP, bus=bus)
        assert response.text == ANSWER
        assert len(deltas) == 2
        assert "".join(deltas) == ANSWER
        assert [e.call.call_id for e in response.tool_executions] == ["call_1"]


class TestBehaviour:
    def test_a_failing_handler_reaches_the_model(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """The exception's message is the tool output; Anthropic also flags it is_error."""
        openai_loopback.reply(
            wired.reply(Turn(calls=(HOTEL_CALL,))), wired.reply(Turn(text="No rooms."))
        )
        bus = InProcessEventBus()
        session = Session(bus=bus)
        response = wired.adapter(openai_loopback).evaluate(
            trip_prompt((HOTEL,)), TRIP, bus=bus, session=session
        )
        assert response.text == "No rooms."
        assert response.tool_results[0].success is False
        (invoked,) = session.select(ToolInvoked)
        assert invoked.result.success is False
        (output,) = wired.outputs(openai_loopback.bodies[1])
        assert "no rooms left in Lisbon" in output.content
        assert output.is_error is (True if wired.name == "anthropic" else None)

    def test_structured_output_is_parsed_and_a_bad_answer_goes_back_once(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """A wrong answer is rejected with its path; the retry's answer is the output."""
        openai_loopback.reply(
            wired.reply(Turn(text='{"approved": "yes", "reason": "ok"}')),
            wired.reply(Turn(text='{"approved": true, "reason": "ok"}')),
        )
        response = wired.adapter(openai_loopback).evaluate(verdict_prompt())
        assert response.output == Verdict(approved=True, reason="ok")
        assert response.rounds == 2
        assert "$.approved" in str(openai_loopback.bodies[1])

    def test_open_sections_halts_rerenders_and_carries_on(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """The model opens a summarized section; the next request shows it in full."""
        opening = Call(
            "call_open", "open_sections", {"section_keys": ["details"], "reason": "Need them"}
        )
        openai_loopback.reply(wired.reply(Turn(calls=(opening,))), wired.reply(Turn(text="Done.")))
        response = wired.adapter(openai_loopback).evaluate(disclosure_prompt())
        assert response.text == "Done."
        first, second = (wired.prompt_text(body) for body in openai_loopback.bodies)
        assert "Details are available." in first
        assert "The secret detail is 42." not in first
        assert "The secret detail is 42." in second
        assert response.rendered is not None
        assert dict(response.rendered.visibility_overrides) == {
            ("details",): SectionVisibility.FULL
        }

    def test_a_hosted_tool_option_the_provider_cannot_honour_is_refused_before_sending(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """Phase render, no request sent, and the message names the adapter."""
        config = {
            "responses": WebSearchConfig(max_uses=3),
            "chat": WebSearchConfig(),
            "anthropic": WebSearchConfig(search_context_size="low"),
        }[wired.name]
        prompt = Prompt(
            ns="wires",
            key="search",
            sections=[
                MarkdownSection(title="T", template="Go.", hosted_tools=(web_search_tool(config),))
            ],
        )
        adapter = wired.adapter(openai_loopback)
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(prompt)
        assert caught.value.phase == "render"
        assert f"the {adapter.name} adapter" in caught.value.reason
        assert openai_loopback.requests == []


class TestErrorsByPhase:
    def test_rate_limits_are_retried_after_the_delay_asked_for(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """429 with retry-after: one resend after exactly that delay, then success."""
        sleeps: list[float] = []

        async def record(seconds: float) -> None:
            sleeps.append(seconds)

        openai_loopback.reply(
            Reply(status=429, body=wired.error_body("slow down"), headers={"retry-after": "2"}),
            wired.reply(Turn(text="Fine.")),
        )
        adapter = wired.adapter(
            openai_loopback,
            client=_retrying_client(wired, openai_loopback),
            settings=LoopSettings(sleep=record),
        )
        response = adapter.evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.text == "Fine."
        assert sleeps == [2.0]
        assert [r.headers["x-stainless-retry-count"] for r in openai_loopback.requests] == [
            "0",
            "1",
        ]

    @pytest.mark.parametrize(
        ("status", "retryable"), [(400, False), (401, False), (500, True), (529, True)]
    )
    def test_error_statuses_are_request_errors_with_the_body(
        self, openai_loopback: OpenAILoopback, wired: Wire, status: int, retryable: bool
    ) -> None:
        """ProviderError (phase request) carries the status, the body and retryability."""
        body = wired.error_body("it broke")
        openai_loopback.reply(Reply(status=status, body=body))
        bus = InProcessEventBus()
        session = Session(bus=bus)
        with pytest.raises(ProviderError) as caught:
            wired.adapter(openai_loopback).evaluate(
                trip_prompt((WEATHER,)), TRIP, bus=bus, session=session
            )
        error = caught.value
        assert (error.phase, error.status_code, error.retryable) == ("request", status, retryable)
        assert error.provider_payload == {"status": status, "body": wired.error_payload(body)}
        assert isinstance(error.__cause__, Exception)
        assert session.select(PromptFailed)[0].phase == "request"

    def test_a_body_that_is_not_json_is_a_response_error(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """Never a raw SDK or decoder exception."""
        openai_loopback.reply(Reply(raw=b"<html>gateway</html>"))
        with pytest.raises(PromptEvaluationError) as caught:
            wired.adapter(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert caught.value.phase == "response"
        assert caught.value.reason.startswith("the reply is not valid JSON")

    @pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
    def test_a_reply_cut_off_at_the_cap_is_truncated(
        self, openai_loopback: OpenAILoopback, wired: Wire, stream: bool
    ) -> None:
        """Each wire's way of saying 'stopped at the token cap' is ResponseTruncatedError."""
        openai_loopback.reply(
            wired.reply(Turn(text='{"approved": tr', truncated=True), stream=stream)
        )
        adapter = wired.adapter(
            openai_loopback, stream=stream, settings=LoopSettings(max_output_tokens=50)
        )
        with pytest.raises(ResponseTruncatedError) as caught:
            adapter.evaluate(verdict_prompt())
        assert caught.value.limit == 50
        assert caught.value.phase == "response"

    def test_a_server_that_never_answers_fails_at_the_deadline(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """The deadline bounds the attempt; one request, phase request."""
        openai_loopback.reply(HANG)
        deadline = datetime.now(UTC) + timedelta(seconds=0.5)
        bus = InProcessEventBus()
        session = Session(bus=bus)
        with pytest.raises(PromptEvaluationError) as caught:
            wired.adapter(openai_loopback).evaluate(
                trip_prompt((WEATHER,)), TRIP, deadline=deadline, bus=bus, session=session
            )
        assert caught.value.phase == "request"
        assert "deadline" in caught.value.reason
        assert len(openai_loopback.requests) == 1
        assert session.select(PromptExecuted) == ()


def _retrying_client(wired: Wire, loopback: OpenAILoopback) -> Any:
    """A client that allows one retry (the loop performs it, with the SDK's retries off)."""
    if wired.name == "anthropic":
        anthropic = pytest.importorskip("anthropic")
        return anthropic.Anthropic(
            base_url=loopback.base_url.removesuffix("/v1"), api_key="k", max_retries=1
        )
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=loopback.base_url, api_key="k", max_retries=1)


@dataclass(frozen=True, slots=True)
class Verdict:
    approved: bool
    reason: str


def verdict_prompt() -> Prompt[Verdict]:
    return Prompt[Verdict](
        ns="wires", key="verdict", sections=[MarkdownSection(title="Task", template="Approve?")]
    )


def disclosure_prompt() -> PromptTemplate[None]:
    return PromptTemplate(
        ns="wires",
        key="disclosure",
        sections=[
            MarkdownSection(title="Task", key="task", template="Answer from the details."),
            MarkdownSection(
                title="Details",
                key="details",
                template="The secret detail is 42.",
                summary="Details are available.",
                visibility=SectionVisibility.SUMMARY,
            ),
        ],
    )
