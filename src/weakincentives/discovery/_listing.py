"""Select and order what ``list`` shows under one path.

Kept apart from the service because the rules (tags, query, categories
matching through their own text or through tools beneath them) are the one
part of ``list`` with real logic.
"""

from __future__ import annotations

from collections.abc import Mapping

from weakincentives.discovery._catalog import TreePath
from weakincentives.discovery._view import CatalogView

__all__ = ["Listing", "collect_listing"]

type Listing = tuple[list[tuple[TreePath, float | None]], list[tuple[int, float | None]]]
"""Ordered (node path, relevance) pairs and ordered (tool position, relevance) pairs."""


def collect_listing(
    view: CatalogView,
    where: TreePath,
    tags: tuple[str, ...],
    scores: Mapping[str, float] | None,
    node_scores: Mapping[TreePath, float] | None,
) -> Listing:
    """Return the child categories and direct tools of ``where`` that pass the filters."""
    catalog = view.catalog
    allowed: frozenset[int] | None = None
    if tags:
        allowed = frozenset.intersection(*(catalog.tools_tagged(tag) for tag in tags))

    def admitted(position: int) -> bool:
        return view.is_visible(position) and (allowed is None or position in allowed)

    tools: list[tuple[int, float | None]] = []
    for position in catalog.tools_at(where):
        if not admitted(position):
            continue
        if scores is None:
            tools.append((position, None))
            continue
        score = scores.get(catalog.tools[position].tool_id)
        if score:
            tools.append((position, score))
    if scores is not None:
        tools.sort(key=lambda entry: (-(entry[1] or 0.0), catalog.tools[entry[0]].tool_id))

    children = view.children(where)
    if allowed is None and scores is None:
        return [(node.path, None) for node in children], tools
    depth = len(where)

    def child_of(position: int) -> set[TreePath]:
        return {
            path[: depth + 1]
            for path in catalog.tools[position].paths
            if len(path) > depth and path[:depth] == where
        }

    tagged: set[TreePath] | None = None
    if allowed is not None:
        tagged = {
            child
            for position in allowed
            if view.is_visible(position)
            for child in child_of(position)
        }
    if scores is None:
        return [
            (node.path, None) for node in children if tagged is None or node.path in tagged
        ], tools
    best: dict[TreePath, float] = {}
    for tool_id, score in scores.items():
        position = catalog.position(tool_id)
        if admitted(position):
            for child in child_of(position):
                best[child] = max(best.get(child, 0.0), score)
    for node in children:
        own = (node_scores or {}).get(node.path, 0.0)
        if own and (tagged is None or node.path in tagged):
            best[node.path] = max(best.get(node.path, 0.0), own)
    nodes: list[tuple[TreePath, float | None]] = [
        (node.path, best[node.path]) for node in children if node.path in best
    ]
    nodes.sort(key=lambda entry: (-(entry[1] or 0.0), entry[0]))
    return nodes, tools
