"""Deferred tools: a catalogue a provider may load on demand through its native tool search.

A section that offers a large catalogue (``ToolDiscoverySection``) registers ordinary
discovery tools, which work on every provider, and may also declare the catalogue as
:class:`DeferredTools`. A provider with native deferred loading (OpenAI's ``tool_search``,
Anthropic's tool search) takes that offer up: it declares the catalogue's tools deferred
instead of the discovery tools and lets the model load and call them directly. Providers
without it ignore the offer and the discovery tools stay.

The conversation stays provider-neutral: a native search is recorded as a call of the
section's search tool, and a call of a loaded tool as a call of its call tool, so the
same loop runs both, and another provider can carry the conversation on with the
discovery tools. This module holds only the neutral values; it imports no provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from weakincentives.serde import JSONValue

__all__ = ["DeferredTool", "DeferredTools"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class DeferredTool:
    """One catalogue tool as a provider declares it when loading tools on demand."""

    tool_id: str
    """The catalogue id, which the section's call tool takes."""
    name: str
    """The name the model calls: ``[a-zA-Z0-9_-]``, at most 64 characters, unique in its set."""
    description: str
    """What the tool does (its catalogue summary)."""
    parameters: Mapping[str, JSONValue]
    """The tool's argument schema (an object schema)."""
    strict: bool
    """Whether the schema is within OpenAI's strict subset, so calls can be held to it."""
    group: str
    """The group (a top-level category) the tool is declared in, as a namespace name."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeferredTools:
    """A catalogue that a provider may load on demand instead of offering the discovery tools.

    Built by the section that offers the catalogue; it holds only what the caller may
    call (hidden and uncallable tools are never in it). ``search_tool`` and
    ``call_tool`` name the section's own tools that a native search and a call of a
    loaded tool are recorded as, and ``replaces`` every tool of the section that a
    provider taking the offer leaves out of its declarations.
    """

    tools: tuple[DeferredTool, ...]
    """The tools, grouped by ``group``, in catalogue order within a group."""
    groups: Mapping[str, str] = field(default=_EMPTY)
    """Each group's description, by group name, in the order groups are declared."""
    search_tool: str
    """The section's search tool: a native client-side search is recorded as its call."""
    search_description: str
    """What the search tool does, as a provider describes its own search tool."""
    search_parameters: Mapping[str, JSONValue]
    """The search tool's argument schema (its params' strict schema)."""
    call_tool: str
    """The section's call tool: ``{"tool_id", "arguments"}`` runs a catalogue tool."""
    replaces: tuple[str, ...]
    """The section's tools a provider leaves out when it loads the catalogue natively."""
    _by_name: Mapping[str, DeferredTool] = field(
        init=False, repr=False, compare=False, default=_EMPTY
    )
    _by_id: Mapping[str, DeferredTool] = field(
        init=False, repr=False, compare=False, default=_EMPTY
    )

    def __post_init__(self) -> None:
        # Lookups the wires use per call; built once for the value's life.
        object.__setattr__(self, "_by_name", {tool.name: tool for tool in self.tools})
        object.__setattr__(self, "_by_id", {tool.tool_id: tool for tool in self.tools})

    def named(self, name: str) -> DeferredTool | None:
        """The tool the model calls ``name``, if it is in this set."""
        return self._by_name.get(name)

    def by_id(self, tool_id: str) -> DeferredTool | None:
        """The tool with catalogue id ``tool_id``, if it is in this set."""
        return self._by_id.get(tool_id)
