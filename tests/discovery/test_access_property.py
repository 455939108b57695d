"""Property: an arbitrary access policy never lets a hidden tool show in anything discovery says.

Every tool gets unique marker words in its id, name and summary, and categories get
unique names, so a leak is a substring check over everything a caller or a model can
read: responses, errors (message, hints, next action) and the section's rendered text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from weakincentives.discovery import (
    CallableExecutor,
    CatalogTool,
    DiscoveryError,
    IdAccessPolicy,
    ToolCatalog,
    ToolDiscovery,
    ToolDiscoverySection,
)
from weakincentives.prompt import Prompt

SHARED = ("alpha", "beta", "gamma", "delta")
"""Words every summary draws from, so searches match visible and hidden tools alike."""


@dataclasses.dataclass(frozen=True)
class World:
    catalog: ToolCatalog
    hidden: frozenset[str]
    queries: tuple[str, ...]


@st.composite
def worlds(draw: st.DrawFn) -> World:
    count = draw(st.integers(min_value=1, max_value=8))
    categories = [(f"Qcat{k}q",) for k in range(3)] + [(f"Qcat{k}q", f"Qsub{k}q") for k in range(3)]
    tools = []
    for i in range(count):
        paths = draw(st.lists(st.sampled_from(categories), min_size=1, max_size=2, unique=True))
        words = draw(st.lists(st.sampled_from(SHARED), min_size=1, max_size=3))
        tools.append(
            CatalogTool(
                tool_id=f"Qid{i}q",
                name=f"Qname{i}q run",
                paths=tuple(paths),
                summary=f"Qsum{i}q {' '.join(words)}",
                tags=(f"Qtag{i}q",),
            )
        )
    hidden = frozenset(
        draw(st.lists(st.sampled_from([t.tool_id for t in tools]), unique=True, max_size=count))
    )
    words = [*SHARED, "run", *(f"Qname{i}q" for i in range(count)), "Qcat0q", "Qsub1q"]
    phrase = st.lists(st.sampled_from(words), min_size=1, max_size=4).map(" ".join)
    queries = tuple(draw(st.lists(phrase, min_size=3, max_size=3)))
    return World(catalog=ToolCatalog(tools=tools), hidden=hidden, queries=queries)


def _transcript(service: ToolDiscovery, world: World) -> tuple[list[str], list[int]]:
    """Everything the caller can read, as text, plus every count it is told."""
    texts: list[str] = []
    counts: list[int] = []

    def attempt(operation: Callable[[], object], *echo: str) -> None:
        """Record what ``operation`` says, less ``echo`` (the caller's own words repeated back)."""
        try:
            said = [repr(operation())]
        except DiscoveryError as error:
            said = [str(error), repr(error.to_failure())]
        for text in said:
            scrubbed = text
            for words in sorted(echo, key=len, reverse=True):
                scrubbed = scrubbed.replace(words, "<echo>")
            texts.append(scrubbed)

    overview = service.overview()
    counts.append(overview.tool_count)
    texts.append(repr(overview))
    paths: list[tuple[str, ...]] = [(), *world.catalog.nodes]
    for path in paths:
        attempt(partial(service.list, path=list(path), limit=50), *path)
        attempt(partial(service.list, path=list(path), tags=["qtag0q"], limit=50), *path)
        for node in _nodes(service, path):
            counts.append(node)
    for query in world.queries:
        attempt(partial(service.search_tool_by_category, query, limit=50), query)
        attempt(partial(service.search_nodes, query, limit=50), query)
        attempt(partial(service.list, query=query, limit=50), query)
        for path in paths:
            search = partial(service.search_tool_by_category, query, list(path), limit=50)
            attempt(search, query, *path)
    for tool in world.catalog.tools:
        attempt(partial(service.expand_tool, tool.tool_id), tool.tool_id)
        attempt(partial(service.call_tool, tool.tool_id, {}), tool.tool_id)
        if tool.tool_id in world.hidden:
            # Asking for a hidden id reads like asking for one that never existed.
            assert _code(partial(service.expand_tool, tool.tool_id)) == "TOOL_NOT_FOUND"
            assert _code(partial(service.call_tool, tool.tool_id, {})) == "TOOL_NOT_FOUND"
    prompt = Prompt(ns="tests", key="leak", sections=[ToolDiscoverySection(service)])
    texts.append(prompt.render().text)
    return texts, counts


def _code(operation: Callable[[], object]) -> str:
    try:
        operation()
    except DiscoveryError as error:
        return error.code
    return "succeeded"


def _nodes(service: ToolDiscovery, path: tuple[str, ...]) -> list[int]:
    try:
        return [node.tool_count for node in service.list(path=list(path), limit=50).nodes]
    except DiscoveryError:
        return []


@settings(max_examples=60, deadline=None)
@given(worlds())
def test_hidden_tools_never_appear_in_anything_discovery_says(world: World) -> None:
    """No hidden id, name, summary, tag or all-hidden category appears; counts are visible ones."""
    service = ToolDiscovery(
        world.catalog,
        access=IdAccessPolicy(hidden=world.hidden),
        executor=CallableExecutor(),
    )
    texts, counts = _transcript(service, world)
    text = "\n".join(texts)
    visible = [t for t in world.catalog.tools if t.tool_id not in world.hidden]
    for tool in world.catalog.tools:
        if tool.tool_id in world.hidden:
            marker = tool.tool_id.removeprefix("Qid")
            for leaked in (f"Qid{marker}", f"Qname{marker}", f"Qsum{marker}", f"Qtag{marker}"):
                assert leaked not in text, f"hidden {tool.tool_id} leaked as {leaked}"
    shown_segments = {segment for t in visible for path in t.paths for segment in path}
    all_segments = {segment for t in world.catalog.tools for path in t.paths for segment in path}
    for segment in all_segments - shown_segments:
        assert segment not in text, f"category {segment} holds only hidden tools but was shown"
    assert counts[0] == len(visible)
    noun = "tool" if len(visible) == 1 else "tools"
    assert f"catalogue of {len(visible)} {noun} that" in text
    assert all(0 < count <= len(visible) for count in counts[1:])
