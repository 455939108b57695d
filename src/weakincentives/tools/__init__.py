"""Hosted tools: capabilities the provider runs, such as web search and code execution.

Configurations and outputs here are provider-neutral frozen dataclasses;
adapters translate them to and from their wire formats with per-kind codecs.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.prompt import HostedTool, HostedToolConfig, HostedToolOutput
from weakincentives.tools._validation import ConfigProblem, raise_config_problems
from weakincentives.tools.code_interpreter import (
    CODE_INTERPRETER_KIND,
    CodeExecution,
    CodeInterpreterConfig,
    CodeInterpreterResult,
    CodeInterpreterStatus,
    ContainerFile,
    code_interpreter_tool,
)
from weakincentives.tools.web_search import (
    WEB_SEARCH_KIND,
    Citation,
    DomainFilter,
    GeoHint,
    SearchContextSize,
    WebSearchCall,
    WebSearchConfig,
    WebSearchResult,
    WebSearchSection,
    WebSearchStatus,
    web_search_tool,
)

__all__ = [
    "CODE_INTERPRETER_KIND",
    "WEB_SEARCH_KIND",
    "Citation",
    "CodeExecution",
    "CodeInterpreterConfig",
    "CodeInterpreterResult",
    "CodeInterpreterStatus",
    "ConfigProblem",
    "ContainerFile",
    "DomainFilter",
    "GeoHint",
    "HostedTool",
    "HostedToolConfig",
    "HostedToolOutput",
    "SearchContextSize",
    "WebSearchCall",
    "WebSearchConfig",
    "WebSearchResult",
    "WebSearchSection",
    "WebSearchStatus",
    "code_interpreter_tool",
    "raise_config_problems",
    "web_search_tool",
]

publish("weakincentives.tools", globals(), __all__)
