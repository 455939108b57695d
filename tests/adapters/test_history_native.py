"""Conversations with native tool search carried on by every provider, or refused first.

The property of ``test_history`` extended to a prompt offering a catalogue: searches and
calls of loaded tools are generated in neutral terms, each read by the source provider
from a reply in its own documented native shape (a ``tool_search_call`` and namespaced
``function_call`` on Responses, ``tool_use`` of the search tool and of a deferred tool on
Messages, scripted calls offline, the discovery tools on Chat Completions). Every target,
with native search on and off, must then build a request that validates against its
SDK's types and keeps the API's pairing rules, or refuse with ``HistoryTranslationError``
before sending, exactly when the conversation used discovery tools native search leaves
out. No request ever names a hidden or uncallable tool.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.adapters.anthropic import bodies as claude
from tests.adapters.conftest import response_body
from tests.adapters.openai.chat_bodies import chat_call, completion
from tests.adapters.test_history import Call as NeutralCall
from tests.adapters.test_history import Turn as NeutralTurn
from tests.adapters.test_history import (
    _anthropic_structure,
    _chat_structure,
    _offline_turn,
    validate_with_sdk,
)
from weakincentives.adapters import (
    AssistantMessage,
    ConversationItem,
    ModelTurn,
    OfflineModel,
    PromptMessage,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.adapters.anthropic import AnthropicMessages
from weakincentives.adapters.openai import ChatCompletions, OpenAIResponses
from weakincentives.discovery import (
    IdAccessPolicy,
    ToolCatalog,
    ToolDiscovery,
    ToolDiscoverySection,
)
from weakincentives.errors import HistoryTranslationError
from weakincentives.prompt import Prompt, RenderedPrompt
from weakincentives.serde import JSONValue

pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("pydantic")

type Body = dict[str, JSONValue]

SOURCES = ("responses", "anthropic", "offline", "chat")
TARGETS = ("responses", "responses-off", "chat", "anthropic", "anthropic-off", "offline")
NATIVE_TARGETS = frozenset({"responses", "anthropic"})
CALLABLE = {"weather.forecast": "weather_forecast", "finance.quote": "finance_quote"}
GROUPS = {"weather.forecast": "Weather", "finance.quote": "Finance"}
VISIBLE = ("weather.forecast", "finance.quote", "weather.alerts")


def _record(tool_id: str, path: str) -> dict[str, object]:
    return {
        "tool_id": tool_id,
        "name": tool_id.split(".")[1],
        "path": [path],
        "summary": f"The {tool_id} tool",
        "args_schema": {"type": "object", "properties": {"x": {"type": "integer"}}},
    }


def rendered() -> RenderedPrompt[Any]:
    catalog = ToolCatalog.from_records(
        [
            _record("weather.forecast", "Weather"),
            _record("weather.alerts", "Weather"),
            _record("finance.quote", "Finance"),
            _record("vault.open", "Vault"),
        ]
    )
    access = IdAccessPolicy(
        hidden=frozenset({"vault.open"}), uncallable=frozenset({"weather.alerts"})
    )
    section = ToolDiscoverySection(ToolDiscovery(catalog, access=access))
    return Prompt(ns="t", key="native", sections=[section]).render()


RENDERED = rendered()


@dataclass(frozen=True, slots=True)
class Step:
    kind: str
    """``search``, ``call`` (a loaded tool), ``expand`` (a discovery tool) or ``text``."""
    call_id: str
    tool_id: str = ""
    loaded: tuple[str, ...] = ()
    x: int = 0


@dataclass(frozen=True, slots=True)
class Round:
    text: str
    steps: tuple[Step, ...]


@st.composite
def native_conversations(draw: st.DrawFn) -> tuple[str, tuple[Round, ...]]:
    source = draw(st.sampled_from(SOURCES))
    loaded: list[str] = []
    rounds: list[Round] = []
    for index in range(draw(st.integers(1, 4))):
        options = ["search", "text"] + (["call"] if loaded else [])
        if source == "chat":
            options.append("expand")
        kind = draw(st.sampled_from(options))
        steps: tuple[Step, ...] = ()
        call_id = f"toolu_{index}" if source == "anthropic" else f"call_{index}"
        if kind == "search":
            found = tuple(draw(st.lists(st.sampled_from(VISIBLE), unique=True, max_size=3)))
            loaded.extend(tool_id for tool_id in found if tool_id in CALLABLE)
            steps = (Step(kind="search", call_id=call_id, loaded=found),)
        elif kind == "call":
            chosen = draw(st.lists(st.sampled_from(loaded), min_size=1, max_size=2))
            steps = tuple(
                Step(kind="call", call_id=f"{call_id}{n}", tool_id=tool_id, x=n)
                for n, tool_id in enumerate(chosen)
            )
        elif kind == "expand":
            steps = (Step(kind="expand", call_id=call_id, tool_id="weather.forecast"),)
        text = draw(st.sampled_from(("", "Looking.", "Done.")))
        if not steps and not text:
            text = "Thinking."
        rounds.append(Round(text=text, steps=steps))
    return source, tuple(rounds)


def _search_arguments() -> Body:
    return {"query": "weather", "category_path": [], "limit": 5, "cursor": None}


def _responses_reply(round_: Round) -> Body:
    output: list[JSONValue] = []
    if round_.text:
        output.append(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": round_.text, "annotations": []}],
            }
        )
    for step in round_.steps:
        if step.kind == "search":
            output.append(
                {
                    "type": "tool_search_call",
                    "id": f"tsc_{step.call_id}",
                    "call_id": step.call_id,
                    "execution": "client",
                    "status": "completed",
                    "arguments": _search_arguments(),
                }
            )
        else:
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{step.call_id}",
                    "call_id": step.call_id,
                    "name": CALLABLE[step.tool_id],
                    "namespace": GROUPS[step.tool_id],
                    "arguments": json.dumps({"x": step.x}),
                    "status": "completed",
                }
            )
    return response_body(*output)


def _anthropic_reply(round_: Round) -> tuple[Body, ...]:
    blocks: list[Body] = [claude.text(round_.text)] if round_.text else []
    for step in round_.steps:
        if step.kind == "search":
            blocks.append(
                claude.tool_use(step.call_id, "search_tool_by_category", _search_arguments())
            )
        else:
            blocks.append(claude.tool_use(step.call_id, CALLABLE[step.tool_id], {"x": step.x}))
    return (claude.message(*blocks),)


def _neutral(step: Step) -> tuple[str, str]:
    """The discovery tool and arguments a step is on a provider without native search."""
    if step.kind == "search":
        return "search_tool_by_category", json.dumps(_search_arguments())
    if step.kind == "expand":
        return "expand_tool", json.dumps({"tool_id": step.tool_id})
    return "call_tool", json.dumps({"tool_id": step.tool_id, "arguments": {"x": step.x}})


def _chat_reply(round_: Round) -> Body:
    calls = [chat_call(step.call_id, *_neutral(step)) for step in round_.steps]
    return completion(round_.text or None, calls=calls)


def _offline_turn_of(round_: Round, request: TurnRequest) -> ModelTurn:
    calls = tuple(
        NeutralCall(
            call_id=step.call_id,
            name="search_tool_by_category" if step.kind == "search" else CALLABLE[step.tool_id],
            arguments=json.dumps(_search_arguments() if step.kind == "search" else {"x": step.x}),
            succeeded=True,
        )
        for step in round_.steps
    )
    turn = NeutralTurn(text=round_.text, calls=calls, refusal=None)
    return _offline_turn(turn, request, tool_search="client")


@dataclass(frozen=True, slots=True)
class Providers:
    by_name: dict[str, Any]

    def read(self, source: str, round_: Round, request: TurnRequest) -> ModelTurn:
        provider = self.by_name[source]
        if source == "responses":
            return cast("ModelTurn", provider.read_turn(_responses_reply(round_), {}, request))
        if source == "anthropic":
            return cast("ModelTurn", provider.read_turn(_anthropic_reply(round_), {}, request))
        if source == "chat":
            return cast("ModelTurn", provider.read_turn(_chat_reply(round_), {}, request))
        return _offline_turn_of(round_, request)


@pytest.fixture(scope="module")
def providers() -> Iterator[Providers]:
    base = "http://127.0.0.1:9"
    built: dict[str, Any] = {
        "responses": OpenAIResponses(model="g", api_key="k", base_url=f"{base}/v1"),
        "responses-off": OpenAIResponses(
            model="g", api_key="k", base_url=f"{base}/v1", tool_search="off"
        ),
        "chat": ChatCompletions(model="g", api_key="k", base_url=f"{base}/v1"),
        "anthropic": AnthropicMessages(model="c", api_key="k", base_url=base),
        "anthropic-off": AnthropicMessages(
            model="c", api_key="k", base_url=base, tool_search="off"
        ),
        "offline": OfflineModel(call_every_tool=True),
    }
    yield Providers(by_name=built)
    for provider in built.values():
        provider.close()


def request_of(history: tuple[ConversationItem, ...], number: int) -> TurnRequest:
    return TurnRequest(
        prompt_name="native",
        rendered=RENDERED,
        history=history,
        hosted_tools=(),
        output_schema=None,
        round=number,
        max_output_tokens=256,
    )


def history_of(source: str, rounds: tuple[Round, ...], providers: Providers) -> tuple[Any, ...]:
    items: list[ConversationItem] = [PromptMessage(text="## 1 T\nGo.")]
    for number, round_ in enumerate(rounds, start=1):
        turn = providers.read(source, round_, request_of(tuple(items), number))
        items.append(AssistantMessage(turn=turn))
        for call, step in zip(turn.tool_calls, round_.steps, strict=True):
            items.append(
                ToolOutputMessage(
                    call_id=call.call_id,
                    name=call.name,
                    content=f"{call.name} done",
                    success=True,
                    loaded=step.loaded,
                )
            )
    return tuple(items)


_OUTPUT_OF = {"function_call": "function_call_output", "tool_search_call": "tool_search_output"}


def _responses_native_structure(body: Body) -> list[str]:
    """Every call (function or client search) is answered by its own kind of output."""
    open_calls: dict[str, str] = {}
    seen: list[str] = []
    for item in cast("list[Body]", body["input"]):
        kind = item.get("type", "message")
        if kind in ("function_call", "tool_search_call"):
            open_calls[str(item["call_id"])] = str(kind)
            seen.append(str(item["call_id"]))
        elif kind in ("function_call_output", "tool_search_output"):
            opened = open_calls.pop(str(item["call_id"]))
            assert kind == _OUTPUT_OF[opened]
        else:
            assert not open_calls, f"calls {open_calls} have no output before the next message"
    assert not open_calls
    return seen


@given(case=native_conversations())
def test_every_provider_carries_on_a_native_search_conversation_or_refuses_it(
    providers: Providers, case: tuple[str, tuple[Round, ...]]
) -> None:
    """Each target sends a valid, paired request, or refuses exactly what it cannot carry."""
    source, rounds = case
    history = history_of(source, rounds, providers)
    continued = (PromptMessage(text="## 1 T\nGo on."), *history[1:])
    request = request_of(continued, len(rounds) + 1)
    used_fallback = any(step.kind == "expand" for round_ in rounds for step in round_.steps)
    calls = [step.call_id for round_ in rounds for step in round_.steps]
    for target in TARGETS:
        provider = providers.by_name[target]
        if target in NATIVE_TARGETS and used_fallback:
            with pytest.raises(HistoryTranslationError, match="expand_tool call") as caught:
                provider.build_request(request)
            assert caught.value.kinds == ("expand_tool call",)
            continue
        body = provider.build_request(request)
        if target == "offline":
            assert body.history == continued
            continue
        wire = target.removesuffix("-off")
        validate_with_sdk(wire, body)
        text = json.dumps(body).lower()
        assert "vault" not in text
        if target in NATIVE_TARGETS:
            assert "weather_alerts" not in text
        else:  # the discovery tools, and nothing of a native search, even replayed
            assert "tool_search" not in text
            assert "namespace" not in text
            assert "tool_reference" not in text
        if wire == "responses":
            assert _responses_native_structure(body) == calls
        elif wire == "chat":
            assert _chat_structure(body) == calls
        else:
            assert len(_anthropic_structure(body)) == len(calls)
