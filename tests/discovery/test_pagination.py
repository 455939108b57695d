"""Cursor pagination: page boundaries, bad cursors and the exactly-once property."""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from weakincentives.discovery import (
    BM25Ranker,
    CatalogTool,
    DiscoveryError,
    IdAccessPolicy,
    ToolCatalog,
    ToolDiscovery,
    ToolPointer,
    TreePath,
)
from weakincentives.discovery._cursor import CursorCodec, request_fingerprint
from weakincentives.discovery._ranking import RankIndex
from weakincentives.discovery._requests import MAX_LIMIT
from weakincentives.discovery._service import SEARCH_WINDOW

from .conftest import SECRET, ServiceFactory

_TOPICS = ("weather", "maps", "music", "news", "stocks")
_VERBS = ("search", "list", "fetch", "create", "delete", "update", "track", "export")


def _big_catalog() -> ToolCatalog:
    """120 tools over 5 topics x 3 providers, so several pages at every limit."""
    tools = []
    for number in range(120):
        topic = _TOPICS[number % 5]
        provider = f"{topic.title()} Provider {number % 3}"
        verb = _VERBS[number % len(_VERBS)]
        tools.append(
            CatalogTool(
                tool_id=f"{topic}.{verb}_{number:03d}",
                name=f"{verb} {topic} {number}",
                paths=((topic.title(), provider),),
                summary=f"{verb.title()} {topic} records from {provider}",
                tags=(topic, verb),
            )
        )
    return ToolCatalog(tools=tools)


BIG = _big_catalog()
_HIDDEN = frozenset(tool.tool_id for tool in BIG.tools[::7])


def _service(limit_policy: bool, prune: bool) -> ToolDiscovery:
    return ToolDiscovery(
        BIG,
        ranker=BM25Ranker(prune_above=0, vectorised=False) if prune else BM25Ranker(),
        access=IdAccessPolicy(hidden=_HIDDEN) if limit_policy else None,
        cursor_secret=SECRET,
        new_id=lambda: "step",
    )


_SERVICES = {
    (flag, prune): _service(flag, prune) for flag in (False, True) for prune in (False, True)
}
type _Request = tuple[Literal["search", "list"], tuple[str, ...], str | None]
_REQUESTS: tuple[_Request, ...] = (
    ("search", (), "weather search"),
    ("search", (), "records"),
    ("search", ("Music",), "fetch export"),
    ("list", ("Maps", "Maps Provider 1"), None),
    ("list", ("Stocks", "Stocks Provider 2"), "update"),
    ("list", (), None),
)


def _walk(service: ToolDiscovery, request: _Request, limit: int) -> list[str]:
    kind, path, query = request
    items: list[str] = []
    cursor: str | None = None
    while True:
        if kind == "search":
            assert query is not None
            page = service.search_tool_by_category(query, path, limit=limit, cursor=cursor)
            items.extend(pointer.tool_id for pointer in page.results)
            cursor = page.next_cursor
            assert len(page.results) <= limit
        else:
            listing = service.list(path=path, query=query, limit=limit, cursor=cursor)
            items.extend("/".join(node.path) for node in listing.nodes)
            items.extend(tool.tool_id for tool in listing.tools)
            cursor = listing.next_cursor
            assert len(listing.nodes) + len(listing.tools) <= limit
        if cursor is None:
            return items


def _expected(service: ToolDiscovery, request: _Request, hidden: frozenset[str]) -> list[str]:
    """The full ordered result, computed without cursors where the rules are simple."""
    kind, path, query = request
    if kind == "list" and query is None:
        nodes = ["/".join(node.path) for node in BIG.children(path)]
        tools = [BIG.tools[i].tool_id for i in BIG.tools_at(path)]
        return [*nodes, *(tool_id for tool_id in tools if tool_id not in hidden)]
    if kind == "list":
        return _walk(service, request, MAX_LIMIT)
    assert query is not None
    scores = _SERVICES[False, False].index.score_tools(query)
    prefix = f"{path[0].lower()}." if path else ""
    inside = [t for t in scores if t not in hidden and t.startswith(prefix)]
    return sorted(inside, key=lambda tool_id: (-scores[tool_id], tool_id))[:SEARCH_WINDOW]


@settings(max_examples=60, deadline=None)
@given(
    request=st.sampled_from(_REQUESTS),
    limit=st.integers(min_value=1, max_value=MAX_LIMIT),
    hidden=st.booleans(),
    prune=st.booleans(),
)
def test_paging_returns_every_visible_item_exactly_once_in_order(
    request: _Request, limit: int, hidden: bool, prune: bool
) -> None:
    """Walking the cursors with any limit, pruned or not, yields the ordered result once.

    A search's result is its best ``SEARCH_WINDOW`` matches (120 tools exceed it).
    """
    service = _SERVICES[hidden, prune]
    items = _walk(service, request, limit)
    assert len(items) == len(set(items))
    assert items == _expected(service, request, _HIDDEN if hidden else frozenset())
    assert _HIDDEN.isdisjoint(items) or not hidden


class TestPages:
    def test_first_and_last_page(self) -> None:
        """A cursor is given until the last page of the search window, which has none."""
        service = _SERVICES[False, False]
        first = service.search_tool_by_category("records", limit=30)
        assert first.next_cursor is not None
        second = service.search_tool_by_category("records", limit=30, cursor=first.next_cursor)
        assert second.next_cursor is None
        assert len(first.results) == 30
        assert len(second.results) == SEARCH_WINDOW - 30 == 20

    def test_limit_one_pages_one_item_at_a_time(self) -> None:
        """limit=1 is allowed and pages through single items."""
        service = _SERVICES[False, False]
        first = service.list(path=["Weather"], limit=1)
        assert [node.name for node in first.nodes] == ["Weather Provider 0"]
        second = service.list(path=["Weather"], limit=1, cursor=first.next_cursor)
        assert [node.name for node in second.nodes] == ["Weather Provider 1"]

    def test_a_page_can_span_nodes_and_tools(self, service: ToolDiscovery) -> None:
        """Nodes come first; the page after them continues with tools."""
        catalog = ToolCatalog(
            tools=[
                CatalogTool(tool_id="a.x", name="x", paths=(("A",),)),
                CatalogTool(tool_id="a.y", name="y", paths=(("A",),)),
                CatalogTool(tool_id="a.b.z", name="z", paths=(("A", "B"),)),
            ]
        )
        mixed = ToolDiscovery(catalog, cursor_secret=SECRET)
        first = mixed.list(path=["A"], limit=2)
        assert [node.name for node in first.nodes] == ["B"]
        assert [tool.tool_id for tool in first.tools] == ["a.x"]
        second = mixed.list(path=["A"], limit=2, cursor=first.next_cursor)
        assert second.nodes == ()
        assert [tool.tool_id for tool in second.tools] == ["a.y"]
        assert second.next_cursor is None

    def test_an_empty_catalogue_lists_nothing(self) -> None:
        """The root of an empty catalogue is a valid, empty listing."""
        empty = ToolDiscovery(ToolCatalog(tools=[]), cursor_secret=SECRET)
        listing = empty.list()
        assert (listing.nodes, listing.tools, listing.next_cursor) == ((), (), None)

    def test_a_cursor_past_the_end_gives_an_empty_page(self) -> None:
        """A valid cursor whose offset is beyond the results returns nothing more."""
        service = _SERVICES[False, False]
        key = ("search_tool_by_category", (), "records", 5)
        fingerprint = request_fingerprint(BIG.fingerprint, *key)
        cursor = CursorCodec(SECRET).encode(offset=10_000, fingerprint=fingerprint)
        page = service.search_tool_by_category("records", limit=5, cursor=cursor)
        assert page.results == ()
        assert page.next_cursor is None


def _pointer_ids(pointers: tuple[ToolPointer, ...]) -> list[str]:
    return [pointer.tool_id for pointer in pointers]


class TestBadCursors:
    @pytest.fixture
    def cursor(self, service: ToolDiscovery) -> str:
        """A genuine cursor for the first page of a bucket search."""
        cursor = service.search_tool_by_category("bucket object", limit=1).next_cursor
        assert cursor is not None
        return cursor

    @pytest.mark.parametrize("bad", ["", "garbage", "abc.!!!", "a.b.c", "é.é"])
    def test_a_malformed_cursor_is_rejected(self, service: ToolDiscovery, bad: str) -> None:
        """Anything that is not payload.tag is INVALID_CURSOR."""
        with pytest.raises(DiscoveryError, match=r"^INVALID_CURSOR: cursor") as info:
            service.search_tool_by_category("bucket object", limit=1, cursor=bad)
        assert info.value.code == "INVALID_CURSOR"
        assert info.value.next_action == (
            "repeat the same request without a cursor to start from the first page"
        )

    def test_a_tampered_cursor_is_rejected(self, service: ToolDiscovery, cursor: str) -> None:
        """Changing one character of the payload breaks the signature."""
        payload, tag = cursor.split(".")
        forged = payload[:-1] + ("A" if payload[-1] != "A" else "B") + "." + tag
        with pytest.raises(DiscoveryError, match="altered"):
            service.search_tool_by_category("bucket object", limit=1, cursor=forged)

    def test_a_cursor_from_another_service_is_rejected(
        self, make_service: ServiceFactory, cursor: str
    ) -> None:
        """Services with different secrets do not accept each other's cursors."""
        other = make_service(secret=b"another-secret-another-secret-00")
        with pytest.raises(DiscoveryError, match="not issued by this service"):
            other.search_tool_by_category("bucket object", limit=1, cursor=cursor)

    @pytest.mark.parametrize(("query", "limit"), [("bucket", 1), ("bucket object", 2)])
    def test_a_cursor_reused_for_another_request_is_rejected(
        self, service: ToolDiscovery, cursor: str, query: str, limit: int
    ) -> None:
        """Changing the query or the limit while paging is INVALID_CURSOR."""
        with pytest.raises(DiscoveryError, match="belongs to a different request"):
            service.search_tool_by_category(query, limit=limit, cursor=cursor)

    def test_a_search_cursor_does_not_work_for_list(
        self, service: ToolDiscovery, cursor: str
    ) -> None:
        """The operation is part of the fingerprint."""
        with pytest.raises(DiscoveryError, match="INVALID_CURSOR"):
            service.list(limit=1, cursor=cursor)

    def test_the_same_request_gives_the_same_page(self, service: ToolDiscovery) -> None:
        """The same request always yields the same page (stable order)."""
        first = service.search_tool_by_category("bucket object", limit=3)
        again = service.search_tool_by_category("bucket object", limit=3)
        assert _pointer_ids(first.results) == _pointer_ids(again.results)


class _CountingIndex:
    """Wraps an index and records every question asked of it, and the postings it reads."""

    def __init__(self, inner: RankIndex) -> None:
        self.inner = inner
        self.calls: list[tuple[str, int | None]] = []

    def score_tools(
        self, query: str, *, top: int | None = None, within: Container[str] | None = None
    ) -> Mapping[str, float]:
        self.calls.append((query, top))
        return self.inner.score_tools(query, top=top, within=within)

    def score_nodes(
        self, query: str, *, top: int | None = None, within: Container[TreePath] | None = None
    ) -> Mapping[TreePath, float]:
        self.calls.append((query, top))
        return self.inner.score_nodes(query, top=top, within=within)


def test_a_deep_page_asks_the_index_exactly_what_the_first_page_asked() -> None:
    """Page 20 of a search costs what page 1 does: the same index calls, none growing with depth."""
    counting = _CountingIndex(BM25Ranker(prune_above=0, vectorised=False).index(BIG))
    service = ToolDiscovery(BIG, index=counting, cursor_secret=SECRET, diversify=False)
    page = service.search_tool_by_category("records", limit=1)
    first = list(counting.calls)
    for _ in range(19):
        counting.calls.clear()
        assert page.next_cursor is not None
        page = service.search_tool_by_category("records", limit=1, cursor=page.next_cursor)
    assert counting.calls == first == [("records", SEARCH_WINDOW)]
