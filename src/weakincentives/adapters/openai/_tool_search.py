"""OpenAI's native tool search on the Responses API: deferred namespaces and ``tool_search``.

Shapes follow the ``openai`` SDK's ``types/responses`` (``NamespaceToolParam``,
``ToolSearchToolParam``, ``ResponseToolSearchCall``, ``ToolSearchCall`` and
``ResponseToolSearchOutputItemParamParam`` input items, ``function_call.namespace``):

- the catalogue's tools are declared inside namespaces, one per top-level category,
  each function with ``defer_loading: true``; the model sees the namespaces' names and
  descriptions until a search loads a function;
- ``execution: "client"`` (the default): the model's ``tool_search_call`` is answered by
  our ranker through the discovery section's search tool, and the next request carries a
  ``tool_search_output`` whose ``tools`` are the found functions' definitions, in their
  namespaces; ``execution: "server"``: OpenAI searches the declared functions itself;
- the model then calls a loaded function as a ``function_call`` with its ``namespace``,
  read as a call of the section's call tool and run by the catalogue's executor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from weakincentives.adapters._history import NativeCall, call_arguments, call_input
from weakincentives.adapters._native_search import neutral_call
from weakincentives.adapters._turns import ToolOutputMessage
from weakincentives.prompt import DeferredTool, DeferredTools
from weakincentives.runtime import ToolCall
from weakincentives.serde import JSONValue

__all__ = [
    "NATIVE_ITEMS",
    "ResponsesToolSearch",
    "native_input_items",
    "read_native_call",
    "search_output",
    "tool_search_declarations",
]

type ResponsesToolSearch = Literal["client", "server", "off"]
"""How the Responses provider loads a catalogue the prompt offers: searched by our ranker
(``client``), by OpenAI (``server``), or not natively (``off``: the discovery tools)."""

type Body = dict[str, JSONValue]

NATIVE_ITEMS = frozenset({"tool_search_call", "tool_search_output"})
"""Output items of a native search; their content is in the neutral calls that follow."""


def tool_search_declarations(
    offer: DeferredTools, execution: ResponsesToolSearch
) -> list[JSONValue]:
    """The namespaces of deferred functions, then the ``tool_search`` tool."""
    tools: list[JSONValue] = [
        _namespace(offer, group, [tool for tool in offer.tools if tool.group == group], True)
        for group in offer.groups
    ]
    if execution == "client":
        tools.append(
            {
                "type": "tool_search",
                "execution": "client",
                "description": offer.search_description,
                "parameters": dict(offer.search_parameters),
            }
        )
    else:
        tools.append({"type": "tool_search", "execution": "server"})
    return tools


def _namespace(
    offer: DeferredTools, group: str, tools: Sequence[DeferredTool], deferred: bool
) -> Body:
    functions: list[JSONValue] = []
    for tool in tools:
        function: Body = {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
            "strict": tool.strict,
        }
        if deferred:
            function["defer_loading"] = True
        functions.append(function)
    return {
        "type": "namespace",
        "name": group,
        "description": offer.groups[group],
        "tools": functions,
    }


def search_output(offer: DeferredTools, output: ToolOutputMessage) -> Body:
    """The ``tool_search_output`` answering a client search: the found tools, loaded.

    Only tools of the offer are loaded (the search may also name tools the caller may
    see but not call); their definitions are grouped by namespace, in search order.
    """
    found = [tool for tool in (offer.by_id(tool_id) for tool_id in output.loaded) if tool]
    groups = list(dict.fromkeys(tool.group for tool in found))
    return {
        "type": "tool_search_output",
        "call_id": output.call_id,
        "execution": "client",
        "status": "completed",
        "tools": [
            _namespace(offer, group, [tool for tool in found if tool.group == group], False)
            for group in groups
        ],
    }


def read_native_call(
    item: Mapping[str, JSONValue], offer: DeferredTools, parent: str | None
) -> ToolCall | None:
    """The neutral call of a native output item, or None when it is not one.

    A client ``tool_search_call`` is a call of the section's search tool; a
    ``function_call`` of a deferred function is a call of its call tool.
    """
    kind = item.get("type")
    call_id = item.get("call_id")
    if not isinstance(call_id, str):
        return None
    if kind == "tool_search_call" and item.get("execution") == "client":
        arguments = item.get("arguments")
        return ToolCall(
            call_id=call_id,
            name=offer.search_tool,
            arguments=call_arguments(arguments if isinstance(arguments, dict) else {}),
            parent_message_id=parent,
        )
    name, arguments = item.get("name"), item.get("arguments")
    if kind != "function_call" or not isinstance(name, str) or not isinstance(arguments, str):
        return None
    tool = offer.named(name)
    if tool is None:
        return None
    return neutral_call(offer, tool, call_id=call_id, arguments=arguments, parent_message_id=parent)


def native_input_items(calls: Sequence[NativeCall]) -> list[JSONValue]:
    """Input items of a rebuilt turn's calls, as a provider loading natively sends them."""
    items: list[JSONValue] = []
    for native in calls:
        if native.kind == "search":
            items.append(
                {
                    "type": "tool_search_call",
                    "call_id": native.call_id,
                    "execution": "client",
                    "status": "completed",
                    "arguments": call_input(native.arguments),
                }
            )
            continue
        item: Body = {
            "type": "function_call",
            "call_id": native.call_id,
            "name": native.name,
            "arguments": call_arguments(native.arguments),
        }
        if native.group is not None:
            item["namespace"] = native.group
        items.append(item)
    return items
