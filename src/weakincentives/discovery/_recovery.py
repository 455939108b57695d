"""Errors that help the caller recover: hints and next actions built from what it can see.

Every suggestion comes from the caller's :class:`CatalogView`, so a hint never
names a hidden tool or a category that only holds hidden tools. What the caller
sent (a query, an id, a path) is quoted through the bounded helpers, so no
request, however large, makes a large message.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from weakincentives._bounded import LIST_LIMIT, TEXT_LIMIT, clip, listing, quote, safe_str
from weakincentives.discovery._catalog import CatalogTool, TreePath
from weakincentives.discovery._errors import DiscoveryError, Hint
from weakincentives.discovery._limits import MAX_NAME_CHARS, MAX_VIOLATIONS, shown_path
from weakincentives.discovery._ranking import RankIndex
from weakincentives.discovery._view import CatalogView
from weakincentives.serde import SchemaViolation

__all__ = ["Recovery"]


class Recovery:
    """Builds the ``DiscoveryError`` for each way an operation can fail."""

    __slots__ = ("_index", "_view")

    def __init__(self, view: CatalogView, index: RankIndex) -> None:
        self._view = view
        self._index = index

    def unknown_path(self, where: TreePath, *, listing: bool) -> DiscoveryError:
        """UNKNOWN_PATH: name the deepest valid prefix and nearby categories."""
        prefix, hints = self._view.path_suggestions(where)
        target = "list" if listing else "search_tool_by_category"
        return DiscoveryError(
            f"category {shown_path(where)} does not exist; the deepest existing part is "
            f"{list(prefix)!r}",
            code="UNKNOWN_PATH",
            hints=hints,
            next_action=f"call {target} with one of the hinted paths, or "
            f"list(path={list(prefix)!r}) to see what exists there",
            path=where,
        )

    def no_match(self, where: TreePath, text: str) -> DiscoveryError:
        """NO_MATCH_IN_CATEGORY for a search: hint the categories where the query matches."""
        catalog = self._view.catalog
        scores = self._index.score_tools(text, top=20, within=self._view.scope(()))
        hints: list[Hint] = []
        for tool_id in _best(scores, 20, self._view.scope(())):
            path = catalog.tools[catalog.position(tool_id)].path
            if path not in {hint.path for hint in hints}:
                hints.append(self._view.category_hint(path))
        if hints:
            # A short query is repeated as the call to make; a long one is only referred to.
            query = quote(text, TEXT_LIMIT) if len(text) <= TEXT_LIMIT else "<the same query>"
            action = f"call search_tool_by_category(query={query}, category_path=<a hinted path>)"
        else:
            hints = list(self._view.root_hints())
            action = "search again with other words, or call list(path=[]) to browse"
        scope = f"category {list(where)!r}" if where else "the catalogue"
        return DiscoveryError(
            f"no tool in {scope} matches {quote(text)}",
            code="NO_MATCH_IN_CATEGORY",
            hints=tuple(hints[:3]),
            next_action=action,
            path=where,
        )

    def no_listing_match(
        self, where: TreePath, tags: tuple[str, ...], text: str | None
    ) -> DiscoveryError:
        """NO_MATCH_IN_CATEGORY for a filtered listing."""
        filters = " and ".join(
            part
            for part in (
                f"tags [{listing(tags, quoted=True)}]" if tags else "",
                f"query {quote(text)}" if text else "",
            )
            if part
        )
        if text is not None:
            error = self.no_match(where, text)
            hints, action = error.hints, error.next_action
        else:
            children = self._view.children(where)[:3]
            hints = tuple(self._view.category_hint(node.path) for node in children)
            action = f"call list(path={list(where)!r}) without tags"
        return DiscoveryError(
            f"nothing under {list(where)!r} matches {filters}",
            code="NO_MATCH_IN_CATEGORY",
            hints=hints,
            next_action=action,
            path=where,
        )

    def not_found(self, tool_id: object) -> DiscoveryError:
        """TOOL_NOT_FOUND with did-you-mean tools (identical for hidden and missing ids)."""
        text = tool_id if isinstance(tool_id, str) else safe_str(tool_id)  # never raises
        if len(text) > MAX_NAME_CHARS:
            # No catalogue holds an id this long: nothing to suggest, and no search worth its cost.
            hints: tuple[Hint, ...] = ()
            shown = f"{quote(text)} ({len(text):,} characters; ids have at most {MAX_NAME_CHARS})"
        else:
            scope = self._view.scope(())
            ranked = _best(self._index.score_tools(text, top=10, within=scope), 10, scope)
            hints, shown = self._view.similar_tools(text, ranked), quote(text)
        return DiscoveryError(
            f"no tool with id {shown} is available",
            code="TOOL_NOT_FOUND",
            hints=hints,
            next_action="use a tool_id exactly as returned by list or search_tool_by_category, "
            "or search for the capability with search_tool_by_category",
            tool_id=text,
        )

    def not_authorized(self, tool: CatalogTool) -> DiscoveryError:
        """NOT_AUTHORIZED with similar tools the caller may use instead."""
        scope = self._view.scope(())
        scores = self._index.score_tools(f"{tool.name} {tool.summary}", top=50, within=scope)
        ranked = [
            tool_id
            for tool_id in _best(scores, 50, scope)
            if tool_id != tool.tool_id and self._callable(tool_id)
        ]
        return DiscoveryError(
            f"you are not allowed to use tool {tool.tool_id!r}",
            code="NOT_AUTHORIZED",
            hints=self._view.similar_tools("", ranked),
            next_action="choose another tool, for example one of the hinted tools",
            tool_id=tool.tool_id,
            path=tool.path,
        )

    @staticmethod
    def invalid_arguments(
        tool: CatalogTool, problems: tuple[SchemaViolation, ...]
    ) -> DiscoveryError:
        """INVALID_ARGUMENTS with each violation and its JSON path.

        The error keeps the first ``MAX_VIOLATIONS``; its message names the first
        few and counts the rest.
        """
        shown = [clip(problem.render(), TEXT_LIMIT) for problem in problems[:LIST_LIMIT]]
        rest = len(problems) - len(shown)
        listed = "; ".join(shown) + (f"; and {rest:,} more" if rest > 0 else "")
        return DiscoveryError(
            f"arguments for {tool.tool_id!r} are invalid: {listed}",
            code="INVALID_ARGUMENTS",
            next_action=f"fix every listed argument using expand_tool({tool.tool_id!r}) "
            "and call again",
            tool_id=tool.tool_id,
            violations=problems[:MAX_VIOLATIONS],
        )

    def _callable(self, tool_id: str) -> bool:
        tool = self._view.visible_tool(tool_id)
        return tool is not None and self._view.can_call(tool)


def _best(scores: Mapping[str, float], count: int, scope: frozenset[str] | None) -> list[str]:
    """The ``count`` best ids in ``scope`` (all when None), by relevance then id."""
    ranked = ((-score, tool_id) for tool_id, score in scores.items())
    if scope is not None:
        ranked = (entry for entry in ranked if entry[1] in scope)
    return [tool_id for _, tool_id in heapq.nsmallest(count, ranked)]
