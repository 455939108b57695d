"""Hosted tools: capabilities the provider runs, such as web search and code execution.

Configurations and outputs here are provider-neutral frozen dataclasses;
adapters translate them to and from their wire formats with per-kind codecs.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.tools._code_interpreter import (
    CODE_INTERPRETER_KIND as CODE_INTERPRETER_KIND,
)
from weakincentives.tools._code_interpreter import (
    CodeExecution as CodeExecution,
)
from weakincentives.tools._code_interpreter import (
    CodeInterpreterConfig,
    CodeInterpreterResult,
    code_interpreter_tool,
)
from weakincentives.tools._code_interpreter import (
    ContainerFile as ContainerFile,
)
from weakincentives.tools._validation import (
    ConfigProblem as ConfigProblem,
)
from weakincentives.tools._validation import (
    raise_config_problems as raise_config_problems,
)
from weakincentives.tools._web_search import (
    WEB_SEARCH_KIND as WEB_SEARCH_KIND,
)
from weakincentives.tools._web_search import (
    Citation as Citation,
)
from weakincentives.tools._web_search import (
    DomainFilter,
    GeoHint,
    WebSearchConfig,
    WebSearchResult,
    web_search_tool,
)
from weakincentives.tools._web_search import (
    WebSearchCall as WebSearchCall,
)
from weakincentives.tools._web_search_section import WebSearchSection

__all__ = [
    "CodeInterpreterConfig",
    "CodeInterpreterResult",
    "DomainFilter",
    "GeoHint",
    "WebSearchConfig",
    "WebSearchResult",
    "WebSearchSection",
    "code_interpreter_tool",
    "web_search_tool",
]

# Internal names (specs/PUBLIC_API.md): imported by other weakincentives packages,
# stored under this package's name, or raised from it. Not public, not in __all__.
_INTERNAL = (
    "CODE_INTERPRETER_KIND",
    "WEB_SEARCH_KIND",
    "Citation",
    "CodeExecution",
    "ConfigProblem",
    "ContainerFile",
    "WebSearchCall",
    "raise_config_problems",
)

publish("weakincentives.tools", globals(), (*__all__, *_INTERNAL))
