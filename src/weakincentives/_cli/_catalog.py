"""``python -m weakincentives catalog search FILE QUERY``: search a tool catalogue.

FILE holds JSON lines or one JSON array of tool records; ``--category`` matches
each path segment case-insensitively and names the nearest categories when one
is unknown.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from weakincentives._cli._catalog_eval import read_catalog, resolve_category
from weakincentives._cli._render import CommandError
from weakincentives.discovery import ToolDiscovery

__all__ = ["catalog_search_command"]


def catalog_search_command(
    file: str, query: str, *, limit: int, category: str | None, out: TextIO
) -> int:
    """Rank a catalogue's tools for ``query`` and print the best ones."""
    path = Path(file)
    if not query.strip():
        raise CommandError("QUERY must not be empty")
    catalog = read_catalog(file)
    discovery = ToolDiscovery(catalog)
    category_path = resolve_category(discovery, category)
    response = discovery.search_tool_by_category(query, category_path, limit=limit)
    out.write(
        f"{len(catalog.tools)} tools in {path.name}; top {len(response.results)} for {query!r}\n"
    )
    for rank, pointer in enumerate(response.results, start=1):
        confidence = "-" if pointer.confidence is None else f"{pointer.confidence:.2f}"
        out.write(f"{rank:>3}. {confidence}  {pointer.tool_id}\n")
        if pointer.summary:
            out.write(f"          {pointer.summary[:100]}\n")
    return 0
