"""Three wire formats behind one test vocabulary, for the cross-provider suite.

A test states a model turn in neutral terms (``Turn(text=..., calls=(Call(...),))``) and
each :class:`Wire` encodes it in its provider's documented reply shape (a JSON body or
a server-sent event stream), builds the adapter on the real SDK pointed at the
loopback server, and reads back from recorded requests what the adapter sent (the
prompt text, the tool results). The same assertions then hold for every wire.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from tests.adapters.anthropic import bodies as claude
from tests.adapters.conftest import OpenAILoopback, Reply, ok, response_body
from tests.adapters.openai import chat_bodies as chat
from weakincentives.adapters import Adapter
from weakincentives.adapters.anthropic import AnthropicMessages
from weakincentives.adapters.openai import ChatCompletions, OpenAIResponses
from weakincentives.serde import JSONValue

type Body = dict[str, JSONValue]
type ClientKind = Literal["sync", "async"]
type WireName = Literal["responses", "chat", "anthropic"]

WIRES: tuple[WireName, ...] = ("responses", "chat", "anthropic")


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call the model makes."""

    call_id: str
    name: str
    arguments: dict[str, JSONValue]


@dataclass(frozen=True, slots=True)
class Turn:
    """What the model says in one turn: text, calls, how it stopped, tokens used."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    truncated: bool = False
    input_tokens: int = 100
    output_tokens: int = 20


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool result as the adapter sent it back."""

    call_id: str
    content: str
    is_error: bool | None
    """The wire's error flag; None where the wire has none (OpenAI)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Wire:
    """One provider's wire: replies, the adapter, and how to read its requests."""

    name: WireName
    path: str
    adapter_factory: Callable[..., Adapter[Any]]
    encode: Callable[[Turn, bool], Reply]
    outputs: Callable[[Body], list[ToolOutput]]
    prompt_text: Callable[[Body], str]
    error_body: Callable[[str], Body]
    error_payload: Callable[[Body], JSONValue]
    """What the SDK exposes as the error body (``APIStatusError.body``) for an error reply."""

    def adapter(
        self, loopback: OpenAILoopback, kind: ClientKind = "sync", **kwargs: Any
    ) -> Adapter[Any]:
        """The adapter on the real SDK client of ``kind``, pointed at the loopback."""
        return self.adapter_factory(loopback, kind, **kwargs)

    def reply(self, turn: Turn, *, stream: bool = False) -> Reply:
        """``turn`` in this wire's reply shape."""
        return self.encode(turn, stream)


# --- OpenAI Responses API -------------------------------------------------------------


def _responses_body(turn: Turn) -> Body:
    output: list[JSONValue] = [
        {
            "id": f"fc_{call.call_id}",
            "type": "function_call",
            "status": "completed",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": json.dumps(call.arguments),
        }
        for call in turn.calls
    ]
    if turn.text:
        output.insert(
            0,
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            },
        )
    extra: dict[str, JSONValue] = {}
    if turn.truncated:
        extra = {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    usage: JSONValue = {
        "input_tokens": turn.input_tokens,
        "output_tokens": turn.output_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }
    return response_body(*output, usage=usage, **extra)


def _responses_encode(turn: Turn, stream: bool) -> Reply:
    body = _responses_body(turn)
    if not stream:
        return ok(body)
    events: list[Body] = [
        {"type": "response.created", "response": {**body, "status": "in_progress", "output": []}}
    ]
    events.extend({"type": "response.output_text.delta", "delta": piece} for piece in _pieces(turn))
    closing = "response.incomplete" if turn.truncated else "response.completed"
    events.append({"type": closing, "response": body})
    data = "".join(
        f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': n})}\n\n"
        for n, event in enumerate(events)
    )
    return Reply(raw=data.encode(), headers={"content-type": "text/event-stream"})


def _responses_outputs(body: Body) -> list[ToolOutput]:
    items = body["input"]
    assert isinstance(items, list)
    return [
        ToolOutput(call_id=str(item["call_id"]), content=str(item["output"]), is_error=None)
        for item in items
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def _responses_prompt(body: Body) -> str:
    items = body["input"]
    assert isinstance(items, list)
    assert isinstance(items[0], dict)
    content = items[0]["content"]
    assert isinstance(content, str)
    return content


# --- OpenAI Chat Completions -------------------------------------------------------------


def _chat_encode(turn: Turn, stream: bool) -> Reply:
    calls = [chat.chat_call(c.call_id, c.name, json.dumps(c.arguments)) for c in turn.calls]
    usage = chat.chat_usage(turn.input_tokens, turn.output_tokens)
    finish = "length" if turn.truncated else None
    if not stream:
        return ok(
            chat.completion(turn.text or None, calls=calls, usage=usage, finish_reason=finish)
        )
    chunks = [chat.chunk({"role": "assistant", "content": ""})]
    chunks.extend(chat.chunk({"content": piece}) for piece in _pieces(turn))
    chunks.extend(
        chat.chunk({"tool_calls": [{**call, "index": index}]}) for index, call in enumerate(calls)
    )
    reason = finish or ("tool_calls" if calls else "stop")
    chunks.append(chat.chunk({}, finish_reason=reason))
    chunks.append(chat.chunk(usage=usage))
    return chat.chat_stream(chunks)


def _chat_outputs(body: Body) -> list[ToolOutput]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [
        ToolOutput(call_id=str(m["tool_call_id"]), content=str(m["content"]), is_error=None)
        for m in messages
        if isinstance(m, dict) and m.get("role") == "tool"
    ]


def _chat_prompt(body: Body) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    assert isinstance(messages[0], dict)
    content = messages[0]["content"]
    assert isinstance(content, str)
    return content


# --- Anthropic Messages ------------------------------------------------------------------


def _anthropic_encode(turn: Turn, stream: bool) -> Reply:
    blocks = [claude.text(turn.text)] if turn.text else []
    blocks.extend(claude.tool_use(c.call_id, c.name, c.arguments) for c in turn.calls)
    body = claude.message(
        *blocks,
        stop_reason="max_tokens" if turn.truncated else None,
        usage_=claude.usage(turn.input_tokens, turn.output_tokens),
    )
    if not stream:
        return ok(body)
    return claude.events(*claude.streamed(body, text_pieces=_pieces(turn)))


def _anthropic_outputs(body: Body) -> list[ToolOutput]:
    messages = body["messages"]
    assert isinstance(messages, list)
    found: list[ToolOutput] = []
    for message in messages:
        assert isinstance(message, dict)
        content = message["content"]
        assert isinstance(content, list)
        found.extend(
            ToolOutput(
                call_id=str(b["tool_use_id"]),
                content=str(b["content"]),
                is_error=b["is_error"] is True,
            )
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_result"
        )
    return found


def _anthropic_prompt(body: Body) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    assert isinstance(messages[0], dict)
    content = messages[0]["content"]
    assert isinstance(content, list)
    assert isinstance(content[0], dict)
    text = content[0]["text"]
    assert isinstance(text, str)
    return text


def _pieces(turn: Turn) -> list[str]:
    """The text in two pieces, so streaming is visibly more than one delta."""
    if not turn.text:
        return []
    half = max(len(turn.text) // 2, 1)
    return [turn.text[:half], turn.text[half:]] if len(turn.text) > 1 else [turn.text]


# --- adapters on the real SDKs -----------------------------------------------------------


def sdk_client(
    name: WireName,
    loopback: OpenAILoopback,
    kind: ClientKind = "sync",
    *,
    timeout: float = 10.0,
    max_retries: int = 0,
) -> Any:
    """The real SDK client of ``kind`` for wire ``name``, pointed at the loopback."""
    if name == "anthropic":
        anthropic = pytest.importorskip("anthropic")
        factory = anthropic.Anthropic if kind == "sync" else anthropic.AsyncAnthropic
        base_url = claude.root_url(loopback)
    else:
        openai = pytest.importorskip("openai")
        factory = openai.OpenAI if kind == "sync" else openai.AsyncOpenAI
        base_url = loopback.base_url
    return factory(base_url=base_url, api_key="test-key", max_retries=max_retries, timeout=timeout)


def _responses_adapter(loopback: OpenAILoopback, kind: ClientKind, **kwargs: Any) -> Any:
    settings = kwargs.pop("settings", None)
    client = kwargs.pop("client", None) or sdk_client("responses", loopback, kind)
    return Adapter(OpenAIResponses(model="gpt-test", client=client, **kwargs), settings=settings)


def _chat_adapter(loopback: OpenAILoopback, kind: ClientKind, **kwargs: Any) -> Any:
    settings = kwargs.pop("settings", None)
    client = kwargs.pop("client", None) or sdk_client("chat", loopback, kind)
    return Adapter(ChatCompletions(model="gpt-test", client=client, **kwargs), settings=settings)


def _anthropic_adapter(loopback: OpenAILoopback, kind: ClientKind, **kwargs: Any) -> Any:
    settings = kwargs.pop("settings", None)
    client = kwargs.pop("client", None) or sdk_client("anthropic", loopback, kind)
    provider = AnthropicMessages(model="claude-test", client=client, **kwargs)
    return Adapter(provider, settings=settings)


def _openai_error(message: str) -> Body:
    return {"error": {"message": message, "type": "server_error", "param": None, "code": None}}


def _inner_error(body: Body) -> JSONValue:
    """The openai SDK unwraps ``{"error": {...}}`` to the inner object."""
    return body["error"]


def _anthropic_error(message: str) -> Body:
    return claude.api_error("api_error", message)


def wire(name: WireName) -> Wire:
    """The :class:`Wire` called ``name``."""
    if name == "responses":
        return Wire(
            name=name,
            path="/v1/responses",
            adapter_factory=_responses_adapter,
            encode=_responses_encode,
            outputs=_responses_outputs,
            prompt_text=_responses_prompt,
            error_body=_openai_error,
            error_payload=_inner_error,
        )
    if name == "chat":
        return Wire(
            name=name,
            path="/v1/chat/completions",
            adapter_factory=_chat_adapter,
            encode=_chat_encode,
            outputs=_chat_outputs,
            prompt_text=_chat_prompt,
            error_body=_openai_error,
            error_payload=_inner_error,
        )
    return Wire(
        name=name,
        path="/v1/messages",
        adapter_factory=_anthropic_adapter,
        encode=_anthropic_encode,
        outputs=_anthropic_outputs,
        prompt_text=_anthropic_prompt,
        error_body=_anthropic_error,
        error_payload=lambda body: body,
    )
