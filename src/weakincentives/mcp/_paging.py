"""Read a whole paginated listing (tools, resources, templates, prompts), bounded.

Each page must arrive within the listing timeout; a server whose cursors loop or
never end is a protocol error after a cursor repeats or ``MAX_PAGES`` pages.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Literal

from mcp import ClientSession, types

from weakincentives.errors import WinkError
from weakincentives.mcp._errors import MCPOperation
from weakincentives.mcp._mapping import mapped

__all__ = ["MAX_PAGES", "ListingKind", "all_pages"]

MAX_PAGES = 1_000
"""Pages of one listing read before a server is taken to paginate forever."""

type ListingKind = Literal["tools", "resources", "resource_templates", "prompts"]

_OPERATIONS: dict[ListingKind, MCPOperation] = {
    "tools": "list_tools",
    "resources": "list_resources",
    "resource_templates": "list_resources",
    "prompts": "list_prompts",
}


_LISTERS: dict[
    ListingKind,
    Callable[
        [ClientSession, types.PaginatedRequestParams | None], Awaitable[types.PaginatedResult]
    ],
] = {
    "tools": lambda session, params: session.list_tools(params=params),
    "resources": lambda session, params: session.list_resources(params=params),
    "resource_templates": lambda session, params: session.list_resource_templates(params=params),
    "prompts": lambda session, params: session.list_prompts(params=params),
}
"""Each listing's request; its result holds the page's items in the field named by the kind."""


class EndlessPagesError(WinkError):
    """A server's pagination does not end (mapped to ``MCPProtocolError``)."""


async def all_pages(
    session: ClientSession, kind: ListingKind, *, server: str, timeout: float
) -> tuple[object, ...]:
    """Every item of the ``kind`` listing, page after page."""
    list_page = _LISTERS[kind]
    operation = _OPERATIONS[kind]
    items: list[object] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        try:
            async with asyncio.timeout(timeout):
                result = await list_page(session, params)
        except Exception as exc:
            raise mapped(exc, server, operation, timeout) from exc
        items.extend(getattr(result, kind))
        cursor = result.next_cursor
        if cursor is None:
            return tuple(items)
        if cursor in seen:
            error = EndlessPagesError(f"the server sent cursor {cursor!r} twice; its pages loop")
            raise mapped(error, server, operation, None)
        seen.add(cursor)
    error = EndlessPagesError(f"the server sent more than {MAX_PAGES} pages of {kind}")
    raise mapped(error, server, operation, None)
