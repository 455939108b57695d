"""Translate turns to Messages API request bodies and replies back to turns.

Shapes follow the ``anthropic`` SDK's ``types/message_create_params.py`` and
``types/message.py``. A reply is the tuple of messages of one turn: more than one
when the provider paused a long turn (``stop_reason: "pause_turn"``) and the
provider's ``send`` continued it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from weakincentives.adapters import _turns
from weakincentives.adapters._history import (
    NativeTurns,
    call_input,
    replays_raw_items,
    spoken_text,
)
from weakincentives.adapters._native_search import declared_tools, native_offer
from weakincentives.adapters._reply import count, malformed, nested, truncated
from weakincentives.adapters._request_body import WireOptions, attach_tools
from weakincentives.adapters.anthropic._blocks import container_id
from weakincentives.adapters.anthropic._codec_code_execution import code_execution_request
from weakincentives.adapters.anthropic._schema import anthropic_schema
from weakincentives.adapters.anthropic._tool_search import (
    NATIVE_BLOCKS,
    MessagesToolSearch,
    native_blocks,
    read_loaded_call,
    search_result,
    tool_search_declarations,
)
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt import DeferredTools, Tool
from weakincentives.runtime import TokenUsage, ToolCall
from weakincentives.serde import JSONValue
from weakincentives.tools import WEB_SEARCH_KIND

__all__ = [
    "ANTHROPIC_FORMAT",
    "DEFAULT_MAX_TOKENS",
    "MessagesWireOptions",
    "OutputFormatMode",
    "build_messages_body",
    "messages_tool",
    "parse_messages_reply",
]

type Body = dict[str, JSONValue]

type OutputFormatMode = Literal["json_schema", "prompt"]
"""``json_schema``: send ``output_config.format`` where it can be honoured; ``prompt``: never."""

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` is required by the API; sent when neither the loop nor the options set it."""

_FINISHED = frozenset({"end_turn", "tool_use", "stop_sequence", None})

ANTHROPIC_FORMAT = "anthropic-messages"
"""The ``raw_format`` of turns read from Messages API replies."""

# Content blocks another provider may leave out: the neutral fields carry their content
# (text, tool calls) or they are the model's private notes (thinking).
# A server-side tool search is left out too: the neutral calls that follow it carry the
# tools it loaded (see ``_tool_search``).
_NEUTRAL_BLOCKS = frozenset({"text", "tool_use", "thinking", "redacted_thinking"}) | NATIVE_BLOCKS
_SEARCH_TOOLS = frozenset({"tool_search_tool_bm25", "tool_search_tool_regex"})

_TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]{1,128}")
_UNSAFE_ID = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagesWireOptions(WireOptions):
    """The Messages API's options on top of the model and request options."""

    output_format: OutputFormatMode = "json_schema"
    tool_search: MessagesToolSearch = "off"
    """How a catalogue offered by the prompt is loaded (``off``: the discovery tools)."""


def messages_tool(tool: Tool[Any, Any]) -> Body:
    """The Messages API definition of a client tool, from its cached spec."""
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.spec.parameters_schema,
    }


def build_messages_body(request: _turns.TurnRequest, wire: MessagesWireOptions) -> Body:
    """The keyword arguments of ``client.messages.create`` for one turn.

    The options' ``tools`` follow the prompt's and their ``output_config`` keeps its
    other settings next to the output format. JSON outputs are asked for only for
    schemas Anthropic's subset can carry (``OutputSchema.strict``) and not alongside
    web search, whose citations Anthropic documents as incompatible with them; the
    answer shape is in the prompt text in every case.
    """
    options = wire.options
    body: Body = dict(options)
    body["model"] = wire.model
    if "max_tokens" not in options:
        cap = request.max_output_tokens
        body["max_tokens"] = cap if cap is not None else DEFAULT_MAX_TOKENS
    hosted = request.rendered.hosted_tools
    container, uploads = code_execution_request(hosted)
    offer = native_offer(request, enabled=wire.tool_search != "off")
    body["messages"] = _Messages(request, uploads, offer).build()
    tools: list[JSONValue] = [messages_tool(tool) for tool in declared_tools(request, offer)]
    if offer is not None:
        tools.extend(tool_search_declarations(offer, wire.tool_search))
    attach_tools(body, tools, request, options, no_calls={"type": "none"})
    schema = request.output_schema
    searching = any(tool.kind == WEB_SEARCH_KIND for tool in hosted)
    if (
        schema is not None
        and request.constrain_output
        and schema.strict
        and wire.output_format == "json_schema"
        and not searching
    ):
        config = options.get("output_config")
        body["output_config"] = {
            **(config if isinstance(config, dict) else {}),
            "format": {"type": "json_schema", "schema": anthropic_schema(schema.schema)},
        }
    container = container or _last_container(request.history)
    if container is not None and "container" not in options:
        body["container"] = container
    return body


def _last_container(history: Sequence[_turns.ConversationItem]) -> str | None:
    """The container an earlier turn ran code in, so later turns see the same files."""
    for entry in reversed(history):
        if isinstance(entry, _turns.AssistantMessage) and entry.turn.raw_format == ANTHROPIC_FORMAT:
            for item in reversed(entry.turn.raw_items):
                found = container_id(item)
                if found is not None:
                    return found
    return None


class _Messages:
    """The request's messages, with or without native tool search."""

    def __init__(
        self, request: _turns.TurnRequest, uploads: tuple[str, ...], offer: DeferredTools | None
    ) -> None:
        self._request = request
        self._uploads = uploads
        self._offer = offer
        self._native = NativeTurns.of(request, offer, ANTHROPIC_FORMAT)
        self._declared = {tool.name for tool in declared_tools(request, offer)}

    def build(self) -> list[JSONValue]:
        """Alternating user and assistant messages; adjacent items of one role share one."""
        messages: list[Body] = []
        for entry in self._request.history:
            role, blocks = self._blocks(entry)
            if not blocks:
                continue
            if messages and messages[-1]["role"] == role:
                content = messages[-1]["content"]
                assert isinstance(content, list)
                content.extend(blocks)
            else:
                messages.append({"role": role, "content": blocks})
        return list(messages)

    def _blocks(self, entry: _turns.ConversationItem) -> tuple[str, list[JSONValue]]:
        if isinstance(entry, _turns.PromptMessage):
            text: list[JSONValue] = [{"type": "text", "text": entry.text}]
            text.extend({"type": "container_upload", "file_id": f} for f in self._uploads)
            return "user", text
        if isinstance(entry, _turns.FeedbackMessage):
            return "user", [{"type": "text", "text": entry.text}]
        if isinstance(entry, _turns.ToolOutputMessage):
            offer = self._offer
            use_id = tool_use_id(entry.call_id)
            if offer is not None and entry.name == offer.search_tool:
                return "user", [search_result(offer, entry, use_id)]
            return "user", [
                {
                    "type": "tool_result",
                    "tool_use_id": use_id,
                    "content": entry.content,
                    "is_error": not entry.success,
                }
            ]
        if isinstance(entry, _turns.AssistantMessage):
            return "assistant", self._turn(entry.turn)
        raise AssertionError(f"unknown conversation item {entry!r}")

    def _turn(self, turn: _turns.ModelTurn) -> list[JSONValue]:
        prompt_name = self._request.prompt_name
        replays = replays_raw_items(turn, ANTHROPIC_FORMAT, prompt_name=prompt_name)
        blocks = [
            block
            for item in (turn.raw_items if replays else ())
            for block in _content(item)
            if not _empty(block)
        ]
        if replays and self._same_mode(blocks):
            return blocks
        if self._native is None:
            return _rebuilt(turn)
        return _said(turn) + native_blocks(self._native.calls(turn), tool_use_id)

    def _same_mode(self, blocks: Sequence[JSONValue]) -> bool:
        """Whether a turn's own blocks fit the request's tool declarations, so they replay.

        With native search, a turn that called the discovery tools left out is rebuilt;
        without it, a turn that searched natively or called a deferred tool is.
        """
        offer = self._offer
        offered = self._request.rendered.deferred_tools
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind, name = block.get("type"), block.get("name")
            if offer is not None:
                if kind == "tool_use" and name in offer.replaces and name != offer.search_tool:
                    return False
            elif _native_block(kind, name) or (
                kind == "tool_use" and _deferred_name(name, offered, self._declared)
            ):
                return False
        return True


def _native_block(kind: JSONValue, name: JSONValue) -> bool:
    """A block of a server-side tool search (the call or its result)."""
    return kind in NATIVE_BLOCKS or (
        kind == "server_tool_use" and isinstance(name, str) and name in _SEARCH_TOOLS
    )


def _deferred_name(name: JSONValue, offered: DeferredTools | None, declared: set[str]) -> bool:
    """Whether ``name`` is a catalogue tool's deferred name rather than a declared tool."""
    return (
        offered is not None
        and isinstance(name, str)
        and name not in declared
        and offered.named(name) is not None
    )


def _content(item: Mapping[str, JSONValue]) -> list[JSONValue]:
    content = item.get("content")
    return content if isinstance(content, list) else []


def tool_use_id(call_id: str) -> str:
    """``call_id`` as a ``tool_use`` id, which the API limits to ``[a-zA-Z0-9_-]``.

    Ids from Anthropic already fit and are kept; another provider's id that does not is
    spelled with those characters plus a digest of the original, so two ids never merge.
    The same id maps the same way for the call and for its result.
    """
    if _TOOL_USE_ID.fullmatch(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{_UNSAFE_ID.sub('_', call_id)[:64]}_{digest}"


def _empty(block: JSONValue) -> bool:
    """An empty text block, which the API refuses in a request (a reply may hold one)."""
    return isinstance(block, dict) and block.get("type") == "text" and not block.get("text")


def _said(turn: _turns.ModelTurn) -> list[JSONValue]:
    text = spoken_text(turn)
    blocks: list[JSONValue] = [{"type": "text", "text": text}] if text else []
    return blocks


def _rebuilt(turn: _turns.ModelTurn) -> list[JSONValue]:
    """A turn another provider produced, as content blocks: its text, then its calls."""
    blocks = _said(turn)
    blocks.extend(
        {
            "type": "tool_use",
            "id": tool_use_id(call.call_id),
            "name": call.name,
            "input": call_input(call.arguments),
        }
        for call in turn.tool_calls
    )
    return blocks


def parse_messages_reply(
    replies: Sequence[Mapping[str, JSONValue]],
    *,
    request: Body,
    turn: _turns.TurnRequest,
    offer: DeferredTools | None = None,
) -> _turns.ModelTurn:
    """Read the turn from its messages: text, ``tool_use`` calls, stop reason and usage.

    With ``offer`` (the catalogue the request declared deferred), a ``tool_use`` of a
    loaded catalogue tool is read as a call of the discovery section's call tool.
    """
    name = turn.prompt_name
    if not replies:
        raise malformed("no message was received", {}, name)
    blocks: list[JSONValue] = []
    usage = TokenUsage()
    for body in replies:
        content = body.get("content")
        if body.get("type") == "error" or not isinstance(content, list):
            raise _reply_problem(body, name)
        blocks.extend(content)
        usage = usage + _usage(body.get("usage"))
    last = replies[-1]
    texts: list[str] = []
    calls: list[ToolCall] = []
    message_id = last.get("id")
    parent = message_id if isinstance(message_id, str) else None
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise malformed(f"content[{index}] is not an object", last, name)
        kind = block.get("type")
        if not isinstance(kind, str):
            raise malformed(f"content[{index}] has no string type", last, name)
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise malformed(f"content[{index}] (text) has no text", last, name)
            texts.append(text)
        elif kind == "tool_use":
            loaded = None if offer is None else read_loaded_call(block, offer, parent)
            calls.append(loaded or _call(block, index, parent, last, name))
    raw: Body = {**last, "content": blocks}
    containers = [body["container"] for body in replies if container_id(body) is not None]
    if containers:
        raw["container"] = containers[-1]
    refusal = _check_stop(last, request, turn)
    if refusal is not None:
        calls, texts = [], []
    return _turns.ModelTurn(
        text="".join(texts),
        tool_calls=tuple(calls),
        raw_items=(raw,),
        raw_format=ANTHROPIC_FORMAT,
        untranslatable=_untranslatable(blocks),
        usage=usage,
        response_id=parent,
        refusal=refusal,
        request=request,
    )


def _untranslatable(blocks: Sequence[JSONValue]) -> tuple[str, ...]:
    """Types of blocks with no neutral form (hosted-tool calls and results)."""
    return tuple(
        str(block.get("type"))
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") not in _NEUTRAL_BLOCKS
        and not _native_block(block.get("type"), block.get("name"))
    )


def _reply_problem(body: Mapping[str, JSONValue], prompt_name: str) -> PromptEvaluationError:
    error = body.get("error")
    if body.get("type") == "error" and isinstance(error, dict):
        message = error.get("message")
        detail = message if isinstance(message, str) and message else "no details"
        return PromptEvaluationError(
            f"the provider reported an error: {detail}",
            prompt_name=prompt_name,
            phase="response",
            provider_payload=body,
        )
    return malformed("'content' is not a list", body, prompt_name)


def _call(
    block: Mapping[str, JSONValue],
    index: int,
    parent: str | None,
    payload: Mapping[str, JSONValue],
    prompt_name: str,
) -> ToolCall:
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
    if not (isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, dict)):
        raise malformed(
            f"content[{index}] (tool_use) needs a string id and name and an input object",
            payload,
            prompt_name,
        )
    return ToolCall(
        call_id=call_id, name=name, arguments=json.dumps(arguments), parent_message_id=parent
    )


def _check_stop(
    last: Mapping[str, JSONValue], request: Body, turn: _turns.TurnRequest
) -> str | None:
    """Raise for a stop that is not an answer; return the refusal text for a refusal.

    A reply that used every token ``max_tokens`` allowed is cut off whatever stop
    reason the server gave (a compatible server may say ``end_turn`` at the cap); only
    the last message counts, as each part of a continued turn had its own cap.
    A refusal where a structured answer was expected is left to the loop (phase
    ``parse``, as with OpenAI); for a text prompt it is a ``response`` error, since the
    classifier stopped the reply midway and its partial text is not an answer.
    """
    stop = last.get("stop_reason")
    name = turn.prompt_name
    limit = request.get("max_tokens")
    known = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
    written = _usage(last.get("usage")).output_tokens
    # A list or object is no known reason (and cannot be looked up in a set).
    finished = (stop is None or isinstance(stop, str)) and stop in _FINISHED
    if stop == "max_tokens" or (finished and known and written >= known):
        said = "" if stop == "max_tokens" else f" (the server said stop_reason {stop!r})"
        raise truncated(known, said, last, name)
    if finished:
        return None
    if stop == "refusal":
        refusal = _refusal_text(last)
        if turn.output_schema is not None:
            return refusal
        raise PromptEvaluationError(
            f"the model refused to answer: {refusal}",
            prompt_name=name,
            phase="response",
            provider_payload=last,
        )
    reasons = {
        "model_context_window_exceeded": "the conversation no longer fits in the model's "
        "context window; shorten the prompt or the tool outputs",
        "pause_turn": "the provider paused the turn and it was not continued",
    }
    reason = reasons.get(stop) if isinstance(stop, str) else None
    raise PromptEvaluationError(
        f"{reason or 'the reply ended for a reason this adapter does not know'} "
        f"(stop_reason {stop!r})",
        prompt_name=name,
        phase="response",
        provider_payload=last,
    )


def _refusal_text(last: Mapping[str, JSONValue]) -> str:
    details = last.get("stop_details")
    category = nested(last, "stop_details", "category")
    explanation = nested(last, "stop_details", "explanation")
    text = explanation if isinstance(explanation, str) and explanation else None
    label = f" (category {category!r})" if isinstance(details, dict) and category else ""
    return (text or "Anthropic's safety classifiers stopped the reply") + label


def _usage(usage: JSONValue) -> TokenUsage:
    """Usage with cache reads and writes counted as input, as the other providers count it.

    Anthropic's ``input_tokens`` leaves out ``cache_read_input_tokens`` and
    ``cache_creation_input_tokens``; OpenAI's input count includes cached tokens.
    ``TokenUsage.input_tokens`` is the sum of all three, ``cached_input_tokens`` the
    cache reads and ``cache_write_tokens`` the cache writes.
    """
    if not isinstance(usage, dict):
        return TokenUsage()
    reads = count(usage.get("cache_read_input_tokens"))
    writes = count(usage.get("cache_creation_input_tokens"))
    return TokenUsage(
        input_tokens=count(usage.get("input_tokens")) + reads + writes,
        output_tokens=count(usage.get("output_tokens")),
        cached_input_tokens=reads,
        reasoning_tokens=count(nested(usage, "output_tokens_details", "thinking_tokens")),
        cache_write_tokens=writes,
    )
