"""The discovery service: list, search, expand and call over one catalogue.

Every operation validates its request, works on what the caller may see,
publishes one audit event and either returns a response value or raises a
:class:`DiscoveryError` (also published, as ``DiscoveryFailed``).
"""

from __future__ import annotations

import copy
import heapq
import inspect
import math
import secrets
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal

from weakincentives._bounded import exception_text, quote
from weakincentives._portal import run_sync
from weakincentives.discovery._access import AccessPolicy
from weakincentives.discovery._catalog import CatalogTool, ToolCatalog, TreePath
from weakincentives.discovery._cursor import CursorCodec, request_fingerprint
from weakincentives.discovery._diversify import diversify
from weakincentives.discovery._errors import DiscoveryError
from weakincentives.discovery._events import (
    DiscoveryCalled,
    DiscoveryExpanded,
    DiscoveryFailed,
    DiscoveryOperation,
    DiscoverySearched,
)
from weakincentives.discovery._executor import CallOutcome, ToolExecutor
from weakincentives.discovery._listing import collect_listing
from weakincentives.discovery._ranking import BM25Ranker, Ranker, RankIndex
from weakincentives.discovery._recovery import Recovery
from weakincentives.discovery._requests import (
    check_cursor,
    check_limit,
    check_path,
    check_tags,
    optional_query,
    required_query,
    search_query,
)
from weakincentives.discovery._responses import (
    CallResponse,
    CatalogOverview,
    ExpandedTool,
    ListResponse,
    NodeMatch,
    NodePointer,
    SearchNodesResponse,
    SearchToolsResponse,
    ToolPointer,
)
from weakincentives.discovery._traced import traced, traced_async
from weakincentives.discovery._view import CatalogView
from weakincentives.errors import ConfigValidationError, CursorError
from weakincentives.serde import JSONValue, SchemaViolation, validate

__all__ = ["SEARCH_WINDOW", "ToolDiscovery"]

SEARCH_WINDOW = 50
"""How many of the best matches a search ranks; its cursors page through them.

A fixed window makes every page cost the same (the first page already ranks
what the last one shows) and bounds the work of a query at any catalogue size.
"""

type EventSink = Callable[[object], object]


class ToolDiscovery:
    """The discovery protocol's operations over one catalogue, for one caller.

    Args:
        catalog: the tools and categories to expose.
        ranker: builds the search index (default :class:`BM25Ranker`).
        index: a prebuilt index for ``catalog`` to share between services
            (for example one service per caller); excludes ``ranker``.
        access: visibility and call rights (default: everything allowed);
            asked once per tool, so it must not change during the service's life.
        executor: runs tools for ``call_tool``; without one ``call_tool``
            fails with ``CALL_NOT_SUPPORTED``.
        events: receives every audit event (for example ``EventBus.publish``).
        clock: timestamps events (default: UTC wall clock).
        new_id: makes step ids (default: random UUID hex).
        cursor_secret: HMAC key for cursors (default: random per service).
        require_expansion: refuse ``call_tool`` for a tool this service has not
            expanded yet (``NOT_EXPANDED``), enforcing "expand before calling".
        diversify: re-order the best results of a query that asks for several
            things so that every request is covered early (see ``SEARCH_WINDOW``).
    """

    def __init__(
        self,
        catalog: ToolCatalog,
        *,
        ranker: Ranker | None = None,
        index: RankIndex | None = None,
        access: AccessPolicy | None = None,
        executor: ToolExecutor | None = None,
        events: EventSink | None = None,
        clock: Callable[[], datetime] | None = None,
        new_id: Callable[[], str] | None = None,
        cursor_secret: bytes | None = None,
        require_expansion: bool = False,
        diversify: bool = True,
    ) -> None:
        if ranker is not None and index is not None:
            raise ConfigValidationError(
                "pass either ranker or a prebuilt index, not both", config_type=ToolDiscovery
            )
        self._catalog = catalog
        self._index = index if index is not None else (ranker or BM25Ranker()).index(catalog)
        self._view = CatalogView(catalog, access)
        self._recovery = Recovery(self._view, self._index)
        self._executor = _checked_executor(executor)
        self._events = events
        self._clock = clock or (lambda: datetime.now(UTC))
        self._new_id = new_id or (lambda: uuid.uuid4().hex)
        self._cursors = CursorCodec(cursor_secret or secrets.token_bytes(32))
        self._lock = threading.Lock()
        self._surfaced: dict[str, str] = {}
        self._expanded: dict[str, str] = {}
        self._require_expansion = require_expansion
        self._diversify = diversify

    def bind(
        self,
        *,
        events: EventSink | None = None,
        executor: ToolExecutor | None = None,
        clock: Callable[[], datetime] | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> ToolDiscovery:
        """A view with its own event sink, executor, clock and id source.

        Each of ``events``, ``executor``, ``clock`` and ``new_id`` replaces this
        service's when given. The view shares everything else with this service
        (catalogue, index, access policy, cursor secret and the audit links between
        steps), so a prompt can route one evaluation's events to its bus, on its
        clock, without losing the chain.
        """
        view = copy.copy(self)
        view._events = events if events is not None else self._events
        view._executor = _checked_executor(executor) if executor is not None else self._executor
        view._clock = clock if clock is not None else self._clock
        view._new_id = new_id if new_id is not None else self._new_id
        return view

    @property
    def executor(self) -> ToolExecutor | None:
        """What runs tools for ``call_tool``, if anything."""
        return self._executor

    @property
    def catalog(self) -> ToolCatalog:
        """The catalogue this service exposes."""
        return self._catalog

    @property
    def index(self) -> RankIndex:
        """The search index (share it with other services over the same catalogue)."""
        return self._index

    def can_see(self, tool_id: str) -> bool:
        """Whether ``tool_id`` exists and the access policy lets this caller see it.

        Read-only (no event, no audit link): for code that serves catalogue entries
        through another channel, such as MCP resources, under the same policy.
        """
        return self._view.visible_tool(tool_id) is not None

    @property
    def require_expansion(self) -> bool:
        """Whether ``call_tool`` refuses tools this service has not expanded."""
        return self._require_expansion

    def callable_tools(self) -> tuple[CatalogTool, ...]:
        """Every tool the caller may see and call, in catalogue order (no event).

        What a provider may be shown when it loads the catalogue natively: the access
        policy decides here exactly as it does for every operation.
        """
        view = self._view
        return tuple(
            tool
            for position, tool in enumerate(self._catalog.tools)
            if view.is_visible(position) and view.can_call(tool)
        )

    def overview(self) -> CatalogOverview:
        """How many tools the caller may see, and the top-level categories holding them.

        Everything here goes through the access policy, so text built from it (such
        as a prompt section's introduction) never reveals a hidden tool or a
        category that holds only hidden tools.
        """
        return CatalogOverview(
            tool_count=self._view.count(()),
            categories=tuple(self._node_pointer(node.path) for node in self._view.children(())),
        )

    @traced("list")
    def list(
        self,
        path: Sequence[str] = (),
        tags: Sequence[str] = (),
        query: str | None = None,
        limit: int = 10,
        cursor: str | None = None,
    ) -> ListResponse:
        """List child categories and tools directly under ``path``.

        ``tags`` keeps tools carrying every given tag (case-insensitive) and
        categories holding at least one such tool. ``query`` keeps only
        matching tools and categories (a category matches through its own
        text or any tool beneath it) and orders them by relevance; without a
        query, categories and tools are in name order. Categories come before
        tools and one page holds ``limit`` items of either kind.
        """
        step = self._new_id()
        try:
            where = self._path(path, "list")
            wanted = check_tags(tags)
            text = optional_query(query)
            size = check_limit(limit)
            scores = self._index.score_tools(text) if text is not None else None
            node_scores = self._index.score_nodes(text) if text is not None else None
            node_entries, tool_entries = collect_listing(
                self._view, where, wanted, scores, node_scores
            )
            total = len(node_entries) + len(tool_entries)
            if not total and (wanted or text is not None):
                raise self._recovery.no_listing_match(where, wanted, text)
            key = ("list", where, wanted, text, size)
            offset = self._offset(key, check_cursor(cursor))
        except DiscoveryError as error:
            raise self._failed(step, "list", error) from None
        end = offset + size
        nodes = tuple(self._node_pointer(path) for path, _ in node_entries[offset:end])
        skip = max(0, offset - len(node_entries))
        room = size - len(nodes)
        tools = tuple(
            self._pointer(position, where, confidence)
            for position, confidence in tool_entries[skip : skip + room]
        )
        next_cursor = self._next_cursor(key, end, total)
        self._searched(
            step,
            "list",
            where=where,
            query=text,
            tags=wanted,
            tools=tools,
            nodes=[node.path for node in nodes],
            offset=offset,
        )
        return ListResponse(path=where, nodes=nodes, tools=tools, next_cursor=next_cursor)

    @traced("search_tool_by_category")
    def search_tool_by_category(
        self,
        query: str,
        category_path: Sequence[str] = (),
        limit: int = 5,
        cursor: str | None = None,
    ) -> SearchToolsResponse:
        """Rank the visible tools under ``category_path`` (root: all) against ``query``.

        Pages walk the best ``SEARCH_WINDOW`` matches; a query that asks for
        several things has them covered early (unless built with ``diversify=False``).
        """
        step = self._new_id()
        operation: DiscoveryOperation = "search_tool_by_category"
        try:
            where = self._path(category_path, operation)
            text = search_query(query)
            size = check_limit(limit)
            key = (operation, where, text, size)
            offset = self._offset(key, check_cursor(cursor))
            ranked = self._ranked(text, where)
            if not ranked:
                raise self._recovery.no_match(where, text)
        except DiscoveryError as error:
            raise self._failed(step, operation, error) from None
        catalog = self._catalog
        page: list[ToolPointer] = []
        end = offset + size
        for confidence, tool_id in ranked[offset:end]:
            position = catalog.position(tool_id)
            path = catalog.tools[position].path_within(where) or where
            page.append(self._pointer(position, path, confidence))
        results = tuple(page)
        next_cursor = self._next_cursor(key, end, len(ranked))
        self._searched(
            step,
            "search_tool_by_category",
            where=where,
            query=text,
            tags=(),
            tools=results,
            nodes=(),
            offset=offset,
        )
        return SearchToolsResponse(category_path=where, results=results, next_cursor=next_cursor)

    @traced("search_nodes")
    def search_nodes(self, query: str, limit: int = 5) -> SearchNodesResponse:
        """Rank visible categories against ``query``, for callers that do not know where to look."""
        step = self._new_id()
        try:
            text = required_query(query)
            size = check_limit(limit)
            scored = [
                (-score, path)
                for path, score in self._index.score_nodes(
                    text, top=size, within=self._view.node_scope()
                ).items()
                if self._view.has_path(path)
            ]
            if not scored:
                raise DiscoveryError(
                    f"no category matches {quote(text)}",
                    code="NO_MATCH_IN_CATEGORY",
                    hints=self._view.root_hints(),
                    next_action="call list(path=[]) to browse the top-level categories, "
                    "or search again with other words",
                    path=(),
                )
        except DiscoveryError as error:
            raise self._failed(step, "search_nodes", error) from None
        results = tuple(
            NodeMatch(
                path=path,
                summary=self._summary(path),
                confidence=_rounded(-negative),
                tool_count=self._view.count(path),
            )
            for negative, path in heapq.nsmallest(size, scored)
        )
        self._searched(
            step,
            "search_nodes",
            where=(),
            query=text,
            tags=(),
            tools=(),
            nodes=[result.path for result in results],
            offset=0,
        )
        return SearchNodesResponse(results=results)

    @traced("expand_tool")
    def expand_tool(self, tool_id: str) -> ExpandedTool:
        """Return the full schema of a visible, callable tool.

        A tool that is visible but not callable gives ``NOT_AUTHORIZED``: a
        schema the caller cannot use would only invite a failing call.
        """
        step = self._new_id()
        try:
            tool = self._callable_tool(tool_id)
        except DiscoveryError as error:
            raise self._failed(step, "expand_tool", error) from None
        with self._lock:
            caused_by = self._surfaced.get(tool_id)
            chosen = caused_by is not None and tool_id not in self._expanded
            self._expanded[tool_id] = step
        self._publish(
            DiscoveryExpanded(
                step_id=step,
                occurred_at=self._clock(),
                tool_id=tool_id,
                caused_by=caused_by,
                chosen=chosen,
            )
        )
        return ExpandedTool(
            tool_id=tool.tool_id,
            name=tool.name,
            path=tool.path,
            summary=tool.summary,
            args_schema=tool.args_schema,
            result_schema=tool.result_schema,
        )

    def call_tool(self, tool_id: str, arguments: Mapping[str, JSONValue]) -> CallResponse:
        """Run ``tool_id`` and wait for the response; see :meth:`call_tool_async`.

        The sync facade: the call runs on the library's background loop (as
        ``adapter.evaluate`` does), so it works from scripts and worker threads.
        """
        return run_sync(self.call_tool_async(tool_id, arguments))

    @traced_async("call_tool")
    async def call_tool_async(
        self, tool_id: str, arguments: Mapping[str, JSONValue]
    ) -> CallResponse:
        """Validate ``arguments`` against the tool's schema, then await the executor.

        Nothing runs unless the tool is visible and callable, an executor is
        configured and every argument is valid. An executor that raises
        yields a failed response (the exception type is kept in the event).
        """
        step = self._new_id()
        try:
            tool = self._callable_tool(tool_id)
            executor = self._executor
            if executor is None:
                raise DiscoveryError(
                    "this discovery service has no executor, so it cannot run tools",
                    code="CALL_NOT_SUPPORTED",
                    next_action=f"run {tool_id!r} through your own runtime with the schema "
                    "from expand_tool",
                    tool_id=tool_id,
                )
            self._check_expanded(tool)
            self._check_arguments(tool, arguments)
        except DiscoveryError as error:
            raise self._failed(step, "call_tool", error) from None
        error_type: str | None = None
        try:
            outcome = await executor.execute(tool, arguments)
        except Exception as exc:  # the executor's failure is the tool's failure, not ours
            error_type = type(exc).__name__
            outcome = CallOutcome(success=False, message=f"{tool_id} failed: {exception_text(exc)}")
        with self._lock:
            caused_by = self._expanded.get(tool_id)
        self._publish(
            DiscoveryCalled(
                step_id=step,
                occurred_at=self._clock(),
                tool_id=tool_id,
                caused_by=caused_by,
                arguments=arguments,
                success=outcome.success,
                message=outcome.message,
                error_type=error_type,
            )
        )
        return CallResponse(
            tool_id=tool_id, success=outcome.success, message=outcome.message, value=outcome.value
        )

    def _path(self, path: Sequence[str], operation: DiscoveryOperation) -> TreePath:
        where = check_path(path)
        if not self._view.has_path(where):
            raise self._recovery.unknown_path(where, listing=operation == "list")
        return where

    def _ranked(self, text: str, where: TreePath) -> Sequence[tuple[float, str]]:
        """The best ``SEARCH_WINDOW`` visible tools under ``where``: (relevance, id), best first.

        Every page of a search asks the index the same question (the same query and
        the same ``top``), so a deep page costs what the first one does.
        """
        scope = self._view.scope(where)
        scores = self._index.score_tools(text, top=SEARCH_WINDOW, within=scope)
        best = heapq.nsmallest(SEARCH_WINDOW, self._matches(scores, where))
        ranked = [(-negative, tool_id) for negative, tool_id in best]
        return diversify(text, ranked, self._index) if self._diversify else ranked

    def _matches(self, scores: Mapping[str, float], where: TreePath) -> Sequence[tuple[float, str]]:
        """(negated relevance, tool id) for every scored tool the caller may see under ``where``."""
        scope = self._view.scope(where)
        if scope is None:
            return [(-score, tool_id) for tool_id, score in scores.items()]
        return [(-score, tool_id) for tool_id, score in scores.items() if tool_id in scope]

    def _offset(self, key: tuple[object, ...], cursor: str | None) -> int:
        if cursor is None:
            return 0
        try:
            return self._cursors.decode(cursor, fingerprint=self._fingerprint(key))
        except CursorError as exc:
            raise DiscoveryError(
                exc.message,
                code="INVALID_CURSOR",
                next_action="repeat the same request without a cursor to start from the first page",
            ) from exc

    def _next_cursor(self, key: tuple[object, ...], end: int, total: int) -> str | None:
        if end >= total:
            return None
        return self._cursors.encode(offset=end, fingerprint=self._fingerprint(key))

    def _fingerprint(self, key: tuple[object, ...]) -> str:
        return request_fingerprint(self._catalog.fingerprint, *key)

    def _pointer(self, position: int, path: TreePath, confidence: float | None) -> ToolPointer:
        tool = self._catalog.tools[position]
        return ToolPointer(
            tool_id=tool.tool_id,
            name=tool.name,
            path=path,
            summary=tool.summary,
            tags=tool.tags,
            confidence=None if confidence is None else _rounded(confidence),
        )

    def _node_pointer(self, path: TreePath) -> NodePointer:
        node = self._catalog.node(path)
        return NodePointer(
            name=node.name if node is not None else path[-1],
            path=path,
            summary=self._summary(path),
            tags=node.tags if node is not None else (),
            tool_count=self._view.count(path),
        )

    def _summary(self, path: TreePath) -> str:
        node = self._catalog.node(path)
        return node.summary if node is not None else ""

    def _callable_tool(self, tool_id: str) -> CatalogTool:
        tool = self._view.visible_tool(tool_id) if isinstance(tool_id, str) else None
        if tool is None:
            raise self._recovery.not_found(tool_id)
        if not self._view.can_call(tool):
            raise self._recovery.not_authorized(tool)
        return tool

    def _check_expanded(self, tool: CatalogTool) -> None:
        if not self._require_expansion:
            return
        with self._lock:
            expanded = tool.tool_id in self._expanded
        if not expanded:
            raise DiscoveryError(
                f"{tool.tool_id!r} has not been expanded, so its arguments are guesses",
                code="NOT_EXPANDED",
                next_action=f"call expand_tool with tool_id {tool.tool_id!r}, then build the "
                "arguments from its args_schema",
                tool_id=tool.tool_id,
            )

    def _check_arguments(self, tool: CatalogTool, arguments: object) -> None:
        if isinstance(arguments, Mapping):
            problems = validate(tool.args_schema, arguments)
        else:
            kind = type(arguments).__name__
            problems = (SchemaViolation(path="$", message=f"expected object, got {kind}"),)
        if problems:
            raise self._recovery.invalid_arguments(tool, problems)

    def _searched(
        self,
        step: str,
        operation: Literal["list", "search_tool_by_category", "search_nodes"],
        *,
        where: TreePath,
        query: str | None,
        tags: tuple[str, ...],
        tools: Iterable[ToolPointer],
        nodes: Iterable[TreePath],
        offset: int,
    ) -> None:
        tool_ids = tuple(pointer.tool_id for pointer in tools)
        with self._lock:
            for tool_id in tool_ids:
                self._surfaced[tool_id] = step
        self._publish(
            DiscoverySearched(
                step_id=step,
                occurred_at=self._clock(),
                operation=operation,
                path=where,
                query=query,
                tags=tags,
                tool_ids=tool_ids,
                node_paths=tuple(nodes),
                offset=offset,
            )
        )

    def _failed(
        self, step: str, operation: DiscoveryOperation, error: DiscoveryError
    ) -> DiscoveryError:
        self._publish(
            DiscoveryFailed(
                step_id=step,
                occurred_at=self._clock(),
                operation=operation,
                code=error.code,
                message=error.message,
                tool_id=error.tool_id,
                path=error.path,
            )
        )
        return error

    def _publish(self, event: object) -> None:
        if self._events is not None:
            self._events(event)


def _checked_executor(executor: ToolExecutor | None) -> ToolExecutor | None:
    """``executor``, if its ``execute`` is a coroutine function; a blocking one is refused.

    A plain ``execute`` would otherwise fail every call at run time with a confusing
    message (its outcome cannot be awaited); the fix is one wrapper, so say it now.
    """
    if executor is None or inspect.iscoroutinefunction(getattr(executor, "execute", None)):
        return executor
    raise ConfigValidationError(
        f"{type(executor).__name__}.execute must be a coroutine function (async def); "
        "wrap an executor that blocks with blocking_executor(executor)",
        config_type=ToolDiscovery,
        field_name="executor",
        value=executor,
    )


def _rounded(confidence: float) -> float:
    """Clamp to [0, 1] and keep three decimals: finer digits only cost the model tokens.

    A relevance that is not a number counts as 0 (``max`` would keep NaN, which JSON
    cannot write): an index file forged with huge, finite scores once gave NaN.
    """
    if math.isnan(confidence):
        return 0.0
    return round(min(max(confidence, 0.0), 1.0), 3)
