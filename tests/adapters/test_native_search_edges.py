"""Edge cases of native tool search: odd arguments, odd items, names, and mode changes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.adapters.conftest import response_body
from tests.adapters.test_tool_search import (
    answer,
    catalogue_prompt,
    namespaced_call,
    search_call,
    turn_request,
)
from weakincentives.adapters import (
    AssistantMessage,
    ModelTurn,
    OfflineAdapter,
    PromptMessage,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
)
from weakincentives.adapters._history import native_calls
from weakincentives.adapters._native_search import search_arguments
from weakincentives.adapters.anthropic import AnthropicMessages
from weakincentives.adapters.openai import OpenAIResponses
from weakincentives.adapters.openai._tool_search import read_native_call
from weakincentives.discovery import (
    IdAccessPolicy,
    ToolCatalog,
    ToolDiscovery,
    ToolDiscoverySection,
)
from weakincentives.discovery._deferred import wire_name
from weakincentives.errors import HistoryTranslationError, PromptEvaluationError
from weakincentives.prompt import DeferredTools
from weakincentives.runtime import ToolCall
from weakincentives.serde import JSONValue

pytest.importorskip("openai")
pytest.importorskip("anthropic")


def _offer() -> DeferredTools:
    offer = catalogue_prompt().render().deferred_tools
    assert offer is not None
    return offer


OFFER = _offer()


class TestArguments:
    def test_malformed_arguments_of_a_loaded_tool_fail_the_call_with_a_message(self) -> None:
        """Text that is not a JSON object reaches call_tool as it is and fails there."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(ScriptedCall(name="search_tool_by_category", arguments="not json"),)
                ),
                ScriptedTurn(calls=(ScriptedCall(name="weather_forecast", arguments="not json"),)),
                ScriptedTurn(text="Gave up."),
            ],
            tool_search="client",
        )
        response = adapter.evaluate(catalogue_prompt())
        search, call = response.tool_executions
        assert search.result.success is False
        assert json.loads(str(call.call.arguments)) == {
            "tool_id": "weather.forecast",
            "arguments": "not json",
        }
        assert call.result.success is False
        assert "arguments" in call.result.message

    @pytest.mark.parametrize(
        ("arguments", "expected"),
        [
            ({"query": "x"}, {"query": "x"}),
            ('{"query": "y"}', {"query": "y"}),
            ("[1]", {}),
            ("{", {}),
        ],
    )
    def test_search_arguments_are_an_object_or_empty(
        self, arguments: Any, expected: dict[str, str]
    ) -> None:
        """A search call's arguments become an object for the wires that need one."""
        call = ToolCall(call_id="c", name="search_tool_by_category", arguments=arguments)
        assert search_arguments(call) == expected


class TestReading:
    @pytest.mark.parametrize(
        "item",
        [
            {"type": "tool_search_call", "execution": "client", "arguments": {}},
            {**search_call("s", "q", "server")},
            {"type": "function_call", "call_id": "c", "name": "weather_forecast", "arguments": {}},
            {"type": "function_call", "call_id": "c", "name": "lookup", "arguments": "{}"},
            {"type": "message", "call_id": "c"},
        ],
    )
    def test_items_that_are_not_native_calls_are_left_alone(self, item: Any) -> None:
        """No call id, a server search, non-text arguments, an undeferred name: not ours."""
        assert read_native_call(item, OFFER, None) is None

    def test_a_client_search_with_odd_arguments_searches_with_none(self) -> None:
        """Arguments that are not an object are read as an empty object."""
        item = {**search_call("s", "q"), "arguments": "rain"}
        call = read_native_call(item, OFFER, "resp_1")
        assert call is not None
        assert (call.name, call.arguments, call.parent_message_id) == (
            "search_tool_by_category",
            "{}",
            "resp_1",
        )

    def test_a_malformed_tool_use_of_a_deferred_tool_is_a_response_error(self) -> None:
        """The deferred reading declines it; the ordinary reading names what is wrong."""
        provider = AnthropicMessages(model="c", api_key="k")
        reply: dict[str, JSONValue] = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "weather_forecast", "input": 3}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        request = turn_request(catalogue_prompt().render(), (PromptMessage(text="Go."),))
        with pytest.raises(PromptEvaluationError, match=r"content\[0\] \(tool_use\) needs"):
            provider.read_turn((reply,), {}, request)
        provider.close()


class TestNativeCalls:
    @pytest.mark.parametrize(
        "arguments",
        [
            {"tool_id": 7},
            {"tool_id": "weather.forecast", "arguments": [1]},
            {"tool_id": "weather.alerts", "arguments": {}},
            {"tool_id": "finance.quote", "arguments": {}},
        ],
    )
    def test_call_tool_without_a_loadable_tool_is_refused(self, arguments: Any) -> None:
        """A bad id, bad arguments, an uncallable tool or one never loaded has no native form."""
        turn = ModelTurn(
            tool_calls=(ToolCall(call_id="c", name="call_tool", arguments=json.dumps(arguments)),),
            raw_format="openai-chat",
        )
        with pytest.raises(HistoryTranslationError, match="no search loaded") as caught:
            native_calls(
                turn,
                OFFER,
                loaded={"weather.forecast", "weather.alerts"},
                prompt_name="p",
                target_format="anthropic-messages",
            )
        assert caught.value.target_format == "anthropic-messages with native tool search"
        assert caught.value.source_format == "openai-chat"

    def test_an_ordinary_call_in_a_foreign_turn_stays_a_function_call(self) -> None:
        """Calls of the prompt's own tools keep their name and get no namespace."""
        turn = ModelTurn(
            text="Looking.",
            tool_calls=(ToolCall(call_id="c1", name="lookup", arguments='{"a": 1}'),),
            raw_format="openai-chat",
        )
        history = (
            PromptMessage(text="Go."),
            AssistantMessage(turn=turn),
            ToolOutputMessage(call_id="c1", name="lookup", content="found", success=True),
        )
        provider = OpenAIResponses(model="g", api_key="k")
        body: Any = provider.build_request(turn_request(catalogue_prompt().render(), history))
        provider.close()
        assert body["input"][1:3] == [
            {"type": "message", "role": "assistant", "content": "Looking."},
            {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"a": 1}'},
        ]


class TestNames:
    def test_names_are_kept_when_safe_and_spelled_safely_otherwise(self) -> None:
        """Unsafe characters become _, long or taken names get a digest, empty ones a stem."""
        taken: set[str] = set()
        assert wire_name("get_weather", taken) == "get_weather"
        assert wire_name("Weather.get forecast", taken) == "Weather_get_forecast"
        again = wire_name("Weather get.forecast", taken)
        assert again.startswith("Weather_get_forecast_")
        assert len(again) == len("Weather_get_forecast_") + 10
        long = wire_name("x" * 100, taken)
        assert len(long) == 64
        assert long.startswith("x" * 53 + "_")
        assert wire_name("...", taken).startswith("tool_")
        assert len(taken) == 5

    def test_a_digest_collision_is_salted(self) -> None:
        """Even a name whose digested form is taken gets a free one."""
        first = wire_name("a.b", {"a_b"})
        assert first.startswith("a_b_")
        taken = {"a_b", first}
        second = wire_name("a.b", taken)
        assert second not in {"a_b", first}
        assert second.startswith("a_b_")
        assert len(second) == len(first)

    def test_a_catalogue_with_nothing_callable_is_not_offered(self) -> None:
        """Every tool hidden or uncallable: nothing to defer, the five tools stay."""
        catalog = ToolCatalog.from_records(
            [
                {"tool_id": "a.b", "name": "b", "path": ["A"]},
                {"tool_id": "a.c", "name": "c", "path": ["A"]},
            ]
        )
        access = IdAccessPolicy(hidden=frozenset({"a.b"}), uncallable=frozenset({"a.c"}))
        assert ToolDiscoverySection(ToolDiscovery(catalog, access=access)).deferred_tools() is None


class TestModeChanges:
    def test_an_openai_server_search_continued_with_search_off_is_rebuilt(self) -> None:
        """Without native search the server's items are left out; the call is call_tool."""
        rendered = catalogue_prompt().render()
        reply = response_body(
            {**search_call("x", "forecast", "server"), "call_id": None},
            namespaced_call("c1", "weather_forecast", "Weather", city="Porto"),
            answer("Checking."),
        )
        source = OpenAIResponses(model="g", api_key="k", tool_search="server")
        turn = source.read_turn(reply, {}, turn_request(rendered, (PromptMessage(text="Go."),)))
        history = (
            PromptMessage(text="Go."),
            AssistantMessage(turn=turn),
            ToolOutputMessage(call_id="c1", name="call_tool", content="Rain.", success=True),
        )
        off = OpenAIResponses(model="g", api_key="k", tool_search="off")
        body: Any = off.build_request(turn_request(rendered, history))
        kinds = [item.get("type") for item in body["input"]]
        assert kinds == [None, "message", "function_call", "function_call_output"]
        assert body["input"][2]["name"] == "call_tool"
        for provider in (source, off):
            provider.close()

    def test_an_anthropic_server_search_continued_with_search_off_is_rebuilt(self) -> None:
        """Anthropic's own search blocks do not replay where nothing is deferred."""
        rendered = catalogue_prompt().render()
        blocks: list[JSONValue] = [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "tool_search_tool_bm25",
                "input": {"query": "forecast"},
            },
            {
                "type": "tool_search_tool_result",
                "tool_use_id": "srvtoolu_1",
                "content": {"type": "tool_search_tool_search_result", "tool_references": []},
            },
        ]
        reply: dict[str, JSONValue] = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [*blocks, {"type": "text", "text": "Nothing found."}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        source = AnthropicMessages(model="c", api_key="k", tool_search="bm25")
        turn = source.read_turn((reply,), {}, turn_request(rendered, (PromptMessage(text="Go."),)))
        assert turn.untranslatable == ()  # the search's blocks have a neutral form: none
        off = AnthropicMessages(model="c", api_key="k", tool_search="off")
        history = (
            PromptMessage(text="Go."),
            AssistantMessage(turn=turn),
            PromptMessage(text="On."),
        )
        claude_body: Any = off.build_request(turn_request(rendered, history))
        assert claude_body["messages"][1] == {
            "role": "assistant",
            "content": [{"type": "text", "text": "Nothing found."}],
        }
        for provider in (source, off):
            provider.close()
