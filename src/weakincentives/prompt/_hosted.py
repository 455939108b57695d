"""Hosted tools: capabilities the provider runs server-side, described provider-neutrally.

A function tool carries a handler that runs here; a hosted tool (web search, a
code interpreter) carries only a ``kind`` and a typed configuration, and the
provider does the work. Adapters turn each kind into their wire format through
a per-kind codec and parse what the provider reports back into a typed output.
This module holds only the provider-neutral types; it imports no adapter.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from weakincentives.errors import PromptValidationError
from weakincentives.prompt._naming import description_problem, tool_name_problem

__all__ = ["KIND_PATTERN", "HostedTool", "HostedToolConfig", "HostedToolOutput"]

KIND_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
"""Hosted tool kinds are snake_case identifiers such as ``web_search``."""


@runtime_checkable
class HostedToolConfig(Protocol):
    """Marker for a hosted tool's configuration: a frozen, slotted dataclass.

    The protocol has no members; the shape is checked when a
    :class:`HostedTool` is built, because a Protocol cannot express "frozen".
    """


@runtime_checkable
class HostedToolOutput(Protocol):
    """Marker for what an adapter parses out of a provider's hosted tool activity."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HostedTool[ConfigT: HostedToolConfig]:
    """A provider-executed capability attached to a section.

    Build one through a factory such as ``web_search_tool(...)`` rather than by
    hand. Every problem with the fields is collected and reported in one
    :class:`~weakincentives.errors.PromptValidationError` at construction.
    """

    kind: str
    """Provider-neutral capability id (``"web_search"``); adapters pick a codec by it."""
    name: str
    """Unique within a rendered prompt; keys ``PromptResponse.hosted_outputs``."""
    description: str
    """What the capability does, 1-200 ASCII characters."""
    config: ConfigT
    """The capability's options, a frozen dataclass validated when it was built."""

    def __post_init__(self) -> None:
        problems = [
            f"hosted tool {self.name!r}: {problem}"
            for problem in (
                tool_name_problem(self.name),
                description_problem(self.description),
                _kind_problem(self.kind),
                _config_problem(self.config),
            )
            if problem is not None
        ]
        if problems:
            tool_name = self.name if isinstance(self.name, str) else None
            raise PromptValidationError.combine(
                (PromptValidationError(problem, tool_name=tool_name) for problem in problems),
                subject=f"hosted tool {self.name!r}",
            )


def _kind_problem(kind: object) -> str | None:
    if not isinstance(kind, str):
        return f"kind must be a string, got {type(kind).__name__}"
    if KIND_PATTERN.fullmatch(kind) is None:
        return f"kind {kind!r} must be a non-empty snake_case identifier such as 'web_search'"
    return None


def _config_problem(config: object) -> str | None:
    config_type = type(config)
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        return f"config must be a dataclass instance, got {config_type.__name__}"
    params = getattr(config_type, "__dataclass_params__", None)
    frozen = getattr(params, "frozen", False)
    slotted = "__slots__" in vars(config_type)
    if not (frozen and slotted):
        return (
            f"config {config_type.__name__} must be declared with "
            "@dataclass(frozen=True, slots=True) so it cannot change after validation"
        )
    return None
