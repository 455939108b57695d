"""The Chat Completions adapter over real HTTP: requests it sends and how it reads replies.

The official SDK talks to the loopback server, which plays ``chat.completion`` bodies
built by ``chat_bodies`` in the shapes the SDK's types document.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import pytest

from tests.adapters.conftest import OpenAILoopback, ok
from tests.adapters.openai.chat_bodies import chat_call, chat_usage, completion
from tests.adapters.openai.test_responses import (
    CURRENCY,
    HOTEL,
    LISBON_OUTPUT,
    TAGS,
    TRIP,
    WEATHER,
    trip_prompt,
)
from weakincentives.adapters import Adapter, LoopSettings
from weakincentives.adapters.openai import ChatCompletions, ChatCompletionsAdapter
from weakincentives.errors import (
    ConfigValidationError,
    PromptEvaluationError,
    ResponseTruncatedError,
)
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.runtime import TokenUsage
from weakincentives.serde import JSONValue
from weakincentives.tools import web_search_tool

openai = pytest.importorskip("openai")

RENDERED = "## 1 Task\nPlan a 2-night trip to Lisbon."


def chat_adapter(
    loopback: OpenAILoopback, *, settings: LoopSettings | None = None, **kwargs: Any
) -> Adapter[ChatCompletions]:
    model = "gpt-test"
    if "client" in kwargs:
        return Adapter(ChatCompletions(model=model, **kwargs), settings=settings)
    provider = ChatCompletions(
        model=model,
        base_url=loopback.base_url,
        api_key="test-key",
        max_retries=0,
        timeout=10.0,
        **kwargs,
    )
    return Adapter(provider, settings=settings)


@dataclass(frozen=True, slots=True)
class Verdict:
    approved: bool
    reason: str


def verdict_prompt() -> Prompt[Verdict]:
    return Prompt[Verdict](
        ns="chat", key="verdict", sections=[MarkdownSection(title="Task", template="Approve?")]
    )


WEATHER_TOOL: dict[str, JSONValue] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name, such as Lisbon"}},
            "required": ["city"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


class TestRequests:
    def test_first_request_carries_model_prompt_cap_and_tools(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The prompt is the user message; tools are function tools with their strictness."""
        openai_loopback.reply(ok(completion("Sunny.")))
        response = chat_adapter(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.text == "Sunny."
        (request,) = openai_loopback.requests
        assert (request.method, request.path) == ("POST", "/v1/chat/completions")
        assert request.body == {
            "model": "gpt-test",
            "max_completion_tokens": 4096,
            "messages": [{"role": "user", "content": RENDERED}],
            "tools": [WEATHER_TOOL],
        }

    def test_a_tool_strict_mode_rejects_is_sent_non_strict(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A free-form mapping parameter cannot be strict."""
        openai_loopback.reply(ok(completion("Tagged.")))
        chat_adapter(openai_loopback).evaluate(trip_prompt((TAGS,)), TRIP)
        (tool,) = openai_loopback.bodies[0]["tools"]
        assert tool["function"]["name"] == "tag_trip"
        assert tool["function"]["strict"] is False

    def test_tool_results_go_back_as_tool_messages_after_the_replayed_calls(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Several calls in one message run, and each result answers its call id."""
        calls = [
            chat_call("call_1", "get_weather", '{"city":"Lisbon"}'),
            chat_call("call_2", "convert_currency", '{"amount":200,"source":"EUR","target":"USD"}'),
        ]
        openai_loopback.reply(ok(completion(None, calls=calls)), ok(completion("Done.")))
        response = chat_adapter(openai_loopback).evaluate(trip_prompt((WEATHER, CURRENCY)), TRIP)
        assert [execution.call.name for execution in response.tool_executions] == [
            "get_weather",
            "convert_currency",
        ]
        assert openai_loopback.bodies[1]["messages"] == [
            {"role": "user", "content": RENDERED},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "call_1", "content": LISBON_OUTPUT},
            {
                "role": "tool",
                "tool_call_id": "call_2",
                "content": 'Converted\n\n{"amount":216,"currency":"USD"}',
            },
        ]

    def test_a_failing_handler_reaches_the_model(self, openai_loopback: OpenAILoopback) -> None:
        """The handler's exception becomes the tool message's content."""
        calls = [chat_call("call_h", "book_hotel", '{"city":"Lisbon","nights":2}')]
        openai_loopback.reply(ok(completion(None, calls=calls)), ok(completion("Sorry.")))
        response = chat_adapter(openai_loopback).evaluate(trip_prompt((HOTEL,)), TRIP)
        assert response.tool_results[0].success is False
        tool_message = openai_loopback.bodies[1]["messages"][-1]
        assert tool_message["role"] == "tool"
        assert "no rooms left in Lisbon" in tool_message["content"]

    def test_structured_output_sends_the_json_schema(self, openai_loopback: OpenAILoopback) -> None:
        """response_format carries the output schema, named and strict."""
        openai_loopback.reply(ok(completion('{"approved": true, "reason": "fine"}')))
        response = chat_adapter(openai_loopback).evaluate(verdict_prompt())
        assert response.output == Verdict(approved=True, reason="fine")
        response_format = openai_loopback.bodies[0]["response_format"]
        assert response_format["type"] == "json_schema"
        assert response_format["json_schema"]["name"] == "Verdict"
        assert response_format["json_schema"]["strict"] is True
        assert response_format["json_schema"]["schema"]["required"] == ["approved", "reason"]

    def test_an_empty_answer_is_left_out_of_the_next_request(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The API refuses an assistant message with neither content nor calls, so a turn
        that said nothing is not replayed; the feedback follows the prompt."""
        openai_loopback.reply(
            ok(completion(None)), ok(completion('{"approved": true, "reason": "ok"}'))
        )
        response = chat_adapter(openai_loopback).evaluate(verdict_prompt())
        assert response.output == Verdict(approved=True, reason="ok")
        messages = openai_loopback.bodies[1]["messages"]
        assert [message["role"] for message in messages] == ["user", "user"]
        assert messages[1]["content"].startswith("Your reply was empty")

    @pytest.mark.parametrize(
        ("mode", "expected"),
        [("json_object", {"type": "json_object"}), ("none", None)],
    )
    def test_servers_without_json_schema_get_a_weaker_format(
        self, openai_loopback: OpenAILoopback, mode: str, expected: JSONValue
    ) -> None:
        """The fallback modes still put the answer shape in the prompt and validate it."""
        openai_loopback.reply(ok(completion('```json\n{"approved": false, "reason": "no"}\n```')))
        response = chat_adapter(openai_loopback, response_format=mode).evaluate(verdict_prompt())
        assert response.output == Verdict(approved=False, reason="no")
        body = openai_loopback.bodies[0]
        assert body.get("response_format") == expected
        assert "## Response format" in body["messages"][0]["content"]

    def test_the_token_cap_field_can_be_the_legacy_one(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """token_cap_field='max_tokens' is for servers that only read that field."""
        openai_loopback.reply(ok(completion("Hi.")))
        chat_adapter(openai_loopback, token_cap_field="max_tokens").evaluate(
            trip_prompt((WEATHER,)), TRIP
        )
        body = openai_loopback.bodies[0]
        assert body["max_tokens"] == 4096
        assert "max_completion_tokens" not in body

    @pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
    def test_a_cap_in_request_options_wins(
        self, openai_loopback: OpenAILoopback, field: str
    ) -> None:
        """Either cap field in the options replaces the loop's cap; options reach the body."""
        openai_loopback.reply(ok(completion("Hi.")))
        options: dict[str, JSONValue] = {field: 64, "temperature": 0, "tools": []}
        chat_adapter(openai_loopback, request_options=options).evaluate(
            trip_prompt((WEATHER,)), TRIP
        )
        body = openai_loopback.bodies[0]
        assert body[field] == 64
        assert body["temperature"] == 0
        assert [key for key in ("max_tokens", "max_completion_tokens") if key in body] == [field]

    def test_server_specific_options_reach_the_body(self, openai_loopback: OpenAILoopback) -> None:
        """Options the SDK does not name (llama.cpp's cache_prompt, vLLM's top_k) are sent too."""
        openai_loopback.reply(ok(completion("Hi.")))
        options: dict[str, JSONValue] = {"top_k": 20, "cache_prompt": True, "seed": 7}
        chat_adapter(openai_loopback, request_options=options).evaluate(
            trip_prompt((WEATHER,)), TRIP
        )
        body = openai_loopback.bodies[0]
        assert (body["top_k"], body["cache_prompt"], body["seed"]) == (20, True, 7)

    def test_hosted_tools_are_refused_before_anything_is_sent(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Chat Completions runs no hosted tools: phase render, naming kind and adapter."""
        prompt = Prompt(
            ns="chat",
            key="search",
            sections=[
                MarkdownSection(title="T", template="Search.", hosted_tools=(web_search_tool(),))
            ],
        )
        with pytest.raises(PromptEvaluationError) as caught:
            chat_adapter(openai_loopback).evaluate(prompt)
        assert caught.value.phase == "render"
        assert "kind 'web_search', which the openai-chat adapter does not support" in str(
            caught.value
        )
        assert openai_loopback.requests == []


class TestReplies:
    def test_usage_maps_prompt_completion_cached_and_reasoning_tokens(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """prompt_tokens already include cached ones, as TokenUsage.input_tokens does."""
        usage = chat_usage(500, 40, cached=300, reasoning=12)
        openai_loopback.reply(ok(completion("Hi.", usage=usage)))
        response = chat_adapter(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.usage == TokenUsage(
            input_tokens=500, output_tokens=40, cached_input_tokens=300, reasoning_tokens=12
        )

    def test_length_is_a_truncation(self, openai_loopback: OpenAILoopback) -> None:
        """finish_reason 'length' raises ResponseTruncatedError with the cap."""
        openai_loopback.reply(ok(completion('{"approved": tr', finish_reason="length")))
        with pytest.raises(ResponseTruncatedError) as caught:
            chat_adapter(openai_loopback).evaluate(verdict_prompt())
        assert caught.value.limit == 4096
        assert caught.value.phase == "response"
        assert caught.value.reason == (
            "the reply was cut off at the output-token limit of 4096 tokens; raise "
            "LoopSettings.max_output_tokens or ask for a shorter answer"
        )

    def test_a_stop_at_exactly_the_cap_is_a_truncation_too(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """llama.cpp says 'stop' at the cap; using every allowed token is not a full answer."""
        openai_loopback.reply(ok(completion("Lisbon is", usage=chat_usage(100, 32))))
        adapter = chat_adapter(openai_loopback, settings=LoopSettings(max_output_tokens=32))
        with pytest.raises(ResponseTruncatedError) as caught:
            adapter.evaluate(trip_prompt((WEATHER,)), TRIP)
        assert caught.value.limit == 32
        assert "(the server said finish_reason 'stop')" in caught.value.reason

    def test_content_filter_is_a_response_error(self, openai_loopback: OpenAILoopback) -> None:
        """A withheld reply is not an empty success."""
        openai_loopback.reply(ok(completion(None, finish_reason="content_filter")))
        with pytest.raises(PromptEvaluationError, match="content filter") as caught:
            chat_adapter(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert caught.value.phase == "response"

    def test_a_refusal_where_output_was_expected_is_a_parse_error(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The refusal field surfaces as 'the model refused to answer', phase parse."""
        openai_loopback.reply(ok(completion(None, refusal="I can't help with that.")))
        with pytest.raises(PromptEvaluationError) as caught:
            chat_adapter(openai_loopback).evaluate(verdict_prompt())
        assert caught.value.phase == "parse"
        assert caught.value.reason == "the model refused to answer: I can't help with that."

    def test_decoded_arguments_from_lenient_servers_are_accepted(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """An arguments object (not JSON text) is read and validated like text."""
        call: dict[str, JSONValue] = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Lisbon"}},
        }
        openai_loopback.reply(ok(completion(None, calls=[call])), ok(completion("Sunny.")))
        response = chat_adapter(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.tool_results[0].success is True

    @pytest.mark.parametrize(
        ("body", "reason"),
        [
            ({"id": "x", "choices": []}, "'choices' is not a non-empty list"),
            ({"choices": ["text"]}, "choices[0] is not an object"),
            ({"choices": [{"finish_reason": "stop"}]}, "choices[0].message is not an object"),
            (
                {"choices": [{"message": {"content": 3}, "finish_reason": "stop"}]},
                "choices[0].message.content is not a string or null",
            ),
            (
                {
                    "choices": [
                        {"message": {"content": None, "refusal": 7}, "finish_reason": "stop"}
                    ]
                },
                "choices[0].message.refusal is not a string or null",
            ),
            (
                {"choices": [{"message": {"content": "Hi."}, "finish_reason": ["stop"]}]},
                "choices[0].finish_reason is not a string or null",
            ),
            (
                {"choices": [{"message": {"tool_calls": {}}, "finish_reason": "stop"}]},
                "choices[0].message.tool_calls is not a list",
            ),
            (
                {"choices": [{"message": {"tool_calls": [{"id": "c"}]}, "finish_reason": "stop"}]},
                "choices[0].message.tool_calls[0] needs an id and a function object",
            ),
            (
                {
                    "choices": [
                        {
                            "message": {"tool_calls": [{"id": "c", "function": {"name": 1}}]},
                            "finish_reason": "tool_calls",
                        }
                    ]
                },
                "choices[0].message.tool_calls[0].function needs a string name and arguments",
            ),
        ],
    )
    def test_shapes_the_adapter_cannot_read_are_response_errors(
        self, openai_loopback: OpenAILoopback, body: dict[str, JSONValue], reason: str
    ) -> None:
        """Each problem names the field; the body is kept as the payload."""
        openai_loopback.reply(ok(body))
        with pytest.raises(PromptEvaluationError) as caught:
            chat_adapter(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert caught.value.phase == "response"
        assert caught.value.reason == f"cannot interpret the provider's reply: {reason}"
        assert caught.value.provider_payload == body

    def test_unreadable_usage_counts_as_zero(self, openai_loopback: OpenAILoopback) -> None:
        """Missing or non-integer counts are 0, never a crash."""
        usage: JSONValue = {"prompt_tokens": "many", "completion_tokens": True}
        openai_loopback.reply(ok(completion("Hi.", usage=usage)))
        response = chat_adapter(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.usage == TokenUsage()


class TestConfiguration:
    def test_properties_describe_the_adapter(self) -> None:
        """Name, model and an empty codec registry."""
        adapter = ChatCompletionsAdapter(model="llama", api_key="k", base_url="http://h/v1")
        assert (adapter.name, adapter.provider.model) == ("openai-chat", "llama")
        assert adapter.provider.hosted_tool_codecs == {}
        assert isinstance(adapter.provider.sdk_client, openai.OpenAI)
        assert str(adapter.provider.sdk_client.base_url) == "http://h/v1/"

    def test_request_options_the_adapter_owns_are_refused(self) -> None:
        """Every reserved key and wrongly typed merged key is named in one error."""
        options: dict[str, JSONValue] = {
            "messages": [],
            "n": 2,
            "response_format": {"type": "json_object"},
            "tools": {},
            "stream_options": [],
        }
        with pytest.raises(ConfigValidationError) as caught:
            ChatCompletionsAdapter(model="m", api_key="k", request_options=options)
        assert caught.value.field_name == "request_options"
        message = str(caught.value)
        for key in ("'messages'", "'n'", "'response_format'", "'tools'", "'stream_options'"):
            assert key in message

    @pytest.mark.parametrize(
        ("field", "value"), [("response_format", "xml"), ("token_cap_field", "n_predict")]
    )
    def test_unknown_choices_are_refused(self, field: str, value: str) -> None:
        """The error lists the allowed values."""
        arguments: dict[str, Any] = {field: value}
        with pytest.raises(ConfigValidationError, match="must be one of") as caught:
            ChatCompletionsAdapter(model="m", api_key="k", **arguments)
        assert caught.value.field_name == field

    def test_blank_model_and_foreign_client_are_refused(self) -> None:
        """The same checks as the Responses adapter, naming this adapter."""
        with pytest.raises(ConfigValidationError, match="ChatCompletions model"):
            ChatCompletionsAdapter(model=" ", api_key="k")
        with pytest.raises(ConfigValidationError, match="ChatCompletions client"):
            ChatCompletionsAdapter(model="m", client=object())  # type: ignore[arg-type]  # the wrong type is the point

    def test_missing_key_says_local_servers_accept_any(self) -> None:
        """Without OPENAI_API_KEY the SDK refuses; the message says what to do."""
        with pytest.raises(ConfigValidationError, match="local servers accept any value"):
            ChatCompletionsAdapter(model="m")

    def test_missing_sdk_is_an_import_error_naming_the_extra(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The install command is in the message."""
        monkeypatch.setitem(sys.modules, "openai", None)
        with pytest.raises(ImportError, match=r"weakincentives\[openai\]"):
            ChatCompletionsAdapter(model="m", api_key="k")
