"""Audit events: every discovery step, linked to the step that led to it.

Each operation publishes one event with a fresh ``step_id``. Searches and
listings record which tools they surfaced; an expansion's ``caused_by`` is
the latest step that surfaced that tool, and a call's ``caused_by`` is the
latest expansion of that tool, so ``search -> expand -> call`` can be rebuilt
from the event stream with :func:`audit_chain`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from weakincentives.discovery._catalog import TreePath
from weakincentives.discovery._errors import ErrorCode
from weakincentives.serde import JSONValue

__all__ = [
    "DiscoveryCalled",
    "DiscoveryEvent",
    "DiscoveryExpanded",
    "DiscoveryFailed",
    "DiscoveryOperation",
    "DiscoverySearched",
    "audit_chain",
]

type DiscoveryOperation = Literal[
    "list", "search_tool_by_category", "search_nodes", "expand_tool", "call_tool"
]


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoverySearched:
    """A ``list``, ``search_tool_by_category`` or ``search_nodes`` step succeeded."""

    step_id: str
    occurred_at: datetime
    operation: Literal["list", "search_tool_by_category", "search_nodes"]
    path: TreePath
    """The listed path or searched category (root for ``search_nodes``)."""
    query: str | None
    tags: tuple[str, ...]
    tool_ids: tuple[str, ...]
    """Tools surfaced to the caller, in response order."""
    node_paths: tuple[TreePath, ...]
    """Categories surfaced to the caller, in response order."""
    offset: int = 0
    """Position of the first item on this page."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoveryExpanded:
    """A tool's schema was handed out."""

    step_id: str
    occurred_at: datetime
    tool_id: str
    caused_by: str | None
    """The step that last surfaced this tool, or None if it was expanded blind."""
    chosen: bool
    """True for the first expansion of a tool that an earlier step surfaced."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoveryCalled:
    """A tool was run (successfully or not) through the executor."""

    step_id: str
    occurred_at: datetime
    tool_id: str
    caused_by: str | None
    """The latest expansion of this tool, or None if it was called without one."""
    arguments: Mapping[str, JSONValue] = field(hash=False)
    success: bool
    message: str
    error_type: str | None = None
    """Exception class name when the executor raised."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoveryFailed:
    """An operation ended in a :class:`DiscoveryError`."""

    step_id: str
    occurred_at: datetime
    operation: DiscoveryOperation
    code: ErrorCode
    message: str
    tool_id: str | None = None
    path: TreePath | None = None


type DiscoveryEvent = DiscoverySearched | DiscoveryExpanded | DiscoveryCalled | DiscoveryFailed


def audit_chain(events: Iterable[object], call: DiscoveryCalled) -> tuple[DiscoveryEvent, ...]:
    """Rebuild the chain of steps that led to ``call``, earliest first.

    Follows ``caused_by`` links from the call back through its expansion to
    the search or listing that surfaced the tool. Events of other kinds in
    ``events`` are ignored; a missing link ends the chain early, so a blind
    call yields just ``(call,)``.
    """
    by_step: dict[str, DiscoveryEvent] = {}
    for event in events:
        if isinstance(event, DiscoverySearched | DiscoveryExpanded | DiscoveryCalled):
            by_step[event.step_id] = event
    chain: list[DiscoveryEvent] = [call]
    seen = {call.step_id}
    link = call.caused_by
    while link is not None and link in by_step and link not in seen:
        seen.add(link)
        step = by_step[link]
        chain.append(step)
        link = step.caused_by if isinstance(step, DiscoveryExpanded | DiscoveryCalled) else None
    return tuple(reversed(chain))
