"""What a small model on a local server does, on all three wires, and what the loop makes of it.

The server here behaves like llama.cpp's ``llama-server`` with Qwen2.5-Coder-1.5B where
it matters (measured, see ``docs/local-models.md``): a schema in the request's format
field is enforced as a grammar over the whole reply, so the model can only write the
answer (inventing it when no tool ran); offered tools are called by writing the call as
fenced JSON text; a reply that stops at the token cap may still say it completed. Each
test runs on the Responses API, Chat Completions and Anthropic Messages, through the
official SDKs over loopback HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.adapters.conftest import OpenAILoopback, RecordedRequest, Reply
from tests.adapters.openai.test_responses import TRIP, WEATHER, trip_prompt
from tests.adapters.wires import WIRES, Turn, Wire, WireName, wire
from weakincentives.adapters import LoopSettings
from weakincentives.errors import EmptyAnswerError, ProviderError, ResponseTruncatedError
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.runtime import InProcessEventBus, TextDelta, ToolInvoked
from weakincentives.serde import JSONValue

pytest.importorskip("openai")
pytest.importorskip("anthropic")

type Body = dict[str, JSONValue]


@dataclass(frozen=True, slots=True)
class Reading:
    """The answer: the city and its temperature, as the tool reported it."""

    city: str
    celsius: int


GROUNDED = {"city": "Lisbon", "celsius": 24}
"""What the weather tool says about Lisbon (``FORECASTS`` in the Responses tests)."""
INVENTED = {"city": "Lisbon", "celsius": 30}
FENCED_CALL = '```json\n{"name": "get_weather", "arguments": {"city": "Lisbon"}}\n```'
PROSE = "Lisbon is sunny at 24 °C."
RECOVERING = LoopSettings(recover_text_tool_calls=True)


def reading_prompt() -> Prompt[Reading]:
    return Prompt[Reading](
        ns="local",
        key="reading",
        sections=[
            MarkdownSection(
                title="Task", key="task", template="How warm is Lisbon?", tools=[WEATHER]
            )
        ],
    )


@pytest.fixture(params=WIRES)
def wired(request: pytest.FixtureRequest) -> Wire:
    """Each wire in turn."""
    name: WireName = request.param
    return wire(name)


def schema_sent(name: WireName, body: Body) -> bool:
    """True when the request carries the answer's schema in its format field."""
    if name == "chat":
        return "response_format" in body
    field = body.get("text" if name == "responses" else "output_config")
    return isinstance(field, dict) and "format" in field


def calls_forbidden(body: Body) -> bool:
    return body.get("tool_choice") in ("none", {"type": "none"})


def llama_like(wired: Wire) -> Callable[[RecordedRequest], Reply]:
    """A server and model that behave like llama.cpp with a small Qwen model."""

    def answer(request: RecordedRequest) -> Reply:
        body: Body = request.body
        stream = body.get("stream") is True
        looked = bool(wired.outputs(body))
        if schema_sent(wired.name, body):
            # The grammar leaves room for the answer only: grounded once a tool ran.
            value = GROUNDED if looked else INVENTED
            return wired.reply(Turn(text=json.dumps(value)), stream=stream)
        if "tools" in body and not calls_forbidden(body) and not looked:
            return wired.reply(Turn(text=FENCED_CALL), stream=stream)
        return wired.reply(Turn(text=PROSE), stream=stream)

    return answer


class TestToolsAndATypedAnswer:
    def test_the_tool_runs_and_the_answer_comes_in_a_tools_free_final_turn(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """No schema while tools are offered; the final turn asks for it with calls off."""
        openai_loopback.responder = llama_like(wired)
        adapter = wired.adapter(openai_loopback, settings=RECOVERING)
        response = adapter.evaluate(reading_prompt())
        assert response.output == Reading(city="Lisbon", celsius=24)
        assert [e.call.name for e in response.tool_executions] == ["get_weather"]
        first, second, final = openai_loopback.bodies
        assert [schema_sent(wired.name, body) for body in (first, second, final)] == [
            False,
            False,
            True,
        ]
        assert [calls_forbidden(body) for body in (first, second, final)] == [False, False, True]
        assert "tools" in final  # earlier turns refer to them
        assert "call the tools you need" in wired.prompt_text(first)
        assert '"celsius"' not in wired.prompt_text(first)
        assert response.rounds == 3

    def test_the_final_turn_states_the_schema_for_servers_that_ignore_the_field(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """The message asking for the answer carries the shape, not only the format field."""
        openai_loopback.responder = llama_like(wired)
        wired.adapter(openai_loopback, settings=RECOVERING).evaluate(reading_prompt())
        asked = json.dumps(openai_loopback.bodies[2])
        assert "You are done with the tools. Now give your final answer" in asked
        assert "Reply with one JSON value only" in asked

    def test_with_the_schema_always_sent_the_grammar_keeps_the_model_from_its_tools(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """answer_schema="always" on such a server: no tool runs, the answer is invented."""
        openai_loopback.responder = llama_like(wired)
        settings = LoopSettings(recover_text_tool_calls=True, answer_schema="always")
        response = wired.adapter(openai_loopback, settings=settings).evaluate(reading_prompt())
        assert response.output == Reading(city="Lisbon", celsius=30)
        assert response.tool_executions == ()
        assert schema_sent(wired.name, openai_loopback.bodies[0]) is True

    def test_never_sends_the_schema_and_states_it_up_front(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """answer_schema="never": only the prompt text shows the shape; no final turn."""
        openai_loopback.reply(
            wired.reply(Turn(text=FENCED_CALL)), wired.reply(Turn(text=json.dumps(GROUNDED)))
        )
        settings = LoopSettings(recover_text_tool_calls=True, answer_schema="never")
        response = wired.adapter(openai_loopback, settings=settings).evaluate(reading_prompt())
        assert response.output == Reading(city="Lisbon", celsius=24)
        assert [schema_sent(wired.name, body) for body in openai_loopback.bodies] == [False, False]
        assert "Reply with one JSON value only" in wired.prompt_text(openai_loopback.bodies[0])

    def test_a_prompt_without_tools_sends_the_schema_at_once(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """Nothing to keep the model from: one request, schema in its format field."""
        openai_loopback.responder = llama_like(wired)
        prompt = Prompt[Reading](
            ns="local", key="bare", sections=[MarkdownSection(title="T", template="Guess.")]
        )
        response = wired.adapter(openai_loopback, settings=RECOVERING).evaluate(prompt)
        assert response.output == Reading(city="Lisbon", celsius=30)
        assert response.rounds == 1
        assert schema_sent(wired.name, openai_loopback.bodies[0]) is True
        assert calls_forbidden(openai_loopback.bodies[0]) is False


class TestCallsWrittenAsText:
    def test_a_recovered_call_is_replayed_as_a_structured_call(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """On every wire the next request answers a call the model made, not text."""
        openai_loopback.reply(wired.reply(Turn(text=FENCED_CALL)), wired.reply(Turn(text=PROSE)))
        response = wired.adapter(openai_loopback, settings=RECOVERING).evaluate(
            trip_prompt((WEATHER,)), TRIP
        )
        assert response.text == PROSE
        (output,) = wired.outputs(openai_loopback.bodies[1])
        assert output.call_id.startswith("text_call_1_1")
        assert '"celsius":24' in output.content
        assert "```" not in json.dumps(openai_loopback.bodies[1])

    def test_without_recovery_the_written_call_is_the_answer(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """Recovery is opt-in: off, the fenced JSON comes back as text and nothing runs."""
        openai_loopback.reply(wired.reply(Turn(text=FENCED_CALL)))
        response = wired.adapter(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert (response.text, response.tool_executions) == (FENCED_CALL, ())

    def test_streamed_call_text_is_never_shown_as_answer_text(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """Text before the call streams; the call's JSON is held back, then dropped."""
        written = f"Let me check.\n{FENCED_CALL}"
        openai_loopback.reply(
            wired.reply(Turn(text=written), stream=True), wired.reply(Turn(text=PROSE), stream=True)
        )
        bus = InProcessEventBus()
        deltas: list[TextDelta] = []
        invoked: list[ToolInvoked] = []
        bus.subscribe(TextDelta, deltas.append)
        bus.subscribe(ToolInvoked, invoked.append)
        adapter = wired.adapter(openai_loopback, settings=RECOVERING, stream=True)
        response = adapter.evaluate(trip_prompt((WEATHER,)), TRIP, bus=bus)
        first = "".join(d.text for d in deltas if d.round == 1)
        second = "".join(d.text for d in deltas if d.round == 2)
        assert (first, second) == ("Let me check.", PROSE)
        assert [event.name for event in invoked] == ["get_weather"]
        assert response.text == PROSE


class TestTruncation:
    def test_a_reply_that_used_every_allowed_token_is_truncated_whatever_it_says(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """llama.cpp may say completed / stop / end_turn at the cap: still truncated."""
        openai_loopback.reply(wired.reply(Turn(text="The weather in", output_tokens=16)))
        adapter = wired.adapter(openai_loopback, settings=LoopSettings(max_output_tokens=16))
        with pytest.raises(
            ResponseTruncatedError, match="of 16 tokens \\(the server said"
        ) as caught:
            adapter.evaluate(trip_prompt(()), TRIP)
        assert (caught.value.limit, caught.value.phase) == (16, "response")

    def test_a_reply_under_the_cap_is_an_answer(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """One token under the cap is a complete reply."""
        openai_loopback.reply(wired.reply(Turn(text="Sunny.", output_tokens=15)))
        adapter = wired.adapter(openai_loopback, settings=LoopSettings(max_output_tokens=16))
        assert adapter.evaluate(trip_prompt(()), TRIP).text == "Sunny."


class TestEmptyAnswers:
    @pytest.mark.parametrize("empty", ["", "  \n "])
    def test_an_empty_answer_goes_back_once_with_feedback(
        self, openai_loopback: OpenAILoopback, wired: Wire, empty: str
    ) -> None:
        """The model reads that its reply was empty and answers again."""
        openai_loopback.reply(wired.reply(Turn(text=empty)), wired.reply(Turn(text=PROSE)))
        response = wired.adapter(openai_loopback).evaluate(trip_prompt(()), TRIP)
        assert response.text == PROSE
        feedback = json.dumps(openai_loopback.bodies[1])
        assert "Your reply was empty: it had no text and no tool call" in feedback

    def test_a_second_empty_answer_is_an_empty_answer_error(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """After the one retry, a typed error with phase parse."""
        openai_loopback.reply(wired.reply(Turn(text="")), wired.reply(Turn(text=" ")))
        with pytest.raises(EmptyAnswerError, match="final answer was empty") as caught:
            wired.adapter(openai_loopback).evaluate(trip_prompt(()), TRIP)
        assert (caught.value.phase, caught.value.structured) == ("parse", False)
        assert len(openai_loopback.requests) == 2


class TestServerErrors:
    def test_an_error_status_shows_the_servers_message(
        self, openai_loopback: OpenAILoopback, wired: Wire
    ) -> None:
        """The body's message, never a Python repr of the decoded body."""
        openai_loopback.reply(Reply(status=400, body=wired.error_body("'messages' is required")))
        with pytest.raises(ProviderError) as caught:
            wired.adapter(openai_loopback).evaluate(trip_prompt(()), TRIP)
        assert caught.value.detail == "the provider answered with HTTP 400: 'messages' is required"
        assert caught.value.reason.startswith(caught.value.detail + " (POST http://127.0.0.1:")
        assert caught.value.status_code == 400


def test_llama_like_server_answers_calls_then_prose(openai_loopback: OpenAILoopback) -> None:
    """The stand-in itself: a call while tools are open, prose after a result."""
    chat = wire("chat")
    answer = llama_like(chat)
    asked: Any = {"tools": [], "messages": [{"role": "user", "content": "x"}]}
    looked: Any = {**asked, "messages": [{"role": "tool", "tool_call_id": "c", "content": "r"}]}
    request = RecordedRequest(method="POST", path="/", headers={}, body=asked)
    assert FENCED_CALL.split("\n")[1] in str(answer(request).body)
    assert PROSE in str(
        answer(RecordedRequest(method="POST", path="/", headers={}, body=looked)).body
    )
