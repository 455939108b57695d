"""The result of rendering: what the model reads and which tools it may call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from weakincentives.prompt._output import StructuredOutput
from weakincentives.prompt._visibility import SectionPath, SectionVisibility

if TYPE_CHECKING:
    from weakincentives.prompt._deferred import DeferredTools
    from weakincentives.prompt._hosted import HostedTool
    from weakincentives.prompt._tool import Tool

__all__ = ["RenderedPrompt"]

_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderedPrompt[OutputT]:
    """A rendered prompt: markdown text plus the tools and output contract that go with it."""

    ns: str
    """Namespace of the prompt that produced this render."""
    key: str
    """Key of the prompt that produced this render."""
    name: str
    """Human-facing prompt name, used in events and errors."""
    text: str
    """The markdown the model reads."""
    tools: tuple[Tool[Any, Any], ...] = ()
    """Function tools from enabled sections that render FULL, depth-first in declaration order."""
    hosted_tools: tuple[HostedTool[Any], ...] = ()
    """Provider-executed tools, collected the same way."""
    deferred_tools: DeferredTools | None = None
    """A catalogue a provider may load on demand (native tool search) instead of the
    tools of the section that offers it; the first such section rendering FULL."""
    tool_param_descriptions: Mapping[str, Mapping[str, str]] = field(default=_EMPTY)
    """Per tool name, the description of each params field that has one."""
    output_type: object = None
    """The declared output type: a dataclass, ``list[...]`` of one, or None for text."""
    structured_output: StructuredOutput | None = None
    """How to request and parse structured output; None for text-only prompts."""
    visibility: Mapping[SectionPath, SectionVisibility] = field(default=_EMPTY)
    """Effective visibility of every section that rendered, by path."""
    visibility_overrides: Mapping[SectionPath, SectionVisibility] = field(default=_EMPTY)
    """The overrides this render applied."""
    _tools_by_name: Mapping[str, Tool[Any, Any]] = field(
        init=False, repr=False, compare=False, default=_EMPTY
    )

    def __post_init__(self) -> None:
        # Names are unique within a render; the first one wins if a caller built otherwise.
        by_name: dict[str, Tool[Any, Any]] = {}
        for tool in self.tools:
            by_name.setdefault(tool.name, tool)
        object.__setattr__(self, "_tools_by_name", by_name)

    @property
    def summarized_paths(self) -> tuple[SectionPath, ...]:
        """Paths of rendered sections shown as summaries, in render order."""
        return tuple(
            path
            for path, visibility in self.visibility.items()
            if visibility is SectionVisibility.SUMMARY
        )

    def tool(self, name: str) -> Tool[Any, Any] | None:
        """The function tool called ``name`` in this render, if any."""
        return self._tools_by_name.get(name)
