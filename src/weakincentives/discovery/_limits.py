"""Bounds on what a catalogue and a request may hold.

Catalogue files, MCP peers and models are untrusted: without a bound, one deep
category path, one huge query or one long id makes work or memory grow without
limit (every prefix of a path becomes a node; every character of a query is
tokenised, and every request in it ranked). Each bound here is far above what
real catalogues and queries use (ToolBench and MetaTool: paths 2 deep, ids of
at most 147 characters, queries of at most 1,089 characters and 9 requests)
and is refused with a typed error naming it, never clamped silently.
"""

from __future__ import annotations

from collections.abc import Sequence

from weakincentives._bounded import listing

__all__ = [
    "MAX_CURSOR_CHARS",
    "MAX_NAME_CHARS",
    "MAX_PATH_DEPTH",
    "MAX_PROBLEMS_SHOWN",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_REQUESTS",
    "MAX_REQUEST_TAGS",
    "MAX_VIOLATIONS",
    "lone_surrogate",
    "shown_path",
]

MAX_PATH_DEPTH = 32
"""Segments of a category path, in a catalogue and in a request."""

MAX_NAME_CHARS = 512
"""Characters of a tool id, a tool or category name (a path segment) and a tag."""

MAX_QUERY_CHARS = 4_000
"""Characters of a query (``list``, ``search_tool_by_category``, ``search_nodes``)."""

MAX_QUERY_REQUESTS = 16
"""Requests (sentences and joined clauses) in one ``search_tool_by_category`` query.

Each request is ranked again for diversification, and an embedding ranker embeds
each one, so their number bounds a search's work.
"""

MAX_REQUEST_TAGS = 32
"""Tags in one ``list`` request."""

MAX_CURSOR_CHARS = 512
"""Characters of a cursor; the ones a service issues are about 100."""

MAX_PROBLEMS_SHOWN = 20
"""Catalogue problems listed in one ``CatalogError`` before the rest are counted."""

MAX_VIOLATIONS = 20
"""Argument violations an ``INVALID_ARGUMENTS`` error carries; the message counts the rest."""


def lone_surrogate(text: str) -> int | None:
    """Index of the first lone surrogate in ``text`` (which UTF-8 cannot encode), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def shown_path(path: Sequence[str]) -> str:
    """An untrusted path for a message: ``['a', 'b' and 7 more]``, each segment cut short."""
    return f"[{listing(path, quoted=True)}]"
