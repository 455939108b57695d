"""A conversation read by one provider continues on every other, or is refused before sending.

Conversations are generated in neutral terms (text turns, parallel calls with outputs,
malformed arguments, feedback, empty turns, refusals), then each turn is read by the
source provider from a reply in its own documented shape, so the history holds that
provider's raw items exactly as in a real run. Every provider then builds its next
request from that history, which must validate against its SDK's own request types
(pydantic over the SDK's ``...CreateParams`` TypedDicts) and keep the structural rules
the APIs enforce.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.adapters.anthropic import bodies as claude
from tests.adapters.conftest import OpenAILoopback, ok, response_body
from tests.adapters.openai.chat_bodies import chat_call, completion
from weakincentives.adapters import (
    AssistantMessage,
    FeedbackMessage,
    ModelTurn,
    OfflineAdapter,
    OfflineModel,
    PromptMessage,
    PromptResponse,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.adapters._history import check_conversation
from weakincentives.adapters._provider import Attempt
from weakincentives.adapters._turns import ConversationItem
from weakincentives.adapters.anthropic import AnthropicAdapter, AnthropicMessages
from weakincentives.adapters.openai import ChatCompletions, OpenAIAdapter, OpenAIResponses
from weakincentives.errors import ConfigValidationError, HistoryTranslationError
from weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    RenderedPrompt,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import ToolCall
from weakincentives.serde import JSONValue

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
pydantic = pytest.importorskip("pydantic")

type Body = dict[str, JSONValue]

PROVIDERS = ("responses", "chat", "anthropic", "offline")
TOOL_NAMES = ("lookup", "add", "search_docs")
_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]{1,128}")


# --- the neutral conversation -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    call_id: str
    name: str
    arguments: str
    """JSON text of an object, or (not from Anthropic, which sends objects) anything."""
    succeeded: bool


@dataclass(frozen=True, slots=True)
class Turn:
    text: str
    calls: tuple[Call, ...]
    refusal: str | None


@dataclass(frozen=True, slots=True)
class Round:
    turn: Turn
    feedback: str | None
    """The loop's note after a turn without calls (an answer that did not fit)."""


@dataclass(frozen=True, slots=True)
class Conversation:
    source: str
    rounds: tuple[Round, ...]


_texts = st.one_of(st.just(""), st.text(min_size=1, max_size=20))


def _arguments(source: str) -> st.SearchStrategy[str]:
    objects = st.dictionaries(
        st.sampled_from(("a", "b", "query")), st.integers(-5, 5) | st.text(max_size=5), max_size=3
    ).map(json.dumps)
    if source == "anthropic":
        return objects
    malformed = st.sampled_from(('{"a": ', "[1, 2]", "7", "not json", ""))
    return st.one_of(objects, malformed)


@st.composite
def conversations(draw: st.DrawFn, source: str) -> Conversation:
    rounds: list[Round] = []
    count = draw(st.integers(1, 4))
    for index in range(count):
        width = draw(st.integers(0, 3))
        ids = [
            draw(
                st.sampled_from((f"call_{index}_{n}", f"toolu_{index}{n}"))
                if source == "anthropic"
                else st.sampled_from((f"call_{index}_{n}", f"fc.{index}:{n}", f"c {index}/{n}"))
            )
            for n in range(width)
        ]
        calls = tuple(
            Call(
                call_id=call_id,
                name=draw(st.sampled_from(TOOL_NAMES)),
                arguments=draw(_arguments(source)),
                succeeded=draw(st.booleans()),
            )
            for call_id in ids
        )
        refusal = None
        if not calls and source != "anthropic":
            refusal = draw(st.none() | st.text(min_size=1, max_size=10))
        turn = Turn(text=draw(_texts), calls=calls, refusal=refusal)
        last = index == count - 1
        feedback = None if calls or last else draw(st.text(min_size=1, max_size=15))
        rounds.append(Round(turn=turn, feedback=feedback))
    return Conversation(source=source, rounds=tuple(rounds))


@st.composite
def any_conversation(draw: st.DrawFn) -> Conversation:
    return draw(conversations(draw(st.sampled_from(PROVIDERS))))


# --- each provider reads its own reply -----------------------------------------------------


def _noop(params: object, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="ok")


@dataclass(frozen=True)
class Query:
    a: int = 0


@functools.cache
def rendered() -> RenderedPrompt[Any]:
    tools = [
        Tool[Query, None](name=name, description="A tool.", handler=_noop) for name in TOOL_NAMES
    ]
    prompt: Prompt[None] = Prompt(
        ns="t", key="history", sections=[MarkdownSection(title="T", template="Go.", tools=tools)]
    )
    return prompt.render()


def turn_request(history: tuple[ConversationItem, ...], round_number: int = 1) -> TurnRequest:
    return TurnRequest(
        prompt_name="history",
        rendered=rendered(),
        history=history,
        hosted_tools=(),
        output_schema=None,
        round=round_number,
        max_output_tokens=256,
    )


def _responses_reply(turn: Turn) -> Body:
    output: list[JSONValue] = []
    parts: list[JSONValue] = []
    if turn.text:
        parts.append({"type": "output_text", "text": turn.text, "annotations": []})
    if turn.refusal:
        parts.append({"type": "refusal", "refusal": turn.refusal})
    if parts:
        output.append(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": parts,
            }
        )
    output.append({"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAA"})
    output.extend(
        {
            "id": f"fc_{n}",
            "type": "function_call",
            "status": "completed",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": call.arguments,
        }
        for n, call in enumerate(turn.calls)
    )
    return response_body(*output)


def _chat_reply(turn: Turn) -> Body:
    calls = [chat_call(call.call_id, call.name, call.arguments) for call in turn.calls]
    return completion(turn.text or None, calls=calls, refusal=turn.refusal)


def _anthropic_reply(turn: Turn) -> tuple[Body, ...]:
    blocks: list[Body] = [{"type": "thinking", "thinking": "hmm", "signature": "sig"}]
    if turn.text:
        blocks.append(claude.text(turn.text))
    blocks.extend(
        claude.tool_use(call.call_id, call.name, json.loads(call.arguments)) for call in turn.calls
    )
    return (claude.message(*blocks),)


def _offline_turn(turn: Turn, request: TurnRequest, *, tool_search: str = "off") -> ModelTurn:
    """The turn as an offline model plays it (a responder answering with the scripted turn)."""
    scripted = ScriptedTurn(
        text=turn.text,
        calls=tuple(
            ScriptedCall(name=call.name, arguments=call.arguments, call_id=call.call_id)
            for call in turn.calls
        ),
        refusal=turn.refusal,
    )
    reader = OfflineModel(responder=lambda _: scripted, tool_search=tool_search)  # type: ignore[arg-type]
    attempt = Attempt(number=1, timeout=None, prompt_name="history", round=1)
    return asyncio.run(reader.send(request, attempt, lambda _: None))


@dataclass(frozen=True, slots=True)
class Providers:
    responses: OpenAIResponses
    chat: ChatCompletions
    anthropic: AnthropicMessages
    offline: OfflineModel

    def read(self, source: str, turn: Turn, request: TurnRequest) -> ModelTurn:
        if source == "responses":
            return self.responses.read_turn(_responses_reply(turn), {}, request)
        if source == "chat":
            return self.chat.read_turn(_chat_reply(turn), {}, request)
        if source == "anthropic":
            return self.anthropic.read_turn(_anthropic_reply(turn), {}, request)
        return _offline_turn(turn, request)

    def build(self, target: str, request: TurnRequest) -> object:
        if target == "responses":
            return self.responses.build_request(request)
        if target == "chat":
            return self.chat.build_request(request)
        if target == "anthropic":
            return self.anthropic.build_request(request)
        return self.offline.build_request(request)


@pytest.fixture(scope="module")
def providers() -> Iterator[Providers]:
    built = Providers(
        responses=OpenAIResponses(model="gpt-test", api_key="k", base_url="http://127.0.0.1:9/v1"),
        chat=ChatCompletions(model="gpt-test", api_key="k", base_url="http://127.0.0.1:9/v1"),
        anthropic=AnthropicMessages(
            model="claude-test", api_key="k", base_url="http://127.0.0.1:9"
        ),
        offline=OfflineModel(call_every_tool=True),
    )
    yield built
    for provider in (built.responses, built.chat, built.anthropic):
        provider.close()


def history_of(conversation: Conversation, providers: Providers) -> tuple[ConversationItem, ...]:
    """The conversation as the source provider's loop would have recorded it."""
    items: list[ConversationItem] = [PromptMessage(text="## 1 T\nGo.")]
    for number, round_ in enumerate(conversation.rounds, start=1):
        turn = providers.read(conversation.source, round_.turn, turn_request(tuple(items), number))
        items.append(AssistantMessage(turn=turn))
        items.extend(
            ToolOutputMessage(
                call_id=call.call_id,
                name=call.name,
                content=f"{call.name} said {'yes' if call.succeeded else 'no'}",
                success=call.succeeded,
            )
            for call in round_.turn.calls
        )
        if round_.feedback is not None:
            items.append(FeedbackMessage(text=round_.feedback))
    return tuple(items)


# --- what each API accepts -------------------------------------------------------------------


_REQUEST_TYPES = {
    "responses": (
        "openai.types.responses.response_create_params",
        "ResponseCreateParamsNonStreaming",
    ),
    "chat": ("openai.types.chat.completion_create_params", "CompletionCreateParamsNonStreaming"),
    "anthropic": ("anthropic.types.message_create_params", "MessageCreateParamsNonStreaming"),
}


@functools.cache
def request_type(target: str) -> Any:
    """A pydantic validator over the SDK's own request TypedDict for ``target``."""
    module, name = _REQUEST_TYPES[target]
    return pydantic.TypeAdapter(getattr(importlib.import_module(module), name))


def materialized(value: object) -> object:
    """``value`` with pydantic's lazy iterables (the SDKs type lists as Iterable) consumed."""
    if isinstance(value, Mapping):
        return {key: materialized(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [materialized(item) for item in value]
    if type(value).__name__ == "ValidatorIterator":
        return [materialized(item) for item in cast("Iterator[object]", value)]
    return value


def validate_with_sdk(target: str, body: object) -> None:
    materialized(request_type(target).validate_python(body))


def _responses_structure(body: Body) -> list[str]:
    items = cast("list[Body]", body["input"])
    open_calls: list[str] = []
    seen: list[str] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            open_calls.append(str(item["call_id"]))
            seen.append(str(item["call_id"]))
        elif kind == "function_call_output":
            assert item["call_id"] in open_calls, f"output for unknown call {item['call_id']}"
            open_calls.remove(str(item["call_id"]))
        elif kind == "message":
            assert item["role"] in ("user", "assistant")
            assert not open_calls, f"calls {open_calls} have no output before the next message"
            assert item["content"], "empty message"
    assert not open_calls
    return seen


def _chat_structure(body: Body) -> list[str]:
    messages = cast("list[Body]", body["messages"])
    expected: list[str] = []
    seen: list[str] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            assert message["tool_call_id"] in expected, "tool message answers no pending call"
            expected.remove(str(message["tool_call_id"]))
            continue
        assert not expected, f"calls {expected} unanswered before a {role} message"
        if role == "assistant":
            calls = cast("list[Body]", message.get("tool_calls") or [])
            assert message.get("content") or calls, f"empty assistant message {message}"
            expected = [str(call["id"]) for call in calls]
            seen.extend(expected)
    assert not expected
    return seen


def _anthropic_structure(body: Body) -> list[str]:
    messages = cast("list[Body]", body["messages"])
    assert messages[0]["role"] == "user"
    pending: list[str] = []
    seen: list[str] = []
    for index, message in enumerate(messages):
        blocks = cast("list[Body]", message["content"])
        assert blocks, "empty message"
        if index:
            assert message["role"] != messages[index - 1]["role"], "roles do not alternate"
        for block in blocks:
            if block["type"] == "text":
                assert block["text"], "empty text block"
        if message["role"] == "assistant":
            assert not pending
            pending = [str(b["id"]) for b in blocks if b["type"] == "tool_use"]
            assert all(_ANTHROPIC_ID.fullmatch(call_id) for call_id in pending)
            seen.extend(pending)
            continue
        results = [str(b["tool_use_id"]) for b in blocks if b["type"] == "tool_result"]
        kinds = [b["type"] for b in blocks]
        assert kinds[: len(results)] == ["tool_result"] * len(results), "results must come first"
        assert sorted(results) == sorted(pending), f"results {results} do not answer {pending}"
        pending = []
    assert not pending
    return seen


def neutral_call_ids(conversation: Conversation) -> list[str]:
    return [call.call_id for round_ in conversation.rounds for call in round_.turn.calls]


# --- the property ------------------------------------------------------------------------------


@given(conversation=any_conversation())
def test_every_provider_carries_on_every_providers_conversation(
    providers: Providers, conversation: Conversation
) -> None:
    """Each target's request validates against its SDK's types and keeps the API's rules."""
    history = history_of(conversation, providers)
    continued = (PromptMessage(text="## 1 T\nGo on."), *history[1:])
    check_conversation(continued[1:], prompt_name="history")
    calls = neutral_call_ids(conversation)
    for target in PROVIDERS:
        body = providers.build(target, turn_request(continued, len(conversation.rounds) + 1))
        if target == "offline":
            assert isinstance(body, TurnRequest)
            assert body.history == continued
            continue
        validate_with_sdk(target, body)
        request = cast("Body", body)
        if target == "responses":
            assert _responses_structure(request) == calls
        elif target == "chat":
            assert _chat_structure(request) == calls
        else:
            seen = _anthropic_structure(request)
            assert len(seen) == len(calls)
            # Anthropic's own ids are kept; others are re-spelled, the same for call and result.
            assert [a == b for a, b in zip(seen, calls, strict=True)] == [
                bool(_ANTHROPIC_ID.fullmatch(call)) for call in calls
            ]


# --- items only their own provider can replay ---------------------------------------------------


WEB_SEARCH_CALL: Body = {
    "id": "ws_1",
    "type": "web_search_call",
    "status": "completed",
    "action": {"type": "search", "query": "weather"},
}


def hosted_turn(source: str, providers: Providers) -> ModelTurn:
    request = turn_request((PromptMessage(text="Go."),))
    if source == "responses":
        reply = response_body(
            WEB_SEARCH_CALL,
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}],
            },
        )
        return providers.responses.read_turn(reply, {}, request)
    if source == "anthropic":
        blocks = (
            claude.server_tool_use("srvtoolu_1", "web_search", {"query": "weather"}),
            claude.search_results("srvtoolu_1", claude.search_result("https://w.example", "W")),
            claude.text("Sunny."),
        )
        return providers.anthropic.read_turn((claude.message(*blocks),), {}, request)
    scripted = ScriptedTurn(text="Sunny.", raw_items=(WEB_SEARCH_CALL,))
    reader = OfflineModel(responder=lambda _: scripted)
    attempt = Attempt(number=1, timeout=None, prompt_name="history", round=1)
    return asyncio.run(reader.send(request, attempt, lambda _: None))


@pytest.mark.parametrize(
    ("source", "target", "kinds", "source_format"),
    [
        ("responses", "chat", ("web_search_call",), "openai-responses"),
        ("responses", "anthropic", ("web_search_call",), "openai-responses"),
        (
            "anthropic",
            "responses",
            ("server_tool_use", "web_search_tool_result"),
            "anthropic-messages",
        ),
        ("anthropic", "chat", ("server_tool_use", "web_search_tool_result"), "anthropic-messages"),
        ("offline", "responses", ("web_search_call",), "offline"),
    ],
)
def test_another_providers_hosted_items_are_refused_before_sending(
    providers: Providers, source: str, target: str, kinds: tuple[str, ...], source_format: str
) -> None:
    """A hosted-tool result would vanish in translation, so building the request refuses."""
    turn = hosted_turn(source, providers)
    history = (PromptMessage(text="Go on."), AssistantMessage(turn=turn))
    with pytest.raises(HistoryTranslationError, match="continue it on a") as caught:
        providers.build(target, turn_request(history, 2))
    assert (caught.value.source_format, caught.value.kinds, caught.value.phase) == (
        source_format,
        kinds,
        "request",
    )


@pytest.mark.parametrize("source", ["responses", "anthropic"])
def test_a_provider_replays_its_own_hosted_items(providers: Providers, source: str) -> None:
    """On the provider that produced them, the items go back verbatim."""
    turn = hosted_turn(source, providers)
    history = (PromptMessage(text="Go on."), AssistantMessage(turn=turn))
    body = cast("Body", providers.build(source, turn_request(history, 2)))
    if source == "responses":
        assert cast("list[Body]", body["input"])[1] == WEB_SEARCH_CALL
    else:
        blocks = cast("list[Body]", cast("list[Body]", body["messages"])[1]["content"])
        assert [b["type"] for b in blocks] == ["server_tool_use", "web_search_tool_result", "text"]
    validate_with_sdk(source, body)


# --- over HTTP: continue_from on another adapter --------------------------------------------------


def test_continue_from_carries_a_responses_exchange_on_to_anthropic(
    openai_loopback: OpenAILoopback,
) -> None:
    """The Anthropic request rebuilds the Responses turn: a tool_use, then its tool_result."""
    responses_reply = response_body(
        {
            "id": "fc_1",
            "type": "function_call",
            "status": "completed",
            "call_id": "call_1",
            "name": "lookup",
            "arguments": '{"a": 1}',
        }
    )
    openai_loopback.reply(ok(responses_reply), ok(response_body(_message("Found it."))))
    first = OpenAIAdapter(model="gpt-test", api_key="k", base_url=openai_loopback.base_url)
    prompt = _lookup_prompt()
    earlier = first.evaluate(prompt)
    openai_loopback.reply(ok(claude.message(claude.text("Still found."))))
    second = AnthropicAdapter(
        model="claude-test", api_key="k", base_url=claude.root_url(openai_loopback)
    )
    assert second.evaluate(prompt, continue_from=earlier).text == "Still found."
    messages = openai_loopback.bodies[-1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1]["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"a": 1}}
    ]
    assert messages[2]["content"][0]["tool_use_id"] == "call_1"
    assert messages[3]["content"] == [{"type": "text", "text": "Found it."}]
    first.close()
    second.close()


def test_continue_from_refuses_hosted_items_before_anything_is_sent(
    openai_loopback: OpenAILoopback,
) -> None:
    """The refusal comes before the first request: the server sees nothing."""
    openai_loopback.reply(ok(response_body(WEB_SEARCH_CALL, _message("Sunny."))))
    first = OpenAIAdapter(model="gpt-test", api_key="k", base_url=openai_loopback.base_url)
    earlier = first.evaluate(_lookup_prompt())
    sent = len(openai_loopback.requests)
    second = AnthropicAdapter(
        model="claude-test", api_key="k", base_url=claude.root_url(openai_loopback)
    )
    with pytest.raises(HistoryTranslationError, match=r"\(web_search_call\)"):
        second.evaluate(_lookup_prompt(), continue_from=earlier)
    assert len(openai_loopback.requests) == sent
    first.close()
    second.close()


@pytest.mark.parametrize(
    ("continued", "message"),
    [
        ("not a response", "continue_from must be a PromptResponse, got str"),
        (
            "orphan output",
            "continue_from conversation[1] is the output of call 'ghost', which the model "
            "turn before it did not make",
        ),
        ("stray item", "continue_from conversation[0] is a str, not a conversation item"),
    ],
)
def test_continue_from_is_checked_before_anything_happens(continued: str, message: str) -> None:
    """A continuation that no provider could send is a ConfigValidationError up front."""
    adapter = OfflineAdapter([ScriptedTurn(text="never")])
    earlier: object = continued
    if continued == "orphan output":
        orphan = ToolOutputMessage(call_id="ghost", name="lookup", content="x", success=True)
        earlier = PromptResponse(
            prompt_name="p",
            evaluation_id="e",
            text="",
            output=None,
            conversation=(PromptMessage(text="p"), AssistantMessage(turn=ModelTurn()), orphan),
        )
    if continued == "stray item":
        stray: Any = "a string"
        earlier = PromptResponse(
            prompt_name="p",
            evaluation_id="e",
            text="",
            output=None,
            conversation=(PromptMessage(text="p"), stray),
        )
    with pytest.raises(ConfigValidationError, match=re.escape(message)) as caught:
        adapter.evaluate(_lookup_prompt(), continue_from=earlier)  # type: ignore[arg-type]  # a wrong type is one case
    assert caught.value.field_name == "continue_from"
    assert adapter.provider.remaining_turns == 1


def test_calls_with_decoded_arguments_are_carried_over(providers: Providers) -> None:
    """A call whose arguments were decoded (a mapping) goes out as each wire wants it."""
    call = ToolCall(call_id="call_1", name="lookup", arguments={"a": 1})
    turn = ModelTurn(tool_calls=(call,), raw_format="elsewhere")
    history = (
        PromptMessage(text="Go on."),
        AssistantMessage(turn=turn),
        ToolOutputMessage(call_id="call_1", name="lookup", content="found 1", success=True),
    )
    request = turn_request(history, 2)
    responses = cast("Body", providers.build("responses", request))
    chat = cast("Body", providers.build("chat", request))
    claude_body = cast("Body", providers.build("anthropic", request))
    assert cast("list[Body]", responses["input"])[1] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "lookup",
        "arguments": '{"a": 1}',
    }
    chat_calls = cast("list[Body]", cast("list[Body]", chat["messages"])[1]["tool_calls"])
    assert chat_calls[0]["function"] == {"name": "lookup", "arguments": '{"a": 1}'}
    assert cast("list[Body]", claude_body["messages"])[1]["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"a": 1}}
    ]


def _message(text: str) -> Body:
    return {
        "id": "msg_2",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _lookup(params: Query, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message=f"found {params.a}")


def _lookup_prompt() -> Prompt[None]:
    tool = Tool[Query, None](name="lookup", description="Look up.", handler=_lookup)
    return Prompt(
        ns="t", key="lookup", sections=[MarkdownSection(title="T", template="Go.", tools=(tool,))]
    )
