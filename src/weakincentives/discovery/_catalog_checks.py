"""Catalogue validation: every problem of a set of tools and nodes, found before anything is built.

A catalogue comes from a file, an MCP server or code, so nothing in it is trusted:
ids, names, tags and segments are bounded (``_limits``), text must be encodable as
UTF-8, paths must be short enough that building a node per prefix stays linear, and
schemas must be portable JSON the validator reads as meant. Tools whose fields are
plain take a fast path (no message is built), so checking stays cheap at 100,000 tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from weakincentives._bounded import quote
from weakincentives.discovery._limits import (
    MAX_NAME_CHARS,
    MAX_PATH_DEPTH,
    MAX_PROBLEMS_SHOWN,
    lone_surrogate,
    shown_path,
)
from weakincentives.errors import CatalogError
from weakincentives.serde import schema_problems

if TYPE_CHECKING:  # the checks read entries; _catalog builds the catalogue after them
    from weakincentives.discovery._catalog import CatalogNode, CatalogTool, TreePath

__all__ = ["catalog_error", "catalog_problems", "listed"]

type _Problem = tuple[int | None, str | None, TreePath | None, str]
"""(position of the tool, tool id, path, what is wrong); position is None for a node."""


def catalog_error(problems: list[_Problem], labels: Sequence[str] | None) -> CatalogError:
    """One error listing ``problems`` (bounded), each prefixed by its tool's label if known."""
    _, first_tool, first_path, _ = problems[0]
    texts = [
        f"{labels[position]}: {text}" if labels is not None and position is not None else text
        for position, _, _, text in problems[:MAX_PROBLEMS_SHOWN]
    ]
    return CatalogError(
        f"{len(problems):,} problem(s) in the tool catalogue:\n"
        f"{listed(texts, total=len(problems))}",
        tool_id=first_tool,
        path=first_path,
    )


def listed(texts: Sequence[str], *, total: int | None = None) -> str:
    """Bullet lines for the first ``MAX_PROBLEMS_SHOWN`` texts, then a count of the rest."""
    shown = texts[:MAX_PROBLEMS_SHOWN]
    rest = (len(texts) if total is None else total) - len(shown)
    lines = "\n".join(f"- {text}" for text in shown)
    return f"{lines}\n- and {rest:,} more" if rest > 0 else lines


def _text_problem(what: str, text: str, limit: int | None = MAX_NAME_CHARS) -> str | None:
    """Why ``text`` cannot be catalogue text (too long, or not encodable as UTF-8), or None."""
    if limit is not None and len(text) > limit:
        return f"{what} has {len(text):,} characters (at most {limit})"
    found = lone_surrogate(text)
    if found is not None:
        return f"{what} has a lone surrogate at character {found} (UTF-8 cannot encode it)"
    return None


def _texts_problems(texts: Iterable[tuple[str, str, int | None]]) -> list[str]:
    """:func:`_text_problem` of each ``(what, text, limit)``."""
    found = (_text_problem(what, text, limit) for what, text, limit in texts)
    return [problem for problem in found if problem is not None]


def _path_problems(path: TreePath) -> list[str]:
    """Why ``path`` cannot be a category path (empty, too deep, a bad segment)."""
    if not path:
        return ["an empty path; give at least one category"]
    if len(path) > MAX_PATH_DEPTH:
        return [f"a path of {len(path):,} segments (at most {MAX_PATH_DEPTH})"]
    if any(not segment.strip() for segment in path):
        return [f"path {shown_path(path)} with an empty segment"]
    segments = ((f"segment {k}", segment, MAX_NAME_CHARS) for k, segment in enumerate(path))
    return [f"path {shown_path(path)}, whose {text}" for text in _texts_problems(segments)]


def _portable(text: str) -> bool:
    return text.isascii() or lone_surrogate(text) is None


def _plain_fields(tool: CatalogTool) -> bool:
    """Whether the tool's id, name, summary, tags and paths pass every check (fast, no messages)."""
    tid, name, paths = tool.tool_id, tool.name, tool.paths
    if not (paths and len(tid) <= MAX_NAME_CHARS and len(name) <= MAX_NAME_CHARS):
        return False
    if not (tid.strip() and name.strip() and _portable("".join((tid, name, tool.summary)))):
        return False
    for tag in tool.tags:
        if len(tag) > MAX_NAME_CHARS or not _portable(tag):
            return False
    for path in paths:
        if not path or len(path) > MAX_PATH_DEPTH or not _portable("".join(path)):
            return False
        for segment in path:
            if len(segment) > MAX_NAME_CHARS or not segment.strip():
                return False
    return True


def _tool_problems(tool: CatalogTool) -> list[tuple[TreePath | None, str]]:
    """(path, what is wrong) for one tool on its own; duplicates are found across tools.

    Each text continues a sentence about the tool (`` has no category path``, ``: name ...``).
    """
    schema: list[tuple[TreePath | None, str]] = [
        (None, f": {text}") for text in _schema_issues(tool)
    ]
    if _plain_fields(tool):
        return schema
    problems: list[tuple[TreePath | None, str]] = [
        (None, f" has an empty {what}")
        for what, text in (("tool_id", tool.tool_id), ("name", tool.name))
        if not text.strip()
    ]
    texts = [
        ("tool_id", tool.tool_id, MAX_NAME_CHARS),
        ("name", tool.name, MAX_NAME_CHARS),
        ("summary", tool.summary, None),
        *((f"tag {quote(tag)}", tag, MAX_NAME_CHARS) for tag in tool.tags),
    ]
    problems.extend((None, f": {text}") for text in _texts_problems(texts))
    if not tool.paths:
        problems.append((None, " has no category path"))
    for path in tool.paths:
        problems.extend((path, f" has {text}") for text in _path_problems(path))
    return problems + schema


def _node_problems(node: CatalogNode) -> list[str]:
    """What is wrong with one declared node on its own; duplicates are found across nodes."""
    problems = [f"has {text}" for text in _path_problems(node.path)]
    if not node.name.strip():
        problems.append("has an empty name")
    texts = [
        ("name", node.name, MAX_NAME_CHARS),
        ("summary", node.summary, None),
        *((f"tag {quote(tag)}", tag, MAX_NAME_CHARS) for tag in node.tags),
    ]
    problems.extend(_texts_problems(texts))
    return problems


def catalog_problems(tools: Sequence[CatalogTool], nodes: Sequence[CatalogNode]) -> list[_Problem]:
    """Every problem of ``tools`` and ``nodes``, in order (an empty list when they are fine)."""
    problems: list[_Problem] = []
    seen_ids: set[str] = set()
    for position, tool in enumerate(tools):
        tid = tool.tool_id
        if tid in seen_ids and tid.strip():
            problems.append(
                (position, tid, None, f"tool_id {quote(tid)} is used by more than one tool")
            )
        seen_ids.add(tid)
        found = _tool_problems(tool)
        if found:
            shown = quote(tid if tid.strip() else tool.name)  # a tool without an id by its name
            problems.extend((position, tid, path, f"tool {shown}{text}") for path, text in found)
    seen_paths: set[TreePath] = set()
    for node in nodes:
        where = f"node {shown_path(node.path)}"
        texts = _node_problems(node)
        if node.path in seen_paths and node.path:
            texts.append("is declared twice")
        seen_paths.add(node.path)
        problems.extend((None, None, node.path, f"{where} {text}") for text in texts)
    return problems


def _schema_issues(tool: CatalogTool) -> list[str]:
    issues: list[str] = []
    args = tool.args_schema
    if not isinstance(args, Mapping) or args.get("type", "object") != "object":
        issues.append('args_schema must be a JSON Schema object with "type": "object"')
    else:
        issues.extend(schema_problems(args, where="args_schema"))
    result = tool.result_schema
    if result is not None:
        issues.extend(schema_problems(result, where="result_schema"))
    return issues
