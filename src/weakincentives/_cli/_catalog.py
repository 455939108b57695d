"""``python -m weakincentives catalog search FILE.jsonl QUERY``: search a tool catalogue."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from weakincentives._cli._render import CommandError
from weakincentives.discovery import ToolCatalog, ToolDiscovery

__all__ = ["catalog_search_command"]


def catalog_search_command(
    file: str, query: str, *, limit: int, category: str | None, out: TextIO
) -> int:
    """Rank a JSON-lines catalogue's tools for ``query`` and print the best ones."""
    path = Path(file)
    if not path.is_file():
        raise CommandError(f"catalogue file {file!r} does not exist")
    if not query.strip():
        raise CommandError("QUERY must not be empty")
    catalog = ToolCatalog.from_jsonl(path)
    discovery = ToolDiscovery(catalog)
    category_path = tuple(part for part in (category or "").split("/") if part)
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
