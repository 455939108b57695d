"""Checks on request fields, shared by every operation.

Each check returns the normalised value or raises an ``INVALID_REQUEST``
:class:`DiscoveryError` that says how to fix the field, so a model that sent
a bad request learns what to send instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from weakincentives.discovery._catalog import TreePath
from weakincentives.discovery._errors import DiscoveryError

__all__ = [
    "MAX_LIMIT",
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


def check_path(path: Sequence[str]) -> TreePath:
    """Accept a list of category names (a bare string is a mistake, not a one-segment path)."""
    if isinstance(path, str) or not all(isinstance(part, str) for part in path):
        raise DiscoveryError(
            f"path must be a list of category names, got {path!r}",
            code="INVALID_REQUEST",
            next_action='pass the path as a list such as ["Storage", "Buckets"]',
        )
    return tuple(path)


def check_tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Accept a list of tags; return them case-folded, deduplicated and sorted."""
    if isinstance(tags, str) or not all(isinstance(tag, str) for tag in tags):
        raise DiscoveryError(
            f"tags must be a list of strings, got {tags!r}",
            code="INVALID_REQUEST",
            next_action='pass tags as a list such as ["auth"]',
        )
    return tuple(sorted({tag.casefold() for tag in tags if tag.strip()}))


def optional_query(query: str | None) -> str | None:
    """A blank query counts as no query."""
    if query is None:
        return None
    return required_query(query) if query.strip() else None


def required_query(query: object) -> str:
    """Accept a non-blank string, stripped."""
    if not isinstance(query, str) or not query.strip():
        raise DiscoveryError(
            "query must be a non-empty description of the capability you need",
            code="INVALID_REQUEST",
            next_action='repeat the request with a query such as "upload a file"',
        )
    return query.strip()
