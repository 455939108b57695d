"""Access-policy seam: which tools a caller may see and which it may call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from weakincentives.discovery._catalog import CatalogTool

__all__ = ["AccessPolicy", "AllowAll", "IdAccessPolicy"]


class AccessPolicy(Protocol):
    """Decides visibility and callability per tool.

    A discovery service asks ``can_see`` once per tool and remembers the
    answer, so a policy must be stable for the service's lifetime; build a
    new service for a different principal. A tool that cannot be seen is
    treated everywhere as if it did not exist. ``can_call`` is only asked
    about visible tools.
    """

    def can_see(self, tool: CatalogTool) -> bool:
        """Say whether the tool may appear in listings, searches and hints."""
        ...

    def can_call(self, tool: CatalogTool) -> bool:
        """Say whether the tool may be expanded and called."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class AllowAll:
    """Every tool is visible and callable (the default)."""

    def can_see(self, tool: CatalogTool) -> bool:
        """Return True."""
        return True

    def can_call(self, tool: CatalogTool) -> bool:
        """Return True."""
        return True


@dataclass(frozen=True, slots=True, kw_only=True)
class IdAccessPolicy:
    """Hide some tool ids and make others visible but not callable."""

    hidden: frozenset[str] = frozenset()
    """Tools that do not exist for this caller."""
    uncallable: frozenset[str] = frozenset()
    """Tools the caller may find but not expand or call."""

    def can_see(self, tool: CatalogTool) -> bool:
        """Return False for hidden ids."""
        return tool.tool_id not in self.hidden

    def can_call(self, tool: CatalogTool) -> bool:
        """Return False for hidden and uncallable ids."""
        return tool.tool_id not in self.hidden and tool.tool_id not in self.uncallable
