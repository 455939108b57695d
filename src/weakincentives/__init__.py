"""weakincentives: typed prompt trees, typed tools and predictable provider adapters.

The most used names are re-exported here; each subpackage (``prompt``, ``runtime``,
``adapters``, ``tools``, ``discovery``, ``serde``) exports its full API.
"""

from __future__ import annotations

import logging

from weakincentives.adapters import (
    Halt,
    OfflineAdapter,
    PromptResponse,
    ProviderAdapter,
    ScriptedCall,
    ScriptedTurn,
    evaluate_with_disclosure,
)
from weakincentives.errors import (
    ParseError,
    PromptEvaluationError,
    PromptRenderError,
    PromptValidationError,
    ToolValidationError,
    WinkError,
)
from weakincentives.prompt import (
    MarkdownSection,
    OpenSectionsResult,
    Prompt,
    PromptTemplate,
    RenderedPrompt,
    Section,
    SectionPath,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
    tool,
)
from weakincentives.runtime import (
    EventBus,
    InProcessEventBus,
    PromptExecuted,
    PromptRendered,
    Session,
    ToolInvoked,
)

# A library never configures logging for its host application: this handler only
# stops Python's last-resort handler from printing the library's records to stderr
# when the application has set up no logging of its own. See docs/logging.md.
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = [
    "EventBus",
    "Halt",
    "InProcessEventBus",
    "MarkdownSection",
    "OfflineAdapter",
    "OpenSectionsResult",
    "ParseError",
    "Prompt",
    "PromptEvaluationError",
    "PromptExecuted",
    "PromptRenderError",
    "PromptRendered",
    "PromptResponse",
    "PromptTemplate",
    "PromptValidationError",
    "ProviderAdapter",
    "RenderedPrompt",
    "ScriptedCall",
    "ScriptedTurn",
    "Section",
    "SectionPath",
    "SectionVisibility",
    "Session",
    "Tool",
    "ToolContext",
    "ToolInvoked",
    "ToolResult",
    "ToolValidationError",
    "WinkError",
    "evaluate_with_disclosure",
    "tool",
]
