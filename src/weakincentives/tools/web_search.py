"""Web search as a hosted tool: configuration, parsed result and factory.

The public home of everything web-search specific. A section that offers the
tool to a prompt belongs here too, next to the factory it wraps.
"""

from __future__ import annotations

from weakincentives.tools._web_search import (
    WEB_SEARCH_KIND,
    Citation,
    DomainFilter,
    GeoHint,
    SearchContextSize,
    WebSearchCall,
    WebSearchConfig,
    WebSearchResult,
    WebSearchStatus,
    web_search_tool,
)
from weakincentives.tools._web_search_section import WebSearchSection

__all__ = [
    "WEB_SEARCH_KIND",
    "Citation",
    "DomainFilter",
    "GeoHint",
    "SearchContextSize",
    "WebSearchCall",
    "WebSearchConfig",
    "WebSearchResult",
    "WebSearchSection",
    "WebSearchStatus",
    "web_search_tool",
]
