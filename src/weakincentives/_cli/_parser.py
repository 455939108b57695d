"""The command tree: ``wink demo``, ``render``, ``catalog search|eval`` and ``mcp serve``."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version

from weakincentives._cli import _catalog, _demo, _mcp, _render
from weakincentives._cli._commands import add_group, new_parser

__all__ = ["build_parser", "package_version"]

_DISTRIBUTION = "weakincentives"


def package_version() -> str:
    """The installed distribution's version, or a marker when running from an uninstalled tree."""
    try:
        return version(_DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser(prog: str) -> argparse.ArgumentParser:
    """The parser for every command; ``prog`` is the name the user typed."""
    parser = new_parser(
        prog=prog,
        description="Typed prompts, typed tools and predictable adapters for LLM agents.",
        examples=(
            "demo",
            'render myagent.prompts:triage --params \'{"TaskParams": {"goal": "triage"}}\'',
            "catalog search tools.jsonl 'rename a symbol'",
            "mcp serve tools.jsonl --upstream 'python my_server.py'",
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = add_group(parser)
    _demo.register(commands)
    _render.register(commands)
    catalog = _catalog.register(commands)
    _catalog.register_search(catalog)
    _catalog.register_eval(catalog)
    _mcp.register(commands)
    return parser
