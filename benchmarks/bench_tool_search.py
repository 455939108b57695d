"""Input tokens and requests per ToolBench task: flat, discovery tools, native tool search.

Every task of ToolBench (765 queries, 2,490 tools) is played by a scripted model through
six ways of offering the catalogue. The model behaves as each documented flow does and
chooses perfectly within what it is shown: it calls every relevant tool it can see, and
nothing else. What differs between the rows is only what the wire makes it read and how
many requests the flow needs.

- ``flat``: every tool declared up front (Responses API ``function`` tools). Request 1
  calls every relevant tool; request 2 answers.
- ``discovery``: the five discovery tools (Chat Completions, or any provider with
  ``tool_search="off"``). Request 1 searches (``search_tool_by_category``, limit 5);
  request 2 expands the relevant tools among the results; request 3 calls them through
  ``call_tool``; request 4 answers. With no relevant tool found, request 2 answers.
- ``openai client``: deferred namespaces (one per top-level category) and a client
  ``tool_search``. Request 1 searches; request 2 reads the ``tool_search_output`` (the
  results' definitions) and calls the relevant ones; request 3 answers.
- ``openai server``: the same declarations with ``execution: "server"``. OpenAI searches
  inside request 1, which then also holds the loaded definitions and the calls; request 2
  answers.
- ``anthropic client``: the section's search tool and every tool ``defer_loading``.
  Request 1 searches; request 2 reads the ``tool_reference`` result (the definitions of
  the referenced tools enter the context) and calls; request 3 answers.
- ``anthropic bm25``: Anthropic's BM25 search tool; like ``openai server``.

How the counts are made. Each request is the list of what the model reads: the prompt
(the task, plus the discovery section's text where there is one), the tool definitions
it is shown, and the history so far. Deferred definitions are not shown (OpenAI shows a
namespace's name and description only; Anthropic shows nothing of a deferred tool)
until a search loads them, and then they are counted where they enter. Every part is
built by the adapters' own wire functions, serialised as JSON and counted with
``o200k_base`` (``_tokens.py``; Claude's tokenizer differs, so the Anthropic rows are
comparable in shape, not in absolute count). A request's tokens are the sum of its
parts'; a task's input tokens are the sum over its requests, since each request resends
the conversation. Searches are answered by our BM25F ranker; for the server-side rows
the provider's own search is assumed to load the same five tools (its ranking is not
ours to measure), so those rows isolate the cost of the wire. A tool's output is the
same short stand-in in every row, wrapped as each flow wraps it.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

from _tokens import TokenizerMissingError, count_tokens
from _toolbench import DataMissingError, Query, load_queries, load_records

from weakincentives.adapters import ToolOutputMessage
from weakincentives.adapters.anthropic._tool_search import (
    search_result,
)
from weakincentives.adapters.anthropic._tool_search import (
    tool_search_declarations as anthropic_declarations,
)
from weakincentives.adapters.openai import function_tool
from weakincentives.adapters.openai._tool_search import (
    search_output,
)
from weakincentives.adapters.openai._tool_search import (
    tool_search_declarations as openai_declarations,
)
from weakincentives.discovery import (
    CallResponse,
    ExpandedTool,
    ToolCatalog,
    ToolDiscovery,
    ToolDiscoverySection,
)
from weakincentives.prompt import DeferredTools, Prompt, ToolResult
from weakincentives.serde import JSONValue

STAND_IN_OUTPUT: dict[str, JSONValue] = {"status": 200, "data": "ok"}
"""What every tool call returns in this benchmark (ToolBench records no outputs)."""

type Part = str
"""One piece of what the model reads, as the JSON (or text) a wire sends."""


@dataclass(slots=True)
class Flow:
    """One way of offering the catalogue, tallied over the tasks."""

    name: str
    tokens: list[int] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    first: list[int] = field(default_factory=list)
    """Tokens of each task's first request: what offering the catalogue costs up front."""

    def add(self, requests: Sequence[Sequence[Part]], counted: Callable[[Part], int]) -> None:
        self.requests.append(len(requests))
        self.tokens.append(sum(counted(part) for request in requests for part in request))
        self.first.append(sum(counted(part) for part in requests[0]))


@dataclass(frozen=True, slots=True, kw_only=True)
class World:
    """Everything the flows share: the catalogue, the ranker, the wire pieces that never change."""

    discovery: ToolDiscovery
    offer: DeferredTools
    section_text: str
    native_section_text: str
    flat_tools: Part
    discovery_tools: Part
    openai_client_tools: Part
    openai_server_tools: Part
    anthropic_client_tools: Part
    anthropic_bm25_tools: Part


def _visible_openai(tools: list[JSONValue]) -> Part:
    """Namespaces as the model sees them before a search: name and description only."""
    shown = []
    for tool in tools:
        assert isinstance(tool, dict)
        if tool.get("type") == "namespace":
            shown.append({"name": tool["name"], "description": tool["description"]})
        else:
            shown.append(tool)
    return json.dumps(shown)


def _visible_anthropic(tools: list[JSONValue]) -> Part:
    """Anthropic shows none of a deferred tool until a reference loads it."""
    return json.dumps([t for t in tools if isinstance(t, dict) and not t.get("defer_loading")])


def build_world() -> World:
    catalog = ToolCatalog.from_records(load_records("toolbench"))
    discovery = ToolDiscovery(catalog)
    section = ToolDiscoverySection(discovery)
    offer = section.deferred_tools()
    assert offer is not None
    text = Prompt(ns="b", key="b", sections=[section]).render().text
    fallback = ToolDiscoverySection(ToolDiscovery(catalog, require_expansion=True))
    fallback_text = Prompt(ns="b", key="b", sections=[fallback]).render().text
    flat = [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
            "strict": tool.strict,
        }
        for tool in offer.tools
    ]
    return World(
        discovery=discovery,
        offer=offer,
        section_text=fallback_text,
        native_section_text=text,
        flat_tools=json.dumps(flat),
        discovery_tools=json.dumps([function_tool(tool) for tool in section.tools()]),
        openai_client_tools=_visible_openai(openai_declarations(offer, "client")),
        openai_server_tools=_visible_openai(openai_declarations(offer, "server")),
        anthropic_client_tools=_visible_anthropic(anthropic_declarations(offer, "client")),
        anthropic_bm25_tools=_visible_anthropic(anthropic_declarations(offer, "bm25")),
    )


def _content(message: str, value: object) -> str:
    return ToolResult(message=message, value=value).model_content()


def _call(name: str, arguments: dict[str, JSONValue]) -> Part:
    return json.dumps({"type": "function_call", "name": name, "arguments": json.dumps(arguments)})


def _outputs(found: Sequence[str]) -> list[Part]:
    """The call tool's results (one per relevant tool found), as every flow sends them back."""
    return [
        _content(
            "ok",
            CallResponse(tool_id=tool_id, success=True, message="ok", value=STAND_IN_OUTPUT),
        )
        for tool_id in found
    ]


def play(world: World, query: Query, flows: dict[str, Flow], counted: Callable[[Part], int]) -> int:
    """Run one task through every flow; returns how many relevant tools the search found."""
    offer = world.offer
    found_page = world.discovery.search_tool_by_category(query.query, limit=5)
    found = [p.tool_id for p in found_page.results if p.tool_id in query.relevant]
    search_args: dict[str, JSONValue] = {"query": query.query}
    search = _call("search_tool_by_category", search_args)
    outputs = _outputs(found)
    calls = [
        _call(offer.by_id(tool_id).name, {"arguments": "..."})  # type: ignore[union-attr]
        for tool_id in found
    ]

    # flat: every definition up front; the model calls every relevant tool it sees.
    flat_calls = [_call(tool_id, {"arguments": "..."}) for tool_id in query.relevant]
    flat_base = [query.query, world.flat_tools]
    flows["flat"].add([flat_base, [*flat_base, *flat_calls, *_outputs(query.relevant)]], counted)

    # discovery: search, expand, call, answer.
    base = [query.query, world.section_text, world.discovery_tools]
    searched = [*base, search, _content(f"{len(found_page.results)} matching tools.", found_page)]
    if found:
        expansions = [_call("expand_tool", {"tool_id": t}) for t in found]
        expanded = [
            _content(f"Schema of {t}; call it with call_tool.", _expanded(world, t)) for t in found
        ]
        after_expand = [*searched, *expansions, *expanded]
        call_tools = [
            _call("call_tool", {"tool_id": t, "arguments": {"arguments": "..."}}) for t in found
        ]
        flows["discovery"].add(
            [base, searched, after_expand, [*after_expand, *call_tools, *outputs]], counted
        )
    else:
        flows["discovery"].add([base, searched], counted)

    # openai client: search, read the loaded definitions and call, answer.
    message = ToolOutputMessage(
        call_id="ts1",
        name=offer.search_tool,
        content="",
        success=True,
        loaded=found_page.loaded_tool_ids,
    )
    loaded_openai = json.dumps(search_output(offer, message))
    native_base = [query.query, world.native_section_text]
    client = [*native_base, world.openai_client_tools]
    client_loaded = [*client, search, loaded_openai]
    flows["openai client"].add(
        [client, client_loaded, [*client_loaded, *calls, *outputs]]
        if found
        else [client, client_loaded],
        counted,
    )

    # openai server: the search and its output happen inside request 1.
    server = [*native_base, world.openai_server_tools]
    inside = [*server, search, loaded_openai]
    flows["openai server"].add([inside, [*inside, *calls, *outputs]], counted)

    # anthropic client: search, references load the definitions, call, answer.
    reference = search_result(offer, message, "toolu_1")
    loaded_defs = json.dumps(
        [
            messages_tool_definition(offer, tool_id)
            for tool_id in found_page.loaded_tool_ids
            if offer.by_id(tool_id) is not None
        ]
    )
    claude = [*native_base, world.anthropic_client_tools]
    claude_loaded = [*claude, search, json.dumps(reference), loaded_defs]
    flows["anthropic client"].add(
        [claude, claude_loaded, [*claude_loaded, *calls, *outputs]]
        if found
        else [claude, claude_loaded],
        counted,
    )

    # anthropic bm25: Anthropic's own search inside request 1.
    bm25 = [*native_base, world.anthropic_bm25_tools]
    bm25_inside = [*bm25, search, json.dumps(reference), loaded_defs]
    flows["anthropic bm25"].add([bm25_inside, [*bm25_inside, *calls, *outputs]], counted)
    return len(found)


def messages_tool_definition(offer: DeferredTools, tool_id: str) -> dict[str, JSONValue]:
    """A loaded tool's definition in the Messages API's shape (what a reference expands to)."""
    tool = offer.by_id(tool_id)
    assert tool is not None
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": dict(tool.parameters),
    }


def _expanded(world: World, tool_id: str) -> ExpandedTool:
    return world.discovery.expand_tool(tool_id)


FLOWS = (
    "flat",
    "discovery",
    "openai client",
    "openai server",
    "anthropic client",
    "anthropic bm25",
)


def main() -> int:
    try:
        queries = load_queries("toolbench")
        world = build_world()
        count_tokens("warm up")
    except (DataMissingError, TokenizerMissingError) as exc:
        print(f"skipped: {exc}")
        return 0
    counted = cache(count_tokens)
    flows = {name: Flow(name=name) for name in FLOWS}
    started = time.perf_counter()
    relevant = found = 0
    for query in queries:
        found += play(world, query, flows, counted)
        relevant += len(query.relevant)
    elapsed = time.perf_counter() - started
    print(f"== ToolBench: {len(queries)} tasks, {len(world.offer.tools)} tools, o200k_base")
    print(
        f"relevant tools found by the search (limit 5) and called: {found}/{relevant} "
        f"({found / relevant:.3f}); flat calls all of them"
    )
    print(
        f"{'flow':<18}{'input tokens/task':>18}{'p50':>10}{'request 1':>11}"
        f"{'requests/task':>15}  vs flat"
    )
    flat = statistics.mean(flows["flat"].tokens)
    for name in FLOWS:
        flow = flows[name]
        mean = statistics.mean(flow.tokens)
        print(
            f"{name:<18}{mean:>18,.0f}{statistics.median(flow.tokens):>10,.0f}"
            f"{statistics.mean(flow.first):>11,.0f}{statistics.mean(flow.requests):>15.2f}"
            f"  {mean / flat:.4f}x"
        )
    print(f"({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
