"""Prompt composition: sections, templates, rendering and tools."""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.prompt._collaborators import (
    EvaluatingAdapter as EvaluatingAdapter,
)
from weakincentives.prompt._collaborators import (
    EventPublisher,
    SessionProtocol,
)
from weakincentives.prompt._deferred import DeferredTool as DeferredTool
from weakincentives.prompt._deferred import DeferredTools as DeferredTools
from weakincentives.prompt._hosted import (
    HostedTool,
)
from weakincentives.prompt._hosted import (
    HostedToolConfig as HostedToolConfig,
)
from weakincentives.prompt._hosted import (
    HostedToolOutput as HostedToolOutput,
)
from weakincentives.prompt._markdown import MarkdownSection
from weakincentives.prompt._open_sections import OPEN_SECTIONS as OPEN_SECTIONS
from weakincentives.prompt._open_sections import (
    OPEN_SECTIONS_INLINE as OPEN_SECTIONS_INLINE,
)
from weakincentives.prompt._open_sections import (
    OpenedSections as OpenedSections,
)
from weakincentives.prompt._open_sections import (
    OpenSectionsParams as OpenSectionsParams,
)
from weakincentives.prompt._open_sections import (
    OpenSectionsResult as OpenSectionsResult,
)
from weakincentives.prompt._output import StructuredOutput as StructuredOutput
from weakincentives.prompt._prompt import Prompt
from weakincentives.prompt._rendered import RenderedPrompt
from weakincentives.prompt._section import EmptyParams, Section
from weakincentives.prompt._template import PromptTemplate
from weakincentives.prompt._tool import Tool, tool
from weakincentives.prompt._tool_context import (
    ExecutionScope as ExecutionScope,
)
from weakincentives.prompt._tool_context import (
    ToolContext,
    build_tool_context,
)
from weakincentives.prompt._tool_context import (
    ToolInvocationContext as ToolInvocationContext,
)
from weakincentives.prompt._tool_result import ToolResult
from weakincentives.prompt._visibility import (
    SectionPath,
    SectionVisibility,
)
from weakincentives.prompt._visibility import (
    VisibilityOverrides as VisibilityOverrides,
)
from weakincentives.prompt._visibility import (
    dotted as dotted,
)
from weakincentives.prompt._visibility import (
    parse_dotted as parse_dotted,
)

__all__ = [
    "EmptyParams",
    "EventPublisher",
    "HostedTool",
    "MarkdownSection",
    "Prompt",
    "PromptTemplate",
    "RenderedPrompt",
    "Section",
    "SectionPath",
    "SectionVisibility",
    "SessionProtocol",
    "Tool",
    "ToolContext",
    "ToolResult",
    "build_tool_context",
    "tool",
]

# Internal names (specs/PUBLIC_API.md): imported by other weakincentives packages,
# stored under this package's name, or raised from it. Not public, not in __all__.
_INTERNAL = (
    "OPEN_SECTIONS",
    "OPEN_SECTIONS_INLINE",
    "DeferredTool",
    "DeferredTools",
    "EvaluatingAdapter",
    "ExecutionScope",
    "HostedToolConfig",
    "HostedToolOutput",
    "OpenSectionsParams",
    "OpenSectionsResult",
    "OpenedSections",
    "StructuredOutput",
    "ToolInvocationContext",
    "VisibilityOverrides",
    "dotted",
    "parse_dotted",
)

publish("weakincentives.prompt", globals(), (*__all__, *_INTERNAL))
