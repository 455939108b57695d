"""A catalogue behind the providers' native tool search, over real HTTP on loopback.

The official SDKs talk to a loopback server replaying Responses and Messages API bodies
in the documented tool-search shapes. Every request the adapter sends is validated
against the SDK's own request TypedDicts, and every canned reply against the SDK's
response models, so the shapes on both sides are the SDK's, not ours.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, cast

import pytest

from tests.adapters.anthropic import bodies as claude_bodies
from tests.adapters.conftest import OpenAILoopback, ok, response_body
from tests.adapters.openai.chat_bodies import completion
from weakincentives.adapters import (
    Adapter,
    AssistantMessage,
    OfflineAdapter,
    PromptMessage,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.adapters._native_search import MAX_DEFERRED_TOOLS
from weakincentives.adapters.anthropic import AnthropicMessages
from weakincentives.adapters.openai import ChatCompletions, OpenAIResponses
from weakincentives.discovery import (
    CallableExecutor,
    CallOutcome,
    CallResponse,
    DiscoveryCalled,
    IdAccessPolicy,
    ToolCatalog,
    ToolDiscovery,
    ToolDiscoverySection,
)
from weakincentives.discovery import _section as discovery_section
from weakincentives.errors import ConfigValidationError, HistoryTranslationError
from weakincentives.prompt import (
    DeferredTools,
    MarkdownSection,
    Prompt,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import InProcessEventBus, Session
from weakincentives.serde import JSONValue

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
pydantic = pytest.importorskip("pydantic")

type Body = dict[str, JSONValue]

FORECAST_SCHEMA: Body = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
RECORDS: list[Mapping[str, object]] = [
    {
        "tool_id": "weather.forecast",
        "name": "forecast",
        "path": ["Weather"],
        "summary": "Rain and temperature for a city",
        "args_schema": FORECAST_SCHEMA,
    },
    {
        "tool_id": "weather.alerts",
        "name": "alerts",
        "path": ["Weather"],
        "summary": "Storm alerts for a region",
        "args_schema": {"type": "object", "properties": {"region": {"type": "string"}}},
    },
    {
        "tool_id": "finance.quote",
        "name": "quote",
        "path": ["Finance", "Stocks"],
        "summary": "Latest share price",
        "args_schema": {"type": "object", "properties": {"symbol": {"type": "string"}}},
    },
    {
        "tool_id": "vault.open",
        "name": "open_vault",
        "path": ["Vault"],
        "summary": "Opens the weather vault",
    },
]
ACCESS = IdAccessPolicy(hidden=frozenset({"vault.open"}), uncallable=frozenset({"weather.alerts"}))
FORECAST_DEFINITION: Body = {
    "type": "function",
    "name": "weather_forecast",
    "description": "Rain and temperature for a city",
    "parameters": FORECAST_SCHEMA,
    "strict": True,
}


def forecast(arguments: Mapping[str, JSONValue]) -> CallOutcome:
    return CallOutcome(success=True, message=f"Rain in {arguments['city']}.", value={"mm": 4})


def catalogue_prompt(**service: Any) -> Prompt[None]:
    discovery = ToolDiscovery(
        ToolCatalog.from_records(RECORDS),
        access=ACCESS,
        executor=CallableExecutor(functions={"weather.forecast": forecast}),
        **service,
    )
    return Prompt(
        ns="tests/tool_search",
        key="weather",
        sections=[
            MarkdownSection(title="Task", template="Will it rain in Lisbon?"),
            ToolDiscoverySection(discovery),
        ],
    )


def sdk_request(module: str, name: str, body: object) -> None:
    """``body`` validates against the SDK's request TypedDict ``module.name``."""
    adapter = pydantic.TypeAdapter(getattr(__import__(module, fromlist=[name]), name))
    adapter.validate_python(body)


def openai_request(body: object) -> None:
    sdk_request(
        "openai.types.responses.response_create_params", "ResponseCreateParamsNonStreaming", body
    )


def anthropic_request(body: object) -> None:
    sdk_request("anthropic.types.message_create_params", "MessageCreateParamsNonStreaming", body)


def openai_reply(body: Body) -> Body:
    """``body``, once the SDK's output item models accept each of its items."""
    items = pydantic.TypeAdapter(openai.types.responses.ResponseOutputItem)
    for item in cast("list[Body]", body["output"]):
        items.validate_python(item)
    return body


def anthropic_reply(body: Body) -> Body:
    """``body``, once the SDK's ``Message`` model accepts it."""
    anthropic.types.Message.model_validate(body)
    return body


def search_call(call_id: str, query: str, execution: str = "client") -> Body:
    return {
        "type": "tool_search_call",
        "id": f"tsc_{call_id}",
        "call_id": call_id,
        "execution": execution,
        "status": "completed",
        "arguments": {"query": query, "category_path": [], "limit": 5, "cursor": None},
    }


def namespaced_call(call_id: str, name: str, namespace: str, **arguments: JSONValue) -> Body:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "namespace": namespace,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def answer(text: str) -> Body:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def tool_names(body: Body) -> list[str]:
    return [str(tool.get("name", tool.get("type"))) for tool in cast("list[Body]", body["tools"])]


class TestOpenAIClientSearch:
    def test_the_ranker_answers_searches_and_the_loaded_tool_runs_on_the_executor(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Deferred namespaces, our search's tool_search_output, then a strict namespaced call."""
        openai_loopback.reply(
            ok(openai_reply(response_body(search_call("ts1", "rain forecast for a city")))),
            ok(
                openai_reply(
                    response_body(
                        namespaced_call("c1", "weather_forecast", "Weather", city="Lisbon")
                    )
                )
            ),
            ok(openai_reply(response_body(answer("It will rain.")))),
        )
        bus = InProcessEventBus()
        session = Session(bus=bus)
        response = openai_loopback.adapter().evaluate(catalogue_prompt(), bus=bus, session=session)

        first, second, third = openai_loopback.bodies
        for body in (first, second, third):
            openai_request(body)
        assert first["tools"] == [
            {
                "type": "namespace",
                "name": "Weather",
                "description": "Tools in the Weather category, such as forecast.",
                "tools": [{**FORECAST_DEFINITION, "defer_loading": True}],
            },
            {
                "type": "namespace",
                "name": "Finance",
                "description": "Tools in the Finance category, such as quote.",
                "tools": [
                    {
                        "type": "function",
                        "name": "finance_quote",
                        "description": "Latest share price",
                        "parameters": RECORDS[2]["args_schema"],
                        "strict": False,
                        "defer_loading": True,
                    }
                ],
            },
            {
                "type": "tool_search",
                "execution": "client",
                "description": "Search tools by what they do, within a category or everywhere.",
                "parameters": first["tools"][2]["parameters"],
            },
        ]
        assert "When a search loads the tools it finds" in first["input"][0]["content"]
        output = second["input"][-1]
        assert output == {
            "type": "tool_search_output",
            "call_id": "ts1",
            "execution": "client",
            "status": "completed",
            "tools": [
                {
                    "type": "namespace",
                    "name": "Weather",
                    "description": "Tools in the Weather category, such as forecast.",
                    "tools": [FORECAST_DEFINITION],
                }
            ],
        }
        assert second["input"][1] == search_call("ts1", "rain forecast for a city")
        call_output = third["input"][-1]
        assert call_output["type"] == "function_call_output"
        assert call_output["call_id"] == "c1"
        assert call_output["output"].startswith("Rain in Lisbon.")
        assert response.text == "It will rain."
        search, call = response.tool_executions
        assert (search.call.name, call.call.name) == ("search_tool_by_category", "call_tool")
        assert json.loads(cast("str", call.call.arguments)) == {
            "tool_id": "weather.forecast",
            "arguments": {"city": "Lisbon"},
        }
        assert call.result.value == CallResponse(
            tool_id="weather.forecast", success=True, message="Rain in Lisbon.", value={"mm": 4}
        )
        (called,) = session.select(DiscoveryCalled)
        assert (called.tool_id, called.success) == ("weather.forecast", True)

    def test_hidden_and_uncallable_tools_are_in_no_declaration_namespace_or_output(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A search naming visible-but-uncallable tools loads only the callable ones."""
        openai_loopback.reply(
            ok(openai_reply(response_body(search_call("ts1", "storm alerts weather")))),
            ok(openai_reply(response_body(answer("None.")))),
        )
        response = openai_loopback.adapter().evaluate(catalogue_prompt())
        text = json.dumps(openai_loopback.bodies).lower()
        assert "vault" not in text
        assert "weather_alerts" not in text
        (search,) = response.tool_executions
        assert "weather.alerts" in search.result.render()
        output = openai_loopback.bodies[1]["input"][-1]
        loaded = [tool["name"] for group in output["tools"] for tool in group["tools"]]
        assert loaded == ["weather_forecast"]

    def test_a_search_that_finds_nothing_loads_nothing(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A failed search is a completed output with no tools; the model reads no error text."""
        openai_loopback.reply(
            ok(openai_reply(response_body(search_call("ts1", "zzzz qqqq")))),
            ok(openai_reply(response_body(answer("Nothing.")))),
        )
        response = openai_loopback.adapter().evaluate(catalogue_prompt())
        assert openai_loopback.bodies[1]["input"][-1]["tools"] == []
        assert response.tool_executions[0].result.success is False


class TestOpenAIServerSearch:
    def test_openai_searches_and_the_call_runs_here(self, openai_loopback: OpenAILoopback) -> None:
        """Server search items are replayed as they came; the namespaced call runs locally."""
        loaded_output: Body = {
            "type": "tool_search_output",
            "id": "tso_1",
            "call_id": None,
            "execution": "server",
            "status": "completed",
            "tools": [
                {
                    "type": "namespace",
                    "name": "Weather",
                    "description": "Tools in the Weather category, such as forecast.",
                    "tools": [FORECAST_DEFINITION],
                }
            ],
        }
        server_call = {**search_call("x", "forecast", "server"), "call_id": None}
        server_call["arguments"] = {"query": "forecast"}
        first_reply = response_body(
            server_call,
            loaded_output,
            namespaced_call("c1", "weather_forecast", "Weather", city="Porto"),
        )
        openai_loopback.reply(
            ok(openai_reply(first_reply)), ok(openai_reply(response_body(answer("Rain."))))
        )
        response = openai_loopback.adapter(tool_search="server").evaluate(catalogue_prompt())
        first, second = openai_loopback.bodies
        openai_request(first)
        openai_request(second)
        assert first["tools"][-1] == {"type": "tool_search", "execution": "server"}
        assert tool_names(first) == ["Weather", "Finance", "tool_search"]
        assert second["input"][1:4] == first_reply["output"]
        (execution,) = response.tool_executions
        assert execution.result.message == "Rain in Porto."


class TestAnthropicClientSearch:
    def test_tool_references_load_the_found_tools(self, openai_loopback: OpenAILoopback) -> None:
        """Deferred tools, our search's tool_reference blocks, then a direct tool_use."""
        search = claude_bodies.tool_use(
            "toolu_1",
            "search_tool_by_category",
            {"query": "rain forecast", "category_path": [], "limit": 5, "cursor": None},
        )
        call = claude_bodies.tool_use("toolu_2", "weather_forecast", {"city": "Faro"})
        openai_loopback.reply(
            ok(anthropic_reply(claude_bodies.message(search))),
            ok(anthropic_reply(claude_bodies.message(call))),
            ok(anthropic_reply(claude_bodies.message(claude_bodies.text("Rain in Faro.")))),
        )
        adapter = Adapter(
            AnthropicMessages(
                model="claude-test",
                base_url=claude_bodies.root_url(openai_loopback),
                api_key="k",
                max_retries=0,
            )
        )
        response = adapter.evaluate(catalogue_prompt())
        first, second, third = openai_loopback.bodies
        for body in (first, second, third):
            anthropic_request(body)
        assert tool_names(first) == ["search_tool_by_category", "weather_forecast", "finance_quote"]
        assert first["tools"][1] == {
            "name": "weather_forecast",
            "description": "Rain and temperature for a city",
            "input_schema": FORECAST_SCHEMA,
            "defer_loading": True,
        }
        assert "defer_loading" not in first["tools"][0]
        assert second["messages"][-1] == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "tool_reference", "tool_name": "weather_forecast"}],
                    "is_error": False,
                }
            ],
        }
        result = third["messages"][-1]["content"][0]
        assert (result["tool_use_id"], result["is_error"]) == ("toolu_2", False)
        assert result["content"].startswith("Rain in Faro.")
        assert response.tool_executions[1].result.message == "Rain in Faro."

    @pytest.mark.parametrize(
        ("mode", "declared"),
        [
            ("bm25", {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}),
            (
                "regex",
                {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
            ),
        ],
    )
    def test_anthropics_own_search_loads_and_the_call_runs_here(
        self, openai_loopback: OpenAILoopback, mode: str, declared: Body
    ) -> None:
        """The server's search blocks replay as they came; the loaded tool's call runs here."""
        name = str(declared["name"])
        blocks: tuple[Body, ...] = (
            claude_bodies.server_tool_use("srvtoolu_1", name, {"query": "forecast"}),
            {
                "type": "tool_search_tool_result",
                "tool_use_id": "srvtoolu_1",
                "content": {
                    "type": "tool_search_tool_search_result",
                    "tool_references": [
                        {"type": "tool_reference", "tool_name": "weather_forecast"}
                    ],
                },
            },
            claude_bodies.tool_use("toolu_2", "weather_forecast", {"city": "Braga"}),
        )
        openai_loopback.reply(
            ok(anthropic_reply(claude_bodies.message(*blocks))),
            ok(anthropic_reply(claude_bodies.message(claude_bodies.text("Rain.")))),
        )
        provider = AnthropicMessages(
            model="claude-test",
            base_url=claude_bodies.root_url(openai_loopback),
            api_key="k",
            max_retries=0,
            tool_search=mode,  # type: ignore[arg-type]
        )
        response = Adapter(provider).evaluate(catalogue_prompt())
        first, second = openai_loopback.bodies
        anthropic_request(first)
        anthropic_request(second)
        assert first["tools"][0] == declared
        assert second["messages"][1] == {"role": "assistant", "content": list(blocks)}
        (execution,) = response.tool_executions
        assert execution.result.message == "Rain in Braga."


class TestFallback:
    def test_chat_completions_keeps_the_discovery_tools(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The same prompt on a provider without native search declares the five tools."""
        openai_loopback.reply(ok(completion("No tools needed.")))
        provider = ChatCompletions(
            model="gpt-test", base_url=openai_loopback.base_url, api_key="k", max_retries=0
        )
        Adapter(provider).evaluate(catalogue_prompt())
        names = [tool["function"]["name"] for tool in openai_loopback.bodies[0]["tools"]]
        assert names == [
            "list",
            "search_tool_by_category",
            "search_nodes",
            "expand_tool",
            "call_tool",
        ]

    @pytest.mark.parametrize("provider", ["openai", "anthropic"])
    def test_off_keeps_the_discovery_tools(
        self, openai_loopback: OpenAILoopback, provider: str
    ) -> None:
        """``tool_search="off"`` declares the discovery tools and nothing deferred."""
        if provider == "openai":
            openai_loopback.reply(ok(response_body(answer("ok"))))
            openai_loopback.adapter(tool_search="off").evaluate(catalogue_prompt())
        else:
            openai_loopback.reply(ok(claude_bodies.message(claude_bodies.text("ok"))))
            Adapter(
                AnthropicMessages(
                    model="claude-test",
                    base_url=claude_bodies.root_url(openai_loopback),
                    api_key="k",
                    max_retries=0,
                    tool_search="off",
                )
            ).evaluate(catalogue_prompt())
        body = openai_loopback.bodies[0]
        assert tool_names(body) == [
            "list",
            "search_tool_by_category",
            "search_nodes",
            "expand_tool",
            "call_tool",
        ]
        assert "defer_loading" not in json.dumps(body)

    def test_a_service_requiring_expansion_is_offered_through_the_discovery_tools(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A native search loads schemas without an expansion step, so it is not offered."""
        openai_loopback.reply(ok(response_body(answer("ok"))))
        openai_loopback.adapter().evaluate(catalogue_prompt(require_expansion=True))
        assert "tool_search" not in tool_names(openai_loopback.bodies[0])

    @pytest.mark.parametrize("mode", ["sometimes", 3])
    def test_unknown_modes_are_refused(self, mode: object) -> None:
        """Each provider names its tool_search choices."""
        with pytest.raises(ConfigValidationError, match="tool_search must be one of") as caught:
            OpenAIResponses(model="m", api_key="k", tool_search=mode)  # type: ignore[arg-type]
        assert caught.value.field_name == "tool_search"
        with pytest.raises(ConfigValidationError, match="tool_search must be one of"):
            AnthropicMessages(model="m", api_key="k", tool_search=mode)  # type: ignore[arg-type]
        with pytest.raises(ConfigValidationError, match="tool_search must be 'off' or 'client'"):
            OfflineAdapter([ScriptedTurn(text="x")], tool_search=mode)  # type: ignore[arg-type]


class TestOffline:
    def test_the_offline_model_simulates_the_native_flow(self) -> None:
        """Scripted calls by deferred name run through the section's call tool."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(
                        ScriptedCall(
                            name="search_tool_by_category",
                            arguments={"query": "rain forecast", "category_path": [], "limit": 5},
                        ),
                    )
                ),
                ScriptedTurn(
                    calls=(ScriptedCall(name="weather_forecast", arguments={"city": "Evora"}),)
                ),
                ScriptedTurn(text="Rain."),
            ],
            tool_search="client",
        )
        response = adapter.evaluate(catalogue_prompt())
        search, call = response.tool_executions
        assert call.result.message == "Rain in Evora."
        first, second, third = [
            item.turn for item in response.conversation if isinstance(item, AssistantMessage)
        ]
        assert first.request == {
            "tools": [],
            "search_tool": "search_tool_by_category",
            "deferred_groups": ["Weather", "Finance"],
            "deferred_tools": 2,
            "loaded": [],
        }
        assert second.request is not None
        assert second.request["loaded"] == ["weather_forecast"]
        assert first.raw_items[0]["type"] == "tool_search_call"
        assert second.raw_items[0]["namespace"] == "Weather"
        assert search.result.success is True
        assert third.text == "Rain."

    def test_offline_without_simulation_keeps_the_discovery_tools(self) -> None:
        """``call_every_tool`` calls the five discovery tools when nothing is native."""
        adapter = OfflineAdapter(call_every_tool=True)
        response = adapter.evaluate(catalogue_prompt())
        assert [e.call.name for e in response.tool_executions] == [
            "list",
            "search_tool_by_category",
            "search_nodes",
            "expand_tool",
            "call_tool",
        ]


class TestLimits:
    def test_a_catalogue_over_the_limit_keeps_the_discovery_tools(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Beyond MAX_DEFERRED_TOOLS the provider falls back rather than risk a 400."""
        offer = catalogue_prompt().render().deferred_tools
        assert offer is not None
        crowd = tuple(
            replace(offer.tools[0], tool_id=f"t{n}", name=f"t{n}")
            for n in range(MAX_DEFERRED_TOOLS + 1)
        )
        big = replace(offer, tools=crowd)
        prompt = Prompt(
            ns="tests/tool_search",
            key="big",
            sections=[OfferingSection(big, replaced=catalogue_prompt())],
        )
        openai_loopback.reply(ok(response_body(answer("ok"))))
        openai_loopback.adapter().evaluate(prompt)
        assert "tool_search" not in tool_names(openai_loopback.bodies[0])

    def test_the_section_offers_no_more_than_its_limit(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A catalogue with more callable tools than the section's bound is not offered."""
        monkeypatch.setattr(discovery_section, "MAX_DEFERRED_TOOLS", 1)
        assert catalogue_prompt().render().deferred_tools is None

    def test_a_catalogue_name_taken_by_a_prompt_tool_keeps_the_discovery_tools(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Declaring two tools of one name would be refused, so nothing is deferred."""
        clash = Tool[Clash, None](
            name="weather_forecast", description="Our own forecast.", handler=clash_handler
        )
        prompt = Prompt(
            ns="tests/tool_search",
            key="clash",
            sections=[
                *catalogue_prompt().template.sections,
                MarkdownSection(title="Mine", template="Mine.", tools=[clash]),
            ],
        )
        openai_loopback.reply(ok(response_body(answer("ok"))))
        openai_loopback.adapter().evaluate(prompt)
        assert tool_names(openai_loopback.bodies[0])[:5] == [
            "list",
            "search_tool_by_category",
            "search_nodes",
            "expand_tool",
            "call_tool",
        ]


@dataclass(frozen=True, slots=True)
class Clash:
    city: str = ""


def clash_handler(params: Clash, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="mine")


class OfferingSection(MarkdownSection):
    """A section offering a hand-built catalogue, with the discovery tools of another prompt."""

    def __init__(self, offer: DeferredTools, *, replaced: Prompt[None]) -> None:
        self._offer = offer
        section = replaced.template.sections[1]
        super().__init__(title="Offer", template="Offer.", tools=section.tools())

    def deferred_tools(self) -> DeferredTools | None:
        return self._offer


class TestHistoryRefusals:
    def test_a_call_of_a_tool_no_search_loaded_is_refused_on_a_native_target(self) -> None:
        """After OpenAI's own search, Anthropic cannot be shown the call's tool as loaded."""
        prompt = catalogue_prompt()
        rendered = prompt.render()
        reply = response_body(
            {**search_call("x", "forecast", "server"), "call_id": None},
            namespaced_call("c1", "weather_forecast", "Weather", city="Porto"),
        )
        source = OpenAIResponses(model="g", api_key="k", tool_search="server")
        request = turn_request(rendered, (PromptMessage(text="Go."),))
        turn = source.read_turn(reply, {}, request)
        history = (
            PromptMessage(text="Go."),
            AssistantMessage(turn=turn),
            ToolOutputMessage(call_id="c1", name="call_tool", content="Rain.", success=True),
        )
        target = AnthropicMessages(model="c", api_key="k")
        with pytest.raises(HistoryTranslationError, match="no search loaded") as caught:
            target.build_request(turn_request(rendered, history))
        assert caught.value.kinds == ("call_tool of a tool no search loaded",)
        assert caught.value.source_format == "openai-responses"
        chat: Any = ChatCompletions(model="g", api_key="k").build_request(
            turn_request(rendered, history)
        )
        (assistant,) = [m for m in chat["messages"] if m["role"] == "assistant"]
        assert assistant["tool_calls"][0]["function"]["name"] == "call_tool"
        for provider in (source, target):
            provider.close()


def turn_request(rendered: Any, history: tuple[Any, ...]) -> TurnRequest:
    return TurnRequest(
        prompt_name="p",
        rendered=rendered,
        history=history,
        hosted_tools=(),
        output_schema=None,
        round=1,
    )
