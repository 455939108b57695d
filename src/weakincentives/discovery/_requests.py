"""Checks on request fields, shared by every operation.

Each check returns the normalised value or raises an ``INVALID_REQUEST``
:class:`DiscoveryError` that says how to fix the field, so a model that sent
a bad request learns what to send instead. Sizes are bounded here (see
``_limits``) before any work grows with them, and a message quotes at most a
short, UTF-8-safe piece of what was sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from weakincentives._bounded import quote, safe_str
from weakincentives.discovery._catalog import TreePath
from weakincentives.discovery._diversify import requests_beyond
from weakincentives.discovery._errors import DiscoveryError
from weakincentives.discovery._limits import (
    MAX_NAME_CHARS,
    MAX_PATH_DEPTH,
    MAX_QUERY_CHARS,
    MAX_QUERY_REQUESTS,
    MAX_REQUEST_TAGS,
)

__all__ = [
    "MAX_LIMIT",
    "check_cursor",
    "check_limit",
    "check_path",
    "check_tags",
    "optional_query",
    "required_query",
    "search_query",
]

MAX_LIMIT = 50
"""Largest page size any operation accepts."""


def _shown(value: object) -> str:
    """A short description of a wrongly shaped value: a cut ``repr`` for text, else its type."""
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int | float | None):
        return safe_str(value, 40)
    return f"a {type(value).__name__}"


def check_limit(limit: object) -> int:
    """Accept an integer page size from 1 to ``MAX_LIMIT``; never clamp silently."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise DiscoveryError(
            f"limit must be an integer from 1 to {MAX_LIMIT}, got {_shown(limit)}",
            code="INVALID_REQUEST",
            next_action=f"repeat the request with a limit between 1 and {MAX_LIMIT}",
        )
    return limit


def _list_of_str(value: object, *, must_be: str, next_action: str) -> Sequence[str]:
    """``value`` if it is a list or tuple of strings; a bare string, None or a mapping is a mistake.

    ``must_be`` says what the field must be (``"tags must be a list of strings"``).
    """
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return cast("Sequence[str]", value)
    raise DiscoveryError(
        f"{must_be}, got {_shown(value)}", code="INVALID_REQUEST", next_action=next_action
    )


def _longest(values: Sequence[str]) -> int:
    return max(map(len, values), default=0)


def check_path(path: object) -> TreePath:
    """Accept a list of category names (a bare string is a mistake, not a one-segment path)."""
    segments = _list_of_str(
        path,
        must_be="path must be a list of category names",
        next_action='pass the path as a list such as ["Storage", "Buckets"]',
    )
    if len(segments) > MAX_PATH_DEPTH or _longest(segments) > MAX_NAME_CHARS:
        raise DiscoveryError(
            f"path must have at most {MAX_PATH_DEPTH} segments of at most {MAX_NAME_CHARS} "
            f"characters (no category is deeper or longer), got {len(segments):,} segments of "
            f"up to {_longest(segments):,} characters",
            code="INVALID_REQUEST",
            next_action="pass a category path as list or a search returned it",
        )
    return tuple(segments)


def check_tags(tags: object) -> tuple[str, ...]:
    """Accept a list of tags; return them case-folded, deduplicated and sorted."""
    given = _list_of_str(
        tags,
        must_be="tags must be a list of strings",
        next_action='pass tags as a list such as ["auth"]',
    )
    if len(given) > MAX_REQUEST_TAGS or _longest(given) > MAX_NAME_CHARS:
        raise DiscoveryError(
            f"tags must be at most {MAX_REQUEST_TAGS} strings of at most {MAX_NAME_CHARS} "
            f"characters, got {len(given):,} of up to {_longest(given):,} characters",
            code="INVALID_REQUEST",
            next_action="pass the few tags every listed tool must carry",
        )
    return tuple(sorted({tag.casefold() for tag in given if tag.strip()}))


def check_cursor(cursor: object) -> str | None:
    """Accept None or a string (what ``next_cursor`` held); the codec checks the rest."""
    if cursor is not None and not isinstance(cursor, str):
        raise DiscoveryError(
            f"cursor must be the next_cursor string of the previous page, got "
            f"{type(cursor).__name__}",
            code="INVALID_REQUEST",
            next_action="pass next_cursor exactly as it was returned, or omit the cursor",
        )
    return cursor


def optional_query(query: object) -> str | None:
    """A blank query counts as no query."""
    if query is None:
        return None
    if not isinstance(query, str):
        return required_query(query)
    return required_query(query) if query.strip() else None


def required_query(query: object) -> str:
    """Accept a non-blank string of at most ``MAX_QUERY_CHARS`` characters, stripped."""
    if not isinstance(query, str) or not query.strip():
        got = "an empty string" if isinstance(query, str) else type(query).__name__
        raise DiscoveryError(
            f"query must be a non-empty description of the capability you need, got {got}",
            code="INVALID_REQUEST",
            next_action='repeat the request with a query such as "upload a file"',
        )
    text = query.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise DiscoveryError(
            f"query must have at most {MAX_QUERY_CHARS:,} characters, got {len(text):,} "
            f"starting {quote(text)}",
            code="INVALID_REQUEST",
            next_action="describe the capability you need in a sentence or two",
        )
    return text


def search_query(query: object) -> str:
    """A query for ``search_tool_by_category``: as :func:`required_query`, with few requests."""
    text = required_query(query)
    found = requests_beyond(text, MAX_QUERY_REQUESTS)
    if found is not None:
        raise DiscoveryError(
            f"query asks for {found} things (sentences or clauses joined by 'also', 'then', "
            f"...); a search takes at most {MAX_QUERY_REQUESTS}",
            code="INVALID_REQUEST",
            next_action="search for the things you need in several smaller queries",
        )
    return text
