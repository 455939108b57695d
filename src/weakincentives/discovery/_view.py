"""What one caller can see of a catalogue, and suggestions that stay inside it.

Visibility is asked of the access policy once per tool, lazily, and cached
together with per-category counts of visible tools. Every hint and
did-you-mean is drawn from visible tools and categories only, so an error
never reveals that a hidden tool exists.
"""

from __future__ import annotations

import difflib
import threading
from bisect import bisect_left
from collections.abc import Sequence

from weakincentives.discovery._access import AccessPolicy
from weakincentives.discovery._catalog import CatalogNode, CatalogTool, ToolCatalog, TreePath
from weakincentives.discovery._errors import Hint

__all__ = ["CatalogView"]

_DID_YOU_MEAN_CUTOFF = 0.6
_NEIGHBOURS = 25
"""How many ids and names on each side of a misspelt id, in sorted order, are compared."""


class CatalogView:
    """A catalogue filtered through an access policy (None means everything is visible)."""

    __slots__ = (
        "_access",
        "_catalog",
        "_counts",
        "_lock",
        "_names",
        "_node_scope",
        "_scopes",
        "_visible",
    )

    def __init__(self, catalog: ToolCatalog, access: AccessPolicy | None) -> None:
        self._catalog = catalog
        self._access = access
        self._lock = threading.Lock()
        self._visible: tuple[bool, ...] | None = None
        self._counts: dict[TreePath, int] | None = None
        self._names: tuple[dict[str, list[str]], list[str]] | None = None
        self._scopes: dict[TreePath, frozenset[str]] = {}
        self._node_scope: frozenset[TreePath] | None = None

    @property
    def catalog(self) -> ToolCatalog:
        """The underlying catalogue."""
        return self._catalog

    def is_visible(self, position: int) -> bool:
        """Say whether the tool at ``position`` may be shown."""
        return self._access is None or self._flags()[position]

    def visible_tool(self, tool_id: str) -> CatalogTool | None:
        """Return the tool if it exists and is visible, else None (the two look alike)."""
        tool = self._catalog.tool(tool_id)
        if tool is None or not self.is_visible(self._catalog.position(tool_id)):
            return None
        return tool

    def scope(self, path: TreePath) -> frozenset[str] | None:
        """Ids of the visible tools under ``path``; None when that is every tool.

        Computed once per path and cached, so a search only tests membership.
        """
        if path == () and self._access is None:
            return None
        cached = self._scopes.get(path)
        if cached is None:
            tools = self._catalog.tools
            cached = frozenset(
                tools[position].tool_id
                for position in self._catalog.tools_under(path)
                if self.is_visible(position)
            )
            self._scopes[path] = cached
        return cached

    def node_scope(self) -> frozenset[TreePath] | None:
        """Paths of the categories holding visible tools; None when that is every category."""
        if self._access is None:
            return None
        if self._node_scope is None:
            self._node_scope = frozenset(path for path in self._tables() if path)
        return self._node_scope

    def can_call(self, tool: CatalogTool) -> bool:
        """Ask the policy whether a visible tool may be expanded and called."""
        return self._access is None or self._access.can_call(tool)

    def count(self, path: TreePath) -> int:
        """Visible tools anywhere under ``path`` (``()`` counts all)."""
        if self._access is None:
            return self._catalog.subtree_size(path)
        return self._tables().get(path, 0)

    def has_path(self, path: TreePath) -> bool:
        """Say whether ``path`` is the root or a category with at least one visible tool."""
        return path == () or (self._catalog.has_path(path) and self.count(path) > 0)

    def children(self, path: TreePath) -> tuple[CatalogNode, ...]:
        """Child categories of ``path`` that hold visible tools."""
        return tuple(node for node in self._catalog.children(path) if self.count(node.path))

    def category_hint(self, path: TreePath) -> Hint:
        """A hint pointing at the category ``path``."""
        node = self._catalog.node(path)
        summary = node.summary if node is not None else ""
        return Hint(kind="category", path=path, summary=summary or f"{self.count(path)} tools")

    def root_hints(self, limit: int = 5) -> tuple[Hint, ...]:
        """The largest visible top-level categories."""
        roots = sorted(self.children(()), key=lambda node: (-self.count(node.path), node.path))
        return tuple(self.category_hint(node.path) for node in roots[:limit])

    def path_suggestions(self, path: TreePath) -> tuple[TreePath, tuple[Hint, ...]]:
        """For an unknown ``path``: its deepest existing prefix and nearby categories."""
        prefix: TreePath = ()
        for segment in path:
            if not self.has_path((*prefix, segment)):
                break
            prefix = (*prefix, segment)
        wrong = path[len(prefix)].casefold()
        options = {node.path[-1].casefold(): node.path for node in self.children(prefix)}
        close = difflib.get_close_matches(wrong, list(options), n=3, cutoff=_DID_YOU_MEAN_CUTOFF)
        hints = tuple(self.category_hint(options[key]) for key in close)
        if not hints:
            hints = self.root_hints() if not prefix else (self.category_hint(prefix),)
        return prefix, hints

    def similar_tools(self, text: str, ranked: Sequence[str], limit: int = 3) -> tuple[Hint, ...]:
        """Visible tools whose id or name is close to ``text``, then the ``ranked`` ids.

        The did-you-mean compares ``text`` with the ids and names that sort next to
        it plus those of the ``ranked`` tools, so its cost does not grow with the
        catalogue.
        """
        names, keys = self._name_index()
        wanted = text.casefold()
        middle = bisect_left(keys, wanted)
        pool = set(keys[max(0, middle - _NEIGHBOURS) : middle + _NEIGHBOURS])
        visible = [tool for tool_id in ranked if (tool := self.visible_tool(tool_id))]
        pool.update(
            key for tool in visible for key in (tool.tool_id.casefold(), tool.name.casefold())
        )
        found = difflib.get_close_matches(
            wanted, sorted(pool), n=limit, cutoff=_DID_YOU_MEAN_CUTOFF
        )
        ids = [tool_id for key in found for tool_id in names[key]]
        ids.extend(tool.tool_id for tool in visible)
        hints: list[Hint] = []
        for tool_id in dict.fromkeys(ids):
            tool = self._catalog.tool(tool_id)
            if tool is not None and tool_id != text:
                hints.append(
                    Hint(kind="tool", path=tool.path, tool_id=tool_id, summary=tool.summary)
                )
            if len(hints) == limit:
                break
        return tuple(hints)

    def _flags(self) -> tuple[bool, ...]:
        if self._visible is None:
            with self._lock:
                access = self._access
                if self._visible is None and access is not None:
                    self._visible = tuple(access.can_see(tool) for tool in self._catalog.tools)
        return self._visible or ()

    def _tables(self) -> dict[TreePath, int]:
        if self._counts is None:
            flags = self._flags()
            counts: dict[TreePath, int] = {}
            for position, tool in enumerate(self._catalog.tools):
                if not flags[position]:
                    continue
                counts[()] = counts.get((), 0) + 1
                prefixes = {
                    path[:depth] for path in tool.paths for depth in range(1, len(path) + 1)
                }
                for prefix in prefixes:
                    counts[prefix] = counts.get(prefix, 0) + 1
            self._counts = counts
        return self._counts

    def _name_index(self) -> tuple[dict[str, list[str]], list[str]]:
        if self._names is None:
            names: dict[str, list[str]] = {}
            for position, tool in enumerate(self._catalog.tools):
                if self.is_visible(position):
                    for key in dict.fromkeys((tool.tool_id.casefold(), tool.name.casefold())):
                        names.setdefault(key, []).append(tool.tool_id)
            self._names = (names, sorted(names))
        return self._names
