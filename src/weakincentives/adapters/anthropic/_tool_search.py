"""Anthropic's native tool search on the Messages API: deferred tools and tool references.

Shapes follow the ``anthropic`` SDK's ``types`` (``ToolParam.defer_loading``,
``ToolSearchToolBm25_20251119Param``, ``ToolSearchToolRegex20251119Param``,
``ToolReferenceBlockParam`` inside a ``tool_result``, ``server_tool_use`` and
``tool_search_tool_result`` blocks):

- the catalogue's tools are declared with ``defer_loading: true``: the model does not
  see them until a search returns a reference to them;
- ``client`` (the default): the discovery section's search tool is declared as an
  ordinary tool; our ranker answers its calls, and the ``tool_result`` carries one
  ``tool_reference`` block per found tool, which loads it; ``bm25`` / ``regex``:
  Anthropic's own search tool searches the deferred tools instead;
- a call of a loaded tool is a ``tool_use`` with its name, read as a call of the
  section's call tool and run by the catalogue's executor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from weakincentives.adapters._history import NativeCall, call_input
from weakincentives.adapters._native_search import neutral_call
from weakincentives.adapters._turns import ToolOutputMessage
from weakincentives.prompt import DeferredTools
from weakincentives.runtime import ToolCall
from weakincentives.serde import JSONValue

__all__ = [
    "NATIVE_BLOCKS",
    "MessagesToolSearch",
    "native_blocks",
    "read_loaded_call",
    "search_result",
    "tool_search_declarations",
]

type MessagesToolSearch = Literal["client", "bm25", "regex", "off"]
"""How the Messages provider loads a catalogue the prompt offers: searched by our ranker
(``client``), by Anthropic's BM25 or regex tool search, or not natively (``off``)."""

type Body = dict[str, JSONValue]

NATIVE_BLOCKS = frozenset({"tool_search_tool_result"})
"""Blocks of a server-side search; the neutral calls that follow carry what they loaded."""

_SERVER_TOOLS: Mapping[str, Body] = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}


def tool_search_declarations(offer: DeferredTools, mode: MessagesToolSearch) -> list[JSONValue]:
    """The search tool (ours or Anthropic's), then every catalogue tool, deferred."""
    search: Body = (
        {
            "name": offer.search_tool,
            "description": offer.search_description,
            "input_schema": dict(offer.search_parameters),
        }
        if mode == "client"
        else dict(_SERVER_TOOLS[mode])
    )
    tools: list[JSONValue] = [search]
    tools.extend(
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": dict(tool.parameters),
            "defer_loading": True,
        }
        for tool in offer.tools
    )
    return tools


def search_result(offer: DeferredTools, output: ToolOutputMessage, tool_use_id: str) -> Body:
    """The ``tool_result`` of a client search: a ``tool_reference`` per tool found.

    Only tools of the offer are referenced (the search may also name tools the caller
    may see but not call); a search that found none sends its text, as any result.
    """
    found = [tool for tool in (offer.by_id(tool_id) for tool_id in output.loaded) if tool]
    content: str | list[JSONValue] = output.content
    if found:
        content = [{"type": "tool_reference", "tool_name": tool.name} for tool in found]
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": content,
        "is_error": not output.success,
    }


def read_loaded_call(
    block: Mapping[str, JSONValue], offer: DeferredTools, parent: str | None
) -> ToolCall | None:
    """A ``tool_use`` of a loaded catalogue tool, as the section's call; None otherwise."""
    name, call_id, arguments = block.get("name"), block.get("id"), block.get("input")
    if not (isinstance(name, str) and isinstance(call_id, str) and isinstance(arguments, dict)):
        return None
    tool = offer.named(name)
    if tool is None:
        return None
    return neutral_call(offer, tool, call_id=call_id, arguments=arguments, parent_message_id=parent)


def native_blocks(calls: Sequence[NativeCall], use_id: Callable[[str], str]) -> list[JSONValue]:
    """``tool_use`` blocks of a rebuilt turn's calls, as sent with native tool search.

    ``use_id`` spells a call id as a ``tool_use`` id (the wire's ``tool_use_id``).
    """
    return [
        {
            "type": "tool_use",
            "id": use_id(native.call_id),
            "name": native.name,
            "input": call_input(native.arguments),
        }
        for native in calls
    ]
