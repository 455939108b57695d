"""Translate turns to Responses API request bodies and response bodies back to turns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from weakincentives.adapters import _turns
from weakincentives.adapters._history import (
    NativeTurns,
    call_arguments,
    replays_raw_items,
    spoken_text,
)
from weakincentives.adapters._native_search import declared_tools, native_offer
from weakincentives.adapters._reply import count, malformed, openai_usage, truncated
from weakincentives.adapters._request_body import attach_tools
from weakincentives.adapters.openai._codecs import openai_includes
from weakincentives.adapters.openai._tool_search import (
    NATIVE_ITEMS,
    ResponsesToolSearch,
    native_input_items,
    read_native_call,
    search_output,
    tool_search_declarations,
)
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt import DeferredTools, Tool
from weakincentives.runtime import ToolCall
from weakincentives.serde import JSONValue

__all__ = [
    "RESPONSES_FORMAT",
    "build_request_body",
    "function_tool",
    "parse_response_body",
    "untranslatable_items",
]

type Body = dict[str, JSONValue]

RESPONSES_FORMAT = "openai-responses"
"""The ``raw_format`` of turns read from Responses API bodies."""

# Output items another provider may leave out: the neutral fields carry their content
# (messages, function calls) or they are the model's private notes (reasoning).
# A native tool search's items are left out too: its client calls are neutral calls, and
# a server search only loaded the definitions the neutral calls that follow name.
_NEUTRAL_ITEMS = frozenset({"message", "function_call", "reasoning"}) | NATIVE_ITEMS


def function_tool(tool: Tool[Any, Any]) -> Body:
    """The Responses API definition of a function tool, from its cached spec."""
    spec = tool.spec
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": spec.parameters_schema,
        "strict": spec.strict,
    }


def build_request_body(
    request: _turns.TurnRequest,
    *,
    model: str,
    options: Mapping[str, JSONValue],
    tool_search: ResponsesToolSearch = "off",
) -> Body:
    """The keyword arguments of ``client.responses.create`` for one turn.

    ``options`` (already checked by the adapter) are merged, never overwritten:
    their ``tools`` follow the prompt's, their ``include`` entries come first, and
    their ``text`` settings sit next to the output format. The loop's output-token cap
    applies unless the options set ``max_output_tokens`` themselves. With
    ``tool_search`` other than ``off``, a catalogue the prompt offers is declared
    deferred with OpenAI's ``tool_search`` in place of the discovery tools.
    """
    body: Body = dict(options)
    body["model"] = model
    if request.max_output_tokens is not None and "max_output_tokens" not in options:
        body["max_output_tokens"] = request.max_output_tokens
    offer = native_offer(request, enabled=tool_search != "off")
    history = _History(request, offer)
    body["input"] = [item for entry in request.history for item in history.items(entry)]
    tools: list[JSONValue] = [function_tool(tool) for tool in declared_tools(request, offer)]
    if offer is not None:
        tools.extend(tool_search_declarations(offer, tool_search))
    attach_tools(body, tools, request, options, no_calls="none")
    includes = dict.fromkeys(_list_option(options, "include"))
    includes.update(dict.fromkeys(openai_includes(request.rendered.hosted_tools)))
    if includes:
        body["include"] = list(includes)
    schema = request.output_schema
    if schema is not None and request.constrain_output:
        text = options.get("text")
        body["text"] = {
            **(text if isinstance(text, dict) else {}),
            "format": {
                "type": "json_schema",
                "name": schema.name,
                "schema": schema.schema,
                "strict": schema.strict,
            },
        }
    return body


def _list_option(options: Mapping[str, JSONValue], key: str) -> list[JSONValue]:
    value = options.get(key)
    return value if isinstance(value, list) else []


class _History:
    """Input items for one request's history, with or without native tool search."""

    def __init__(self, request: _turns.TurnRequest, offer: DeferredTools | None) -> None:
        self._name = request.prompt_name
        self._offer = offer
        self._native = NativeTurns.of(request, offer, RESPONSES_FORMAT)

    def items(self, entry: _turns.ConversationItem) -> Sequence[JSONValue]:
        if isinstance(entry, _turns.PromptMessage | _turns.FeedbackMessage):
            return [{"role": "user", "content": entry.text}]
        if isinstance(entry, _turns.AssistantMessage):
            return self._turn(entry.turn)
        if isinstance(entry, _turns.ToolOutputMessage):
            offer = self._offer
            if offer is not None and entry.name == offer.search_tool:
                return [search_output(offer, entry)]
            return [
                {"type": "function_call_output", "call_id": entry.call_id, "output": entry.content}
            ]
        raise AssertionError(f"unknown conversation item {entry!r}")

    def _turn(self, turn: _turns.ModelTurn) -> list[JSONValue]:
        replays = replays_raw_items(turn, RESPONSES_FORMAT, prompt_name=self._name)
        if replays and _same_mode(turn.raw_items, self._offer):
            return [_replayable(item) for item in turn.raw_items]
        if self._native is None:
            return _rebuilt(turn)
        return _said(turn) + native_input_items(self._native.calls(turn))


def _same_mode(items: Sequence[Mapping[str, JSONValue]], offer: DeferredTools | None) -> bool:
    """Whether a turn's own items fit the request's tool declarations, so they replay.

    A turn recorded with native tool search (search items, namespaced calls) does not
    fit a request with the discovery tools, nor one recorded with the discovery tools
    a request that leaves them out; such a turn is rebuilt from its neutral calls.
    """
    for item in items:
        kind = item.get("type")
        if offer is None and (kind in NATIVE_ITEMS or item.get("namespace") is not None):
            return False
        if offer is not None and kind == "function_call" and item.get("name") in offer.replaces:
            return False
    return True


def _said(turn: _turns.ModelTurn) -> list[JSONValue]:
    text = spoken_text(turn)
    items: list[JSONValue] = [{"type": "message", "role": "assistant", "content": text}]
    return items if text else []


def _rebuilt(turn: _turns.ModelTurn) -> list[JSONValue]:
    """A turn another provider produced, as input items: its text, then its calls."""
    items = _said(turn)
    items.extend(
        {
            "type": "function_call",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": call_arguments(call.arguments),
        }
        for call in turn.tool_calls
    )
    return items


def _replayable(item: Mapping[str, JSONValue]) -> JSONValue:
    """An output item as an input item: exactly as the provider sent it.

    Items are the reply's raw JSON, so replaying them verbatim is what the SDK does for
    ``input += response.output``. Nulls stay: some input fields are required but
    nullable (a code interpreter call's ``code`` and ``outputs``), so dropping them
    would make the next request invalid.
    """
    return dict(item)


def parse_response_body(
    payload: Mapping[str, JSONValue],
    *,
    request: Body,
    prompt_name: str,
    offer: DeferredTools | None = None,
) -> _turns.ModelTurn:
    """Read text, function calls, refusal and usage from a Responses API body.

    With ``offer`` (the catalogue the request declared deferred), a client tool search
    and a call of a loaded function are read as the discovery section's calls.
    """
    _check_truncation(payload, request, prompt_name)
    problem = _status_problem(payload)
    if problem is not None:
        raise PromptEvaluationError(
            problem, prompt_name=prompt_name, phase="response", provider_payload=payload
        )
    output = payload.get("output")
    if not isinstance(output, list):
        raise malformed("'output' is not a list", payload, prompt_name)
    response_id = payload.get("id")
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[ToolCall] = []
    items: list[Mapping[str, JSONValue]] = []
    for index, item in enumerate(output):
        if not isinstance(item, dict):
            raise malformed("an output item is not an object", payload, prompt_name)
        kind = item.get("type")
        if not isinstance(kind, str):
            raise malformed(f"output[{index}] has no string type", payload, prompt_name)
        items.append(item)
        native = (
            None if offer is None else read_native_call(item, offer, _text_or_none(response_id))
        )
        if native is not None:
            calls.append(native)
        elif kind == "message":
            _read_message(item, texts, refusals, payload, prompt_name)
        elif kind == "function_call":
            calls.append(_read_call(item, response_id, payload, prompt_name))
    return _turns.ModelTurn(
        text="".join(texts),
        tool_calls=tuple(calls),
        raw_items=tuple(items),
        raw_format=RESPONSES_FORMAT,
        untranslatable=untranslatable_items(items),
        usage=openai_usage(
            payload.get("usage"), input_field="input_tokens", output_field="output_tokens"
        ),
        response_id=response_id if isinstance(response_id, str) else None,
        refusal="".join(refusals) or None,
        request=request,
    )


def _text_or_none(value: JSONValue) -> str | None:
    return value if isinstance(value, str) else None


def untranslatable_items(items: Sequence[Mapping[str, JSONValue]]) -> tuple[str, ...]:
    """The types of Responses-shaped items with no neutral form (hosted-tool calls)."""
    return tuple(str(item.get("type")) for item in items if item.get("type") not in _NEUTRAL_ITEMS)


def _check_truncation(payload: Mapping[str, JSONValue], request: Body, prompt_name: str) -> None:
    """An answer cut off at the output-token cap is reported as that, not as broken JSON.

    OpenAI says ``incomplete`` with reason ``max_output_tokens``; llama.cpp's server says
    ``completed`` at the cap, so a reply that used every token it was allowed counts as
    cut off too.
    """
    details = payload.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    limit = request.get("max_output_tokens", payload.get("max_output_tokens"))
    known = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
    status = payload.get("status")
    if status == "incomplete" and reason == "max_output_tokens":
        said = ""
    elif status in ("completed", None) and known and _output_tokens(payload) >= known:
        said = f" (the server said status {status!r})"
    else:
        return
    raise truncated(known, said, payload, prompt_name)


def _output_tokens(payload: Mapping[str, JSONValue]) -> int:
    usage = payload.get("usage")
    return count(usage.get("output_tokens")) if isinstance(usage, dict) else 0


def _status_problem(payload: Mapping[str, JSONValue]) -> str | None:
    status = payload.get("status")
    error = payload.get("error")
    if status == "failed" or isinstance(error, dict):
        detail = error.get("message") if isinstance(error, dict) else None
        return f"the provider reported a failed response: {detail or 'no details'}"
    if status == "incomplete":
        details = payload.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        return f"the response is incomplete ({reason or 'no reason given'})"
    # A queued, in-progress or cancelled response has no answer yet; reading its empty
    # output would pass off nothing as the model's reply. Compatible servers may omit
    # the status altogether, which is taken as complete.
    if status is not None and status != "completed":
        return f"the response has status {status!r}, not 'completed'"
    return None


def _read_message(
    item: Mapping[str, JSONValue],
    texts: list[str],
    refusals: list[str],
    payload: Mapping[str, JSONValue],
    prompt_name: str,
) -> None:
    content = item.get("content")
    if not isinstance(content, list):
        raise malformed("a message item has no content list", payload, prompt_name)
    for part in content:
        if not isinstance(part, dict):
            raise malformed("a message content part is not an object", payload, prompt_name)
        kind = part.get("type")
        if kind == "output_text":
            text = part.get("text")
            if not isinstance(text, str):
                raise malformed("an output_text part has no text", payload, prompt_name)
            texts.append(text)
        elif kind == "refusal":
            refusal = part.get("refusal")
            if refusal is not None and not isinstance(refusal, str):
                # Read as "" the model's refusal would be lost and the turn seem empty;
                # a part with none (null or missing) is one, asked again.
                raise malformed("a refusal part's refusal is not a string", payload, prompt_name)
            refusals.append(refusal or "")


def _read_call(
    item: Mapping[str, JSONValue],
    response_id: JSONValue,
    payload: Mapping[str, JSONValue],
    prompt_name: str,
) -> ToolCall:
    call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
    if not (isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, str)):
        raise malformed(
            "a function_call item needs string call_id, name and arguments", payload, prompt_name
        )
    return ToolCall(
        call_id=call_id,
        name=name,
        arguments=arguments,
        parent_message_id=response_id if isinstance(response_id, str) else None,
    )
