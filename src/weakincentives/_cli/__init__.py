"""The ``python -m weakincentives`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from weakincentives._cli._catalog import catalog_search_command
from weakincentives._cli._demo import DemoOptions, run_demo
from weakincentives._cli._mcp import add_mcp_parser, mcp_command
from weakincentives._cli._render import render_command
from weakincentives.errors import WinkError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m weakincentives",
        description="Typed prompts, typed tools and predictable adapters for LLM agents.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="run the on-call triage agent and print a transcript",
        description=(
            "Run the demo agent. Offline by default; --provider openai (or WINK_PROVIDER=openai) "
            "uses the OpenAI Responses API with OPENAI_API_KEY, --model (or WINK_MODEL) and "
            "--base-url (or OPENAI_BASE_URL) for any Responses-compatible server."
        ),
    )
    demo.add_argument("--provider", choices=("offline", "openai"), default=None)
    demo.add_argument("--model", default=None, help="model name for --provider openai")
    demo.add_argument("--base-url", default=None, help="Responses API base URL")
    demo.add_argument("--no-prompt", action="store_true", help="do not print the rendered prompts")
    render = commands.add_parser(
        "render",
        help="print a prompt's markdown and tool schemas",
        description="Render MODULE:ATTR (a PromptTemplate or Prompt) as the model would see it.",
    )
    render.add_argument("target", metavar="MODULE:ATTR")
    render.add_argument(
        "--params", default=None, help='params as JSON: {"TaskParams": {"goal": "..."}}'
    )
    render.add_argument(
        "--open",
        action="append",
        default=[],
        metavar="KEY",
        help="open a summarized section by dotted key (repeatable)",
    )
    catalog = commands.add_parser(
        "catalog", help="work with tool catalogues", description="Tool catalogue commands."
    )
    catalog_commands = catalog.add_subparsers(dest="catalog_command", required=True)
    search = catalog_commands.add_parser(
        "search",
        help="search a JSON-lines catalogue",
        description="Rank the tools of FILE.jsonl for QUERY with the default BM25 ranker.",
    )
    search.add_argument("file", metavar="FILE.jsonl")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--limit", type=int, default=10, help="results to show (1-50)")
    search.add_argument("--category", default=None, help="limit to a category path, A/B")
    add_mcp_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None) -> int:
    """Run the command line; returns the process exit code."""
    stream = out if out is not None else sys.stdout
    arguments = _parser().parse_args(argv)
    try:
        if arguments.command == "demo":
            options = DemoOptions.from_environment(
                provider=arguments.provider,
                model=arguments.model,
                base_url=arguments.base_url,
                show_prompt=not arguments.no_prompt,
            )
            return run_demo(options, stream)
        if arguments.command == "render":
            return render_command(arguments.target, arguments.params, arguments.open, stream)
        if arguments.command == "catalog":
            return catalog_search_command(
                arguments.file,
                arguments.query,
                limit=arguments.limit,
                category=arguments.category,
                out=stream,
            )
        if arguments.command == "mcp":
            return mcp_command(arguments)
    except (WinkError, ValueError, ImportError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    raise AssertionError(f"unhandled command {arguments.command!r}")
