"""Native deferred loading, provider-neutral: when to take a catalogue up, and its calls.

A prompt may offer a catalogue as :class:`~weakincentives.prompt.DeferredTools` (the
discovery section does). A provider with its own tool search (OpenAI Responses,
Anthropic Messages) then declares the catalogue deferred instead of the section's
discovery tools. Whatever the wire, the conversation records the flow neutrally, so the
loop runs it unchanged and another provider can carry it on with the discovery tools:

- a client-side search is a call of ``offer.search_tool`` (its result names the tools
  found, ``ToolOutputMessage.loaded``);
- a call of a loaded tool is a call of ``offer.call_tool`` with
  ``{"tool_id": ..., "arguments": {...}}``, run by the catalogue's executor.

A turn whose calls cannot be expressed that way on the target (the discovery tools a
native provider does not declare, a tool never loaded) is refused with
``HistoryTranslationError`` before anything is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from weakincentives.adapters._turns import (
    ConversationItem,
    ModelTurn,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.errors import HistoryTranslationError
from weakincentives.prompt import DeferredTool, DeferredTools, Tool
from weakincentives.runtime import ToolCall
from weakincentives.serde import JSONValue

__all__ = [
    "MAX_DEFERRED_TOOLS",
    "NativeCall",
    "declared_tools",
    "loaded_before",
    "native_calls",
    "native_offer",
    "neutral_call",
    "search_arguments",
]

MAX_DEFERRED_TOOLS = 10_000
"""The largest catalogue a provider declares deferred: Anthropic documents 10,000 tools
as its tool search limit; OpenAI documents none, and the same bound is kept there.
A larger one keeps the discovery tools."""


def native_offer(request: TurnRequest, *, enabled: bool) -> DeferredTools | None:
    """The catalogue ``request`` loads natively, or None to keep the discovery tools.

    None when the provider's tool search is off, the prompt offers no catalogue, the
    catalogue is larger than ``MAX_DEFERRED_TOOLS``, or one of its names is taken by a
    tool the prompt declares itself (the provider would refuse the duplicate).
    """
    offer = request.rendered.deferred_tools
    if not enabled or offer is None or len(offer.tools) > MAX_DEFERRED_TOOLS:
        return None
    own = {tool.name for tool in declared_tools(request, offer)}
    if any(tool.name in own for tool in offer.tools):
        return None
    return offer


def declared_tools(request: TurnRequest, offer: DeferredTools | None) -> tuple[Tool[Any, Any], ...]:
    """The prompt's function tools to declare: all of them, less those the offer replaces."""
    tools = request.rendered.tools
    if offer is None:
        return tools
    return tuple(tool for tool in tools if tool.name not in offer.replaces)


def neutral_call(
    offer: DeferredTools,
    tool: DeferredTool,
    *,
    call_id: str,
    arguments: str | Mapping[str, JSONValue],
    parent_message_id: str | None,
) -> ToolCall:
    """A call of a loaded catalogue tool, as the call of the section's call tool.

    Arguments that are not a JSON object are passed on as they are, so the call tool
    fails with a message naming what was wrong instead of running with none.
    """
    value: JSONValue
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            value = arguments
    else:
        value = dict(arguments)
    return ToolCall(
        call_id=call_id,
        name=offer.call_tool,
        arguments=json.dumps({"tool_id": tool.tool_id, "arguments": value}),
        parent_message_id=parent_message_id,
    )


def search_arguments(call: ToolCall) -> dict[str, JSONValue]:
    """A search call's arguments as an object (``{}`` for text that is not one)."""
    if not isinstance(call.arguments, str):
        return dict(call.arguments)
    try:
        value = json.loads(call.arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeCall:
    """One call of a rebuilt turn as a native provider sends it."""

    kind: Literal["search", "loaded", "function"]
    """A search, a call of a loaded catalogue tool, or an ordinary function call."""
    call_id: str
    name: str
    """The name called on the wire (a loaded tool's own name)."""
    arguments: str | Mapping[str, JSONValue]
    """An object for a search or a loaded tool; the call's own arguments otherwise."""
    group: str | None = None
    """The group (namespace) of a loaded tool."""


def loaded_before(history: Sequence[ConversationItem]) -> set[str]:
    """Catalogue ids some search output in ``history`` found."""
    return {
        tool_id
        for item in history
        if isinstance(item, ToolOutputMessage)
        for tool_id in item.loaded
    }


def native_calls(
    turn: ModelTurn,
    offer: DeferredTools,
    *,
    loaded: set[str],
    prompt_name: str,
    target_format: str,
) -> tuple[NativeCall, ...]:
    """The calls of a turn rebuilt from its neutral fields, for a provider loading natively.

    A search stays a search and a call of a catalogue tool loaded earlier becomes a
    direct call of it. The other discovery tools (list, category search, expansion)
    have no native form, and a catalogue tool never loaded cannot be called directly:
    both raise ``HistoryTranslationError`` naming them.
    """
    result: list[NativeCall] = []
    refused: list[str] = []
    for call in turn.tool_calls:
        if call.name == offer.search_tool:
            result.append(
                NativeCall(
                    kind="search",
                    call_id=call.call_id,
                    name=call.name,
                    arguments=search_arguments(call),
                )
            )
        elif call.name == offer.call_tool:
            native = _loaded_call(call, offer, loaded)
            if native is None:
                refused.append(f"{call.name} of a tool no search loaded")
            else:
                result.append(native)
        elif call.name in offer.replaces:
            refused.append(f"{call.name} call")
        else:
            result.append(
                NativeCall(
                    kind="function", call_id=call.call_id, name=call.name, arguments=call.arguments
                )
            )
    if refused:
        raise HistoryTranslationError(
            prompt_name=prompt_name,
            source_format=turn.raw_format or "unknown",
            target_format=f"{target_format} with native tool search",
            kinds=tuple(dict.fromkeys(refused)),
        )
    return tuple(result)


def _loaded_call(call: ToolCall, offer: DeferredTools, loaded: set[str]) -> NativeCall | None:
    arguments = search_arguments(call)
    tool_id, inner = arguments.get("tool_id"), arguments.get("arguments", {})
    if not isinstance(tool_id, str) or tool_id not in loaded or not isinstance(inner, dict):
        return None
    tool = offer.by_id(tool_id)
    if tool is None:
        return None
    return NativeCall(
        kind="loaded", call_id=call.call_id, name=tool.name, arguments=inner, group=tool.group
    )
