"""``wink catalog search FILE QUERY`` and ``wink catalog eval CATALOG QUERIES``.

FILE holds JSON lines or one JSON array of tool records; ``--category`` matches each
path segment case-insensitively and names the nearest categories when one is unknown.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from weakincentives._cli._catalog_eval import catalog_eval_command, read_catalog, resolve_category
from weakincentives._cli._commands import CommandGroup, add_command, add_group
from weakincentives._cli._render import CommandError
from weakincentives.discovery import ToolDiscovery

__all__ = ["catalog_search_command", "register", "register_eval", "register_search"]


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


def register(group: CommandGroup) -> CommandGroup:
    """Add the ``catalog`` group; returns it so its subcommands can be added."""
    catalog = add_command(
        group,
        "catalog",
        summary="work with tool catalogues",
        description=(
            "Tool catalogue commands. A catalogue is a JSON-lines file (one tool per line) "
            "or a JSON array of tools (tool_id, name, path, summary, tags, args_schema)."
        ),
        examples=(
            "search tools.jsonl 'rename a symbol'",
            "eval tools.jsonl queries.jsonl --k 5",
        ),
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
        summary="search a catalogue",
        description=(
            "Rank the tools of FILE (JSON lines or a JSON array) for QUERY with the default "
            "BM25 ranker."
        ),
        examples=(
            "tools.jsonl 'rename a symbol'",
            "tools.jsonl 'upload a file' --category Storage/Buckets --limit 3",
        ),
        run=_run_search,
    )
    search.add_argument("file", metavar="FILE", help="the catalogue: JSON lines or a JSON array")
    search.add_argument("query", metavar="QUERY", help="what the tool should do, in words")
    search.add_argument("--limit", type=int, default=10, help="results to show (1-50)")
    search.add_argument("--category", default=None, help="limit to a category path, A/B")


def _run_eval(arguments: argparse.Namespace, out: TextIO) -> int:
    return catalog_eval_command(
        arguments.catalog_file,
        arguments.queries_file,
        k=arguments.k,
        category=arguments.category,
        hidden=arguments.hide,
        show=arguments.show,
        out=out,
        skip_unknown=arguments.skip_unknown,
    )


def register_eval(group: CommandGroup) -> None:
    """Add ``catalog eval``."""
    evaluate = add_command(
        group,
        "eval",
        summary="measure how well a catalogue's tools are found",
        description=(
            "Run labelled QUERIES (objects with query, relevant and an optional qid; JSON "
            "lines or a JSON array) against CATALOG and print R@k, MRR, nDCG and the missed "
            "queries with what ranked first instead."
        ),
        examples=(
            "tools.jsonl queries.jsonl",
            "tools.jsonl queries.json --k 10 --hide internal/admin --show 5",
            "tools.jsonl old-queries.jsonl --skip-unknown --k 20",
        ),
        run=_run_eval,
    )
    evaluate.add_argument("catalog_file", metavar="CATALOG", help="the catalogue file")
    evaluate.add_argument("queries_file", metavar="QUERIES", help="the labelled queries file")
    evaluate.add_argument(
        "--k", type=int, default=5, help="cut-off for recall and completeness (1-50)"
    )
    evaluate.add_argument("--category", default=None, help="search within a category path, A/B")
    evaluate.add_argument(
        "--hide", action="append", default=[], metavar="TOOL_ID", help="hide a tool (repeatable)"
    )
    evaluate.add_argument("--show", type=int, default=20, help="missed queries to list")
    evaluate.add_argument(
        "--skip-unknown",
        action="store_true",
        help="leave out relevant ids the catalogue does not hold (and say how many)",
    )
