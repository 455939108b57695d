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

How a turn recorded either way is sent to a provider loading natively is decided in
``_history`` (``native_calls``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from weakincentives.adapters._turns import TurnRequest
from weakincentives.prompt import DeferredTool, DeferredTools, Tool
from weakincentives.runtime import ToolCall
from weakincentives.serde import JSONValue

__all__ = [
    "MAX_DEFERRED_TOOLS",
    "declared_tools",
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
