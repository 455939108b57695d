"""The Anthropic adapter over real HTTP: requests it sends and how it reads replies.

The official ``anthropic`` SDK talks to the loopback server, which plays Messages API
bodies built by ``tests.adapters.anthropic.bodies`` in the shapes the SDK's types document.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.adapters.anthropic.bodies import (
    message,
    root_url,
    server_tool_use,
    text,
    tool_use,
    usage,
)
from tests.adapters.conftest import OpenAILoopback, ok
from tests.adapters.openai.test_responses import (
    CURRENCY,
    HOTEL,
    LISBON_OUTPUT,
    TRIP,
    WEATHER,
    trip_prompt,
)
from weakincentives.adapters import Adapter, LoopSettings
from weakincentives.adapters.anthropic import AnthropicAdapter, AnthropicMessages
from weakincentives.errors import (
    ConfigValidationError,
    PromptEvaluationError,
    ResponseTruncatedError,
)
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.runtime import TokenUsage
from weakincentives.serde import JSONValue
from weakincentives.tools import CodeInterpreterConfig, code_interpreter_tool, web_search_tool

anthropic = pytest.importorskip("anthropic")

RENDERED = "## 1 Task\nPlan a 2-night trip to Lisbon."
PROMPT_MESSAGE: dict[str, JSONValue] = {
    "role": "user",
    "content": [{"type": "text", "text": RENDERED}],
}


def claude(
    loopback: OpenAILoopback, *, settings: LoopSettings | None = None, **kwargs: Any
) -> Adapter[AnthropicMessages]:
    model = "claude-test"
    if "client" in kwargs:
        return Adapter(AnthropicMessages(model=model, **kwargs), settings=settings)
    provider = AnthropicMessages(
        model=model,
        base_url=root_url(loopback),
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
    score: int = field(default=5, metadata={"ge": 0, "le": 10})


@dataclass(frozen=True, slots=True)
class Labels:
    labels: dict[str, str]


def verdict_prompt(*hosted: Any) -> Prompt[Verdict]:
    return Prompt[Verdict](
        ns="claude",
        key="verdict",
        sections=[MarkdownSection(title="Task", template="Approve?", hosted_tools=hosted)],
    )


class TestRequests:
    def test_first_request_carries_model_cap_prompt_and_tools(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The prompt is the user message; tools carry their JSON schema as input_schema."""
        openai_loopback.reply(ok(message(text("Sunny."))))
        response = claude(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.text == "Sunny."
        (request,) = openai_loopback.requests
        assert (request.method, request.path) == ("POST", "/v1/messages")
        # The key goes in x-api-key or as a bearer token, depending on the SDK version.
        credential = request.headers.get("x-api-key") or request.headers.get("authorization")
        assert credential in {"test-key", "Bearer test-key"}
        assert "anthropic-version" in request.headers
        assert request.body == {
            "model": "claude-test",
            "max_tokens": 4096,
            "messages": [PROMPT_MESSAGE],
            "tools": [
                {
                    "name": "get_weather",
                    "description": "Get the weather forecast for a city.",
                    "input_schema": WEATHER.spec.parameters_schema,
                }
            ],
        }

    def test_parallel_calls_run_and_results_answer_in_one_user_message(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Results are tool_result blocks (is_error for the failing handler), in call order."""
        calls = message(
            text("Checking."),
            tool_use("toolu_1", "get_weather", {"city": "Lisbon"}),
            tool_use("toolu_2", "book_hotel", {"city": "Lisbon", "nights": 2}),
        )
        openai_loopback.reply(ok(calls), ok(message(text("No rooms, but sunny."))))
        response = claude(openai_loopback).evaluate(trip_prompt((WEATHER, HOTEL)), TRIP)
        assert response.text == "No rooms, but sunny."
        assert [e.result.success for e in response.tool_executions] == [True, False]
        second = openai_loopback.bodies[1]["messages"]
        assert second[0] == PROMPT_MESSAGE
        assert second[1] == {"role": "assistant", "content": calls["content"]}
        results = second[2]["content"]
        assert second[2]["role"] == "user"
        assert results[0] == {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": LISBON_OUTPUT,
            "is_error": False,
        }
        assert results[1]["tool_use_id"] == "toolu_2"
        assert results[1]["is_error"] is True
        assert "no rooms left in Lisbon" in results[1]["content"]

    def test_structured_output_asks_for_json_in_anthropics_schema_subset(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """output_config.format carries the schema; unsupported limits move to descriptions."""
        openai_loopback.reply(ok(message(text('{"approved": true, "reason": "fine", "score": 5}'))))
        response = claude(openai_loopback).evaluate(verdict_prompt())
        assert response.output == Verdict(approved=True, reason="fine", score=5)
        assert openai_loopback.bodies[0]["output_config"] == {
            "format": {
                "type": "json_schema",
                "schema": {
                    "type": "object",
                    "properties": {
                        "approved": {"type": "boolean"},
                        "reason": {"type": "string"},
                        "score": {
                            "type": "integer",
                            "description": "Constraints: minimum=0, maximum=10",
                        },
                    },
                    "required": ["approved", "reason", "score"],
                    "additionalProperties": False,
                },
            }
        }

    @pytest.mark.parametrize(
        "case", ["web-search", "prompt-mode", "not-strict"], ids=lambda case: case
    )
    def test_json_outputs_are_left_out_where_they_cannot_be_honoured(
        self, openai_loopback: OpenAILoopback, case: str
    ) -> None:
        """With web search (citations), output_format='prompt' or a schema outside the subset,
        the answer shape is only in the prompt text, and the answer is still validated."""
        prompt: Prompt[Any] = verdict_prompt()
        kwargs: dict[str, Any] = {}
        answer = '{"approved": true, "reason": "ok"}'
        if case == "web-search":
            prompt = verdict_prompt(web_search_tool())
        elif case == "prompt-mode":
            kwargs["output_format"] = "prompt"
        else:
            prompt = Prompt[Labels](
                ns="claude", key="labels", sections=[MarkdownSection(title="T", template="Tag.")]
            )
            answer = '{"labels": {"a": "b"}}'
        openai_loopback.reply(ok(message(text(answer))))
        response = claude(openai_loopback, **kwargs).evaluate(prompt)
        assert response.output is not None
        body = openai_loopback.bodies[0]
        assert "output_config" not in body
        assert "## Response format" in body["messages"][0]["content"][0]["text"]

    def test_request_options_are_merged(self, openai_loopback: OpenAILoopback) -> None:
        """Options reach the body; their tools follow the prompt's, output_config keeps its
        other settings and max_tokens replaces the loop's cap."""
        openai_loopback.reply(ok(message(text('{"approved": true, "reason": "ok"}'))))
        extra_tool: dict[str, JSONValue] = {"type": "bash_20250124", "name": "bash"}
        options: dict[str, JSONValue] = {
            "temperature": 0,
            "system": "Be brief.",
            "max_tokens": 512,
            "tools": [extra_tool],
            "output_config": {"effort": "low"},
        }
        claude(openai_loopback, request_options=options).evaluate(verdict_prompt())
        body = openai_loopback.bodies[0]
        assert (body["temperature"], body["system"], body["max_tokens"]) == (0, "Be brief.", 512)
        assert body["tools"] == [extra_tool]
        assert body["output_config"]["effort"] == "low"
        assert body["output_config"]["format"]["type"] == "json_schema"

    def test_code_execution_files_and_container_reach_the_request(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """file_ids become container_upload blocks; container_id the request's container."""
        tool = code_interpreter_tool(
            CodeInterpreterConfig(allowed_languages=("python", "bash"), file_ids=("file_1",))
        )
        prompt = Prompt(
            ns="claude",
            key="code",
            sections=[MarkdownSection(title="T", template="Analyse.", hosted_tools=(tool,))],
        )
        openai_loopback.reply(ok(message(text("Done."))))
        claude(openai_loopback).evaluate(prompt)
        body = openai_loopback.bodies[0]
        assert body["tools"] == [{"type": "code_execution_20250825", "name": "code_execution"}]
        assert body["messages"][0]["content"][1] == {
            "type": "container_upload",
            "file_id": "file_1",
        }
        assert "container" not in body

    def test_an_existing_container_is_named_in_every_request(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """CodeInterpreterConfig.container_id becomes the request's container field."""
        config = CodeInterpreterConfig(allowed_languages=("bash", "python"), container_id="ctr_7")
        prompt = Prompt(
            ns="claude",
            key="code",
            sections=[
                MarkdownSection(
                    title="T", template="Go.", hosted_tools=(code_interpreter_tool(config),)
                )
            ],
        )
        openai_loopback.reply(ok(message(text("Done."))))
        claude(openai_loopback).evaluate(prompt)
        body = openai_loopback.bodies[0]
        assert body["container"] == "ctr_7"
        assert body["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": "## 1 T\nGo."}]}
        ]

    def test_a_container_used_in_one_round_is_reused_in_the_next(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Files written by code in round 1 stay visible to the model in round 2."""
        tool = code_interpreter_tool(CodeInterpreterConfig(allowed_languages=("python", "bash")))
        prompt = Prompt(
            ns="claude",
            key="code",
            sections=[
                MarkdownSection(title="T", template="Go.", hosted_tools=(tool,), tools=(WEATHER,))
            ],
        )
        first = message(
            tool_use("toolu_1", "get_weather", {"city": "Lisbon"}),
            container={"id": "container_abc", "expires_at": "2026-01-01T00:00:00Z"},
        )
        openai_loopback.reply(ok(first), ok(message(text("Done."))))
        claude(openai_loopback).evaluate(prompt)
        assert "container" not in openai_loopback.bodies[0]
        assert openai_loopback.bodies[1]["container"] == "container_abc"


class TestReplies:
    def test_usage_counts_cache_reads_and_writes_as_input(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """input = input_tokens + cache reads + cache writes; each cache count kept apart."""
        counts = usage(50, 10, cache_read=400, cache_write=100)
        counts["output_tokens_details"] = {"thinking_tokens": 4}
        openai_loopback.reply(ok(message(text("Hi."), usage_=counts)))
        response = claude(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.usage == TokenUsage(
            input_tokens=550,
            output_tokens=10,
            cached_input_tokens=400,
            reasoning_tokens=4,
            cache_write_tokens=100,
        )

    def test_a_paused_turn_is_continued_within_the_round(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """pause_turn: the paused content goes back as the assistant message; one round."""
        paused = message(
            text("Searching. "),
            server_tool_use("srvtoolu_1", "web_search", {"query": "lisbon weather"}),
            stop_reason="pause_turn",
            usage_=usage(100, 10),
        )
        finished = message(text("Sunny."), usage_=usage(150, 5))
        openai_loopback.reply(ok(paused), ok(finished))
        prompt = Prompt(
            ns="claude",
            key="search",
            sections=[
                MarkdownSection(title="T", template="Go.", hosted_tools=(web_search_tool(),))
            ],
        )
        response = claude(openai_loopback).evaluate(prompt)
        assert response.text == "Searching. Sunny."
        assert response.rounds == 1
        assert response.usage.input_tokens == 250
        continued = openai_loopback.bodies[1]["messages"]
        assert continued[-1] == {"role": "assistant", "content": paused["content"]}
        assert len(continued) == 2

    def test_a_paused_turn_keeps_its_code_execution_container(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The continuation names the container the paused part ran code in, so the files
        it wrote are still there when the turn goes on."""
        container: dict[str, JSONValue] = {
            "id": "container_011CZ",
            "expires_at": "2026-01-01T00:05:00Z",
        }
        paused = message(
            text("Running. "),
            server_tool_use("srvtoolu_1", "code_execution", {"code": "open('a','w')"}),
            stop_reason="pause_turn",
            container=container,
        )
        openai_loopback.reply(ok(paused), ok(message(text("Done."))))
        prompt = Prompt(
            ns="claude",
            key="code",
            sections=[
                MarkdownSection(
                    title="T",
                    template="Go.",
                    hosted_tools=(
                        code_interpreter_tool(
                            CodeInterpreterConfig(allowed_languages=("python", "bash"))
                        ),
                    ),
                )
            ],
        )
        response = claude(openai_loopback).evaluate(prompt)
        assert response.text == "Running. Done."
        first, continued = openai_loopback.bodies
        assert "container" not in first
        assert continued["container"] == "container_011CZ"

    def test_a_turn_paused_too_often_is_an_error(self, openai_loopback: OpenAILoopback) -> None:
        """After the continuation limit the evaluation fails instead of looping forever."""
        paused = message(text("."), stop_reason="pause_turn")
        openai_loopback.reply(*(ok(paused) for _ in range(9)))
        with pytest.raises(PromptEvaluationError, match="paused the turn 9 times") as caught:
            claude(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert caught.value.phase == "response"
        assert len(openai_loopback.requests) == 9

    def test_max_tokens_is_a_truncation(self, openai_loopback: OpenAILoopback) -> None:
        """stop_reason max_tokens raises ResponseTruncatedError with the cap sent."""
        openai_loopback.reply(ok(message(text('{"approved": tr'), stop_reason="max_tokens")))
        adapter = claude(openai_loopback, settings=LoopSettings(max_output_tokens=64))
        with pytest.raises(ResponseTruncatedError) as caught:
            adapter.evaluate(verdict_prompt())
        assert caught.value.limit == 64
        assert caught.value.reason.startswith("the reply was cut off at the output-token limit")

    def test_a_refusal_where_output_was_expected_is_a_parse_error(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The explanation and category come from stop_details."""
        refused = message(
            text("I"),
            stop_reason="refusal",
            stop_details={"type": "refusal", "category": "cyber", "explanation": "Not this."},
        )
        openai_loopback.reply(ok(refused))
        with pytest.raises(PromptEvaluationError) as caught:
            claude(openai_loopback).evaluate(verdict_prompt())
        assert caught.value.phase == "parse"
        assert caught.value.reason == "the model refused to answer: Not this. (category 'cyber')"

    def test_a_refusal_of_a_text_prompt_is_a_response_error(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A reply the classifier stopped midway is not an answer, even for text prompts."""
        openai_loopback.reply(ok(message(text("Sure, here"), stop_reason="refusal")))
        with pytest.raises(PromptEvaluationError) as caught:
            claude(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert caught.value.phase == "response"
        assert caught.value.reason == (
            "the model refused to answer: Anthropic's safety classifiers stopped the reply"
        )

    @pytest.mark.parametrize(
        ("stop", "reason"),
        [
            (
                "model_context_window_exceeded",
                "the conversation no longer fits in the model's context window; shorten the "
                "prompt or the tool outputs (stop_reason 'model_context_window_exceeded')",
            ),
            (
                "compaction",
                "the reply ended for a reason this adapter does not know "
                "(stop_reason 'compaction')",
            ),
            (
                ["end_turn"],
                "the reply ended for a reason this adapter does not know "
                "(stop_reason ['end_turn'])",
            ),
            (
                {"reason": "end_turn"},
                "the reply ended for a reason this adapter does not know "
                "(stop_reason {'reason': 'end_turn'})",
            ),
        ],
    )
    def test_other_stops_are_response_errors(
        self, openai_loopback: OpenAILoopback, stop: JSONValue, reason: str
    ) -> None:
        """Stops that are not an answer say why."""
        openai_loopback.reply(ok({**message(text("x")), "stop_reason": stop}))
        with pytest.raises(PromptEvaluationError) as caught:
            claude(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert caught.value.phase == "response"
        assert caught.value.reason == reason

    @pytest.mark.parametrize(
        ("body", "reason"),
        [
            (
                {"type": "message", "content": "hi"},
                "cannot interpret the provider's reply: 'content' is not a list",
            ),
            (
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                "the provider reported an error: Overloaded",
            ),
            (
                {"type": "message", "content": [1], "stop_reason": "end_turn"},
                "cannot interpret the provider's reply: content[0] is not an object",
            ),
            (
                {"type": "message", "content": [{"type": "text"}], "stop_reason": "end_turn"},
                "cannot interpret the provider's reply: content[0] (text) has no text",
            ),
            (
                {
                    "type": "message",
                    "content": [
                        {"type": "tool_use", "id": "t", "name": "get_weather", "input": "x"}
                    ],
                    "stop_reason": "tool_use",
                },
                "cannot interpret the provider's reply: content[0] (tool_use) needs a string id "
                "and name and an input object",
            ),
            (
                {"type": "message", "content": [{"type": ["text"]}], "stop_reason": "end_turn"},
                "cannot interpret the provider's reply: content[0] has no string type",
            ),
        ],
    )
    def test_shapes_the_adapter_cannot_read_are_response_errors(
        self, openai_loopback: OpenAILoopback, body: dict[str, JSONValue], reason: str
    ) -> None:
        """Each problem says what was wrong; the body is the payload."""
        openai_loopback.reply(ok(body))
        with pytest.raises(PromptEvaluationError) as caught:
            claude(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert caught.value.phase == "response"
        assert caught.value.reason == reason
        assert caught.value.provider_payload == body

    def test_a_server_tool_named_with_a_list_is_kept_as_a_hosted_item(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A name that is not a string is no tool search (looking it up once raised TypeError)."""
        odd: dict[str, JSONValue] = {
            "type": "server_tool_use",
            "id": "srv_1",
            "name": ["web_search"],
            "input": {},
        }
        openai_loopback.reply(ok(message(odd, text("Sunny."))))
        response = claude(openai_loopback).evaluate(trip_prompt((WEATHER,)), TRIP)
        assert response.text == "Sunny."

    def test_a_tool_the_model_invents_is_a_failed_result_not_a_crash(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The loop's usual handling applies to Anthropic calls too."""
        openai_loopback.reply(
            ok(message(tool_use("toolu_9", "teleport", {}))), ok(message(text("Sorry.")))
        )
        response = claude(openai_loopback).evaluate(trip_prompt((WEATHER, CURRENCY)), TRIP)
        assert response.tool_results[0].success is False
        assert openai_loopback.bodies[1]["messages"][2]["content"][0]["is_error"] is True


class TestConfiguration:
    def test_properties_describe_the_adapter(self) -> None:
        """Name, model, client and the default codecs."""
        adapter = AnthropicAdapter(model="claude-x", api_key="k", base_url="http://h")
        assert (adapter.name, adapter.provider.model) == ("anthropic", "claude-x")
        assert sorted(adapter.provider.hosted_tool_codecs) == ["code_interpreter", "web_search"]
        assert isinstance(adapter.provider.sdk_client, anthropic.Anthropic)

    def test_request_options_the_adapter_owns_are_refused(self) -> None:
        """Reserved and wrongly typed options are named together."""
        options: dict[str, JSONValue] = {"messages": [], "stream": True, "output_config": []}
        with pytest.raises(ConfigValidationError) as caught:
            AnthropicAdapter(model="m", api_key="k", request_options=options)
        assert caught.value.field_name == "request_options"
        for key in ("'messages'", "'stream'", "'output_config'"):
            assert key in str(caught.value)

    def test_bad_arguments_are_refused(self) -> None:
        """Blank model, unknown output format and foreign clients are configuration errors."""
        with pytest.raises(ConfigValidationError, match="AnthropicMessages model"):
            AnthropicAdapter(model="", api_key="k")
        with pytest.raises(ConfigValidationError, match="'json_schema', 'prompt'"):
            AnthropicAdapter(model="m", api_key="k", output_format="xml")  # type: ignore[arg-type]  # the wrong value is the point
        with pytest.raises(ConfigValidationError, match=r"anthropic\.Anthropic or"):
            AnthropicAdapter(model="m", client=object())  # type: ignore[arg-type]  # the wrong type is the point

    def test_missing_sdk_is_an_import_error_naming_the_extra(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The install command is in the message."""
        monkeypatch.setitem(sys.modules, "anthropic", None)
        with pytest.raises(ImportError, match=r"weakincentives\[anthropic\]"):
            AnthropicAdapter(model="m", api_key="k")

    def test_a_missing_key_is_refused_when_the_adapter_is_built(self) -> None:
        """The SDK would only fail at the first request, with a bare TypeError."""
        with pytest.raises(ConfigValidationError, match="ANTHROPIC_API_KEY") as caught:
            AnthropicAdapter(model="m", base_url="http://127.0.0.1:9")
        assert caught.value.field_name == "api_key"
