"""``wink catalog search FILE.jsonl QUERY``: search a tool catalogue."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from weakincentives._cli._commands import CommandGroup, add_command, add_group
from weakincentives._cli._render import CommandError
from weakincentives.discovery import ToolCatalog, ToolDiscovery

__all__ = ["catalog_search_command", "register", "register_search"]


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


def register(group: CommandGroup) -> CommandGroup:
    """Add the ``catalog`` group; returns it so its subcommands can be added."""
    catalog = add_command(
        group,
        "catalog",
        summary="work with tool catalogues",
        description=(
            "Tool catalogue commands. A catalogue is a JSON-lines file, one tool per line "
            "(tool_id, name, path, summary, tags, args_schema)."
        ),
        examples=("search tools.jsonl 'rename a symbol'",),
    )
    return add_group(catalog)


def _run_search(arguments: argparse.Namespace, out: TextIO) -> int:
    return catalog_search_command(
        arguments.file,
        arguments.query,
        limit=arguments.limit,
        category=arguments.category,
        out=out,
    )


def register_search(group: CommandGroup) -> None:
    """Add ``catalog search``."""
    search = add_command(
        group,
        "search",
        summary="search a JSON-lines catalogue",
        description="Rank the tools of FILE.jsonl for QUERY with the default BM25 ranker.",
        examples=(
            "tools.jsonl 'rename a symbol'",
            "tools.jsonl 'upload a file' --category Storage/Buckets --limit 3",
        ),
        run=_run_search,
    )
    search.add_argument("file", metavar="FILE.jsonl", help="the catalogue, one tool per line")
    search.add_argument("query", metavar="QUERY", help="what the tool should do, in words")
    search.add_argument("--limit", type=int, default=10, help="results to show (1-50)")
    search.add_argument("--category", default=None, help="limit to a category path, A/B")
