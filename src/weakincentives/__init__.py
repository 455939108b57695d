"""weakincentives: typed prompt trees, typed tools and predictable provider adapters.

The most used names are re-exported here; each subpackage (``prompt``, ``runtime``,
``adapters``, ``tools``, ``discovery``, ``serde``) exports its full API.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING

from weakincentives.errors import (
    ParseError,
    PromptEvaluationError,
    PromptRenderError,
    PromptValidationError,
    ToolValidationError,
    WinkError,
)

if TYPE_CHECKING:
    from weakincentives.adapters import (
        Adapter,
        Halt,
        OfflineAdapter,
        PromptResponse,
        ScriptedCall,
        ScriptedTurn,
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

# Everything but the errors is imported on first use, so ``import weakincentives`` stays
# cheap (no asyncio, no SDKs, no schema generation) until a name is actually needed.
_HOMES: dict[str, str] = {
    "Adapter": "weakincentives.adapters",
    "EventBus": "weakincentives.runtime",
    "Halt": "weakincentives.adapters",
    "InProcessEventBus": "weakincentives.runtime",
    "MarkdownSection": "weakincentives.prompt",
    "OfflineAdapter": "weakincentives.adapters",
    "OpenSectionsResult": "weakincentives.prompt",
    "Prompt": "weakincentives.prompt",
    "PromptExecuted": "weakincentives.runtime",
    "PromptRendered": "weakincentives.runtime",
    "PromptResponse": "weakincentives.adapters",
    "PromptTemplate": "weakincentives.prompt",
    "RenderedPrompt": "weakincentives.prompt",
    "ScriptedCall": "weakincentives.adapters",
    "ScriptedTurn": "weakincentives.adapters",
    "Section": "weakincentives.prompt",
    "SectionPath": "weakincentives.prompt",
    "SectionVisibility": "weakincentives.prompt",
    "Session": "weakincentives.runtime",
    "Tool": "weakincentives.prompt",
    "ToolContext": "weakincentives.prompt",
    "ToolInvoked": "weakincentives.runtime",
    "ToolResult": "weakincentives.prompt",
    "tool": "weakincentives.prompt",
}

# A library never configures logging for its host application: this handler only
# stops Python's last-resort handler from printing the library's records to stderr
# when the application has set up no logging of its own. See docs/logging.md.
logging.getLogger(__name__).addHandler(logging.NullHandler())


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'weakincentives' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "Adapter",
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
    "tool",
]
