"""Translate turns to Chat Completions request bodies and completion bodies back to turns.

Shapes follow the ``openai`` SDK's ``chat/completion_create_params.py`` and
``chat_completion.py``. The same wire is spoken by vLLM, Ollama, llama.cpp's server and
LM Studio, which differ in what they honour; :class:`ChatWireOptions` holds the knobs
that let one adapter talk to all of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from weakincentives.adapters import _turns
from weakincentives.adapters._history import call_arguments, replays_raw_items, spoken_text
from weakincentives.adapters._reply import malformed, openai_usage, truncated
from weakincentives.adapters._request_body import WireOptions, attach_tools
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt import Tool
from weakincentives.runtime import TokenUsage, ToolCall
from weakincentives.serde import JSONValue

__all__ = [
    "CHAT_FORMAT",
    "ChatWireOptions",
    "ResponseFormatMode",
    "TokenCapField",
    "build_chat_body",
    "chat_function_tool",
    "parse_chat_body",
]

type Body = dict[str, JSONValue]

CHAT_FORMAT = "openai-chat"
"""The ``raw_format`` of turns read from ``chat.completion`` bodies."""

type ResponseFormatMode = Literal["json_schema", "json_object", "none"]
"""How a structured prompt asks for JSON: a schema, plain JSON mode, or the prompt text only."""

type TokenCapField = Literal["max_completion_tokens", "max_tokens"]
"""The request field that carries the output-token cap."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatWireOptions(WireOptions):
    """The Chat Completions options on top of the model and request options."""

    response_format: ResponseFormatMode = "json_schema"
    token_cap_field: TokenCapField = "max_completion_tokens"


def chat_function_tool(tool: Tool[Any, Any]) -> Body:
    """The Chat Completions definition of a function tool, from its cached spec."""
    spec = tool.spec
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": spec.parameters_schema,
            "strict": spec.strict,
        },
    }


def build_chat_body(request: _turns.TurnRequest, wire: ChatWireOptions) -> Body:
    """The keyword arguments of ``client.chat.completions.create`` for one turn.

    The options' ``tools`` follow the prompt's; the loop's output-token cap goes in
    ``wire.token_cap_field`` unless the options set either cap field themselves.
    """
    options = wire.options
    body: Body = dict(options)
    body["model"] = wire.model
    if request.max_output_tokens is not None and not _cap_option(options):
        body[wire.token_cap_field] = request.max_output_tokens
    name = request.prompt_name
    body["messages"] = [message for entry in request.history for message in _messages(entry, name)]
    tools: list[JSONValue] = [chat_function_tool(tool) for tool in request.rendered.tools]
    attach_tools(body, tools, request, options, no_calls="none")
    schema = request.output_schema if request.constrain_output else None
    if schema is not None and wire.response_format == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": schema.schema, "strict": schema.strict},
        }
    elif schema is not None and wire.response_format == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


def _cap_option(options: Mapping[str, JSONValue]) -> bool:
    return "max_completion_tokens" in options or "max_tokens" in options


def _messages(entry: _turns.ConversationItem, prompt_name: str) -> Sequence[JSONValue]:
    if isinstance(entry, _turns.PromptMessage | _turns.FeedbackMessage):
        return [{"role": "user", "content": entry.text}]
    if isinstance(entry, _turns.AssistantMessage):
        turn = entry.turn
        if not (turn.text or turn.tool_calls or turn.refusal):
            # The API refuses an assistant message with neither content nor calls; a turn
            # that said nothing adds nothing to the conversation.
            return []
        if replays_raw_items(turn, CHAT_FORMAT, prompt_name=prompt_name):
            return [_replayed(item) for item in turn.raw_items]
        return [_rebuilt(turn)]
    if isinstance(entry, _turns.ToolOutputMessage):
        return [{"role": "tool", "tool_call_id": entry.call_id, "content": entry.content}]
    raise AssertionError(f"unknown conversation item {entry!r}")


def _rebuilt(turn: _turns.ModelTurn) -> JSONValue:
    """A turn another provider produced, as an assistant message with its tool calls."""
    message: Body = {"role": "assistant", "content": spoken_text(turn) or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call_arguments(call.arguments)},
            }
            for call in turn.tool_calls
        ]
    return message


def _replayed(message: Mapping[str, JSONValue]) -> JSONValue:
    """An assistant message as an input message: only the fields the API accepts back.

    A reply's message also carries output-only fields (``annotations``, ``audio``
    expiry...), which are not replayed.
    """
    replay: Body = {"role": "assistant", "content": message.get("content")}
    calls = message.get("tool_calls")
    refusal = message.get("refusal")
    if isinstance(calls, list) and calls:
        replay["tool_calls"] = calls
    elif not replay["content"]:
        # Content may be empty only next to tool calls; a refusal stands in for it (a turn
        # with neither is not replayed at all).
        replay["content"] = refusal if isinstance(refusal, str) else ""
    if isinstance(refusal, str):
        replay["refusal"] = refusal
    return replay


def parse_chat_body(
    payload: Mapping[str, JSONValue], *, request: Body, turn: _turns.TurnRequest
) -> _turns.ModelTurn:
    """Read text, tool calls, refusal and usage from a ``chat.completion`` body."""
    name = turn.prompt_name
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        raise malformed("'choices' is not a non-empty list", payload, name)
    choice = choices[0]
    if not isinstance(choice, dict):
        raise malformed("choices[0] is not an object", payload, name)
    message = choice.get("message")
    if not isinstance(message, dict):
        raise malformed("choices[0].message is not an object", payload, name)
    usage = openai_usage(
        payload.get("usage"), input_field="prompt_tokens", output_field="completion_tokens"
    )
    _check_finish(choice.get("finish_reason"), usage, request, payload, name)
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise malformed("choices[0].message.content is not a string or null", payload, name)
    refusal = message.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        raise malformed("choices[0].message.refusal is not a string or null", payload, name)
    response_id = payload.get("id")
    parent = response_id if isinstance(response_id, str) else None
    calls = _read_calls(message.get("tool_calls"), parent, payload, name)
    return _turns.ModelTurn(
        text=content or "",
        tool_calls=calls,
        raw_items=(message,),
        raw_format=CHAT_FORMAT,
        usage=usage,
        response_id=parent,
        refusal=refusal or None,
        request=request,
    )


def _check_finish(
    reason: JSONValue,
    usage: TokenUsage,
    request: Body,
    payload: Mapping[str, JSONValue],
    prompt_name: str,
) -> None:
    """A reply cut off at the cap is truncated, however the server labels it.

    llama.cpp's server reports ``finish_reason: "stop"`` when it stops at the token
    cap; a reply that used every token it was allowed is reported as truncated
    rather than passed off as a complete answer.
    """
    if reason is not None and not isinstance(reason, str):
        # Any string is read (compatible servers add their own); a list or an object is
        # no reason at all.
        raise malformed("choices[0].finish_reason is not a string or null", payload, prompt_name)
    cap = _cap(request)
    if reason == "length" or (cap is not None and usage.output_tokens >= cap > 0):
        said = "" if reason == "length" else f" (the server said finish_reason {reason!r})"
        raise truncated(cap, said, payload, prompt_name)
    if reason == "content_filter":
        raise PromptEvaluationError(
            "the provider's content filter withheld the reply (finish_reason 'content_filter')",
            prompt_name=prompt_name,
            phase="response",
            provider_payload=payload,
        )


def _cap(request: Body) -> int | None:
    for key in ("max_completion_tokens", "max_tokens"):
        value = request.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _read_calls(
    raw_calls: JSONValue, parent: str | None, payload: Mapping[str, JSONValue], prompt_name: str
) -> tuple[ToolCall, ...]:
    if raw_calls is None:
        return ()
    if not isinstance(raw_calls, list):
        raise malformed("choices[0].message.tool_calls is not a list", payload, prompt_name)
    calls: list[ToolCall] = []
    for index, raw in enumerate(raw_calls):
        where = f"choices[0].message.tool_calls[{index}]"
        function = raw.get("function") if isinstance(raw, dict) else None
        call_id = raw.get("id") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(call_id, str) or not call_id:
            raise malformed(f"{where} needs an id and a function object", payload, prompt_name)
        name, arguments = function.get("name"), function.get("arguments")
        if isinstance(arguments, dict):
            # Some compatible servers send the arguments decoded; they are validated the same way.
            arguments = json.dumps(arguments)
        if not isinstance(name, str) or not isinstance(arguments, str):
            raise malformed(
                f"{where}.function needs a string name and arguments", payload, prompt_name
            )
        calls.append(
            ToolCall(call_id=call_id, name=name, arguments=arguments, parent_message_id=parent)
        )
    return tuple(calls)
