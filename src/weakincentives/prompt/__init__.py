"""Prompt composition: sections, templates, rendering and tools."""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.prompt._collaborators import (
    EvaluatingAdapter,
    EvaluationOutcome,
    EventPublisher,
    SessionProtocol,
    SessionStore,
)
from weakincentives.prompt._deferred import DeferredTool, DeferredTools
from weakincentives.prompt._hosted import HostedTool, HostedToolConfig, HostedToolOutput
from weakincentives.prompt._markdown import MarkdownSection
from weakincentives.prompt._open_sections import (
    OPEN_SECTIONS,
    OPEN_SECTIONS_INLINE,
    OpenedSections,
    OpenSectionsMode,
    OpenSectionsParams,
    OpenSectionsResult,
)
from weakincentives.prompt._output import StructuredOutput
from weakincentives.prompt._prompt import Prompt
from weakincentives.prompt._rendered import RenderedPrompt
from weakincentives.prompt._section import EmptyParams, Section
from weakincentives.prompt._template import PromptTemplate
from weakincentives.prompt._tool import Tool, ToolHandler, ToolSpec, tool
from weakincentives.prompt._tool_context import (
    ExecutionScope,
    ProviderRequest,
    ResponseAccumulator,
    ToolContext,
    ToolInvocationContext,
    build_tool_context,
)
from weakincentives.prompt._tool_result import ToolRenderableResult, ToolResult
from weakincentives.prompt._visibility import (
    SectionPath,
    SectionVisibility,
    VisibilityOverrides,
    dotted,
    parse_dotted,
)

__all__ = [
    "OPEN_SECTIONS",
    "OPEN_SECTIONS_INLINE",
    "DeferredTool",
    "DeferredTools",
    "EmptyParams",
    "EvaluatingAdapter",
    "EvaluationOutcome",
    "EventPublisher",
    "ExecutionScope",
    "HostedTool",
    "HostedToolConfig",
    "HostedToolOutput",
    "MarkdownSection",
    "OpenSectionsMode",
    "OpenSectionsParams",
    "OpenSectionsResult",
    "OpenedSections",
    "Prompt",
    "PromptTemplate",
    "ProviderRequest",
    "RenderedPrompt",
    "ResponseAccumulator",
    "Section",
    "SectionPath",
    "SectionVisibility",
    "SessionProtocol",
    "SessionStore",
    "StructuredOutput",
    "Tool",
    "ToolContext",
    "ToolHandler",
    "ToolInvocationContext",
    "ToolRenderableResult",
    "ToolResult",
    "ToolSpec",
    "VisibilityOverrides",
    "build_tool_context",
    "dotted",
    "parse_dotted",
    "tool",
]

publish("weakincentives.prompt", globals(), __all__)
