"""The OpenAI adapter over real HTTP: requests it sends and how it reads replies.

The official SDK talks to the ``openai_loopback`` server, which plays canned
Responses API bodies from ``tests/fixtures/responses``. Assertions cover the
recorded request bodies, the parsed ``PromptResponse`` and the session's events.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.adapters.conftest import (
    OpenAILoopback,
    load_output,
    load_response,
    ok,
    response_body,
)
from tests.conftest import FakeClock
from weakincentives.adapters import LoopSettings
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptRendered,
    Session,
    TokenUsage,
    ToolInvoked,
)
from weakincentives.serde import JSONValue

pytest.importorskip("openai")


@dataclass(frozen=True, slots=True)
class TripParams:
    city: str
    nights: int


@dataclass(frozen=True, slots=True)
class CityParams:
    city: str = field(metadata={"description": "City name, such as Lisbon"})


@dataclass(frozen=True, slots=True)
class Forecast:
    city: str
    sky: str
    celsius: int


@dataclass(frozen=True, slots=True)
class ConvertParams:
    amount: int = field(metadata={"description": "Whole units of the source currency"})
    source: str
    target: str


@dataclass(frozen=True, slots=True)
class Converted:
    amount: int
    currency: str


@dataclass(frozen=True, slots=True)
class BookingParams:
    city: str
    nights: int


@dataclass(frozen=True, slots=True)
class TagParams:
    labels: dict[str, str]


@dataclass(frozen=True, slots=True)
class Itinerary:
    city: str
    days: int
    highlights: list[str]


@dataclass(frozen=True, slots=True)
class Stop:
    name: str
    hours: int


FORECASTS = {
    "Lisbon": Forecast(city="Lisbon", sky="sunny", celsius=24),
    "Porto": Forecast(city="Porto", sky="cloudy", celsius=19),
}


def get_weather(params: CityParams, *, context: ToolContext) -> ToolResult[Forecast]:
    """Get the weather forecast for a city."""
    return ToolResult(message=f"Forecast for {params.city}", value=FORECASTS[params.city])


def convert_currency(params: ConvertParams, *, context: ToolContext) -> ToolResult[Converted]:
    """Convert an amount between currencies at today's rate."""
    return ToolResult(message="Converted", value=Converted(amount=216, currency=params.target))


def book_hotel(params: BookingParams, *, context: ToolContext) -> ToolResult[str]:
    """Book a hotel room."""
    raise RuntimeError(f"no rooms left in {params.city}")


def tag_trip(params: TagParams, *, context: ToolContext) -> ToolResult[str]:
    """Attach free-form labels to the trip."""
    return ToolResult(message="Tagged")


WEATHER = Tool.wrap(get_weather)
CURRENCY = Tool.wrap(convert_currency)
HOTEL = Tool.wrap(book_hotel)
TAGS = Tool.wrap(tag_trip)

TRIP = TripParams(city="Lisbon", nights=2)
RENDERED_TEXT = "## 1 Task\nPlan a 2-night trip to Lisbon."

WEATHER_SPEC: dict[str, JSONValue] = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the weather forecast for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name, such as Lisbon"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}
CURRENCY_SPEC: dict[str, JSONValue] = {
    "type": "function",
    "name": "convert_currency",
    "description": "Convert an amount between currencies at today's rate.",
    "parameters": {
        "type": "object",
        "properties": {
            "amount": {"type": "integer", "description": "Whole units of the source currency"},
            "source": {"type": "string"},
            "target": {"type": "string"},
        },
        "required": ["amount", "source", "target"],
        "additionalProperties": False,
    },
    "strict": True,
}
HOTEL_SPEC: dict[str, JSONValue] = {
    "type": "function",
    "name": "book_hotel",
    "description": "Book a hotel room.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
        "required": ["city", "nights"],
        "additionalProperties": False,
    },
    "strict": True,
}


def trip_prompt(
    tools: tuple[Tool[Any, Any], ...] = (WEATHER, CURRENCY, HOTEL),
) -> PromptTemplate[None]:
    """The travel prompt with ``tools`` on its only section."""
    return PromptTemplate(
        ns="travel",
        key="plan",
        sections=[
            MarkdownSection[TripParams](
                title="Task",
                key="task",
                template="Plan a ${nights}-night trip to ${city}.",
                tools=tools,
            )
        ],
    )


def user_message(text: str = RENDERED_TEXT) -> dict[str, JSONValue]:
    return {"role": "user", "content": text}


def function_call_items(name: str) -> list[JSONValue]:
    """The function_call items of a fixture, exactly as the server sent them."""
    return [
        item
        for item in load_output(name)
        if isinstance(item, dict) and item["type"] == "function_call"
    ]


def call_output(call_id: str, output: str) -> dict[str, JSONValue]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


LISBON_OUTPUT = 'Forecast for Lisbon\n\n{"city":"Lisbon","sky":"sunny","celsius":24}'
PORTO_OUTPUT = 'Forecast for Porto\n\n{"city":"Porto","sky":"cloudy","celsius":19}'
CURRENCY_OUTPUT = 'Converted\n\n{"amount":216,"currency":"USD"}'
FINAL_TEXT = "Lisbon will be sunny at 24 °C, and 200 EUR is about 216 USD."


class TestFirstRequest:
    def test_posts_model_prompt_and_function_tools_to_responses(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The first request carries the model, the rendered prompt and every tool's schema."""
        openai_loopback.reply(ok(load_response("final_answer")))
        response = openai_loopback.adapter().evaluate(trip_prompt(), TRIP)
        assert response.rendered is not None
        assert response.rendered.text == RENDERED_TEXT
        (request,) = openai_loopback.requests
        assert (request.method, request.path) == ("POST", "/v1/responses")
        assert request.headers["authorization"] == "Bearer test-key"
        assert request.body == {
            "model": "gpt-test",
            "max_output_tokens": 4096,
            "input": [user_message()],
            "tools": [WEATHER_SPEC, CURRENCY_SPEC, HOTEL_SPEC],
        }

    def test_tool_whose_schema_strict_mode_rejects_is_sent_non_strict(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A free-form mapping parameter cannot be strict, so only that tool says strict false."""
        openai_loopback.reply(ok(load_response("final_answer")))
        openai_loopback.adapter().evaluate(trip_prompt((WEATHER, TAGS)), TRIP)
        assert openai_loopback.bodies[0]["tools"] == [
            WEATHER_SPEC,
            {
                "type": "function",
                "name": "tag_trip",
                "description": "Attach free-form labels to the trip.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                    },
                    "required": ["labels"],
                    "additionalProperties": False,
                },
                "strict": False,
            },
        ]

    def test_prompt_without_tools_sends_no_tools_key(self, openai_loopback: OpenAILoopback) -> None:
        """A tool-less prompt leaves ``tools``, ``include`` and ``text`` out of the body."""
        openai_loopback.reply(ok(load_response("final_answer")))
        openai_loopback.adapter().evaluate(trip_prompt(()), TRIP)
        assert openai_loopback.bodies == [
            {"model": "gpt-test", "input": [user_message()], "max_output_tokens": 4096}
        ]

    def test_request_options_are_sent_with_every_request(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """``request_options`` reach the body of each round."""
        openai_loopback.reply(ok(load_response("weather_call")), ok(load_response("final_answer")))
        adapter = openai_loopback.adapter(request_options={"temperature": 0, "store": False})
        adapter.evaluate(trip_prompt((WEATHER,)), TRIP)
        assert [
            (body["model"], body["temperature"], body["store"]) for body in openai_loopback.bodies
        ] == [("gpt-test", 0, False), ("gpt-test", 0, False)]

    def test_tools_from_request_options_are_sent_after_the_prompts(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A provider tool given in ``request_options`` joins the prompt's tools, not replaced."""
        file_search: dict[str, JSONValue] = {"type": "file_search", "vector_store_ids": ["vs_1"]}
        openai_loopback.reply(ok(load_response("final_answer")))
        adapter = openai_loopback.adapter(request_options={"tools": [file_search]})
        adapter.evaluate(trip_prompt((WEATHER,)), TRIP)
        assert openai_loopback.bodies[0]["tools"] == [WEATHER_SPEC, file_search]

    def test_text_options_are_kept_next_to_the_output_format(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """``text`` settings such as verbosity survive the structured-output format."""
        openai_loopback.reply(ok(load_response("itinerary_answer")))
        adapter = openai_loopback.adapter(request_options={"text": {"verbosity": "low"}})
        prompt = Prompt[Itinerary](
            ns="travel",
            key="itinerary",
            sections=[MarkdownSection(title="Task", key="task", template="Plan it.")],
        )
        adapter.evaluate(prompt)
        text = openai_loopback.bodies[0]["text"]
        assert (text["verbosity"], text["format"]["name"]) == ("low", "Itinerary")


class TestToolLoop:
    def test_multi_round_loop_replays_calls_and_sends_outputs(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Each round's function_call items and their outputs are appended to the next input."""
        openai_loopback.reply(
            ok(load_response("weather_call")),
            ok(load_response("currency_call")),
            ok(load_response("final_answer")),
        )
        response = openai_loopback.adapter().evaluate(trip_prompt(), TRIP)
        first, second, third = openai_loopback.bodies
        assert first["input"] == [user_message()]
        assert second["input"] == [
            user_message(),
            *function_call_items("weather_call"),
            call_output("call_weather_lisbon", LISBON_OUTPUT),
        ]
        assert third["input"] == [
            *second["input"],
            *function_call_items("currency_call"),
            call_output("call_eur_usd", CURRENCY_OUTPUT),
        ]
        assert all(
            body["tools"] == [WEATHER_SPEC, CURRENCY_SPEC, HOTEL_SPEC]
            for body in openai_loopback.bodies
        )
        assert response.text == FINAL_TEXT
        assert response.output is None
        assert response.halt is None
        assert response.rounds == 3
        assert [
            (execution.call.name, execution.params) for execution in response.tool_executions
        ] == [
            ("get_weather", CityParams(city="Lisbon")),
            ("convert_currency", ConvertParams(amount=200, source="EUR", target="USD")),
        ]
        assert response.tool_results == (
            ToolResult(message="Forecast for Lisbon", value=FORECASTS["Lisbon"]),
            ToolResult(message="Converted", value=Converted(amount=216, currency="USD")),
        )

    def test_usage_is_mapped_and_summed_over_rounds(self, openai_loopback: OpenAILoopback) -> None:
        """Input, output, cached and reasoning tokens add up across the three replies."""
        openai_loopback.reply(
            ok(load_response("weather_call")),
            ok(load_response("currency_call")),
            ok(load_response("final_answer")),
        )
        response = openai_loopback.adapter().evaluate(trip_prompt(), TRIP)
        assert response.usage == TokenUsage(
            input_tokens=310 + 402 + 520,
            output_tokens=21 + 30 + 40,
            cached_input_tokens=256 + 384,
            reasoning_tokens=16,
        )

    def test_every_function_call_of_a_response_runs_in_order(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Three calls in one reply all run, and their outputs follow the calls in order."""
        openai_loopback.reply(
            ok(load_response("parallel_calls")), ok(load_response("final_answer"))
        )
        response = openai_loopback.adapter().evaluate(trip_prompt(), TRIP)
        assert [execution.call.call_id for execution in response.tool_executions] == [
            "call_weather_lisbon",
            "call_weather_porto",
            "call_eur_usd",
        ]
        assert [execution.result.value for execution in response.tool_executions] == [
            FORECASTS["Lisbon"],
            FORECASTS["Porto"],
            Converted(amount=216, currency="USD"),
        ]
        assert openai_loopback.bodies[1]["input"] == [
            user_message(),
            *function_call_items("parallel_calls"),
            call_output("call_weather_lisbon", LISBON_OUTPUT),
            call_output("call_weather_porto", PORTO_OUTPUT),
            call_output("call_eur_usd", CURRENCY_OUTPUT),
        ]
        assert response.rounds == 2

    def test_failing_handler_message_reaches_the_next_request(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A raising handler becomes a failed result whose message the model reads next round."""
        openai_loopback.reply(ok(load_response("hotel_call")), ok(load_response("final_answer")))
        response = openai_loopback.adapter().evaluate(trip_prompt(), TRIP)
        failure = "Tool 'book_hotel' failed: RuntimeError: no rooms left in Lisbon"
        assert openai_loopback.bodies[1]["input"] == [
            user_message(),
            *function_call_items("hotel_call"),
            call_output("call_hotel_lisbon", failure),
        ]
        (execution,) = response.tool_executions
        assert execution.result == ToolResult(message=failure, value=None, success=False)
        assert execution.params == BookingParams(city="Lisbon", nights=2)
        assert isinstance(execution.exception, RuntimeError)
        assert response.text == FINAL_TEXT

    def test_unknown_tool_and_bad_arguments_go_back_as_failed_outputs(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Calls the runtime cannot run are answered with their failure, not raised."""
        openai_loopback.reply(
            ok(
                response_body(
                    {
                        "type": "function_call",
                        "id": "fc_1",
                        "call_id": "call_unknown",
                        "name": "get_flights",
                        "arguments": "{}",
                        "status": "completed",
                    },
                    {
                        "type": "function_call",
                        "id": "fc_2",
                        "call_id": "call_bad",
                        "name": "get_weather",
                        "arguments": '{"town": "Lisbon"}',
                        "status": "completed",
                    },
                )
            ),
            ok(load_response("final_answer")),
        )
        response = openai_loopback.adapter().evaluate(trip_prompt((WEATHER,)), TRIP)
        outputs = openai_loopback.bodies[1]["input"][3:]
        assert [output["call_id"] for output in outputs] == ["call_unknown", "call_bad"]
        assert outputs[0]["output"] == "Unknown tool 'get_flights'. Available tools: get_weather."
        assert outputs[1]["output"].startswith("Invalid arguments for tool 'get_weather': ")
        assert [result.success for result in response.tool_results] == [False, False]

    def test_items_of_unknown_types_are_replayed_and_do_not_break_parsing(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """An output item type the SDK does not model is kept verbatim and replayed as sent."""
        novel: dict[str, JSONValue] = {
            "type": "future_item",
            "id": "fi_1",
            "payload": {"depth": 3, "note": None},
        }
        call = function_call_items("weather_call")[0]
        openai_loopback.reply(ok(response_body(novel, call)), ok(load_response("final_answer")))
        response = openai_loopback.adapter().evaluate(trip_prompt((WEATHER,)), TRIP)
        assert openai_loopback.bodies[1]["input"] == [
            user_message(),
            novel,
            call,
            call_output("call_weather_lisbon", LISBON_OUTPUT),
        ]
        assert response.text == FINAL_TEXT

    def test_null_fields_are_replayed_because_some_are_required(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Explicit nulls go back as sent: ``code`` and ``outputs`` of a code interpreter
        call are required-but-nullable input fields, so dropping them breaks the next request."""
        reasoning: dict[str, JSONValue] = {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [],
            "encrypted_content": None,
        }
        interpreter: dict[str, JSONValue] = {
            "type": "code_interpreter_call",
            "id": "ci_1",
            "status": "failed",
            "container_id": "cntr_1",
            "code": None,
            "outputs": None,
        }
        call = function_call_items("weather_call")[0]
        openai_loopback.reply(
            ok(response_body(reasoning, interpreter, call)), ok(load_response("final_answer"))
        )
        openai_loopback.adapter().evaluate(trip_prompt((WEATHER,)), TRIP)
        assert openai_loopback.bodies[1]["input"][1:3] == [reasoning, interpreter]

    def test_texts_of_several_messages_are_joined(self, openai_loopback: OpenAILoopback) -> None:
        """Every output_text part of every message counts towards the answer, in order."""
        openai_loopback.reply(
            ok(
                response_body(
                    {
                        "type": "message",
                        "id": "msg_1",
                        "role": "assistant",
                        "status": "completed",
                        "content": [
                            {"type": "output_text", "text": "Sunny ", "annotations": []},
                            {"type": "output_text", "text": "and warm.", "annotations": []},
                        ],
                    },
                    {
                        "type": "message",
                        "id": "msg_2",
                        "role": "assistant",
                        "status": "completed",
                        "content": [
                            {"type": "output_text", "text": " Pack light.", "annotations": []}
                        ],
                    },
                )
            )
        )
        response = openai_loopback.adapter().evaluate(trip_prompt(()), TRIP)
        assert response.text == "Sunny and warm. Pack light."
        assert response.usage == TokenUsage()


def finish_plan(params: CityParams, *, context: ToolContext) -> ToolResult[str]:
    """Hand the plan back to the caller."""
    return ToolResult(message="Plan ready", value=params.city)


FINISH = Tool(
    name="finish_plan",
    description="Hand the plan back to the caller.",
    handler=finish_plan,
    terminal=True,
)


class TestHalt:
    def test_terminal_tool_ends_the_evaluation_without_another_request(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A successful terminal call halts: later calls in the reply are skipped, not sent."""
        finish: dict[str, JSONValue] = {
            "type": "function_call",
            "id": "fc_finish",
            "call_id": "call_finish",
            "name": "finish_plan",
            "arguments": '{"city": "Lisbon"}',
            "status": "completed",
        }
        weather = function_call_items("weather_call")[0]
        openai_loopback.reply(ok(response_body(finish, weather)))
        response = openai_loopback.adapter().evaluate(trip_prompt((WEATHER, FINISH)), TRIP)
        assert len(openai_loopback.requests) == 1
        assert response.halt is not None
        assert (response.halt.tool_name, response.halt.call_id, response.halt.value) == (
            "finish_plan",
            "call_finish",
            "Lisbon",
        )
        assert [call.call_id for call in response.skipped_calls] == ["call_weather_lisbon"]
        assert [execution.call.name for execution in response.tool_executions] == ["finish_plan"]
        assert (response.text, response.output, response.rounds) == ("", None, 1)


class TestEvents:
    def test_session_records_rendered_invoked_and_executed(
        self,
        openai_loopback: OpenAILoopback,
        bus: InProcessEventBus,
        session: Session,
        clock: FakeClock,
    ) -> None:
        """One evaluation publishes PromptRendered, one ToolInvoked per call and PromptExecuted."""
        openai_loopback.reply(
            ok(load_response("parallel_calls")), ok(load_response("final_answer"))
        )
        adapter = openai_loopback.adapter(
            settings=LoopSettings(clock=clock, new_id=lambda: "eval-1")
        )
        response = adapter.evaluate(trip_prompt(), TRIP, bus=bus, session=session)
        (rendered,) = session.select(PromptRendered)
        invoked = session.select(ToolInvoked)
        (executed,) = session.select(PromptExecuted)
        assert (rendered.evaluation_id, rendered.adapter, rendered.prompt_name) == (
            "eval-1",
            "openai",
            "plan",
        )
        assert rendered.text == RENDERED_TEXT
        assert rendered.tool_names == ("get_weather", "convert_currency", "book_hotel")
        assert rendered.hosted_tool_names == ()
        assert rendered.created_at == datetime(2026, 1, 1, tzinfo=UTC)
        assert [(event.name, event.call_id, event.success) for event in invoked] == [
            ("get_weather", "call_weather_lisbon", True),
            ("get_weather", "call_weather_porto", True),
            ("convert_currency", "call_eur_usd", True),
        ]
        assert [event.rendered_output for event in invoked] == [
            json.dumps({"city": "Lisbon", "sky": "sunny", "celsius": 24}, separators=(",", ":")),
            json.dumps({"city": "Porto", "sky": "cloudy", "celsius": 19}, separators=(",", ":")),
            '{"amount":216,"currency":"USD"}',
        ]
        session_ids = [rendered.session_id, *(event.session_id for event in invoked)]
        assert [*session_ids, executed.session_id] == [session.session_id] * 5
        assert (executed.text, executed.tool_call_count, executed.rounds, executed.halted) == (
            FINAL_TEXT,
            3,
            2,
            False,
        )
        assert executed.usage == response.usage
        assert response.evaluation_id == "eval-1"

    def test_failed_call_is_published_with_empty_rendered_output(
        self, openai_loopback: OpenAILoopback, bus: InProcessEventBus, session: Session
    ) -> None:
        """ToolInvoked fires for a raising handler too, with ``""`` as its rendered output."""
        openai_loopback.reply(ok(load_response("hotel_call")), ok(load_response("final_answer")))
        openai_loopback.adapter().evaluate(trip_prompt(), TRIP, bus=bus, session=session)
        (event,) = session.select(ToolInvoked)
        assert (event.name, event.success, event.rendered_output) == ("book_hotel", False, "")
        assert isinstance(event.exception, RuntimeError)


class TestStructuredOutput:
    def test_object_output_requests_json_schema_and_parses_the_answer(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """``Prompt[Itinerary]`` sends a strict json_schema format and returns an Itinerary."""
        openai_loopback.reply(ok(load_response("itinerary_answer")))
        prompt = Prompt[Itinerary](
            ns="travel",
            key="itinerary",
            sections=[
                MarkdownSection[TripParams](
                    title="Task", key="task", template="Plan a ${nights}-night trip to ${city}."
                )
            ],
        )
        response = openai_loopback.adapter().evaluate(prompt, TRIP)
        assert openai_loopback.bodies[0]["text"] == {
            "format": {
                "type": "json_schema",
                "name": "Itinerary",
                "schema": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string"},
                        "days": {"type": "integer"},
                        "highlights": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["city", "days", "highlights"],
                    "additionalProperties": False,
                },
                "strict": True,
            }
        }
        assert response.output == Itinerary(
            city="Lisbon", days=2, highlights=["Belém Tower", "Alfama"]
        )
        assert response.text == (
            '{"city": "Lisbon", "days": 2, "highlights": ["Belém Tower", "Alfama"]}'
        )

    def test_list_output_is_wrapped_in_an_items_object(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """``Prompt[list[Stop]]`` asks for ``{"items": [...]}`` and returns the list."""
        openai_loopback.reply(ok(load_response("stops_answer")))
        prompt = Prompt[list[Stop]](
            ns="travel",
            key="stops",
            sections=[MarkdownSection(title="Task", key="task", template="List the stops.")],
        )
        response = openai_loopback.adapter().evaluate(prompt)
        text_format = openai_loopback.bodies[0]["text"]["format"]
        assert (text_format["name"], text_format["strict"]) == ("Stop_list", True)
        assert text_format["schema"]["required"] == ["items"]
        assert text_format["schema"]["properties"]["items"]["items"]["required"] == [
            "name",
            "hours",
        ]
        assert response.output == [Stop(name="Belém Tower", hours=2), Stop(name="Alfama", hours=3)]

    def test_refusal_of_a_structured_answer_is_a_parse_error(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A refusal part instead of JSON fails with phase ``parse`` and the refusal text."""
        openai_loopback.reply(ok(load_response("refusal")))
        prompt = Prompt[Itinerary](
            ns="travel",
            key="itinerary",
            sections=[MarkdownSection(title="Task", key="task", template="Plan it.")],
        )
        with pytest.raises(PromptEvaluationError, match="the model refused to answer") as caught:
            openai_loopback.adapter().evaluate(prompt)
        assert caught.value.phase == "parse"
        assert caught.value.provider_payload == {"refusal": "I can't help with planning that trip."}

    def test_refusal_without_structured_output_becomes_the_text(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """For a text prompt the refusal is the answer the caller sees."""
        openai_loopback.reply(ok(load_response("refusal")))
        response = openai_loopback.adapter().evaluate(trip_prompt(()), TRIP)
        assert response.text == "I can't help with planning that trip."
