"""Checks on request fields, shared by every operation.

Each check returns the normalised value or raises an ``INVALID_REQUEST``
:class:`DiscoveryError` that says how to fix the field, so a model that sent
a bad request learns what to send instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from weakincentives.discovery._catalog import TreePath
from weakincentives.discovery._errors import DiscoveryError

__all__ = [
    "MAX_LIMIT",
    "check_cursor",
    "check_limit",
    "check_path",
    "check_tags",
    "optional_query",
    "required_query",
]

MAX_LIMIT = 50
"""Largest page size any operation accepts."""


def check_limit(limit: object) -> int:
    """Accept an integer page size from 1 to ``MAX_LIMIT``; never clamp silently."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise DiscoveryError(
            f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}",
            code="INVALID_REQUEST",
            next_action=f"repeat the request with a limit between 1 and {MAX_LIMIT}",
        )
    return limit


def _is_list_of_str(value: object) -> bool:
    """A list or tuple of strings; a bare string, None or a mapping is a mistake."""
    return isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)


def check_path(path: object) -> TreePath:
    """Accept a list of category names (a bare string is a mistake, not a one-segment path)."""
    if not _is_list_of_str(path):
        raise DiscoveryError(
            f"path must be a list of category names, got {path!r}",
            code="INVALID_REQUEST",
            next_action='pass the path as a list such as ["Storage", "Buckets"]',
        )
    return tuple(cast("Sequence[str]", path))


def check_tags(tags: object) -> tuple[str, ...]:
    """Accept a list of tags; return them case-folded, deduplicated and sorted."""
    if not _is_list_of_str(tags):
        raise DiscoveryError(
            f"tags must be a list of strings, got {tags!r}",
            code="INVALID_REQUEST",
            next_action='pass tags as a list such as ["auth"]',
        )
    return tuple(sorted({tag.casefold() for tag in cast("Sequence[str]", tags) if tag.strip()}))


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
    """Accept a non-blank string, stripped."""
    if not isinstance(query, str) or not query.strip():
        got = "an empty string" if isinstance(query, str) else type(query).__name__
        raise DiscoveryError(
            f"query must be a non-empty description of the capability you need, got {got}",
            code="INVALID_REQUEST",
            next_action='repeat the request with a query such as "upload a file"',
        )
    return query.strip()
