"""How the command line declares its subcommands.

Each command module has a ``register(group)`` function that adds its parser with
:func:`add_command`, declares its arguments, and names the function that runs it.
Groups of commands (``catalog``) are commands too: run without a subcommand they
print their own help. Adding a subcommand is one ``register`` call in ``_parser.py``.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Sequence
from typing import TextIO

__all__ = ["CommandGroup", "Runner", "add_command", "add_group", "help_runner", "new_parser"]

type Runner = Callable[[argparse.Namespace, TextIO], int]
"""Runs a parsed command, writing its output to the stream; returns the exit code."""

type CommandGroup = argparse._SubParsersAction[argparse.ArgumentParser]


class _Formatter(argparse.HelpFormatter):
    """Wraps prose paragraphs but keeps indented lines (the examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs: list[str] = []
        for paragraph in text.split("\n\n"):
            lines = paragraph.splitlines()
            if lines and all(line.startswith("  ") or line.endswith(":") for line in lines):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                paragraphs.append(
                    textwrap.fill(
                        " ".join(paragraph.split()),
                        width,
                        initial_indent=indent,
                        subsequent_indent=indent,
                    )
                )
        return "\n\n".join(paragraphs)


def _examples(examples: Sequence[str]) -> str:
    lines = "\n".join(f"  %(prog)s {example}".rstrip() for example in examples)
    return f"example{'s' if len(examples) > 1 else ''}:\n{lines}"


def new_parser(*, prog: str, description: str, examples: Sequence[str]) -> argparse.ArgumentParser:
    """The top-level parser, with the same help layout as every subcommand."""
    return argparse.ArgumentParser(
        prog=prog,
        description=description,
        epilog=_examples(examples),
        formatter_class=_Formatter,
    )


def help_runner(parser: argparse.ArgumentParser) -> Runner:
    """A runner that prints ``parser``'s help: what a group does when given no subcommand."""

    def show_help(arguments: argparse.Namespace, out: TextIO) -> int:
        out.write(parser.format_help())
        return 0

    return show_help


def add_group(parser: argparse.ArgumentParser) -> CommandGroup:
    """Give ``parser`` subcommands; without one, it prints its help."""
    parser.set_defaults(run=help_runner(parser))
    return parser.add_subparsers(title="commands", metavar="COMMAND")


def add_command(
    group: CommandGroup,
    name: str,
    *,
    summary: str,
    description: str,
    examples: Sequence[str],
    run: Runner | None = None,
) -> argparse.ArgumentParser:
    """Add subcommand ``name``; its help ends with ``examples`` (arguments after the name).

    ``run`` is None for a group, which then calls :func:`add_group` on the result.
    """
    parser = group.add_parser(
        name,
        help=summary,
        description=description,
        epilog=_examples(examples),
        formatter_class=_Formatter,
    )
    if run is not None:
        parser.set_defaults(run=run)
    return parser
